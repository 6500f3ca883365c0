"""Building signed offers and results the way the AJP reference SDK does.

``new_offer`` is the reference client's offer (``AJPClient.send``): its
defaults, its timestamps (``toISOString``), its signature scheme per sender
type.  ``new_result`` is the reference server's JobResult, signed over the
whole body (``mode="full"``, what the specification requires) or over the
SDK 0.3 subset (``mode="sdk"``, what the reference server signs).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Literal, Mapping, Optional, Sequence, Union

from ..errors import InvalidMessage, KeyUsageError
from ..timestamps import format_timestamp, instant_micros
from ._messages import JobOffer, JobResult, JobStatusName, _PrivateKey, _Secret, new_job_id

__all__ = ["new_offer", "new_result", "DEFAULT_BUDGET"]

DEFAULT_BUDGET: Mapping[str, Union[int, float]] = {"max_usd": 1.0, "max_seconds": 120, "max_llm_tokens": 10_000}
"""The reference client's budget where the caller gives none (each member filled in separately)."""
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
# The schemas require a signature; `signed()` replaces this one (a signature never covers itself).
_UNSIGNED = "unsigned:"


def _instant(now: Any) -> datetime:
    return _EPOCH + timedelta(microseconds=instant_micros(now))


def _object(value: Any, name: str) -> Dict[str, Any]:
    if value is None:
        return {}
    if hasattr(value, "to_dict"):
        value = value.to_dict()
    if not isinstance(value, Mapping):
        raise InvalidMessage([f"{name} must be an object, got {type(value).__name__}"])
    return dict(value)


def _signing_keys(sender_type: Any, secret: Any, private_key: Any) -> Dict[str, Any]:
    if (secret is None) == (private_key is None):
        raise KeyUsageError("give exactly one of `secret` (human senders) or `private_key` (agents, orchestrators)")
    if sender_type == "human" and secret is None:
        raise KeyUsageError("a human sender signs with HMAC-SHA256: give `secret`, not `private_key`")
    if sender_type in ("agent", "orchestrator") and private_key is None:
        raise KeyUsageError(f"an {sender_type} sender signs with Ed25519: give `private_key`, not `secret`")
    return {"secret": secret} if secret is not None else {"private_key": private_key}


def _js_or(value: Any, default: Any) -> Any:
    # `value || default` on a JSON value (ECMAScript ToBoolean): the client's defaults for strings and ids.
    if value is None or value is False or value == "" or (type(value) in (int, float) and value == 0):
        return default
    return value


def new_offer(
    *,
    sender: Any,
    to: Any,
    task: Any,
    budget: Any = None,
    now: Any,
    secret: _Secret = None,
    private_key: _PrivateKey = None,
    parent_job_id: Optional[str] = None,
    context: Any = None,
    callback: Any = None,
    job_id: Optional[str] = None,
) -> JobOffer:
    """A signed ``JobOffer`` built as the reference client (``AJPClient.send``) builds it.

    ``sender``: ``from`` (``type``, optional ``id``, ``provenance_id``,
    ``declaration_url``), as an object or a ``Sender``.  ``to``: the
    recipient's provenance id (or a ``{"provenance_id": ...}`` object).
    ``task``: ``type`` and ``instruction``, optional ``input`` (default ``{}``)
    and ``output_format`` (default ``"json"``); other members are kept.
    ``budget``: ``max_usd`` (default 1.0), ``max_seconds`` (120) and
    ``max_llm_tokens`` (10,000), each filled in where not given.
    ``context``: ``credentials`` ({}), ``memory`` ([]), ``constraints`` ([]).
    ``parent_job_id`` and ``callback`` (``{"url", "headers"?}``) default to
    null.  ``job_id``: default a fresh ``new_job_id()``.  ``now`` (aware
    datetime, RFC 3339 string or POSIX seconds) gives ``issued_at`` and
    ``expires_at`` = ``now`` + ``max_seconds`` (120 when that is 0), both in
    ECMAScript ``toISOString`` form (milliseconds, ``Z``).

    Signs with the scheme the sender type requires: ``secret`` (HMAC-SHA256)
    for a human, ``private_key`` (Ed25519) for an agent or orchestrator.
    Raises ``KeyUsageError`` for the wrong or missing key,
    ``InvalidMessage`` (the SDK's message) for an agent or orchestrator
    without ``provenance_id``, ``ValidationError`` when the result is not a
    well-formed offer, ``TimestampError`` for a bad ``now``.
    """
    frm = _object(sender, "sender")
    sender_type = frm.get("type")
    if sender_type in ("agent", "orchestrator") and not _js_or(frm.get("provenance_id"), None):
        raise InvalidMessage(["from.provenance_id required when type is agent or orchestrator"])
    keys = _signing_keys(sender_type, secret, private_key)
    issued = _instant(now)
    recipient = _object(to, "to") if not isinstance(to, str) else {"provenance_id": to}
    work = _object(task, "task")
    work["input"] = _js_or(work.get("input"), {})
    work["output_format"] = _js_or(work.get("output_format"), "json")
    given_budget = _object(budget, "budget")
    money = dict(given_budget)
    for name, default in DEFAULT_BUDGET.items():
        if money.get(name) is None:
            money[name] = default
    ctx = _object(context, "context")
    for name, empty in (("credentials", {}), ("memory", []), ("constraints", [])):
        ctx[name] = _js_or(ctx.get(name), empty)
    lifetime = _js_or(money["max_seconds"], 120)
    if isinstance(lifetime, bool) or not isinstance(lifetime, (int, float)):
        raise InvalidMessage([f"budget.max_seconds must be a number, got {type(lifetime).__name__}"])
    try:
        expires = issued + timedelta(seconds=lifetime)
    except OverflowError:
        raise InvalidMessage(["budget.max_seconds puts expires_at beyond year 9999"]) from None
    body: Dict[str, Any] = {
        "ajp": "0.1",
        "job_id": job_id if job_id is not None else new_job_id(),
        "parent_job_id": _js_or(parent_job_id, None),
        "from": {
            **frm,
            "type": sender_type,
            "id": _js_or(frm.get("id"), None),
            "provenance_id": _js_or(frm.get("provenance_id"), None),
            "declaration_url": _js_or(frm.get("declaration_url"), None),
        },
        "to": recipient,
        "task": work,
        "context": ctx,
        "budget": money,
        "callback": _object(callback, "callback") or None,
        "issued_at": format_timestamp(issued),
        "expires_at": format_timestamp(expires),
        "signature": _UNSIGNED,
    }
    signed: JobOffer = JobOffer.from_dict(body).signed(**keys)
    return signed


def new_result(
    *,
    job_id: str,
    status: JobStatusName,
    output: Any,
    agent: Any,
    now: Any,
    private_key: _PrivateKey = None,
    secret: _Secret = None,
    mode: Literal["full", "sdk"] = "full",
    constraints_asserted: Sequence[str] = (),
    usage: Any = None,
) -> JobResult:
    """A signed ``JobResult`` built as the reference server delivers it to a callback.

    ``{"ajp": "0.1", job_id, status, output, constraints_asserted, usage,
    agent, completed_at}`` with ``agent`` a provenance id (or an object with
    one), ``usage`` default ``{"llm_tokens": 0, "duration_seconds": 0,
    "cost_usd": 0}`` and ``completed_at`` = ``now`` in ``toISOString`` form.
    ``mode="full"`` signs the whole body (the specification; what
    ``JobResult.verify()`` checks by default); ``mode="sdk"`` signs what the
    reference server 0.3 signs (``JobResult.sdk_subset()``: job id, status,
    output, constraints, completion time, agent id), leaving ``usage`` and the
    rest of ``agent`` unauthenticated.  Give exactly one of ``private_key``
    (Ed25519, agents) or ``secret`` (HMAC).  Raises ``KeyUsageError`` for
    missing or doubled keys, ``ValueError`` for an unknown ``mode``,
    ``ValidationError`` when the result is not a well-formed JobResult.
    """
    if (secret is None) == (private_key is None):
        raise KeyUsageError("give exactly one of `private_key` (Ed25519) or `secret` (HMAC-SHA256)")
    body: Dict[str, Any] = {
        "ajp": "0.1",
        "job_id": job_id,
        "status": status,
        "output": output,
        "constraints_asserted": list(constraints_asserted),
        "usage": _object(usage, "usage") or {"llm_tokens": 0, "duration_seconds": 0, "cost_usd": 0},
        "agent": {"provenance_id": agent} if isinstance(agent, str) else _object(agent, "agent"),
        "completed_at": format_timestamp(_instant(now)),
        "signature": _UNSIGNED,
    }
    keys = {"secret": secret} if secret is not None else {"private_key": private_key}
    result: JobResult = JobResult.from_dict(body).signed(mode=mode, **keys)
    return result
