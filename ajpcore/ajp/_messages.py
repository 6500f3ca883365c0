"""The AJP envelopes and their parts: ``JobOffer``, ``JobStatus``, ``JobResult``,
``Ack``, ``Accepted``, ``ErrorBody``; ``Sender``, ``Recipient``, ``Task``,
``Context``, ``Budget``, ``Callback``, ``Usage``, ``AgentInfo``; job ids.
"""

from __future__ import annotations

import secrets
import time
from typing import TYPE_CHECKING, Any, Dict, List, Literal, Optional, Tuple, Union, get_args, overload

from ..errors import BadSignature, InvalidMessage, LegacySignature, SignatureError
from ..signing import _hmac_matches, parse_signature, sign, verify
from .._envelope import Envelope, member
from .._envelope_schemas import compiled
from ..keys import Ed25519PrivateKey, Ed25519PublicKey
from ._subset import SignedSubset

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self from 3.11

_SCHEME_FOR = {"human": "sha256:", "agent": "ed25519:", "orchestrator": "ed25519:"}
"""The signature scheme each ``from.type`` signs with (AJP 0.3: humans share a secret, agents hold keys)."""

SenderType = Literal["human", "agent", "orchestrator"]
"""``from.type`` of a JobOffer."""
JobStatusName = Literal["accepted", "running", "completed", "failed", "rejected", "expired"]
"""``status`` of a JobStatus and a JobResult."""
JOB_STATUSES: Tuple[JobStatusName, ...] = get_args(JobStatusName)
_Secret = Union[str, bytes, None]
_PublicKey = Union[Ed25519PublicKey, str, None]
_PrivateKey = Union[Ed25519PrivateKey, str, None]


# -- schemas -----------------------------------------------------------------------------

_OFFER_SCHEMA = compiled("ajp-job-offer")
"""``JobOffer``'s schema, compiled at import: the receive path's first check (``_pipeline``, ``_rules``)."""


# -- JobOffer and its parts ----------------------------------------------------------------


class Sender(Envelope):
    """``from`` of a JobOffer: who sends the job."""

    __slots__ = ()
    _SCHEMA = ("ajp-job-offer", "from")
    type: SenderType
    id: Optional[str] = None
    provenance_id: Optional[str] = None
    declaration_url: Optional[str] = None


class Recipient(Envelope):
    """``to`` of a JobOffer: the Provenance id of the receiving agent."""

    __slots__ = ()
    _SCHEMA = ("ajp-job-offer", "to")
    provenance_id: str


class Task(Envelope):
    """``task``: what to do (``type``, ``instruction``, optional ``input`` and ``output_format``)."""

    __slots__ = ()
    _SCHEMA = ("ajp-job-offer", "task")
    type: str
    instruction: str
    input: Optional[Dict[str, Any]] = None
    output_format: Optional[str] = None


class Context(Envelope):
    """``context``: credentials, memory and constraints handed to the agent."""

    __slots__ = ()
    _SCHEMA = ("ajp-job-offer", "context")
    credentials: Optional[Dict[str, Any]] = None
    memory: Optional[List[Any]] = None
    constraints: Optional[List[str]] = None


class Budget(Envelope):
    """``budget``: ``max_usd`` (required, >= 0), ``max_seconds`` and ``max_llm_tokens`` (>= 1)."""

    __slots__ = ()
    _SCHEMA = ("ajp-job-offer", "budget")
    max_usd: Union[int, float]
    max_seconds: Optional[Union[int, float]] = None
    max_llm_tokens: Optional[Union[int, float]] = None


class Callback(Envelope):
    """``callback``: where the JobResult is POSTed (``url``, optional ``headers``)."""

    __slots__ = ()
    _SCHEMA = ("ajp-job-offer", "callback")
    url: str
    headers: Optional[Dict[str, Any]] = None


class JobOffer(Envelope):
    """An AJP JobOffer (``POST /jobs``).  ``sender`` is the wire member ``from``.

    ``verify(secret=... | public_key=...)`` checks the signature over the body as
    received (unknown members included); ``signed(...)`` returns a signed copy.
    """

    __slots__ = ()
    _SCHEMA = ("ajp-job-offer",)
    ajp: str
    job_id: str
    parent_job_id: Optional[str] = None
    sender: Sender = member(json='from')
    to: Recipient
    task: Task
    context: Optional[Context] = None
    budget: Budget
    callback: Optional[Callback] = None
    issued_at: str
    expires_at: str
    signature: Optional[str] = None

    def verify(
        self, *, secret: _Secret = None, public_key: _PublicKey = None, backend: Optional[str] = None,
        any_scheme: bool = False,
    ) -> None:
        """Check ``signature`` over the received body (see ``ajpcore.signing.verify``).

        The scheme must fit the sender type ``from.type``: ``sha256:`` (a shared
        secret) for ``human``, ``ed25519:`` for ``agent`` and ``orchestrator``, so a
        shared secret cannot speak for an agent's ``provenance_id``.  A misfit
        raises ``InvalidMessage`` (HTTP 400, the message ``validate_offer(strict=True)``
        and ``receive_offer`` give) before any signature check; ``any_scheme=True``
        accepts either scheme from any sender type.

        Returns None when valid; raises ``InvalidMessage`` (400), ``BadSignature``,
        ``MalformedSignature``, ``UnsupportedScheme``, ``LegacySignature`` (all
        HTTP 401) or a key error.
        """
        raw = self._raw
        if public_key is None and backend is None and (any_scheme or raw["from"]["type"] == "human"):
            if _hmac_matches(raw, secret):  # the hot path: an exact `sha256:` match from a human sender
                return
        if not any_scheme:
            signature = raw.get("signature")
            sender_type = raw["from"]["type"]
            expected = _SCHEME_FOR[sender_type]
            if type(signature) is str and not signature.startswith(expected):
                parse_signature(signature)  # MalformedSignature / UnsupportedScheme (401) as `verify` raises them
                raise InvalidMessage([f"signature scheme must be {expected[:-1]} for a {sender_type} sender"])
        verify(raw, secret=secret, public_key=public_key, backend=backend)

    def signed(self, *, secret: _Secret = None, private_key: _PrivateKey = None) -> "JobOffer":
        """A copy of this offer carrying the signature of its body (unknown members included)."""
        body = self.to_dict()
        body["signature"] = sign(body, secret=secret, private_key=private_key)
        return JobOffer.from_dict(body)

    def _body(self) -> Dict[str, Any]:
        return self._raw


# -- JobStatus, JobResult ------------------------------------------------------------------


class Usage(Envelope):
    """``usage`` of a result: ``llm_tokens``, ``duration_seconds``, ``cost_usd`` (all >= 0)."""

    __slots__ = ()
    _SCHEMA = ("ajp-job-result", "usage")
    llm_tokens: Optional[Union[int, float]] = None
    duration_seconds: Optional[Union[int, float]] = None
    cost_usd: Optional[Union[int, float]] = None


class AgentInfo(Envelope):
    """``agent`` of a result: ``provenance_id``, ``version``, ``model`` (a name or ``{provider, model_id}``)."""

    __slots__ = ()
    _SCHEMA = ("ajp-job-result", "agent")
    provenance_id: str
    version: Optional[str] = None
    model: Optional[Union[str, Dict[str, Any]]] = None


_VERIFY_MODES = ("full", "sdk")


class _ResultLike(Envelope):
    __slots__ = ()

    def sdk_subset(self) -> Dict[str, Any]:
        """What the reference SDK 0.3 signs: ``{job_id, status, output, constraints_asserted,
        completed_at, agent: {provenance_id}}``, each member only when present (``output``
        omitted when absent, as ``JSON.stringify`` drops ``undefined``)."""
        body = self._raw
        subset: Dict[str, Any] = {}
        for key in ("job_id", "status", "output", "constraints_asserted", "completed_at"):
            if key in body:
                subset[key] = body[key]
        agent = body.get("agent")
        subset["agent"] = {"provenance_id": agent["provenance_id"]} if isinstance(agent, dict) and "provenance_id" in agent else {}
        if "signature" in body:
            subset["signature"] = body["signature"]
        return subset

    @overload
    def verify(
        self, *, secret: _Secret = None, public_key: _PublicKey = None, mode: Literal["full"] = "full", backend: Optional[str] = None
    ) -> Literal["full"]: ...

    @overload
    def verify(
        self, *, secret: _Secret = None, public_key: _PublicKey = None, mode: Literal["sdk"], backend: Optional[str] = None
    ) -> "SignedSubset[Self]": ...

    def verify(
        self, *, secret: _Secret = None, public_key: _PublicKey = None, mode: str = "full", backend: Optional[str] = None
    ) -> Union[str, "SignedSubset[Self]"]:
        """Check ``signature``: over the whole body (``mode="full"``, the default) or the SDK's subset (``"sdk"``).

        ``mode="full"`` (the specification): every member as received is
        covered; returns ``"full"``.  When it fails, the refusal says whether the
        signature covers only the reference SDK's subset (``BadSignature``
        naming ``mode="sdk"``) or is a pre-0.3 signature of the body or of the
        subset (``LegacySignature``).

        ``mode="sdk"`` (explicit opt-in): only ``sdk_subset()``, what the
        reference SDK 0.3 signs.  Returns a ``SignedSubset``: its ``to_dict()``
        holds only the signed members, ``unsigned_members`` names every other
        received member (``usage``, ``ajp``, ``agent.version``, ``agent.model``,
        unknown members...) as a JSON Pointer.

        Raises ``BadSignature``, ``MalformedSignature``, ``UnsupportedScheme``,
        ``LegacySignature`` (all HTTP 401) or a key error; ``ValueError`` for
        another ``mode`` (``"any"``, the silent fallback of 0.1, is gone).
        """
        if mode == "full":
            try:
                verify(self._raw, secret=secret, public_key=public_key, backend=backend)
            except BadSignature as exc:
                failure = exc
            else:
                return "full"
            try:  # only to explain the refusal: which form does the signature match?
                verify(self.sdk_subset(), secret=secret, public_key=public_key, backend=backend)
            except LegacySignature:
                raise
            except SignatureError:
                raise failure from None
            raise BadSignature(
                "The signature covers only the reference SDK's subset of the result, not the whole body:"
                ' verify(mode="sdk") accepts it and reports the unsigned members'
            ) from None
        if mode == "sdk":
            subset = self.sdk_subset()
            verify(subset, secret=secret, public_key=public_key, backend=backend)
            return SignedSubset(self, self._raw, subset)
        raise ValueError(f"mode must be `full` or `sdk`, got {mode!r}")


class JobStatus(_ResultLike):
    """An AJP JobStatus (``GET /jobs/:id``); when completed it may carry the result members."""

    __slots__ = ()
    _SCHEMA = ("ajp-job-status",)
    ajp: Optional[str] = None
    job_id: str
    status: JobStatusName
    progress: Optional[Union[int, float]] = None
    message: Optional[str] = None
    started_at: Optional[str] = None
    updated_at: Optional[str] = None
    estimated_completion: Optional[str] = None
    output: Any = None
    constraints_asserted: Optional[List[str]] = None
    usage: Optional[Usage] = None
    agent: Optional[AgentInfo] = None
    completed_at: Optional[str] = None
    signature: Optional[str] = None


class JobResult(_ResultLike):
    """An AJP JobResult (POSTed to the callback).  ``verify`` knows the spec's and the SDK's forms.

    ``output`` is any JSON value; a JSON ``null`` output and an absent one both
    read as None here, but ``to_dict``/``to_json``/``verify`` keep the difference.
    """

    __slots__ = ()
    _SCHEMA = ("ajp-job-result",)
    ajp: Optional[str] = None
    job_id: str
    status: JobStatusName
    output: Any = None
    constraints_asserted: Optional[List[str]] = None
    usage: Optional[Usage] = None
    agent: AgentInfo
    completed_at: str
    signature: Optional[str] = None

    def signed(
        self, *, secret: _Secret = None, private_key: _PrivateKey = None, mode: Literal["full", "sdk"] = "full"
    ) -> "JobResult":
        """A copy signed over the full body (``mode="full"``) or the SDK subset (``"sdk"``)."""
        if mode not in _VERIFY_MODES:
            raise ValueError(f"mode must be `full` or `sdk`, got {mode!r}")
        body = self.to_dict()
        target = body if mode == "full" else self.sdk_subset()
        body["signature"] = sign(target, secret=secret, private_key=private_key)
        return JobResult.from_dict(body)


# -- responses -----------------------------------------------------------------------------


class Ack(Envelope):
    """The body of ``POST /jobs/:id/ack``: ``received`` and optional ``feedback``."""

    __slots__ = ()
    _SCHEMA = ("ajp-ack",)
    received: bool
    feedback: Optional[str] = None


class Accepted(Envelope):
    """The ``202`` answer to ``POST /jobs``: ``{"job_id": ..., "status": "accepted"}``."""

    __slots__ = ()
    _SCHEMA = ("ajp-accepted",)
    job_id: str
    status: Literal["accepted"]


class ErrorBody(Envelope):
    """An AJP error response: ``error`` (title), ``code``, ``reason``, ``errors`` (400),
    ``retry_after`` (429), ``job_id`` (404)."""

    __slots__ = ()
    _SCHEMA = ("ajp-error-body",)
    error: str
    code: Optional[str] = None
    reason: Optional[str] = None
    errors: Optional[List[str]] = None
    retry_after: Optional[int] = None
    job_id: Optional[str] = None


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
