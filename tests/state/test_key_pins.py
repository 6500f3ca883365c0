"""Key pins shared across threads, processes and hosts: memory, file, SQLite, Redis and the asyncio twins.

Rotations move forward only (a replayed or older notice is refused: issue 20),
first use and rotation are atomic across processes (exactly one key pinned,
one rotation wins), ``FileKeyPins`` never rolls back another writer and keeps a
symlinked file a symlink with its mode, and store failures are
``StateUnavailable``.
"""

from __future__ import annotations

import inspect
import json
import os
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ajpcore import Ed25519PrivateKey, KeyRotated, KeyRotationRefused, StateUnavailable
from ajpcore import provenance
from ajpcore.provenance import FileKeyPins, MemoryKeyPins, sign_notice
from state_servers import child_env, need_redis, pins, redis_url  # noqa: F401 (fixtures)

HERE = Path(__file__).resolve().parent.parent
WORKER = str(HERE / "state_worker.py")
PID = "provenance:domain:agent.example.com"
K1, K2, K3 = (Ed25519PrivateKey.from_seed(bytes([i]) * 32) for i in (1, 2, 3))


def rotation(old, new, notice_id, at):
    return sign_notice(
        {"notice": "0.1", "id": notice_id, "event": "key-rotation", "provenance_id": PID,
         "key_fingerprint": old.public_key.fingerprint, "issued_at": at,
         "claims": {"new_public_key": new.public_key.to_string()}},
        old,
    )


def test_first_use_pins_and_another_key_is_key_rotated(pins):
    pins.check(PID, K1.public_key.fingerprint, K1.public_key)
    pins.check(PID, K1.public_key.fingerprint)
    with pytest.raises(KeyRotated):
        pins.check(PID, K2.public_key.fingerprint)
    assert pins.pinned(PID) == K1.public_key.fingerprint


def test_a_replayed_rotation_notice_cannot_move_the_pin_back(pins):
    """Issue 20: after K1 -> K2 and K2 -> K1, the first notice again would move the pin to the retired K2."""
    pins.check(PID, K1.public_key.fingerprint, K1.public_key)
    first = rotation(K1, K2, "n-1", "2026-09-24T10:00:00Z")
    pins.accept_rotation(first)
    pins.accept_rotation(rotation(K2, K1, "n-2", "2026-09-24T11:00:00Z"))
    assert pins.pinned(PID) == K1.public_key.fingerprint
    with pytest.raises(KeyRotationRefused, match="already accepted"):
        pins.accept_rotation(first)
    assert pins.pinned(PID) == K1.public_key.fingerprint
    with pytest.raises(KeyRotationRefused, match="not issued after"):  # a fresh id, but older than the last
        pins.accept_rotation(rotation(K1, K3, "n-3", "2026-09-24T10:30:00Z"))
    with pytest.raises(KeyRotationRefused, match="not issued after"):  # the same instant is not after
        pins.accept_rotation(rotation(K1, K3, "n-3", "2026-09-24T11:00:00Z"))
    pins.accept_rotation(rotation(K1, K3, "n-3", "2026-09-24T11:00:01Z"))
    assert pins.pinned(PID) == K3.public_key.fingerprint
    assert [n["id"] for n in pins.history(PID)] == ["n-1", "n-2", "n-3"]


def test_blocking_attribute(pins):
    store = getattr(pins, "store", pins)
    name = type(store).__name__
    assert type(store).blocking is (name in ("FileKeyPins", "SQLiteKeyPins", "RedisKeyPins"))
    assert inspect.iscoroutinefunction(type(store).check) is name.startswith("Async")


# -- FileKeyPins: other writers, symlinks, modes -----------------------------------------------------------


def test_file_store_never_rolls_back_another_writer(tmp_path):
    """Issue 20: a second store on the same file used to undo the first one's rotation when it pinned anything."""
    path = tmp_path / "pins.json"
    first, second = FileKeyPins(path), FileKeyPins(path)
    first.check(PID, K1.public_key.fingerprint, K1.public_key)
    assert second.pinned(PID) == K1.public_key.fingerprint  # a read notices the other writer
    second.accept_rotation(rotation(K1, K2, "n-1", "2026-09-24T10:00:00Z"))
    first.check("provenance:domain:other.example", K3.public_key.fingerprint)  # first pins something else
    for store in (first, second, FileKeyPins(path)):  # ... and the rotation is still there, for everyone
        assert store.pinned(PID) == K2.public_key.fingerprint
        assert store.pinned("provenance:domain:other.example") == K3.public_key.fingerprint
    with pytest.raises(KeyRotated):
        first.check(PID, K1.public_key.fingerprint)  # the retired key stays retired in the stale store too


def test_file_store_writes_through_a_symlink_and_keeps_the_mode(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    target = real / "pins.json"
    FileKeyPins(target).check("provenance:domain:x.example", K3.public_key.fingerprint)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600  # a new file is 0600
    target.chmod(0o640)
    link = tmp_path / "pins-link.json"
    link.symlink_to(target)
    store = FileKeyPins(link)
    store.check(PID, K1.public_key.fingerprint, K1.public_key)
    assert link.is_symlink() and os.readlink(link) == str(target)  # still a link
    assert FileKeyPins(target).pinned(PID) == K1.public_key.fingerprint  # the target saw the pin
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # and kept its mode
    assert sorted(p.name for p in real.iterdir()) == ["pins.json", "pins.json.lock"]  # written beside the target


def test_file_store_failures_are_state_unavailable(tmp_path, monkeypatch):
    path = tmp_path / "pins.json"
    pins = FileKeyPins(path)
    pins.check(PID, K1.public_key.fingerprint)

    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(StateUnavailable) as info:
        pins.check("provenance:domain:new.example", K2.public_key.fingerprint)
    assert info.value.status == 503 and isinstance(info.value, OSError)
    assert pins.pinned("provenance:domain:new.example") is None


# -- across processes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["file", "sqlite", "redis"])
def test_two_processes_racing_first_use_and_rotation(backend, tmp_path, request):
    """Two processes: first use of one id with two keys pins exactly one; two rotations from one pin: one wins."""
    rounds = 12
    if backend == "file":
        spec = str(tmp_path / "pins.json")
    elif backend == "sqlite":
        spec = str(tmp_path / "pins.db")
    else:
        spec = request.getfixturevalue("redis_url") + f"|race{uuid.uuid4().hex[:8]}:"
    from state_worker import open_pins

    setup = open_pins(backend, spec)
    for r in range(rounds):
        setup.check(f"provenance:domain:rot{r}.example", K1.public_key.fingerprint, K1.public_key)
    gate = tmp_path / "gate"
    gate.mkdir()
    outs = {seed: tmp_path / f"out-{seed}.json" for seed in (2, 3)}
    children = [
        subprocess.Popen([sys.executable, WORKER, "pins", backend, spec, str(gate), str(seed), str(rounds), str(out)],
                         env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for seed, out in outs.items()
    ]
    deadline = time.monotonic() + 60
    while len(list(gate.glob("ready-*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    (gate / "go").touch()
    for child in children:
        _, err = child.communicate(timeout=120)
        assert child.returncode == 0, err.decode()[-2000:]
    got = {seed: json.loads(out.read_text()) for seed, out in outs.items()}
    keys = {2: K2, 3: K3}
    for r in range(rounds):
        first = {seed: got[seed][2 * r] for seed in got}
        assert sorted(first.values()) == ["KEY_ROTATED", "pinned"], first
        winner = next(seed for seed, what in first.items() if what == "pinned")
        assert setup.pinned(f"provenance:domain:r{r}.example") == keys[winner].public_key.fingerprint
        rotated = {seed: got[seed][2 * r + 1] for seed in got}
        assert sorted(rotated.values()) == ["KEY_ROTATION_REFUSED", "rotated"], rotated
        winner = next(seed for seed, what in rotated.items() if what == "rotated")
        assert setup.pinned(f"provenance:domain:rot{r}.example") == keys[winner].public_key.fingerprint


def test_redis_pins_unreachable_is_state_unavailable():
    need_redis()
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    client = redis.Redis(port=1, socket_connect_timeout=0.2, retry=Retry(NoBackoff(), 0))  # no retries: fast
    pins = provenance.RedisKeyPins(client)
    with pytest.raises(StateUnavailable):
        pins.check(PID, K1.public_key.fingerprint)
    with pytest.raises(StateUnavailable):
        pins.pinned(PID)


def test_sqlite_pins_share_a_file_with_the_guard(tmp_path):
    from ajpcore import ajp

    path = tmp_path / "state.db"
    guard = ajp.SQLiteReplayGuard(path)
    pins = provenance.SQLiteKeyPins(path)
    guard.admit("k", "job_a", expires_at_us=10**9, now_us=0)
    pins.check(PID, K1.public_key.fingerprint, K1.public_key)
    assert provenance.SQLiteKeyPins(path).pinned(PID) == K1.public_key.fingerprint
    assert len(guard) == 1 and len(pins) == 1


@pytest.mark.parametrize("backend", ["memory", "file", "sqlite"])
def test_threads_racing_first_use_pin_exactly_one_key(backend, tmp_path):
    import threading

    store = {"memory": lambda: MemoryKeyPins(), "file": lambda: FileKeyPins(tmp_path / "pins.json"),
             "sqlite": lambda: provenance.SQLiteKeyPins(tmp_path / "pins.db")}[backend]()
    keys = [Ed25519PrivateKey.from_seed(bytes([10 + i]) * 32).public_key for i in range(8)]
    for round_ in range(5):
        pid = f"provenance:domain:t{round_}.example"
        outcomes, start = [], threading.Barrier(len(keys))

        def first_use(key):
            start.wait()
            try:
                store.check(pid, key.fingerprint, key)
                outcomes.append(key.fingerprint)
            except KeyRotated:
                outcomes.append("KEY_ROTATED")

        threads = [threading.Thread(target=first_use, args=(key,)) for key in keys]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winners = [o for o in outcomes if o != "KEY_ROTATED"]
        assert len(winners) == 1 and outcomes.count("KEY_ROTATED") == len(keys) - 1
        assert store.pinned(pid) == winners[0]


def test_an_asyncio_pin_store_given_to_verify_sender_is_refused_never_skipped(tmp_path):
    import warnings

    from ajpcore import ajp
    from ajpcore.provenance import sign_declaration

    url = "https://agent.example.com/.well-known/provenance.json"
    declaration = sign_declaration({"provenance": "0.2", "name": "Agent", "description": "An agent.",
                                    "provenance_id": PID, "capabilities": [], "constraints": []}, K1)
    offer = ajp.new_offer(sender={"type": "agent", "provenance_id": PID, "declaration_url": url},
                          to="provenance:domain:receiver.example", task={"type": "t", "instruction": "i"},
                          now="2026-03-05T10:00:00Z", private_key=K1)
    pins = provenance.AsyncSQLiteKeyPins(tmp_path / "async-pins.db")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match="asyncio"):
            ajp.verify_sender(offer, declaration, retrieved_from=url, pins=pins)
    assert len(pins.sync) == 0  # nothing was pinned
    pins.close()
