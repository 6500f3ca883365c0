"""The HTTP answer to a refusal: status and AJP ``ErrorBody`` for any ajpcore error."""

from __future__ import annotations

from typing import Any, Dict, Tuple

from ..errors import AjpError, Busy, DecodeError, InvalidMessage, StateUnavailable, ValidationError
from ._messages import ErrorBody


_TITLES = {400: "Invalid JobOffer", 401: "Invalid signature", 402: "Budget refused",
           403: "Sender identity could not be established", 409: "Duplicate job", 429: "Too many requests"}


def error_response(exc: BaseException) -> Tuple[int, ErrorBody]:
    """The HTTP status and AJP ``ErrorBody`` to answer a refusal with.

    400 ``{"error": "Invalid JobOffer", "errors": [...]}`` for malformed or invalid
    offers (one line per problem); 401 ``{"error": "Invalid signature", "code":
    ..., "reason": ...}`` (``LEGACY_SIGNATURE`` for pre-0.3 senders); 402, 403 and
    409 with ``code`` and ``reason``; 429 with ``retry_after``; 503
    ``STATE_UNAVAILABLE`` with ``retry_after`` and a fixed reason (the store's
    own message, which may name files or hosts, stays in the log).  Any other
    exception is a 500 ``{"error": "Internal error"}`` that reveals nothing.
    """
    if isinstance(exc, Busy):
        return 429, ErrorBody(error=_TITLES[429], code=exc.code, reason=str(exc), retry_after=exc.retry_after)
    if isinstance(exc, StateUnavailable):
        reason = "the receiver cannot reach its replay or key-pin store; retry later"
        return 503, ErrorBody(error="Service unavailable", code=exc.code, reason=reason, retry_after=exc.retry_after)
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


def error_body(exc: BaseException) -> Dict[str, Any]:
    """``error_response(exc)``'s body as a JSON object: what ``AjpError.error_body()`` returns."""
    return error_response(exc)[1].to_dict()
