"""The HTTP answer to a refusal: status and AJP ``ErrorBody`` for any ajpcore error."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from ..errors import (
    AjpError,
    Busy,
    DeclarationUnreachable,
    DecodeError,
    InvalidMessage,
    RecipientMismatch,
    StateUnavailable,
    ValidationError,
)
from ._messages import ErrorBody


_TITLES = {400: "Invalid JobOffer", 401: "Invalid signature", 402: "Budget refused",
           403: "Sender identity could not be established", 404: "Job not found", 409: "Duplicate job",
           413: "Payload too large", 415: "Unsupported media type", 429: "Too many requests",
           503: "Service unavailable"}
_MESSAGES = ("JobOffer", "Ack", "JobStatus", "JobResult")


def error_response(exc: BaseException, *, message: str = "JobOffer") -> Tuple[int, ErrorBody]:
    """The HTTP status and AJP ``ErrorBody`` to answer a refusal with.

    ``message`` names what was refused (``"JobOffer"``, the body of ``POST
    /jobs``; ``"Ack"``, of ``POST /jobs/:id/ack``; ``"JobStatus"``,
    ``"JobResult"``).  Every body is the AJP specification's ``{"error",
    "reason"}`` (``error`` a title, ``reason`` one readable line of at most 300
    characters) plus ajpcore's ``code``: 400 ``"Invalid <message>"`` for a
    malformed or invalid one, with ``errors`` (one line per problem) and the first
    of them as ``reason`` ("... (and N more problems)"); 401 ``"Invalid
    signature"`` (``LEGACY_SIGNATURE`` for pre-0.3 senders); 402, 403
    (``WRONG_RECIPIENT``: "Offer addressed to another agent";
    ``DECLARATION_UNREACHABLE`` with a fixed reason: the fetch failure's text
    stays with the host), 409, 413 ``PAYLOAD_TOO_LARGE``, 415
    ``UNSUPPORTED_MEDIA_TYPE``; 429 with ``retry_after`` (seconds; the
    ``Retry-After`` header of ``refusal_answer``); 503 ``STATE_UNAVAILABLE`` with
    ``retry_after`` and a fixed reason (the store's own message, which may name
    files or hosts, stays in the log).  Any other exception, and an ajpcore error
    of status 500, is a 500 ``{"error": "Internal error", "reason": ...}`` that
    reveals nothing.  Raises ``ValueError`` for another ``message``.
    """
    if message not in _MESSAGES:
        raise ValueError(f"message must be one of {', '.join(_MESSAGES)}, got {message!r}")
    invalid = f"Invalid {message}"
    if isinstance(exc, Busy):
        return 429, ErrorBody(error=_TITLES[429], code=exc.code, reason=_line(str(exc)), retry_after=exc.retry_after)
    if isinstance(exc, InvalidMessage):
        lines = list(exc.errors)
        return 400, ErrorBody(error=invalid, code=exc.code, reason=_summary(lines), errors=lines)
    if isinstance(exc, ValidationError):
        lines = [f"{reason} - at `{path}`" for path, reason in exc.errors]
        return 400, ErrorBody(error=invalid, code=exc.code, reason=_summary(lines), errors=lines)
    if isinstance(exc, DecodeError):
        lines = [str(exc)]
        return 400, ErrorBody(error=invalid, code=exc.code, reason=_summary(lines), errors=lines)
    if isinstance(exc, RecipientMismatch):
        return 403, ErrorBody(error="Offer addressed to another agent", code=exc.code, reason=_line(str(exc)))
    if isinstance(exc, DeclarationUnreachable):  # the fetch failure's own text stays with the host (its log)
        return 403, ErrorBody(error=_TITLES[403], code=exc.code, reason=_UNREACHABLE_REASON)
    if isinstance(exc, StateUnavailable):
        reason = "the receiver cannot reach its replay or key-pin store; retry later"
        return 503, ErrorBody(error=_TITLES[503], code=exc.code, reason=reason, retry_after=exc.retry_after)
    if isinstance(exc, AjpError) and exc.status in _TITLES:
        title = invalid if exc.status == 400 else _TITLES[exc.status]
        return exc.status, ErrorBody(error=title, code=exc.code, reason=_line(str(exc)))
    if isinstance(exc, AjpError) and 400 <= exc.status < 500:
        return exc.status, ErrorBody(error="Request refused", code=exc.code, reason=_line(str(exc)))
    return 500, ErrorBody(error="Internal error", reason="the receiver failed; nothing about the request is known")


_UNREACHABLE_REASON = "the sender's declaration could not be fetched from its declaration_url; retry later"
_REASON_CHARS = 300
"""The longest ``reason``: one line a person reads (the ``errors`` list, when there is one, has every problem)."""


def _line(text: str) -> str:
    """``text`` as one line of at most ``_REASON_CHARS`` characters (line breaks as spaces; cut with "...")."""
    line = " ".join(text.split())
    return line if len(line) <= _REASON_CHARS else line[: _REASON_CHARS - 3] + "..."


def _summary(lines: List[str]) -> str:
    """The ``reason`` of a 400: its first problem, and how many more ``errors`` lists."""
    if not lines:
        return "the message is not well formed"
    first = _line(lines[0])
    more = len(lines) - 1
    if not more:
        return first
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})"
    return first[: _REASON_CHARS - len(suffix)] + suffix


def error_body(exc: BaseException) -> Dict[str, Any]:
    """``error_response(exc)``'s body as a JSON object: what ``AjpError.error_body()`` returns."""
    return error_response(exc)[1].to_dict()
