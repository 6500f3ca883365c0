"""The HTTP answer to a refusal: status and AJP ``ErrorBody`` for any ajpcore error."""

from __future__ import annotations

from typing import Any, Dict, Tuple

from ..errors import (
    AjpError,
    Busy,
    DecodeError,
    InvalidMessage,
    JobInProgress,
    RecipientMismatch,
    StateUnavailable,
    ValidationError,
)
from ._messages import ErrorBody


_TITLES = {400: "Invalid JobOffer", 401: "Invalid signature", 402: "Budget refused",
           403: "Sender identity could not be established", 404: "Job not found", 409: "Duplicate job",
           429: "Too many requests", 503: "Service unavailable"}
_MESSAGES = ("JobOffer", "Ack", "JobStatus", "JobResult")


def error_response(exc: BaseException, *, message: str = "JobOffer") -> Tuple[int, ErrorBody]:
    """The HTTP status and AJP ``ErrorBody`` to answer a refusal with.

    ``message`` names what was refused (``"JobOffer"``, the body of ``POST
    /jobs``; ``"Ack"``, of ``POST /jobs/:id/ack``; ``"JobStatus"``,
    ``"JobResult"``): 400 ``{"error": "Invalid <message>", "errors": [...]}`` for
    a malformed or invalid one (one line per problem); 401 ``{"error": "Invalid
    signature", "code": ..., "reason": ...}`` (``LEGACY_SIGNATURE`` for pre-0.3
    senders); 402, 403 (``WRONG_RECIPIENT``: "Offer addressed to another
    agent") and 409 with ``code`` and ``reason``; 429 with ``retry_after``
    (seconds; the ``Retry-After`` header of ``refusal_answer``); 503
    ``STATE_UNAVAILABLE`` with ``retry_after`` and a fixed reason (the store's
    own message, which may name files or hosts, stays in the log); 503
    ``IN_PROGRESS`` with ``retry_after`` for a retry of an offer whose job the
    receiver is taking right now (``JobInProgress``).
    Any other exception, and an ajpcore error of status 500, is a 500
    ``{"error": "Internal error"}`` that reveals nothing.  Raises ``ValueError``
    for another ``message``.
    """
    if message not in _MESSAGES:
        raise ValueError(f"message must be one of {', '.join(_MESSAGES)}, got {message!r}")
    invalid = f"Invalid {message}"
    if isinstance(exc, Busy):
        return 429, ErrorBody(error=_TITLES[429], code=exc.code, reason=str(exc), retry_after=exc.retry_after)
    if isinstance(exc, InvalidMessage):
        return 400, ErrorBody(error=invalid, code=exc.code, errors=list(exc.errors))
    if isinstance(exc, ValidationError):
        lines = [f"{reason} - at `{path}`" for path, reason in exc.errors]
        return 400, ErrorBody(error=invalid, code=exc.code, errors=lines)
    if isinstance(exc, DecodeError):
        return 400, ErrorBody(error=invalid, code=exc.code, errors=[str(exc)])
    if isinstance(exc, RecipientMismatch):
        return 403, ErrorBody(error="Offer addressed to another agent", code=exc.code, reason=str(exc))
    if isinstance(exc, StateUnavailable):
        reason = "the receiver cannot reach its replay or key-pin store; retry later"
        return 503, ErrorBody(error=_TITLES[503], code=exc.code, reason=reason, retry_after=exc.retry_after)
    if isinstance(exc, JobInProgress):
        return 503, ErrorBody(error=_TITLES[503], code=exc.code, reason=str(exc), retry_after=exc.retry_after)
    if isinstance(exc, AjpError) and exc.status in _TITLES:
        title = invalid if exc.status == 400 else _TITLES[exc.status]
        return exc.status, ErrorBody(error=title, code=exc.code, reason=str(exc))
    if isinstance(exc, AjpError) and 400 <= exc.status < 500:
        return exc.status, ErrorBody(error="Request refused", code=exc.code, reason=str(exc))
    return 500, ErrorBody(error="Internal error")


def error_body(exc: BaseException) -> Dict[str, Any]:
    """``error_response(exc)``'s body as a JSON object: what ``AjpError.error_body()`` returns."""
    return error_response(exc)[1].to_dict()
