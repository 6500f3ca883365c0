"""``hmac_sha256_signing``: HMAC-SHA256 of exactly the bytes ``signing_bytes`` gives, on both twins.

The native twin shallow-copies a plain dict in C instead of going through ``signing._unsigned``;
these tests hold both twins to ``hmac.digest(secret, signing_bytes(body))`` (the ``core`` fixture
switches ``signing_bytes`` to the same twin) on well-formed and hostile bodies, with the same
refusals (class, message, JSON path) in the same order, and the body left untouched.
"""

import copy
import hmac
from collections.abc import Mapping
from types import MappingProxyType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ajpcore import signing_bytes
from ajpcore.errors import AjpError
from ajpcore.strategies import json_values

SECRET = b"signing-tag-secret"


def outcome(call):
    try:
        return "ok", call()
    except Exception as exc:  # the comparison is the point: any class, same on both sides
        return type(exc), str(exc), getattr(exc, "path", None)


def expected(body, secret=SECRET):
    return outcome(lambda: hmac.digest(secret, signing_bytes(body), "sha256"))


class LyingContains(dict):
    """Says it has no ``signature`` while it holds one."""

    def __contains__(self, key):
        return False


class OtherKeys(dict):
    """Iterates (and so copies) in reverse order."""

    def __iter__(self):
        return reversed(list(dict.keys(self)))

    def keys(self):
        return list(self.__iter__())


class Members(Mapping):
    def __init__(self, items):
        self._items = dict(items)

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)


class Exploding(Members):
    def __getitem__(self, key):
        raise RuntimeError(f"no reading {key!r}")


def _deep(n):
    v = {}
    for _ in range(n):
        v = {"a": v}
    return v


HOSTILE = [
    {},
    {"signature": "sha256:" + "0" * 64},
    {"signature": None, "a": 1},
    {"a": {"signature": "nested is signed"}, "signature": 7, "z": [{"signature": 1}]},
    {"\U0001f600": 1, "\ufb33": 2, "signature": "x", "b": -0.0, "c": 1e21},
    LyingContains(a=1, signature="kept: the mapping says it has none"),
    OtherKeys(b=1, a=2, signature="x"),
    MappingProxyType({"a": 1, "signature": "x"}),
    Members({"a": [1, 2], "signature": "x"}),
    Members({"a": 1}),
    Exploding({"a": 1}),
    {"a": float("nan"), "signature": "x"},
    {"a": "\ud800", "signature": "x"},
    {1: "non-str name", "signature": "x"},
    {"a": 2**64, "signature": "x"},
    {"a": object(), "signature": "x"},
    {"signature": "x", "a": _deep(600)},
    [1, 2],
    "not an object",
    None,
    b"{}",
]


@pytest.mark.parametrize("body", HOSTILE, ids=lambda b: type(b).__name__)
def test_tag_is_hmac_of_signing_bytes_or_the_same_refusal(core, body):
    before = copy.copy(body) if isinstance(body, dict) else None
    got = outcome(lambda: core.hmac_sha256_signing(body, SECRET))
    assert got == expected(body)
    assert outcome(lambda: core.hmac_sha256_signing(body, SECRET, chunk_size=7)) == got
    if before is not None:
        assert dict.items(body) == dict.items(before)  # never modified


@pytest.mark.parametrize("secret", [b"", "", None, 3.5, ["k"], "lone \ud800"])
def test_secret_refusals_are_those_of_hmac_sha256_canonical(twins, secret):
    for impl in twins:
        body = {"a": 1, "signature": "x"}
        assert outcome(lambda: impl.hmac_sha256_signing(body, secret)) == outcome(
            lambda: impl.hmac_sha256_canonical({"a": 1}, secret)
        )


def test_a_body_that_is_not_an_object_is_refused_before_the_secret(twins):
    for impl in twins:
        kind, message, path = outcome(lambda: impl.hmac_sha256_signing([1], 3.5))
        assert issubclass(kind, AjpError) and message.startswith("A signed body must be a JSON object") and path == "$"


def test_both_twins_agree_on_hostile_bodies(twins):
    native, pure = twins
    for body in HOSTILE:
        assert outcome(lambda: native.hmac_sha256_signing(body, SECRET)) == outcome(
            lambda: pure.hmac_sha256_signing(body, SECRET)
        )


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.dictionaries(st.sampled_from(["signature", "a", "b", "\u00e9", "\U0001f600", ""]), json_values(max_leaves=8)),
    key=st.binary(min_size=1, max_size=80),
    chunk=st.integers(1, 64),
)
def test_matches_signing_bytes_on_drawn_bodies(core, body, key, chunk):
    assert core.hmac_sha256_signing(body, key, chunk_size=chunk) == hmac.digest(key, signing_bytes(body), "sha256")
