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
receive path (decode, strict validation, recipient, sender identity, signature,
replay guard) and raises an ``AjpError`` whose ``.status`` and
``error_response`` give the HTTP answer; ``Receiver`` is that policy configured
once, with the answers of the three AJP endpoints (``POST /jobs``,
``GET /jobs/:id``, ``POST /jobs/:id/ack``).
"""


from __future__ import annotations

from ..errors import (
    BudgetRefused,
    Busy,
    InvalidMessage,
    JobInProgress,
    PayloadTooLarge,
    ReplayedMessage,
    StateUnavailable,
    TrustRefused,
    UnsupportedMediaType,
)
from ._error_response import error_response
from ._messages import (
    JOB_STATUSES,
    Accepted,
    Ack,
    AgentInfo,
    Budget,
    Callback,
    Context,
    ErrorBody,
    JobOffer,
    JobResult,
    JobStatus,
    Recipient,
    Sender,
    Task,
    Usage,
    new_job_id,
)
from ._build import DEFAULT_BUDGET, new_offer, new_result
from ._policy import ANY_RECIPIENT, DEFAULT_MAX_BODY_BYTES, NO_REPLAY_GUARD, SPEC_CAPABILITIES, Capabilities, Recipients
from ._pipeline import check_content_type, offer_digest
from ._receive import receive_offer
from ._messages import JobStatusName, SenderType
from ._answers import AckAnswer, HttpAnswer, OfferAnswer, ack_answer, refusal_answer, status_answer
from ._pipeline import ReceivedOffer
from ._receiver import DeclarationResolver, Receiver, Secret, SecretLookup
from ._sender import IdentityCache
from ._subset import SignedSubset
from ._replay import (
    DEFAULT_LEASE_SECONDS,
    MAX_JOB_ID_LENGTH,
    NEW_IDENTITY_SHARE,
    AsyncReplayGuard,
    MemoryReplayGuard,
    Quota,
    Quotas,
    ReplayGuard,
    quota_group,
    replay_identity,
)
from ._replay_sqlite import AsyncSQLiteReplayGuard, SQLiteReplayGuard
from ._replay_redis import AsyncRedisReplayGuard, RedisReplayGuard
from ._sender import DELEGATION_CAPABILITY, SenderIdentity, verify_sender
from ._rules import (
    DEFAULT_MAX_LIFETIME_SECONDS,
    DEFAULT_SKEW_SECONDS,
    FROM_TYPES,
    OfferCheck,
    validate_offer,
)

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
    "ANY_RECIPIENT",
    "SPEC_CAPABILITIES",
    "NO_REPLAY_GUARD",
    "DEFAULT_MAX_BODY_BYTES",
    "check_content_type",
    "Receiver",
    "ReceivedOffer",
    "IdentityCache",
    "offer_digest",
    "HttpAnswer",
    "OfferAnswer",
    "AckAnswer",
    "refusal_answer",
    "status_answer",
    "ack_answer",
    "Recipients",
    "Capabilities",
    "Secret",
    "SecretLookup",
    "DeclarationResolver",
    "JobStatusName",
    "SenderType",
    "verify_sender",
    "SenderIdentity",
    "DELEGATION_CAPABILITY",
    "new_offer",
    "new_result",
    "DEFAULT_BUDGET",
    "new_job_id",
    "replay_identity",
    "ReplayGuard",
    "AsyncReplayGuard",
    "MemoryReplayGuard",
    "SQLiteReplayGuard",
    "AsyncSQLiteReplayGuard",
    "RedisReplayGuard",
    "AsyncRedisReplayGuard",
    "Quota",
    "Quotas",
    "MAX_JOB_ID_LENGTH",
    "DEFAULT_LEASE_SECONDS",
    "NEW_IDENTITY_SHARE",
    "quota_group",
    "SignedSubset",
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
    "StateUnavailable",
    "JobInProgress",
    "PayloadTooLarge",
    "UnsupportedMediaType",
]
