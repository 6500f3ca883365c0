"""The IATP capability manifest (IATP-001) and its parts, and ``spec_warnings``:
the advice of IATP-001/002 that the schema leaves open.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from types import MappingProxyType
from typing import Any, ClassVar, List, Mapping, Optional, Tuple, Union

from ..errors import format_path
from ._enums import ABSENT, AuthMethod, CompensationMethod, ReversibilityLevel, RetentionPolicy, TrustLevel, _Absent
from ._model import _DATACLASS, _NULLABLE, _Int, _Part, _extra, _manifest_part, _member, _parse_time, _with_defaults


@dataclasses.dataclass(**_DATACLASS)
class Identity(_Part):
    """``identity``: who the agent is.  ``verification_key`` is a *claimed* key, kept as given."""

    _SCHEMA: ClassVar[Tuple[str, ...]] = _manifest_part("identity")

    agent_id: str = _member(default=dataclasses.MISSING)
    owner: str = _member(default=dataclasses.MISSING)
    verification_key: Optional[str] = _member()
    contact: Optional[str] = _member()
    extra: Mapping[str, Any] = _extra()


@dataclasses.dataclass(**_DATACLASS)
class Capabilities(_Part):
    """``capabilities``: idempotency, concurrency and SLA promises."""

    _SCHEMA: ClassVar[Tuple[str, ...]] = _manifest_part("capabilities")

    idempotency: Optional[bool] = _member()
    idempotency_duration_seconds: Optional[int] = _member(kind=_Int)
    concurrency_limit: Optional[int] = _member(kind=_Int)
    sla_latency_ms: Optional[int] = _member(kind=_Int)
    sla_availability: Optional[float] = _member()
    extra: Mapping[str, Any] = _extra()

    DEFAULTS: ClassVar[Mapping[str, Any]] = MappingProxyType({"idempotency": False})

    def with_defaults(self) -> "Capabilities":
        """A copy with the schema's defaults filled in where a member is absent."""
        return _with_defaults(self)


@dataclasses.dataclass(**_DATACLASS)
class UndoConditions(_Part):
    """``reversibility.undo_conditions``: the state after which undo is impossible."""

    _SCHEMA: ClassVar[Tuple[str, ...]] = _manifest_part("reversibility", "undo_conditions")

    until_state: Optional[str] = _member()
    check_endpoint: Optional[str] = _member()
    extra: Mapping[str, Any] = _extra()


@dataclasses.dataclass(**_DATACLASS)
class Reversibility(_Part):
    """``reversibility`` (IATP-002).  ``compensation_method`` is ``ABSENT``, ``None`` (JSON null) or a string."""

    _SCHEMA: ClassVar[Tuple[str, ...]] = _manifest_part("reversibility")

    level: ReversibilityLevel = _member(kind=ReversibilityLevel, default=dataclasses.MISSING)
    undo_window_seconds: Optional[int] = _member(kind=_Int)
    compensation_method: Union[str, None, _Absent] = _member(kind=_NULLABLE, default=ABSENT)
    compensation_sla_ms: Optional[int] = _member(kind=_Int)
    compensation_notes: Optional[str] = _member()
    compensation_endpoint: Optional[str] = _member()
    undo_conditions: Optional[UndoConditions] = _member(kind=UndoConditions)
    extra: Mapping[str, Any] = _extra()

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


@dataclasses.dataclass(**_DATACLASS)
class Privacy(_Part):
    """``privacy``: retention, human review, training use, encryption."""

    _SCHEMA: ClassVar[Tuple[str, ...]] = _manifest_part("privacy")

    retention_policy: Optional[RetentionPolicy] = _member(kind=RetentionPolicy)
    retention_duration_seconds: Optional[int] = _member(kind=_Int)
    storage_location: Optional[str] = _member()
    human_in_loop: Optional[bool] = _member()
    training_consent: Optional[bool] = _member()
    encryption_at_rest: Optional[bool] = _member()
    encryption_in_transit: Optional[bool] = _member()
    data_processing_addendum: Optional[str] = _member()
    extra: Mapping[str, Any] = _extra()

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


@dataclasses.dataclass(**_DATACLASS)
class Authentication(_Part):
    """``authentication``: accepted methods and whether authentication is required."""

    _SCHEMA: ClassVar[Tuple[str, ...]] = _manifest_part("authentication")

    methods: Optional[Tuple[AuthMethod, ...]] = _member(kind=("items", AuthMethod))
    required: Optional[bool] = _member()
    extra: Mapping[str, Any] = _extra()

    DEFAULTS: ClassVar[Mapping[str, Any]] = MappingProxyType({"required": False})

    def with_defaults(self) -> "Authentication":
        """A copy with ``required`` false where it is absent."""
        return _with_defaults(self)


@dataclasses.dataclass(**_DATACLASS)
class RateLimiting(_Part):
    """``rate_limiting``: request rates and the token-bucket burst."""

    _SCHEMA: ClassVar[Tuple[str, ...]] = _manifest_part("rate_limiting")

    requests_per_second: Optional[float] = _member()
    requests_per_minute: Optional[float] = _member()
    requests_per_hour: Optional[float] = _member()
    burst_limit: Optional[int] = _member(kind=_Int)
    extra: Mapping[str, Any] = _extra()


@dataclasses.dataclass(**_DATACLASS)
class CapabilityManifest(_Part):
    """An IATP capability manifest, exactly as the published schema defines it.

    Required: ``identity``, ``trust_level``, ``protocol_version``
    (``<major>.<minor>``).  ``schema_uri`` is the ``$schema`` member.  Members the
    schema does not name (``scopes``, the ajpcore ``signature``, future fields)
    are in ``extra`` and round-trip exactly.
    """

    _SCHEMA: ClassVar[Tuple[str, ...]] = _manifest_part()

    identity: Identity = _member(kind=Identity, default=dataclasses.MISSING)
    trust_level: TrustLevel = _member(kind=TrustLevel, default=dataclasses.MISSING)
    protocol_version: str = _member(default=dataclasses.MISSING)
    schema_uri: Optional[str] = _member("$schema")
    capabilities: Optional[Capabilities] = _member(kind=Capabilities)
    reversibility: Optional[Reversibility] = _member(kind=Reversibility)
    privacy: Optional[Privacy] = _member(kind=Privacy)
    authentication: Optional[Authentication] = _member(kind=Authentication)
    rate_limiting: Optional[RateLimiting] = _member(kind=RateLimiting)
    manifest_version: Optional[str] = _member()
    updated_at: Optional[str] = _member()
    extra: Mapping[str, Any] = _extra()

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
        return dataclasses.replace(self, extra=extra)


for _cls in (
    Identity, Capabilities, UndoConditions, Reversibility, Privacy, Authentication,
    RateLimiting, CapabilityManifest,
):
    _cls._declare()
del _cls


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
