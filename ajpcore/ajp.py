"""Typed AJP envelopes: bytes -> strictly decoded -> schema-checked -> typed -> verified.

Every envelope (``JobOffer``, ``JobStatus``, ``JobResult``, ``Ack``, ``Accepted``,
``ErrorBody``) and every part (``Sender``, ``Recipient``, ``Task``, ``Context``,
``Budget``, ``Callback``, ``Usage``, ``AgentInfo``) is a frozen, slotted class with
keyword-only construction and:

- ``from_json(data)``: strict ``decode`` (I-JSON: duplicate keys, lone surrogates,
  NaN... refused with ``DecodeError``), then validation against the shipped
  Draft 2020-12 schema (``ajpcore/schemas/ajp-*.schema.json``), reporting every
  problem at once (``ValidationError``, lines ``<reason> - at `<path>```);
- ``from_dict(value)``: the same from a decoded value;
- ``to_dict()``: a fresh JSON value; for an envelope read from the wire it is
  exactly the received one (same members, same order, unknown members kept);
- ``to_json()``: RFC 8785 canonical bytes.

Unknown members at any level are kept (``.extra`` shows them) and stay covered by
the signature: ``offer.verify(...)`` checks the body as received, never a re-typed
copy.  The nested free-form JSON values (``task.input``, ``context.memory``,
``output``...) are the received objects: treat them as read-only.

Acceptance: ``validate_offer`` reproduces the reference SDK's ``validateOffer``
(messages included) and adds a strict mode; ``receive_offer`` runs the whole
receive path (decode, strict validation, signature, replay guard) and raises an
``AjpError`` whose ``.status`` and ``error_response`` give the HTTP answer.
"""

from __future__ import annotations

import hashlib
import heapq
import secrets
import time
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any, Callable, ClassVar, Dict, List, Mapping, Optional, Protocol, Sequence, Tuple, Union

from . import _core
from ._jsoncopy import copy_json
from ._schema import CompiledSchema, compile_schema
from .errors import (
    AjpError,
    BudgetRefused,
    Busy,
    DecodeError,
    InvalidMessage,
    LegacySignature,
    ReplayedMessage,
    SignatureError,
    TimestampError,
    TrustRefused,
    ValidationError,
)
from .schemas import load as _load_schema
from .signing import sign, verify
from .timestamps import timestamp_micros

__all__ = [
    "JobOffer",
    "JobStatus",
    "JobResult",
    "Ack",
    "Accepted",
    "ErrorBody",
    "Sender",
    "Recipient",
    "Task",
    "Context",
    "Budget",
    "Callback",
    "Usage",
    "AgentInfo",
    "OfferCheck",
    "validate_offer",
    "receive_offer",
    "new_job_id",
    "replay_identity",
    "ReplayGuard",
    "MemoryReplayGuard",
    "error_response",
    "DEFAULT_SKEW_SECONDS",
    "DEFAULT_MAX_LIFETIME_SECONDS",
    "FROM_TYPES",
    "JOB_STATUSES",
    "BudgetRefused",
    "TrustRefused",
    "Busy",
    "InvalidMessage",
    "ReplayedMessage",
]

DEFAULT_SKEW_SECONDS = 300
"""Clock skew tolerated between sender and receiver (strict mode, replay retention)."""
DEFAULT_MAX_LIFETIME_SECONDS = 86_400
"""Longest ``expires_at - issued_at`` strict mode accepts: a day bounds how long a receiver remembers ids."""
FROM_TYPES = ("human", "agent", "orchestrator")
JOB_STATUSES = ("accepted", "running", "completed", "failed", "rejected", "expired")

_MISSING: Any = object()
_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _schema(name: str) -> Tuple[Any, CompiledSchema]:
    doc = _load_schema(name)
    return doc, compile_schema(doc)


def _part_schema(doc: Any, *pointer: str) -> CompiledSchema:
    """A subschema of an envelope schema, compiled on its own (a part validated alone)."""
    sub = doc
    for step in pointer:
        sub = sub[step]
    if isinstance(sub, dict):
        sub = dict(sub, **{"$schema": doc["$schema"]})
    return compile_schema(sub)


# -- the frozen, slotted base ----------------------------------------------------------


class _Envelope:
    """Shared machinery of every typed envelope and part.

    An instance wraps one validated JSON object, ``_raw`` (the received one, or
    the one built from keywords); the typed attributes are read from it, and the
    parts (``offer.sender``...) are built on first access and cached in ``_parts``.
    Construction from the wire is therefore one allocation, and what is verified
    and written back is always exactly ``_raw``.

    A subclass declares ``_FIELDS``: ``(attribute, JSON member, part class or
    None, required)``; ``_define`` adds the properties, ``__init__`` and schema.
    """

    __slots__ = ("_raw", "_parts")
    _FIELDS: ClassVar[Tuple[Tuple[str, str, Any, bool], ...]] = ()
    _KNOWN: ClassVar[frozenset] = frozenset()
    _PARTS: ClassVar[Tuple[Tuple[str, Any], ...]] = ()
    _SCHEMA: ClassVar[CompiledSchema]
    _wrap: ClassVar[Callable[[dict], Any]]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"`{type(self).__name__}` is frozen: build a new one with `replace(...)`")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"`{type(self).__name__}` is frozen")

    __hash__ = None  # type: ignore[assignment]  # holds JSON objects, which are mutable

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.to_json() == other.to_json()  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        shown = ", ".join(f"{attr}={getattr(self, attr)!r}" for attr, _, _, _ in self._FIELDS)
        return f"{type(self).__name__}({shown})"

    def __reduce__(self) -> Any:
        return (type(self).from_dict, (self._raw,))

    def _make_parts(self) -> tuple:
        raw = self._raw
        parts = []
        for key, part in self._PARTS:
            v = raw.get(key)
            parts.append(None if v is None else part._wrap(v))
        made = tuple(parts)
        _set_parts(self, made)
        return made

    @property
    def extra(self) -> Mapping[str, Any]:
        """Members this version of ajpcore does not know, as received (read-only view)."""
        raw = self._raw
        known = self._KNOWN
        if known.issuperset(raw):
            return _EMPTY
        return MappingProxyType({k: v for k, v in raw.items() if k not in known})

    @classmethod
    def from_dict(cls, value: Any) -> Any:
        """A typed envelope from a JSON value (copied: later changes to ``value`` do not reach it).

        Raises ``ValidationError`` listing every problem with its JSON path.
        """
        value = copy_json(value)
        if not cls._SCHEMA.is_valid(value):
            raise ValidationError(cls._SCHEMA.errors(value))
        return cls._wrap(value)

    @classmethod
    def from_json(cls, data: Union[bytes, bytearray, memoryview, str]) -> Any:
        """A typed envelope from JSON bytes: strict ``decode``, then ``from_dict``.

        Raises ``DecodeError`` (malformed or not I-JSON, with its byte offset) or
        ``ValidationError`` (every schema problem, with JSON paths).
        """
        value = _core.impl.decode(data)
        if not cls._SCHEMA.is_valid(value):
            raise ValidationError(cls._SCHEMA.errors(value))
        return cls._wrap(value)

    def to_dict(self) -> dict:
        """A fresh JSON object: the received one (same members, same order, unknown
        members kept) or, when built from keywords, the fields that are not None
        followed by ``extra``."""
        return copy_json(self._raw)

    def to_json(self) -> bytes:
        """The RFC 8785 canonical JSON bytes of ``to_dict()``."""
        return _core.impl.canonicalize(self._raw)

    def replace(self, **changes: Any) -> Any:
        """A new envelope with ``changes`` applied (attributes by name; validated again)."""
        kwargs = {attr: getattr(self, attr) for attr, _, _, _ in self._FIELDS}
        unknown = set(changes) - set(kwargs) - {"extra"}
        if unknown:
            raise TypeError(f"`{type(self).__name__}` has no field(s) {', '.join(sorted(unknown))}")
        kwargs["extra"] = dict(self.extra)
        kwargs.update(changes)
        return type(self)(**kwargs)


_set_raw = _Envelope._raw.__set__  # type: ignore[attr-defined]
_set_parts = _Envelope._parts.__set__  # type: ignore[attr-defined]


def _define(cls: Any, schema: CompiledSchema) -> Any:
    """Give ``cls`` its typed properties, keyword-only ``__init__`` and fast ``_wrap``."""
    fields = cls._FIELDS
    cls._SCHEMA = schema
    cls._KNOWN = frozenset(key for _, key, _, _ in fields)
    cls._PARTS = tuple((key, part) for _, key, part, _ in fields if part is not None)
    hints = cls.__annotations__
    index = 0
    for attr, key, part, required in fields:
        if part is None:
            if required:
                getter = _required_getter(key)
            else:
                getter = _optional_getter(key)
        else:
            getter = _part_getter(index)
            index += 1
        getter.__annotations__ = {"return": hints.get(attr, Any)}
        getter.__name__ = attr
        getter.__qualname__ = f"{cls.__qualname__}.{attr}"
        getter.__doc__ = f"The `{key}` member{'' if required else ' (None when absent or null)'}."
        setattr(cls, attr, property(getter))

    new = object.__new__

    def wrap(d: dict) -> Any:
        o = new(cls)
        _set_raw(o, d)
        _set_parts(o, None)
        return o

    cls._wrap = staticmethod(wrap)
    required = [attr for attr, _, _, req in fields if req]
    optional = [attr for attr, _, _, req in fields if not req]
    ns: Dict[str, Any] = {"_init": _init_from_keywords, "_cls": cls}
    params = ", ".join(required + [f"{a}=None" for a in optional] + ["extra=None"])
    given = ", ".join(f"{a}={a}" for a in required + optional)
    exec(f"def __init__(self, *, {params}):\n    _init(self, _cls, dict({given}), extra)", ns)
    init_fn = ns["__init__"]
    init_fn.__qualname__ = f"{cls.__qualname__}.__init__"
    init_fn.__annotations__ = {attr: hints.get(attr, Any) for attr, _, _, _ in fields}
    init_fn.__annotations__["extra"] = Optional[Mapping[str, Any]]
    init_fn.__doc__ = (
        f"A `{cls.__name__}` from keyword arguments; None leaves an optional member out. "
        "Raises ValidationError (every problem, with paths) or TypeError."
    )
    cls.__init__ = init_fn
    return cls


def _required_getter(key: str) -> Callable[[Any], Any]:
    def get(self: Any) -> Any:
        return self._raw[key]

    return get


def _optional_getter(key: str) -> Callable[[Any], Any]:
    def get(self: Any) -> Any:
        return self._raw.get(key)

    return get


def _part_getter(i: int) -> Callable[[Any], Any]:
    def get(self: Any) -> Any:
        parts = self._parts
        if parts is None:
            parts = self._make_parts()
        return parts[i]

    return get


def _init_from_keywords(obj: _Envelope, cls: Any, values: Dict[str, Any], extra: Optional[Mapping[str, Any]]) -> None:
    raw: Dict[str, Any] = {}
    for attr, key, part, _ in cls._FIELDS:
        v = values[attr]
        if v is None:
            continue
        if part is not None:
            if isinstance(v, part):
                v = v.to_dict()
            elif isinstance(v, Mapping):
                v = copy_json(dict(v))
            else:
                raise ValidationError([(f"$.{key}", f"Expected `{part.__name__}` or an object, got `{type(v).__name__}`")])
        else:
            v = copy_json(list(v) if type(v) is tuple else v)
        raw[key] = v
    if extra:
        clash = cls._KNOWN.intersection(extra)
        if clash:
            raise TypeError(f"`extra` repeats known member(s) {', '.join(sorted(clash))}: pass them as keywords")
        for k, v in extra.items():
            raw[k] = copy_json(v)
    checked = raw
    if "signature" in cls._KNOWN and "signature" not in raw:
        # Built unsigned, to be signed with `.signed(...)`: check everything else.
        checked = dict(raw, signature="unsigned:")
    if not cls._SCHEMA.is_valid(checked):
        raise ValidationError(cls._SCHEMA.errors(checked))
    _set_raw(obj, raw)
    _set_parts(obj, None)


# -- schemas -----------------------------------------------------------------------------

_OFFER_DOC, _OFFER_SCHEMA = _schema("ajp-job-offer")
_STATUS_DOC, _STATUS_SCHEMA = _schema("ajp-job-status")
_RESULT_DOC, _RESULT_SCHEMA = _schema("ajp-job-result")


# -- JobOffer and its parts ----------------------------------------------------------------


class Sender(_Envelope):
    """``from`` of a JobOffer: who sends the job."""

    __slots__ = ()
    type: str
    id: Optional[str]
    provenance_id: Optional[str]
    declaration_url: Optional[str]
    _FIELDS = (
        ("type", "type", None, True),
        ("id", "id", None, False),
        ("provenance_id", "provenance_id", None, False),
        ("declaration_url", "declaration_url", None, False),
    )


class Recipient(_Envelope):
    """``to`` of a JobOffer: the Provenance id of the receiving agent."""

    __slots__ = ()
    provenance_id: str
    _FIELDS = (("provenance_id", "provenance_id", None, True),)


class Task(_Envelope):
    """``task``: what to do (``type``, ``instruction``, optional ``input`` and ``output_format``)."""

    __slots__ = ()
    type: str
    instruction: str
    input: Optional[Dict[str, Any]]
    output_format: Optional[str]
    _FIELDS = (
        ("type", "type", None, True),
        ("instruction", "instruction", None, True),
        ("input", "input", None, False),
        ("output_format", "output_format", None, False),
    )


class Context(_Envelope):
    """``context``: credentials, memory and constraints handed to the agent."""

    __slots__ = ()
    credentials: Optional[Dict[str, Any]]
    memory: Optional[List[Any]]
    constraints: Optional[List[str]]
    _FIELDS = (
        ("credentials", "credentials", None, False),
        ("memory", "memory", None, False),
        ("constraints", "constraints", None, False),
    )


class Budget(_Envelope):
    """``budget``: ``max_usd`` (required, >= 0), ``max_seconds`` and ``max_llm_tokens`` (>= 1)."""

    __slots__ = ()
    max_usd: Union[int, float]
    max_seconds: Optional[Union[int, float]]
    max_llm_tokens: Optional[Union[int, float]]
    _FIELDS = (
        ("max_usd", "max_usd", None, True),
        ("max_seconds", "max_seconds", None, False),
        ("max_llm_tokens", "max_llm_tokens", None, False),
    )


class Callback(_Envelope):
    """``callback``: where the JobResult is POSTed (``url``, optional ``headers``)."""

    __slots__ = ()
    url: str
    headers: Optional[Dict[str, Any]]
    _FIELDS = (("url", "url", None, True), ("headers", "headers", None, False))


class JobOffer(_Envelope):
    """An AJP JobOffer (``POST /jobs``).  ``sender`` is the wire member ``from``.

    ``verify(secret=... | public_key=...)`` checks the signature over the body as
    received (unknown members included); ``signed(...)`` returns a signed copy.
    """

    __slots__ = ()
    ajp: str
    job_id: str
    parent_job_id: Optional[str]
    sender: Sender
    to: Recipient
    task: Task
    context: Optional[Context]
    budget: Budget
    callback: Optional[Callback]
    issued_at: str
    expires_at: str
    signature: Optional[str]
    _FIELDS = (
        ("ajp", "ajp", None, True),
        ("job_id", "job_id", None, True),
        ("parent_job_id", "parent_job_id", None, False),
        ("sender", "from", Sender, True),
        ("to", "to", Recipient, True),
        ("task", "task", Task, True),
        ("context", "context", Context, False),
        ("budget", "budget", Budget, True),
        ("callback", "callback", Callback, False),
        ("issued_at", "issued_at", None, True),
        ("expires_at", "expires_at", None, True),
        ("signature", "signature", None, False),
    )

    def verify(self, *, secret: Any = None, public_key: Any = None, backend: Optional[str] = None) -> None:
        """Check ``signature`` over the received body (see ``ajpcore.signing.verify``).

        Returns None when valid; raises ``BadSignature``, ``MalformedSignature``,
        ``UnsupportedScheme``, ``LegacySignature`` (all HTTP 401) or a key error.
        """
        verify(self._raw, secret=secret, public_key=public_key, backend=backend)

    def signed(self, *, secret: Any = None, private_key: Any = None) -> "JobOffer":
        """A copy of this offer carrying the signature of its body (unknown members included)."""
        body = self.to_dict()
        body["signature"] = sign(body, secret=secret, private_key=private_key)
        return JobOffer.from_dict(body)

    def _body(self) -> dict:
        return self._raw


# -- JobStatus, JobResult ------------------------------------------------------------------


class Usage(_Envelope):
    """``usage`` of a result: ``llm_tokens``, ``duration_seconds``, ``cost_usd`` (all >= 0)."""

    __slots__ = ()
    llm_tokens: Optional[Union[int, float]]
    duration_seconds: Optional[Union[int, float]]
    cost_usd: Optional[Union[int, float]]
    _FIELDS = (
        ("llm_tokens", "llm_tokens", None, False),
        ("duration_seconds", "duration_seconds", None, False),
        ("cost_usd", "cost_usd", None, False),
    )


class AgentInfo(_Envelope):
    """``agent`` of a result: ``provenance_id``, ``version``, ``model`` (a name or ``{provider, model_id}``)."""

    __slots__ = ()
    provenance_id: str
    version: Optional[str]
    model: Optional[Union[str, Dict[str, Any]]]
    _FIELDS = (
        ("provenance_id", "provenance_id", None, True),
        ("version", "version", None, False),
        ("model", "model", None, False),
    )


_VERIFY_MODES = ("full", "sdk")


class _ResultLike(_Envelope):
    __slots__ = ()

    def sdk_subset(self) -> dict:
        """What the reference SDK 0.3 signs: ``{job_id, status, output, constraints_asserted,
        completed_at, agent: {provenance_id}}``, each member only when present (``output``
        omitted when absent, as ``JSON.stringify`` drops ``undefined``)."""
        body = self._raw
        subset: dict = {}
        for key in ("job_id", "status", "output", "constraints_asserted", "completed_at"):
            if key in body:
                subset[key] = body[key]
        agent = body.get("agent")
        subset["agent"] = {"provenance_id": agent["provenance_id"]} if isinstance(agent, dict) and "provenance_id" in agent else {}
        if "signature" in body:
            subset["signature"] = body["signature"]
        return subset

    def verify(
        self, *, secret: Any = None, public_key: Any = None, mode: str = "any", backend: Optional[str] = None
    ) -> str:
        """Check ``signature`` and return the mode that matched: ``"full"`` or ``"sdk"``.

        ``mode="full"``: the whole body as received (the specification).
        ``mode="sdk"``: only ``sdk_subset()`` (what the reference SDK 0.3 signs:
        ``output``, ``constraints_asserted``, the job and agent ids, but not
        ``usage`` or ``agent.model``: those are unauthenticated then).
        ``mode="any"``: full first, then sdk.  Raises the full-body check's
        ``SignatureError`` when nothing matches.
        """

        if mode not in ("any",) + _VERIFY_MODES:
            raise ValueError(f"mode must be `any`, `full` or `sdk`, got {mode!r}")
        body = self._raw
        if mode == "sdk":
            verify(self.sdk_subset(), secret=secret, public_key=public_key, backend=backend)
            return "sdk"
        try:
            verify(body, secret=secret, public_key=public_key, backend=backend)
            return "full"
        except SignatureError as exc:
            if mode == "full" or isinstance(exc, LegacySignature):
                raise
            failure = exc
        try:
            verify(self.sdk_subset(), secret=secret, public_key=public_key, backend=backend)
        except SignatureError:
            raise failure from None
        return "sdk"


class JobStatus(_ResultLike):
    """An AJP JobStatus (``GET /jobs/:id``); when completed it may carry the result members."""

    __slots__ = ()
    ajp: Optional[str]
    job_id: str
    status: str
    progress: Optional[Union[int, float]]
    message: Optional[str]
    started_at: Optional[str]
    updated_at: Optional[str]
    estimated_completion: Optional[str]
    output: Any
    constraints_asserted: Optional[List[str]]
    usage: Optional[Usage]
    agent: Optional[AgentInfo]
    completed_at: Optional[str]
    signature: Optional[str]
    _FIELDS = (
        ("ajp", "ajp", None, False),
        ("job_id", "job_id", None, True),
        ("status", "status", None, True),
        ("progress", "progress", None, False),
        ("message", "message", None, False),
        ("started_at", "started_at", None, False),
        ("updated_at", "updated_at", None, False),
        ("estimated_completion", "estimated_completion", None, False),
        ("output", "output", None, False),
        ("constraints_asserted", "constraints_asserted", None, False),
        ("usage", "usage", Usage, False),
        ("agent", "agent", AgentInfo, False),
        ("completed_at", "completed_at", None, False),
        ("signature", "signature", None, False),
    )


class JobResult(_ResultLike):
    """An AJP JobResult (POSTed to the callback).  ``verify`` knows the spec's and the SDK's forms.

    ``output`` is any JSON value; a JSON ``null`` output and an absent one both
    read as None here, but ``to_dict``/``to_json``/``verify`` keep the difference.
    """

    __slots__ = ()
    ajp: Optional[str]
    job_id: str
    status: str
    output: Any
    constraints_asserted: Optional[List[str]]
    usage: Optional[Usage]
    agent: AgentInfo
    completed_at: str
    signature: Optional[str]
    _FIELDS = (
        ("ajp", "ajp", None, False),
        ("job_id", "job_id", None, True),
        ("status", "status", None, True),
        ("output", "output", None, False),
        ("constraints_asserted", "constraints_asserted", None, False),
        ("usage", "usage", Usage, False),
        ("agent", "agent", AgentInfo, True),
        ("completed_at", "completed_at", None, True),
        ("signature", "signature", None, False),
    )

    def signed(self, *, secret: Any = None, private_key: Any = None, mode: str = "full") -> "JobResult":
        """A copy signed over the full body (``mode="full"``) or the SDK subset (``"sdk"``)."""
        if mode not in _VERIFY_MODES:
            raise ValueError(f"mode must be `full` or `sdk`, got {mode!r}")
        body = self.to_dict()
        target = body if mode == "full" else self.sdk_subset()
        body["signature"] = sign(target, secret=secret, private_key=private_key)
        return JobResult.from_dict(body)


# -- responses -----------------------------------------------------------------------------


class Ack(_Envelope):
    """The body of ``POST /jobs/:id/ack``: ``received`` and optional ``feedback``."""

    __slots__ = ()
    received: bool
    feedback: Optional[str]
    _FIELDS = (("received", "received", None, True), ("feedback", "feedback", None, False))


class Accepted(_Envelope):
    """The ``202`` answer to ``POST /jobs``: ``{"job_id": ..., "status": "accepted"}``."""

    __slots__ = ()
    job_id: str
    status: str
    _FIELDS = (("job_id", "job_id", None, True), ("status", "status", None, True))


class ErrorBody(_Envelope):
    """An AJP error response: ``error`` (title), ``code``, ``reason``, ``errors`` (400),
    ``retry_after`` (429), ``job_id`` (404)."""

    __slots__ = ()
    error: str
    code: Optional[str]
    reason: Optional[str]
    errors: Optional[List[str]]
    retry_after: Optional[int]
    job_id: Optional[str]
    _FIELDS = (
        ("error", "error", None, True),
        ("code", "code", None, False),
        ("reason", "reason", None, False),
        ("errors", "errors", None, False),
        ("retry_after", "retry_after", None, False),
        ("job_id", "job_id", None, False),
    )


_define(Sender, _part_schema(_OFFER_DOC, "properties", "from"))
_define(Recipient, _part_schema(_OFFER_DOC, "properties", "to"))
_define(Task, _part_schema(_OFFER_DOC, "properties", "task"))
_define(Context, _part_schema(_OFFER_DOC, "properties", "context"))
_define(Budget, _part_schema(_OFFER_DOC, "properties", "budget"))
_define(Callback, compile_schema(dict(_OFFER_DOC["properties"]["callback"], type="object", **{"$schema": _OFFER_DOC["$schema"]})))
_define(JobOffer, _OFFER_SCHEMA)
_define(Usage, _part_schema(_RESULT_DOC, "properties", "usage"))
_define(AgentInfo, _part_schema(_RESULT_DOC, "properties", "agent"))
_define(JobStatus, _STATUS_SCHEMA)
_define(JobResult, _RESULT_SCHEMA)
_define(Ack, _schema("ajp-ack")[1])
_define(Accepted, _schema("ajp-accepted")[1])
_define(ErrorBody, _schema("ajp-error-body")[1])


# -- job ids ---------------------------------------------------------------------------------

_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def new_job_id() -> str:
    """A fresh job id: ``job_`` + milliseconds since 1970 in base 36 + 16 random hex digits.

    The reference SDK's shape (time-sortable prefix) with 64 bits from ``secrets``
    (the SDK uses 48): ids minted in the same millisecond collide with
    probability about n²/2⁶⁵.
    """
    ms = time.time_ns() // 1_000_000
    digits = []
    while ms:
        ms, r = divmod(ms, 36)
        digits.append(_BASE36[r])
    return "job_" + "".join(reversed(digits)) + secrets.token_hex(8)


# -- validate_offer --------------------------------------------------------------------------


class OfferCheck:
    """The verdict of ``validate_offer``: ``.valid``, ``.errors`` and ``.warnings`` (message lists)."""

    __slots__ = ("valid", "errors", "warnings")
    valid: bool
    errors: List[str]
    warnings: List[str]

    def __init__(self, *, errors: Sequence[str] = (), warnings: Sequence[str] = ()) -> None:
        _check_errors(self, list(errors))
        _check_warnings(self, list(warnings))
        _check_valid(self, not errors)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("`OfferCheck` is frozen")

    def __repr__(self) -> str:
        return f"OfferCheck(valid={self.valid}, errors={self.errors!r}, warnings={self.warnings!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not OfferCheck:
            return NotImplemented
        return (self.errors, self.warnings) == (other.errors, other.warnings)  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def raise_for_errors(self) -> None:
        """Raise ``InvalidMessage`` (HTTP 400, the SDK's error body) unless valid."""
        if self.errors:
            raise InvalidMessage(self.errors)


_check_errors = OfferCheck.errors.__set__  # type: ignore[attr-defined]
_check_warnings = OfferCheck.warnings.__set__  # type: ignore[attr-defined]
_check_valid = OfferCheck.valid.__set__  # type: ignore[attr-defined]


def _js_truthy(v: Any) -> bool:
    # ECMAScript ToBoolean (7.1.2): undefined, null, false, +-0, NaN and "" are false.
    if v is None or v is False or v is _MISSING:
        return False
    if type(v) in (int, float):
        return v == v and v != 0
    if type(v) is str:
        return v != ""
    return True


def _member(obj: Any, key: str) -> Any:
    # `obj?.key` on a JSON value: only objects have members.
    return obj.get(key, _MISSING) if type(obj) is dict else _MISSING


def _now_micros(now: Any) -> int:
    if isinstance(now, datetime):
        if now.tzinfo is None or now.utcoffset() is None:
            raise TimestampError("`now` is a naive datetime: give it a tzinfo (e.g. timezone.utc)")
        delta = now - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(now, str):
        return timestamp_micros(now)
    if isinstance(now, (int, float)) and not isinstance(now, bool):
        return int(now * 1_000_000)
    raise TimestampError(f"`now` must be an aware datetime, an RFC 3339 string or POSIX seconds, got `{type(now).__name__}`")


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_SCHEME_FOR = {"human": "sha256:", "agent": "ed25519:", "orchestrator": "ed25519:"}
_DECLARATION_WARNING = (
    "from.declaration_url missing: the agent's identity cannot be checked against its Provenance declaration"
)


def validate_offer(
    offer: Union[JobOffer, Mapping[str, Any]],
    *,
    now: Any,
    strict: bool = False,
    skew: float = DEFAULT_SKEW_SECONDS,
    max_lifetime: float = DEFAULT_MAX_LIFETIME_SECONDS,
) -> OfferCheck:
    """Check an offer's acceptance rules; returns an ``OfferCheck`` (never raises for the offer's content).

    ``offer`` is a ``JobOffer`` or a decoded JSON object.  ``now`` is an aware
    ``datetime``, an RFC 3339 string or POSIX seconds (ajpcore reads no clock).

    Default mode reproduces the reference SDK's ``validateOffer``, messages
    included: ``missing: ajp``, ``missing: job_id``, ``missing: from.type``,
    ``from.type must be human, agent, or orchestrator``, ``missing:
    to.provenance_id``, ``missing: task.type``, ``missing: task.instruction``,
    ``missing: budget.max_usd`` (0 is present), ``missing: issued_at``, ``missing:
    expires_at``, ``missing: signature``, ``from.provenance_id required when type is
    agent/orchestrator``, ``offer has expired`` (``expires_at`` before ``now``);
    "missing" follows JavaScript truthiness as the SDK does.  A warning (not an
    error) when an agent sender has no ``declaration_url``.  Like the SDK, an
    unparseable ``expires_at`` does not count as expired.

    ``strict=True`` closes those holes: the shape must match the shipped schema
    (each problem as ``<reason> - at `<path>```), ``issued_at``/``expires_at`` must
    be strict RFC 3339 (``invalid timestamp: issued_at``), ``issued_at`` may be at
    most ``skew`` seconds (default 300) ahead of ``now``, ``expires_at`` must be
    after ``issued_at`` and at most ``max_lifetime`` seconds (default 86400)
    later, and the signature scheme must fit ``from.type`` (human ``sha256:``,
    agent/orchestrator ``ed25519:``).

    Raises ``TimestampError`` only for a bad ``now``.
    """
    now_us = _now_micros(now)
    if type(offer) is JobOffer:
        return _check_typed_offer(offer._raw, now_us, strict, skew, max_lifetime)
    errors: List[str] = []
    warnings: List[str] = []
    if isinstance(offer, JobOffer):
        body = offer._body()
        shaped = True  # the schema already guarantees every presence rule below
    elif isinstance(offer, Mapping):
        body = offer if type(offer) is dict else dict(offer)
        shaped = False
    else:
        raise TypeError(f"validate_offer takes a JobOffer or a JSON object, got `{type(offer).__name__}`")
    sender = _member(body, "from")
    sender_type = _member(sender, "type")
    if not shaped:
        if strict:
            errors.extend(f"{reason} - at `{path}`" for path, reason in _OFFER_SCHEMA.errors(body))
        if not _js_truthy(_member(body, "ajp")):
            errors.append("missing: ajp")
        if not _js_truthy(_member(body, "job_id")):
            errors.append("missing: job_id")
        if not _js_truthy(sender_type):
            errors.append("missing: from.type")
        elif sender_type not in FROM_TYPES:
            errors.append("from.type must be human, agent, or orchestrator")
        if not _js_truthy(_member(_member(body, "to"), "provenance_id")):
            errors.append("missing: to.provenance_id")
        task = _member(body, "task")
        if not _js_truthy(_member(task, "type")):
            errors.append("missing: task.type")
        if not _js_truthy(_member(task, "instruction")):
            errors.append("missing: task.instruction")
        max_usd = _member(_member(body, "budget"), "max_usd")
        if not _js_truthy(max_usd) and not (type(max_usd) in (int, float) and max_usd == 0):
            errors.append("missing: budget.max_usd")
        for key in ("issued_at", "expires_at", "signature"):
            if not _js_truthy(_member(body, key)):
                errors.append(f"missing: {key}")
        if sender_type in ("agent", "orchestrator") and not _js_truthy(_member(sender, "provenance_id")):
            errors.append("from.provenance_id required when type is agent/orchestrator")
    expires_at = _member(body, "expires_at")
    expires_us = _micros_or_none(expires_at)
    if _js_truthy(expires_at) and expires_us is not None and expires_us < now_us:
        errors.append("offer has expired")
    if sender_type == "agent" and not _js_truthy(_member(sender, "declaration_url")):
        warnings.append(_DECLARATION_WARNING)
    if strict:
        issued_at = _member(body, "issued_at")
        issued_us = _micros_or_none(issued_at)
        if issued_at is not _MISSING and issued_us is None:
            errors.append("invalid timestamp: issued_at (expected RFC 3339 with an explicit offset)")
        if expires_at is not _MISSING and expires_us is None:
            errors.append("invalid timestamp: expires_at (expected RFC 3339 with an explicit offset)")
        if issued_us is not None:
            if issued_us - now_us > skew * 1_000_000:
                errors.append(f"issued_at is more than {_seconds(skew)} s in the future")
            if expires_us is not None:
                if expires_us <= issued_us:
                    errors.append("expires_at is not after issued_at")
                elif expires_us - issued_us > max_lifetime * 1_000_000:
                    errors.append(f"offer lifetime exceeds {_seconds(max_lifetime)} s")
        signature = _member(body, "signature")
        scheme = _SCHEME_FOR.get(sender_type) if type(sender_type) is str else None
        if scheme is not None and type(signature) is str and signature and not signature.startswith(scheme):
            errors.append(f"signature scheme must be {scheme[:-1]} for a {sender_type} sender")
    return OfferCheck(errors=errors, warnings=warnings)


def _check_typed_offer(raw: dict, now_us: int, strict: bool, skew: float, max_lifetime: float) -> OfferCheck:
    """``validate_offer`` for a schema-valid offer: the same rules, without re-checking the shape
    (both timestamps are strict RFC 3339, every SDK presence rule holds)."""
    signature = raw.get("signature")
    errors: List[str] = [] if signature is not None else ["missing: signature"]  # built, not yet signed
    sender = raw["from"]
    sender_type = sender["type"]
    expires_us = timestamp_micros(raw["expires_at"])
    if expires_us < now_us:
        errors.append("offer has expired")
    warnings = [_DECLARATION_WARNING] if sender_type == "agent" and not sender.get("declaration_url") else []
    if strict:
        issued_us = timestamp_micros(raw["issued_at"])
        if issued_us - now_us > skew * 1_000_000:
            errors.append(f"issued_at is more than {_seconds(skew)} s in the future")
        if expires_us <= issued_us:
            errors.append("expires_at is not after issued_at")
        elif expires_us - issued_us > max_lifetime * 1_000_000:
            errors.append(f"offer lifetime exceeds {_seconds(max_lifetime)} s")
        scheme = _SCHEME_FOR[sender_type]
        if signature is not None and not signature.startswith(scheme):
            errors.append(f"signature scheme must be {scheme[:-1]} for a {sender_type} sender")
    check = _new_check(OfferCheck)
    _check_errors(check, errors)
    _check_warnings(check, warnings)
    _check_valid(check, not errors)
    return check


_new_check = object.__new__


def _micros_or_none(value: Any) -> Optional[int]:
    if type(value) is not str:
        return None
    try:
        return timestamp_micros(value)
    except TimestampError:
        return None


def _seconds(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


# -- replay protection -----------------------------------------------------------------------

class ReplayGuard(Protocol):
    """Remembers accepted ``(identity, job_id)`` pairs until their offer can no longer be accepted.

    ``admit`` records the pair and returns None, or raises ``ReplayedMessage``
    (HTTP 409) when the pair is already held, or ``Busy`` (HTTP 429) when the
    guard cannot remember one more pair.  A guard must never forget a pair
    before ``expires_at + skew``: forgetting early would let a replay through.
    """

    def admit(self, identity: str, job_id: str, *, expires_at_us: int, now_us: int) -> None: ...


def replay_identity(*, secret: Any = None, public_key: Any = None) -> str:
    """The replay-guard identity of a verified sender: its key, not a name it claims.

    ``ed25519:<fingerprint>`` (SHA-256 of the SPKI DER) for a public key;
    ``sha256:<32 hex>`` of a domain-separated SHA-256 of the HMAC secret (the
    secret itself is never stored).
    """
    if (secret is None) == (public_key is None):
        raise TypeError("give exactly one of `secret` or `public_key`")
    if public_key is not None:
        from .keys import Ed25519PublicKey

        key = public_key if isinstance(public_key, Ed25519PublicKey) else Ed25519PublicKey.from_string(public_key)
        return "ed25519:" + key.fingerprint
    raw = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    return "sha256:" + hashlib.sha256(b"ajpcore-replay-identity-v1\x00" + raw).hexdigest()[:32]


class MemoryReplayGuard:
    """An in-process ``ReplayGuard`` holding at most ``max_entries`` pairs.

    Each pair is kept until ``expires_at + skew``.  When full, expired pairs are
    evicted first (oldest expiry first); if none has expired the new offer is
    refused with ``Busy`` (429, ``retry_after`` = seconds until the next pair
    expires) rather than forgetting a live pair, which would re-open a replay
    window.  Not thread-safe: guard it with a lock, or use one per worker with a
    sender-affine load balancer.
    """

    __slots__ = ("max_entries", "skew_us", "_until", "_heap")

    def __init__(self, *, max_entries: int = 100_000, skew: float = DEFAULT_SKEW_SECONDS) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
            raise ValueError("max_entries must be a positive int")
        self.max_entries = max_entries
        self.skew_us = int(skew * 1_000_000)
        self._until: Dict[Tuple[str, str], int] = {}
        self._heap: List[Tuple[int, Tuple[str, str]]] = []

    def __len__(self) -> int:
        return len(self._until)

    def _evict(self, now_us: int) -> None:
        heap, until = self._heap, self._until
        while heap and heap[0][0] <= now_us:
            t, key = heapq.heappop(heap)
            if until.get(key) == t:
                del until[key]

    def admit(self, identity: str, job_id: str, *, expires_at_us: int, now_us: int) -> None:
        """Record ``(identity, job_id)`` until ``expires_at_us + skew``; see ``ReplayGuard``."""
        key = (identity, job_id)
        until = self._until
        held = until.get(key)
        if held is not None and held > now_us:
            raise ReplayedMessage(f"job `{job_id}` from this sender was already received")
        if len(until) >= self.max_entries:
            self._evict(now_us)
            if len(until) >= self.max_entries:
                wait = max(1, -(-(self._heap[0][0] - now_us) // 1_000_000))
                raise Busy("replay guard is full of unexpired offers; retry later", retry_after=wait)
        t = expires_at_us + self.skew_us
        until[key] = t
        heapq.heappush(self._heap, (t, key))
        if len(self._heap) > 2 * self.max_entries:  # stale entries of re-admitted pairs
            self._evict(now_us)
            if len(self._heap) > 2 * self.max_entries:
                self._heap = [(u, k) for k, u in until.items()]
                heapq.heapify(self._heap)


# -- the receive path ------------------------------------------------------------------------


def receive_offer(
    data: Union[bytes, bytearray, memoryview, str],
    *,
    now: Any,
    secret: Any = None,
    public_key: Any = None,
    replay_guard: Optional[ReplayGuard] = None,
    skew: float = DEFAULT_SKEW_SECONDS,
    max_lifetime: float = DEFAULT_MAX_LIFETIME_SECONDS,
) -> JobOffer:
    """Bytes off the wire -> an accepted ``JobOffer``, or the refusal to answer with.

    In order: strict decode (``DecodeError``, 400), schema (``ValidationError``,
    400), ``validate_offer(strict=True)`` (``InvalidMessage``, 400, the SDK's
    messages), the signature with ``secret`` (human senders) or ``public_key``
    (agents) (``SignatureError``, 401; legacy pre-0.3 signatures refused), then
    the replay guard keyed by the verifying key (``ReplayedMessage`` 409,
    ``Busy`` 429).  ``error_response(exc)`` turns any of these into the HTTP
    status and AJP error body.
    """
    offer = JobOffer.from_json(data)
    check = validate_offer(offer, now=now, strict=True, skew=skew, max_lifetime=max_lifetime)
    if check.errors:
        raise InvalidMessage(check.errors)
    offer.verify(secret=secret, public_key=public_key)
    if replay_guard is not None:
        replay_guard.admit(
            replay_identity(secret=secret, public_key=public_key),
            offer.job_id,
            expires_at_us=timestamp_micros(offer.expires_at),
            now_us=_now_micros(now),
        )
    return offer


_TITLES = {400: "Invalid JobOffer", 401: "Invalid signature", 402: "Budget refused",
           403: "Sender identity could not be established", 409: "Duplicate job", 429: "Too many requests"}


def error_response(exc: BaseException) -> Tuple[int, ErrorBody]:
    """The HTTP status and AJP ``ErrorBody`` to answer a refusal with.

    400 ``{"error": "Invalid JobOffer", "errors": [...]}`` for malformed or invalid
    offers (one line per problem); 401 ``{"error": "Invalid signature", "code":
    ..., "reason": ...}`` (``LEGACY_SIGNATURE`` for pre-0.3 senders); 402, 403 and
    409 with ``code`` and ``reason``; 429 with ``retry_after``.  Any other
    exception is a 500 ``{"error": "Internal error"}`` that reveals nothing.
    """
    if isinstance(exc, Busy):
        return 429, ErrorBody(error=_TITLES[429], code=exc.code, reason=str(exc), retry_after=exc.retry_after)
    if isinstance(exc, InvalidMessage):
        return 400, ErrorBody(error=_TITLES[400], code=exc.code, errors=list(exc.errors))
    if isinstance(exc, ValidationError):
        lines = [f"{reason} - at `{path}`" for path, reason in exc.errors]
        return 400, ErrorBody(error=_TITLES[400], code=exc.code, errors=lines)
    if isinstance(exc, DecodeError):
        return 400, ErrorBody(error=_TITLES[400], code=exc.code, errors=[str(exc)])
    if isinstance(exc, AjpError) and exc.status in _TITLES:
        return exc.status, ErrorBody(error=_TITLES[exc.status], code=exc.code, reason=str(exc))
    if isinstance(exc, AjpError) and 400 <= exc.status < 500:
        return exc.status, ErrorBody(error="Request refused", code=exc.code, reason=str(exc))
    return 500, ErrorBody(error="Internal error")

