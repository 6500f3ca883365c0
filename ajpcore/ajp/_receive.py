"""``receive_offer``: the whole receive path of a JobOffer in one call, the policy given as keywords.

One face of the receive pipeline (``_pipeline.py``): read, shape, sender (the declaration the
caller fetched, or the key it established), signature, admit.  ``Receiver`` (``_receiver.py``)
is the other face, the same policy configured once; their refusals are the same errors in the
same order.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple, Union

from ..errors import KeyUsageError, SenderIdentityError
from ..keys import Ed25519PublicKey
from ..provenance.pins import KeyPins
from ._messages import JobOffer
from ._pipeline import (
    admit,
    check_pins,
    declared,
    quota_host,
    read,
    refuse_awaitable,
    shape,
    signed,
    signer_identity,
)
from ._policy import (
    DEFAULT_MAX_BODY_BYTES,
    SPEC_CAPABILITIES,
    Capabilities,
    Recipients,
    _capability_rule,
    _max_body_bytes,
    _NoReplayGuard,
    _recipients,
    _replay_guard,
    _required,
)
from ._replay import ReplayGuard
from ._rules import DEFAULT_MAX_LIFETIME_SECONDS, DEFAULT_SKEW_SECONDS

__all__ = ["receive_offer"]


def _no_declaration(wanted: Tuple[str, ...]) -> None:
    """An agent sender checked with a bare ``public_key``: its capabilities cannot be read."""
    if wanted:
        raise SenderIdentityError(
            f"capability `{wanted[0]}` cannot be checked without the sender's declaration: give `declaration=` "
            "(or `require_capabilities=()` to opt out of the specification's rule)",
            "CAPABILITY_NOT_DECLARED",
        )


def receive_offer(
    data: Union[bytes, bytearray, memoryview, str, JobOffer],
    *,
    now: Any,
    recipient: Recipients,
    replay_guard: Union[ReplayGuard, _NoReplayGuard],
    secret: Union[str, bytes, None] = None,
    public_key: Union[Ed25519PublicKey, str, None] = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    skew: float = DEFAULT_SKEW_SECONDS,
    max_lifetime: float = DEFAULT_MAX_LIFETIME_SECONDS,
    declaration: Any = None,
    retrieved_from: Optional[str] = None,
    pins: Optional[KeyPins] = None,
    require_capabilities: Capabilities = SPEC_CAPABILITIES,
) -> JobOffer:
    """Bytes off the wire -> an accepted ``JobOffer``, or the refusal to answer with.

    ``recipient`` (required): this receiver's ``provenance_id``, a collection of
    them, or ``ANY_RECIPIENT``.  ``replay_guard`` (required): a replay guard
    (``MemoryReplayGuard``, ``SQLiteReplayGuard``, ``RedisReplayGuard``; a sync
    one here), or ``NO_REPLAY_GUARD`` for a host that refuses replays elsewhere
    (every re-send of an offer is then accepted again).  ``now``: the host's clock
    (an aware datetime, RFC 3339 text or POSIX seconds), read first; a wrong one
    raises ``TypeError``/``ValueError``, never an ``AjpError``.

    In order: the body bound (``PayloadTooLarge``, 413, over ``max_body_bytes``,
    default 1 MiB), strict decode (``DecodeError``, 400;
    ``data`` may also be a ``JobOffer`` already parsed), schema
    (``ValidationError``, 400), ``validate_offer(strict=True)``
    (``InvalidMessage``, 400, the SDK's messages), the recipient
    (``RecipientMismatch``, 403, ``WRONG_RECIPIENT``, when ``to.provenance_id`` is
    not one of ``recipient``), the sender's identity, the signature with
    ``secret`` (human senders) or the agent's key (``SignatureError``, 401;
    legacy pre-0.3 signatures refused), then the replay guard keyed by the
    verifying key (``ReplayedMessage`` 409, ``Busy`` 429, ``StateUnavailable``
    503).  ``error_response(exc)`` turns any of these into the HTTP status and
    AJP error body.

    An agent's key comes from its Provenance declaration: with ``declaration``
    (the document fetched from ``from.declaration_url``) and ``retrieved_from``
    (that URL), the identity flow of ``verify_sender`` runs with ``pins`` and
    the capability rule (``SenderIdentityError``, 403, ``.code`` the SDK's code),
    and the signature is checked once, under the declared key.  Or give the key
    itself, ``public_key``, when you established it another way.

    ``require_capabilities``: by default ``SPEC_CAPABILITIES``, the
    specification's rule (an agent or orchestrator sender must declare
    ``delegate:agents``); with ``public_key`` instead of a declaration that rule
    cannot be read and an agent's offer is refused (``CAPABILITY_NOT_DECLARED``)
    unless you opt out with ``require_capabilities=()``.  ``declaration``
    excludes ``secret`` and ``public_key``; ``pins`` and an explicit
    ``require_capabilities`` need ``declaration`` (else ``KeyUsageError``).
    Raises ``TypeError``/``ValueError`` for a ``recipient`` that names no one, a
    missing ``replay_guard`` (None included) or a wrong ``max_body_bytes``.
    """
    recipients = _recipients(recipient)
    rule = _capability_rule(require_capabilities)
    if replay_guard is None or max_body_bytes is not DEFAULT_MAX_BODY_BYTES:  # else nothing to check
        _replay_guard(replay_guard)
        _max_body_bytes(max_body_bytes)
    value, now_us = read(data, now, max_body_bytes)
    offer, expires_us = shape(value, now_us, skew, max_lifetime, recipients)
    identity, first_use = None, False
    if declaration is not None:
        if secret is not None or public_key is not None:
            raise KeyUsageError("give `declaration=` (the key comes from it) or `secret=`/`public_key=`, not both")
        identity = declared(offer, declaration, retrieved_from, rule)
        checked = check_pins(pins, identity)
        if checked is not None and checked is not True and checked is not False:
            refuse_awaitable(checked, "`pins`")
        first_use = checked is True
        public_key = identity.public_key
    elif pins is not None or rule:
        raise KeyUsageError("`pins=` and `require_capabilities=` apply to the sender's declaration: give `declaration=`")
    else:
        _no_declaration(_required(rule, offer._raw["from"]["type"]))
    digest = signed(offer, secret, public_key, None)
    who = signer_identity(secret, public_key)
    admitted = admit(
        replay_guard, who, offer._raw["job_id"], digest, now_us, expires_us, quota_host(identity), True, first_use
    )
    if admitted is not None:
        refuse_awaitable(admitted, "`replay_guard`")
    return offer
