"""Two-thread scaling of the operations that should not hold the GIL while they work.

Usage: ``python bench/thread_scaling.py [--seconds S]``

For each operation, runs it in a loop on one thread for ``S`` seconds, then on two threads at
once for ``S`` seconds, and prints the throughput of two threads as a multiple of one (2.0 is
perfect scaling, 1.0 means the GIL serializes everything).  Run it on an otherwise idle
machine with at least two cores: other load makes both numbers meaningless.

Operations: Ed25519 verify of an offer (libsodium, the default, and OpenSSL), HMAC signing of
a 10 MB document (canonical bytes streamed into SHA-256, which releases the GIL per chunk),
canonicalize of the same document, and decode of its bytes.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from typing import Callable, Dict, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import data  # noqa: E402  (bench/data.py, beside this file)

import ajpcore  # noqa: E402
from ajpcore import Ed25519PrivateKey  # noqa: E402


def _big_document() -> Dict[str, object]:
    records = data.value("mixed8m")["records"]
    return {"records": records + records[: len(records) // 4]}  # ~10 MB canonical


def operations() -> Dict[str, Callable[[], object]]:
    """Name -> a zero-argument call doing one unit of work."""
    offer = {k: v for k, v in data.value("offer").items() if k != "signature"}
    message = ajpcore.canonicalize(offer)
    private = Ed25519PrivateKey.from_seed(bytes(range(32)))
    signature = private.sign(message)
    key = private.public_key
    big = _big_document()
    big_bytes = ajpcore.canonicalize(big)
    return {
        "ed25519 verify (libsodium, default)": lambda: key.verify(signature, message),
        "ed25519 verify (openssl)": lambda: key.verify(signature, message, backend="cryptography"),
        "hmac sign 10 MB": lambda: ajpcore.sign(big, secret=data.SECRET),
        "canonicalize 10 MB": lambda: ajpcore.canonicalize(big),
        "decode 10 MB": lambda: ajpcore.decode(big_bytes),
    }


def throughput(work: Callable[[], object], threads: int, seconds: float) -> float:
    """Calls per second of ``work`` summed over ``threads`` threads running for ``seconds``."""
    counts: List[int] = [0] * threads
    stop = time.perf_counter() + seconds
    start_line = threading.Barrier(threads)

    def loop(slot: int) -> None:
        start_line.wait()
        n = 0
        while time.perf_counter() < stop:
            work()
            n += 1
        counts[slot] = n

    pool = [threading.Thread(target=loop, args=(k,)) for k in range(threads)]
    began = time.perf_counter()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return sum(counts) / (time.perf_counter() - began)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    print(f"backend {ajpcore.BACKEND}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    for name, work in operations().items():
        work()  # warm caches and key objects
        one = throughput(work, 1, args.seconds)
        two = throughput(work, 2, args.seconds)
        print(f"{name:40s} 1 thread {one:10.1f}/s  2 threads {two:10.1f}/s  scaling {two / one:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
