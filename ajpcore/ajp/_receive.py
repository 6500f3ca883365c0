"""The whole receive path of a JobOffer: bytes off the wire -> an accepted offer, or the refusal.

``receive_offer`` is the one-call form; ``Receiver`` (``_receiver.py``) is the
same policy configured once.  Both share the steps below, so their refusals are
the same errors in the same order.
"""

from __future__ import annotations

from typing import Any, Callable, Collection, FrozenSet, Optional, Sequence, Tuple, Union

from .. import _core
from .._envelope import _new as _new_envelope
from .._envelope import _set_cache, _set_raw
from ..errors import InvalidMessage, KeyUsageError, RecipientMismatch, SenderIdentityError
from ..keys import Ed25519PublicKey
from ..provenance.pins import KeyPins
from ..signing import _MISSING as _SIGNATURE_MISSING
from ..signing import SIGN_CHUNK_SIZE, parse_signature
from ..timestamps import is_timestamp, timestamp_micros
from ._messages import _OFFER_SCHEMA, _SCHEME_FOR, JobOffer
from ._replay import ReplayGuard, replay_identity
from ._rules import DEFAULT_MAX_LIFETIME_SECONDS, DEFAULT_SKEW_SECONDS, _now_micros, _typed_offer_errors
from ._sender import DELEGATION_CAPABILITY, _check_capabilities, _declared_sender, _wanted

__all__ = ["receive_offer", "ANY_RECIPIENT", "SPEC_CAPABILITIES"]


class _Sentinel:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name

    def __reduce__(self) -> str:
        return self._name.rsplit(".", 1)[-1]


class _AnyRecipient(_Sentinel):
    __slots__ = ()


class _SpecCapabilities(_Sentinel):
    __slots__ = ()


ANY_RECIPIENT = _AnyRecipient("ajp.ANY_RECIPIENT")
"""``recipient=ANY_RECIPIENT`` accepts offers whatever their ``to.provenance_id`` (a relay that means it)."""

SPEC_CAPABILITIES = _SpecCapabilities("ajp.SPEC_CAPABILITIES")
"""The default of ``require_capabilities``: the AJP specification's rule, ``delegate:agents`` of every
agent and orchestrator sender (an agent hiring an agent must declare it); nothing of a human sender.
``require_capabilities=()`` opts out; a list of capabilities replaces the rule for agents."""

Recipients = Union[str, Collection[str], _AnyRecipient]
"""Who a receiver is: one ``provenance_id``, a collection of them, or ``ANY_RECIPIENT``."""
Capabilities = Union[str, Sequence[str], _SpecCapabilities]
"""``require_capabilities``: ``SPEC_CAPABILITIES`` (the default), one capability, or a sequence of them."""

_SPEC_RULE = (DELEGATION_CAPABILITY,)


def _recipients(recipient: Any) -> Optional[FrozenSet[str]]:
    """The receiver's own ids (None: any), checked once when the policy is configured."""
    if recipient is ANY_RECIPIENT:
        return None
    if isinstance(recipient, str):
        ids: FrozenSet[Any] = frozenset((recipient,))
    elif isinstance(recipient, (bytes, bytearray, memoryview)) or not isinstance(recipient, Collection):
        raise TypeError(
            f"recipient must be a provenance id, a collection of them or ajp.ANY_RECIPIENT, got `{type(recipient).__name__}`"
        )
    else:
        ids = frozenset(recipient)
    if not ids:
        raise ValueError("recipient is empty: give this receiver's provenance id(s), or ajp.ANY_RECIPIENT")
    for one in ids:
        if not isinstance(one, str) or not one:
            raise TypeError(f"recipient ids must be non-empty strings, got {one!r}")
    return ids


def _capability_rule(require_capabilities: Any) -> Optional[Tuple[str, ...]]:
    """None for the specification's rule (decided per sender type), else the explicit tuple."""
    if require_capabilities is SPEC_CAPABILITIES:
        return None
    return _wanted(require_capabilities)


def _required(rule: Optional[Tuple[str, ...]], sender_type: str) -> Tuple[str, ...]:
    if rule is not None:
        return rule if sender_type != "human" else ()
    return _SPEC_RULE if sender_type != "human" else ()


def _offer_reader() -> Callable[[Any], Any]:
    """The engine that decides most offers without Python callbacks: the offer schema's split engine when
    its only Python format checks are the two root timestamps (which ``_offer_and_times`` parses anyway),
    else the whole schema (the timestamps then parsed twice: still exact)."""
    engine, checks = _OFFER_SCHEMA.split()
    if engine is not None and len(checks) == 2 and set(checks) == {(("issued_at",), is_timestamp), (("expires_at",), is_timestamp)}:
        return engine
    return _OFFER_SCHEMA.is_valid  # pragma: no cover - only if the shipped schema changes shape


_ENGINE_VALID = _offer_reader()


def _accepted_shape(
    data: Any, now: Any, skew: float, max_lifetime: float, recipients: Optional[FrozenSet[str]]
) -> Tuple[JobOffer, int, int]:
    """Decode (or take a parsed ``JobOffer``), schema, strict rules, recipient: ``(offer, now_us, expires_us)``.

    ``JobOffer.from_json`` and ``validate_offer(strict=True)`` in one pass: the schema engine without
    format callbacks, then each timestamp parsed once, for the format check and the rules at once.
    Anything the engine does not accept outright, or a timestamp that does not parse, goes to
    ``from_json``'s own check, which decides and raises its ``ValidationError``; any rule that does not
    hold, to ``_typed_offer_errors``, which lists the errors.
    """
    impl = _core.impl
    parse = impl.rfc3339_micros
    if type(data) is JobOffer:
        offer = data
        raw = data._raw
        issued_us = timestamp_micros(raw["issued_at"])
        expires_us = timestamp_micros(raw["expires_at"])
    else:
        raw = impl.decode(data)
        try:
            accepted = type(raw) is dict and _ENGINE_VALID(raw)
        except ValueError:  # the engine cannot read it (a depth it does not hand back): the schema decides
            accepted = False
        issued = expires = None
        if accepted:
            issued = parse(raw["issued_at"])  # both are strings: the schema requires them
            expires = parse(raw["expires_at"])
        if issued is not None and expires is not None:
            offer = _new_envelope(JobOffer)  # = JobOffer._wrap(raw)
            _set_raw(offer, raw)
            _set_cache(offer, None)
            issued_us, expires_us = issued, expires
        else:
            offer = JobOffer._from_checked(raw)  # the schema's verdict, and every problem with its path
            raw = offer._raw
            issued_us = timestamp_micros(raw["issued_at"])
            expires_us = timestamp_micros(raw["expires_at"])
    # read once: the rules and the replay guard use the same instant (`_now_micros`, its usual form inline)
    micros = parse(now) if type(now) is str else None
    now_us = micros if micros is not None else _now_micros(now)
    signature = raw.get("signature")
    # validate_offer(strict=True) of a JobOffer: this test is exactly "no rule fails" (each clause the
    # negation of one error of _typed_offer_errors); when it is False, that function lists the errors.
    if not (
        now_us <= expires_us
        and issued_us - now_us <= skew * 1_000_000
        and issued_us < expires_us
        and expires_us - issued_us <= max_lifetime * 1_000_000
        and type(signature) is str
        and signature.startswith(_SCHEME_FOR[raw["from"]["type"]])
    ):
        errors, _ = _typed_offer_errors(raw, now_us, True, skew, max_lifetime)
        if errors:
            raise InvalidMessage(errors)
    if recipients is not None:
        addressed_to = raw["to"]["provenance_id"]
        if addressed_to not in recipients:
            raise RecipientMismatch(addressed_to)
    return offer, now_us, expires_us


def _refuse_coroutine(outcome: Any, what: str) -> None:
    """An asyncio store or resolver answered a coroutine on a sync path: nothing was checked, so never an
    acceptance.  The coroutine is closed (no "never awaited" warning); ``KeyUsageError`` (a ``TypeError``)."""
    close = getattr(outcome, "close", None)
    if callable(close):
        close()
    raise KeyUsageError(
        f"{what} is asynchronous (an asyncio store or resolver answered a coroutine): "
        "await it with `Receiver.receive_async` / `answer_offer_async`"
    )


def _no_declaration(wanted: Tuple[str, ...]) -> None:
    """An agent sender checked with a bare ``public_key``: its capabilities cannot be read."""
    if wanted:
        raise SenderIdentityError(
            f"capability `{wanted[0]}` cannot be checked without the sender's declaration: give `declaration=` "
            "(or `require_capabilities=()` to opt out of the specification's rule)",
            "CAPABILITY_NOT_DECLARED",
        )


def offer_digest(offer: JobOffer) -> bytes:
    """What a replay guard remembers of an accepted offer's content, to tell an honest retry from a reuse.

    The raw bytes of the offer's ``signature`` (``parse_signature``): the 32-byte HMAC-SHA256 tag
    of a ``sha256:`` signature, the 64-byte Ed25519 signature of an ``ed25519:`` one.  For a
    verified offer they name the signed content: an HMAC tag or a (deterministic, RFC 8032)
    Ed25519 signature is a function of the signing bytes and the key, and two contents with one
    valid signature under one key would be a forgery.  Reading them costs far less than hashing
    anything.  Raises ``MalformedSignature`` or ``UnsupportedScheme`` (401) for a signature that
    does not parse, which no receiver accepts.
    """
    return parse_signature(offer._raw.get("signature", _SIGNATURE_MISSING))[1]


def receive_offer(
    data: Union[bytes, bytearray, memoryview, str, JobOffer],
    *,
    now: Any,
    recipient: Recipients,
    secret: Union[str, bytes, None] = None,
    public_key: Union[Ed25519PublicKey, str, None] = None,
    replay_guard: Optional[ReplayGuard] = None,
    skew: float = DEFAULT_SKEW_SECONDS,
    max_lifetime: float = DEFAULT_MAX_LIFETIME_SECONDS,
    declaration: Any = None,
    retrieved_from: Optional[str] = None,
    pins: Optional[KeyPins] = None,
    require_capabilities: Capabilities = SPEC_CAPABILITIES,
) -> JobOffer:
    """Bytes off the wire -> an accepted ``JobOffer``, or the refusal to answer with.

    ``recipient`` (required): this receiver's ``provenance_id``, a collection of
    them, or ``ANY_RECIPIENT``.  In order: strict decode (``DecodeError``, 400;
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
    Raises ``TypeError``/``ValueError`` for a ``recipient`` that names no one.
    """
    recipients = _recipients(recipient)
    rule = _capability_rule(require_capabilities)
    offer, now_us, expires_us = _accepted_shape(data, now, skew, max_lifetime, recipients)
    raw = offer._raw
    wanted = _required(rule, raw["from"]["type"])
    if declaration is not None:
        if secret is not None or public_key is not None:
            raise KeyUsageError("give `declaration=` (the key comes from it) or `secret=`/`public_key=`, not both")
        identity = _declared_sender(raw["from"], declaration, retrieved_from)
        _check_capabilities(identity, wanted)
        if pins is not None:
            check: Any = pins.check  # Any: an asyncio pin store passed here by mistake returns a coroutine
            checked = check(identity.provenance_id, identity.fingerprint, identity.public_key)
            if checked is not None:
                _refuse_coroutine(checked, "`pins`")
        public_key = identity.public_key
    elif pins is not None or rule:
        raise KeyUsageError("`pins=` and `require_capabilities=` apply to the sender's declaration: give `declaration=`")
    else:
        _no_declaration(wanted)
    # An exact `sha256:` match gives the tag, which is the digest; anything else is decided (and a
    # refusal explained) by JobOffer.verify.  any_scheme: the strict rules above already refused a
    # scheme that does not fit the sender.
    digest = _core.impl.hmac_sha256_verified_tag(raw, secret, SIGN_CHUNK_SIZE) if public_key is None else None
    if digest is None:
        offer.verify(secret=secret, public_key=public_key, any_scheme=True)
    if replay_guard is not None:
        admit: Any = replay_guard.admit  # Any: an asyncio guard passed here by mistake returns a coroutine
        outcome = admit(
            replay_identity(secret=secret, public_key=public_key), raw["job_id"], expires_at_us=expires_us,
            now_us=now_us, digest=digest if digest is not None else offer_digest(offer), confirmed=True,
        )
        if outcome is not None:
            _refuse_coroutine(outcome, "`replay_guard`")
    return offer
