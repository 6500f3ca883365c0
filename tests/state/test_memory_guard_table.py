"""The in-memory guard's table, a core twin: its usual admit is the guard's full admit, on both twins.

``MemoryReplayGuard`` keeps its pairs in ``_core.impl.ReplayTable``, whose ``admit_new``
records the admit a receiver makes on nearly every offer (a new pair of a sender in its own
quota group, with room) in one core call and declines everything else to the guard's full
admit.  Here three guards take the same operations: one on the native table, one on the
pure table, and one whose table declines every admit (the full admit alone, the behaviour
before the table existed).  Every outcome (the return, or the error with its text and
``retry_after``, ``same_body``, ``job_id``) and the whole state after each operation (pairs,
expiry heap, busy groups, count, host groups) must be the same on all three.
"""

from __future__ import annotations

import threading
from typing import Any, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ajpcore import _core, ajp
from conftest import load_twin

S = 1_000_000
BOUND = 2**62


def _full_admit_only(pure: Any) -> Any:
    class FullAdmitOnly(pure.ReplayTable):  # type: ignore[misc, name-defined]
        """A table that declines every admit: the guard's full admit decides each one."""

        __slots__ = ()

        def admit_new(self, *args: Any) -> bool:
            return False

    return FullAdmitOnly


def _guards(options: dict) -> List[Any]:
    native, pure = load_twin("c"), load_twin("py")
    guards = []
    for twin in (native, pure, pure):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(_core, "impl", twin)
            guards.append(ajp.MemoryReplayGuard(**options))
    reference = guards[2]
    table = reference._table
    reference._table = _full_admit_only(pure)(table.max_entries, table.quota, table.skew_us, table.lease_us)
    assert [type(g._table).__module__ for g in guards] == ["ajpcore._core_c", "ajpcore._core_py.replay_table", __name__]
    return guards


def _outcome(call: Any) -> Any:
    try:
        return ("returned", call())
    except Exception as exc:  # noqa: BLE001 (the error is the outcome compared)
        return (type(exc).__name__, str(exc), getattr(exc, "retry_after", None), getattr(exc, "same_body", None),
                getattr(exc, "job_id", None))


def _state(guard: Any) -> Any:
    table = guard._table
    return (table.jobs, list(table.heap), table.full_until, table.size, len(guard), guard._groups, guard._group_size)


identities = st.sampled_from(["sha256:a", "sha256:b", "ed25519:c", "ed25519:d"])
job_ids = st.sampled_from([f"job_{i:04d}" for i in range(10)] + ["j" * 257])
operation = st.tuples(
    st.sampled_from(["admit", "admit", "admit", "confirm", "release"]),
    identities,
    job_ids,
    st.sampled_from([None, None, "agents.example", "other.example"]),  # host
    st.booleans(),  # first_use
    st.booleans(),  # confirmed
    st.sampled_from([0, 0, 1, S // 3, S, 3 * S, 40 * S]),  # now advances by
    st.sampled_from([-1, 0, 1, S // 2, 2 * S, 10 * S, 120 * S]),  # expires after now
    st.sampled_from([None, b"x" * 32, b"y" * 32, b"z" * 65]),  # digest
)


@settings(max_examples=300, deadline=None)
@given(
    options=st.fixed_dictionaries({
        "max_entries": st.sampled_from([2, 4, 6, 12, 100]),
        "skew": st.sampled_from([0, 1, 60]),
        "lease": st.sampled_from([0.5, 5]),
    }),
    quota=st.sampled_from(["default", 1, 8, "mapping", "callable"]),
    operations=st.lists(operation, max_size=120),
)
def test_the_usual_admit_on_both_twins_is_the_full_admit(options, quota, operations):
    size = options["max_entries"]
    if quota in (1, 8):  # 8: a first use may hold 2 (NEW_IDENTITY_SHARE), then the group is busy below its quota
        options["max_per_identity"] = min(quota, size - 1)
    elif quota == "mapping":
        options["max_per_identity"] = {"sha256:a": 1, "agents.example": max(1, size // 2 - 1)}
    elif quota == "callable":
        options["max_per_identity"] = lambda group: 1 if group == "sha256:b" else None
    guards = _guards(options)
    now = 1_700_000_000 * S
    for kind, identity, job_id, host, first_use, confirmed, step, ahead, digest in operations:
        now += step
        if kind == "admit":
            calls = [lambda g=g: g.admit(identity, job_id, expires_at_us=now + ahead, now_us=now, digest=digest,
                                         host=host, first_use=first_use, confirmed=confirmed) for g in guards]
        else:
            calls = [lambda g=g: getattr(g, kind)(identity, job_id, now_us=now, host=host) for g in guards]
        outcomes = [_outcome(call) for call in calls]
        assert outcomes[0] == outcomes[1] == outcomes[2], (kind, identity, job_id, host)
        assert _state(guards[0]) == _state(guards[1]) == _state(guards[2])


@pytest.mark.parametrize("twin", ["c", "py"])
def test_the_usual_admit_records_what_the_full_admit_would(twin):
    impl = load_twin(twin)
    table = impl.ReplayTable(10, 3, 60 * S, 5 * S)
    assert table.admit_new("sha256:a", "job_1", 100 * S, 10 * S, b"d" * 32, False) is True
    assert table.admit_new("sha256:a", "job_2", 100 * S, 10 * S, None, True) is True
    assert table.jobs == {"sha256:a": {"job_1": (15 * S, b"d" * 32, 160 * S, "sha256:a"),
                                       "job_2": (160 * S, None, None, "sha256:a")}}
    assert table.heap == [(15 * S, "sha256:a", "job_1"), (160 * S, "sha256:a", "job_2")]
    assert table.size == 2 and table.full_until == {}
    table.full_until["sha256:a"] = 200 * S  # the group was refused until its earliest expiry: this pair expires sooner
    assert table.admit_new("sha256:a", "job_3", 100 * S, 10 * S, None, True) is True
    assert table.full_until == {"sha256:a": 160 * S}


def _declines(table: Any, *args: Any) -> None:
    before = (dict((k, dict(v)) for k, v in table.jobs.items()), list(table.heap), dict(table.full_until), table.size)
    assert table.admit_new(*args) is False
    assert (table.jobs, table.heap, table.full_until, table.size) == before


@pytest.mark.parametrize("twin", ["c", "py"])
def test_the_usual_admit_declines_all_else_and_changes_nothing(twin):
    impl = load_twin(twin)
    table = impl.ReplayTable(4, 2, 60 * S, 5 * S)
    good = ["sha256:a", "job_1", 100 * S, 10 * S, None, True]
    for position, wrong in [
        (0, b"sha256:a"), (0, "i" * 257), (1, 7), (1, "j" * 257), (2, 100.0), (2, True), (2, BOUND), (2, -BOUND),
        (2, 2**70), (3, BOUND), (3, None), (4, bytearray(b"d")), (4, b"d" * 65), (4, "d"), (5, 1), (5, None),
    ]:
        args = list(good)
        args[position] = wrong
        _declines(table, *args)
    assert table.admit_new(*good) is True
    _declines(table, *good)  # a pair it holds: replayed, in progress or expired, the full admit's to say
    assert table.admit_new("sha256:a", "job_2", BOUND - 1 - 60 * S, -(BOUND - 1), None, False) is True  # the edges
    _declines(table, "sha256:a", "job_3", 100 * S, 10 * S, None, True)  # the group's quota of 2 is held
    assert table.admit_new("sha256:b", "job_1", 100 * S, 10 * S, None, True) is True
    assert table.admit_new("sha256:c", "job_1", 100 * S, 10 * S, None, True) is True
    _declines(table, "sha256:d", "job_1", 100 * S, 10 * S, None, True)  # the table of 4 is full
    per_group = impl.ReplayTable(4, None, 60 * S, 5 * S)  # a quota per group: the guard looks it up
    assert per_group.admit_new("sha256:a", "job_1", 100 * S, 10 * S, None, True) is True
    _declines(per_group, "sha256:a", "job_2", 100 * S, 10 * S, None, True)
    stale = impl.ReplayTable(2, 1, 0, 5 * S)
    stale.heap.extend([(1, "x", "y")] * 4)  # a heap due for compaction (more than 2 x max_entries after the push)
    _declines(stale, "sha256:a", "job_1", 100 * S, 10 * S, None, True)
    for skew, lease in [(BOUND, 5 * S), (0, -BOUND), (2**64, 0)]:  # settings the full admit reads as big ints
        _declines(impl.ReplayTable(4, 2, skew, lease), *good)


@pytest.mark.parametrize("twin", ["c", "py"])
def test_the_usual_admit_declines_while_another_thread_holds_the_lock(twin):
    table = load_twin(twin).ReplayTable(4, 2, 60 * S, 5 * S)
    holding, done = threading.Event(), threading.Event()

    def hold() -> None:
        with table.lock:
            holding.set()
            done.wait(10)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert holding.wait(10)
        _declines(table, "sha256:a", "job_1", 100 * S, 10 * S, None, True)
    finally:
        done.set()
        thread.join()
    assert table.admit_new("sha256:a", "job_1", 100 * S, 10 * S, None, True) is True


def test_the_table_is_made_with_the_same_refusals_on_both_twins(twins):
    for args in [(4.0, 1, 0, 0), (True, 1, 0, 0), (4, 1.0, 0, 0), (4, 1, 0.5, 0), (4, 1, 0, None), (0, 1, 0, 0),
                 (4, 0, 0, 0), (-1, None, 0, 0)]:
        assert _outcome(lambda: twins[0].ReplayTable(*args)) == _outcome(lambda: twins[1].ReplayTable(*args)), args
        assert _outcome(lambda: twins[1].ReplayTable(*args))[0] in ("TypeError", "ValueError")
    for args in [(2**70, 2**69, 2**64, -(2**64)), (2, None, -1, 0)]:  # read as they are: the full admit's big ints
        made = [twin.ReplayTable(*args) for twin in twins]
        assert [(t.max_entries, t.quota, t.skew_us, t.lease_us) for t in made] == [args, args]


def test_a_group_refused_to_first_uses_learns_of_a_sooner_expiry_from_the_usual_admit():
    # quota 8: a first use may hold 2.  Two accepted pairs, a third first use refused (the group is
    # remembered as busy until 100 s); an admit that is not a first use is then the usual one, pending
    # for its 5 s lease: the group's busy mark must move to that sooner expiry, on every guard.
    guards = _guards({"max_entries": 100, "max_per_identity": 8, "skew": 0, "lease": 5})
    now = 10 * S
    steps = [("job_1", True, True, 100 * S), ("job_2", True, True, 100 * S), ("job_3", True, True, 100 * S),
             ("job_4", False, False, 100 * S), ("job_5", True, True, 100 * S)]
    for job_id, first_use, confirmed, expires in steps:
        outcomes = [_outcome(lambda g=g: g.admit("sha256:a", job_id, expires_at_us=expires, now_us=now,
                                                 first_use=first_use, confirmed=confirmed)) for g in guards]
        assert outcomes[0] == outcomes[1] == outcomes[2]
        assert _state(guards[0]) == _state(guards[1]) == _state(guards[2])
    assert guards[0]._table.full_until == {"sha256:a": 15 * S}  # job_4's lease end, not job_1's 100 s
    refused = [_outcome(lambda g=g: g.admit("sha256:a", "job_6", expires_at_us=100 * S, now_us=now, first_use=True))
               for g in guards]
    assert refused[0] == refused[1] == refused[2] and refused[0][0] == "Busy" and refused[0][2] == 5


def test_record_is_the_one_store_of_a_pair_on_both_twins(twins):
    tables = [twin.ReplayTable(10, None, 0, 5 * S) for twin in twins]
    for table in tables:
        table.full_until["host.example"] = 50 * S
        table.record("ed25519:c", "job_1", 40 * S, None, 90 * S, "host.example")  # a host's group: its busy mark moves
        table.record("ed25519:c", "job_2", 60 * S, b"d", None, "host.example")
    assert [(t.jobs, t.heap, t.full_until, t.size) for t in tables] == [(
        {"ed25519:c": {"job_1": (40 * S, None, 90 * S, "host.example"), "job_2": (60 * S, b"d", None, "host.example")}},
        [(40 * S, "ed25519:c", "job_1"), (60 * S, "ed25519:c", "job_2")], {"host.example": 40 * S}, 2)] * 2
    assert _outcome(lambda: tables[0].record([], "j", 1, None, None, "g")) == _outcome(
        lambda: tables[1].record([], "j", 1, None, None, "g"))  # an unhashable identity: the dict's own TypeError


def test_a_table_whose_state_was_replaced_refuses_alike_and_never_crashes(twins):
    # Its members are public to the guard's full admit: a caller that replaces them gets the same answer
    # from both twins (the native one reads in C only the dicts and list it made itself).
    outcomes = []
    for twin in twins:
        table = twin.ReplayTable(4, 2, 0, 5 * S)
        table.jobs["sha256:a"] = ["not", "a", "dict"]  # declined: the full admit decides (and refuses)
        first = _outcome(lambda: table.admit_new("sha256:a", "job_1", 100 * S, 10 * S, None, True))
        table.heap = None  # type: ignore[assignment]
        second = _outcome(lambda: table.admit_new("sha256:b", "job_1", 100 * S, 10 * S, None, True))
        table.jobs = None  # type: ignore[assignment]
        third = _outcome(lambda: table.admit_new("sha256:b", "job_1", 100 * S, 10 * S, None, True))
        outcomes.append((first, second, third, table.size))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == ("returned", False)
    assert (outcomes[0][1][0], outcomes[0][2][0], outcomes[0][3]) == ("TypeError", "AttributeError", 0)
