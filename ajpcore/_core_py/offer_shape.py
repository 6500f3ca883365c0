"""What the AJP specification fixes of a JobOffer, checked in one pass: twin of ``native/offer_shape.pxi``.

The receive pipeline's shape step (``ajpcore.ajp._pipeline.shape``) runs the shipped offer schema
(``ajp-job-offer.schema.json``, on jsonschema-rs), ``validate_offer(strict=True)``'s rules and the
recipient check.  On the offers a receiver sees, all of that is a fixed list of member types,
lengths, enums, two patterns, two timestamps and a few comparisons: these functions state the list
once and check it in one walk of the decoded object, without the schema engine.

They only ever *prove*: a result means the offer passes (and gives the instants the pipeline
needs); ``None`` means "not proven here", never "invalid", and the pipeline then runs the schema
engine and the rules, which decide and name every problem with today's texts.  So an answer is
exact whenever it is given.  Where the schema's check is one this module does not restate in full
(``format: uri``: RFC 3986), the subset it proves is plainly inside the RFC's grammar (no
userinfo, no IP literal) and anything else is left to the engine.  ``tests/receive/test_offer_shape_proof.py``
holds both twins to jsonschema-rs on generated offers.

``value`` is what ``decode`` returned (exact ``dict``/``list``/``str``/``int``/``float``/``bool``/
``None``); any other type inside a checked member is "not proven".
"""

from __future__ import annotations

import re
from typing import Any, FrozenSet, Optional, Tuple

from .rfc3339 import rfc3339_micros

__all__ = ["offer_schema_instants", "offer_accepted_expiry"]


# ---------------------------------------------------------------------------
# The offer schema's fixed part (ajpcore/schemas/ajp-job-offer.schema.json)
# ---------------------------------------------------------------------------

_AJP_VERSION = re.compile(r"[0-9]+\.[0-9]+").fullmatch  # "^[0-9]+\.[0-9]+$" (ECMA-262 `$`: the very end)
_SCHEME = re.compile(r"[a-z][a-z0-9_-]*:").match  # "^[a-z][a-z0-9_-]*:"
_FROM_TYPES = ("human", "agent", "orchestrator")
_OUTPUT_FORMATS = ("json", "text", "markdown", "html", "any")

# RFC 3986 section 3 (URI = scheme ":" hier-part [ "?" query ] [ "#" fragment ]), less userinfo and
# IP-literal hosts: a URI of this form is an RFC 3986 URI; one of another form is left to the engine.
_UNRESERVED_SUB_DELIMS = r"A-Za-z0-9\-._~!$&'()*+,;="
_PCT = r"%[0-9A-Fa-f]{2}"
_PCHAR = rf"(?:[{_UNRESERVED_SUB_DELIMS}:@]|{_PCT})"
_URI = re.compile(
    rf"[A-Za-z][A-Za-z0-9+.\-]*:"  # scheme
    rf"(?://(?:[{_UNRESERVED_SUB_DELIMS}]|{_PCT})*(?::[0-9]*)?(?:/(?:{_PCHAR}|/)*)?"  # "//" reg-name [":" port] path-abempty
    rf"|(?!//)(?:{_PCHAR}|/)*)"  # path-absolute, path-rootless or path-empty
    rf"(?:\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?"  # [ "?" query ] [ "#" fragment ]
).fullmatch


def _is_number(v: Any) -> bool:
    return type(v) is int or type(v) is float  # JSON Schema "number" (a bool is not one)


def _string_or_null(v: Any, max_length: int = -1) -> bool:
    return v is None or (type(v) is str and (max_length < 0 or len(v) <= max_length))


def _uri(v: Any) -> bool:
    return type(v) is str and v.isascii() and _URI(v) is not None


def _sender(sender: Any) -> bool:
    """``from``: its ``type`` one of the three, ``id``/``provenance_id``/``declaration_url`` strings or
    null (``declaration_url`` a URI), and an agent's or orchestrator's ``provenance_id`` a non-empty string."""
    if type(sender) is not dict:
        return False
    kind = sender.get("type")
    if type(kind) is not str or kind not in _FROM_TYPES:
        return False
    if "id" in sender and not _string_or_null(sender["id"]):
        return False
    if "declaration_url" in sender:
        url = sender["declaration_url"]
        if url is not None and not _uri(url):
            return False
    if "provenance_id" in sender:
        provenance_id = sender["provenance_id"]
        if kind == "human":
            return _string_or_null(provenance_id)
        return type(provenance_id) is str and len(provenance_id) >= 1
    return kind == "human"


def _task(task: Any) -> bool:
    """``task``: ``type`` and ``instruction`` non-empty strings, ``input`` an object, ``output_format`` one of five."""
    if type(task) is not dict:
        return False
    for name in ("type", "instruction"):
        text = task.get(name)
        if type(text) is not str or not text:
            return False
    if "input" in task and type(task["input"]) is not dict:
        return False
    if "output_format" in task:
        output_format = task["output_format"]
        if type(output_format) is not str or output_format not in _OUTPUT_FORMATS:
            return False
    return True


def _context(context: Any) -> bool:
    """``context``: ``credentials`` an object, ``memory`` an array, ``constraints`` an array of strings."""
    if type(context) is not dict:
        return False
    if "credentials" in context and type(context["credentials"]) is not dict:
        return False
    if "memory" in context and type(context["memory"]) is not list:
        return False
    if "constraints" in context:
        constraints = context["constraints"]
        if type(constraints) is not list:
            return False
        for item in constraints:
            if type(item) is not str:
                return False
    return True


def _budget(budget: Any) -> bool:
    """``budget``: ``max_usd`` a number >= 0; ``max_seconds``, ``max_llm_tokens`` numbers >= 1."""
    if type(budget) is not dict:
        return False
    max_usd: Any = budget.get("max_usd")
    if not _is_number(max_usd) or not max_usd >= 0:
        return False
    for name in ("max_seconds", "max_llm_tokens"):
        if name in budget:
            bound = budget[name]
            if not _is_number(bound) or not bound >= 1:
                return False
    return True


def _callback(callback: Any) -> bool:
    """``callback``: null, or an object whose ``url`` is a URI and ``headers`` an object."""
    if callback is None:
        return True
    if type(callback) is not dict or "url" not in callback or not _uri(callback["url"]):
        return False
    return "headers" not in callback or type(callback["headers"]) is dict


def offer_schema_instants(value: Any) -> Optional[Tuple[int, int]]:
    """``(issued_us, expires_us)`` of an offer proven valid under the shipped offer schema (formats
    asserted), else None: not proven (the engine decides).  The members in the schema's order."""
    if type(value) is not dict:
        return None
    ajp = value.get("ajp")
    if type(ajp) is not str or _AJP_VERSION(ajp) is None:
        return None
    job_id = value.get("job_id")
    if type(job_id) is not str or not 8 <= len(job_id) <= 256:
        return None
    if "parent_job_id" in value and not _string_or_null(value["parent_job_id"], 256):
        return None
    if not _sender(value.get("from")):
        return None
    recipient = value.get("to")
    if type(recipient) is not dict:
        return None
    provenance_id = recipient.get("provenance_id")
    if type(provenance_id) is not str or not provenance_id:
        return None
    if not _task(value.get("task")):
        return None
    if "context" in value and not _context(value["context"]):
        return None
    if not _budget(value.get("budget")):
        return None
    if "callback" in value and not _callback(value["callback"]):
        return None
    issued_us = rfc3339_micros(value.get("issued_at"))  # None for a non-str, an absent member included
    expires_us = rfc3339_micros(value.get("expires_at"))
    if issued_us is None or expires_us is None:
        return None
    signature = value.get("signature")
    if type(signature) is not str or _SCHEME(signature) is None:
        return None
    return issued_us, expires_us


# ---------------------------------------------------------------------------
# The shape step: schema, strict rules, recipient
# ---------------------------------------------------------------------------

_LIMIT = 1 << 62
"""Bounds a limit in microseconds to: every difference of two instants (years 0000-9999) is far inside."""


def _limit_us(seconds: Any) -> Optional[int]:
    """The largest whole number of microseconds ``d`` with ``d <= seconds * 1_000_000`` (as Python computes
    the product), clamped to +-2**62; None for NaN or a type other than int and float."""
    if type(seconds) is int:
        return max(-_LIMIT, min(_LIMIT, seconds * 1_000_000))
    if type(seconds) is not float:
        return None
    product = seconds * 1_000_000
    if product != product:
        return None
    if product >= _LIMIT:
        return _LIMIT
    if product <= -_LIMIT:
        return -_LIMIT
    return int(product // 1)  # floor: d <= product exactly when d <= floor(product), d an int


def offer_accepted_expiry(
    value: Any, now_us: Any, skew: Any, max_lifetime: Any, recipients: Optional[FrozenSet[str]]
) -> Optional[int]:
    """``expires_us`` of an offer the shape step accepts outright, else None (not proven: it decides).

    Proven: ``offer_schema_instants`` holds; the strict rules at ``now_us`` with ``skew`` and
    ``max_lifetime`` seconds (not expired, issued at most ``skew`` ahead, ``issued < expires``,
    lifetime at most ``max_lifetime``, the signature's scheme the one of ``from.type``); and
    ``to.provenance_id`` in ``recipients`` (None: any recipient).  ``now_us`` an int, ``recipients``
    a frozenset or None; anything else is not proven.
    """
    instants = offer_schema_instants(value)
    if instants is None or type(now_us) is not int or not -_LIMIT < now_us < _LIMIT:
        return None
    skew_us = _limit_us(skew)
    lifetime_us = _limit_us(max_lifetime)
    if skew_us is None or lifetime_us is None:
        return None
    issued_us, expires_us = instants
    if not (now_us <= expires_us and issued_us - now_us <= skew_us and issued_us < expires_us
            and expires_us - issued_us <= lifetime_us):
        return None
    scheme = "sha256:" if value["from"]["type"] == "human" else "ed25519:"
    if not value["signature"].startswith(scheme):
        return None
    if recipients is not None:
        if type(recipients) is not frozenset or value["to"]["provenance_id"] not in recipients:
            return None
    return expires_us
