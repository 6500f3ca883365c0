"""One behaviour suite for every replay guard: memory, SQLite, Redis and the asyncio twins.

Accepted exactly once under threads and processes (4 processes x 4 threads x the
same 1,000 signed offers through ``receive_offer``), the quota and the
full-table refusal, the digest of a byte-identical retry, bounded sizes, and
fail-closed answers (``StateUnavailable``, 503) for every store failure.
Backend-specific outages (SQLite locks and corruption, Redis stopped, evicting,
script cache flushed) follow the shared part.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

import ajpcore
from ajpcore import Busy, InvalidMessage, ReplayedMessage, StateUnavailable, _core, ajp, sign
from conftest import load_twin
from state_servers import IN_CI, Awaiting, RedisServer, child_env, need_redis, redis_server, redis_url  # noqa: F401 (fixture)
from state_worker import NOW, NOW_US, SECRET

HERE = Path(__file__).resolve().parent.parent
WORKER = str(HERE / "state_worker.py")
S = 1_000_000  # one second in µs
MEMORY = ["memory-c", "memory-py"]  # the in-memory guard on each core twin's table (its usual admit is the core's)
BACKENDS = [*MEMORY, "sqlite", "async-sqlite", "redis", "async-redis"]
SHARED = ["sqlite", "async-sqlite", "redis", "async-redis"]  # shared between processes


@pytest.fixture
def make_guard(request, tmp_path):
    """``make_guard(**options)`` -> a fresh, empty guard of the backend under test (sync-callable)."""
    backend = request.param
    made = []
    loop = asyncio.new_event_loop() if backend.startswith("async-") else None

    def make(**options):
        if backend in MEMORY:
            options.setdefault("max_entries", 100_000)
            with pytest.MonkeyPatch.context() as patch:  # the table is the twin's that is current when the guard is made
                patch.setattr(_core, "impl", load_twin(backend[len("memory-"):]))
                guard = ajp.MemoryReplayGuard(**options)
        elif backend in ("sqlite", "async-sqlite"):
            path = tmp_path / f"guard-{len(made)}.db"
            guard = (ajp.SQLiteReplayGuard if backend == "sqlite" else ajp.AsyncSQLiteReplayGuard)(path, **options)
        else:
            url = request.getfixturevalue("redis_url")
            options.pop("max_entries", None)
            options.setdefault("max_per_identity", 25_000)
            prefix = f"t{uuid.uuid4().hex[:12]}:"
            if backend == "redis":
                import redis

                guard = ajp.RedisReplayGuard(redis.Redis.from_url(url), prefix=prefix, **options)
            else:
                import redis.asyncio

                guard = ajp.AsyncRedisReplayGuard(redis.asyncio.Redis.from_url(url), prefix=prefix, **options)
        made.append(guard)
        return Awaiting(guard, loop) if loop is not None else guard

    make.backend = backend
    yield make
    for guard in made:
        if hasattr(guard, "close"):
            guard.close()
        elif backend == "async-redis":
            loop.run_until_complete(guard.client.aclose())
    if loop is not None:
        loop.close()


def each(names):
    return pytest.mark.parametrize("make_guard", names, indirect=True)


# -- the contract --------------------------------------------------------------------------------


@each(BACKENDS)
def test_blocking_attribute_tells_an_async_receiver_what_to_do(make_guard):
    guard = make_guard()
    inner = getattr(guard, "store", guard)
    expected = make_guard.backend in ("sqlite", "redis")
    assert type(inner).blocking is expected
    assert inspect.iscoroutinefunction(type(inner).admit) is make_guard.backend.startswith("async-")


@each(BACKENDS)
def test_one_acceptance_until_expiry_plus_skew_then_again(make_guard):
    guard = make_guard(skew=300)
    guard.admit("k", "job_a", expires_at_us=100 * S, now_us=0, digest=b"d" * 32, confirmed=True)
    for now in (0, 100 * S, 399 * S):
        with pytest.raises(ReplayedMessage) as info:
            guard.admit("k", "job_a", expires_at_us=100 * S, now_us=now, digest=b"d" * 32, confirmed=True)
        assert info.value.status == 409 and info.value.same_body is True
    guard.admit("k", "job_a", expires_at_us=1000 * S, now_us=400 * S, confirmed=True)  # held until 400 s: free again
    guard.admit("k2", "job_a", expires_at_us=1000 * S, now_us=400 * S, confirmed=True)  # another sender, another job


@each(BACKENDS)
def test_same_body_tells_a_retry_from_another_body(make_guard):
    guard = make_guard()
    guard.admit("k", "job_a", expires_at_us=100 * S, now_us=0, digest=b"a" * 32, confirmed=True)
    guard.admit("k", "job_b", expires_at_us=100 * S, now_us=0, confirmed=True)  # no digest stored
    cases = [("job_a", b"a" * 32, True), ("job_a", b"b" * 32, False), ("job_a", None, False), ("job_b", b"a" * 32, False)]
    for job, digest, same in cases:
        with pytest.raises(ReplayedMessage) as info:
            guard.admit("k", job, expires_at_us=100 * S, now_us=1, digest=digest, confirmed=True)
        assert info.value.same_body is same, (job, digest)
        assert info.value.job_id == job  # named by the guard itself, called alone


@each(BACKENDS)
def test_quota_refuses_the_flooding_sender_only_and_counts_down(make_guard):
    guard = make_guard(max_entries=100, max_per_identity={"flood": 10}, skew=0)
    for i in range(10):
        guard.admit("flood", f"job_flood_{i}", expires_at_us=(500 + i) * S, now_us=0, confirmed=True)
    with pytest.raises(Busy) as info:
        guard.admit("flood", "job_flood_10", expires_at_us=900 * S, now_us=100 * S, confirmed=True)
    assert info.value.status == 429 and info.value.retry_after == 400  # its first pair is held until 500 s
    with pytest.raises(Busy) as info:
        guard.admit("flood", "job_flood_11", expires_at_us=900 * S, now_us=250 * S, confirmed=True)
    assert info.value.retry_after == 250
    for i in range(20):  # the others are unaffected
        guard.admit(f"calm_{i % 4}", f"job_calm_{i}", expires_at_us=900 * S, now_us=300 * S, confirmed=True)
    with pytest.raises(ReplayedMessage):  # a replay is still a replay, quota or not
        guard.admit("flood", "job_flood_3", expires_at_us=900 * S, now_us=300 * S, confirmed=True)
    guard.admit("flood", "job_flood_10", expires_at_us=900 * S, now_us=500 * S, confirmed=True)  # its first pair expired
    with pytest.raises(Busy):
        guard.admit("flood", "job_flood_12", expires_at_us=900 * S, now_us=500 * S, confirmed=True)


@each(BACKENDS)
def test_quota_by_callable(make_guard):
    guard = make_guard(max_entries=100, max_per_identity=lambda identity: 2 if identity == "small" else None, skew=0)
    guard.admit("small", "job_1", expires_at_us=10 * S, now_us=0, confirmed=True)
    guard.admit("small", "job_2", expires_at_us=10 * S, now_us=0, confirmed=True)
    with pytest.raises(Busy):
        guard.admit("small", "job_3", expires_at_us=10 * S, now_us=0, confirmed=True)
    for i in range(3):
        guard.admit("big", f"job_{i}", expires_at_us=10 * S, now_us=0, confirmed=True)


@each([*MEMORY, "sqlite", "async-sqlite"])
def test_full_table_is_refused_never_forgotten(make_guard):
    guard = make_guard(max_entries=4, skew=0)  # default quota: 4 // 4 = 1 per sender
    for i in range(4):
        guard.admit(f"k{i}", "job_a", expires_at_us=(100 + i) * S, now_us=0, confirmed=True)
    with pytest.raises(Busy) as info:
        guard.admit("k9", "job_a", expires_at_us=500 * S, now_us=50 * S, confirmed=True)
    assert info.value.retry_after == 50
    for i in range(4):
        with pytest.raises(ReplayedMessage):
            guard.admit(f"k{i}", "job_a", expires_at_us=500 * S, now_us=60 * S, confirmed=True)
    guard.admit("k9", "job_a", expires_at_us=500 * S, now_us=100 * S, confirmed=True)  # k0's pair expired: room again


@each(BACKENDS)
def test_a_quota_that_lets_one_sender_fill_the_table_is_refused(make_guard):
    if make_guard.backend.endswith("redis"):
        pytest.skip("Redis has no table bound of ours (its maxmemory is): any positive quota is accepted")
    for quota in (10, 11, {"k": 10}):
        with pytest.raises(ValueError, match="fill the whole table"):
            make_guard(max_entries=10, max_per_identity=quota)
    guard = make_guard(max_entries=10, max_per_identity=lambda identity: 10)
    with pytest.raises(ValueError, match="fill the whole table"):  # a callable's answer is checked when used
        for job in ("job_a", "job_b"):
            guard.admit("k", job, expires_at_us=10 * S, now_us=0, confirmed=True)


@each(BACKENDS)
def test_sizes_are_bounded(make_guard):
    guard = make_guard()
    guard.admit("k", "j" * ajp.MAX_JOB_ID_LENGTH, expires_at_us=10 * S, now_us=0, confirmed=True)
    with pytest.raises(InvalidMessage, match="256"):
        guard.admit("k", "j" * (ajp.MAX_JOB_ID_LENGTH + 1), expires_at_us=10 * S, now_us=0, confirmed=True)
    with pytest.raises(ValueError, match="identity"):
        guard.admit("k" * 257, "job_ok", expires_at_us=10 * S, now_us=0, confirmed=True)
    with pytest.raises(TypeError):
        guard.admit("k", 5, expires_at_us=10 * S, now_us=0, confirmed=True)
    with pytest.raises(TypeError):
        guard.admit("k", "job_ok", expires_at_us=10 * S, now_us=0, digest="not bytes", confirmed=True)
    with pytest.raises(TypeError):
        guard.admit("k", "job_ok", expires_at_us=10 * S, now_us=0, digest=b"x" * 65, confirmed=True)
    guard.admit("k", "job_ok", expires_at_us=10 * S, now_us=0, digest=b"x" * 64, confirmed=True)
    guard.admit("{odd}identity}", "job_ok", expires_at_us=10 * S, now_us=0, confirmed=True)  # braces cannot move a hash tag
    with pytest.raises(ReplayedMessage):
        guard.admit("{odd}identity}", "job_ok", expires_at_us=10 * S, now_us=0, confirmed=True)


# -- the lease: pending until confirmed, released, or run out ------------------------------------------


@each(BACKENDS)
def test_a_pending_pair_is_in_progress_until_confirmed_then_a_replay(make_guard):
    guard = make_guard(lease=5, skew=300)
    guard.admit("k", "job_a", expires_at_us=100 * S, now_us=0, digest=b"d" * 32)
    with pytest.raises(ajpcore.JobInProgress) as info:
        guard.admit("k", "job_a", expires_at_us=100 * S, now_us=2 * S, digest=b"d" * 32)
    assert info.value.status == 503 and info.value.code == "IN_PROGRESS" and info.value.retry_after == 3
    status, body = ajp.error_response(info.value)
    assert status == 503 and body.retry_after == 3 and body.code == "IN_PROGRESS"
    assert guard.confirm("k", "job_a", now_us=2 * S) is True
    assert guard.confirm("k", "job_a", now_us=2 * S) is True  # idempotent
    for now in (2 * S, 6 * S, 399 * S):  # accepted until expires_at + skew, past the lease
        with pytest.raises(ReplayedMessage) as replay:
            guard.admit("k", "job_a", expires_at_us=100 * S, now_us=now, digest=b"d" * 32)
        assert replay.value.same_body is True
    assert guard.release("k", "job_a", now_us=7 * S) is False  # an accepted pair is never released
    with pytest.raises(ReplayedMessage):
        guard.admit("k", "job_a", expires_at_us=100 * S, now_us=8 * S)
    assert guard.confirm("k", "job_never", now_us=0) is False


@each(BACKENDS)
def test_a_released_pair_is_admitted_again_at_once(make_guard):
    guard = make_guard(lease=5)
    guard.admit("k", "job_a", expires_at_us=100 * S, now_us=0)
    assert guard.release("k", "job_a", now_us=1 * S) is True
    assert guard.release("k", "job_a", now_us=1 * S) is False
    guard.admit("k", "job_a", expires_at_us=100 * S, now_us=1 * S)  # the host did not take it: admitted anew
    guard.confirm("k", "job_a", now_us=1 * S)
    with pytest.raises(ReplayedMessage):
        guard.admit("k", "job_a", expires_at_us=100 * S, now_us=2 * S)


@each(BACKENDS)
def test_a_lease_that_ran_out_is_admitted_again_and_never_outlives_the_offer(make_guard):
    guard = make_guard(lease=5, skew=0)
    guard.admit("k", "job_a", expires_at_us=100 * S, now_us=0)
    with pytest.raises(ajpcore.JobInProgress):
        guard.admit("k", "job_a", expires_at_us=100 * S, now_us=5 * S - 1)
    guard.admit("k", "job_a", expires_at_us=100 * S, now_us=5 * S)  # the host died: its lease ran out
    with pytest.raises(ajpcore.JobInProgress) as info:
        guard.admit("k", "job_a", expires_at_us=100 * S, now_us=6 * S)
    assert info.value.retry_after == 4
    guard.admit("k", "job_short", expires_at_us=2 * S, now_us=0)  # lease capped by the offer's own expiry
    with pytest.raises(ajpcore.JobInProgress) as info:
        guard.admit("k", "job_short", expires_at_us=2 * S, now_us=1 * S)
    assert info.value.retry_after == 1
    guard.admit("k", "job_short", expires_at_us=9 * S, now_us=2 * S)


@each(BACKENDS)
def test_a_confirm_after_the_lease_ran_out_still_accepts(make_guard):
    guard = make_guard(lease=1, skew=0)
    guard.admit("k", "job_a", expires_at_us=100 * S, now_us=0)
    assert guard.confirm("k", "job_a", now_us=3 * S) is True  # the host has the job: it is accepted
    with pytest.raises(ReplayedMessage):
        guard.admit("k", "job_a", expires_at_us=100 * S, now_us=4 * S)


@each(BACKENDS)
def test_lease_is_checked(make_guard):
    for bad in (0, -1, True, "5", 10**6):
        with pytest.raises(ValueError, match="lease"):
            make_guard(lease=bad)


# -- quota groups: identities under one declaration host share one quota ------------------------------


@each(BACKENDS)
def test_a_hundred_identities_under_one_host_cannot_make_another_host_busy(make_guard):
    guard = make_guard(max_entries=1000, max_per_identity=None if make_guard.backend in (*MEMORY, "sqlite", "async-sqlite") else 250)
    quota = 250  # 1000 // DEFAULT_QUOTA_SHARE on the table guards; the same, given, on Redis
    refused = 0
    for i in range(100):  # each self-made key sends offers until refused
        for j in range(30):
            try:
                guard.admit(f"ed25519:evil{i:03d}", f"job_{j}", expires_at_us=86_400 * S, now_us=0,
                            host="evil.example", confirmed=True)
            except Busy as exc:
                refused += 1
                assert exc.retry_after == 86_400 + 300
    assert refused == 100 * 30 - quota  # the host's identities together held its one quota
    for i in range(5):  # another host's identities are served, first use or not
        for j in range(10):
            guard.admit(f"ed25519:honest{i}", f"job_{j}", expires_at_us=86_400 * S, now_us=0, host="honest.example",
                        first_use=(j == 0), confirmed=True)
    guard.admit("sha256:human", "job_0", expires_at_us=86_400 * S, now_us=0, confirmed=True)  # no host: its own group


@each(BACKENDS)
def test_a_first_use_gets_a_smaller_share_of_its_group(make_guard):
    guard = make_guard(max_entries=1000, max_per_identity=200)
    for j in range(50):  # 200 // NEW_IDENTITY_SHARE
        guard.admit(f"ed25519:new{j}", "job_0", expires_at_us=100 * S, now_us=0, host="new.example", first_use=True)
    with pytest.raises(Busy):
        guard.admit("ed25519:new50", "job_0", expires_at_us=100 * S, now_us=0, host="new.example", first_use=True)
    guard.admit("ed25519:new0", "job_1", expires_at_us=100 * S, now_us=0, host="new.example")  # pinned: full share
    with pytest.raises(ValueError, match="host"):
        guard.admit("k", "job_0", expires_at_us=100 * S, now_us=0, host="h" * 254)


# -- exactly once under threads and processes -------------------------------------------------------

OFFERS = 1000 if ajpcore.BACKEND == "c" else 250
"""Offers per race: the issue's 1,000 on the native core (the four tests jobs); a quarter on the pure
core, whose receive path is several times slower, to keep its CI job in budget (same property)."""


@pytest.fixture(scope="module")
def offers_file(tmp_path_factory):
    """1,000 HMAC-signed offers, one JSON document per line, built once for every race."""
    template = ajp.new_offer(
        sender={"type": "human", "id": "user_state"}, to="provenance:domain:receiver.example",
        task={"type": "summarize", "instruction": "state race"}, now="2026-03-05T10:00:00Z", secret=SECRET,
    ).to_dict()
    path = tmp_path_factory.mktemp("offers") / "offers.jsonl"
    lines = []
    for i in range(OFFERS):
        body = dict(template, job_id=f"job_race_{i:04d}")
        body.pop("signature")
        body["signature"] = sign(body, secret=SECRET)
        lines.append(json.dumps(body))
    path.write_text("\n".join(lines) + "\n")
    return path


@each(MEMORY)
def test_memory_guard_accepts_each_offer_once_under_16_threads(make_guard, offers_file):
    from state_worker import receive

    guard = make_guard()
    offers = [line.encode() for line in offers_file.read_text().splitlines()]
    accepted, errors, start = [], [], threading.Barrier(16)

    def run(seed):
        import random

        mine = list(offers)
        random.Random(seed).shuffle(mine)
        start.wait()
        for data in mine:
            try:
                accepted.append(receive(data, guard).job_id)
            except ReplayedMessage:
                pass
            except Exception as exc:  # noqa: BLE001
                errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(accepted) == OFFERS and len(set(accepted)) == OFFERS


class RacePool:
    """Four worker processes that serve one race after another (tests/state_worker.py ``serve``)."""

    def __init__(self, offers_file: Path, gate: Path, processes: int = 4) -> None:
        self.gate, self.n = gate, 0
        self.children = [
            subprocess.Popen([sys.executable, WORKER, "serve", str(offers_file), str(gate)], env=child_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for _ in range(processes)
        ]

    def _wait(self, pattern: str) -> list:
        deadline = time.monotonic() + 120
        while True:
            found = sorted(self.gate.glob(pattern))
            if len(found) == len(self.children):
                return found
            for child in self.children:
                assert child.poll() is None, child.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, f"workers did not finish {pattern}"
            time.sleep(0.005)

    def race(self, backend: str, spec: str, threads: int = 4) -> list:
        n, self.n = self.n, self.n + 1
        (self.gate / f".job-{n}").write_text(json.dumps({"backend": backend, "spec": spec, "threads": threads}))
        (self.gate / f".job-{n}").rename(self.gate / f"job-{n}.json")
        self._wait(f"ready-{n}-*")  # every process has its guard open: start them together
        (self.gate / f"go-{n}").touch()
        return [json.loads(p.read_text()) for p in self._wait(f"out-{n}-*.json")]

    def close(self) -> None:
        (self.gate / f"job-{self.n}.json").write_text(json.dumps({"stop": True}))
        for child in self.children:
            try:
                child.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
                child.communicate()


@pytest.fixture(scope="module")
def race_pool(offers_file, tmp_path_factory):
    pool = RacePool(offers_file, tmp_path_factory.mktemp("gate"))
    yield pool
    pool.close()


@each(SHARED)
def test_four_processes_of_four_threads_accept_each_offer_exactly_once(make_guard, race_pool, tmp_path, request):
    backend = make_guard.backend
    if backend in ("sqlite", "async-sqlite"):
        spec = str(tmp_path / "race.db")
    else:
        spec = request.getfixturevalue("redis_url") + f"|race{uuid.uuid4().hex[:8]}:"
    results = race_pool.race(backend, spec)
    print(backend, "seconds per worker:", [round(r["seconds"], 2) for r in results])
    accepted = [job for r in results for job in r["accepted"]]
    assert [r["errors"] for r in results] == [[], [], [], []]
    assert len(accepted) == OFFERS and len(set(accepted)) == OFFERS  # each job id once, every one once
    assert sum(r["replayed"] for r in results) == 15 * OFFERS


@each(["sqlite", "redis"])
def test_kill_9_in_an_admit_loop_loses_no_accepted_id(make_guard, tmp_path, request):
    backend = make_guard.backend
    if backend == "sqlite":
        spec = str(tmp_path / "killed.db")
    else:
        spec = request.getfixturevalue("redis_url") + f"|kill{uuid.uuid4().hex[:8]}:"
    child = subprocess.Popen([sys.executable, WORKER, "admit-loop", backend, spec], env=child_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    admitted = []
    while len(admitted) < 300:
        line = child.stdout.readline()
        assert line, child.stderr.read().decode()[-2000:]
        admitted.append(line.decode().strip())
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    admitted += [line.decode().strip() for line in child.stdout.read().splitlines()]
    child.stdout.close()
    child.stderr.close()
    assert child.returncode == -signal.SIGKILL
    from state_worker import open_guard

    guard = open_guard(backend, spec)
    identity = ajp.replay_identity(secret=SECRET)
    for job in admitted:  # every id admitted before the kill is a replay now
        with pytest.raises(ReplayedMessage):
            guard.admit(identity, job, expires_at_us=NOW_US + 10**9, now_us=NOW_US, confirmed=True)
    if backend == "sqlite":
        guard.close()
        with sqlite3.connect(spec) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


# These two fork on purpose, as a pre-forking server does after loading the app; CPython 3.12+ warns about any
# fork of a process with threads (pytest-xdist's, the guard's worker): the child here runs only the guard.
FORKS_ON_PURPOSE = pytest.mark.filterwarnings("ignore:This process .* is multi-threaded, use of fork:DeprecationWarning")


@FORKS_ON_PURPOSE
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork (POSIX)")
def test_sqlite_guard_opened_before_fork_works_in_the_child(tmp_path):
    """A guard built before the workers fork (gunicorn --preload) opens its own connection in each child."""
    guard = ajp.SQLiteReplayGuard(tmp_path / "forked.db")
    guard.admit("k", "job_parent", expires_at_us=100 * S, now_us=0, confirmed=True)
    pid = os.fork()
    if pid == 0:  # the child: exit status 0 only if it saw the parent's pair and admitted its own
        code = 1
        try:
            try:
                guard.admit("k", "job_parent", expires_at_us=100 * S, now_us=0, confirmed=True)
            except ReplayedMessage:
                guard.admit("k", "job_child", expires_at_us=100 * S, now_us=0, confirmed=True)
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    with pytest.raises(ReplayedMessage):
        guard.admit("k", "job_child", expires_at_us=100 * S, now_us=0, confirmed=True)


@FORKS_ON_PURPOSE
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork (POSIX)")
def test_async_sqlite_guard_made_before_fork_gets_a_worker_thread_in_the_child(tmp_path):
    """The child of a fork has no copy of the parent's worker thread: its first call starts one (before,
    the call waited for a thread that did not exist, for ever)."""
    guard = ajp.AsyncSQLiteReplayGuard(tmp_path / "forked-async.db")
    asyncio.run(guard.admit("k", "job_parent", expires_at_us=100 * S, now_us=0, confirmed=True))
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            asyncio.run(asyncio.wait_for(
                guard.admit("k", "job_child", expires_at_us=100 * S, now_us=0, confirmed=True), timeout=10))
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    with pytest.raises(ReplayedMessage):  # the child's admit is in the file
        asyncio.run(guard.admit("k", "job_child", expires_at_us=100 * S, now_us=0, confirmed=True))
    guard.close()


# -- SQLite: locks, corruption, permissions, schema -----------------------------------------------------

LOCKER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
"""


def test_sqlite_locked_past_the_busy_timeout_is_503_never_an_acceptance(tmp_path):
    path = tmp_path / "locked.db"
    guard = ajp.SQLiteReplayGuard(path, busy_timeout=0.3)
    guard.admit("k", "job_before", expires_at_us=100 * S, now_us=0, confirmed=True)
    locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(path), "30"], stdout=subprocess.PIPE)
    try:
        assert locker.stdout.readline().strip() == b"locked"
        started = time.monotonic()
        with pytest.raises(StateUnavailable) as info:
            guard.admit("k", "job_during", expires_at_us=100 * S, now_us=0, confirmed=True)
        assert 0.3 <= time.monotonic() - started < 5
        assert info.value.status == 503 and info.value.code == "STATE_UNAVAILABLE" and info.value.retry_after >= 1
        status, body = ajp.error_response(info.value)
        assert status == 503 and body.retry_after >= 1 and str(path) not in (body.reason or "")
    finally:
        locker.kill()
        locker.wait()
        locker.stdout.close()
    guard.admit("k", "job_during", expires_at_us=100 * S, now_us=0, confirmed=True)  # not admitted before: admitted now


def test_sqlite_corrupt_file_is_a_typed_error(tmp_path):
    path = tmp_path / "corrupt.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StateUnavailable):
        ajp.SQLiteReplayGuard(path)
    good = tmp_path / "good.db"
    guard = ajp.SQLiteReplayGuard(good)
    guard.admit("k", "job_a", expires_at_us=100 * S, now_us=0, confirmed=True)
    guard.close()
    for name in ("good.db-wal", "good.db-shm"):
        if (tmp_path / name).exists():
            (tmp_path / name).unlink()
    data = bytearray(good.read_bytes())
    data[1024:] = b"\xa5" * (len(data) - 1024)  # every page after the header page
    good.write_bytes(bytes(data))
    with pytest.raises(StateUnavailable):
        again = ajp.SQLiteReplayGuard(good)
        again.admit("k", "job_b", expires_at_us=100 * S, now_us=0, confirmed=True)


SCHEMA_V1 = (  # the state file of ajpcore before issue 30 (no lease, quotas per identity)
    "CREATE TABLE replay (identity TEXT NOT NULL, job_id TEXT NOT NULL, held_until INTEGER NOT NULL,"
    " digest BLOB, PRIMARY KEY (identity, job_id)) WITHOUT ROWID",
    "CREATE INDEX replay_expiry ON replay (held_until)",
    "CREATE TABLE replay_senders (identity TEXT PRIMARY KEY, live INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE TABLE replay_total (id INTEGER PRIMARY KEY CHECK (id = 0), live INTEGER NOT NULL)",
    "INSERT INTO replay_total VALUES (0, 0)",
    "CREATE TRIGGER replay_in AFTER INSERT ON replay BEGIN"
    " INSERT INTO replay_senders VALUES (NEW.identity, 1) ON CONFLICT (identity) DO UPDATE SET live = live + 1;"
    " UPDATE replay_total SET live = live + 1; END",
    "CREATE TRIGGER replay_out AFTER DELETE ON replay BEGIN"
    " UPDATE replay_senders SET live = live - 1 WHERE identity = OLD.identity;"
    " DELETE FROM replay_senders WHERE identity = OLD.identity AND live <= 0;"
    " UPDATE replay_total SET live = live - 1; END",
    "CREATE TABLE pins (provenance_id TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID",
)


def test_sqlite_version_1_file_is_upgraded_keeping_its_pairs_and_pins(tmp_path):
    from ajpcore import _state_sqlite

    path = tmp_path / "v1.db"
    with sqlite3.connect(path) as conn:
        for statement in SCHEMA_V1:
            conn.execute(statement)
        conn.execute("INSERT INTO replay VALUES ('k', 'job_old', ?, ?)", (100 * S, b"d" * 32))
        conn.execute("INSERT INTO pins VALUES ('provenance:domain:a.example', '{}')")
        conn.execute("PRAGMA user_version = 1")
    guard = ajp.SQLiteReplayGuard(path)
    with pytest.raises(ReplayedMessage) as info:  # accepted before: still accepted, not pending
        guard.admit("k", "job_old", expires_at_us=100 * S, now_us=0, digest=b"d" * 32)
    assert info.value.same_body is True
    guard.admit("k", "job_new", expires_at_us=100 * S, now_us=0)
    assert len(guard) == 2
    guard.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
        assert conn.execute("SELECT count(*) FROM pins").fetchone()[0] == 1
        stored = sorted(row[0] for row in conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL"))
        fresh = tmp_path / "fresh.db"
        ajp.SQLiteReplayGuard(fresh).close()
        with sqlite3.connect(fresh) as other:
            made = sorted(row[0] for row in other.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL"))
        assert stored == made  # the upgraded file has exactly the schema of a new one
    assert _state_sqlite.SCHEMA_VERSION == 2


def test_async_sqlite_admit_cancelled_mid_transaction_leaves_nothing_pending(tmp_path):
    """The await is cancelled while the admit runs in the worker thread (which still commits it): the guard
    releases the pair right after, so the retry is admitted at once instead of waiting out the lease."""
    guard = ajp.AsyncSQLiteReplayGuard(tmp_path / "cancel.db", lease=60)
    started, proceed = threading.Event(), threading.Event()
    real = guard.sync._insert_new  # a new pair's admit: one statement, run holding the writers' lock

    def slow_admit(*args):
        started.set()
        proceed.wait(10)
        return real(*args)

    guard.sync._insert_new = slow_admit

    async def scenario():
        task = asyncio.ensure_future(guard.admit("k", "job_a", expires_at_us=100 * S, now_us=0))
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        proceed.set()
        guard.sync._insert_new = real
        await guard.admit("k", "job_a", expires_at_us=100 * S, now_us=1 * S)  # not "in progress": released
        assert await guard.confirm("k", "job_a", now_us=1 * S)
        with pytest.raises(ReplayedMessage):
            await guard.admit("k", "job_a", expires_at_us=100 * S, now_us=2 * S)

    asyncio.run(scenario())
    guard.close()


def test_sqlite_other_databases_and_versions_are_refused(tmp_path):
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(StateUnavailable, match="not an ajpcore state file"):
        ajp.SQLiteReplayGuard(other)
    future = tmp_path / "future.db"
    with sqlite3.connect(future) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(StateUnavailable, match="schema version 99"):
        ajp.SQLiteReplayGuard(future)


@contextlib.contextmanager
def read_only(folder: Path):
    """``folder`` made read-only for this process: mode 0555, or for root (who ignores modes) ``chattr +i``."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode:
            pytest.skip("running as root, and `chattr +i` is not available here to make a folder read-only")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        return
    folder.chmod(0o555)
    try:
        yield
    finally:
        folder.chmod(0o755)


def test_sqlite_read_only_directory_is_a_typed_error(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    with read_only(folder):
        with pytest.raises(StateUnavailable, match="cannot create"):
            ajp.SQLiteReplayGuard(folder / "guard.db")


def test_sqlite_read_only_file_is_a_typed_error(tmp_path):
    path = tmp_path / "guard.db"
    guard = ajp.SQLiteReplayGuard(path)
    guard.admit("k", "job_a", expires_at_us=100 * S, now_us=0, confirmed=True)
    guard.close()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)  # a guard whose connection cannot write
    guard._state._conn = conn
    with pytest.raises(StateUnavailable):
        guard.admit("k", "job_b", expires_at_us=100 * S, now_us=0, confirmed=True)
    with pytest.raises(ReplayedMessage):  # what was admitted is still known
        guard.admit("k", "job_a", expires_at_us=100 * S, now_us=0, confirmed=True)


def test_sqlite_new_pair_admit_is_one_statement(tmp_path):
    """A new pair's admit runs one SQL statement in autocommit (its own transaction), not ``BEGIN IMMEDIATE``,
    the insert and ``COMMIT``; a replay, a pair in progress and a reached quota still get the full transaction,
    and every outcome stays what it was."""
    guard = ajp.SQLiteReplayGuard(tmp_path / "one.db", max_per_identity=2, skew=0)
    guard.admit("k", "job_warm", expires_at_us=100 * S, now_us=0, confirmed=True)  # opens the connection
    statements: list = []
    guard._state._conn.set_trace_callback(statements.append)

    def run(job_id, confirmed=True):
        statements.clear()
        guard.admit("k", job_id, expires_at_us=100 * S, now_us=0, confirmed=confirmed)

    def verbs():  # the first word of each statement run, in order (a trigger's steps repeat the INSERT's text)
        return list(dict.fromkeys(s.split()[0].upper() for s in statements))

    run("job_new")
    assert verbs() == ["INSERT"]  # no BEGIN IMMEDIATE, no COMMIT
    with pytest.raises(ReplayedMessage):
        run("job_new")
    assert verbs()[:3] == ["INSERT", "BEGIN", "SELECT"]  # inserted nothing: the full admit answers
    with pytest.raises(Busy):  # the quota of 2 is reached: the full admit answers it
        run("job_third")
    assert len(guard) == 2


def test_async_sqlite_new_pair_admit_is_one_statement(tmp_path):
    """The asyncio twin runs the same one-statement admit in its worker thread; a replay still answers 409."""
    guard = ajp.AsyncSQLiteReplayGuard(tmp_path / "one.db")
    statements: list = []

    async def scenario():
        await guard.admit("k", "job_warm", expires_at_us=100 * S, now_us=0, confirmed=True)
        guard.sync._state._conn.set_trace_callback(statements.append)
        await guard.admit("k", "job_new", expires_at_us=100 * S, now_us=0, confirmed=True)
        assert list(dict.fromkeys(s.split()[0].upper() for s in statements)) == ["INSERT"]
        with pytest.raises(ReplayedMessage):
            await guard.admit("k", "job_new", expires_at_us=100 * S, now_us=0, confirmed=True)

    asyncio.run(scenario())
    guard.close()


def test_sqlite_file_is_0600_wal_versioned_and_purges_as_it_goes(tmp_path):
    path = tmp_path / "guard.db"
    guard = ajp.SQLiteReplayGuard(path, skew=0)
    for i in range(200):
        guard.admit("k", f"job_{i}", expires_at_us=(i + 1) * S, now_us=0, confirmed=True)
    assert len(guard) == 200
    for i in range(200):  # the pairs expire one by one while new ones come
        guard.admit("k2", f"job_{i}", expires_at_us=10**4 * S, now_us=(i + 1) * S, confirmed=True)
    assert len(guard) < 300  # purged as it went (expired rows do not stay)
    for name in ("guard.db", "guard.db-wal", "guard.db-shm"):
        assert (path.parent / name).stat().st_mode & 0o777 == 0o600, name
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    with pytest.raises(ValueError):
        ajp.SQLiteReplayGuard(path, synchronous="OFF")
    with pytest.raises(ValueError):
        ajp.SQLiteReplayGuard(":memory:")


def test_sqlite_refuses_network_file_systems(tmp_path, monkeypatch):
    from ajpcore import _state_file

    monkeypatch.setattr(_state_file, "filesystem_type", lambda path: "nfs4")
    with pytest.raises(ValueError, match="nfs4"):
        ajp.SQLiteReplayGuard(tmp_path / "guard.db")
    ajp.SQLiteReplayGuard(tmp_path / "guard.db", allow_network_filesystem=True)


def test_sqlite_mountinfo_reader_finds_the_file_system_type(tmp_path):
    from ajpcore._state_file import LOCAL_FILESYSTEMS, filesystem_type

    assert filesystem_type(str(tmp_path)) in LOCAL_FILESYSTEMS  # the tests run on a local disk


# -- Redis: outages, eviction, script cache --------------------------------------------------------------


@pytest.fixture
def own_redis(tmp_path):
    need_redis(own=True)
    server = RedisServer(tmp_path / "redis", "--appendonly", "yes", "--appendfsync", "always").start()
    yield server
    server.stop()


def test_redis_stopped_mid_run_is_503_for_every_offer_then_answers_again(own_redis, offers_file):
    import redis

    from state_worker import receive

    client = redis.Redis.from_url(own_redis.url, socket_timeout=1, socket_connect_timeout=1)
    guard = ajp.RedisReplayGuard(client, prefix="outage:")
    offers = [line.encode() for line in offers_file.read_text().splitlines()][:60]
    before = [receive(data, guard).job_id for data in offers[:20]]
    own_redis.stop()
    for data in offers[20:40]:
        with pytest.raises(StateUnavailable) as info:
            receive(data, guard)
        assert ajp.error_response(info.value)[0] == 503
    for data in offers[:20]:  # a replay of an accepted one is refused too (503, not an acceptance)
        with pytest.raises(StateUnavailable):
            receive(data, guard)
    own_redis.start()  # same port, same dir: the AOF (appendfsync always) is replayed
    for data in offers[:20]:
        with pytest.raises(ReplayedMessage):
            receive(data, guard)
    after = [receive(data, guard).job_id for data in offers[20:60]]  # none was accepted during the outage
    assert len(set(before + after)) == 60


def test_redis_evicting_server_is_refused(own_redis):
    client = own_redis.client()
    client.config_set("maxmemory-policy", "allkeys-lru")
    guard = ajp.RedisReplayGuard(client, prefix="evict:")
    with pytest.raises(StateUnavailable, match="allkeys-lru"):
        guard.admit("k", "job_a", expires_at_us=100 * S, now_us=0, confirmed=True)
    from ajpcore.provenance import RedisKeyPins

    with pytest.raises(StateUnavailable, match="allkeys-lru"):
        RedisKeyPins(client, prefix="evict:").check("provenance:domain:a.example", "0" * 64)
    client.config_set("maxmemory-policy", "noeviction")
    guard = ajp.RedisReplayGuard(client, prefix="evict:")
    guard.admit("k", "job_a", expires_at_us=100 * S, now_us=0, confirmed=True)


def test_redis_config_disabled_warns_once_and_runs(own_redis):
    client = own_redis.client()

    class NoConfig:  # a managed service: CONFIG is not available to this user
        def __init__(self, real):
            self.real = real

        def __getattr__(self, name):
            return getattr(self.real, name)

        def config_get(self, *args):
            import redis

            raise redis.ResponseError("unknown command 'CONFIG'")

    guard = ajp.RedisReplayGuard(NoConfig(client), prefix="noconfig:")
    with pytest.warns(RuntimeWarning, match="noeviction"):
        guard.admit("k", "job_a", expires_at_us=100 * S, now_us=0, confirmed=True)
    with pytest.raises(ReplayedMessage):
        guard.admit("k", "job_a", expires_at_us=100 * S, now_us=0, confirmed=True)


def test_redis_out_of_memory_is_a_refusal(own_redis):
    client = own_redis.client()
    guard = ajp.RedisReplayGuard(client, prefix="oom:", max_per_identity=10**6)
    guard.admit("k", "job_warm", expires_at_us=100 * S, now_us=0, confirmed=True)
    client.config_set("maxmemory", "1")  # below what is used: every write is refused with OOM
    try:
        with pytest.raises(StateUnavailable, match="OOM|memory"):
            guard.admit("k", "job_new", expires_at_us=100 * S, now_us=0, confirmed=True)
    finally:
        client.config_set("maxmemory", "0")
    guard.admit("k", "job_new", expires_at_us=100 * S, now_us=0, confirmed=True)  # it was not admitted


def test_redis_script_cache_flush_is_survived_and_one_round_trip_per_admit(redis_url):
    import redis

    client = redis.Redis.from_url(redis_url)
    guard = ajp.RedisReplayGuard(client, prefix=f"flush{uuid.uuid4().hex[:8]}:")
    guard.admit("k", "job_a", expires_at_us=100 * S, now_us=0, confirmed=True)
    client.script_flush()
    guard.admit("k", "job_b", expires_at_us=100 * S, now_us=0, confirmed=True)  # NOSCRIPT -> loaded again
    with pytest.raises(ReplayedMessage):
        guard.admit("k", "job_b", expires_at_us=100 * S, now_us=0, confirmed=True)
    sent = []
    real = client.execute_command

    def counting(*args, **kwargs):
        sent.append(args[0])
        return real(*args, **kwargs)

    client.execute_command = counting
    guard.admit("k", "job_c", expires_at_us=100 * S, now_us=0, confirmed=True)
    assert sent == ["EVALSHA"]  # one round trip (the policy was read on first use)
    keys = guard.keys("k")
    assert {key.split("{")[1].split("}")[0] for key in keys} == {"k"}  # one slot
    assert 400_000 < client.pttl(keys[0]) <= 461_000  # an idle sender's keys expire: 100 s + 300 s of skew + 1 min spare


def commands_run(client):
    """Calls per command since ``CONFIG RESETSTAT`` (which it leaves out), scripts' commands included."""
    stats = client.info("commandstats")
    return {name.split("_", 1)[1]: row["calls"] for name, row in stats.items() if name != "cmdstat_config|resetstat"}


def test_redis_new_pair_costs_the_server_four_commands_and_a_replay_three(own_redis):
    """The common admit (a new pair, under quota, in a group whose keys live long enough) runs HSETNX
    (which both looks the pair up and writes it), ZCARD, ZADD and PTTL in the script, and nothing else;
    a replay runs HSETNX (no write), ZSCORE and HGET.  Counted by the server (``INFO commandstats``)."""
    client = own_redis.client()
    guard = ajp.RedisReplayGuard(client, prefix="cost:")
    guard.admit("k", "job_first", expires_at_us=100 * S, now_us=0, confirmed=True)  # the group's keys made
    client.config_resetstat()
    for i in range(10):
        guard.admit("k", f"job_{i}", expires_at_us=100 * S, now_us=0, digest=b"d" * 32, confirmed=i % 2 == 0)
    assert commands_run(client) == {"evalsha": 10, "hsetnx": 10, "zcard": 10, "zadd": 10, "pttl": 10}
    client.config_resetstat()
    with pytest.raises(ReplayedMessage):
        guard.admit("k", "job_0", expires_at_us=100 * S, now_us=0, digest=b"d" * 32)
    assert commands_run(client) == {"evalsha": 1, "hsetnx": 1, "zscore": 1, "hget": 1}


def test_redis_admit_takes_numbers_beyond_int64_and_expiries_beyond_pexpire(redis_url):
    """A quota or an expiry far beyond any real one is as good as unbounded: the pair is admitted, its
    keys get an expiry, and a replay of it is refused (the script's integers travel as int64)."""
    import redis

    client = redis.Redis.from_url(redis_url)
    guard = ajp.RedisReplayGuard(client, prefix=f"huge{uuid.uuid4().hex[:8]}:", max_per_identity=2**80)
    guard.admit("k", "job_far", expires_at_us=2**80, now_us=0, confirmed=True)
    with pytest.raises(ReplayedMessage):
        guard.admit("k", "job_far", expires_at_us=2**80, now_us=10**15, confirmed=True)
    assert all(client.pttl(key) > 10**15 for key in guard.keys("k"))  # ~285,000 years: still an expiry
    guard.admit("k", "job_late", expires_at_us=-(2**70), now_us=2**70, confirmed=True)  # nothing raised


def test_redis_prefix_is_checked():
    need_redis()
    import redis

    for bad in ("a{b", "a}b", 5):
        with pytest.raises(ValueError):
            ajp.RedisReplayGuard(redis.Redis(), prefix=bad)


def test_an_asyncio_guard_given_to_the_sync_receive_path_is_refused_never_skipped(tmp_path, offers_file):
    """An async guard's admit returns a coroutine: receive_offer must not take that for an acceptance."""
    import warnings

    from state_worker import receive

    data = offers_file.read_text().splitlines()[0].encode()
    guard = ajp.AsyncSQLiteReplayGuard(tmp_path / "async.db")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no "coroutine was never awaited" left behind
        with pytest.raises(TypeError, match="asyncio"):
            receive(data, guard)
    assert len(guard.sync) == 0  # nothing was admitted
    guard.close()


# -- Redis Cluster: a 3-primary cluster on loopback, started by the test (issue 30 item 2) ---------------------


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from state_servers import RedisCluster, need_cluster

    need_cluster()
    made = RedisCluster(tmp_path_factory.mktemp("cluster")).start()
    yield made
    made.stop()


def test_cluster_four_processes_of_four_threads_accept_each_offer_exactly_once(cluster, race_pool):
    results = race_pool.race("redis-cluster", cluster.url + f"|race{uuid.uuid4().hex[:8]}:")
    accepted = [job for r in results for job in r["accepted"]]
    assert [r["errors"] for r in results] == [[], [], [], []]
    assert len(accepted) == OFFERS and len(set(accepted)) == OFFERS
    assert sum(r["replayed"] for r in results) == 15 * OFFERS


def test_cluster_slot_moved_during_the_race_still_accepts_each_offer_exactly_once(cluster, race_pool):
    """The race's one slot (every offer comes from one sender: one quota group, one hash tag) is moved
    from primary to primary while 4 processes x 4 threads race (``SlotMover``: the steps of ``redis-cli
    --cluster reshard`` for that slot): each admit meets a stable slot, a migrating one whose keys are
    still on the source, a moved one not handed over (``ASK``) or a stale slot map (``MOVED``), and
    redis-py follows them; every offer is still accepted exactly once, and no error escapes."""
    from state_servers import SlotMover

    prefix = f"moved{uuid.uuid4().hex[:8]}:"
    probe = ajp.RedisReplayGuard(cluster.nodes[0].client(), prefix=prefix)
    keys = probe.keys(ajp.replay_identity(secret=SECRET))
    slot = cluster.nodes[0].client().execute_command("CLUSTER KEYSLOT", keys[0])
    # The group exists before its slot first moves, as a group that has been serving does.  A group
    # created while its slot is mid-migration is answered TRYAGAIN (its keys are on neither node), which
    # redis-py retries after a pause; a slot moved back and forth every ~80 ms, as here, can outlast its
    # 16 redirections (StateUnavailable, 503: a refusal, never a second acceptance).  CI met it once.
    from redis.cluster import RedisCluster

    with RedisCluster.from_url(cluster.url, socket_timeout=5) as client:
        ajp.RedisReplayGuard(client, prefix=prefix).admit(
            ajp.replay_identity(secret=SECRET), "job_before_the_moves", expires_at_us=2**52, now_us=0, confirmed=True
        )
    redirects_before = _redirects(cluster)
    mover = SlotMover(cluster, slot).start()
    results = race_pool.race("redis-cluster", cluster.url + "|" + prefix)
    moves = mover.stop()
    redirects = {k: v - redirects_before.get(k, 0) for k, v in _redirects(cluster).items()}
    began = min(r["began"] for r in results)
    ended = max(r["began"] + r["seconds"] for r in results)
    during = [m for m in moves if m[0] < ended and m[1] > began]
    print(f"\nslot {slot} moved {len(moves)} times, {len(during)} during the race "
          f"({ended - began:.2f} s); redirections answered: {redirects}; moves refused half-way: {mover.failed}")
    accepted = [job for r in results for job in r["accepted"]]
    assert [r["errors"] for r in results] == [[], [], [], []]
    assert len(accepted) == OFFERS and len(set(accepted)) == OFFERS
    assert sum(r["replayed"] for r in results) == 15 * OFFERS
    assert len(during) >= 3  # the slot changed hands while the race ran, more than once
    assert redirects.get("ASK", 0) and redirects.get("MOVED", 0)  # the clients were redirected and followed


def _redirects(cluster) -> dict:
    """The redirections (``MOVED``, ``ASK``, ``TRYAGAIN``) every primary has answered so far (``INFO errorstats``)."""
    counts: dict = {}
    for node in cluster.nodes:
        client = node.client()
        for name, value in client.info("errorstats").items():
            kind = name.replace("errorstat_", "")
            if kind in ("MOVED", "ASK", "TRYAGAIN"):
                counts[kind] = counts.get(kind, 0) + int(value["count"])
        client.close()
    return counts


def test_cluster_guard_and_pins_spread_over_the_three_primaries(cluster):
    from redis.cluster import RedisCluster

    from ajpcore.provenance import RedisKeyPins

    client = RedisCluster.from_url(cluster.url)
    guard = ajp.RedisReplayGuard(client, prefix=f"spread{uuid.uuid4().hex[:6]}:")
    owners = set()
    for i in range(60):
        guard.admit(f"ed25519:k{i}", "job_a", expires_at_us=100 * S, now_us=0, host=f"h{i}.example.com")
        guard.confirm(f"ed25519:k{i}", "job_a", now_us=0, host=f"h{i}.example.com")
        owners.add(client.get_node_from_key(guard.keys(f"host:h{i}.example.com")[0]).port)
        with pytest.raises(ReplayedMessage):
            guard.admit(f"ed25519:k{i}", "job_a", expires_at_us=100 * S, now_us=1, host=f"h{i}.example.com")
    assert len(owners) == 3  # every primary held some groups
    pins = RedisKeyPins(client, prefix="spread:")
    pins.check("provenance:domain:a.example.com", "0" * 64)
    with pytest.raises(ajpcore.KeyRotated):
        pins.check("provenance:domain:a.example.com", "1" * 64)
    client.close()


def test_cluster_async_guard_admits_once(cluster):
    from redis.asyncio.cluster import RedisCluster

    async def scenario():
        client = RedisCluster.from_url(cluster.url)
        guard = ajp.AsyncRedisReplayGuard(client, prefix=f"async{uuid.uuid4().hex[:6]}:")
        outcomes = await asyncio.gather(
            *(guard.admit("k", "job_a", expires_at_us=100 * S, now_us=0) for _ in range(20)), return_exceptions=True
        )
        await client.aclose()
        return outcomes

    outcomes = asyncio.run(scenario())
    assert outcomes.count(None) == 1 and all(isinstance(o, ajpcore.JobInProgress) for o in outcomes if o is not None)


def test_cluster_primary_stopped_is_503_for_its_slots_and_the_others_are_served(tmp_path):
    from redis.cluster import RedisCluster as Client

    from state_servers import RedisCluster, need_cluster

    need_cluster()
    made = RedisCluster(tmp_path / "cluster").start()
    try:
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        client = Client.from_url(made.url, socket_timeout=0.5, socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 1))
        guard = ajp.RedisReplayGuard(client, prefix="down:")
        groups = [f"ed25519:k{i}" for i in range(30)]
        node_of = {g: client.get_node_from_key(guard.keys(g)[0]).port for g in groups}
        for g in groups:
            guard.admit(g, "job_before", expires_at_us=100 * S, now_us=0, confirmed=True)
        stopped = made.nodes[0]
        stopped.stop()
        served = refused = 0
        for g in groups:
            try:
                guard.admit(g, "job_during", expires_at_us=100 * S, now_us=0, confirmed=True)
                served += 1
                assert node_of[g] != stopped.port
            except StateUnavailable:
                refused += 1
                assert node_of[g] == stopped.port
            with pytest.raises((ReplayedMessage, StateUnavailable)):  # never accepted twice
                guard.admit(g, "job_before", expires_at_us=100 * S, now_us=0)
        print(f"\ncluster with one primary stopped: {served} served, {refused} refused (503)")
        assert served and refused
        client.close()
    finally:
        made.stop()


def test_sqlite_confirm_on_the_hosts_connection_needs_this_guards_file(tmp_path):
    """``confirm(connection=)`` refuses a connection to another file: its confirm would leave this file's pair
    pending (admitted again once its lease ends: the job twice) while the host's job row commits. Before: a
    file without the table raised sqlite3's own error; another state file confirmed nothing, silently."""
    guard = ajp.SQLiteReplayGuard(tmp_path / "state.db")
    other = ajp.SQLiteReplayGuard(tmp_path / "other.db")  # another store: same schema, another file
    other.admit("k", "job_x", expires_at_us=100 * S, now_us=0)
    other.close()
    guard.admit("k", "job_x", expires_at_us=100 * S, now_us=0)
    for wrong in (sqlite3.connect(tmp_path / "other.db", isolation_level=None), sqlite3.connect(":memory:", isolation_level=None)):
        wrong.execute("BEGIN IMMEDIATE")
        with pytest.raises(ValueError, match=r"`connection` is open on `.*`, not on `.*state\.db`, this guard's file"):
            guard.confirm("k", "job_x", now_us=1 * S, connection=wrong)
        wrong.execute("ROLLBACK")
        wrong.close()
    with pytest.raises(ajpcore.JobInProgress):  # nothing confirmed it
        guard.admit("k", "job_x", expires_at_us=100 * S, now_us=1 * S)
    host = sqlite3.connect(str(tmp_path / ".." / tmp_path.name / "state.db"), isolation_level=None)  # its file, spelt otherwise
    host.execute("CREATE TABLE jobs (job_id TEXT NOT NULL)")
    host.execute("BEGIN IMMEDIATE")
    host.execute("INSERT INTO jobs VALUES ('job_x')")
    assert guard.confirm("k", "job_x", now_us=1 * S, connection=host) is True
    host.execute("COMMIT")
    host.close()
    with pytest.raises(ReplayedMessage):
        guard.admit("k", "job_x", expires_at_us=100 * S, now_us=2 * S)
    guard.close()
