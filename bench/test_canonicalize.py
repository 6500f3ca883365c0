"""Canonical JSON: ajpcore's twins against the encoders a user would otherwise reach for.

Groups ``canonicalize:<fixture>`` (offer, result64k, mixed8m, numbers, names-latin1|cjk|emoji, and the text fixtures
text-ascii, text-latin1, text-cjk, text-emoji) and ``canonicalize_into:mixed8m``.

The text fixtures are canonicalized as FRESH strings: every round gets a value decoded
anew from the fixture's bytes (untimed setup).  CPython caches a str's UTF-8 form inside
the str the first time ``PyUnicode_AsUTF8AndSize`` asks for it, and orjson reuses that
copy, so a value serialized once before would time a memcpy for orjson and a real
encoding for everyone else.  Strings that arrive from the wire have no such cache.  ``orjson`` and stdlib ``json`` with sorted keys
are fast but not RFC 8785 (see bench/README.md); ``rfc8785`` is the exact peer.
"""

import json

import orjson
import pytest
import rfc8785

import data
from fair import measure
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
        return measure(benchmark, fn, *args)
    return benchmark.pedantic(fn, args=args, rounds=n_rounds, iterations=1, warmup_rounds=0)


# Rounds per contender on a text fixture (setup per round rules out calibration): the
# slow pure-Python ones take milliseconds a round.
TEXT_ROUNDS = {"ajpcore-py": 20, "rfc8785.dumps": 20, "json.dumps(sort_keys)": 50}


def fresh(fixture):
    """Setup for one round: the fixture decoded anew, so no str holds a cached UTF-8 copy."""
    return (orjson.loads(data.encoded(fixture)),), {}


FRESH_FIXTURES = data.TEXT_FIXTURES + data.SHAPE_FIXTURES
"""Canonicalized as fresh strings: the text fixtures, numbers and the non-ASCII member names."""


@pytest.mark.parametrize("contender", list(CONTENDERS))
@pytest.mark.parametrize("fixture", FRESH_FIXTURES)
def test_canonicalize_text(benchmark, fixture, contender):
    _canonicalize_fresh(benchmark, fixture, contender, CONTENDERS[contender]())


@pytest.mark.parametrize("fixture", FRESH_FIXTURES)
def test_canonicalize_ssrjson_floor(benchmark, ssrjson, fixture):
    """ssrjson's unsorted ``dumps_to_bytes``: neither sorted nor RFC 8785, a floor to look at (issue 23)."""
    _canonicalize_fresh(benchmark, fixture, "ssrjson.dumps (unsorted floor)", ssrjson.dumps_to_bytes)


def _canonicalize_fresh(benchmark, fixture, contender, fn):
    benchmark.group = f"canonicalize:{fixture}"
    benchmark.name = contender
    out = benchmark.pedantic(
        fn, setup=lambda: fresh(fixture), rounds=TEXT_ROUNDS.get(contender, 200), iterations=1, warmup_rounds=1
    )
    if contender.startswith(("ajpcore", "rfc8785")):
        assert out == data.encoded(fixture)
    else:
        assert orjson.loads(out) == data.value(fixture)


def test_fresh_strings_have_no_utf8_cache():
    # The premise of the text groups: orjson.dumps fills the cache (a str grows), a decoded str starts without.
    import sys

    (value,), _ = fresh("text-cjk")
    text = value["paragraphs"][0]["text"]
    before = sys.getsizeof(text)
    orjson.dumps(text)
    assert sys.getsizeof(text) > before


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
