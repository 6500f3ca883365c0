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

import base64
import dataclasses
import datetime as _dt
import enum
import functools
import hmac
import json
import re
import sys
from importlib import resources
from types import MappingProxyType
from typing import (
    Any,
    ClassVar,
    Dict,
    FrozenSet,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Type,
    TypeVar,
    Union,
)

from . import _core
from ._jsoncopy import copy_json, copy_json_collecting
from .errors import (
    BadSignature,
    TrustRefused,
    KeyFormatError,
    MalformedSignature,
    TimestampError,
    UnsupportedScheme,
    ValidationError,
    format_path,
)

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

# Frozen, slotted, keyword-only on every Python that has the options (3.10+);
# on 3.9 the classes are frozen and take their required fields first.
_DATACLASS: Dict[str, Any] = {"frozen": True}
if sys.version_info >= (3, 10):
    _DATACLASS.update(slots=True, kw_only=True)


class _Absent(enum.Enum):
    ABSENT = "ABSENT"

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


ABSENT = _Absent.ABSENT
"""Marks a member that is absent where ``None`` means JSON ``null`` (``compensation_method``)."""


# ---------------------------------------------------------------------------
# Enumerations of the schema
# ---------------------------------------------------------------------------


class TrustLevel(str, enum.Enum):
    """``trust_level``: the trust class an agent claims (IATP-001 section 3.2)."""

    VERIFIED_PARTNER = "verified_partner"
    TRUSTED = "trusted"
    STANDARD = "standard"
    UNKNOWN = "unknown"
    UNTRUSTED = "untrusted"


class ReversibilityLevel(str, enum.Enum):
    """``reversibility.level`` (IATP-002 section 2)."""

    FULL = "full"
    PARTIAL = "partial"
    NONE = "none"


class CompensationMethod(str, enum.Enum):
    """The standard compensation methods of IATP-002 section 3.1 (``custom:<name>`` is the other form)."""

    ROLLBACK = "rollback"
    DELETE = "delete"
    REFUND = "refund"
    REFUND_MINUS_FEE = "refund_minus_fee"
    COMPENSATING_TRANSACTION = "compensating_transaction"
    MANUAL_INTERVENTION = "manual_intervention"
    BEST_EFFORT = "best_effort"


class RetentionPolicy(str, enum.Enum):
    """``privacy.retention_policy``; ``temporary`` when absent."""

    EPHEMERAL = "ephemeral"
    TEMPORARY = "temporary"
    PERMANENT = "permanent"
    FOREVER = "forever"


class AuthMethod(str, enum.Enum):
    """An item of ``authentication.methods``."""

    NONE = "none"
    API_KEY = "api_key"
    OAUTH2 = "oauth2"
    MUTUAL_TLS = "mutual_tls"
    JWT = "jwt"


class ChainStatus(str, enum.Enum):
    """Where one transaction of a compensation chain stands (IATP-002 sections 5.2, 6.2)."""

    PENDING = "pending"
    COMPLETED = "completed"
    COMPENSATED = "compensated"
    FAILED = "failed"


# ---------------------------------------------------------------------------
# Schemas and validation
# ---------------------------------------------------------------------------


SCHEMA_NAMES = (
    "iatp-capability-manifest",
    "iatp-compensation-request",
    "iatp-compensation-response",
    "iatp-compensation-chain",
    "iatp-compensation-chain-entry",
    "iatp-audit-event",
    "iatp-attestation",
)
"""Names of the IATP schemas shipped in ``ajpcore/schemas/`` (``<name>.schema.json``)."""


@functools.lru_cache(maxsize=None)
def _schema_text(name: str) -> str:
    if name not in SCHEMA_NAMES:
        raise ValueError(f"unknown IATP schema `{name}` (one of {', '.join(SCHEMA_NAMES)})")
    return resources.files("ajpcore.schemas").joinpath(f"{name}.schema.json").read_text("utf-8")


def schema(name: str) -> Dict[str, Any]:
    """A fresh copy of the shipped Draft 2020-12 schema ``ajpcore/schemas/<name>.schema.json``.

    ``name`` is one of ``SCHEMA_NAMES``; raises ``ValueError`` for any other.
    """
    return json.loads(_schema_text(name))


# The published schema's validators treat `email`, `uri` and `uri-reference` as
# annotations, and IATP-002's own examples use endpoints such as
# `POST /compensate/{transaction_id}` that are no URI reference: only `date-time`
# is asserted.
_ANNOTATION_FORMATS = {"email": None, "uri": None, "uri-reference": None}


@functools.lru_cache(maxsize=None)
def _validator(name: str, *subpath: str) -> Any:
    from ._schema import compile_schema

    node: Any = schema(name)
    for key in subpath:
        node = node["properties"][key]
    return compile_schema(node, formats=_ANNOTATION_FORMATS)


def _problems(name: str, subpath: Tuple[str, ...], value: Any) -> List[Tuple[str, str]]:
    return list(_validator(name, *subpath).errors(value))


# ---------------------------------------------------------------------------
# Typed parts: one declaration per member (attribute, JSON name, kind)
# ---------------------------------------------------------------------------

_P = TypeVar("_P", bound="_Part")


def _member(json_name: Optional[str] = None, kind: Any = None, default: Any = None) -> Any:
    return dataclasses.field(default=default, metadata={"json": json_name, "kind": kind})


def _extra() -> Any:
    return dataclasses.field(
        default_factory=lambda: MappingProxyType({}), metadata={"json": None, "kind": "extra"}
    )


class _Int:
    """JSON Schema ``integer``: an integral float such as ``10.0`` is an integer too."""


_NO_EXTRA: Mapping[str, Any] = MappingProxyType({})


def _integer(value: Any) -> Any:
    return int(value) if type(value) is float else value


def _converter(kind: Any) -> Any:
    """How ``_from_valid`` turns a schema-valid JSON value into the member's Python value."""
    if kind is None or kind == _NULLABLE:
        return None
    if kind is _Int:
        return _integer
    if isinstance(kind, type) and issubclass(kind, _Part):
        return kind._from_valid
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return {member.value: member for member in kind}.__getitem__
    item = _converter(kind[1])
    return lambda values: tuple(map(item, values))


class _Part:
    """Shared machinery of the typed IATP objects (construction, JSON form, validation)."""

    __slots__ = ()
    _SCHEMA: ClassVar[Tuple[str, ...]] = ()  # schema name, then the property path to this part
    _MEMBERS: ClassVar[Tuple[Tuple[str, str, Any, Any], ...]] = ()  # (attr, json, kind, default)
    _NAMES: ClassVar[FrozenSet[str]] = frozenset()
    _PLAN: ClassVar[Tuple[Tuple[str, str, Any, Any], ...]] = ()  # (attr, json, converter, default)

    extra: Mapping[str, Any]

    @classmethod
    def _declare(cls) -> None:
        members = []
        plan = []
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            kind = f.metadata.get("kind")
            if kind == "extra":
                continue
            name = f.metadata.get("json") or f.name
            members.append((f.name, name, kind, f.default))
            plan.append((f.name, name, _converter(kind), f.default))
        cls._MEMBERS = tuple(members)
        cls._PLAN = tuple(plan)
        cls._NAMES = frozenset(m[1] for m in members)

    # -- from JSON ------------------------------------------------------------

    @classmethod
    def _from_valid(cls: Type[_P], data: Dict[str, Any]) -> _P:
        """Build from a value the schema accepted (no second validation, no copy)."""
        obj = object.__new__(cls)
        setattr_ = object.__setattr__
        present = 0
        for attr, name, convert, default in cls._PLAN:
            if name in data:
                present += 1
                value = data[name]
                setattr_(obj, attr, value if convert is None else convert(value))
            else:
                setattr_(obj, attr, default)
        if present == len(data):
            setattr_(obj, "extra", _NO_EXTRA)
        else:
            names = cls._NAMES
            setattr_(obj, "extra", MappingProxyType({k: v for k, v in data.items() if k not in names}))
        return obj

    @classmethod
    def from_dict(cls: Type[_P], data: Mapping[str, Any]) -> _P:
        """Validate a decoded JSON object and build the typed value.

        Accepts exactly what the published schema accepts for this object.  The
        input is copied (never aliased).  Raises ``ValidationError`` listing
        every problem, each with its JSON path.
        """
        return cls._from_checked(copy_json(data))

    @classmethod
    def _from_checked(cls: Type[_P], data: Any) -> _P:
        problems = _problems(cls._SCHEMA[0], cls._SCHEMA[1:], data)
        if problems:
            raise ValidationError(problems)
        return cls._from_valid(data)

    @classmethod
    def from_json(cls: Type[_P], data: Union[bytes, bytearray, memoryview, str]) -> _P:
        """Decode ``data`` strictly (``ajpcore.decode``), validate it and build the typed value.

        Raises ``DecodeError`` for bytes that are not strict I-JSON and
        ``ValidationError`` (a ``DecodeError``) listing every schema problem.
        """
        return cls._from_checked(_core.impl.decode(data))

    # -- to JSON --------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        """The JSON object of this value: declared members that are present, then ``extra``.

        A fresh structure on every call; ``from_dict(x.to_dict()) == x``.
        """
        out: Dict[str, Any] = {}
        for attr, name, kind, _default in self._MEMBERS:
            value = getattr(self, attr)
            if value is None and kind is not _NULLABLE or value is ABSENT:
                continue
            if isinstance(value, _Part):
                value = value.to_dict()
            elif isinstance(value, enum.Enum):
                value = value.value
            elif isinstance(value, tuple):
                value = [v.to_dict() if isinstance(v, _Part) else v.value for v in value]
            out[name] = value
        for key, value in self.extra.items():
            out[key] = copy_json(value)
        return out

    def to_json(self) -> bytes:
        """RFC 8785 canonical bytes of ``to_dict()``."""
        return _core.impl.canonicalize(self.to_dict())

    def __reduce__(self) -> Any:
        # Pickle and copy through the JSON form (the read-only mapping of extra
        # members cannot be pickled itself); unpickling validates again.
        return (type(self).from_dict, (self.to_dict(),))

    # -- direct construction --------------------------------------------------

    def __post_init__(self) -> None:
        # Objects built by hand pass the same schema as parsed ones: coerce enum
        # strings and lists, then validate the JSON form this object would write.
        errors: List[Tuple[str, str]] = []
        for attr, name, kind, _default in self._MEMBERS:
            value = getattr(self, attr)
            if value is None or value is ABSENT:
                continue
            steps = [name]
            if isinstance(kind, type) and issubclass(kind, _Part):
                if not isinstance(value, kind):
                    errors.append((format_path(steps), f"Expected `{kind.__name__}`, got `{type(value).__name__}`"))
            elif isinstance(kind, type) and issubclass(kind, enum.Enum):
                if not isinstance(value, kind):
                    try:
                        object.__setattr__(self, attr, kind(value))
                    except ValueError:
                        errors.append((format_path(steps), f"Expected one of {_choices(kind)}, got `{value!r}`"))
            elif kind is _Int:
                if type(value) is float and value.is_integer():
                    object.__setattr__(self, attr, int(value))
            elif isinstance(kind, tuple):
                item_kind = kind[1]
                if not isinstance(value, (list, tuple)):
                    errors.append((format_path(steps), f"Expected `array`, got `{type(value).__name__}`"))
                    continue
                items = []
                for i, item in enumerate(value):
                    if issubclass(item_kind, _Part):
                        if not isinstance(item, item_kind):
                            errors.append((format_path(steps + [i]), f"Expected `{item_kind.__name__}`, got `{type(item).__name__}`"))
                    elif not isinstance(item, item_kind):
                        try:
                            item = item_kind(item)
                        except ValueError:
                            errors.append((format_path(steps + [i]), f"Expected one of {_choices(item_kind)}, got `{item!r}`"))
                    items.append(item)
                object.__setattr__(self, attr, tuple(items))
        if not isinstance(self.extra, Mapping):
            errors.append(("$", f"Expected a mapping of extra members, got `{type(self.extra).__name__}`"))
        else:
            clashes = sorted(set(self.extra) & self._NAMES)
            for key in clashes:
                errors.append((format_path([key]), "Declared member given in `extra`"))
            extra = copy_json_collecting(dict(self.extra), errors)
            object.__setattr__(self, "extra", MappingProxyType(extra if isinstance(extra, dict) else {}))
        if errors:
            raise ValidationError(errors)
        document = self.to_dict()
        copy_json_collecting(document, errors)  # NaN, huge ints, lone surrogates, depth of the whole
        errors.extend(_problems(self._SCHEMA[0], self._SCHEMA[1:], document))
        if errors:
            raise ValidationError(errors)


def _choices(kind: Type[enum.Enum]) -> str:
    return ", ".join(f"`{m.value}`" for m in kind)


_NULLABLE = "nullable"  # kind of a member whose JSON null is a value, distinct from absence


def _manifest_part(*path: str) -> Tuple[str, ...]:
    return ("iatp-capability-manifest",) + path


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


def _with_defaults(part: _P) -> _P:
    defaults: Mapping[str, Any] = getattr(part, "DEFAULTS")
    changes = {k: v for k, v in defaults.items() if getattr(part, k) is None}
    return dataclasses.replace(part, **changes) if changes else part


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


# -- compensation (IATP-002) ------------------------------------------------


@dataclasses.dataclass(**_DATACLASS)
class CompensationRequest(_Part):
    """Body of ``POST /compensate/{transaction_id}``: ``reason`` and RFC 3339 ``timestamp``."""

    _SCHEMA: ClassVar[Tuple[str, ...]] = ("iatp-compensation-request",)

    reason: str = _member(default=dataclasses.MISSING)
    timestamp: str = _member(default=dataclasses.MISSING)
    extra: Mapping[str, Any] = _extra()


@dataclasses.dataclass(**_DATACLASS)
class CompensationResponse(_Part):
    """An agent's answer to a compensation request (``success``, amounts, time, ``error``)."""

    _SCHEMA: ClassVar[Tuple[str, ...]] = ("iatp-compensation-response",)

    success: bool = _member(default=dataclasses.MISSING)
    compensation_applied: Optional[str] = _member()
    amount_returned: Optional[float] = _member()
    fee_charged: Optional[float] = _member()
    completion_time_ms: Optional[int] = _member(kind=_Int)
    error: Optional[str] = _member()
    extra: Mapping[str, Any] = _extra()


@dataclasses.dataclass(**_DATACLASS)
class ChainEntry(_Part):
    """One transaction of a saga's compensation chain.

    ``status`` ``failed`` means the transaction itself failed (nothing to undo);
    a compensation that was tried and failed is ``failed`` with the extra member
    ``compensation_attempted: true`` (what ``CompensationChain.record`` writes),
    since IATP-002 uses the one word for both.
    """

    _SCHEMA: ClassVar[Tuple[str, ...]] = ("iatp-compensation-chain-entry",)

    agent_id: str = _member(default=dataclasses.MISSING)
    transaction_id: str = _member(default=dataclasses.MISSING)
    status: ChainStatus = _member(kind=ChainStatus, default=dataclasses.MISSING)
    compensation_method: Union[str, None, _Absent] = _member(kind=_NULLABLE, default=ABSENT)
    extra: Mapping[str, Any] = _extra()


@dataclasses.dataclass(**_DATACLASS)
class CompensationChain(_Part):
    """The saga record of one trace (IATP-002 section 5.2).

    ``entries`` (JSON ``compensation_chain``) are in compensation order: the
    transaction executed last comes first, because a saga undoes its steps
    backwards.  ``from_execution`` builds a chain from the steps in call order;
    ``next_to_compensate`` and ``record`` drive the undo one step at a time.
    """

    _SCHEMA: ClassVar[Tuple[str, ...]] = ("iatp-compensation-chain",)

    trace_id: str = _member(default=dataclasses.MISSING)
    entries: Tuple[ChainEntry, ...] = _member(
        "compensation_chain", kind=("items", ChainEntry), default=dataclasses.MISSING
    )
    extra: Mapping[str, Any] = _extra()

    @classmethod
    def from_execution(cls, trace_id: str, steps: Sequence[ChainEntry]) -> "CompensationChain":
        """The chain for ``steps`` given in the order they executed.

        Each ``completed`` step becomes ``pending`` (it must be undone); a
        ``failed`` step stays ``failed`` (nothing of it to undo).  The result
        lists the steps backwards, the order in which they are compensated.
        Raises ``ValidationError`` for a step in any other status.
        """
        entries = []
        errors = []
        for i, step in enumerate(steps):
            if step.status is ChainStatus.COMPLETED:
                step = dataclasses.replace(step, status=ChainStatus.PENDING)
            elif step.status is not ChainStatus.FAILED:
                errors.append((format_path(["steps", i, "status"]), "Expected `completed` or `failed` for an executed step, got " f"`{step.status.value}`"))
            entries.append(step)
        if errors:
            raise ValidationError(errors)
        return cls(trace_id=trace_id, entries=tuple(reversed(entries)))

    def next_to_compensate(self) -> Optional[ChainEntry]:
        """The first ``pending`` entry in compensation order, or ``None`` when none is left.

        Stops at ``None`` too when an earlier compensation failed after being
        attempted: a saga does not undo an older step past a newer one it could
        not undo.
        """
        for entry in self.entries:
            if entry.status is ChainStatus.PENDING:
                return entry
            if entry.status is ChainStatus.FAILED and entry.extra.get("compensation_attempted") is True:
                return None
        return None

    def record(self, transaction_id: str, status: Union[ChainStatus, str]) -> "CompensationChain":
        """A copy in which the entry of ``transaction_id`` has ``status``
        (``compensated``, or ``failed`` marked ``compensation_attempted: true``).

        Only the entry ``next_to_compensate`` names may be recorded, which keeps
        the reverse order.  Raises ``ValidationError`` otherwise.
        """
        status = ChainStatus(status)
        nxt = self.next_to_compensate()
        if nxt is None or nxt.transaction_id != transaction_id:
            expected = "nothing" if nxt is None else f"`{nxt.transaction_id}`"
            raise ValidationError([(format_path(["compensation_chain"]), f"Out of order: `{transaction_id}` recorded while {expected} is next to compensate")])
        if status not in (ChainStatus.COMPENSATED, ChainStatus.FAILED):
            raise ValidationError([(format_path(["status"]), f"Expected `compensated` or `failed`, got `{status.value}`")])
        entries = []
        for entry in self.entries:
            if entry is nxt:
                extra = dict(entry.extra)
                if status is ChainStatus.FAILED:
                    extra["compensation_attempted"] = True
                entry = dataclasses.replace(entry, status=status, extra=extra)
            entries.append(entry)
        return dataclasses.replace(self, entries=tuple(entries))

    @property
    def complete(self) -> bool:
        """True when no entry is ``pending``."""
        return all(e.status is not ChainStatus.PENDING for e in self.entries)


@dataclasses.dataclass(**_DATACLASS)
class AuditEvent(_Part):
    """One audit-trail record of an undo (IATP-002 section 8.2)."""

    _SCHEMA: ClassVar[Tuple[str, ...]] = ("iatp-audit-event",)

    event: str = _member(default=dataclasses.MISSING)
    trace_id: str = _member(default=dataclasses.MISSING)
    timestamp: str = _member(default=dataclasses.MISSING)
    requested_by: Optional[str] = _member()
    reason: Optional[str] = _member()
    result: Optional[str] = _member()
    extra: Mapping[str, Any] = _extra()


@dataclasses.dataclass(**_DATACLASS)
class Attestation(_Part):
    """An agent attestation (IATP-001 section 5.2): a control plane vouches for the
    code (``codebase_hash``) and configuration (``config_hash``) an agent runs,
    from ``timestamp`` until ``expires_at``.  Check it with ``verify_attestation``."""

    _SCHEMA: ClassVar[Tuple[str, ...]] = ("iatp-attestation",)

    agent_id: str = _member(default=dataclasses.MISSING)
    codebase_hash: str = _member(default=dataclasses.MISSING)
    config_hash: str = _member(default=dataclasses.MISSING)
    signature: str = _member(default=dataclasses.MISSING)
    signing_key_id: str = _member(default=dataclasses.MISSING)
    timestamp: str = _member(default=dataclasses.MISSING)
    expires_at: str = _member(default=dataclasses.MISSING)
    extra: Mapping[str, Any] = _extra()


for _cls in (
    Identity, Capabilities, UndoConditions, Reversibility, Privacy, Authentication,
    RateLimiting, CapabilityManifest, CompensationRequest, CompensationResponse,
    ChainEntry, CompensationChain, AuditEvent, Attestation,
):
    _cls._declare()
del _cls


# ---------------------------------------------------------------------------
# Trust score (IATP-001 section 2.3)
# ---------------------------------------------------------------------------

_BASE_SCORE = {
    TrustLevel.VERIFIED_PARTNER: 10,
    TrustLevel.TRUSTED: 7,
    TrustLevel.STANDARD: 5,
    TrustLevel.UNKNOWN: 2,
    TrustLevel.UNTRUSTED: 0,
}
ALLOW_THRESHOLD = 7
"""Lowest trust score that IATP-001 section 2.3 allows without a warning."""


@dataclasses.dataclass(**_DATACLASS)
class TrustScore:
    """The outcome of ``trust_score``.

    ``score`` is 0..10; ``decision`` is ``"allow"`` (score >= 7), ``"warn"``
    (answer 449 and require an override) or ``"block"`` (403, only when
    sensitive data meets the retention the specification forbids for it).
    ``terms`` lists each rule that applied as ``(label, points)``, the base
    first; ``reasons`` says why the decision is not ``allow``.
    """

    score: int
    decision: str
    status: int
    terms: Tuple[Tuple[str, int], ...]
    reasons: Tuple[str, ...]


def trust_score(
    manifest: CapabilityManifest, *, sensitive_data: Iterable[str] = ()
) -> TrustScore:
    """IATP-001 section 2.3: score a manifest and decide allow / warn / block.

    Base by ``trust_level`` (verified_partner 10, trusted 7, standard 5,
    unknown 2, untrusted 0); +2 when ``reversibility.level`` is ``full`` or
    ``partial`` (a manifest that declares no reversibility gets nothing); +1
    for ``ephemeral`` retention, -1 for ``permanent`` or ``forever``; -2 when
    ``human_in_loop``; -1 when ``training_consent``; absent privacy members take
    the schema defaults (``temporary``, false, false).  Clamped to 0..10.
    Score >= 7 allows (200), anything lower warns (449).

    ``sensitive_data`` names what the request carries: ``"credit_card"`` with
    ``permanent`` or ``forever`` retention, or ``"ssn"`` with any retention but
    ``ephemeral``, blocks (403) whatever the score.  Raises ``ValueError`` for
    another name.
    """
    if not isinstance(manifest, CapabilityManifest):
        raise TypeError(f"Expected `CapabilityManifest`, got `{type(manifest).__name__}`")
    sensitive = {sensitive_data} if isinstance(sensitive_data, str) else set(sensitive_data)
    unknown_kinds = sensitive - {"credit_card", "ssn"}
    if unknown_kinds:
        raise ValueError(f"unknown sensitive data kind(s): {sorted(unknown_kinds)}")
    level = manifest.trust_level
    terms: List[Tuple[str, int]] = [(f"trust_level {level.value}", _BASE_SCORE[level])]
    rev = manifest.reversibility
    if rev is not None and rev.level is not ReversibilityLevel.NONE:
        terms.append((f"reversibility {rev.level.value}", 2))
    privacy = (manifest.privacy or Privacy()).with_defaults()
    retention = privacy.retention_policy
    if retention is RetentionPolicy.EPHEMERAL:
        terms.append(("retention ephemeral", 1))
    elif retention in (RetentionPolicy.PERMANENT, RetentionPolicy.FOREVER):
        terms.append((f"retention {retention.value}", -1))
    if privacy.human_in_loop:
        terms.append(("human in loop", -2))
    if privacy.training_consent:
        terms.append(("training consent", -1))
    score = max(0, min(10, sum(points for _label, points in terms)))

    reasons: List[str] = []
    if "credit_card" in sensitive and retention in (RetentionPolicy.PERMANENT, RetentionPolicy.FOREVER):
        reasons.append(f"credit card data with {retention.value} retention")
    if "ssn" in sensitive and retention is not RetentionPolicy.EPHEMERAL:
        reasons.append(f"SSN with {retention.value} retention")
    if reasons:
        return TrustScore(score=score, decision="block", status=403, terms=tuple(terms), reasons=tuple(reasons))
    if score >= ALLOW_THRESHOLD:
        return TrustScore(score=score, decision="allow", status=200, terms=tuple(terms), reasons=())
    reasons.append(f"low trust score ({score}/10)")
    if rev is None or rev.level is ReversibilityLevel.NONE:
        reasons.append("no reversibility support")
    if retention in (RetentionPolicy.PERMANENT, RetentionPolicy.FOREVER):
        reasons.append("data stored permanently")
    return TrustScore(score=score, decision="warn", status=449, terms=tuple(terms), reasons=tuple(reasons))


# ---------------------------------------------------------------------------
# Undo decision (IATP-002 section 4)
# ---------------------------------------------------------------------------


@dataclasses.dataclass(**_DATACLASS)
class UndoDecision:
    """The outcome of ``undo_decision``: ``allowed``, a ``reason`` and the ``deadline``
    (the last instant of the time window, ``None`` when no time limit applies, the
    largest ``datetime`` when the window reaches beyond year 9999)."""

    allowed: bool
    reason: str
    deadline: Optional[_dt.datetime] = None


def _parse_time(value: Union[str, _dt.datetime], name: str) -> _dt.datetime:
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValidationError([(format_path([name]), "Expected an aware `datetime` (with a UTC offset), got a naive one")])
        return value
    if isinstance(value, str):
        from .timestamps import parse_timestamp

        try:
            return parse_timestamp(value)
        except TimestampError as exc:
            raise ValidationError([(format_path([name]), str(exc))]) from None
    raise ValidationError([(format_path([name]), f"Expected `datetime` or RFC 3339 `str`, got `{type(value).__name__}`")])


def undo_decision(
    manifest: CapabilityManifest,
    *,
    executed_at: Union[str, _dt.datetime],
    now: Union[str, _dt.datetime],
    state: Union[str, Iterable[str], None] = None,
) -> UndoDecision:
    """May the operation executed at ``executed_at`` still be undone at ``now``?

    IATP-002 section 4: ``reversibility.level`` ``none`` (or no reversibility
    declared) is ``"irreversible"``.  With ``undo_conditions.until_state``
    declared and ``state`` known (the current state, or an iterable of every
    state reached so far), reaching that state refuses (``"state `shipped`
    reached"``) and not reaching it allows whatever the time (section 4.2:
    "until it ships, regardless of time").  Otherwise the time window applies:
    ``undo_window_seconds`` 0 (or absent) means no limit; else undo is allowed
    while ``now - executed_at <= undo_window_seconds`` and refused after
    (``"undo window expired"``).  Times are aware ``datetime`` objects or strict
    RFC 3339 strings; raises ``ValidationError`` for anything else.
    """
    if not isinstance(manifest, CapabilityManifest):
        raise TypeError(f"Expected `CapabilityManifest`, got `{type(manifest).__name__}`")
    executed = _parse_time(executed_at, "executed_at")
    current = _parse_time(now, "now")
    rev = manifest.reversibility
    if rev is None or rev.level is ReversibilityLevel.NONE:
        return UndoDecision(allowed=False, reason="irreversible")
    until = rev.undo_conditions.until_state if rev.undo_conditions is not None else None
    if until is not None and state is not None:
        reached = {state} if isinstance(state, str) else set(state)
        if until in reached:
            return UndoDecision(allowed=False, reason=f"state `{until}` reached")
        return UndoDecision(allowed=True, reason=f"state `{until}` not reached")
    window = rev.undo_window_seconds
    if not window:
        return UndoDecision(allowed=True, reason="no undo time limit")
    # Exact integer microseconds: a window may be far larger than datetime's range.
    elapsed = current - executed
    elapsed_us = (elapsed.days * 86_400 + elapsed.seconds) * 1_000_000 + elapsed.microseconds
    try:
        deadline = executed + _dt.timedelta(seconds=window)
    except OverflowError:  # beyond year 9999
        deadline = _dt.datetime.max.replace(tzinfo=_dt.timezone.utc)
    if elapsed_us > window * 1_000_000:
        return UndoDecision(allowed=False, reason="undo window expired", deadline=deadline)
    return UndoDecision(allowed=True, reason="within undo window", deadline=deadline)


# ---------------------------------------------------------------------------
# The reference Python package's internal model
# ---------------------------------------------------------------------------

# Durations of the reference model's `undo_window` ("24h", "7d") and `sla_latency`
# ("2000ms", "5s"): digits and one unit.
_DURATION = re.compile(r"([0-9]+)(ms|s|m|h|d)", re.ASCII)
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
# Where the reference model's defaults differ from the wire schema's, they are
# written out, so the wire manifest says what the model meant.
_REFERENCE_PRIVACY_DEFAULTS = {"human_review": False, "encryption_at_rest": True, "encryption_in_transit": True}


def manifest_from_reference_model(
    model: Mapping[str, Any], *, owner: str, protocol_version: str = "1.0"
) -> CapabilityManifest:
    """Convert the reference Python package's internal manifest model to a wire manifest.

    That model (``agent_id``, ``agent_version``, ``trust_level``,
    ``capabilities`` with ``reversibility``, ``idempotency``, ``undo_window``
    such as ``"24h"``, ``sla_latency`` such as ``"2000ms"``, ``rate_limit`` in
    requests per minute; ``privacy_contract`` with ``retention``,
    ``storage_location``, ``human_review``, encryption flags) is not what the
    published schema describes: it has no ``identity.owner`` (give ``owner``)
    and no ``protocol_version``.  Mapping: ``reversibility`` ->
    ``reversibility.level`` (default ``none``), ``undo_window`` ->
    ``undo_window_seconds``, ``sla_latency`` -> ``capabilities.sla_latency_ms``,
    ``rate_limit`` -> ``rate_limiting.requests_per_minute``, ``retention`` ->
    ``privacy.retention_policy``, ``human_review`` -> ``privacy.human_in_loop``;
    the model's defaults (trust ``standard``, no human review, encrypted at rest
    and in transit) are written out; ``agent_version``, ``scopes`` and other
    members are kept as extra members.  Raises ``ValidationError``: first for
    what cannot be converted (paths into ``model``), then for anything the
    converted manifest breaks (paths into the wire manifest).
    """
    errors: List[Tuple[str, str]] = []
    source = copy_json_collecting(model, errors)
    if errors:
        raise ValidationError(errors)
    if not isinstance(source, dict):
        raise ValidationError([("$", f"Expected `object`, got `{type(model).__name__}`")])

    def duration_ms(value: Any, where: List[Any]) -> Optional[int]:
        m = _DURATION.fullmatch(value) if isinstance(value, str) else None
        if m is None:
            errors.append((format_path(where), f"Expected a duration such as `24h` or `2000ms`, got `{value!r}`"))
            return None
        return int(m.group(1)) * _UNIT_MS[m.group(2)]

    capabilities = source.pop("capabilities", None)
    privacy_contract = source.pop("privacy_contract", None)
    for name, value in (("capabilities", capabilities), ("privacy_contract", privacy_contract)):
        if not isinstance(value, dict):
            errors.append((format_path([name]), "Expected `object`" if value is not None else f"Object missing required field `{name}`"))
    if errors:
        raise ValidationError(errors)
    assert isinstance(capabilities, dict) and isinstance(privacy_contract, dict)

    doc: Dict[str, Any] = {
        "identity": {"agent_id": source.pop("agent_id", None), "owner": owner},
        "trust_level": source.pop("trust_level", "standard"),
        "protocol_version": protocol_version,
    }
    caps: Dict[str, Any] = {}
    reversibility: Dict[str, Any] = {"level": capabilities.pop("reversibility", "none")}
    if "idempotency" in capabilities:
        caps["idempotency"] = capabilities.pop("idempotency")
    if "undo_window" in capabilities:
        window = capabilities.pop("undo_window")
        if window is not None:
            ms = duration_ms(window, ["capabilities", "undo_window"])
            if ms is not None and ms % 1000:
                errors.append((format_path(["capabilities", "undo_window"]), "An undo window is whole seconds"))
            elif ms is not None:
                reversibility["undo_window_seconds"] = ms // 1000
    if "sla_latency" in capabilities:
        latency = capabilities.pop("sla_latency")
        if latency is not None:
            ms = duration_ms(latency, ["capabilities", "sla_latency"])
            if ms is not None:
                caps["sla_latency_ms"] = ms
    rate_limit = capabilities.pop("rate_limit", None)
    caps.update(capabilities)  # members the model does not name stay with the capabilities
    privacy: Dict[str, Any] = {}
    if "retention" not in privacy_contract:
        errors.append((format_path(["privacy_contract"]), "Object missing required field `retention`"))
    else:
        privacy["retention_policy"] = privacy_contract.pop("retention")
    if "storage_location" in privacy_contract:
        location = privacy_contract.pop("storage_location")
        if location is not None:
            privacy["storage_location"] = location
    for name, default in _REFERENCE_PRIVACY_DEFAULTS.items():
        target = "human_in_loop" if name == "human_review" else name
        privacy[target] = privacy_contract.pop(name, default)
    privacy.update(privacy_contract)
    if errors:
        raise ValidationError(errors)
    doc["capabilities"] = caps
    doc["reversibility"] = reversibility
    doc["privacy"] = privacy
    if rate_limit is not None:
        doc["rate_limiting"] = {"requests_per_minute": rate_limit}
    doc.update(source)  # agent_version, scopes and anything else
    return CapabilityManifest._from_checked(doc)


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


# ---------------------------------------------------------------------------
# Manifest signatures (ajpcore extension)
# ---------------------------------------------------------------------------

MANIFEST_SIGNATURE_CONTEXT = b"iatp-manifest-v1:"
"""Domain-separation prefix of the bytes a manifest signature covers."""

_ED25519_PREFIX = "ed25519:"
_UNSIGNED = object()


def _manifest_body(manifest: Union[CapabilityManifest, Mapping[str, Any]]) -> Dict[str, Any]:
    if isinstance(manifest, CapabilityManifest):
        return manifest.to_dict()
    if isinstance(manifest, Mapping):
        return CapabilityManifest.from_dict(manifest).to_dict()
    raise TypeError(f"Expected `CapabilityManifest` or a JSON object, got `{type(manifest).__name__}`")


def manifest_signing_bytes(manifest: Union[CapabilityManifest, Mapping[str, Any]]) -> bytes:
    """``b"iatp-manifest-v1:" + signing_bytes(manifest)``: the bytes a manifest signature covers.

    ``signing_bytes`` is RFC 8785 canonical JSON of the manifest without its
    top-level ``signature``; every other member, at every depth, extra members
    included, is covered.  A dict is validated first (``ValidationError``).
    """
    from .signing import signing_bytes

    return MANIFEST_SIGNATURE_CONTEXT + signing_bytes(_manifest_body(manifest))


def _parse_manifest_signature(value: Any) -> bytes:
    from .signing import parse_signature

    if value is _UNSIGNED:
        raise MalformedSignature("The manifest has no `signature` - at `$.signature`")
    try:
        scheme, raw = parse_signature(value)
    except (MalformedSignature, UnsupportedScheme) as exc:
        raise type(exc)(f"{exc} - at `$.signature`") from None
    if scheme != "ed25519":
        raise UnsupportedScheme(f"Manifest signatures are `ed25519`, got `{scheme}` - at `$.signature`")
    return raw


def sign_manifest(manifest: Union[CapabilityManifest, Mapping[str, Any]], private_key: Any) -> CapabilityManifest:
    """Sign a manifest with ``private_key`` (``ajpcore.keys.Ed25519PrivateKey``); return the signed copy.

    The signature is ``"ed25519:" + base64(Ed25519(manifest_signing_bytes(m)))``
    (standard alphabet, padded, 88 characters) in the top-level ``signature``
    member; an existing signature is replaced.  ``identity.verification_key``
    must name the same key (any accepted public-key form), so the result
    verifies; raises ``KeyFormatError`` when it is absent, unusable or another key.
    """
    from .keys import Ed25519PublicKey

    typed = manifest if isinstance(manifest, CapabilityManifest) else CapabilityManifest.from_dict(manifest)
    claimed = typed.identity.verification_key
    public = private_key.public_key
    if claimed is None:
        raise KeyFormatError(
            "Manifest names no `identity.verification_key`; set it to "
            f"`{public.to_string(form='ed25519')}` - at `$.identity.verification_key`"
        )
    try:
        claimed_key = Ed25519PublicKey.from_string(claimed)
    except KeyFormatError as exc:
        raise type(exc)(
            f"`identity.verification_key` is not a usable Ed25519 key: {exc} - at `$.identity.verification_key`"
        ) from None
    if claimed_key != public:
        raise KeyFormatError("Private key does not match `identity.verification_key` - at `$.identity.verification_key`")
    raw = private_key.sign(manifest_signing_bytes(typed))
    return typed.with_signature(_ED25519_PREFIX + base64.b64encode(raw).decode("ascii"))


def verify_manifest(
    manifest: Union[CapabilityManifest, Mapping[str, Any]],
    *,
    public_key: Any = None,
    backend: Optional[str] = None,
) -> None:
    """Check a manifest's ``signature`` against its own ``identity.verification_key``.

    The claimed key is parsed only now, with the strict Ed25519 policy; a key
    that is absent or unusable (malformed, non-canonical, small order) refuses
    the signature with ``BadSignature`` naming why.  A valid signature proves
    only that the holder of the claimed key wrote the manifest; to bind the
    manifest to a key you already trust, pass it as ``public_key`` (an
    ``Ed25519PublicKey`` or any text form it reads): the claimed key must then
    be that key.  ``backend``: ``None`` / ``"cryptography"`` or ``"pynacl"``
    (same verdict).  A dict is validated first (``ValidationError``).

    Returns ``None`` when the signature holds; raises ``MalformedSignature``
    (missing, or not ``ed25519:`` + 88 canonical base64 characters),
    ``UnsupportedScheme`` (another scheme) or ``BadSignature``; a ``public_key``
    that is not a usable key raises ``KeyFormatError``.
    """
    from .keys import Ed25519PublicKey

    typed = manifest if isinstance(manifest, CapabilityManifest) else CapabilityManifest.from_dict(manifest)
    raw = _parse_manifest_signature(typed.extra.get("signature", _UNSIGNED))
    pinned = None
    if public_key is not None:
        pinned = public_key if isinstance(public_key, Ed25519PublicKey) else Ed25519PublicKey.from_string(public_key)
    claimed = typed.identity.verification_key
    where = " - at `$.identity.verification_key`"
    if claimed is None:
        raise BadSignature("The manifest names no key to check its signature with" + where)
    try:
        key = Ed25519PublicKey.from_string(claimed)
    except KeyFormatError as exc:
        raise BadSignature(f"`identity.verification_key` is not a usable Ed25519 key: {exc}{where}") from exc
    if pinned is not None and pinned != key:
        raise BadSignature("`identity.verification_key` is not the expected public key" + where)
    key.verify(raw, manifest_signing_bytes(typed), backend=backend)


# ---------------------------------------------------------------------------
# Attestations (IATP-001 section 5.2)
# ---------------------------------------------------------------------------

# The reference joins the four fields with ":" although hashes ("sha256:...") and
# timestamps contain ":" too, so one byte string can stand for several
# attestations.  Requiring an agent_id without ":" and hashes of exactly one
# "<algorithm>:<digest>" makes the split unique again (the timestamp is last and
# strict RFC 3339); anything else is refused before the signature is checked.
_ATTESTED_HASH = re.compile(r"[a-z0-9-]+:[^:]+")


def attestation_signing_bytes(attestation: Attestation) -> bytes:
    """UTF-8 of ``agent_id:codebase_hash:config_hash:timestamp``: what the reference signs.

    Raises ``BadSignature`` when the fields would make that string ambiguous
    (``agent_id`` containing ``:``, a hash that is not one ``<algorithm>:<digest>``).
    """
    if ":" in attestation.agent_id:
        raise BadSignature("An attested `agent_id` must not contain `:` (the signed fields are `:`-joined) - at `$.agent_id`")
    for name in ("codebase_hash", "config_hash"):
        if _ATTESTED_HASH.fullmatch(getattr(attestation, name)) is None:
            raise BadSignature(f"Expected `<algorithm>:<digest>` with a single `:` - at `$.{name}`")
    text = f"{attestation.agent_id}:{attestation.codebase_hash}:{attestation.config_hash}:{attestation.timestamp}"
    return text.encode("utf-8")


def verify_attestation(
    attestation: Union[Attestation, Mapping[str, Any]],
    public_key: Any,
    *,
    now: Union[str, _dt.datetime],
    expected_codebase_hash: Optional[str] = None,
    expected_config_hash: Optional[str] = None,
    backend: Optional[str] = None,
) -> None:
    """Check an attestation as IATP-001 section 5.2 asks: signature, freshness, hashes.

    ``public_key`` is the control plane's key: an ``Ed25519PublicKey``, the
    reference's form (standard base64 of the 32 raw bytes) or any text form
    ``Ed25519PublicKey.from_string`` reads.  The signature is the standard,
    padded, canonical base64 of 64 bytes over ``attestation_signing_bytes``.
    Returns ``None`` when valid.  Raises ``MalformedSignature`` /
    ``BadSignature`` (401) for the signature, ``TrustRefused`` (403) when
    ``now`` is before ``timestamp`` or at or after ``expires_at``, or a hash
    differs from the one expected; ``KeyFormatError`` for an unusable
    ``public_key``; ``ValidationError`` for an invalid dict or time.
    """
    from .keys import Ed25519PublicKey, _strict_b64decode

    typed = attestation if isinstance(attestation, Attestation) else Attestation.from_dict(attestation)
    key = public_key
    if not isinstance(key, Ed25519PublicKey):
        if isinstance(key, str) and len(key) == 44 and not key.startswith("ed25519:"):
            # The reference's raw form: standard base64 of the 32 key bytes.
            key = Ed25519PublicKey.from_bytes(_strict_b64decode(key, 32, "Ed25519 public key"))
        else:
            key = Ed25519PublicKey.from_string(key)
    try:
        raw = _strict_b64decode(typed.signature, 64, "Ed25519 signature")
    except KeyFormatError as exc:
        raise MalformedSignature(f"{exc} - at `$.signature`") from None
    key.verify(raw, attestation_signing_bytes(typed), backend=backend)
    current = _parse_time(now, "now")
    issued = _parse_time(typed.timestamp, "timestamp")
    expires = _parse_time(typed.expires_at, "expires_at")
    if current < issued:
        raise TrustRefused("The attestation is not valid yet (`timestamp` is after `now`)")
    if current >= expires:
        raise TrustRefused("The attestation has expired")
    for name, expected in (("codebase_hash", expected_codebase_hash), ("config_hash", expected_config_hash)):
        if expected is not None and not hmac.compare_digest(getattr(typed, name).encode("utf-8"), expected.encode("utf-8")):
            raise TrustRefused(f"`{name}` is not the expected one: the agent does not run the attested code")
