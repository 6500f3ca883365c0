"""Acceptance rules of a JobOffer: ``validate_offer`` (the reference SDK's
``validateOffer`` plus a strict mode) and its verdict ``OfferCheck``.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .._js_date import DAY_MS as JS_DAY_MS
from .._js_date import EXACT as JS_EXACT
from .._js_date import INVALID as JS_INVALID
from .._js_date import LOCAL as JS_LOCAL
from .._js_date import read_date
from ..errors import InvalidMessage
from ..timestamps import _micros_or_none, instant_micros, timestamp_micros
from ._messages import _OFFER_SCHEMA, _SCHEME_FOR, JobOffer
from .._envelope import ABSENT as _MISSING  # a member absent from the body (JavaScript's undefined)

DEFAULT_SKEW_SECONDS = 300
"""Clock skew tolerated between sender and receiver (strict mode, replay retention)."""
DEFAULT_MAX_LIFETIME_SECONDS = 86_400
"""Longest ``expires_at - issued_at`` strict mode accepts: a day bounds how long a receiver remembers ids."""
FROM_TYPES = ("human", "agent", "orchestrator")

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
        return (self.errors, self.warnings) == (other.errors, other.warnings)

    __hash__ = None  # type: ignore[assignment]

    def raise_for_errors(self) -> None:
        """Raise ``InvalidMessage`` (HTTP 400, the SDK's error body) unless valid."""
        if self.errors:
            raise InvalidMessage(self.errors)


_check_errors = OfferCheck.errors.__set__  # type: ignore[misc, attr-defined]  # the slot's descriptor
_check_warnings = OfferCheck.warnings.__set__  # type: ignore[misc, attr-defined]
_check_valid = OfferCheck.valid.__set__  # type: ignore[misc, attr-defined]


def _js_truthy(v: Any) -> bool:
    # ECMAScript ToBoolean (7.1.2): undefined, null, false, +-0, NaN and "" are false.
    if v is None or v is False or v is _MISSING:
        return False
    if type(v) in (int, float):
        return bool(v == v and v != 0)
    if type(v) is str:
        return v != ""
    return True


def _member(obj: Any, key: str) -> Any:
    # `obj?.key` on a JSON value: only objects have members.
    return obj.get(key, _MISSING) if type(obj) is dict else _MISSING


_now_micros = instant_micros  # one reading of a caller's `now` for the whole package


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
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
    if _js_truthy(expires_at):
        if expires_us is not None:
            if expires_us < now_us:
                errors.append("offer has expired")
        else:
            expired, note = _sdk_expiry(expires_at, now_us)
            if expired:
                errors.append("offer has expired")
            if not strict:  # strict mode refuses the timestamp itself
                warnings.append(note)
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


def _check_typed_offer(raw: Dict[str, Any], now_us: int, strict: bool, skew: float, max_lifetime: float) -> OfferCheck:
    """``validate_offer`` for a schema-valid offer: the same rules, without re-checking the shape
    (both timestamps are strict RFC 3339, every SDK presence rule holds)."""
    errors, _ = _typed_offer_errors(raw, now_us, strict, skew, max_lifetime)
    sender = raw["from"]
    warnings = [_DECLARATION_WARNING] if sender["type"] == "agent" and not sender.get("declaration_url") else []
    check = _new_check(OfferCheck)
    _check_errors(check, errors)
    _check_warnings(check, warnings)
    _check_valid(check, not errors)
    return check


def _typed_offer_errors(
    raw: Dict[str, Any], now_us: int, strict: bool, skew: float, max_lifetime: float
) -> Tuple[List[str], int]:
    """The errors of ``_check_typed_offer`` (same messages, same order) and ``expires_at`` in µs,
    which ``receive_offer`` hands on to the replay guard instead of reading it again."""
    signature = raw.get("signature")
    errors: List[str] = [] if signature is not None else ["missing: signature"]  # built, not yet signed
    expires_us = timestamp_micros(raw["expires_at"])  # the schema checked both timestamps
    if expires_us < now_us:
        errors.append("offer has expired")
    if strict:
        issued_us = timestamp_micros(raw["issued_at"])
        if issued_us - now_us > skew * 1_000_000:
            errors.append(f"issued_at is more than {_seconds(skew)} s in the future")
        if expires_us <= issued_us:
            errors.append("expires_at is not after issued_at")
        elif expires_us - issued_us > max_lifetime * 1_000_000:
            errors.append(f"offer lifetime exceeds {_seconds(max_lifetime)} s")
        sender_type = raw["from"]["type"]
        scheme = _SCHEME_FOR[sender_type]
        if signature is not None and not signature.startswith(scheme):
            errors.append(f"signature scheme must be {scheme[:-1]} for a {sender_type} sender")
    return errors, expires_us


_new_check = object.__new__


_EXPIRY_AS_JS = "expires_at is not an RFC 3339 timestamp; expiry checked as JavaScript's Date reads it"
_EXPIRY_NOT_CHECKED = "expires_at is not an RFC 3339 timestamp; expiry not checked"


def _sdk_expiry(expires_at: Any, now_us: int) -> Tuple[bool, str]:
    """The reference SDK's ``new Date(expires_at) < new Date()`` for a non-RFC 3339 ``expires_at``.

    ``(expired, warning)``: decided exactly where the value alone fixes the time
    (``_js_date``); a date-time without an offset (the SDK server's local time)
    only when every offset within a day gives the same verdict; otherwise not
    expired, with a warning saying the expiry was not checked.
    """
    kind, ms = read_date(expires_at)
    now_ms = now_us // 1000  # `new Date()` counts whole milliseconds
    if kind == JS_INVALID:
        return False, _EXPIRY_AS_JS  # Invalid Date < now is false
    if ms is not None and kind == JS_EXACT:
        return ms < now_ms, _EXPIRY_AS_JS
    if ms is not None and kind == JS_LOCAL:
        if ms + JS_DAY_MS < now_ms:
            return True, _EXPIRY_AS_JS
        if ms - JS_DAY_MS >= now_ms:
            return False, _EXPIRY_AS_JS
    return False, _EXPIRY_NOT_CHECKED


def _seconds(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))
