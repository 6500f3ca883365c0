"""The HTTP answer to a refusal: status and AJP ``ErrorBody`` for any ajpcore error."""

from __future__ import annotations

from typing import Tuple

from ..errors import _answer
from ._messages import ErrorBody


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
    status, body = _answer(exc, message)
    return status, ErrorBody(**body)

