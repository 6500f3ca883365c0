"""What a receiver answers on each AJP endpoint, framework-neutral: status, headers, body bytes.

``POST /jobs`` (``Receiver.answer_offer``: 202 ``{job_id, status: "accepted"}``
or the refusal), ``GET /jobs/:id`` (``status_answer``: a JobStatus, or 404) and
``POST /jobs/:id/ack`` (``ack_answer``: ``{settled: true}`` or the refusal).  A
framework copies the three fields into its own response object; nothing here
knows a framework.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Literal, Mapping, Optional, Union

from .. import _core
from ..errors import AjpError, DecodeError, ReplayedMessage
from ._error_response import error_response
from ._messages import Ack, ErrorBody, JobStatus
from ._pipeline import ReceivedOffer

__all__ = ["HttpAnswer", "OfferAnswer", "AckAnswer", "refusal_answer", "status_answer", "ack_answer"]

RefusedMessage = Literal["JobOffer", "Ack", "JobStatus", "JobResult"]


def _json_headers(**more: str) -> Dict[str, str]:
    headers = {"content-type": "application/json"}
    headers.update(more)
    return headers


@dataclass(frozen=True)
class HttpAnswer:
    """One HTTP answer: ``status`` (int), ``headers`` (lower-case names -> values: ``content-type:
    application/json``, and ``retry-after`` in seconds on 429 and 503), ``body`` (canonical JSON bytes)."""

    status: int
    headers: Mapping[str, str]
    body: bytes


@dataclass(frozen=True)
class OfferAnswer(HttpAnswer):
    """The answer to ``POST /jobs``, with what the host needs to act on it.

    ``accepted``: True for a new accepted offer: run ``received.offer`` (exactly
    once).  ``duplicate``: True for a byte-identical re-send of an offer already
    accepted (an honest retry after a lost answer): the same 202 is answered, and
    the host must not run the job again.  ``received``: the accepted offer and its
    sender (set for both), ``error``: the refusal (otherwise).
    """

    received: Optional[ReceivedOffer] = None
    duplicate: bool = False
    error: Optional[AjpError] = field(default=None, compare=False)

    @property
    def accepted(self) -> bool:
        return self.status == 202 and not self.duplicate


@dataclass(frozen=True)
class AckAnswer(HttpAnswer):
    """The answer to ``POST /jobs/:id/ack``; ``ack`` is the parsed ``Ack`` when it was well formed."""

    ack: Optional[Ack] = None


def refusal_answer(exc: AjpError, *, message: RefusedMessage = "JobOffer") -> HttpAnswer:
    """The answer to a refused request: ``error_response(exc, message=message)`` as status, headers, body.

    ``retry-after`` (whole seconds) is set on 429 and 503.
    """
    status, body = error_response(exc, message=message)
    extra = {"retry-after": str(body.retry_after)} if status in (429, 503) and body.retry_after is not None else {}
    return HttpAnswer(status, _json_headers(**extra), body.to_json())


def accepted_answer(job_id: str) -> bytes:
    """The 202 body of ``POST /jobs``: canonical ``{"job_id": ..., "status": "accepted"}``."""
    body: bytes = _core.impl.canonicalize({"job_id": job_id, "status": "accepted"})
    return body


def offer_accepted(received: ReceivedOffer, duplicate: bool = False) -> OfferAnswer:
    """The answer step of an accepted offer: 202 ``{"job_id", "status": "accepted"}`` (``duplicate``: an
    honest re-send of one already accepted, answered the same)."""
    body = accepted_answer(received.offer._raw["job_id"])
    return OfferAnswer(202, _json_headers(), body, received=received, duplicate=duplicate)


def offer_refused(exc: AjpError, received: Optional[ReceivedOffer] = None) -> OfferAnswer:
    """The answer step of a refused offer: ``refusal_answer``'s status, headers and body.

    A replay whose ``same_body`` is True of an offer that passed every other step (``received``) is
    the duplicate 202, not a refusal.  An ajpcore error of status 500 other than 503 (a configuration
    or programming error) is raised again: the host's framework answers 500 and logs it.
    """
    if received is not None and isinstance(exc, ReplayedMessage) and getattr(exc, "same_body", False):
        return offer_accepted(received, duplicate=True)
    if exc.status >= 500 and exc.status != 503:
        raise exc
    refused = refusal_answer(exc)
    return OfferAnswer(refused.status, refused.headers, refused.body, error=exc)


def _not_found(job_id: str) -> ErrorBody:
    return ErrorBody(error="Job not found", code="NOT_FOUND", reason="this receiver has no job with this id", job_id=job_id)


def status_answer(job_id: str, job: Union[JobStatus, Mapping[str, Any], None]) -> HttpAnswer:
    """The answer to ``GET /jobs/:id``: 200 and the JobStatus, or 404 when ``job`` is None.

    ``job``: a ``JobStatus``, or the members of one without ``job_id`` (``status``
    required, one of ``JOB_STATUSES``; ``progress``, ``message``, ``started_at``,
    ``updated_at``, ``estimated_completion``, and result members once completed);
    ``ajp`` defaults to ``"0.1"``.  The 404 body is ``{"error": "Job not found",
    "reason": ..., "code": "NOT_FOUND", "job_id": ...}``.  Raises ``ValidationError`` when the
    members do not make a well-formed JobStatus, or one for another job id (a
    host's bug, not the client's).
    """
    if job is None:
        body = _not_found(job_id)
        return HttpAnswer(404, _json_headers(), body.to_json())
    if isinstance(job, JobStatus):
        status = job
    else:
        members: Dict[str, Any] = {"ajp": "0.1", "job_id": job_id}
        members.update(job)
        status = JobStatus.from_dict(members)
    if status.job_id != job_id:
        from ..errors import ValidationError

        raise ValidationError([("$.job_id", f"the JobStatus is for `{status.job_id}`, not `{job_id}`")])
    return HttpAnswer(200, _json_headers(), status.to_json())


def ack_answer(job_id: str, data: Union[bytes, bytearray, memoryview, str], *, known: bool) -> AckAnswer:
    """The answer to ``POST /jobs/:id/ack``: 200 ``{"settled": true}``, 404, or 400 ``Invalid Ack``.

    ``known``: whether ``job_id`` names a job this receiver has (else 404
    ``Job not found``).  ``data`` is parsed strictly as an ``Ack`` (``received``
    boolean, optional ``feedback`` string; unknown members kept); a malformed one
    is 400 ``{"error": "Invalid Ack", "errors": [...]}``.  ``{"received":
    false}`` answers ``{"settled": false}``: nothing to settle.
    """
    if not known:
        body = _not_found(job_id)
        return AckAnswer(404, _json_headers(), body.to_json())
    try:
        ack = Ack.from_json(data)
    except DecodeError as exc:  # ValidationError included
        refused = refusal_answer(exc, message="Ack")
        return AckAnswer(refused.status, refused.headers, refused.body)
    settled: bytes = _core.impl.canonicalize({"settled": ack.received})
    return AckAnswer(200, _json_headers(), settled, ack=ack)
