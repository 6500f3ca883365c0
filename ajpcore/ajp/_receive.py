"""The whole receive path of a JobOffer: bytes off the wire -> an accepted offer, or the refusal."""

from __future__ import annotations

import hashlib
from typing import Any, Optional, Sequence, Union

from ..errors import InvalidMessage, KeyUsageError
from ..provenance.pins import KeyPins
from ..signing import signing_bytes
from ._messages import JobOffer
from ._replay import ReplayGuard, replay_identity
from ._rules import DEFAULT_MAX_LIFETIME_SECONDS, DEFAULT_SKEW_SECONDS, _now_micros, _typed_offer_errors
from ._sender import verify_sender


def receive_offer(
    data: Union[bytes, bytearray, memoryview, str],
    *,
    now: Any,
    secret: Any = None,
    public_key: Any = None,
    replay_guard: Optional[ReplayGuard] = None,
    skew: float = DEFAULT_SKEW_SECONDS,
    max_lifetime: float = DEFAULT_MAX_LIFETIME_SECONDS,
    declaration: Any = None,
    retrieved_from: Any = None,
    pins: Optional[KeyPins] = None,
    require_capabilities: Union[str, Sequence[str]] = (),
) -> JobOffer:
    """Bytes off the wire -> an accepted ``JobOffer``, or the refusal to answer with.

    In order: strict decode (``DecodeError``, 400), schema (``ValidationError``,
    400), ``validate_offer(strict=True)`` (``InvalidMessage``, 400, the SDK's
    messages), the signature with ``secret`` (human senders) or ``public_key``
    (agents) (``SignatureError``, 401; legacy pre-0.3 signatures refused), then
    the replay guard keyed by the verifying key (``ReplayedMessage`` 409,
    ``Busy`` 429).  ``error_response(exc)`` turns any of these into the HTTP
    status and AJP error body.

    An agent's key can come from its Provenance declaration instead of
    ``public_key``: with ``declaration`` (the document fetched from
    ``from.declaration_url``) and ``retrieved_from`` (that URL), ``verify_sender``
    runs after the acceptance rules and before the signature, with ``pins`` and
    ``require_capabilities``; its refusals are ``SenderIdentityError`` (403,
    ``.code`` the SDK's code).  ``declaration`` excludes ``secret`` and
    ``public_key``; ``pins`` and ``require_capabilities`` need ``declaration``
    (else ``KeyUsageError``).
    """
    offer = JobOffer.from_json(data)
    raw = offer._raw
    now_us = _now_micros(now)  # read once: the rules and the replay guard use the same instant
    # validate_offer(strict=True) of a JobOffer; expires_at read once for the rules and the guard
    errors, expires_us = _typed_offer_errors(raw, now_us, True, skew, max_lifetime)
    if errors:
        raise InvalidMessage(errors)
    if declaration is not None:
        if secret is not None or public_key is not None:
            raise KeyUsageError("give `declaration=` (the key comes from it) or `secret=`/`public_key=`, not both")
        public_key = verify_sender(
            offer, declaration, retrieved_from=retrieved_from, pins=pins, require_capabilities=require_capabilities
        ).public_key
    elif pins is not None or require_capabilities:
        raise KeyUsageError("`pins=` and `require_capabilities=` apply to the sender's declaration: give `declaration=`")
    # any_scheme: the strict rules above already refused a scheme that does not fit the sender.
    offer.verify(secret=secret, public_key=public_key, any_scheme=True)
    if replay_guard is not None:
        admit: Any = replay_guard.admit  # Any: an asyncio guard passed here by mistake returns a coroutine
        outcome = admit(
            replay_identity(secret=secret, public_key=public_key), raw["job_id"], expires_at_us=expires_us, now_us=now_us,
            digest=hashlib.sha256(signing_bytes(raw)).digest(),  # tells a byte-identical retry from another body
        )
        if outcome is not None:  # an asyncio guard's coroutine: nothing was checked, so never an acceptance
            _refuse_coroutine(outcome, "replay_guard")
    return offer


def _refuse_coroutine(outcome: Any, what: str) -> None:
    close = getattr(outcome, "close", None)
    if callable(close):
        close()  # no "never awaited" warning: the refusal says it
    raise TypeError(f"`{what}` is an asyncio store (its methods are coroutines): await it in an async receiver")
