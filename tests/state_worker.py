"""A receiver worker for the state tests, run as a child process (tests/state/test_replay_guards.py).

``serve OFFERS GATE``: loads the offers of ``OFFERS`` (one JSON offer per line)
once, then for n = 0, 1, ... waits for ``GATE/job-<n>.json`` (``{"backend",
"spec", "threads"}``, or ``{"stop": true}``), opens that guard, creates
``GATE/ready-<n>-<pid>``, and when ``GATE/go-<n>`` exists runs the race:
``threads`` threads (or asyncio tasks for the async backends) each send every
offer through ``ajp.receive_offer`` with the one guard of the process; writes
``{"accepted": [job ids], "replayed": n, "errors": [...], "seconds": s}`` to
``GATE/out-<n>-<pid>.json``.  One set of processes serves every backend's race,
so the suite pays the interpreter start-up once.

``pins BACKEND SPEC GATE SEED ROUNDS OUT``: for each round r, first use of
``provenance:domain:r<r>.example`` with key ``SEED``, then a rotation of
``provenance:domain:rot<r>.example`` (pinned to key 1 by the test) to key ``SEED``;
writes each outcome (``"pinned"``, ``"KEY_ROTATED"``, ``"rotated"``,
``"KEY_ROTATION_REFUSED"``) to ``OUT``.

``take-and-hang BACKEND SPEC JOBS JOB_ID``: a Receiver admits the offer of ``JOB_ID``, its
``run`` prints ``taking`` and hangs (tests/state/test_exactly_once.py kills it with SIGKILL).

``admit-loop BACKEND SPEC``: admits and confirms job_0, job_1, ... forever,
printing each id once its confirm has returned; the test kills it with SIGKILL.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import sys
import threading
import time

from ajpcore import ReplayedMessage, signing_bytes
from ajpcore import ajp
from ajpcore.timestamps import timestamp_micros

SECRET = "state-test-secret"
NOW = "2026-03-05T10:00:01Z"
RECEIVER = "provenance:domain:receiver.example"  # the `to` of tests/state/test_replay_guards.py's offers
NOW_US = timestamp_micros(NOW)


def offer_bytes(job_id: str) -> bytes:
    """One HMAC-signed offer of ``job_id`` to ``RECEIVER``, issued at 10:00:00 (2 minutes to live)."""
    offer = ajp.new_offer(
        sender={"type": "human", "id": "user_state"}, to=RECEIVER, task={"type": "summarize", "instruction": "once"},
        now="2026-03-05T10:00:00Z", secret=SECRET, job_id=job_id,
    )
    return offer.to_json()


def open_guard(backend: str, spec: str):
    """The guard a worker shares between its threads; every worker of a test opens the same store."""
    if backend in ("sqlite", "async-sqlite"):
        cls = ajp.SQLiteReplayGuard if backend == "sqlite" else ajp.AsyncSQLiteReplayGuard
        return cls(spec, max_per_identity=10_000, busy_timeout=30)
    url, _, prefix = spec.partition("|")  # redis: "URL|PREFIX"
    if backend == "redis-cluster":
        from redis.cluster import RedisCluster

        client = RedisCluster.from_url(url, socket_timeout=5)
        return ajp.RedisReplayGuard(client, prefix=prefix or "ajp:", max_per_identity=10_000)
    if backend == "redis":
        import redis

        client = redis.Redis.from_url(url, socket_timeout=5)
        return ajp.RedisReplayGuard(client, prefix=prefix or "ajp:", max_per_identity=10_000)
    if backend == "async-redis":
        import redis.asyncio

        client = redis.asyncio.Redis.from_url(url, socket_timeout=5)
        return ajp.AsyncRedisReplayGuard(client, prefix=prefix or "ajp:", max_per_identity=10_000)
    raise SystemExit(f"unknown backend {backend}")


def receive(data: bytes, guard):
    # recipient= becomes required on receive_offer (the receiver issue): add it here then.
    return ajp.receive_offer(data, now=NOW, recipient=RECEIVER, secret=SECRET, replay_guard=guard)


def race(offers: list, guard, backend: str, threads: int, go: str) -> dict:
    """One race: ``threads`` threads (or tasks) each receive every offer once, from when ``go`` exists."""
    accepted: list = []
    errors: list = []
    replayed = [0]
    lock = threading.Lock()
    seed0 = random.randrange(1 << 30)

    def order(seed: int):
        mine = list(offers)
        random.Random(seed).shuffle(mine)
        return mine

    def wait_for_go() -> None:
        while not os.path.exists(go):
            time.sleep(0.0005)

    def thread_main(seed: int) -> None:
        mine = order(seed)
        wait_for_go()
        for data in mine:
            try:
                offer = receive(data, guard)
            except ReplayedMessage:
                with lock:
                    replayed[0] += 1
            except Exception as exc:  # noqa: BLE001 - reported to the test
                with lock:
                    errors.append(f"{type(exc).__name__}: {exc}")
            else:
                with lock:
                    accepted.append(offer.job_id)

    async def async_main() -> None:
        identity = ajp.replay_identity(secret=SECRET)

        async def task_main(seed: int) -> None:
            for data in order(seed):
                offer = ajp.receive_offer(data, replay_guard=ajp.NO_REPLAY_GUARD,
                                          now=NOW, recipient=RECEIVER, secret=SECRET)  # the guard is awaited
                try:
                    await guard.admit(identity, offer.job_id, expires_at_us=timestamp_micros(offer.expires_at),
                                      now_us=NOW_US, digest=hashlib.sha256(signing_bytes(offer.to_dict())).digest(),
                                      confirmed=True)
                except ReplayedMessage:
                    replayed[0] += 1
                except Exception as exc:  # noqa: BLE001
                    errors.append(f"{type(exc).__name__}: {exc}")
                else:
                    accepted.append(offer.job_id)

        wait_for_go()
        try:
            await asyncio.gather(*(task_main(seed0 + i) for i in range(threads)))
        finally:
            if backend == "async-redis":
                await guard.client.aclose()

    wait_for_go()
    began = time.time()
    if backend.startswith("async-"):
        asyncio.run(async_main())
    else:
        # Threads waiting on a socket wait again for the GIL (5 ms switch interval by default) while
        # another thread parses offers: a shorter interval keeps the race short, and changes nothing it proves.
        sys.setswitchinterval(0.0002)
        workers = [threading.Thread(target=thread_main, args=(seed0 + i,)) for i in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    if hasattr(guard, "close"):
        guard.close()
    return {"accepted": accepted, "replayed": replayed[0], "errors": errors[:20], "began": began,
            "seconds": time.time() - began}


def serve(offers_path: str, gate: str) -> None:
    """Run the races the test asks for, one after the other, in this one process (see the module docstring)."""
    offers = [line.encode() for line in open(offers_path, encoding="utf-8").read().splitlines() if line]
    n = 0
    while True:
        job_file = os.path.join(gate, f"job-{n}.json")
        while not os.path.exists(job_file):
            time.sleep(0.002)
        job = json.load(open(job_file, encoding="utf-8"))
        if job.get("stop"):
            return
        guard = open_guard(job["backend"], job["spec"])
        open(os.path.join(gate, f"ready-{n}-{os.getpid()}"), "w").close()
        result = race(offers, guard, job["backend"], job["threads"], os.path.join(gate, f"go-{n}"))
        tmp = os.path.join(gate, f".out-{n}-{os.getpid()}.json")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(result, f)
        os.replace(tmp, os.path.join(gate, f"out-{n}-{os.getpid()}.json"))
        n += 1


def open_pins(backend: str, spec: str):
    from ajpcore import provenance

    if backend == "file":
        return provenance.FileKeyPins(spec)
    if backend == "sqlite":
        return provenance.SQLiteKeyPins(spec, busy_timeout=30)
    import redis

    url, _, prefix = spec.partition("|")
    return provenance.RedisKeyPins(redis.Redis.from_url(url, socket_timeout=5), prefix=prefix or "ajp:")


def rotation_notice(pid: str, old, new, notice_id: str) -> dict:
    from ajpcore.provenance import sign_notice

    return sign_notice({
        "notice": "0.1", "id": notice_id, "event": "key-rotation", "provenance_id": pid,
        "key_fingerprint": old.public_key.fingerprint, "issued_at": "2026-09-24T10:00:01Z",
        "claims": {"new_public_key": new.public_key.to_string()},
    }, old)


def key(seed: int):
    from ajpcore import Ed25519PrivateKey

    return Ed25519PrivateKey.from_seed(bytes([seed]) * 32)


def pins_race(backend: str, spec: str, gate: str, seed: int, rounds: int, out: str) -> None:
    from ajpcore import KeyRotated, KeyRotationRefused

    pins = open_pins(backend, spec)
    mine, old = key(seed), key(1)
    notices = [rotation_notice(f"provenance:domain:rot{r}.example", old, mine, f"n-{seed}") for r in range(rounds)]
    open(os.path.join(gate, f"ready-{os.getpid()}"), "w").close()
    while not os.path.exists(os.path.join(gate, "go")):
        time.sleep(0.0005)
    outcomes = []
    for r in range(rounds):
        try:
            pins.check(f"provenance:domain:r{r}.example", mine.public_key.fingerprint, mine.public_key)
            outcomes.append("pinned")
        except KeyRotated:
            outcomes.append("KEY_ROTATED")
        try:
            pins.accept_rotation(notices[r])
            outcomes.append("rotated")
        except KeyRotationRefused:
            outcomes.append("KEY_ROTATION_REFUSED")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(outcomes, f)


def admit_loop(backend: str, spec: str) -> None:
    guard = open_guard(backend, spec)
    identity = ajp.replay_identity(secret=SECRET)
    i = 0
    while True:
        guard.admit(identity, f"job_{i}", expires_at_us=NOW_US + 10**9, now_us=NOW_US, digest=b"%d" % i)
        guard.confirm(identity, f"job_{i}", now_us=NOW_US)
        sys.stdout.write(f"job_{i}\n")
        sys.stdout.flush()
        i += 1


def take_and_hang(backend: str, spec: str, jobs: str, job_id: str) -> None:
    """Admit ``job_id`` through a Receiver whose ``run`` starts taking the job, says ``taking`` and hangs
    until the test kills it: admitted, never confirmed. On SQLite the job row and the confirm are in the
    host's own open transaction on the state file (never committed); on Redis the job is not recorded yet."""
    import sqlite3

    guard = open_guard(backend, spec)

    def run(received) -> None:
        if backend == "sqlite":
            conn = sqlite3.connect(jobs, isolation_level=None)
            conn.execute("CREATE TABLE IF NOT EXISTS runs (job_id TEXT NOT NULL)")
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO runs VALUES (?)", (received.job_id,))
            guard.confirm(received.replay_identity, received.job_id, now_us=NOW_US, connection=conn)
        sys.stdout.write("taking\n")
        sys.stdout.flush()
        time.sleep(600)

    receiver = ajp.Receiver(recipient=RECEIVER, secret=SECRET, replay_guard=guard)
    receiver.answer_offer(offer_bytes(job_id), now=NOW_US // 1_000_000, run=run)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "pins":
        pins_race(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]), sys.argv[7])
    elif sys.argv[1] == "admit-loop":
        admit_loop(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "take-and-hang":
        take_and_hang(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    else:
        raise SystemExit(f"unknown mode {sys.argv[1]}")
