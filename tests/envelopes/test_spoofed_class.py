"""An object that lies about its ``__class__`` gets the same typed refusal from both twins.

``isinstance`` believes a ``__class__`` property; the native core tests the real type
(``PyDict_Check`` and kin).  The pure twin used ``isinstance``, so such an object reached
``dict.__len__`` (and kin) and raised a bare ``TypeError`` where the native twin raises
``EncodeError`` (issue 20 §4).  Every core entry point that tests a kind is driven here with
a spoof of every kind; both twins must give the same error class and message.
"""

from __future__ import annotations

import pytest

from ajpcore import AjpError, EncodeError

KINDS = [dict, list, tuple, str, int, float, bool, bytes, bytearray, memoryview]


def spoof(kind):
    """An object ``isinstance`` takes for a ``kind``; its real type is ``Spoof``."""

    class Spoof:
        __class__ = property(lambda self: kind)  # type: ignore[assignment]

    Spoof.__qualname__ = "Spoof"
    assert isinstance(Spoof(), kind) and type(Spoof()) is not kind
    return Spoof()


CALLS = {
    "canonicalize": lambda m, s: m.canonicalize(s),
    "canonicalize in a list": lambda m, s: m.canonicalize([1, s]),
    "canonicalize as a member": lambda m, s: m.canonicalize({"a": {"b": s}}),
    "canonicalize as a key": lambda m, s: m.canonicalize({s: 1}),
    "canonicalize_into": lambda m, s: m.canonicalize_into({"a": s}, lambda chunk: None),
    "canonicalize_into chunk_size": lambda m, s: m.canonicalize_into({}, lambda chunk: None, chunk_size=s),
    "hmac_sha256_signature body": lambda m, s: m.hmac_sha256_signature(s, "secret"),
    "hmac_sha256_signature member": lambda m, s: m.hmac_sha256_signature({"a": s}, "secret"),
    "hmac_sha256_signature secret": lambda m, s: m.hmac_sha256_signature({}, s),
    "hmac_sha256_canonical": lambda m, s: m.hmac_sha256_canonical([s], "secret"),
    "hmac_sha256_canonical secret": lambda m, s: m.hmac_sha256_canonical({}, s),
    "HmacSigner secret": lambda m, s: m.HmacSigner(s).finalize(),
    "HmacSigner.update": lambda m, s: m.HmacSigner("secret").update(s),
    "HmacSigner.verify": lambda m, s: m.HmacSigner("secret").verify(s),
    "decode": lambda m, s: m.decode(s),
    "decode max_depth": lambda m, s: m.decode(b"[1]", max_depth=s),
    "ed25519_check_public_key": lambda m, s: m.ed25519_check_public_key(s),
    "ed25519_check_signature": lambda m, s: m.ed25519_check_signature(s),
    "rfc3339_micros": lambda m, s: m.rfc3339_micros(s),
    "clock_micros": lambda m, s: m.clock_micros(s),
}


def _outcome(impl, call, value):
    try:
        return "returned", call(impl, value)
    except Exception as exc:  # the class and message are what is compared
        return type(exc), str(exc)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
@pytest.mark.parametrize("name", sorted(CALLS))
def test_twins_agree_on_a_spoofed_class(twins, name, kind):
    native, pure = twins
    got = _outcome(pure, CALLS[name], spoof(kind))
    assert got == _outcome(native, CALLS[name], spoof(kind))
    if got[0] != "returned":
        # Never a bare TypeError out of a base type's method: one of the project's errors,
        # or the builtin the signature documents.
        assert issubclass(got[0], (AjpError, TypeError, ValueError)), got


@pytest.mark.parametrize("kind", [dict, list, tuple, str, int, float, bool], ids=lambda k: k.__name__)
def test_a_spoofed_value_is_an_unsupported_type(impl, kind):
    with pytest.raises(EncodeError, match=r"^Unsupported type `Spoof` - at `\$\.a\[0\]`$"):
        impl.canonicalize({"a": [spoof(kind)]})
    with pytest.raises(EncodeError, match=r"^Object key must be `str`, got `Spoof` - at `\$`$"):
        impl.canonicalize({spoof(str): 1})
    with pytest.raises(EncodeError, match="^A signed body must be a JSON object, got `Spoof`"):
        impl.hmac_sha256_signature(spoof(dict), "secret")
