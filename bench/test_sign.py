"""HMAC-SHA256 sign and verify of message bodies: ajpcore against the pipelines users write today.

Groups ``sign:<fixture>`` and ``verify:<fixture>``.  The peers hash a serialization of the
body with ``hmac.digest``: ``orjson.dumps(OPT_SORT_KEYS)`` (fast, but not RFC 8785: it
differs on ``5.0``, ``1e-7``, ``-0.0``, non-BMP keys...) and ``rfc8785.dumps`` (exact, pure
Python).  The peers get the body with its ``signature`` already removed (less work than
ajpcore does).  ``sign:mixed8m`` also times ``canonicalize`` alone: the MAC should ride along
the stream almost for free.
"""

import hmac

import orjson
import pytest
import rfc8785

import data
from fair import measure
from ajpcore import signing

SLOW = {"mixed8m"}


def run(benchmark, fixture, func):
    """Time ``func``: few rounds on the 8 MB fixture, pytest-benchmark's calibration otherwise."""
    if fixture in SLOW:
        return benchmark.pedantic(func, rounds=3, iterations=1, warmup_rounds=0)
    return measure(benchmark, func)


def twin_name(module):
    """``ajpcore-c`` or ``ajpcore-py``: the contender name of a core twin module."""
    return "ajpcore-" + module.__name__.rsplit("_", 1)[1]


def unsigned(fixture):
    return {k: v for k, v in data.value(fixture).items() if k != "signature"}


def signed_body(fixture):
    body = dict(data.value(fixture))
    body["signature"] = signing.sign(body, secret=data.SECRET)
    return body


# -- sign ------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", data.FIXTURES)
def test_sign_ajpcore(benchmark, core_twin, fixture):
    benchmark.group = f"sign:{fixture}"
    benchmark.name = twin_name(core_twin)
    body = data.value(fixture)
    signature = run(benchmark, fixture, lambda: signing.sign(body, secret=data.SECRET))
    assert signature == "sha256:" + hmac.digest(data.SECRET, rfc8785.dumps(unsigned(fixture)), "sha256").hex()


@pytest.mark.parametrize("fixture", data.FIXTURES)
def test_sign_orjson_hmac(benchmark, fixture):
    benchmark.group = f"sign:{fixture}"
    benchmark.name = "orjson+hmac"
    body = unsigned(fixture)
    run(benchmark, fixture, lambda: hmac.digest(data.SECRET, orjson.dumps(body, option=orjson.OPT_SORT_KEYS), "sha256"))


@pytest.mark.parametrize("fixture", data.FIXTURES)
def test_sign_rfc8785_hmac(benchmark, fixture):
    benchmark.group = f"sign:{fixture}"
    benchmark.name = "rfc8785+hmac"
    body = unsigned(fixture)
    run(benchmark, fixture, lambda: hmac.digest(data.SECRET, rfc8785.dumps(body), "sha256"))


def test_sign_canonicalize_only(benchmark, core_twin):
    """Reference: canonical encoding alone, no MAC (the floor for streaming HMAC signing)."""
    benchmark.group = "sign:mixed8m"
    benchmark.name = twin_name(core_twin) + " canonicalize only"
    body = unsigned("mixed8m")
    run(benchmark, "mixed8m", lambda: core_twin.canonicalize(body))


# -- verify ----------------------------------------------------------------------


@pytest.mark.parametrize("fixture", data.FIXTURES)
def test_verify_ajpcore(benchmark, core_twin, fixture):
    benchmark.group = f"verify:{fixture}"
    benchmark.name = twin_name(core_twin)
    body = signed_body(fixture)
    run(benchmark, fixture, lambda: signing.verify(body, secret=data.SECRET))


def verify_with(serialize, body):
    """What a receiver writes today: drop the signature, serialize, HMAC, compare in constant time."""
    expected = body["signature"]

    def check():
        rest = dict(body)
        del rest["signature"]
        tag = "sha256:" + hmac.digest(data.SECRET, serialize(rest), "sha256").hex()
        return hmac.compare_digest(tag, expected)

    return check


@pytest.mark.parametrize("fixture", data.FIXTURES)
def test_verify_orjson_hmac(benchmark, fixture):
    benchmark.group = f"verify:{fixture}"
    benchmark.name = "orjson+hmac"
    body = dict(unsigned(fixture))
    body["signature"] = "sha256:" + hmac.digest(data.SECRET, orjson.dumps(body, option=orjson.OPT_SORT_KEYS), "sha256").hex()
    check = verify_with(lambda v: orjson.dumps(v, option=orjson.OPT_SORT_KEYS), body)
    assert run(benchmark, fixture, check) is True


@pytest.mark.parametrize("fixture", data.FIXTURES)
def test_verify_rfc8785_hmac(benchmark, fixture):
    benchmark.group = f"verify:{fixture}"
    benchmark.name = "rfc8785+hmac"
    check = verify_with(rfc8785.dumps, signed_body(fixture))
    assert run(benchmark, fixture, check) is True
