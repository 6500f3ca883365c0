"""The JWS pieces of an Agent Card signature (RFC 7515 flattened form, detached payload).

Written here rather than taken from a JOSE library: PyJWT (measured through
a2a-python) reads the protected header with ``json.loads``, so duplicate names keep the
last one and lone surrogates pass; jwcrypto and joserfc would need every rule below
re-checked around them (docs/a2a.md says more).  The rules below are ajpcore's strict ones.  All cryptography is pyca/cryptography (OpenSSL), and Ed25519
goes through ``ajpcore.keys`` (strict policy, libsodium or OpenSSL).

- base64url (RFC 7515 §2): the URL-safe alphabet, no padding, zero pad bits; one
  spelling per byte string.
- protected header: canonical base64url of UTF-8 JSON, read with ajpcore's strict
  decoder (I-JSON, duplicate names refused), a JSON object with string ``alg`` and
  non-empty string ``kid``; ``typ`` (when present) ``JOSE``; ``jku`` a string (``null``, which
  a2a-python writes when no URL is given, counts as absent); ``crit``
  refused unless it is exactly ``["b64"]`` with ``b64: true`` (RFC 7797: only the
  ordinary, encoded payload); ``b64`` anything but ``true`` refused.
- algorithms: ``EdDSA`` (Ed25519), ``ES256`` (P-256, SHA-256, raw 64-byte ``r || s``
  with 1 <= r, s < n; both S halves accepted, as RFC 7518 does, since a card signature
  is not an identifier; ajpcore writes low S), ``RS256`` and ``PS256`` (RSA of 2048 to
  16384 bits; PSS with MGF1-SHA256 and a 32-byte salt, RFC 7518 §3.5).  ``none``,
  every ``HS*`` and any other name are ``UnsupportedAlgorithm``.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Dict, Tuple, Union

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from .. import _core
from ..errors import BadSignature, DecodeError, KeyUsageError, MalformedJws, UnsupportedAlgorithm
from ..keys import Ed25519PrivateKey, Ed25519PublicKey

__all__ = [
    "ALGORITHMS",
    "KEY_TYPES",
    "MIN_RSA_BITS",
    "MAX_RSA_BITS",
    "MAX_RSA_EXPONENT",
    "b64url_encode",
    "b64url_decode",
    "parse_protected",
    "sign_input",
    "encoded_sign_input",
    "check_shape",
    "signature_bytes",
    "verify_signature",
    "PublicKey",
    "PrivateKey",
    "own_ed25519",
]

PublicKey = Union[Ed25519PublicKey, ec.EllipticCurvePublicKey, rsa.RSAPublicKey]
PrivateKey = Union[Ed25519PrivateKey, ed25519.Ed25519PrivateKey, ec.EllipticCurvePrivateKey, rsa.RSAPrivateKey]

ALGORITHMS: Tuple[str, ...] = ("EdDSA", "ES256", "RS256", "PS256")
"""Every ``alg`` ajpcore signs and verifies Agent Cards with."""
KEY_TYPES: Dict[str, str] = {"EdDSA": "OKP", "ES256": "EC", "RS256": "RSA", "PS256": "RSA"}
"""The JWK ``kty`` each algorithm needs: an ``alg`` is only ever checked with a key of its type."""
MIN_RSA_BITS = 2048
MAX_RSA_BITS = 16384
"""RSA moduli outside [2048, 16384] bits are refused: too weak, or a verification-cost attack."""

MAX_RSA_EXPONENT = 2**32 - 1
"""The largest RSA public exponent accepted (with: odd, at least 3); a larger one only makes verifying dear."""

_P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
_B64URL = re.compile(r"[A-Za-z0-9_-]*")
_KNOWN_CRIT = frozenset(("b64",))


def b64url_encode(data: bytes) -> str:
    """base64url without padding (RFC 7515 §2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: Any, what: str) -> bytes:
    """The bytes of canonical base64url ``text``; ``MalformedJws`` naming ``what`` otherwise.

    Canonical: only ``A-Z a-z 0-9 - _``, no ``=`` padding, no whitespace, a length that is
    not 1 modulo 4, and zero pad bits, so one byte string has exactly one text.
    """
    if not isinstance(text, str):
        raise MalformedJws(f"`{what}` must be a base64url string")
    if not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise MalformedJws(f"`{what}` is not unpadded base64url (RFC 7515 §2)")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):  # pragma: no cover - the pattern admits only decodable text
        raise MalformedJws(f"`{what}` is not unpadded base64url (RFC 7515 §2)") from None
    if b64url_encode(raw) != text:
        raise MalformedJws(f"`{what}` is not canonical base64url (non-zero pad bits)")
    return raw


def parse_protected(text: Any) -> Dict[str, Any]:
    """The protected header of one signature, checked (module docstring); raises ``MalformedJws``
    or, for an algorithm ajpcore never accepts, ``UnsupportedAlgorithm``."""
    raw = b64url_decode(text, "protected")
    try:
        header = _core.impl.decode(raw)
    except DecodeError as exc:
        raise MalformedJws(f"`protected` header is not strict I-JSON: {exc.reason} (byte {exc.pos})") from None
    if not isinstance(header, dict):
        raise MalformedJws("`protected` header must be a JSON object")
    alg = header.get("alg")
    if not isinstance(alg, str):
        raise MalformedJws("`protected` header has no string `alg`")
    if alg not in ALGORITHMS:
        raise UnsupportedAlgorithm(_refusal(alg))
    kid = header.get("kid")
    if not isinstance(kid, str) or not kid:
        raise MalformedJws("`protected` header has no `kid` (A2A §8.4.2 requires one)")
    if "typ" in header and header["typ"] != "JOSE":
        raise MalformedJws(f"`protected` header `typ` must be `JOSE`, got {_show(header['typ'])}")
    if header.get("jku") is None:
        # a2a-python's signer writes `"jku": null` when none is given: no URL, nothing to check.
        header.pop("jku", None)
    elif not isinstance(header["jku"], str):
        raise MalformedJws("`protected` header `jku` must be a string")
    if "crit" in header:
        crit = header["crit"]
        if not isinstance(crit, list) or not crit or not all(isinstance(c, str) for c in crit) or len(set(crit)) != len(crit):
            raise MalformedJws("`crit` must be a non-empty array of distinct names (RFC 7515 §4.1.11)")
        unknown = [c for c in crit if c not in _KNOWN_CRIT]
        if unknown:
            raise MalformedJws(f"`crit` names `{unknown[0]}`, an extension ajpcore does not implement (RFC 7515 §4.1.11)")
        missing = [c for c in crit if c not in header]
        if missing:
            raise MalformedJws(f"`crit` names `{missing[0]}`, absent from the protected header")
    if "b64" in header and header["b64"] is not True:
        raise MalformedJws("`b64` other than true (RFC 7797 unencoded payload) is refused")
    return header


def _show(value: Any) -> str:
    return f"`{value}`" if isinstance(value, str) else f"a JSON {type(value).__name__}"


def _refusal(alg: str) -> str:
    if alg.lower() == "none":
        return "`alg` `none` (an unsecured JWS) is refused"
    if alg.upper().startswith("HS"):
        return f"`alg` `{alg}` (HMAC, a shared secret) is refused: an Agent Card is verified with a public key"
    return f"`alg` `{alg}` is not supported (expected one of {', '.join(ALGORITHMS)})"


def sign_input(protected: str, payload: bytes) -> bytes:
    """The JWS Signing Input ``ASCII(protected || '.' || BASE64URL(payload))`` (RFC 7515 §5.1)."""
    return encoded_sign_input(protected, b64url_encode(payload))


def encoded_sign_input(protected: str, encoded_payload: str) -> bytes:
    """``sign_input`` of a payload already in base64url (a verifier encodes each payload once, not per signature)."""
    return (protected + "." + encoded_payload).encode("ascii")


def _check_rsa_size(bits: int) -> None:
    if not MIN_RSA_BITS <= bits <= MAX_RSA_BITS:
        raise UnsupportedAlgorithm(f"RSA key of {bits} bits refused (RS256/PS256 need {MIN_RSA_BITS} to {MAX_RSA_BITS})")


def own_ed25519(key: Any) -> Any:
    """``key`` with a ``cryptography`` Ed25519 key (private or public) read as ajpcore's own, so that
    it goes through the strict policy of ``ajpcore.keys``; any other key unchanged.

    ``cryptography``'s P-256 and RSA keys are taken as they are, so its Ed25519 keys are too.
    """
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return Ed25519PrivateKey.from_seed(key.private_bytes_raw())
    if isinstance(key, ed25519.Ed25519PublicKey):
        return Ed25519PublicKey.from_bytes(key.public_bytes_raw())
    return key


def key_fits(alg: str, key: Any) -> bool:
    """Whether ``key`` (public or private) is of the type ``alg`` needs."""
    kty = KEY_TYPES[alg]
    if kty == "OKP":
        return isinstance(key, (Ed25519PublicKey, Ed25519PrivateKey))
    if kty == "EC":
        ok: bool = isinstance(key, (ec.EllipticCurvePublicKey, ec.EllipticCurvePrivateKey)) and isinstance(key.curve, ec.SECP256R1)
        return ok
    return isinstance(key, (rsa.RSAPublicKey, rsa.RSAPrivateKey))


def signature_bytes(alg: str, key: PrivateKey, data: bytes) -> bytes:
    """The JWS signature of ``data`` under ``alg`` with a private key of the matching type.

    ``key``: ajpcore's or ``cryptography``'s ``Ed25519PrivateKey``, a P-256 or an RSA key.
    ES256 is written as raw ``r || s`` (32 bytes each) with the low S.  Raises
    ``UnsupportedAlgorithm`` for another ``alg`` or a key that does not fit it
    (RSA outside 2048..16384 bits included).
    """
    if alg not in ALGORITHMS:
        raise UnsupportedAlgorithm(_refusal(alg))
    key = own_ed25519(key)
    if not key_fits(alg, key):
        raise UnsupportedAlgorithm(f"`alg` `{alg}` needs a {KEY_TYPES[alg]} key, got `{type(key).__name__}`")
    if isinstance(key, Ed25519PrivateKey):
        return key.sign(data)
    if isinstance(key, ec.EllipticCurvePrivateKey):
        r, s = decode_dss_signature(key.sign(data, ec.ECDSA(hashes.SHA256())))
        s = min(s, _P256_ORDER - s)  # low S: one of the two valid signatures, deterministically
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")
    if isinstance(key, rsa.RSAPrivateKey):
        _check_rsa_size(key.key_size)
        if alg == "RS256":
            return key.sign(data, padding.PKCS1v15(), hashes.SHA256())
        return key.sign(data, padding.PSS(padding.MGF1(hashes.SHA256()), 32), hashes.SHA256())
    raise KeyUsageError(f"cannot sign with `{type(key).__name__}`")  # pragma: no cover - key_fits said yes


def check_shape(alg: str, key: PublicKey, signature: bytes) -> None:
    """Refuse, before any payload is tried, a signature value whose length or scalars cannot be
    valid for ``alg`` and ``key`` (``BadSignature``)."""
    if isinstance(key, rsa.RSAPublicKey):
        _check_rsa_size(key.key_size)
        size = (key.key_size + 7) // 8
        if len(signature) != size:
            raise BadSignature(f"an {alg} signature under this key is {size} bytes, got {len(signature)}")
        return
    if len(signature) != 64:
        raise BadSignature(f"an {alg} signature is 64 bytes{' (r || s)' if alg == 'ES256' else ''}, got {len(signature)}")
    if alg == "ES256":
        r, s = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
        if not (0 < r < _P256_ORDER and 0 < s < _P256_ORDER):
            raise BadSignature("ES256 signature has r or s outside 1..n-1")


def verify_signature(alg: str, key: PublicKey, signature: bytes, data: bytes) -> None:
    """Check a JWS signature; ``BadSignature`` on a mismatch or an ill-formed signature value,
    ``UnsupportedAlgorithm`` when the key's type does not fit ``alg``."""
    if not key_fits(alg, key):
        raise UnsupportedAlgorithm(f"`alg` `{alg}` needs a {KEY_TYPES[alg]} key; the key for this `kid` is not one")
    check_shape(alg, key, signature)
    if isinstance(key, Ed25519PublicKey):
        key.verify(signature, data)
        return
    try:
        if isinstance(key, ec.EllipticCurvePublicKey):
            r, s = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
            key.verify(encode_dss_signature(r, s), data, ec.ECDSA(hashes.SHA256()))
            return
        if isinstance(key, rsa.RSAPublicKey):
            if alg == "RS256":
                key.verify(signature, data, padding.PKCS1v15(), hashes.SHA256())
            else:
                key.verify(signature, data, padding.PSS(padding.MGF1(hashes.SHA256()), 32), hashes.SHA256())
            return
    except InvalidSignature:
        raise BadSignature(f"{alg} signature does not match the card and key") from None
    raise KeyUsageError(f"cannot verify with `{type(key).__name__}`")  # pragma: no cover - key_fits said yes
