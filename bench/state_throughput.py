"""Accepted offers per second of 1 and 2 worker processes sharing one replay guard (SQLite, Redis).

Each worker runs ``ajp.receive_offer`` over its own share of distinct signed
offers (every one an acceptance) with a guard opened on the shared store; the
clock runs from the moment every worker is ready until the last one is done.
Offers are HMAC-signed (``--scheme hmac``: the receive path costs ~10 µs, so
the store dominates) or Ed25519-signed (``--scheme ed25519``: the signature
check dominates, as for agent senders).  Target (issue 19): 2 workers >= 1.7x
one, on 2 cores.  The worker CPU time per offer is printed beside: when it does
not grow with the second worker, the store adds no contention of its own, and
the wall-clock ratio only says how many free cores the machine had.

Run: ``python bench/state_throughput.py [--offers 20000] [--scheme hmac|ed25519|both]``
(Redis: ``AJPCORE_TEST_REDIS_URL`` or a redis-server of its own, skipped without one).
``--costs`` prints per-call costs instead (a Redis admit and replay beside a ``PING``, the SQLite
guards); ``--redis-instructions N`` counts the Redis calls' instructions under callgrind, the
server's and the client's, and ``--sqlite-instructions`` a SQLite admit's (user space): counts the
machine's load does not move.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))  # callgrind.py's client-request helper

SECRET = "throughput-secret"
NOW = "2026-03-05T10:00:01Z"
SEED = bytes(range(32))
NOW_US = 1_772_704_801_000_000  # NOW in µs


def worker(offers_path: str, backend: str, spec: str, scheme: str, start: int, stop: int, gate: str) -> None:
    from ajpcore import Ed25519PrivateKey, ajp

    lines = Path(offers_path).read_bytes().splitlines()[start:stop]
    if backend == "sqlite":
        guard = ajp.SQLiteReplayGuard(spec, max_per_identity=10**6, max_entries=10**7, busy_timeout=60)
    else:
        import redis

        url, _, prefix = spec.partition("|")
        guard = ajp.RedisReplayGuard(redis.Redis.from_url(url), prefix=prefix, max_per_identity=10**6)
    key = {"secret": SECRET} if scheme == "hmac" else {"public_key": Ed25519PrivateKey.from_seed(SEED).public_key}
    open(os.path.join(gate, f"ready-{os.getpid()}"), "w").close()
    while not os.path.exists(os.path.join(gate, "go")):
        time.sleep(0.0002)
    accepted = 0
    cpu = time.process_time()
    for data in lines:
        ajp.receive_offer(data, now=NOW, recipient="provenance:domain:receiver.example", replay_guard=guard,
                          require_capabilities=(), **key)  # a bare public key: no declaration to read capabilities from
        accepted += 1
    cpu = time.process_time() - cpu
    state = getattr(guard, "_state", None)  # SQLite: how often the writers' lock or the database was taken
    retries = state.busy_retries if state is not None and hasattr(state, "busy_retries") else 0
    print(json.dumps({"accepted": accepted, "done": time.time(), "cpu": cpu, "retries": retries}))


def make_offers(path: Path, count: int, scheme: str) -> None:
    from ajpcore import Ed25519PrivateKey, ajp, sign

    if scheme == "hmac":
        sender, key = {"type": "human", "id": "user_tp"}, {"secret": SECRET}
    else:
        sender = {"type": "agent", "provenance_id": "provenance:domain:sender.example",
                  "declaration_url": "https://sender.example/.well-known/provenance.json"}
        key = {"private_key": Ed25519PrivateKey.from_seed(SEED)}
    template = ajp.new_offer(sender=sender, to="provenance:domain:receiver.example",
                             task={"type": "summarize", "instruction": "throughput"},
                             now="2026-03-05T10:00:00Z", **key).to_dict()
    template.pop("signature")
    with open(path, "wb") as f:
        for i in range(count):
            body = dict(template, job_id=f"job_tp_{i:07d}")
            body["signature"] = sign(body, **key)
            f.write(ajp.JobOffer.from_dict(body).to_json() + b"\n")


def run(offers: Path, count: int, backend: str, spec: str, scheme: str, workers: int) -> "tuple[float, float, float]":
    """(accepted offers per second of wall time, worker CPU µs per accepted offer, SQLite busy retries per offer)."""
    from state_servers import child_env

    gate = Path(tempfile.mkdtemp(prefix="ajpcore-tp-gate-"))
    share = count // workers
    procs = [
        subprocess.Popen([sys.executable, __file__, "--worker", str(offers), backend, spec, scheme,
                          str(i * share), str((i + 1) * share), str(gate)],
                         env=child_env(), stdout=subprocess.PIPE)
        for i in range(workers)
    ]
    while len(list(gate.glob("ready-*"))) < workers:
        time.sleep(0.005)
    began = time.time()
    (gate / "go").touch()
    results = [json.loads(p.communicate()[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    accepted = sum(r["accepted"] for r in results)
    assert accepted == share * workers
    cpu_us = sum(r["cpu"] for r in results) / accepted * 1e6
    retries = sum(r.get("retries", 0) for r in results) / accepted
    return accepted / (max(r["done"] for r in results) - began), cpu_us, retries


def _redis_calls(client, guard) -> "dict[str, object]":
    """The three calls measured, each taking the loop index: a ``PING``, an admit of a new pair (a
    confirmed one, as ``receive_offer`` without ``run=`` makes), and the replay of an admitted pair."""
    from ajpcore import ReplayedMessage

    def admit(i: int) -> None:
        guard.admit("sha256:cost", f"job_{i}", expires_at_us=NOW_US + 10**8, now_us=NOW_US, digest=b"d" * 32,
                    confirmed=True)

    def replay(i: int) -> None:
        try:
            admit(i)
        except ReplayedMessage:
            pass

    return {"PING": lambda i: client.ping(), "admit": admit, "replay": replay}


def _cost_guard(client):
    from ajpcore import ajp

    guard = ajp.RedisReplayGuard(client, prefix=f"cost{uuid.uuid4().hex[:6]}:", max_per_identity=10**8)
    for i in range(1000):  # a busy group: its keys are a hash table and a skip list, past Redis's small encodings
        guard.admit("sha256:cost", f"job_warm{i}", expires_at_us=10**18, now_us=0, digest=b"d" * 32, confirmed=True)
    return guard


def redis_costs(url: str, n: int) -> None:
    """A Redis admit beside a ``PING`` on the same connection: the server's time per call (``INFO
    commandstats``, µs per ``EVALSHA`` / ``PING``, and the server process's CPU per call, ``INFO cpu``),
    this process's CPU per call, and the median wall time of one call (a round trip on loopback: noisy on
    a busy machine, the others less so; ``--redis-instructions`` counts what load does not move)."""
    import redis

    client = redis.Redis.from_url(url)
    calls = _redis_calls(client, _cost_guard(client))
    print(f"{'redis call':10} {'server us':>9} {'server CPU us':>13} {'client CPU us':>13} {'median wall us':>14}"
          f" {'wall / PING':>11}")
    ping_wall = None
    for name, call in calls.items():
        client.config_resetstat()
        server_cpu = _server_cpu(client)
        walls = []
        cpu = time.process_time()
        for i in range(n):
            began = time.perf_counter()
            call(i)
            walls.append(time.perf_counter() - began)
        cpu_us = (time.process_time() - cpu) / n * 1e6
        server_cpu_us = (_server_cpu(client) - server_cpu) / n * 1e6
        stats = client.info("commandstats")
        server_us = stats["cmdstat_ping" if name == "PING" else "cmdstat_evalsha"]["usec_per_call"]
        wall_us = sorted(walls)[n // 2] * 1e6
        ping_wall = ping_wall or wall_us
        print(f"{name:10} {server_us:9.2f} {server_cpu_us:13.2f} {cpu_us:13.1f} {wall_us:14.1f}"
              f" {wall_us / ping_wall:11.2f}")


def _server_cpu(client) -> float:
    cpu = client.info("cpu")
    return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])


def redis_instructions(work: Path, n: int) -> None:
    """Instructions per call, under ``valgrind --tool=callgrind``, which the machine's load does not move:
    the server's (a redis-server of its own under callgrind: counters zeroed, ``n`` calls, dumped, with
    ``callgrind_control``) and this client's (this script again under callgrind against a plain
    redis-server, ``n`` and ``2n`` calls told apart as ``bench/callgrind.py`` does)."""
    from callgrind import _helper
    from state_servers import REDIS_SERVER, free_port, redis_server

    if shutil.which("valgrind") is None or REDIS_SERVER is None:
        print("instructions: skipped (needs valgrind and redis-server)")
        return
    import redis

    port, folder = free_port(), work / "callgrind-server"
    folder.mkdir()
    server = subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={folder}/cg.out", REDIS_SERVER, "--port", str(port),
         "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(folder)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        client = redis.Redis(port=port, socket_timeout=60)
        for _ in range(600):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.1)
        server_counts = {}
        for name, call in _redis_calls(client, _cost_guard(client)).items():
            control = ["callgrind_control", "-z", str(server.pid)]
            subprocess.run(control, check=True, capture_output=True)
            for i in range(n):
                call(i)
            subprocess.run([*control[:1], "-d", str(server.pid)], check=True, capture_output=True)
            dumps = sorted(folder.glob("cg.out.*"), key=lambda p: int(p.suffix[1:]))
            server_counts[name] = _summary(dumps[-1]) / n
    finally:
        server.terminate()
        server.wait(timeout=60)
    with redis_server(work / "redis-plain") as plain:
        out = work / "callgrind-client"
        out.mkdir()
        subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}/cg.out",
                        sys.executable, __file__, "--client-instructions", plain.url, str(_helper(work)), str(n)],
                       check=True, capture_output=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    labelled = {}
    for path in out.glob("cg.out.*"):
        label = next(line.split(": ", 3)[3].strip() for line in path.read_text("utf-8", "replace").splitlines()
                     if line.startswith("desc: Trigger: Client Request: "))
        labelled[label] = _summary(path)
    print(f"{'redis call':10} {'server instructions':>19} {'client instructions':>19} {'sum / PING':>10}")
    rows = {}
    for name, server_per_call in server_counts.items():
        client_per_call = (labelled[f"{name}|{2 * n}"] - labelled[f"{name}|{n}"]) / n
        rows[name] = server_per_call + client_per_call
        print(f"{name:10} {server_per_call:19,.0f} {client_per_call:19,.0f} {rows[name] / rows['PING']:10.2f}")


def _summary(dump: Path) -> int:
    for line in dump.read_text("utf-8", "replace").splitlines():
        if line.startswith("summary:"):
            return int(line.split()[1])
    raise ValueError(f"no summary in {dump}")


def client_instructions(url: str, helper: str, n: int) -> None:
    """The child of ``redis_instructions``, run under callgrind: each call ``n`` then ``2n`` times, dumped."""
    import ctypes
    import gc

    import redis

    marks = ctypes.CDLL(helper)
    client = redis.Redis.from_url(url)
    calls = _redis_calls(client, _cost_guard(client))
    for call in calls.values():  # warm: imports, the policy read, the script loaded, the first pairs
        for i in range(50):
            call(10**7 + i)
    gc.disable()
    marks.cg_start()
    for name, call in calls.items():
        start = 0
        for count in (n, 2 * n):
            marks.cg_zero()
            for i in range(start, start + count):
                call(i)
            marks.cg_dump(f"{name}|{count}".encode())
            if name == "admit":  # new pairs each round; the replays are of the pairs admitted
                start += count


def sqlite_async_costs(folder: Path, n: int) -> None:
    """CPU per admit of ``SQLiteReplayGuard`` and of ``AsyncSQLiteReplayGuard`` awaited one at a time (the
    process's CPU, both threads), the wall time of each, and the context switches per admit (voluntary and
    not, ``getrusage``: a count the machine's load moves less).  Then what the hop itself costs: a call that
    returns at once (the worker answers before the event loop has gone to sleep) and a call that waits 50 µs
    without CPU (the event loop and the worker thread both sleep and are woken, as around a real admit), each
    beside the same call made inline."""
    import asyncio
    import resource

    from ajpcore import ajp
    from ajpcore._state_sqlite import WorkerThread

    def measure(run: "Callable[[], object]") -> "tuple[float, float, float]":
        usage, cpu, wall = resource.getrusage(resource.RUSAGE_SELF), time.process_time(), time.perf_counter()
        run()
        cpu, wall = (time.process_time() - cpu) / n * 1e6, (time.perf_counter() - wall) / n * 1e6
        after = resource.getrusage(resource.RUSAGE_SELF)
        return cpu, wall, (after.ru_nvcsw + after.ru_nivcsw - usage.ru_nvcsw - usage.ru_nivcsw) / n

    sync = ajp.SQLiteReplayGuard(folder / f"sync-{uuid.uuid4().hex[:6]}.db", max_per_identity=10**8,
                                 max_entries=10**9)
    s_cpu, s_wall, s_switches = measure(lambda: [
        sync.admit("sha256:cost", f"job_{i}", expires_at_us=NOW_US + 10**8, now_us=NOW_US, digest=b"d" * 32,
                   confirmed=True) for i in range(n)])
    sync.close()
    guard = ajp.AsyncSQLiteReplayGuard(folder / f"async-{uuid.uuid4().hex[:6]}.db", max_per_identity=10**8,
                                       max_entries=10**9)

    async def admits() -> None:
        for i in range(n):
            await guard.admit("sha256:cost", f"job_{i}", expires_at_us=NOW_US + 10**8, now_us=NOW_US,
                              digest=b"d" * 32, confirmed=True)

    a_cpu, a_wall, a_switches = measure(lambda: asyncio.run(admits()))
    guard.close()
    print(f"sqlite admit: sync CPU {s_cpu:.1f} us (wall {s_wall:.1f}, {s_switches:.2f} context switches),"
          f" async CPU {a_cpu:.1f} us (wall {a_wall:.1f}, {a_switches:.2f} context switches),"
          f" async / sync CPU {a_cpu / s_cpu:.2f}")
    thread = WorkerThread("ajpcore-bench-hop")

    async def hops(fn: "Callable[..., object]", *args: object) -> None:
        for _ in range(n):
            await thread.call(fn, *args)

    for name, fn, args in (("returns at once", int, ()), ("waits 50 us", time.sleep, (0.00005,))):
        h_cpu, _, h_switches = measure(lambda: asyncio.run(hops(fn, *args)))
        i_cpu, _, i_switches = measure(lambda: [fn(*args) for _ in range(n)])
        print(f"hop to the worker thread, a call that {name}: CPU {h_cpu:.1f} us against {i_cpu:.1f} inline"
              f" (+{h_cpu - i_cpu:.1f}); context switches {h_switches:.2f} against {i_switches:.2f}")
    thread.close()


IDENTITY = "sha256:" + "ab" * 32  # an identity as long as a real one (the row, the pair's key and its group's)


def admits(folder: str, n: int, connections: int) -> None:
    """``n`` synchronous SQLite admits of new pairs after 200 to warm the connection (``--sqlite-instructions``),
    by ``connections`` guards on the one file taking turns (two: each admit finds the file written by the other
    connection since its own last admit, as two workers do)."""
    from ajpcore import ajp

    guards = [ajp.SQLiteReplayGuard(Path(folder) / "admits.db", max_per_identity=10**8, max_entries=10**9)
              for _ in range(connections)]
    for i in range(200 + n):
        guards[i % connections].admit(IDENTITY, f"job_{i:07d}", expires_at_us=NOW_US + 10**8 + i, now_us=NOW_US,
                                      digest=b"d" * 32, confirmed=True)
    for guard in guards:
        guard.close()


def sqlite_instructions(n: int) -> None:
    """User-space instructions per synchronous SQLite admit, counted by callgrind (the load of the machine does
    not move them): the process with ``n + 1000`` admits minus the process with ``n``, over 1,000; by one
    connection, then by two taking turns (in WAL mode SQLite empties a connection's page cache when another
    connection wrote the file since its last transaction, and reads the pages again: the cost a second worker
    adds to each admit, whatever the locks).  The kernel's share (the WAL's ``pwrite`` calls, those re-reads'
    ``pread``, the locks) is not counted: ``strace -c -f`` counts those calls."""
    if shutil.which("valgrind") is None:
        print("sqlite admit instructions: skipped, valgrind not found")
        return
    from state_servers import child_env

    for connections in (1, 2):
        counts = []
        for admits_n in (n, n + 1000):
            folder = tempfile.mkdtemp(prefix="ajpcore-cg-")
            out = Path(folder) / "callgrind.out"
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__,
                            "--admits", folder, str(admits_n), str(connections)], env=child_env(), check=True,
                           capture_output=True)
            totals = [line for line in out.read_text().splitlines() if line.startswith(("summary:", "totals:"))]
            counts.append(int(totals[0].split()[1]))
        how = "" if connections == 1 else " (2 connections taking turns)"
        print(f"sqlite admit{how}: {(counts[1] - counts[0]) / 1000:,.0f} user-space instructions per admit (callgrind)")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(*sys.argv[2:6], int(sys.argv[6]), int(sys.argv[7]), sys.argv[8])
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "--admits":
        admits(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "--client-instructions":
        client_instructions(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offers", type=int, default=20_000)
    parser.add_argument("--scheme", choices=["hmac", "ed25519", "both"], default="both")
    parser.add_argument("--backend", choices=["sqlite", "redis", "both"], default="both")
    parser.add_argument("--costs", action="store_true",
                        help="per-call costs instead: a Redis admit beside PING, SQLite async beside sync")
    parser.add_argument("--sqlite-instructions", action="store_true",
                        help="user-space instructions per SQLite admit under callgrind instead (needs valgrind)")
    parser.add_argument("--redis-instructions", type=int, metavar="N", default=0,
                        help="instructions of a Redis PING, admit and replay under callgrind instead, server and "
                             "client (N calls each; needs valgrind)")
    args = parser.parse_args()
    if args.sqlite_instructions:
        sqlite_instructions(200)
        return 0
    from state_servers import REDIS_SERVER, redis_server

    work = Path(tempfile.mkdtemp(prefix="ajpcore-tp-"))
    schemes = ["hmac", "ed25519"] if args.scheme == "both" else [args.scheme]
    url = os.environ.get("AJPCORE_TEST_REDIS_URL")
    server = None
    if not url and REDIS_SERVER is not None:
        server = redis_server(work / "redis")
        url = server.__enter__().url
    try:
        if args.redis_instructions:
            redis_instructions(work, args.redis_instructions)
            return 0
        if args.costs:
            if url is not None:
                redis_costs(url, args.offers)
            sqlite_async_costs(work, args.offers)
            return 0
        print(f"{'backend':8} {'scheme':8} {'1 worker/s':>11} {'2 workers/s':>12} {'ratio':>6}"
              f" {'CPU us/offer 1w':>16} {'2w':>6} {'busy retries/offer 2w':>22}")
        for scheme in schemes:
            offers = work / f"offers-{scheme}.jsonl"
            make_offers(offers, args.offers, scheme)
            for backend in ("sqlite", "redis") if args.backend == "both" else (args.backend,):
                if backend == "redis" and url is None:
                    print(f"{backend:8} {scheme:8} skipped: no redis-server and no AJPCORE_TEST_REDIS_URL")
                    continue
                rates = []
                for workers in (1, 2):
                    spec = str(work / f"tp-{uuid.uuid4().hex[:6]}.db") if backend == "sqlite" \
                        else f"{url}|tp{uuid.uuid4().hex[:6]}:"
                    rates.append(run(offers, args.offers, backend, spec, scheme, workers))
                (r1, c1, _), (r2, c2, b2) = rates
                print(f"{backend:8} {scheme:8} {r1:11.0f} {r2:12.0f} {r2 / r1:6.2f} {c1:16.1f} {c2:6.1f} {b2:22.2f}")
    finally:
        if server is not None:
            server.__exit__(None, None, None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
