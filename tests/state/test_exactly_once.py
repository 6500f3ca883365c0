"""A 202 means the host has the job (issue 30 item 1): each job runs exactly once, counted by the host.

Every scenario has a host-side job table that counts runs (``JobTable``), a ``Receiver`` whose
``answer_offer(run=...)`` records the job there, and a sender that retries the same offer until it
gets 202, honouring ``Retry-After`` (its clock moves by what the 503 said: the guard's lease runs on
the receiver's ``now``).  The failures are real: a redis-server stopped with SIGSTOP while the
admit's ``EVALSHA`` is on the wire (socket_timeout), an asyncio cancellation while the admit runs
(SQLite in its worker thread; Redis with the server stopped), a worker killed with SIGKILL between
the admit and the confirm, a SQLite ``COMMIT`` that raises after it became durable.  Before the
lease, each of them answered the retry "202 duplicate" for a job no host took (0 runs).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable, List

import pytest

from ajpcore import ajp
from ajpcore.ajp._replay_redis import ADMIT_SCRIPT
from state_servers import RedisServer, child_env, need_redis
from state_worker import NOW, NOW_US, RECEIVER, SECRET, offer_bytes

HERE = Path(__file__).resolve().parent.parent
WORKER = str(HERE / "state_worker.py")
NOW_S = NOW_US // 1_000_000  # POSIX seconds: the sender's clock starts here


class JobTable:
    """The host's job table: one row per run of a job (a SQLite file; ``runs`` counts them)."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        with sqlite3.connect(self.path) as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS runs (job_id TEXT NOT NULL)")

    def take(self, received: ajp.ReceivedOffer) -> None:
        """``run=``: record the job (the host has it)."""
        with sqlite3.connect(self.path) as conn:
            conn.execute("INSERT INTO runs VALUES (?)", (received.job_id,))

    def runs(self, job_id: str) -> int:
        with sqlite3.connect(self.path) as conn:
            return int(conn.execute("SELECT count(*) FROM runs WHERE job_id = ?", (job_id,)).fetchone()[0])


class Sender:
    """Sends one offer until it gets 202 (then once more: the duplicate), honouring ``Retry-After``."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.now = NOW_S
        self.answers: List[str] = []

    def _note(self, answer: Any) -> bool:
        if answer.status == 202:
            self.answers.append("202 duplicate" if answer.duplicate else "202")
            return True
        assert answer.status == 503, (answer.status, answer.body)
        code = answer.error.code
        self.answers.append(f"503 {code} retry-after {answer.headers['retry-after']}")
        self.now += int(answer.headers["retry-after"])
        return False

    def until_accepted(self, answer_offer: Callable[..., Any], run: Callable[..., Any]) -> List[str]:
        for _ in range(20):
            if self._note(answer_offer(self.data, now=self.now, run=run)):
                break
        self._note(answer_offer(self.data, now=self.now, run=run))
        assert self.answers[-1] == "202 duplicate", self.answers
        return self.answers

    async def until_accepted_async(self, answer_offer: Callable[..., Any], run: Callable[..., Any]) -> List[str]:
        for _ in range(20):
            if self._note(await answer_offer(self.data, now=self.now, run=run)):
                break
        self._note(await answer_offer(self.data, now=self.now, run=run))
        assert self.answers[-1] == "202 duplicate", self.answers
        return self.answers


ADMIT_SHA = hashlib.sha1(ADMIT_SCRIPT.encode()).hexdigest().encode()
"""How the admit's ``EVALSHA`` names its script (confirm and release have their own)."""


def receiver(guard: Any) -> ajp.Receiver:
    return ajp.Receiver(recipient=RECEIVER, secret=SECRET, replay_guard=guard)


@pytest.fixture
def own_redis(tmp_path):
    need_redis(own=True)
    server = RedisServer(tmp_path / "redis", "--appendonly", "yes", "--appendfsync", "always").start()
    yield server
    os.kill(server.process.pid, signal.SIGCONT)  # never leave it stopped
    server.stop()


def report(scenario: str, answers: List[str], runs: int) -> None:
    print(f"\n{scenario}: runs counted by the host table = {runs}; the sender saw: {answers}")


# -- Redis stopped (SIGSTOP) while the admit is on the wire ------------------------------------------------


def test_redis_stalled_mid_evalsha_runs_the_job_once(own_redis, tmp_path):
    import redis

    client = redis.Redis.from_url(own_redis.url, socket_timeout=0.3, socket_connect_timeout=1)
    guard = ajp.RedisReplayGuard(client, prefix="stall:")
    guard.admit("warm", "job_warm", expires_at_us=10**18, now_us=0, confirmed=True)  # policy read, script loaded
    table, data = JobTable(tmp_path / "jobs.db"), offer_bytes("job_stalled")
    real, stalled = client.execute_command, []

    def stall_first_admit(*args: Any, **kwargs: Any) -> Any:
        if args[0] == "EVALSHA" and args[1] == ADMIT_SHA and not stalled:
            stalled.append(True)
            os.kill(own_redis.process.pid, signal.SIGSTOP)  # the command reaches the socket, no answer comes
            try:
                return real(*args, **kwargs)
            finally:
                os.kill(own_redis.process.pid, signal.SIGCONT)  # the server reads the command and runs it
        return real(*args, **kwargs)

    client.execute_command = stall_first_admit
    answers = Sender(data).until_accepted(receiver(guard).answer_offer, table.take)
    report("Redis stalled mid-EVALSHA", answers, table.runs("job_stalled"))
    assert answers[0] == "503 STATE_UNAVAILABLE retry-after 1"  # the ambiguous failure
    assert table.runs("job_stalled") == 1
    assert "202 duplicate" not in answers[:-1]  # never "duplicate" before the host had the job


# -- asyncio cancellation while the admit runs --------------------------------------------------------------


def test_asyncio_cancelled_mid_admit_on_sqlite_runs_the_job_once(tmp_path):
    guard = ajp.AsyncSQLiteReplayGuard(tmp_path / "state.db")
    table, data = JobTable(tmp_path / "jobs.db"), offer_bytes("job_cancelled_sqlite")
    inside, go_on = threading.Event(), threading.Event()
    real = guard.sync._insert_new  # a new pair's admit, holding the writers' lock

    def slow_admit(*args: Any) -> Any:
        inside.set()
        assert go_on.wait(30)  # held until the await was cancelled; the thread still commits
        return real(*args)

    guard.sync._insert_new = slow_admit
    r = receiver(guard)

    async def scenario() -> List[str]:
        sender = Sender(data)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(r.answer_offer_async(data, now=sender.now, run=table.take), timeout=0.1)
        # The admit reached the store (in the worker thread: under load, possibly after the timeout) and
        # commits only now, with nobody waiting for it. No sleep needed after: the release the cancellation
        # queued, and the retry's admit, run after it in the guard's one worker thread, in that order.
        assert await asyncio.to_thread(inside.wait, 30)
        guard.sync._insert_new = real
        go_on.set()
        sender.answers.append("cancelled")
        return await sender.until_accepted_async(r.answer_offer_async, table.take)

    answers = asyncio.run(scenario())
    guard.close()
    report("asyncio cancellation mid-admit, SQLite", answers, table.runs("job_cancelled_sqlite"))
    assert table.runs("job_cancelled_sqlite") == 1
    assert answers == ["cancelled", "202", "202 duplicate"]  # released at once: no wait for the lease


def test_asyncio_cancelled_mid_admit_on_redis_runs_the_job_once(own_redis, tmp_path):
    import redis.asyncio

    table, data = JobTable(tmp_path / "jobs.db"), offer_bytes("job_cancelled_redis")

    async def scenario() -> List[str]:
        client = redis.asyncio.Redis.from_url(own_redis.url, socket_timeout=5)
        guard = ajp.AsyncRedisReplayGuard(client, prefix="cancel:")
        await guard.admit("warm", "job_warm", expires_at_us=10**18, now_us=0, confirmed=True)
        r, sender = receiver(guard), Sender(data)
        os.kill(own_redis.process.pid, signal.SIGSTOP)  # the EVALSHA waits on the wire
        try:
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(r.answer_offer_async(data, now=sender.now, run=table.take), timeout=0.2)
        finally:
            os.kill(own_redis.process.pid, signal.SIGCONT)  # the server runs the admit nobody waits for
        sender.answers.append("cancelled")
        try:
            return await sender.until_accepted_async(r.answer_offer_async, table.take)
        finally:
            await client.aclose()

    answers = asyncio.run(scenario())
    report("asyncio cancellation mid-admit, Redis", answers, table.runs("job_cancelled_redis"))
    assert table.runs("job_cancelled_redis") == 1
    assert "202 duplicate" not in answers[:-1]


def test_asyncio_cancelled_while_the_host_takes_the_job_releases_it(tmp_path):
    guard = ajp.MemoryReplayGuard()
    table, data = JobTable(tmp_path / "jobs.db"), offer_bytes("job_cancelled_run")
    r = receiver(guard)

    async def never_done(received: ajp.ReceivedOffer) -> None:
        await asyncio.sleep(60)

    async def scenario() -> List[str]:
        sender = Sender(data)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(r.answer_offer_async(data, now=sender.now, run=never_done), timeout=0.1)
        sender.answers.append("cancelled")
        return await sender.until_accepted_async(r.answer_offer_async, table.take)

    answers = asyncio.run(scenario())
    assert answers == ["cancelled", "202", "202 duplicate"] and table.runs("job_cancelled_run") == 1


# -- kill -9 of a worker between the admit and the confirm ----------------------------------------------------


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
def test_worker_killed_between_admit_and_confirm_runs_the_job_once(backend, tmp_path, request):
    if backend == "sqlite":
        spec = str(tmp_path / "state.db")
        jobs = spec  # the host's job table lives in the state file: job row and confirm in one transaction
    else:
        server = request.getfixturevalue("own_redis")
        spec, jobs = server.url + "|kill:", str(tmp_path / "jobs.db")
    from state_worker import open_guard

    guard = open_guard(backend, spec)  # the state file exists (with its schema) before the host's table
    table = JobTable(Path(jobs))
    child = subprocess.Popen([sys.executable, WORKER, "take-and-hang", backend, spec, jobs, "job_killed"],
                             env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = child.stdout.readline()
    assert line.strip() == b"taking", child.stderr.read().decode()[-2000:]
    child.send_signal(signal.SIGKILL)  # inside run: admitted, the job row not committed, not confirmed
    child.wait(timeout=10)
    child.stdout.close()
    child.stderr.close()
    answers = Sender(offer_bytes("job_killed")).until_accepted(receiver(guard).answer_offer, table.take)
    report(f"kill -9 between admit and confirm, {backend}", answers, table.runs("job_killed"))
    assert answers[0].startswith("503 IN_PROGRESS")  # the dead worker's lease, then admitted anew
    assert table.runs("job_killed") == 1
    if hasattr(guard, "close"):
        guard.close()


# -- a COMMIT that raises after it became durable -----------------------------------------------------------


class CommitThenFail:
    """A sqlite3 connection whose next commit commits, then raises (a disk error reported late): a ``COMMIT``,
    or a write run outside ``BEGIN`` (autocommit: the statement commits as it ends)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn, self.armed = conn, True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)

    def execute(self, sql: str, *args: Any) -> Any:
        autocommit = not self.conn.in_transaction and sql.startswith(("INSERT", "UPDATE", "DELETE"))
        cursor = self.conn.execute(sql, *args)
        if (sql == "COMMIT" or autocommit) and self.armed:
            self.armed = False
            raise sqlite3.OperationalError("disk I/O error")
        return cursor


def test_sqlite_commit_error_after_durable_runs_the_job_once(tmp_path):
    guard = ajp.SQLiteReplayGuard(tmp_path / "state.db")
    table, data = JobTable(tmp_path / "jobs.db"), offer_bytes("job_commit")
    guard._state._conn = CommitThenFail(guard._state._connect())
    answers = Sender(data).until_accepted(receiver(guard).answer_offer, table.take)
    report("SQLite COMMIT error after durable", answers, table.runs("job_commit"))
    assert answers[0] == "503 STATE_UNAVAILABLE retry-after 1" and answers[1].startswith("503 IN_PROGRESS")
    assert table.runs("job_commit") == 1
    guard.close()


# -- the API: run= and the context managers ------------------------------------------------------------------


@pytest.mark.parametrize("make", ["memory", "sqlite"])
def test_run_confirms_on_return_and_releases_on_exception(make, tmp_path):
    guard = ajp.MemoryReplayGuard() if make == "memory" else ajp.SQLiteReplayGuard(tmp_path / "s.db")
    r, data = receiver(guard), offer_bytes("job_api_once")

    def fails(received: ajp.ReceivedOffer) -> None:
        raise RuntimeError("the job table is down")

    with pytest.raises(RuntimeError):
        r.answer_offer(data, now=NOW_S, run=fails)
    taken: List[str] = []
    answer = r.answer_offer(data, now=NOW_S, run=lambda received: taken.append(received.job_id))
    assert answer.accepted and taken == ["job_api_once"]  # released, so admitted anew
    assert r.answer_offer(data, now=NOW_S, run=taken.append).duplicate and taken == ["job_api_once"]


def test_receiving_context_manager_confirms_or_releases(tmp_path):
    r, data = receiver(ajp.MemoryReplayGuard()), offer_bytes("job_with_once")
    with pytest.raises(KeyError):
        with r.receiving(data, now=NOW_S) as received:
            assert received.job_id == "job_with_once"
            with pytest.raises(ajp.JobInProgress):  # a retry while the body runs
                r.receive(data, now=NOW_S)
            raise KeyError("host failed")
    with r.receiving(data, now=NOW_S) as received:  # released: admitted anew
        pass
    with pytest.raises(ajp.ReplayedMessage):
        r.receive(data, now=NOW_S)

    async def scenario() -> None:
        other = offer_bytes("job_async_with")
        async with r.receiving_async(other, now=NOW_S) as got:
            assert got.job_id == "job_async_with"
        with pytest.raises(ajp.ReplayedMessage):
            await r.receive_async(other, now=NOW_S)

    asyncio.run(scenario())


# -- quota groups through the Receiver: the declaration host, and the first use (issue 29 item 7) --------------


@pytest.mark.parametrize("backend", ["memory", "sqlite", "redis"])
def test_a_hundred_self_made_keys_under_one_host_never_make_another_host_busy(backend, tmp_path, request):
    from ajpcore import Ed25519PrivateKey, canonicalize
    from ajpcore.provenance import MemoryKeyPins, sign_declaration

    me = "provenance:domain:receiver.example.com"
    docs = {}

    def sender(host: str, i: int) -> tuple:
        key = Ed25519PrivateKey.from_seed(bytes([i % 256, 7 if host.startswith("evil") else 9]) * 16)
        pid, url = f"provenance:domain:{host}/agents/a{i:03d}", f"https://{host}/agents/a{i:03d}/provenance.json"
        docs[url] = canonicalize(sign_declaration(
            {"provenance": "0.2", "name": "A", "description": "d", "provenance_id": pid,
             "capabilities": ["delegate:agents"], "constraints": []}, key))
        return key, pid, url

    def offer(key: Any, pid: str, url: str, j: int) -> bytes:
        return ajp.new_offer(sender={"type": "agent", "provenance_id": pid, "declaration_url": url}, to=me,
                             task={"type": "t", "instruction": "i"}, now=NOW, private_key=key,
                             job_id=f"job_{j:08d}").to_json()

    if backend == "memory":
        guard: Any = ajp.MemoryReplayGuard(max_entries=400)  # a group's quota: 100; a first use's: 25
    elif backend == "sqlite":
        guard = ajp.SQLiteReplayGuard(tmp_path / "q.db", max_entries=400)
    else:
        import redis

        server = request.getfixturevalue("own_redis")
        guard = ajp.RedisReplayGuard(redis.Redis.from_url(server.url), prefix="q:", max_per_identity=100)
    r = ajp.Receiver(recipient=me, declarations=lambda pid, url: (docs[url], url), pins=MemoryKeyPins(),
                     replay_guard=guard)
    evil = [sender("evil.example.com", i) for i in range(100)]
    honest = [sender("honest.example.org", i) for i in range(3)]
    statuses = {"evil": [], "honest": []}
    for j in range(3):  # every evil key sends three offers, an honest key after each round
        for key, pid, url in evil:
            statuses["evil"].append(r.answer_offer(offer(key, pid, url, j), now=NOW_S).status)
        for key, pid, url in honest:
            statuses["honest"].append(r.answer_offer(offer(key, pid, url, j), now=NOW_S).status)
    print(f"\n{backend}: evil host 202/429 = {statuses['evil'].count(202)}/{statuses['evil'].count(429)}")
    assert statuses["honest"] == [202] * 9
    assert statuses["evil"].count(202) == 100 and statuses["evil"].count(429) == 200  # one quota for 100 keys
    assert statuses["evil"][:26] == [202] * 25 + [429]  # first uses: a quarter of the quota, then refused


# -- replicas: WAIT after each write (issue 30 item 3) ---------------------------------------------------------


@pytest.fixture
def primary_and_replica(tmp_path):
    """A primary and its replica, both real redis-servers on 127.0.0.1 (tests/state_servers.py)."""
    from state_servers import replica_pair

    need_redis(own=True)
    with replica_pair(tmp_path) as pair:
        yield pair


def test_an_admitted_id_survives_a_failover_with_min_replicas(primary_and_replica, tmp_path):
    import redis

    primary, replica = primary_and_replica
    guard = ajp.RedisReplayGuard(redis.Redis.from_url(primary.url, socket_timeout=2), prefix="fo:",
                                 min_replicas=1, replica_timeout=2)
    table, data = JobTable(tmp_path / "jobs.db"), offer_bytes("job_failover")
    first = Sender(data).until_accepted(receiver(guard).answer_offer, table.take)
    primary.stop()  # kill -9: whatever the replica did not receive is gone
    promoted = redis.Redis.from_url(replica.url, socket_timeout=2)
    promoted.execute_command("REPLICAOF", "NO", "ONE")
    after = receiver(ajp.RedisReplayGuard(promoted, prefix="fo:")).answer_offer(data, now=NOW_S, run=table.take)
    report("failover with min_replicas=1", first + ["failover", "202 duplicate" if after.duplicate else str(after.status)],
           table.runs("job_failover"))
    assert after.status == 202 and after.duplicate and table.runs("job_failover") == 1


def test_a_paused_replica_makes_admits_503_and_none_accepted(primary_and_replica, tmp_path):
    import redis

    primary, replica = primary_and_replica
    guard = ajp.RedisReplayGuard(redis.Redis.from_url(primary.url, socket_timeout=3), prefix="paused:",
                                 min_replicas=1, replica_timeout=0.3)
    table, data = JobTable(tmp_path / "jobs.db"), offer_bytes("job_paused")
    r = receiver(guard)
    sender = Sender(data)
    os.kill(replica.process.pid, signal.SIGSTOP)
    try:
        for _ in range(3):
            answer = r.answer_offer(data, now=sender.now, run=table.take)
            sender._note(answer)
            assert answer.status == 503
        assert table.runs("job_paused") == 0  # never accepted, never run
    finally:
        os.kill(replica.process.pid, signal.SIGCONT)
    answers = sender.until_accepted(r.answer_offer, table.take)
    report("replica paused, min_replicas=1", answers, table.runs("job_paused"))
    assert table.runs("job_paused") == 1
