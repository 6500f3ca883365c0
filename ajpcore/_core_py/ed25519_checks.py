"""Ed25519 byte-level checks (RFC 8032 encodings; strict policy): twin of ``native/ed25519_checks.pxi``."""

from __future__ import annotations

from typing import Any

from ..errors import BadSignature, KeyFormatError, MalformedSignature, WeakKey


# ---------------------------------------------------------------------------
# Ed25519 byte-level checks (RFC 8032 encodings; strict policy)
# ---------------------------------------------------------------------------

_ED25519_P = 2**255 - 19
_ED25519_L = 2**252 + 27742317777372353535851937790883648493
# y-coordinates (< p) of the 8 points of order 1, 2, 4 and 8: any point with one of
# these y is of small order whatever its sign bit (libsodium's blocklist, RFC 8032 §5.1.3).
_ED25519_SMALL_ORDER_Y = frozenset(
    (
        0,
        1,
        _ED25519_P - 1,
        0x05FC536D880238B13933C6D305ACDFD5F098EFF289F4C345B027B2C28F95E826,
        0x7A03AC9277FDC74EC6CC392CFA53202A0F67100D760B3CBA4FD84D3D706A17C7,
    )
)


def _ed25519_bytes(data: Any, what: str, error: type) -> bytes:
    if type(data) is bytes:
        return data
    if issubclass(type(data), (bytes, bytearray, memoryview)):
        return bytes(data)
    raise error(f"{what} must be bytes, got `{type(data).__name__}`")


def _ed25519_point_refusal(enc: bytes) -> int:
    """0 if a 32-byte point encoding is admitted, 1 if y >= p, 2 if x = 0 with the sign
    bit set, 3 if the point has small order."""
    y = int.from_bytes(enc, "little") & ((1 << 255) - 1)  # bit 255 is the sign of x
    if y >= _ED25519_P:
        return 1
    if y in _ED25519_SMALL_ORDER_Y:
        # y = 1 and y = p - 1 are the two points with x = 0, which has no negative (RFC 8032 §5.1.3 step 4).
        if enc[31] & 0x80 and (y == 1 or y == _ED25519_P - 1):
            return 2
        return 3
    return 0


def ed25519_check_public_key(raw: Any) -> None:
    """Refuse an Ed25519 public key encoding the strict policy does not admit.

    ``raw`` is the 32-byte RFC 8032 encoding (bytes-like).  Raises
    ``KeyFormatError`` for another type or length, ``WeakKey`` when y >= p
    (non-canonical) or the point has small order (order 1, 2, 4 or 8).
    """
    raw = _ed25519_bytes(raw, "Ed25519 public key", KeyFormatError)
    if len(raw) != 32:
        raise KeyFormatError(f"Ed25519 public key must be 32 bytes, got {len(raw)}")
    refusal = _ed25519_point_refusal(raw)
    if refusal == 1:
        raise WeakKey("Ed25519 public key is not canonically encoded (y >= p)")
    if refusal == 2:
        raise WeakKey("Ed25519 public key is not canonically encoded (x = 0 with the sign bit set)")
    if refusal == 3:
        raise WeakKey("Ed25519 public key has small order")


def ed25519_check_signature(sig: Any) -> None:
    """Refuse an Ed25519 signature the strict policy does not admit, before any arithmetic.

    ``sig`` is the raw 64 bytes R || S (bytes-like).  Raises
    ``MalformedSignature`` for a non-bytes value and ``BadSignature`` for a
    length other than 64, an R with y >= p, an R of small order, or S >= L
    (RFC 8032 §5.1.7: S must be in range; R must be the canonical encoding).
    """
    _ed25519_checked_signature(sig)


def _ed25519_checked_signature(sig: Any) -> bytes:
    """``sig`` as the bytes ``ed25519_check_signature`` admits, else its refusal."""
    raw = _ed25519_bytes(sig, "Ed25519 signature", MalformedSignature)
    if len(raw) != 64:
        raise BadSignature(f"Ed25519 signature must be 64 bytes, got {len(raw)}")
    refusal = _ed25519_point_refusal(raw[:32])
    if refusal == 1:
        raise BadSignature("Ed25519 signature R is not canonically encoded (y >= p)")
    if refusal == 2:
        raise BadSignature("Ed25519 signature R is not canonically encoded (x = 0 with the sign bit set)")
    if refusal == 3:
        raise BadSignature("Ed25519 signature R has small order")
    if int.from_bytes(raw[32:], "little") >= _ED25519_L:
        raise BadSignature("Ed25519 signature S is not reduced (S >= L)")
    return raw


# ---------------------------------------------------------------------------
# Ed25519 verification through libsodium, without the GIL
# ---------------------------------------------------------------------------


def ed25519_sodium_verify(sig: Any, data: Any, key: bytes) -> bool:
    """True when ``sig`` is a valid Ed25519 signature of ``data`` under ``key`` by libsodium, False when not.

    ``sig`` is refused first as ``ed25519_check_signature`` refuses it; ``data`` is any
    bytes-like object, ``key`` the 32-byte public key ``ed25519_check_public_key`` admitted.
    PyNaCl's ``crypto_sign_open`` releases the GIL around libsodium (cffi does); the native
    twin also builds ``signature || message`` without it.
    """
    from nacl.bindings import crypto_sign_open
    from nacl.exceptions import BadSignatureError

    raw = _ed25519_checked_signature(sig)
    if len(key) != 32:
        raise KeyFormatError(f"Ed25519 public key must be 32 bytes, got {len(key)}")
    try:
        crypto_sign_open(raw + bytes(data), key)
    except BadSignatureError:
        return False
    return True
