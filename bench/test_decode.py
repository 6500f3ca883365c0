"""decode:<fixture>: strict I-JSON decoding of the canonical bench fixtures against the usual parsers.

The text fixtures (``text-ascii``, ``text-latin1``, ``text-cjk``, ``text-emoji``) time
string building at each PEP 393 kind.

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


@pytest.mark.parametrize("fixture", data.FIXTURES + data.TEXT_FIXTURES)
@pytest.mark.parametrize("contender", list(CONTENDERS))
def test_decode(benchmark, contender, fixture):
    decode = CONTENDERS[contender]()
    doc = data.encoded(fixture)
    benchmark.group = f"decode:{fixture}"
    benchmark.name = contender
    if fixture == "mixed8m":
        value = benchmark.pedantic(decode, args=(doc,), rounds=3, iterations=1)
    else:
        value = measure(benchmark, decode, doc)
    assert value == orjson.loads(doc)
