"""Replay guards: one admit per backend, and ``receive_offer`` end to end with each.

Groups ``state-admit`` (memory with its lock, and the lock alone; SQLite ``NORMAL`` and ``FULL``;
Redis sync beside a ``PING`` on the same connection; Redis asyncio, 100
concurrent admits per round beside 100 concurrent PINGs) and
``state-receive-hmac`` / ``state-receive-ed25519`` (``receive_offer`` of an
HMAC or an Ed25519 offer with no guard, memory, SQLite, Redis).  Targets (issue 19): memory admit <= 1.5 µs; SQLite admit <=
50 µs with ``NORMAL``; a Redis admit <= 1.2x a PING; ``receive_offer`` with
SQLite <= 2x with memory.  Redis benches use ``AJPCORE_TEST_REDIS_URL`` or a
redis-server of their own, and skip without one.  Every admit is of a fresh
job id (an acceptance, the costly path).

Run: ``pytest bench/test_state.py --benchmark-only --benchmark-group-by=group``.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
import uuid
from pathlib import Path

import pytest

from ajpcore import ajp, sign

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from state_servers import REDIS_SERVER, redis_server  # noqa: E402

SECRET = "bench-state-secret"
NOW = "2026-03-05T10:00:01Z"
FAR = 10**18  # held "forever": the bench measures acceptances, not purges


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    try:
        import redis  # noqa: F401
    except ImportError:
        pytest.skip("redis-py is not installed")
    url = os.environ.get("AJPCORE_TEST_REDIS_URL")
    if url:
        yield url
        return
    if REDIS_SERVER is None:
        pytest.skip("no redis-server on PATH and AJPCORE_TEST_REDIS_URL is not set")
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server.url


def _fresh():
    counter = itertools.count()
    return lambda: f"job_{next(counter)}"


def _admit(benchmark, guard):
    job = _fresh()
    benchmark(lambda: guard.admit("sha256:bench", job(), expires_at_us=FAR, now_us=0, digest=b"d" * 32))


def test_admit_memory(benchmark):
    benchmark.group = "state-admit"
    _admit(benchmark, ajp.MemoryReplayGuard(max_entries=10_000_000, max_per_identity=5_000_000))


def test_admit_memory_lock_alone(benchmark):
    """What the memory guard's thread safety costs: one uncontended acquire and release of its lock."""
    benchmark.group = "state-admit"
    lock = ajp.MemoryReplayGuard()._table.lock

    def locked():
        with lock:
            pass

    benchmark(locked)


@pytest.mark.parametrize("synchronous", ["NORMAL", "FULL"])
def test_admit_sqlite(benchmark, tmp_path, synchronous):
    benchmark.group = "state-admit"
    guard = ajp.SQLiteReplayGuard(tmp_path / "bench.db", synchronous=synchronous, max_per_identity=10**8,
                                  max_entries=10**9)
    _admit(benchmark, guard)
    guard.close()


def test_admit_redis(benchmark, redis_url):
    import redis

    benchmark.group = "state-admit"
    guard = ajp.RedisReplayGuard(redis.Redis.from_url(redis_url), prefix=f"bench{uuid.uuid4().hex[:6]}:",
                                 max_per_identity=10**8)
    _admit(benchmark, guard)


def test_ping_redis(benchmark, redis_url):
    import redis

    benchmark.group = "state-admit"
    client = redis.Redis.from_url(redis_url)
    client.ping()
    benchmark(client.ping)


@pytest.mark.parametrize("what", ["admit", "ping"])
def test_redis_asyncio_100_concurrent(benchmark, redis_url, what):
    """One round: 100 tasks, each one admit (or one PING), gathered; per-admit cost = round / 100."""
    import redis.asyncio

    benchmark.group = "state-admit-asyncio-x100"
    loop = asyncio.new_event_loop()
    client = redis.asyncio.Redis.from_url(redis_url, max_connections=100)
    guard = ajp.AsyncRedisReplayGuard(client, prefix=f"bench{uuid.uuid4().hex[:6]}:", max_per_identity=10**8)
    job = _fresh()

    async def round_():
        if what == "admit":
            await asyncio.gather(*(guard.admit("sha256:bench", job(), expires_at_us=FAR, now_us=0) for _ in range(100)))
        else:
            await asyncio.gather(*(client.ping() for _ in range(100)))

    loop.run_until_complete(round_())  # connections open
    benchmark(lambda: loop.run_until_complete(round_()))
    loop.run_until_complete(client.aclose())
    loop.close()


# -- receive_offer end to end ---------------------------------------------------------------------------


AGENT = {"type": "agent", "provenance_id": "provenance:domain:sender.example",
         "declaration_url": "https://sender.example/.well-known/provenance.json"}


@pytest.fixture(scope="module", params=["hmac", "ed25519"])
def offers(request):
    """(scheme, 3,000 distinct signed offers as canonical bytes, the receive keyword)."""
    from ajpcore import Ed25519PrivateKey

    if request.param == "hmac":
        sender, key, check = {"type": "human", "id": "user_bench"}, {"secret": SECRET}, {"secret": SECRET}
    else:
        private = Ed25519PrivateKey.from_seed(bytes(range(32)))
        sender, key, check = AGENT, {"private_key": private}, {"public_key": private.public_key}
    template = ajp.new_offer(
        sender=sender, to="provenance:domain:receiver.example",
        task={"type": "summarize", "instruction": "bench"}, now="2026-03-05T10:00:00Z", **key,
    ).to_dict()
    template.pop("signature")
    out = []
    count = 20 if request.config.getoption("benchmark_disable") else 3_000  # CI runs each bench once
    for i in range(count):
        body = dict(template, job_id=f"job_bench_{i:06d}")
        body["signature"] = sign(body, **key)
        out.append(ajp.JobOffer.from_dict(body).to_json())
    return request.param, out, check


RECEIVER = "provenance:domain:receiver.example"  # every offer's `to`; bare public keys: no capability rule


def _receive(benchmark, offers, guard):
    scheme, data, check = offers
    feed = itertools.cycle(data) if guard is None else iter(data)
    guard = ajp.NO_REPLAY_GUARD if guard is None else guard
    benchmark.pedantic(lambda: ajp.receive_offer(next(feed), now=NOW, recipient=RECEIVER, replay_guard=guard,
                                                 require_capabilities=(), **check),
                       rounds=len(data), iterations=1, warmup_rounds=0)


@pytest.mark.parametrize("backend", ["none", "memory", "sqlite", "redis"])
def test_receive_offer(benchmark, offers, backend, tmp_path, request):
    benchmark.group = f"state-receive-{offers[0]}"
    guard = None  # "none": ajp.NO_REPLAY_GUARD (the offers then cycle)
    if backend == "memory":
        guard = ajp.MemoryReplayGuard(max_entries=100_000, max_per_identity=50_000)
    elif backend == "sqlite":
        guard = ajp.SQLiteReplayGuard(tmp_path / "recv.db", max_per_identity=50_000)
    elif backend == "redis":
        import redis

        url = request.getfixturevalue("redis_url")
        guard = ajp.RedisReplayGuard(redis.Redis.from_url(url), prefix=f"bench{uuid.uuid4().hex[:6]}:",
                                     max_per_identity=50_000)
    _receive(benchmark, offers, guard)
    if hasattr(guard, "close"):
        guard.close()
