"""The IATP capability manifest (IATP-001) and its parts, and ``spec_warnings``:
the advice of IATP-001/002 that the schema leaves open.
"""

from __future__ import annotations

import datetime as _dt
from types import MappingProxyType
from typing import Any, ClassVar, List, Mapping, Optional, Tuple, Union

from ..errors import format_path
from ._enums import ABSENT, AuthMethod, CompensationMethod, ReversibilityLevel, RetentionPolicy, TrustLevel, _Absent
from ._model import _Part, _manifest_part, _parse_time, _with_defaults
from .._envelope import member


class Identity(_Part):
    """``identity``: who the agent is.  ``verification_key`` is a *claimed* key, kept as given."""

    __slots__ = ()
    _SCHEMA = _manifest_part("identity")

    agent_id: str
    owner: str
    verification_key: Optional[str] = None
    contact: Optional[str] = None


class Capabilities(_Part):
    """``capabilities``: idempotency, concurrency and SLA promises."""

    __slots__ = ()
    _SCHEMA = _manifest_part("capabilities")

    idempotency: Optional[bool] = None
    idempotency_duration_seconds: Optional[int] = None
    concurrency_limit: Optional[int] = None
    sla_latency_ms: Optional[int] = None
    sla_availability: Optional[float] = None

    DEFAULTS: ClassVar[Mapping[str, Any]] = MappingProxyType({"idempotency": False})

    def with_defaults(self) -> "Capabilities":
        """A copy with the schema's defaults filled in where a member is absent."""
        return _with_defaults(self)


class UndoConditions(_Part):
    """``reversibility.undo_conditions``: the state after which undo is impossible."""

    __slots__ = ()
    _SCHEMA = _manifest_part("reversibility", "undo_conditions")

    until_state: Optional[str] = None
    check_endpoint: Optional[str] = None


class Reversibility(_Part):
    """``reversibility`` (IATP-002).  ``compensation_method`` is ``ABSENT``, ``None`` (JSON null) or a string."""

    __slots__ = ()
    _SCHEMA = _manifest_part("reversibility")

    level: ReversibilityLevel
    undo_window_seconds: Optional[int] = None
    compensation_method: Union[str, None, _Absent] = member(default=ABSENT)
    compensation_sla_ms: Optional[int] = None
    compensation_notes: Optional[str] = None
    compensation_endpoint: Optional[str] = None
    undo_conditions: Optional[UndoConditions] = None

    @property
    def standard_method(self) -> Optional[CompensationMethod]:
        """The IATP-002 standard method named by ``compensation_method``, if it is one."""
        try:
            return CompensationMethod(self.compensation_method)
        except ValueError:
            return None

    @property
    def custom_method(self) -> Optional[str]:
        """``<name>`` when ``compensation_method`` is ``custom:<name>`` with a non-empty name."""
        method = self.compensation_method
        if isinstance(method, str) and method.startswith("custom:") and len(method) > 7:
            return method[7:]
        return None


class Privacy(_Part):
    """``privacy``: retention, human review, training use, encryption."""

    __slots__ = ()
    _SCHEMA = _manifest_part("privacy")

    retention_policy: Optional[RetentionPolicy] = None
    retention_duration_seconds: Optional[int] = None
    storage_location: Optional[str] = None
    human_in_loop: Optional[bool] = None
    training_consent: Optional[bool] = None
    encryption_at_rest: Optional[bool] = None
    encryption_in_transit: Optional[bool] = None
    data_processing_addendum: Optional[str] = None

    DEFAULTS: ClassVar[Mapping[str, Any]] = MappingProxyType(
        {
            "retention_policy": RetentionPolicy.TEMPORARY,
            "human_in_loop": False,
            "training_consent": False,
            "encryption_at_rest": False,
            "encryption_in_transit": True,
        }
    )

    def with_defaults(self) -> "Privacy":
        """A copy with the schema's defaults filled in where a member is absent
        (``temporary`` retention, no human in the loop, no training, encrypted in transit only)."""
        return _with_defaults(self)


class Authentication(_Part):
    """``authentication``: accepted methods and whether authentication is required."""

    __slots__ = ()
    _SCHEMA = _manifest_part("authentication")

    methods: Optional[Tuple[AuthMethod, ...]] = None
    required: Optional[bool] = None

    DEFAULTS: ClassVar[Mapping[str, Any]] = MappingProxyType({"required": False})

    def with_defaults(self) -> "Authentication":
        """A copy with ``required`` false where it is absent."""
        return _with_defaults(self)


class RateLimiting(_Part):
    """``rate_limiting``: request rates and the token-bucket burst."""

    __slots__ = ()
    _SCHEMA = _manifest_part("rate_limiting")

    requests_per_second: Optional[float] = None
    requests_per_minute: Optional[float] = None
    requests_per_hour: Optional[float] = None
    burst_limit: Optional[int] = None


class CapabilityManifest(_Part):
    """An IATP capability manifest, exactly as the published schema defines it.

    Required: ``identity``, ``trust_level``, ``protocol_version``
    (``<major>.<minor>``).  ``schema_uri`` is the ``$schema`` member.  Members the
    schema does not name (``scopes``, the ajpcore ``signature``, future fields)
    are in ``extra`` and round-trip exactly.
    """

    __slots__ = ()
    _SCHEMA = _manifest_part()

    identity: Identity
    trust_level: TrustLevel
    protocol_version: str
    schema_uri: Optional[str] = member(json="$schema", default=None)
    capabilities: Optional[Capabilities] = None
    reversibility: Optional[Reversibility] = None
    privacy: Optional[Privacy] = None
    authentication: Optional[Authentication] = None
    rate_limiting: Optional[RateLimiting] = None
    manifest_version: Optional[str] = None
    updated_at: Optional[str] = None

    @property
    def signature(self) -> Any:
        """The top-level ``signature`` member (ajpcore extension) as received, or ``None``."""
        return self.extra.get("signature")

    @property
    def updated(self) -> Optional[_dt.datetime]:
        """``updated_at`` as an aware ``datetime`` (``None`` when absent)."""
        if self.updated_at is None:
            return None
        return _parse_time(self.updated_at, "updated_at")

    def with_signature(self, signature: Optional[str]) -> "CapabilityManifest":
        """A copy whose top-level ``signature`` is ``signature`` (``None`` removes it)."""
        extra = {k: v for k, v in self.extra.items() if k != "signature"}
        if signature is not None:
            extra["signature"] = signature
        return self.replace(extra=extra)




# ---------------------------------------------------------------------------
# Specification advice the schema does not enforce
# ---------------------------------------------------------------------------


def spec_warnings(manifest: CapabilityManifest) -> List[Tuple[str, str]]:
    """``(path, message)`` pairs for what IATP-001/002 ask but the schema leaves open.

    A manifest with warnings is still valid.  Checked: ``compensation_method``
    is a standard method or ``custom:<name>`` (null only with level ``none``);
    a custom method names its ``compensation_endpoint``; level ``none``
    documents itself in ``compensation_notes``; ``temporary`` retention states
    its ``retention_duration_seconds``.
    """
    warnings: List[Tuple[str, str]] = []
    rev = manifest.reversibility
    if rev is not None:
        method = rev.compensation_method
        path = format_path(["reversibility", "compensation_method"])
        if isinstance(method, str):
            if rev.standard_method is None and rev.custom_method is None:
                warnings.append((path, f"`{method}` is neither a standard method nor `custom:<name>`"))
            if rev.custom_method is not None and rev.compensation_endpoint is None:
                warnings.append((format_path(["reversibility", "compensation_endpoint"]), "a custom compensation method should name its endpoint"))
            if rev.level is ReversibilityLevel.NONE:
                warnings.append((path, "level `none` with a compensation method"))
        elif method is None and rev.level is not ReversibilityLevel.NONE:
            warnings.append((path, f"null compensation method with level `{rev.level.value}`"))
        if rev.level is ReversibilityLevel.NONE and not rev.compensation_notes:
            warnings.append((format_path(["reversibility", "compensation_notes"]), "an irreversible agent must document it"))
    privacy = manifest.privacy
    if privacy is not None and privacy.retention_policy is RetentionPolicy.TEMPORARY and privacy.retention_duration_seconds is None:
        warnings.append((format_path(["privacy", "retention_duration_seconds"]), "`temporary` retention without a duration"))
    return warnings
