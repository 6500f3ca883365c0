"""The receive pipeline of a JobOffer, one function per step.

=========  ====================================================================================
now        the host's clock reading, checked first (``host_now``: a wrong one is the host's error)
read       the bytes off the wire (or a parsed ``JobOffer``), within the body bound -> the decoded JSON value
shape      schema, ``validate_offer(strict=True)``'s rules, the recipient -> the offer and its instants
sender     who must have signed it: a human's secret (the host's lookup), or an agent's
           ``SenderIdentity`` from its declaration (``declared``, then ``check_pins``)
signature  the one signature check under that key -> ``ReceivedOffer`` (with its replay identity)
admit      the one call to the replay guard (and ``settle``: its confirm or release, when pending)
answer     ``_answers.offer_accepted`` / ``offer_refused``: what ``POST /jobs`` answers
=========  ====================================================================================

``receive_offer`` (``_receive.py``) and ``Receiver`` (``_receiver.py``: ``receive``,
``receive_async``, ``answer_offer``, ``answer_offer_async``) are faces of this one sequence.
They differ in where the policy comes from (keywords per call, or configured once), where an
agent's declaration comes from (given, or the host's resolver behind the URL gate) and how a
store is called (directly; or, from async code, awaited or run in a worker thread:
``run_async``), never in the steps, so their refusals are the same errors in the same order.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, FrozenSet, Optional, Tuple

from .. import _core
from .._envelope import _new as _new_envelope
from .._envelope import _Model, _set_cache, _set_raw
from ..errors import (
    InvalidMessage,
    KeyUsageError,
    PayloadTooLarge,
    RecipientMismatch,
    ReplayedMessage,
    TimestampError,
    UnsupportedMediaType,
)
from ..keys import Ed25519PublicKey
from ..provenance.location import parse_provenance_id
from ..signing import _MISSING as _SIGNATURE_MISSING
from ..signing import SIGN_CHUNK_SIZE, _ed25519_verified, parse_signature
from ..timestamps import is_timestamp, timestamp_micros
from ._messages import _OFFER_SCHEMA, _SCHEME_FOR, JobOffer
from ._policy import NO_REPLAY_GUARD, _required
from ._replay import replay_identity
from ._rules import _now_micros, _typed_offer_errors
from ._sender import IdentityCache, SenderIdentity, _check_capabilities, _declared_sender

__all__ = ["ReceivedOffer", "offer_digest", "check_content_type"]


@dataclass(frozen=True, slots=True)
class ReceivedOffer:
    """An accepted offer and who sent it.

    ``offer``: the ``JobOffer`` as received (parsed once).  ``identity``: the
    agent's ``SenderIdentity`` from its verified declaration (None for a human
    sender, authenticated by its shared secret).  ``replay_identity``: the key the
    replay guard knows the sender by.  ``digest``: what the guard remembers of the
    content (``offer_digest``).  ``first_use``: True when the receiver's key pins
    took the sender's key with this very offer (its first contact): the guard then
    grants it a smaller share of its host's quota (``ReplayGuard``).
    """

    offer: JobOffer
    identity: Optional[SenderIdentity]
    replay_identity: str
    digest: bytes
    first_use: bool = False

    @property
    def job_id(self) -> str:
        return self.offer.job_id


# The slots of a ReceivedOffer (and of a JobOffer), filled by ``new_slotted`` in one native call on the hot
# paths: 0.5k instructions, where object.__new__ and a call of each slot's setter take 2.5k (callgrind).
RECEIVED_SLOTS = tuple(ReceivedOffer.__dict__[name] for name in ("offer", "identity", "replay_identity", "digest", "first_use"))
OFFER_SLOTS = (_Model.__dict__["_raw"], _Model.__dict__["_cache"])


# -- read, shape ---------------------------------------------------------------------------------


def host_now(now: Any) -> int:
    """The host's ``now`` in microseconds since the epoch, read first: the rules and the replay guard
    use this one instant.

    ``now`` is the host's own clock reading (an aware ``datetime``, RFC 3339 text, POSIX seconds), never
    the sender's input: a wrong one is the host's bug and raises ``TypeError`` (another type, None, a
    bool) or ``ValueError`` (a naive datetime, text that is not RFC 3339, a non-finite number) to the
    host, never an ``AjpError`` that would be answered to the sender as its fault.
    """
    try:
        return _now_micros(now)  # its first step: the usual forms in one core call (``clock_micros``)
    except TimestampError as exc:
        wrong_type = isinstance(now, bool) or not isinstance(now, (str, datetime, int, float))
        raise (TypeError if wrong_type else ValueError)(f"`now=` (the host's clock, not the sender's input): {exc}") from None


def check_content_type(content_type: Optional[str]) -> None:
    """The request's ``Content-Type`` rule: ``application/json``, with ``charset=utf-8`` or no parameter.

    ``content_type`` is the header's value as received (None when the request had none).  Names
    compare case-insensitively; spaces and tabs around the parts are allowed; ``"utf-8"`` may be
    quoted.  Anything else (``text/plain``, a form, multipart, another charset, another parameter,
    no header) raises ``UnsupportedMediaType`` (415): AJP bodies are JSON in UTF-8 (RFC 8259 §8.1).
    ``TypeError`` for a value that is neither ``str`` nor None.
    """
    if content_type is not None and not isinstance(content_type, str):
        raise TypeError(f"content_type must be the header's text or None, got `{type(content_type).__name__}`")
    if content_type is None or _JSON_CONTENT_TYPE.fullmatch(content_type) is None:
        raise UnsupportedMediaType(content_type)


_JSON_CONTENT_TYPE = re.compile(r'[ \t]*application/json[ \t]*(?:;[ \t]*charset[ \t]*=[ \t]*(?:utf-8|"utf-8")[ \t]*)?', re.I)


def read(data: Any, now: Any, max_bytes: int) -> Tuple[Any, int]:
    """The read step, the inputs of one receive: ``(value, now_us)``.

    First the host's ``now`` (``host_now``: a wrong one raises ``TypeError``/``ValueError`` whatever
    the body), then the body: over ``max_bytes`` bytes (a ``str``: its UTF-8 bytes) it is
    ``PayloadTooLarge`` (413), before any decoding; else its strict ``decode`` (``DecodeError``,
    400), or ``data`` itself when it is a ``JobOffer`` already parsed.
    """
    impl = _core.impl
    now_us = impl.clock_micros(now)  # the usual forms (RFC 3339 text, a UTC datetime, POSIX seconds), inline
    if now_us is None:
        now_us = host_now(now)
    kind = type(data)
    if kind is bytes or kind is bytearray:
        if len(data) > max_bytes:
            raise PayloadTooLarge(len(data), max_bytes)
    elif kind is JobOffer:
        return data, now_us
    else:
        _bounded(data, max_bytes)
    return impl.decode(data), now_us


def _bounded(data: Any, max_bytes: int) -> None:
    """``read``'s bound of a ``str`` or ``memoryview`` body (any other type: ``decode`` refuses it)."""
    if isinstance(data, memoryview):
        if data.nbytes > max_bytes:
            raise PayloadTooLarge(data.nbytes, max_bytes)
    elif isinstance(data, str):
        length = len(data)
        if length > max_bytes:  # at least that many UTF-8 bytes: not worth encoding to count them
            raise PayloadTooLarge(None, max_bytes)
        if length * 4 > max_bytes:  # at most 4 UTF-8 bytes a character: only then can it be over
            size = len(data.encode("utf-8", "surrogatepass"))
            if size > max_bytes:
                raise PayloadTooLarge(size, max_bytes)


def _offer_reader() -> Callable[[Any], Any]:
    """The engine that decides most offers without Python callbacks: the offer schema's split engine when
    its only Python format checks are the two root timestamps (which ``shape`` parses anyway), else the
    whole schema (the timestamps then parsed twice: still exact)."""
    engine, checks = _OFFER_SCHEMA.split()
    if engine is not None and len(checks) == 2 and set(checks) == {(("issued_at",), is_timestamp), (("expires_at",), is_timestamp)}:
        return engine
    return _OFFER_SCHEMA.is_valid  # pragma: no cover - only if the shipped schema changes shape


_ENGINE_VALID = _offer_reader()


def shape(
    value: Any, now_us: int, skew: float, max_lifetime: float, recipients: Optional[FrozenSet[str]]
) -> Tuple[JobOffer, int]:
    """The shape step: schema, strict rules (at ``now_us``), recipient of what ``read`` gave:
    ``(offer, expires_us)``.

    First ``offer_accepted_expiry`` (the native core's one pass over what the specification fixes:
    member types, lengths, enums, patterns, URIs of the plain form, both timestamps, the rules, the
    recipient), which only proves: an offer it does not prove takes the full path.  That path is
    ``JobOffer.from_dict`` and ``validate_offer(strict=True)`` in one pass: the schema engine without
    format callbacks, then each timestamp parsed once, for the format check and the rules at once.
    Anything the engine does not accept outright, or a timestamp that does not parse, goes to
    ``from_dict``'s own check, which decides and raises its ``ValidationError`` (400); any rule that
    does not hold, to ``_typed_offer_errors``, which lists the errors (``InvalidMessage``, 400); an
    offer for someone else is ``RecipientMismatch`` (403).
    """
    impl = _core.impl
    # The usual offer, proven in one native pass (``offer_shape``: what the specification fixes, the
    # schema's verdict included); anything it does not prove takes the path below, which decides.
    expires_us = impl.offer_accepted_expiry(value, now_us, skew, max_lifetime, recipients)
    if expires_us is not None:
        return impl.new_slotted(JobOffer, OFFER_SLOTS, (value, None)), expires_us  # = JobOffer._wrap(value)
    parse = impl.rfc3339_micros
    if type(value) is JobOffer:
        offer = value
        raw = value._raw
        issued_us = timestamp_micros(raw["issued_at"])
        expires_us = timestamp_micros(raw["expires_at"])
    else:
        raw = value
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
    return offer, expires_us


# -- sender --------------------------------------------------------------------------------------


def declared(
    offer: JobOffer,
    declaration: Any,
    retrieved_from: Any,
    rule: Optional[Tuple[str, ...]],
    *,
    backend: Optional[str] = None,
    cache: Optional[IdentityCache] = None,
    now_us: int = 0,
    gated: bool = False,
) -> SenderIdentity:
    """The sender step of an agent, once its declaration is in hand: the URL gate (unless ``gated``: the
    ``Receiver`` ran it before fetching), ``verify_sender``'s identity flow up to the key
    (``SenderIdentityError``, 403, with the SDK's codes), then the capability ``rule``."""
    sender = offer._raw["from"]
    identity = _declared_sender(
        sender, declaration, retrieved_from, backend=backend, cache=cache, now_us=now_us, gated=gated
    )
    _check_capabilities(identity, _required(rule, sender["type"]))
    return identity


def check_pins(pins: Any, identity: SenderIdentity) -> Any:
    """The last check of the sender step: the key ``pins`` hold for the identity (``KeyRotated``, 403).

    The one call to a pin store: what a sync store answered (True: it took the key with this offer, a
    first use; False or None: the key was pinned already), or the awaitable an asyncio store returned,
    which the caller awaits (``run_async``) or refuses (``refuse_awaitable``)."""
    if pins is None:
        return None
    return pins.check(identity.provenance_id, identity.fingerprint, identity.public_key)


# -- signature -----------------------------------------------------------------------------------


def signed(offer: JobOffer, secret: Any, public_key: Any, backend: Optional[str]) -> bytes:
    """The signature step: the offer's one signature check, under ``secret`` (a human sender) or
    ``public_key`` (an agent's); returns the digest the replay guard remembers (``offer_digest``).

    An exact match on the hot paths gives the signature's raw bytes, which are the digest; anything
    else is decided, and a refusal explained, by ``JobOffer.verify`` (``SignatureError``, 401).
    ``any_scheme``: the shape step already refused a scheme that does not fit the sender.
    """
    raw = offer._raw
    if public_key is None:
        digest = _core.impl.hmac_sha256_verified_tag(raw, secret, SIGN_CHUNK_SIZE)
        if digest is None:
            offer.verify(secret=secret, any_scheme=True)
            digest = offer_digest(offer)
        return digest
    digest = _ed25519_verified(raw, public_key, backend) if secret is None and type(public_key) is Ed25519PublicKey else None
    if digest is None:
        offer.verify(secret=secret, public_key=public_key, backend=backend, any_scheme=True)
        digest = offer_digest(offer)
    return digest


def signer_identity(secret: Any, public_key: Any) -> str:
    """Who the replay guard knows the sender by: ``replay_identity`` of the key its signature is checked
    under, the one spelling every face uses.

    A key object is spelt here as ``replay_identity`` spells it (``ed25519:`` and its fingerprint),
    without the import that function makes per call (13k instructions, 1.5 % of an agent's receive).
    """
    if public_key is None:
        return replay_identity(secret=secret)
    if type(public_key) is Ed25519PublicKey:
        return "ed25519:" + public_key.fingerprint
    return replay_identity(public_key=public_key)


def received_offer(
    offer: JobOffer, identity: Optional[SenderIdentity], who: str, digest: bytes, first_use: bool = False
) -> ReceivedOffer:
    """``ReceivedOffer(offer, identity, who, digest, first_use)``, its slots filled in one ``new_slotted`` call."""
    received: ReceivedOffer = _core.impl.new_slotted(ReceivedOffer, RECEIVED_SLOTS, (offer, identity, who, digest, first_use))
    return received


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


# -- admit ---------------------------------------------------------------------------------------


def admit(
    guard: Any, who: str, job_id: str, digest: bytes, now_us: int, expires_us: int, host: Optional[str] = None,
    confirmed: bool = True, first_use: bool = False,
) -> Any:
    """The admit step: the one call to the replay guard, of ``job_id`` from the verified sender ``who``
    (its replay identity), whose content the guard remembers as ``digest``, in the quota group of
    ``host`` (``quota_host``), with a first use's smaller share when ``first_use`` (the pins took the
    sender's key with this offer).

    ``confirmed`` (the one-step faces: ``receive_offer``, ``receive``, ``answer_offer`` without
    ``run``): the pair is accepted at once; else it is pending until ``settle``.
    ``ReplayedMessage`` (409, ``.same_body``, ``.job_id``), ``JobInProgress`` (503), ``Busy`` (429),
    ``StateUnavailable`` (503) come from the guard.  Returns None (``NO_REPLAY_GUARD``, or a sync guard
    admitted), or the awaitable an asyncio guard returned: the async faces await it (``run_async``,
    which also runs a blocking guard in a worker thread), the sync ones refuse it (``refuse_awaitable``).
    """
    if guard is NO_REPLAY_GUARD:
        return None
    try:
        if host is None and not first_use:  # a human sender's (its secret is its own group): the keywords it needs
            return guard.admit(who, job_id, expires_at_us=expires_us, now_us=now_us, digest=digest, confirmed=confirmed)
        return guard.admit(
            who, job_id, expires_at_us=expires_us, now_us=now_us, digest=digest, host=host, first_use=first_use,
            confirmed=confirmed,
        )
    except ReplayedMessage as exc:
        replayed(exc, job_id)
        raise


def replayed(exc: ReplayedMessage, job_id: str) -> ReplayedMessage:
    """A guard's ``ReplayedMessage``, naming the job (``.job_id``) when the guard did not (ajpcore's
    guards do: ``_replay.replayed``; a guard of the host's may not)."""
    if exc.job_id is None:
        exc.job_id = job_id
    return exc


def settle(guard: Any, who: str, job_id: str, now_us: int, host: Optional[str], taken: bool) -> Any:
    """The end of a pending admit: ``confirm`` when the host took the job (``taken``), else ``release``.

    Returns what the guard returned (an awaitable for an asyncio guard), None for ``NO_REPLAY_GUARD``."""
    if guard is NO_REPLAY_GUARD:
        return None
    end = guard.confirm if taken else guard.release
    return end(who, job_id, now_us=now_us, host=host)


@functools.lru_cache(maxsize=4096)
def _owner(provenance_id: str) -> Optional[str]:
    parsed = parse_provenance_id(provenance_id)
    if parsed is None:
        return None
    platform, path = parsed
    owner = path.split("/", 1)[0].lower()
    return owner if platform == "domain" else f"{platform}:{owner}"


def quota_host(identity: Optional[SenderIdentity]) -> Optional[str]:
    """The host whose senders share one replay quota (``ReplayGuard``'s ``host``): who controls where
    the sender's declaration lives.  A ``domain`` id's domain (``provenance:domain:example.com/agents/a``:
    ``example.com``); on another platform its owner (``provenance:github:acme/bot``: ``github:acme``);
    None for a human sender (its secret is its own group)."""
    return None if identity is None else _owner(identity.provenance_id)


# -- calling a host's store or resolver ----------------------------------------------------------


def refuse_awaitable(outcome: Any, what: str) -> None:
    """A sync face got an awaitable from ``what`` (an asyncio store or resolver): nothing was checked, so
    never an acceptance.  A coroutine is closed (no "never awaited" warning); ``KeyUsageError`` (a
    ``TypeError``).  Anything else (a sync store's return value) is no refusal."""
    if not inspect.isawaitable(outcome):
        return
    close = getattr(outcome, "close", None)
    if callable(close):
        close()
    raise KeyUsageError(
        f"{what} is asynchronous (an asyncio store or resolver answered a coroutine): "
        "await it with `Receiver.receive_async` / `answer_offer_async`"
    )


async def run_async(blocking: Any, step: Callable[..., Any], *args: Any) -> Any:
    """A step that calls the host's store or resolver, from async code: in a worker thread when ``blocking``
    (a sync store on disk or network: the event loop stays free), else directly; an awaitable it returns
    (an asyncio store's coroutine) is awaited."""
    if blocking:
        outcome = await asyncio.to_thread(step, *args)
    else:
        outcome = step(*args)
    if inspect.isawaitable(outcome):
        outcome = await outcome
    return outcome


def blocking(store: Any) -> bool:
    """Whether a sync store's calls may block (network, disk): run them in a thread from async code."""
    return bool(getattr(store, "blocking", False))

