"""Typed IATP messages: capability manifests, compensation, audit events; trust and undo rules.

The Inter-Agent Trust Protocol (IATP-001 handshake, IATP-002 reversibility)
publishes one JSON Schema, for the capability manifest an agent serves at
``/.well-known/agent-manifest``.  ``CapabilityManifest.from_json`` accepts
exactly what that schema accepts, read with JSON Schema semantics: patterns are
ECMA-262 (``\\d`` is an ASCII digit, ``$`` only matches at the end), and of the
formats only ``date-time`` is asserted, strictly as RFC 3339 section 5.6
(``email``, ``uri`` and ``uri-reference`` are annotations, as the schema's
validators treat them by default).  The schema allows members it does not name at
every level: they are kept in ``extra`` and written back unchanged.

On top of the typed manifest: ``trust_score`` (IATP-001 section 2.3),
``undo_decision`` (IATP-002 section 4), ``spec_warnings`` (advice the schema
leaves open) and manifest signatures, an ajpcore extension (IATP defines none;
see ``sign_manifest``).  IATP-002's compensation request and response,
compensation chain (a saga undone backwards) and audit event, and IATP-001's
attestation, are typed the same way, each with its schema in
``ajpcore/schemas/``.  ``manifest_from_reference_model`` converts the reference
Python package's internal model.  Pure functions: no I/O beyond reading the
shipped schemas, and time only through arguments.
"""


from __future__ import annotations

from ._attestation import ATTESTATION_MAX_AGE_SECONDS, Attestation, attestation_signing_bytes, verify_attestation
from ._compensation import (
    AuditEvent,
    ChainEntry,
    CompensationChain,
    CompensationRequest,
    CompensationResponse,
)
from ._enums import (
    ABSENT,
    AuthMethod,
    ChainStatus,
    CompensationMethod,
    RetentionPolicy,
    ReversibilityLevel,
    TrustLevel,
)
from ._manifest import (
    Authentication,
    Capabilities,
    CapabilityManifest,
    Identity,
    Privacy,
    RateLimiting,
    Reversibility,
    UndoConditions,
    spec_warnings,
)
from ._reference_model import manifest_from_reference_model
from ._schemas import SCHEMA_NAMES, schema
from ._signatures import (
    MANIFEST_SIGNATURE_CONTEXT,
    manifest_signing_bytes,
    sign_manifest,
    verify_manifest,
)
from ._trust import ALLOW_THRESHOLD, TrustScore, trust_score
from ._undo import UndoDecision, undo_decision

__all__ = [
    "ABSENT",
    "TrustLevel",
    "ReversibilityLevel",
    "CompensationMethod",
    "RetentionPolicy",
    "AuthMethod",
    "ChainStatus",
    "Identity",
    "Capabilities",
    "UndoConditions",
    "Reversibility",
    "Privacy",
    "Authentication",
    "RateLimiting",
    "CapabilityManifest",
    "CompensationRequest",
    "CompensationResponse",
    "ChainEntry",
    "CompensationChain",
    "AuditEvent",
    "Attestation",
    "attestation_signing_bytes",
    "verify_attestation",
    "ATTESTATION_MAX_AGE_SECONDS",
    "TrustScore",
    "trust_score",
    "ALLOW_THRESHOLD",
    "UndoDecision",
    "undo_decision",
    "spec_warnings",
    "manifest_from_reference_model",
    "MANIFEST_SIGNATURE_CONTEXT",
    "manifest_signing_bytes",
    "sign_manifest",
    "verify_manifest",
    "schema",
    "SCHEMA_NAMES",
]
