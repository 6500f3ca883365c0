"""Real state servers for the state tests: redis-server processes of their own, or the CI server.

Fixtures shared by the state suites: ``redis_url`` (one server per test module)
and ``pins`` (every key pin store, for the one pin contract suite).

``redis_server(tmp)`` starts ``redis-server`` on a free 127.0.0.1 port in a
temporary folder (``--save ''``, no persistence unless asked) and stops it
afterwards; tests that stop, restart or reconfigure a server use their own.
Other tests use the server named by ``AJPCORE_TEST_REDIS_URL`` (``.ci/run``
starts one) or, without it, one of their own.  Without ``redis-server`` on
PATH (and no URL) the Redis tests skip and say why; under ``CI=true`` they
fail instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

REDIS_SERVER = shutil.which("redis-server")
IN_CI = os.environ.get("CI", "").strip().lower() == "true"
URL_VARIABLE = "AJPCORE_TEST_REDIS_URL"


def need_redis(*, own: bool = False) -> None:
    """Skip (fail under CI=true) when no Redis can be had: redis-py missing, or no server to start."""
    why = None
    try:
        import redis  # noqa: F401
    except ImportError:
        why = "redis-py is not installed (pip install 'ajpcore[redis]')"
    if why is None and REDIS_SERVER is None and (own or not os.environ.get(URL_VARIABLE)):
        why = f"redis-server is not on PATH (apt-get install redis-server) and {URL_VARIABLE} is not set"
    if why is not None:
        if IN_CI:
            pytest.fail("CI=true, so the Redis state tests must run: " + why)
        pytest.skip(why)


def free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """One redis-server process of the test's own; ``start``/``stop`` may be called again (same port, same dir)."""

    def __init__(self, folder: Path, *extra: str) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.extra = list(extra)
        self.process: "subprocess.Popen[bytes] | None" = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> "RedisServer":
        assert REDIS_SERVER is not None
        args = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--dir", str(self.folder),
                "--protected-mode", "no", *self.extra]
        if "--appendonly" not in self.extra:
            args += ["--appendonly", "no"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, cwd=self.folder)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                pass
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.process.returncode}")
            time.sleep(0.02)
        raise RuntimeError("redis-server did not answer within 10 s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()  # an outage, not a shutdown: nothing is saved on the way out
            self.process.wait(timeout=10)
        self.process = None

    def client(self, **options):
        import redis

        return redis.Redis.from_url(self.url, **options)


@contextlib.contextmanager
def redis_server(folder: Path, *extra: str):
    """A started ``RedisServer``, stopped on exit."""
    server = RedisServer(folder, *extra).start()
    try:
        yield server
    finally:
        server.stop()


PIN_BACKENDS = ["memory", "file", "sqlite", "redis", "async-sqlite", "async-redis"]
"""Every key pin store: the ``pins`` fixture runs a test on each."""


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    """The CI server (AJPCORE_TEST_REDIS_URL) or one of the test module's own."""
    need_redis()
    url = os.environ.get("AJPCORE_TEST_REDIS_URL")
    if url:
        yield url
        return
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server.url


class Awaiting:
    """An asyncio store (guard or pins) driven from a test: each method runs its coroutine on the facade's loop."""

    def __init__(self, store, loop):
        self.store, self.loop = store, loop

    def __getattr__(self, name):
        method = getattr(self.store, name)
        return lambda *a, **k: self.loop.run_until_complete(method(*a, **k))


@pytest.fixture(params=PIN_BACKENDS)
def pins(request, tmp_path):
    """A fresh, empty pin store of each backend (the asyncio ones behind ``Awaiting``): the pin contract suite."""
    from ajpcore import provenance

    backend = request.param
    if backend == "memory":
        yield provenance.MemoryKeyPins()
        return
    if backend == "file":
        yield provenance.FileKeyPins(tmp_path / "pins.json")
        return
    if backend.endswith("sqlite"):
        store = (provenance.SQLiteKeyPins if backend == "sqlite" else provenance.AsyncSQLiteKeyPins)(tmp_path / "p.db")
        loop = asyncio.new_event_loop()
        yield store if backend == "sqlite" else Awaiting(store, loop)
        store.close()
        loop.close()
        return
    url = request.getfixturevalue("redis_url")
    prefix = f"p{uuid.uuid4().hex[:10]}:"
    if backend == "redis":
        import redis

        yield provenance.RedisKeyPins(redis.Redis.from_url(url), prefix=prefix)
        return
    import redis.asyncio

    loop = asyncio.new_event_loop()
    store = provenance.AsyncRedisKeyPins(redis.asyncio.Redis.from_url(url), prefix=prefix)
    yield Awaiting(store, loop)
    loop.run_until_complete(store.client.aclose())
    loop.close()


@contextlib.contextmanager
def replica_pair(folder: Path):
    """``(primary, replica)``: two started ``RedisServer``s, the second replicating the first (link up)."""
    primary = RedisServer(Path(folder) / "primary").start()
    replica = None
    try:
        replica = RedisServer(Path(folder) / "replica", "--replicaof", "127.0.0.1", str(primary.port)).start()
        client = replica.client()
        deadline = time.monotonic() + 20
        while client.info("replication").get("master_link_status") != "up":
            assert time.monotonic() < deadline, "the replica did not connect to its primary within 20 s"
            time.sleep(0.05)
        client.close()
        yield primary, replica
    finally:
        if replica is not None:
            if replica.process is not None:
                os.kill(replica.process.pid, signal.SIGCONT)  # never leave it stopped
            replica.stop()
        primary.stop()


REDIS_CLI = shutil.which("redis-cli")


class RedisCluster:
    """Three cluster-enabled redis-servers on 127.0.0.1 made one 3-primary cluster (``redis-cli --cluster
    create``, no replicas); ``nodes`` are the ``RedisServer``s, ``url`` names the first.  Full coverage
    is not required, so with one primary stopped the others still serve their slots."""

    def __init__(self, folder: Path) -> None:
        self.nodes = [
            RedisServer(Path(folder) / f"node{i}", "--cluster-enabled", "yes", "--cluster-config-file",
                        "nodes.conf", "--cluster-node-timeout", "1000", "--cluster-port", str(free_port()),
                        "--cluster-require-full-coverage", "no")
            for i in range(3)
        ]

    @property
    def url(self) -> str:
        return self.nodes[0].url

    def start(self) -> "RedisCluster":
        assert REDIS_CLI is not None
        for node in self.nodes:
            node.start()
        made = subprocess.run(
            [REDIS_CLI, "--cluster", "create", *(f"127.0.0.1:{node.port}" for node in self.nodes),
             "--cluster-replicas", "0", "--cluster-yes"],
            capture_output=True, timeout=60,
        )
        if made.returncode:
            raise RuntimeError(f"redis-cli --cluster create failed: {made.stdout[-500:]!r} {made.stderr[-500:]!r}")
        deadline = time.monotonic() + 30
        for node in self.nodes:
            client = node.client()
            while client.execute_command("CLUSTER INFO").get("cluster_state") != "ok":
                assert time.monotonic() < deadline, "the cluster did not reach cluster_state:ok within 30 s"
                time.sleep(0.05)
            client.close()
        return self

    def stop(self) -> None:
        for node in self.nodes:
            if node.process is not None:
                os.kill(node.process.pid, signal.SIGCONT)
            node.stop()


def need_cluster() -> None:
    """Skip (fail under CI=true) without redis-server and redis-cli to build a cluster of our own."""
    need_redis(own=True)
    if REDIS_CLI is None:
        why = "redis-cli is not on PATH (apt-get install redis-tools): no cluster can be created"
        if IN_CI:
            pytest.fail("CI=true, so the Redis Cluster tests must run: " + why)
        pytest.skip(why)


def child_env() -> dict:
    """The environment of a child process importing the same ajpcore as this test process."""
    import ajpcore

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(ajpcore.__file__).resolve().parent.parent), str(Path(__file__).parent)])
    return env


def run_child(*args: str, timeout: float = 120) -> "subprocess.CompletedProcess[bytes]":
    return subprocess.run([sys.executable, *args], capture_output=True, env=child_env(), timeout=timeout)


class SlotMover:
    """Moves one hash slot of a ``RedisCluster`` from primary to primary, the way ``redis-cli --cluster
    reshard`` does (``CLUSTER SETSLOT ... IMPORTING``/``MIGRATING``, ``MIGRATE`` of its keys, then ``SETSLOT
    ... NODE`` on every primary), again and again until ``stop()``.

    ``pause`` (seconds) is spent between the steps, so a race running meanwhile crosses every state of a
    migration: the slot migrating with its keys still on the source (served there), its keys moved but the
    slot not yet handed over (``ASK`` to the target), handed over (``MOVED`` for a client with the old map).  ``moves`` records (start, end) of each
    completed move (``time.time()``)."""

    def __init__(self, cluster: "RedisCluster", slot: int, pause: float = 0.01) -> None:
        self.cluster, self.slot, self.pause = cluster, slot, pause
        self.moves: "list[tuple[float, float]]" = []
        self.failed: "list[str]" = []  # moves a node refused half-way (then settled), at most a few
        self.error: "BaseException | None" = None
        self._stop = False
        self._thread: "threading.Thread | None" = None

    def _clients(self) -> list:
        return [node.client(decode_responses=True) for node in self.cluster.nodes]

    def owner(self, clients: list) -> int:
        """The index of the primary serving the slot, as the first node sees it."""
        ports = [node.port for node in self.cluster.nodes]
        for start, end, primary, *_ in clients[0].execute_command("CLUSTER SLOTS"):
            if int(start) <= self.slot <= int(end):
                return ports.index(int(primary[1]))
        raise AssertionError(f"slot {self.slot} has no owner")

    def move(self, clients: list, src: int, dst: int) -> None:
        """One move of the slot from node ``src`` to node ``dst`` (indexes into ``cluster.nodes``)."""
        ids = [client.execute_command("CLUSTER MYID") for client in clients]
        began = time.time()
        clients[dst].execute_command("CLUSTER SETSLOT", self.slot, "IMPORTING", ids[src])
        clients[src].execute_command("CLUSTER SETSLOT", self.slot, "MIGRATING", ids[dst])
        time.sleep(self.pause)  # migrating, no key moved yet: the source still serves the slot's keys
        while True:
            keys = clients[src].execute_command("CLUSTER GETKEYSINSLOT", self.slot, 10)
            if not keys:  # ten keys per MIGRATE, as redis-cli --cluster reshard's default --cluster-pipeline
                break
            clients[src].execute_command("MIGRATE", "127.0.0.1", self.cluster.nodes[dst].port, "", 0, 5000,
                                         "KEYS", *keys)
        time.sleep(self.pause)  # every key moved, the slot not handed over yet: ASK
        for client in (clients[dst], clients[src], *(c for i, c in enumerate(clients) if i not in (src, dst))):
            client.execute_command("CLUSTER SETSLOT", self.slot, "NODE", ids[dst])
        self.moves.append((began, time.time()))

    def settle(self, clients: list) -> None:
        """After a move that failed half-way: give the slot to the node holding its keys (the owner if none)."""
        counts = [int(client.execute_command("CLUSTER COUNTKEYSINSLOT", self.slot)) for client in clients]
        holder = counts.index(max(counts)) if max(counts) else self.owner(clients)
        holder_id = clients[holder].execute_command("CLUSTER MYID")
        for client in clients:
            client.execute_command("CLUSTER SETSLOT", self.slot, "NODE", holder_id)

    def _loop(self) -> None:
        import redis

        clients = self._clients()
        try:
            while not self._stop:
                src = self.owner(clients)
                try:
                    self.move(clients, src, (src + 1) % len(clients))
                except redis.ResponseError as exc:  # a node's view lagging behind (gossip): settle, go on
                    self.failed.append(str(exc))
                    self.settle(clients)
                time.sleep(self.pause)
        except BaseException as exc:  # noqa: BLE001 - reported by stop()
            self.error = exc
        finally:
            for client in clients:
                client.close()

    def start(self) -> "SlotMover":
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> "list[tuple[float, float]]":
        self._stop = True
        assert self._thread is not None
        self._thread.join(timeout=60)
        if self.error is not None:
            raise self.error
        return self.moves
