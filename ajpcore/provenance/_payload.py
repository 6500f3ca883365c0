"""Domain-separated signed payloads: the parts every Provenance verifier shares.

A Provenance key signs several kinds of statement; each payload starts with its
own prefix (``provenance-<purpose>-v1:``) so a signature made for one purpose is
never valid as another.  Documents are signed over the prefix plus the RFC 8785
canonical JSON of the document without its top-level ``signature``; signatures
are base64 (standard alphabet, padded, canonical) of the raw 64 bytes, keys are
base64 SPKI DER (or any text ``Ed25519PublicKey.from_string`` reads).
"""

from __future__ import annotations

import base64
from typing import Any, Dict, Optional, Tuple, Union

from .. import _core
from ..errors import AjpError, KeyFormatError, SignatureError, WeakKey
from ..keys import Ed25519PrivateKey, Ed25519PublicKey, _strict_b64decode

PublicKeyLike = Union[str, Ed25519PublicKey]
"""A public key as text (base64 SPKI DER, or ``ed25519:`` + base64/hex) or a parsed key."""


def load_key(key: Any, what: str) -> Tuple[Optional[Ed25519PublicKey], Optional[str]]:
    """``(key, None)``, or ``(None, reason)`` when ``key`` is absent or not a usable Ed25519 key.

    A weak key (small order, non-canonical) is refused like a malformed one: it
    could make forged signatures verify.
    """
    if isinstance(key, Ed25519PublicKey):
        return key, None
    if key is None or key == "":
        return None, f"no {what} was given: the signature was not checked"
    try:
        return Ed25519PublicKey.from_string(key), None
    except WeakKey as exc:
        return None, f"{what} is refused by the strict Ed25519 policy: {exc}"
    except KeyFormatError as exc:
        return None, f"{what} is not a valid Ed25519 public key: {exc}"


def document_payload(domain: bytes, document: Dict[str, Any]) -> bytes:
    """``domain + canonicalize(document without its top-level "signature")``; raises ``EncodeError``."""
    covered = {k: v for k, v in document.items() if k != "signature"}
    body: bytes = _core.impl.canonicalize(covered)
    return domain + body


def signature_failure(
    key: Ed25519PublicKey, signature: Any, payload: bytes, backend: Optional[str]
) -> Optional[str]:
    """None when ``signature`` (base64 text) verifies ``payload`` under ``key``, else why not."""
    if not isinstance(signature, str):
        return "signature is missing or not a string"
    try:
        raw = _strict_b64decode(signature, 64, "signature")
    except KeyFormatError as exc:
        return f"signature is malformed: {exc}"
    try:
        key.verify(raw, payload, backend=backend)
    except SignatureError:
        return "signature does not verify"
    return None


def sign_payload(private_key: Any, payload: bytes) -> str:
    """Base64 of the Ed25519 signature of ``payload``.

    ``private_key`` is an ``Ed25519PrivateKey`` or its base64 PKCS#8 text;
    raises ``KeyFormatError`` otherwise.
    """
    if not isinstance(private_key, Ed25519PrivateKey):
        private_key = Ed25519PrivateKey.from_string(private_key)
    return base64.b64encode(private_key.sign(payload)).decode("ascii")


def describe(value: Any) -> str:
    """A short, printable rendering of a hostile value for a refusal reason."""
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        return repr(text)
    try:
        encoded: bytes = _core.impl.canonicalize(value)
        text = encoded.decode("utf-8")
    except (AjpError, RecursionError):
        return f"`{type(value).__name__}`"
    return text if len(text) <= 40 else text[:37] + "..."


def is_nonempty_str(value: Any) -> bool:
    return isinstance(value, str) and value != ""
