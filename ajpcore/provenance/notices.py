"""Provenance notices (format 0.1): an operator's signed statements about its own agent.

Signed with the agent's own key over ``b"provenance-notice-v1:" + canonical
JSON`` of the notice without ``signature``; ``key_fingerprint`` names the
signing key.  A ``key-rotation`` notice is the only accepted way to move to a
new key, and only when signed by the OLD key.  The rules follow the Provenance
SPEC's "Notices" section (Notices 0.1) and its normative vectors
``test-vectors/notices-0.1.json``; see the package docstring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from ..errors import AjpError, KeyFormatError, ValidationError, WeakKey
from ..keys import Ed25519PublicKey
from ..timestamps import is_timestamp
from ._payload import describe, document_payload, is_nonempty_str, load_key, sign_payload, signature_failure

__all__ = [
    "NOTICE_DOMAIN",
    "NOTICE_VERSIONS",
    "NOTICE_EVENTS",
    "NoticeVerification",
    "notice_signing_payload",
    "sign_notice",
    "verify_notice",
]

NOTICE_DOMAIN = b"provenance-notice-v1:"
NOTICE_VERSIONS = ("0.1",)
"""Notice format versions this verifier knows; any other is ``unchecked``, never guessed at."""
NOTICE_EVENTS = ("declaration-published", "release", "key-rotation", "incident")
"""The events of Notices 0.1; a notice with another event is ``invalid`` (as the reference verifier)."""


@dataclass(frozen=True)
class NoticeVerification:
    """The outcome of ``verify_notice``.

    ``status``: ``"valid"``, ``"invalid"`` (forged, altered, malformed, signed
    by another key than the one given and named) or ``"unchecked"`` (unknown
    version, no usable key).  ``reason`` says why when not valid.  ``event``,
    ``notice_id``, ``provenance_id`` and ``key_fingerprint`` are read from the
    document.  For a valid ``key-rotation`` notice, and only then,
    ``new_public_key`` is the successor key (vouched for by the key that
    signed the notice) and ``new_key_fingerprint`` its fingerprint.
    """

    status: str
    reason: Optional[str] = None
    event: Optional[str] = None
    notice_id: Optional[str] = None
    provenance_id: Optional[str] = None
    key_fingerprint: Optional[str] = None
    new_public_key: Optional[Ed25519PublicKey] = None
    new_key_fingerprint: Optional[str] = None

    @property
    def valid(self) -> bool:
        return self.status == "valid"


def notice_signing_payload(notice: Any) -> bytes:
    """``b"provenance-notice-v1:" + canonicalize(notice without "signature")``.

    Raises ``ValidationError`` if ``notice`` is not an object, ``EncodeError``
    for a value with no canonical JSON form.
    """
    if not isinstance(notice, dict):
        raise ValidationError([("$", f"a notice must be an object, got `{type(notice).__name__}`")])
    return document_payload(NOTICE_DOMAIN, notice)


def sign_notice(notice: Any, private_key: Any) -> Dict[str, Any]:
    """A copy of ``notice`` carrying ``signature`` (base64) over its signing payload.

    Raises as ``notice_signing_payload``, and ``KeyFormatError`` for a bad key.
    """
    payload = notice_signing_payload(notice)
    signed = dict(notice)
    signed["signature"] = sign_payload(private_key, payload)
    return signed


def verify_notice(notice: Any, public_key: Any, *, backend: Optional[str] = None) -> NoticeVerification:
    """Verify a notice against the key the receiver already holds for the agent.

    For a ``key-rotation`` notice ``public_key`` is the OLD key (the one
    pinned): a rotation signed by the new key, or by anyone else, is
    ``invalid``.  In order: an object (else ``invalid``); a known ``notice``
    version (else ``unchecked``); ``id``, ``provenance_id``, ``signature``
    non-empty strings, ``event`` one of ``NOTICE_EVENTS``, ``key_fingerprint``
    a string, ``issued_at`` strict RFC 3339, ``claims`` an object, and for a
    rotation ``claims.new_public_key`` a string (else ``invalid``); a usable key
    (else ``unchecked``) whose fingerprint is ``key_fingerprint`` and whose
    signature verifies (else ``invalid``); for a rotation, a successor key the
    strict Ed25519 policy accepts, matching ``claims.new_key_fingerprint`` when
    that is present (else ``invalid``).

    Never raises for the document's content; raises ``KeyUsageError`` for an
    unknown ``backend``.
    """
    if not isinstance(notice, dict):
        return NoticeVerification("invalid", f"a notice must be an object, got `{type(notice).__name__}`")
    n = notice
    facts: Dict[str, Any] = {
        name: n.get(member) if isinstance(n.get(member), str) else None
        for name, member in (
            ("event", "event"),
            ("notice_id", "id"),
            ("provenance_id", "provenance_id"),
            ("key_fingerprint", "key_fingerprint"),
        )
    }
    version = n.get("notice")
    if not isinstance(version, str) or version not in NOTICE_VERSIONS:
        shown = describe(version) if "notice" in n else "(missing)"
        return NoticeVerification("unchecked", f"notice version {shown} is not known to this verifier", **facts)

    claims = n.get("claims")
    event = facts["event"]
    missing: List[str] = []
    if not is_nonempty_str(n.get("id")):
        missing.append("id")
    if event not in NOTICE_EVENTS:
        missing.append("event")
    if not is_nonempty_str(n.get("provenance_id")):
        missing.append("provenance_id")
    if facts["key_fingerprint"] is None:
        missing.append("key_fingerprint")
    if not is_timestamp(n.get("issued_at")):
        missing.append("issued_at")
    if not isinstance(claims, dict):
        missing.append("claims")
    if not is_nonempty_str(n.get("signature")):
        missing.append("signature")
    if event == "key-rotation" and not (isinstance(claims, dict) and isinstance(claims.get("new_public_key"), str)):
        missing.append("claims.new_public_key")
    if missing:
        return NoticeVerification("invalid", "missing or malformed: " + ", ".join(missing), **facts)

    key, why = load_key(public_key, "public key")
    if key is None:
        return NoticeVerification("unchecked", why, **facts)
    if n["key_fingerprint"] != key.fingerprint:
        return NoticeVerification("invalid", "notice names a different signing key than the one given", **facts)
    try:
        payload = notice_signing_payload(n)
    except AjpError as exc:
        return NoticeVerification("invalid", f"notice cannot be canonicalised: {exc}", **facts)
    failure = signature_failure(key, n["signature"], payload, backend)
    if failure is not None:
        return NoticeVerification("invalid", failure, **facts)
    if event != "key-rotation":
        return NoticeVerification("valid", None, **facts)

    assert isinstance(claims, dict)
    try:
        successor = Ed25519PublicKey.from_string(claims["new_public_key"])
    except WeakKey as exc:
        return NoticeVerification("invalid", f"claims.new_public_key is refused by the strict Ed25519 policy: {exc}", **facts)
    except KeyFormatError as exc:
        return NoticeVerification("invalid", f"claims.new_public_key is not a valid Ed25519 public key: {exc}", **facts)
    if "new_key_fingerprint" in claims and claims["new_key_fingerprint"] != successor.fingerprint:
        return NoticeVerification("invalid", "claims.new_key_fingerprint does not match claims.new_public_key", **facts)
    return NoticeVerification(
        "valid", None, new_public_key=successor, new_key_fingerprint=successor.fingerprint, **facts
    )
