"""Every contender of a group timed alike: the same untimed warm-up, then ``gc.collect()``.

pytest-benchmark sizes a test's rounds from one calibration call (``rounds = max_time / that
call``).  A contender whose first call is cold (pydantic's first ``model_validate_json`` of a
process takes ~15x a warm one) gets a fraction of the rounds of the others, so a shorter window
of a noisy machine and a higher minimum.  ``measure`` warms every contender the same way first.
"""

import gc

WARM_CALLS = 200
"""Untimed calls every contender gets before its rounds (then ``gc.collect()``)."""


def warm_calls(benchmark) -> int:
    """The untimed calls a contender gets first: ``WARM_CALLS``, or none with benchmarking disabled
    (``--benchmark-disable``, the README's test command, or under xdist), where the fixture calls the
    function once, a smoke run, and nothing is timed for a warm-up to even out (it was a quarter of
    the suite's CPU time)."""
    return 0 if benchmark.disabled else WARM_CALLS


def measure(benchmark, fn, *args, **kwargs):
    """``benchmark(fn, *args, **kwargs)`` after ``warm_calls(benchmark)`` untimed calls and a collection."""
    calls = warm_calls(benchmark)
    for _ in range(calls):
        fn(*args, **kwargs)
    if calls:  # a smoke run times nothing for a collection to settle
        gc.collect()
    return benchmark(fn, *args, **kwargs)
