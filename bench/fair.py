"""Every contender of a group timed alike: the same untimed warm-up, then ``gc.collect()``.

pytest-benchmark sizes a test's rounds from one calibration call (``rounds = max_time / that
call``).  A contender whose first call is cold (pydantic's first ``model_validate_json`` of a
process takes ~15x a warm one) gets a fraction of the rounds of the others, so a shorter window
of a noisy machine and a higher minimum.  ``measure`` warms every contender the same way first.
"""

import gc

WARM_CALLS = 200
"""Untimed calls every contender gets before its rounds (then ``gc.collect()``)."""


def measure(benchmark, fn, *args, **kwargs):
    """``benchmark(fn, *args, **kwargs)`` after ``WARM_CALLS`` untimed calls and a collection.

    With benchmarking disabled (``--benchmark-disable``, the README's test command, or under
    xdist) nothing is timed and the fixture calls ``fn`` once, a smoke run: the warm-up has
    nothing to even out and is skipped (it was a quarter of the suite's CPU time).
    """
    if benchmark.disabled:
        return benchmark(fn, *args, **kwargs)
    for _ in range(WARM_CALLS):
        fn(*args, **kwargs)
    gc.collect()
    return benchmark(fn, *args, **kwargs)
