"""Two-thread scaling of ajpcore's operations: what a second thread adds to one thread's work.

Usage: ``python bench/thread_scaling.py [--seconds S] [--runs R] [--only TEXT]``

For each operation, runs it in a loop on one thread for ``S`` seconds, then on two threads at
once for ``S`` seconds, and takes the throughput of two threads as a multiple of one (2.0 is
perfect scaling, 1.0 means the GIL serializes everything); ``R`` such pairs (3 by default),
and the median of their ratios is what is printed and judged.  Run it on an otherwise idle
machine with at least two cores: other load makes every number meaningless.

Operations and their targets (issue 33):

- over bytes, where no Python object is touched and the GIL is released (>= 1.8x): HMAC-SHA256
  of a 10 MB body (``HmacSigner``), SHA-256 of it (``hashlib``: the floor the HMAC stands on),
  and the default Ed25519 verify of a signature over it (libsodium, ``ed25519_sodium_verify``);
- decode of a 10 MB document, which holds the GIL throughout (>= 0.95x: a second thread may
  add nothing, but must not slow the first down);
- with no target, for the record: Ed25519 verify of an offer (libsodium and OpenSSL), HMAC
  signing of the 10 MB document as a value (canonical bytes are made under the GIL; only the
  SHA-256 of each chunk runs without it), canonicalize of that document.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from typing import Callable, Dict, List, NamedTuple, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import data  # noqa: E402  (bench/data.py, beside this file)

import ajpcore  # noqa: E402
from ajpcore import Ed25519PrivateKey  # noqa: E402

BODY_BYTES = 10_000_000


class Operation(NamedTuple):
    """One unit of work and the least two-thread scaling it must show (None: no target)."""

    work: Callable[[], object]
    target: Optional[float]


def _big_document() -> Dict[str, object]:
    records = data.value("mixed8m")["records"]
    return {"records": records + records[: len(records) // 4]}  # ~10 MB canonical


def operations() -> Dict[str, Operation]:
    """Name -> the operation."""
    import hashlib

    offer = {k: v for k, v in data.value("offer").items() if k != "signature"}
    message = ajpcore.canonicalize(offer)
    private = Ed25519PrivateKey.from_seed(bytes(range(32)))
    signature = private.sign(message)
    key = private.public_key
    body = bytes(range(256)) * (BODY_BYTES // 256)
    body_signature = private.sign(body)
    big = _big_document()
    big_bytes = ajpcore.canonicalize(big)

    def hmac_body() -> bytes:
        mac = ajpcore.HmacSigner(data.SECRET)
        mac.update(body)
        return mac.finalize()

    return {
        "hmac 10 MB bytes": Operation(hmac_body, 1.8),
        "sha256 10 MB bytes (hashlib)": Operation(lambda: hashlib.sha256(body).digest(), 1.8),
        "ed25519 verify 10 MB bytes": Operation(lambda: key.verify(body_signature, body), 1.8),
        "decode 10 MB": Operation(lambda: ajpcore.decode(big_bytes), 0.95),
        "ed25519 verify offer (libsodium)": Operation(lambda: key.verify(signature, message), None),
        "ed25519 verify offer (openssl)": Operation(
            lambda: key.verify(signature, message, backend="cryptography"), None
        ),
        "hmac sign 10 MB value": Operation(lambda: ajpcore.sign(big, secret=data.SECRET), None),
        "canonicalize 10 MB": Operation(lambda: ajpcore.canonicalize(big), None),
    }


def throughput(work: Callable[[], object], threads: int, seconds: float) -> float:
    """Calls per second of ``work`` summed over ``threads`` threads running for ``seconds``."""
    counts: List[int] = [0] * threads
    start_line = threading.Barrier(threads + 1)
    stop = [0.0]

    def loop(slot: int) -> None:
        start_line.wait()
        n = 0
        while time.perf_counter() < stop[0]:
            work()
            n += 1
        counts[slot] = n

    pool = [threading.Thread(target=loop, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    began = time.perf_counter()
    stop[0] = began + seconds
    start_line.wait()
    for t in pool:
        t.join()
    return sum(counts) / (time.perf_counter() - began)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each timed run")
    parser.add_argument("--runs", type=int, default=3, help="one/two-thread pairs per operation (median)")
    parser.add_argument("--only", default="", help="operations whose name contains this text")
    args = parser.parse_args()
    print(
        f"backend {ajpcore.BACKEND}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}, "
        f"switch interval {sys.getswitchinterval() * 1000:.0f} ms, median of {args.runs}"
    )
    missed = 0
    for name, op in operations().items():
        if args.only not in name:
            continue
        op.work()  # warm caches and key objects
        ones, twos, ratios = [], [], []
        for _ in range(args.runs):
            one = throughput(op.work, 1, args.seconds)
            two = throughput(op.work, 2, args.seconds)
            ones.append(one)
            twos.append(two)
            ratios.append(two / one)
        ratio = statistics.median(ratios)
        verdict = ""
        if op.target is not None:
            verdict = f"  target >= {op.target:.2f}x: " + ("met" if ratio >= op.target else "MISSED")
            missed += ratio < op.target
        print(
            f"{name:34s} 1 thread {statistics.median(ones):10.1f}/s  2 threads {statistics.median(twos):10.1f}/s"
            f"  scaling {ratio:.2f}x (runs {' '.join(f'{r:.2f}' for r in ratios)}){verdict}",
            flush=True,
        )
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
