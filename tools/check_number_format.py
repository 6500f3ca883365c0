"""The native number text against the pure twin's, on as many doubles as asked (not run in CI).

``canonicalize`` writes a double as ECMAScript's Number::toString does (RFC 8785 §3.2.2.3); the
pure twin derives that text from ``float.__repr__`` (ajpcore/_core_py/number_format.py), the
native core computes it (native/number_format.h, Schubfach).  This script compares the two
byte for byte on families of doubles where a shortest-digit search can go wrong, and reports
the count checked and every mismatch::

    python tools/check_number_format.py                      # ~1 million doubles, a few seconds
    python tools/check_number_format.py --scale 100 --seed 7 # ~100 million, a few minutes

Run it from outside the source tree so the installed ``ajpcore`` (with its native core) is
imported.  Families (each value also with its sign flipped, where noted):

- random 64-bit patterns (every finite one a double can be);
- every binary exponent, subnormals included, with random mantissas, and with the mantissa
  extremes (the 64 smallest and largest), where the rounding interval is asymmetric or tiny;
- every subnormal of the smallest mantissas (5e-324 and its first neighbours);
- rounding intervals that end exactly on a candidate decimal (c * 2**q, q >= 2), and exact
  ties between two candidates (odd c * 2**-2);
- powers of two and of ten and their neighbours a few units in the last place away;
- short decimals: ``round(x, k)``, ``m / 10**k`` and ``m * 10**k`` (the digit search must find
  the short decimal among 17-digit neighbours), and exact binary fractions;
- integers around 2**53 and doubles around 1e21, where the layout switches to an exponent;
- full 17-digit draws as the bench writes them (``random() * 1000``, ``uniform(-1, 1)``).
"""

from __future__ import annotations

import argparse
import math
import random
import struct
import sys
import time
from array import array
from typing import Callable, Iterator, List

_BATCH = 50_000


def _doubles_from_bits(bits: List[int]) -> List[float]:
    a = array("Q", bits)
    d = array("d")
    d.frombytes(a.tobytes())
    return [x for x in d.tolist() if math.isfinite(x)]


def random_patterns(rng: random.Random, n: int) -> Iterator[List[float]]:
    while n > 0:
        k = min(n, _BATCH)
        yield _doubles_from_bits([rng.getrandbits(64) for _ in range(k)])
        n -= k


def every_exponent(rng: random.Random, per_exponent: int) -> Iterator[List[float]]:
    """Random mantissas under each biased exponent 0..2046 (0: subnormals), either sign."""
    batch: List[int] = []
    for be in range(2047):
        top = be << 52
        for _ in range(per_exponent):
            batch.append(rng.getrandbits(1) << 63 | top | rng.getrandbits(52))
        if len(batch) >= _BATCH:
            yield _doubles_from_bits(batch)
            batch = []
    yield _doubles_from_bits(batch)


def mantissa_extremes(width: int) -> Iterator[List[float]]:
    """The `width` smallest and largest mantissas under every exponent, both signs."""
    batch: List[int] = []
    for be in range(2047):
        top = be << 52
        for m in range(width):
            batch += [top | m, top | ((1 << 52) - 1 - m)]
        if len(batch) >= _BATCH:
            xs = _doubles_from_bits(batch)
            yield xs + [-x for x in xs]
            batch = []
    xs = _doubles_from_bits(batch)
    yield xs + [-x for x in xs]


def tiny_subnormals(n: int) -> Iterator[List[float]]:
    """Every subnormal of the n smallest mantissas (1 to 4 digits: the shortest is 1 digit)."""
    for start in range(1, n + 1, _BATCH):
        yield _doubles_from_bits(list(range(start, min(n + 1, start + _BATCH))))


def exact_interval_ends(rng: random.Random, per_exponent: int) -> Iterator[List[float]]:
    """Doubles c * 2**q (q >= 2) whose rounding interval ends on a decimal of the digit search's
    two granularities: 2c - 1 or 2c + 1 a multiple of 5**m, m in {k, k + 1}, k = floor(q log10 2)."""
    xs: List[float] = []
    for q in range(2, 90):
        k = math.floor(q * math.log10(2))
        for m in (k, k + 1):
            mod = 5**m
            if mod >= 1 << 50:
                continue
            for sign in (1, -1):
                base = (sign * (mod + 1) // 2) % mod   # 2 * base = sign (mod 5**m)
                for _ in range(per_exponent):
                    first = (1 << 52) + (base - (1 << 52)) % mod   # the least such c of 53 bits
                    c = first + mod * rng.randrange(0, ((1 << 53) - first + mod - 1) // mod)
                    if c < 1 << 53:
                        xs.append(math.ldexp(c, q))
    yield xs + [-x for x in xs]


def ties(rng: random.Random, n: int) -> Iterator[List[float]]:
    """Odd c * 2**-2 (in [2**50, 2**51)): exactly halfway between two 17-digit decimals, both in
    the rounding interval, so the even one is written."""
    while n > 0:
        k = min(n, _BATCH)
        yield [math.ldexp((1 << 52) + 2 * rng.randrange(0, 1 << 51) + 1, -2) for _ in range(k)]
        n -= k


def _neighbours(x: float, steps: int) -> List[float]:
    out = [x]
    lo = hi = x
    for _ in range(steps):
        lo = math.nextafter(lo, 0.0)
        hi = math.nextafter(hi, math.inf)
        out += [lo, hi]
    return [v for v in out if v and math.isfinite(v)]


def powers(steps: int) -> Iterator[List[float]]:
    """2**e and 10**k (as float('1ek') reads them) and their neighbours, both signs."""
    xs: List[float] = []
    for e in range(-1074, 1024):
        xs += _neighbours(math.ldexp(1.0, e), steps)
    for k in range(-324, 309):
        for m in (1, 2, 5, 9.999999999999999):
            xs += _neighbours(float(f"{m}e{k}"), steps)
    yield xs + [-x for x in xs]


def short_decimals(rng: random.Random, n: int) -> Iterator[List[float]]:
    """round(x, k), m / 10**k, m * 10**k with m of 1-17 digits, exact binary fractions."""
    while n > 0:
        k = min(n, _BATCH)
        xs: List[float] = []
        for _ in range(k // 4):
            digits = rng.randint(1, 17)
            m = rng.randrange(1, 10**digits)
            e = rng.randint(-30, 30)
            xs.append(round(rng.uniform(-1e6, 1e6), rng.randint(0, 10)))
            xs.append(m / 10.0 ** -e if e < 0 else float(m) * 10.0**e)
            xs.append(float(f"{m}e{rng.randint(-330, 310)}"))
            xs.append(rng.randrange(1, 1 << 40) / (1 << rng.randint(1, 60)))
        xs = [x for x in xs if math.isfinite(x)]
        yield xs + [-x for x in xs]
        n -= k


def integers_and_switches(rng: random.Random, n: int) -> Iterator[List[float]]:
    """Integers around 2**53 (exact below, rounded above) and doubles around 1e21 and 1e-7."""
    while n > 0:
        k = min(n, _BATCH)
        xs: List[float] = []
        for _ in range(k // 4):
            xs.append(float(2**53 + rng.randint(-(2**20), 2**20)))
            xs.append(float(rng.randrange(1, 2**53)))
            xs.append(rng.uniform(1e20, 1e22))
            xs.append(rng.uniform(1e-8, 1e-6))
        yield xs + [-x for x in xs]
        n -= k


def bench_draws(rng: random.Random, n: int) -> Iterator[List[float]]:
    """Full-precision draws as bench/data.py makes them."""
    while n > 0:
        k = min(n, _BATCH)
        xs: List[float] = []
        for _ in range(k // 3):
            xs.append(rng.random() * 1000)
            xs.append(rng.uniform(-1, 1))
            xs.append(rng.uniform(1.0, 10.0) * 10.0 ** rng.randint(-300, 300))
        yield xs
        n -= k


def check(native, pure, families: List[Callable[[], Iterator[List[float]]]], out=sys.stdout) -> int:
    """Compares every batch; returns the number of mismatching doubles (each is printed)."""
    total = bad = 0
    for family in families:
        start, count = time.monotonic(), 0
        for xs in family():
            count += len(xs)
            if native.canonicalize(xs) == pure.canonicalize(xs):
                continue
            for x in xs:
                a, b = native._format_double(x), pure._format_double(x)
                if a != b:
                    bad += 1
                    print(f"MISMATCH {x!r} ({struct.pack('>d', x).hex()}): native {a} pure {b}", file=out)
        total += count
        print(f"{family.__name__:24} {count:>12,} doubles  {time.monotonic() - start:7.1f} s", file=out)
    print(f"checked {total:,} doubles, {bad} mismatches", file=out)
    return bad


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="about a million doubles per unit (default 1)")
    parser.add_argument("--seed", type=int, default=8785)
    args = parser.parse_args(argv)

    from ajpcore import _core_c as native
    from ajpcore import _core_py as pure

    rng = random.Random(args.seed)
    m = args.scale * 1_000_000

    def named(name: str, make: Callable[[], Iterator[List[float]]]) -> Callable[[], Iterator[List[float]]]:
        make.__name__ = name
        return make

    families = [
        named("random_patterns", lambda: random_patterns(rng, int(0.4 * m))),
        named("every_exponent", lambda: every_exponent(rng, max(1, int(0.2 * m / 2047)))),
        named("mantissa_extremes", lambda: mantissa_extremes(max(1, min(64, int(64 * args.scale))))),
        named("tiny_subnormals", lambda: tiny_subnormals(int(0.05 * m))),
        named("exact_interval_ends", lambda: exact_interval_ends(rng, max(1, int(100 * args.scale)))),
        named("ties", lambda: ties(rng, int(0.05 * m))),
        named("powers", lambda: powers(max(1, min(8, int(4 * args.scale))))),
        named("short_decimals", lambda: short_decimals(rng, int(0.2 * m))),
        named("integers_and_switches", lambda: integers_and_switches(rng, int(0.05 * m))),
        named("bench_draws", lambda: bench_draws(rng, int(0.15 * m))),
    ]
    return 1 if check(native, pure, families) else 0


if __name__ == "__main__":
    sys.exit(main())
