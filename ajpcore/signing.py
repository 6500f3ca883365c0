"""Signatures over AJP message bodies: ``sha256:`` (HMAC-SHA256) and ``ed25519:``.

A body is signed over ``signing_bytes(body)``: the RFC 8785 canonical JSON of the
body without its top-level ``"signature"`` member.  The signature string is
``"sha256:" + 64 lowercase hex`` (HMAC-SHA256 keyed with the UTF-8 secret) or
``"ed25519:" + 88 characters of padded standard base64`` (the 64-byte Ed25519
signature).  HMAC signing streams the canonical bytes straight into the MAC, so
a body of any size costs O(chunk) extra memory; nothing here mutates the body.

A signature that matches only the pre-0.3 AJP form (``JSON.stringify(rest,
Object.keys(rest).sort())``, which signs nested objects only through keys that
happen to share a top-level name) is reported as ``LegacySignature`` and never
accepted.
"""

from __future__ import annotations

import base64
import re
from binascii import a2b_base64 as _a2b_base64
from binascii import b2a_base64 as _b2a_base64
from hmac import compare_digest
from collections.abc import Mapping
from typing import Any, Optional, Union

from . import _core
from .errors import (
    BadSignature,
    EncodeError,
    KeyFormatError,
    KeyUsageError,
    LegacySignature,
    MalformedSignature,
    UnsupportedScheme,
)

from .keys import Ed25519PrivateKey, Ed25519PublicKey

__all__ = ["SIGN_CHUNK_SIZE", "parse_signature", "signing_bytes", "sign", "verify"]

Secret = Union[str, bytes]
"""An HMAC secret: bytes, or text signed as its UTF-8 bytes (never empty)."""

SIGN_CHUNK_SIZE = 16384
"""Size of the canonical-JSON chunks streamed into the HMAC (the extra memory of signing)."""

# The strict forms, as patterns: the definition ``_strict_signature_bytes`` reads without running them
# (its tests hold it to these).
_SHA256_SIGNATURE = re.compile(r"sha256:([0-9a-f]{64})")
# 64 bytes are 86 base64 digits carrying 516 bits: the last digit's 4 low bits are
# padding and must be zero (RFC 4648 §3.5, canonical encoding), so it is one of A Q g w.
_ED25519_SIGNATURE = re.compile(r"ed25519:([A-Za-z0-9+/]{85}[AQgw]==)")
_ANY_SCHEME = re.compile(r"([a-z][a-z0-9_-]{0,31}):.*", re.DOTALL)

_MISSING = object()
_BACKENDS = ("cryptography", "pynacl")


def _unsigned(body: object) -> dict[str, Any]:
    """``body`` without its top-level ``signature``: the body itself, or a shallow copy.

    Any ``Mapping`` is a JSON object (a ``TypedDict``, a ``MappingProxyType``...): one that is
    not a dict is copied into one.
    """
    if isinstance(body, dict):
        if "signature" not in body:
            return body
        rest = dict(body)
    elif isinstance(body, Mapping):
        rest = dict(body)
    else:
        raise EncodeError(f"A signed body must be a JSON object, got `{type(body).__qualname__}`", "$")
    rest.pop("signature", None)
    return rest


def _one_key(secret: Any, key: Any, key_name: str) -> None:
    if (secret is None) == (key is None):
        given = "both" if secret is not None else "neither"
        raise KeyUsageError(f"Give exactly one of `secret` (HMAC-SHA256) or `{key_name}` (Ed25519), got {given}")


def _hmac_tag(value: dict[str, Any], secret: Any) -> bytes:
    """HMAC-SHA256 of the canonical bytes of ``value``, streamed chunk by chunk into the MAC."""
    if isinstance(secret, (str, bytes, bytearray, memoryview)) and not secret:
        raise KeyFormatError("HMAC secret is empty")
    # A secret of another type: KeyUsageError from the core.
    return _core.impl.hmac_sha256_canonical(value, secret, chunk_size=SIGN_CHUNK_SIZE)


def _private_key(key: object) -> Ed25519PrivateKey:
    if isinstance(key, Ed25519PrivateKey):
        return key
    if isinstance(key, str):
        return Ed25519PrivateKey.from_string(key)
    raise KeyUsageError(f"`private_key` must be an `Ed25519PrivateKey` or its text form, got `{type(key).__qualname__}`")


def _public_key(key: object) -> Ed25519PublicKey:
    if isinstance(key, Ed25519PublicKey):
        return key
    if isinstance(key, str):
        return Ed25519PublicKey.from_string(key)
    raise KeyUsageError(f"`public_key` must be an `Ed25519PublicKey` or its text form, got `{type(key).__qualname__}`")


def signing_bytes(body: Mapping[str, Any]) -> bytes:
    """The bytes a signature covers: RFC 8785 canonical JSON of ``body`` minus its top-level ``signature``.

    ``body`` (a dict or any other ``Mapping``) is not modified.  Raises EncodeError
    when ``body`` is not a mapping or has no canonical JSON form.
    """
    return _core.impl.canonicalize(_unsigned(body))


def sign(
    body: Mapping[str, Any],
    *,
    secret: Optional[Secret] = None,
    private_key: Union[Ed25519PrivateKey, str, None] = None,
) -> str:
    """The signature string of ``body`` (its ``signature`` member, if any, is ignored).

    With ``secret`` (bytes or str, UTF-8; not empty): ``"sha256:" + 64 lowercase
    hex`` of HMAC-SHA256 over ``signing_bytes(body)``, streamed.  With
    ``private_key`` (an ``Ed25519PrivateKey`` or its base64 PKCS#8 text):
    ``"ed25519:" + 88-character padded base64`` of the Ed25519 signature.
    The body is never modified; set ``body["signature"]`` yourself.

    Raises KeyUsageError unless exactly one of ``secret``/``private_key`` is
    given or when it has another type, KeyFormatError for an empty secret or a
    key text that does not parse, EncodeError when ``body`` is not a mapping or has
    no canonical JSON form.
    """
    if private_key is None and type(body) is dict and (type(secret) is str or type(secret) is bytes) and secret:
        # The hot path (a non-empty secret, a plain dict): one core call, which drops `signature` itself.
        text: str = _core.impl.hmac_sha256_signature(body, secret, chunk_size=SIGN_CHUNK_SIZE)
        return text
    _one_key(secret, private_key, "private_key")
    rest = _unsigned(body)
    if secret is not None:
        return "sha256:" + _hmac_tag(rest, secret).hex()
    key = _private_key(private_key)
    signature = key.sign(_core.impl.canonicalize(rest))
    return "ed25519:" + base64.b64encode(signature).decode("ascii")


def _strict_signature_bytes(signature: str) -> Optional[bytes]:
    """The raw bytes of ``signature`` when it is exactly ``sha256:`` + 64 lowercase hex digits (32 bytes) or
    ``ed25519:`` + the canonical padded standard base64 of 64 bytes (64 bytes); else None.

    Decoding and re-encoding is the strict parse: ``bytes.fromhex`` also reads upper case and
    whitespace, ``a2b_base64`` skips characters outside its alphabet and reads non-zero pad bits,
    but only the one canonical spelling of the bytes encodes back to the text it was read from
    (exactly the texts ``_SHA256_SIGNATURE`` and ``_ED25519_SIGNATURE`` match in full, without running
    a regular expression: about a tenth of the cost).
    """
    if type(signature) is not str:  # a subclass is read as the str it stores (its methods may say otherwise)
        signature = str.__str__(signature)
    n = len(signature)
    try:
        if n == 71 and signature.startswith("sha256:"):
            text = signature[7:]
            raw = bytes.fromhex(text)
            return raw if raw.hex() == text else None
        if n == 96 and signature.startswith("ed25519:"):
            text = signature[8:]
            raw = _a2b_base64(text)
            return raw if len(raw) == 64 and _b2a_base64(raw, newline=False) == text.encode("ascii") else None
    except ValueError:  # not hex / not base64 / not ASCII (binascii.Error is a ValueError)
        return None
    return None


def parse_signature(signature: object) -> tuple[str, bytes]:
    """Split a signature string into ``(scheme, raw bytes)``: ``("sha256", 32 bytes)`` or ``("ed25519", 64 bytes)``.

    Strict: exactly ``sha256:`` + 64 lowercase hex digits, or ``ed25519:`` + 88
    characters of padded standard base64 with zero pad bits; no whitespace, no
    other spelling.  Raises MalformedSignature for anything else with a known
    or no scheme, UnsupportedScheme for a well-formed unknown scheme
    (``rsa:...``).
    """
    if signature is _MISSING:
        raise MalformedSignature("The body has no `signature`")
    if not isinstance(signature, str):
        raise MalformedSignature(f"`signature` must be a string, got `{type(signature).__qualname__}`")
    raw = _strict_signature_bytes(signature)
    if raw is not None:
        return ("sha256" if len(raw) == 32 else "ed25519"), raw
    if signature.startswith("sha256:"):
        raise MalformedSignature("A `sha256` signature is `sha256:` and exactly 64 lowercase hex digits")
    if signature.startswith("ed25519:"):
        raise MalformedSignature(
            "An `ed25519` signature is `ed25519:` and exactly 88 characters of padded standard"
            " base64 of 64 bytes (zero pad bits, no whitespace)"
        )
    m = _ANY_SCHEME.fullmatch(signature)
    if m is not None:
        raise UnsupportedScheme(f"Unknown signature scheme `{m.group(1)}` (ajpcore knows `sha256` and `ed25519`)")
    raise MalformedSignature("A signature is `sha256:<64 hex digits>` or `ed25519:<88 base64 characters>`")


def _legacy_form(rest: dict[str, Any]) -> dict[str, Any]:
    """What the pre-0.3 AJP signer serialized: ``JSON.stringify(rest, Object.keys(rest).sort())``.

    An array replacer is a property allow-list applied to every object at every
    depth (ECMA-262 SerializeJSONObject uses it as the key list K and reads each
    key with [[Get]]), so nested objects keep only members named like a top-level
    member; arrays keep every element.  Its key order is the sorted list, i.e.
    UTF-16 code-unit order (Array.prototype.sort without a comparator), which is
    RFC 8785's order, and for JSON values JSON.stringify writes strings and
    finite numbers exactly as RFC 8785 does: so the legacy bytes are the
    canonical JSON of this filtered copy.

    ``__proto__``: JSON.parse and object rest (``{signature, ...rest}``) create
    it as an own data property, so it can be in K.  [[Get]] then finds it on
    every nested object without an own ``__proto__`` through the prototype
    chain: the ``Object.prototype.__proto__`` accessor returns
    ``Object.prototype``, which is serialized with K in turn; on it every
    member of K is a function (omitted) except ``__proto__``, whose getter gives
    ``null``.  So each such object gains ``"__proto__":{"__proto__":null}``
    (measured against node 20, ``tests/signing/test_sign_and_verify.py``).  Every other
    inherited ``Object.prototype`` member is a function, which JSON.stringify
    omits.

    Built with an explicit stack (never recursion), depth bounded by MAX_DEPTH
    (EncodeError beyond it, the added ``__proto__`` levels included).
    """
    allowed = frozenset(rest)
    proto = "__proto__" in allowed
    root: dict[str, Any] = {}
    stack: list[tuple[Any, Any, int]] = [(rest, root, 1)]
    limit = _core.impl.MAX_DEPTH
    while stack:
        source, target, depth = stack.pop()
        if depth > limit:
            raise EncodeError(f"Nesting deeper than {limit}", "$")
        if isinstance(source, dict):
            for k in source:
                if k in allowed:
                    target[k] = _legacy_child(source[k], stack, depth)
            if proto and "__proto__" not in source:
                if depth + 1 > limit:
                    raise EncodeError(f"Nesting deeper than {limit}", "$")
                target["__proto__"] = {"__proto__": None}
        else:
            for item in source:
                target.append(_legacy_child(item, stack, depth))
    return root


def _legacy_child(value: Any, stack: list[tuple[Any, Any, int]], depth: int) -> Any:
    if isinstance(value, dict):
        copy: Any = {}
    elif isinstance(value, (list, tuple)):
        copy = []
    else:
        return value
    stack.append((value, copy, depth + 1))
    return copy


LEGACY_CHECK_MAX_VALUES = 512
"""The most values (members and items, at any depth) a body may hold for a failed signature to be
checked against the pre-0.3 form as well.  The legacy form is rebuilt in Python: up to 512 values
that costs about one Ed25519 verification (~0.1 ms); an unbounded body made each refusal rebuild it
(1 MB of nested arrays: 0.7 s, 50x the signature check it explains)."""


def _holds_at_most(rest: dict[str, Any], limit: int) -> bool:
    """True when ``rest`` holds at most ``limit`` values at any depth; the count stops past ``limit``,
    so deciding costs at most ``limit`` steps whatever the body."""
    budget = limit
    stack: list[Any] = [rest]
    while stack:
        node = stack.pop()
        budget -= len(node)
        if budget < 0:
            return False
        for value in node.values() if isinstance(node, dict) else node:
            if isinstance(value, (dict, list, tuple)):
                stack.append(value)
    return True


def _legacy_bytes(rest: dict[str, Any]) -> Optional[bytes]:
    """The canonical bytes of ``_legacy_form(rest)``, or None when the legacy check is not made.

    It is not made for a body of more than ``LEGACY_CHECK_MAX_VALUES`` values (so the
    check costs no more than the signature check it explains), nor when the legacy form
    nests deeper than canonical JSON allows (only the ``__proto__`` members it adds can
    make it deeper than a body that canonicalized).  Such a signature is then reported as
    ``BadSignature``: refused all the same, only the label differs.
    """
    if not _holds_at_most(rest, LEGACY_CHECK_MAX_VALUES):
        return None
    try:
        return _core.impl.canonicalize(_legacy_form(rest))
    except EncodeError:
        return None


def _hmac_matches(body: object, secret: object) -> bool:
    """The hot path of an HMAC check: True when ``body`` is a plain dict whose ``signature``
    is exactly the ``sha256:`` signature of the rest of it under ``secret`` (non-empty str or bytes).

    False decides nothing: ``verify``'s full check then decides and explains (scheme
    rules, legacy form, errors).  Matching the whole text against the one spelling the
    tag has (``"sha256:"`` + 64 lowercase hex) is the strict parse and the compare at
    once (``hmac_sha256_verified_tag``, which a receiver calls itself to keep the tag).
    """
    return _core.impl.hmac_sha256_verified_tag(body, secret, SIGN_CHUNK_SIZE) is not None


def _ed25519_verified(body: dict[str, Any], public_key: Ed25519PublicKey, backend: Optional[str]) -> Optional[bytes]:
    """The hot path of an Ed25519 check of a plain dict: the signature's 64 raw bytes when ``body["signature"]``
    is a strict ``ed25519:`` signature of the rest of ``body`` under ``public_key`` (an ``Ed25519PublicKey``)
    through ``backend`` (None or a known name).

    None decides nothing: ``verify``'s full check then decides and explains (malformed, scheme,
    legacy form).  What this accepts ``verify`` accepts: the same strict parse, the same signing
    bytes, the same key check; an ``EncodeError`` is raised as ``verify`` raises it.
    """
    signature = body.get("signature")
    if type(signature) is not str:
        return None
    raw = _strict_signature_bytes(signature)
    if raw is None or len(raw) != 64:
        return None
    rest = dict(body)
    del rest["signature"]
    try:
        public_key.verify(raw, _core.impl.canonicalize(rest), backend=backend)
    except BadSignature:
        return None
    return raw


_LEGACY_MESSAGE = (
    "The signature matches only the pre-0.3 AJP signing form (JSON.stringify with a top-level key"
    " allow-list, which leaves nested fields unsigned) and is refused: upgrade your sender to"
    " ajp-protocol 0.3 or later, which signs the RFC 8785 canonical JSON of the whole body"
)


def verify(
    body: Mapping[str, Any],
    *,
    secret: Optional[Secret] = None,
    public_key: Union[Ed25519PublicKey, str, None] = None,
    backend: Optional[str] = None,
) -> None:
    """Check ``body["signature"]`` against the rest of ``body``; returns None when it is valid.

    With ``secret`` (bytes or str, UTF-8; not empty) the signature must be
    ``sha256:``; with ``public_key`` (an ``Ed25519PublicKey`` or a text form
    ``Ed25519PublicKey.from_string`` reads) it must be ``ed25519:``, checked
    under the strict Ed25519 policy through ``backend`` (None: libsodium when
    PyNaCl is installed, see ``keys.DEFAULT_BACKEND``; "pynacl"; "cryptography":
    same verdict).  The body is never modified.

    Raises MalformedSignature (missing, not a string, not exactly the strict
    format), UnsupportedScheme (the scheme does not fit the key given, or is
    unknown), LegacySignature (valid only under the pre-0.3 AJP form; never
    accepted), BadSignature (anything else that does not verify);
    KeyUsageError unless exactly one of ``secret``/``public_key`` is given, for
    a key of another type or an unknown ``backend``; KeyFormatError (WeakKey)
    for an empty secret or a public key text that does not parse (or that the
    strict policy refuses); EncodeError when ``body`` is not a mapping or has no
    canonical JSON form.
    """
    if public_key is None:
        if backend is None and _hmac_matches(body, secret):
            return
    elif (
        secret is None
        and type(body) is dict
        and type(public_key) is Ed25519PublicKey
        and (backend is None or backend in _BACKENDS)
        and _ed25519_verified(body, public_key, backend) is not None
    ):
        # The hot path of an Ed25519 check; anything it does not accept is decided (and explained) below.
        return
    _one_key(secret, public_key, "public_key")
    if backend is not None and backend not in _BACKENDS:
        raise KeyUsageError(f"unknown Ed25519 backend `{backend}` (expected `cryptography` or `pynacl`)")
    if not isinstance(body, Mapping):
        raise EncodeError(f"A signed body must be a JSON object, got `{type(body).__qualname__}`", "$")
    scheme, raw = parse_signature(body.get("signature", _MISSING))
    rest = _unsigned(body)
    if secret is not None:
        if scheme != "sha256":
            raise UnsupportedScheme(f"An `{scheme}` signature needs a public key; a secret checks only `sha256` signatures")
        if compare_digest(_hmac_tag(rest, secret), raw):
            return
        # Only after the real check failed: is this a sender still on the pre-0.3 form?
        legacy = _legacy_bytes(rest)
        if legacy is not None:
            mac = _core.impl.HmacSigner(secret)
            mac.update(legacy)
            if compare_digest(mac.finalize(), raw):
                raise LegacySignature(_LEGACY_MESSAGE)
        raise BadSignature("The `sha256` signature does not match the body")
    if scheme != "ed25519":
        raise UnsupportedScheme(f"A `{scheme}` signature needs a shared secret; a public key checks only `ed25519` signatures")
    key = _public_key(public_key)
    impl = _core.impl
    try:
        key.verify(raw, impl.canonicalize(rest), backend=backend)
        return
    except BadSignature as exc:
        failure = exc
    legacy = _legacy_bytes(rest)
    if legacy is None:
        raise failure
    try:
        key.verify(raw, legacy, backend=backend)
    except BadSignature:
        raise failure from None
    raise LegacySignature(_LEGACY_MESSAGE)
