"""decode:<fixture>: strict I-JSON decoding of the canonical bench fixtures against the usual parsers.

The text fixtures (``text-ascii``, ``text-latin1``, ``text-cjk``, ``text-emoji``) time
string building at each PEP 393 kind; ``numbers`` number reading; ``names-latin1``,
``names-cjk``, ``names-emoji`` non-ASCII member names; ``catalog-pretty`` (indented),
``records-wide`` (objects of 13-60 members), ``geojson``, ``mesh`` and ``int-array`` the shapes of
public benchmark documents (``data.SHAPE_FIXTURES``; each decoded as sent: ``data.wire``).

``ssrjson.loads`` (SIMD transcoding, picked at run time) is the fastest contender where its
wheel installs, and skips with the reason elsewhere (``conftest.ssrjson``); pysimdjson's
``simdjson.loads`` likewise where it is installed (``conftest.pysimdjson``; not a dependency).

``json.loads+dup-check`` is json with an ``object_pairs_hook`` that refuses
duplicate member names: the cheapest strictness a pure-Python user can add,
and the yardstick of the pure twin.
"""

import json

import msgspec
import orjson
import pytest

import data
from fair import measure
from twins import twin  # the native twin skips with its reason on a pure install


def _unique_pairs(pairs):
    d = dict(pairs)
    if len(d) != len(pairs):
        raise ValueError("duplicate member name")
    return d


def _json_loads_dup_check(doc):
    return json.loads(doc, object_pairs_hook=_unique_pairs)


CONTENDERS = {
    "ajpcore-c": lambda: twin("c").decode,
    "ajpcore-py": lambda: twin("py").decode,
    "orjson.loads": lambda: orjson.loads,
    "json.loads": lambda: json.loads,
    "json.loads+dup-check": lambda: _json_loads_dup_check,
    "msgspec.json.decode": lambda: msgspec.json.decode,
}


ALL_FIXTURES = data.FIXTURES + data.TEXT_FIXTURES + data.SHAPE_FIXTURES


@pytest.mark.parametrize("fixture", ALL_FIXTURES)
@pytest.mark.parametrize("contender", list(CONTENDERS))
def test_decode(benchmark, contender, fixture):
    _decode(benchmark, contender, CONTENDERS[contender](), fixture)


@pytest.mark.parametrize("fixture", ALL_FIXTURES)
def test_decode_ssrjson(benchmark, ssrjson, fixture):
    _decode(benchmark, "ssrjson.loads", ssrjson.loads, fixture)


@pytest.mark.parametrize("fixture", ALL_FIXTURES)
def test_decode_pysimdjson(benchmark, pysimdjson, fixture):
    _decode(benchmark, "simdjson.loads", pysimdjson.loads, fixture)


def _decode(benchmark, contender, decode, fixture):
    doc = data.wire(fixture)
    benchmark.group = f"decode:{fixture}"
    benchmark.name = contender
    if fixture == "mixed8m":
        value = benchmark.pedantic(decode, args=(doc,), rounds=3, iterations=1)
    else:
        value = measure(benchmark, decode, doc)
    assert value == orjson.loads(doc)
