"""Canonical JSON: ajpcore's twins against the encoders a user would otherwise reach for.

Groups ``canonicalize:<fixture>`` (offer, result64k, mixed8m) and
``canonicalize_into:mixed8m``.  ``orjson`` and stdlib ``json`` with sorted keys
are fast but not RFC 8785 (see bench/README.md); ``rfc8785`` is the exact peer.
"""

import json

import orjson
import pytest
import rfc8785

import data
from twins import twin  # the native twin skips with its reason on a pure install

# On the big fixture every contender gets a fixed number of rounds: the slow ones (about
# 0.5-1.5 s a round) only 3, so a benchmark run stays short; the fast ones 15.
SLOW = {"ajpcore-py", "rfc8785.dumps", "json.dumps(sort_keys)"}


def rounds(fixture, contender):
    if fixture != "mixed8m":
        return None  # pytest-benchmark calibrates
    return 3 if contender in SLOW else 15

CONTENDERS = {
    "ajpcore-c": lambda: twin("c").canonicalize,
    "ajpcore-py": lambda: twin("py").canonicalize,
    "rfc8785.dumps": lambda: rfc8785.dumps,
    "orjson.dumps(OPT_SORT_KEYS)": lambda: lambda v: orjson.dumps(v, option=orjson.OPT_SORT_KEYS),
    "json.dumps(sort_keys)": lambda: lambda v: json.dumps(
        v, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode(),
}


def run(benchmark, n_rounds, fn, *args):
    if n_rounds is None:
        return benchmark(fn, *args)
    return benchmark.pedantic(fn, args=args, rounds=n_rounds, iterations=1, warmup_rounds=0)


@pytest.mark.parametrize("contender", list(CONTENDERS))
@pytest.mark.parametrize("fixture", data.FIXTURES)
def test_canonicalize(benchmark, fixture, contender):
    benchmark.group = f"canonicalize:{fixture}"
    benchmark.name = contender
    value = data.value(fixture)
    out = run(benchmark, rounds(fixture, contender), CONTENDERS[contender](), value)
    if contender.startswith(("ajpcore", "rfc8785")):
        assert out == data.encoded(fixture)
    else:
        assert orjson.loads(out) == value  # same value, not necessarily the same bytes


class Counter:
    """A ``write`` sink that keeps nothing: what streaming into a hash or socket costs at least."""

    def __init__(self):
        self.n = 0

    def __call__(self, chunk):
        self.n += len(chunk)


@pytest.mark.parametrize("name", ["c", "py"], ids=["ajpcore-c", "ajpcore-py"])
def test_canonicalize_into(benchmark, name):
    benchmark.group = "canonicalize_into:mixed8m"
    benchmark.name = f"ajpcore-{name}"
    canonicalize_into = twin(name).canonicalize_into
    value = data.value("mixed8m")
    sink = Counter()
    total = run(benchmark, rounds("mixed8m", benchmark.name), canonicalize_into, value, sink)
    assert total == len(data.encoded("mixed8m"))
