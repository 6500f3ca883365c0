"""Provenance attestations (format 0.1) and their withdrawals, verified offline.

An attestation is a third party's signed statement about an agent: the issuer
signs ``b"provenance-attestation-v1:" + canonical JSON`` of the attestation
without ``signature`` (RFC 8785, as a 0.2 declaration).  A withdrawal signs
``b"provenance-attestation-withdrawal-v1:" + canonical JSON`` of
``{"attestation_id": ..., "issuer": ...}``.  The rules follow the Provenance
SPEC's "Attestations" section (Attestations 0.1) and its normative vectors
``test-vectors/attestations-0.1.json``; see the package docstring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional

from .. import _core
from ..errors import AjpError, ValidationError
from ..timestamps import _micros_or_none, instant_micros
from ._payload import describe, document_payload, is_nonempty_str, load_key, sign_payload, signature_failure

__all__ = [
    "ATTESTATION_DOMAIN",
    "WITHDRAWAL_DOMAIN",
    "ATTESTATION_VERSIONS",
    "CLOCK_SKEW_SECONDS",
    "AttestationVerification",
    "WithdrawalVerification",
    "attestation_signing_payload",
    "sign_attestation",
    "verify_attestation",
    "withdrawal_signing_payload",
    "sign_withdrawal",
    "verify_withdrawal",
]

ATTESTATION_DOMAIN = b"provenance-attestation-v1:"
WITHDRAWAL_DOMAIN = b"provenance-attestation-withdrawal-v1:"
ATTESTATION_VERSIONS = ("0.1",)
"""Attestation format versions this verifier knows; any other is ``unchecked``, never guessed at."""
CLOCK_SKEW_SECONDS = 300
"""How far ``issued_at`` may lie ahead of ``now`` before an attestation is ``not_yet_valid``."""


@dataclass(frozen=True)
class AttestationVerification:
    """The outcome of ``verify_attestation``.

    ``status``: ``"valid"`` (genuine and inside its window), ``"expired"``
    (genuine, ``now`` past ``valid_until``), ``"not_yet_valid"`` (genuine,
    ``issued_at`` more than 5 minutes ahead of ``now``), ``"invalid"`` (forged,
    altered, malformed, or naming another key than the one given) or
    ``"unchecked"`` (unknown version, no usable issuer key).  The signature is
    checked before the dates, so a forgery is never ``expired``.  ``reason``
    says why when not valid.  ``kind``, ``attestation_id``, ``issuer`` (its
    provenance id), ``subject`` and ``valid_until`` are read from the document
    (None when absent or mistyped); they are covered by the signature only when
    ``status`` is valid, expired or not_yet_valid.
    """

    status: str
    reason: Optional[str] = None
    kind: Optional[str] = None
    attestation_id: Optional[str] = None
    issuer: Optional[str] = None
    subject: Optional[Mapping[str, Any]] = None
    valid_until: Optional[str] = None

    @property
    def valid(self) -> bool:
        return self.status == "valid"

    @property
    def genuine(self) -> bool:
        """The issuer's key signed exactly this document (valid, expired or not yet valid)."""
        return self.status in ("valid", "expired", "not_yet_valid")


@dataclass(frozen=True)
class WithdrawalVerification:
    """The outcome of ``verify_withdrawal``: ``status`` ``"valid"``, ``"invalid"`` or
    ``"unchecked"`` (no usable issuer key), ``reason``, and the ``issuer`` and
    ``attestation_id`` the withdrawal names."""

    status: str
    reason: Optional[str] = None
    issuer: Optional[str] = None
    attestation_id: Optional[str] = None

    @property
    def valid(self) -> bool:
        return self.status == "valid"


def _object(value: Any, what: str) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise ValidationError([("$", f"{what} must be an object, got `{type(value).__name__}`")])
    return value


def attestation_signing_payload(attestation: Any) -> bytes:
    """``b"provenance-attestation-v1:" + canonicalize(attestation without "signature")``.

    Raises ``ValidationError`` if ``attestation`` is not an object,
    ``EncodeError`` for a value with no canonical JSON form.
    """
    return document_payload(ATTESTATION_DOMAIN, _object(attestation, "an attestation"))


def sign_attestation(attestation: Any, private_key: Any) -> Dict[str, Any]:
    """A copy of ``attestation`` carrying ``signature`` (base64) over its signing payload.

    Raises as ``attestation_signing_payload``, and ``KeyFormatError`` for a bad key.
    """
    signed = dict(_object(attestation, "an attestation"))
    signed["signature"] = sign_payload(private_key, attestation_signing_payload(signed))
    return signed


def verify_attestation(
    attestation: Any,
    issuer_public_key: Any,
    *,
    now: Any,
    backend: Optional[str] = None,
) -> AttestationVerification:
    """Verify an attestation offline against the issuer's key, at ``now``.

    ``issuer_public_key``: the issuer's key (base64 SPKI DER text or
    ``Ed25519PublicKey``), normally from the issuer's own verified declaration;
    None gives ``unchecked``.  ``now``: an aware datetime, an RFC 3339 string or
    POSIX seconds.  In order: the document must be an object (else
    ``invalid``); ``attestation`` must be a known version (else ``unchecked``);
    ``id``, ``kind``, ``scope``, ``signature`` non-empty strings,
    ``issuer.provenance_id`` and ``issuer.key_fingerprint`` strings,
    ``subject.provenance_id`` or ``subject.url`` a string, ``claims`` an object,
    ``issued_at``/``valid_until`` strict RFC 3339 with ``valid_until`` after
    ``issued_at`` (else ``invalid``); a usable key (else ``unchecked``) whose
    fingerprint is ``issuer.key_fingerprint`` and whose signature verifies
    (else ``invalid``); only then the dates: ``not_yet_valid`` when
    ``issued_at`` is more than ``CLOCK_SKEW_SECONDS`` after ``now``, ``expired``
    when ``now`` is after ``valid_until``, else ``valid``.

    Never raises for the document's content.  Raises ``TimestampError`` for a
    bad ``now`` and ``KeyUsageError`` for an unknown ``backend``.
    """
    now_us = instant_micros(now)
    if not isinstance(attestation, dict):
        return AttestationVerification("invalid", f"an attestation must be an object, got `{type(attestation).__name__}`")
    a = attestation
    issuer = a.get("issuer")
    subject = a.get("subject")
    facts: Dict[str, Any] = {
        "kind": a.get("kind") if isinstance(a.get("kind"), str) else None,
        "attestation_id": a.get("id") if isinstance(a.get("id"), str) else None,
        "issuer": issuer.get("provenance_id") if isinstance(issuer, dict) and isinstance(issuer.get("provenance_id"), str) else None,
        "subject": subject if isinstance(subject, dict) else None,
        "valid_until": a.get("valid_until") if isinstance(a.get("valid_until"), str) else None,
    }
    version = a.get("attestation")
    if not isinstance(version, str) or version not in ATTESTATION_VERSIONS:
        shown = describe(version) if "attestation" in a else "(missing)"
        return AttestationVerification("unchecked", f"attestation version {shown} is not known to this verifier", **facts)

    missing: List[str] = []
    for member in ("id", "kind"):
        if not is_nonempty_str(a.get(member)):
            missing.append(member)
    if facts["issuer"] is None:
        missing.append("issuer.provenance_id")
    if not (isinstance(issuer, dict) and isinstance(issuer.get("key_fingerprint"), str)):
        missing.append("issuer.key_fingerprint")
    if not (isinstance(subject, dict) and (isinstance(subject.get("provenance_id"), str) or isinstance(subject.get("url"), str))):
        missing.append("subject.provenance_id or subject.url")
    if not is_nonempty_str(a.get("scope")):
        missing.append("scope")
    if not isinstance(a.get("claims"), dict):
        missing.append("claims")
    if not is_nonempty_str(a.get("signature")):
        missing.append("signature")
    if missing:
        return AttestationVerification("invalid", "missing or malformed: " + ", ".join(missing), **facts)
    issued_us = _micros_or_none(a.get("issued_at"))
    until_us = _micros_or_none(a.get("valid_until"))
    if issued_us is None or until_us is None:
        return AttestationVerification(
            "invalid", "issued_at and valid_until must be RFC 3339 timestamps with an explicit offset", **facts
        )
    if until_us <= issued_us:
        return AttestationVerification("invalid", "valid_until is not after issued_at", **facts)

    key, why = load_key(issuer_public_key, "issuer public key")
    if key is None:
        return AttestationVerification("unchecked", why, **facts)
    assert isinstance(issuer, dict)  # checked with the other members above
    if issuer["key_fingerprint"] != key.fingerprint:
        return AttestationVerification("invalid", "attestation names a different issuer key than the one given", **facts)
    try:
        payload = attestation_signing_payload(a)
    except AjpError as exc:
        return AttestationVerification("invalid", f"attestation cannot be canonicalised: {exc}", **facts)
    failure = signature_failure(key, a["signature"], payload, backend)
    if failure is not None:
        return AttestationVerification("invalid", failure, **facts)
    # Only a genuine document's dates mean anything: anyone can write a date.
    if issued_us > now_us + CLOCK_SKEW_SECONDS * 1_000_000:
        return AttestationVerification("not_yet_valid", "issued_at is in the future", **facts)
    if now_us > until_us:
        return AttestationVerification("expired", f"expired at {a['valid_until']}", **facts)
    return AttestationVerification("valid", None, **facts)


def withdrawal_signing_payload(issuer: Any, attestation_id: Any) -> bytes:
    """``b"provenance-attestation-withdrawal-v1:" + canonicalize({"attestation_id": ..., "issuer": ...})``.

    Canonical JSON, not ``a:b`` joining: ids contain colons.  Raises
    ``ValidationError`` unless both are non-empty strings, ``EncodeError`` for
    a lone surrogate.
    """
    problems = [
        (path, "must be a non-empty string")
        for path, value in (("$.issuer", issuer), ("$.attestation_id", attestation_id))
        if not is_nonempty_str(value)
    ]
    if problems:
        raise ValidationError(problems)
    body: bytes = _core.impl.canonicalize({"attestation_id": attestation_id, "issuer": issuer})
    return WITHDRAWAL_DOMAIN + body


def sign_withdrawal(issuer: Any, attestation_id: Any, private_key: Any) -> Dict[str, Any]:
    """The withdrawal document ``{"issuer", "attestation_id", "signature"}`` signed by ``private_key``."""
    signature = sign_payload(private_key, withdrawal_signing_payload(issuer, attestation_id))
    return {"issuer": issuer, "attestation_id": attestation_id, "signature": signature}


def verify_withdrawal(
    withdrawal: Any,
    issuer_public_key: Any,
    *,
    attestation: Any = None,
    backend: Optional[str] = None,
) -> WithdrawalVerification:
    """Verify an issuer's withdrawal of one of its attestations.

    ``withdrawal`` is ``{"issuer": <issuer provenance id>, "attestation_id":
    <id>, "signature": <base64>}`` (other members are ignored: they are not
    signed).  With ``attestation=`` the withdrawal must name that
    attestation's ``id`` and ``issuer.provenance_id``, and ``issuer_public_key``
    must be the key that attestation names.  Status ``valid``, ``invalid``
    (malformed, another attestation, forged) or ``unchecked`` (no usable key).
    Whether a withdrawal exists is learned online (``status_url``); this only
    says a given one is genuine.  Raises only ``KeyUsageError`` for an unknown
    ``backend``.
    """
    if not isinstance(withdrawal, dict):
        return WithdrawalVerification("invalid", f"a withdrawal must be an object, got `{type(withdrawal).__name__}`")
    issuer = withdrawal.get("issuer")
    attestation_id = withdrawal.get("attestation_id")
    facts: Dict[str, Any] = {
        "issuer": issuer if isinstance(issuer, str) else None,
        "attestation_id": attestation_id if isinstance(attestation_id, str) else None,
    }
    missing = [m for m in ("issuer", "attestation_id", "signature") if not is_nonempty_str(withdrawal.get(m))]
    if missing:
        return WithdrawalVerification("invalid", "missing or malformed: " + ", ".join(missing), **facts)
    key, why = load_key(issuer_public_key, "issuer public key")
    if key is None:
        return WithdrawalVerification("unchecked", why, **facts)
    if attestation is not None:
        att_issuer = attestation.get("issuer") if isinstance(attestation, dict) else None
        if not (
            isinstance(att_issuer, dict)
            and attestation.get("id") == attestation_id
            and att_issuer.get("provenance_id") == issuer
        ):
            return WithdrawalVerification("invalid", "withdrawal names another attestation or issuer", **facts)
        if att_issuer.get("key_fingerprint") != key.fingerprint:
            return WithdrawalVerification("invalid", "the attestation names a different issuer key than the one given", **facts)
    try:
        payload = withdrawal_signing_payload(issuer, attestation_id)
    except AjpError as exc:
        return WithdrawalVerification("invalid", f"withdrawal cannot be canonicalised: {exc}", **facts)
    failure = signature_failure(key, withdrawal["signature"], payload, backend)
    if failure is not None:
        return WithdrawalVerification("invalid", failure, **facts)
    return WithdrawalVerification("valid", None, **facts)
