"""Live proof of key possession and owner-signed revocation (Provenance SPEC, "Every signed payload
is domain-separated").

- challenge: the agent signs ``b"provenance-challenge-v1:" + provenance_id + b":" + nonce``
  for a nonce the receiver chose (single-use, unpredictable: ``new_nonce()``);
- revocation: the key holder signs ``b"provenance-revocation-v1:" + provenance_id``;
  it has no caller-supplied input, so no challenge endpoint can be made to produce one.

The 0.1 forms (``<id>:<nonce>`` and ``<id>:REVOKE``) are not offered: they are
the same payload with a chosen nonce, so an endpoint that signs challenges in
that form hands out revocations of its own key.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

from ..errors import ValidationError
from ._payload import is_nonempty_str, load_key, sign_payload, signature_failure

__all__ = [
    "CHALLENGE_DOMAIN",
    "REVOCATION_DOMAIN",
    "SignedPayloadVerification",
    "new_nonce",
    "challenge_payload",
    "sign_challenge",
    "verify_challenge",
    "revocation_payload",
    "sign_revocation",
    "verify_revocation",
]

CHALLENGE_DOMAIN = b"provenance-challenge-v1:"
REVOCATION_DOMAIN = b"provenance-revocation-v1:"


@dataclass(frozen=True)
class SignedPayloadVerification:
    """The outcome of ``verify_challenge`` / ``verify_revocation``: ``status`` ``"valid"``,
    ``"invalid"`` (malformed input or a signature that does not verify) or ``"unchecked"``
    (no usable key), and ``reason`` when not valid."""

    status: str
    reason: Optional[str] = None

    @property
    def valid(self) -> bool:
        return self.status == "valid"


def _utf8(values: List[Tuple[str, Any]]) -> List[bytes]:
    problems = []
    out = []
    for name, value in values:
        if not is_nonempty_str(value):
            problems.append((f"$.{name}", f"must be a non-empty string, got `{type(value).__name__}`"))
            continue
        try:
            out.append(value.encode("utf-8"))
        except UnicodeEncodeError:
            problems.append((f"$.{name}", "has a lone surrogate (not UTF-8)"))
    if problems:
        raise ValidationError(problems)
    return out


def new_nonce() -> str:
    """A fresh challenge nonce: 32 random bytes as 64 lowercase hex digits (``secrets``)."""
    return secrets.token_hex(32)


def challenge_payload(provenance_id: Any, nonce: Any) -> bytes:
    """``b"provenance-challenge-v1:<provenance_id>:<nonce>"`` (UTF-8).

    Raises ``ValidationError`` unless both are non-empty strings encodable as UTF-8.
    """
    pid, n = _utf8([("provenance_id", provenance_id), ("nonce", nonce)])
    return CHALLENGE_DOMAIN + pid + b":" + n


def sign_challenge(provenance_id: Any, nonce: Any, private_key: Any) -> str:
    """Base64 Ed25519 signature of ``challenge_payload(provenance_id, nonce)``."""
    return sign_payload(private_key, challenge_payload(provenance_id, nonce))


def revocation_payload(provenance_id: Any) -> bytes:
    """``b"provenance-revocation-v1:<provenance_id>"`` (UTF-8); raises ``ValidationError`` as above."""
    (pid,) = _utf8([("provenance_id", provenance_id)])
    return REVOCATION_DOMAIN + pid


def sign_revocation(provenance_id: Any, private_key: Any) -> str:
    """Base64 Ed25519 signature of ``revocation_payload(provenance_id)``."""
    return sign_payload(private_key, revocation_payload(provenance_id))


def _verify(payload_of: Any, args: Tuple[Any, ...], signature: Any, public_key: Any, backend: Optional[str]) -> SignedPayloadVerification:
    try:
        payload = payload_of(*args)
    except ValidationError as exc:
        return SignedPayloadVerification("invalid", str(exc))
    key, why = load_key(public_key, "public key")
    if key is None:
        return SignedPayloadVerification("unchecked", why)
    failure = signature_failure(key, signature, payload, backend)
    return SignedPayloadVerification("invalid", failure) if failure else SignedPayloadVerification("valid")


def verify_challenge(
    provenance_id: Any, nonce: Any, signature: Any, public_key: Any, *, backend: Optional[str] = None
) -> SignedPayloadVerification:
    """Did the holder of ``public_key`` sign this challenge for ``provenance_id`` and ``nonce``?

    ``public_key`` is the key the receiver already holds for that id (from the
    verified declaration, or its pin); ``nonce`` the one it issued.  Never
    raises for the inputs; ``KeyUsageError`` for an unknown ``backend``.
    """
    return _verify(challenge_payload, (provenance_id, nonce), signature, public_key, backend)


def verify_revocation(
    provenance_id: Any, signature: Any, public_key: Any, *, backend: Optional[str] = None
) -> SignedPayloadVerification:
    """Did the holder of ``public_key`` revoke ``provenance_id``?

    Whether a revocation was issued is learned online; this only says whether
    a given one is genuine.  Never raises for the inputs; ``KeyUsageError``
    for an unknown ``backend``.
    """
    return _verify(revocation_payload, (provenance_id,), signature, public_key, backend)
