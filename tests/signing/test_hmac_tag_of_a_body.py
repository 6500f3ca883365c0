"""``sign``/``verify`` with a secret MAC exactly the bytes ``signing_bytes`` gives, on both twins.

``sign`` and ``verify`` have an inlined hot path for plain dicts and a general path for every
other mapping; these tests hold both to ``hmac.digest(secret, signing_bytes(body))`` (the
``core`` fixture switches the core under ``signing_bytes`` too) on well-formed and hostile
bodies, with the same refusals (class, message, JSON path), and the body left untouched.
"""

import copy
import hmac
from collections.abc import Mapping
from types import MappingProxyType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ajpcore import sign, signing_bytes, verify
from ajpcore.errors import BadSignature
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


def tag_of_sign(body, secret=SECRET):
    def call():
        text = sign(body, secret=secret)
        assert text.startswith("sha256:")
        return bytes.fromhex(text[len("sha256:"):])

    return outcome(call)


def _signed(body, text):
    out = dict(body)
    out["signature"] = text
    return out


@pytest.mark.parametrize("body", HOSTILE, ids=lambda b: type(b).__name__)
def test_sign_is_hmac_of_signing_bytes_or_the_same_refusal(core, body):
    before = copy.copy(body) if isinstance(body, dict) else None
    assert tag_of_sign(body) == expected(body)
    if before is not None:
        assert dict.items(body) == dict.items(before)  # never modified


@pytest.mark.parametrize("body", [b for b in HOSTILE if type(b) is dict], ids=lambda b: type(b).__name__)
def test_verify_accepts_exactly_the_tag_of_signing_bytes(core, body):
    kind, *rest = expected(body)
    if kind != "ok":
        return  # no canonical form: nothing to sign (test_sign_... checks the refusal)
    good = "sha256:" + rest[0].hex()
    assert verify(_signed(body, good), secret=SECRET) is None
    bad = "sha256:" + bytes(32).hex() if good != "sha256:" + bytes(32).hex() else "sha256:" + "1" * 64
    with pytest.raises(BadSignature):
        verify(_signed(body, bad), secret=SECRET)


def test_both_twins_agree_on_hostile_bodies(twins, monkeypatch):
    import ajpcore._core as _core

    outcomes = []
    for impl in twins:
        monkeypatch.setattr(_core, "impl", impl)
        outcomes.append([tag_of_sign(body) for body in HOSTILE])
    assert outcomes[0] == outcomes[1]


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.dictionaries(st.sampled_from(["signature", "a", "b", "\u00e9", "\U0001f600", ""]), json_values(max_leaves=8)),
    key=st.binary(min_size=1, max_size=80),
)
def test_sign_matches_signing_bytes_on_drawn_bodies(core, body, key):
    assert sign(body, secret=key) == "sha256:" + hmac.digest(key, signing_bytes(body), "sha256").hex()
