"""``Receiver``: the receive policy of an AJP agent, configured once, and its endpoint answers.

Who I am (``recipient``), how senders are authenticated (a shared ``secret`` or a
``secrets`` lookup for human senders; a ``declarations`` resolver the host
implements for agents, behind the URL gate), key ``pins``, a ``replay_guard``
(any backend: memory, SQLite, Redis, sync or async), the capability rule, skew
and lifetime.  ``receive`` / ``receive_async`` parse an offer once and return
it with its sender; ``answer_offer`` / ``answer_offer_async`` give the
``POST /jobs`` answer, an honest retry included; ``answer_status`` and
``answer_ack`` the other two endpoints.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Mapping, Optional, Tuple, Union

from .. import _core
from ..errors import (
    AjpError,
    DeclarationUnreachable,
    KeyUsageError,
    ReplayedMessage,
    SenderIdentityError,
)
from ..provenance.location import check_declaration_url
from ..provenance.pins import AsyncKeyPins, KeyPins
from ..signing import SIGN_CHUNK_SIZE, _ed25519_verified
from ._answers import (
    AckAnswer,
    HttpAnswer,
    OfferAnswer,
    _json_headers,
    accepted_answer,
    ack_answer,
    refusal_answer,
    status_answer,
)
from ._messages import JobOffer, JobStatus, Sender
from ._receive import (
    SPEC_CAPABILITIES,
    Capabilities,
    Recipients,
    _accepted_shape,
    _capability_rule,
    _recipients,
    _refuse_coroutine,
    _required,
    offer_digest,
)
from ._replay import AsyncReplayGuard, ReplayGuard, replay_identity
from ._rules import DEFAULT_MAX_LIFETIME_SECONDS, DEFAULT_SKEW_SECONDS
from ._sender import IdentityCache, SenderIdentity, _check_capabilities, _declared_sender

__all__ = ["Receiver", "ReceivedOffer"]

Secret = Union[str, bytes]
"""An HMAC secret: bytes, or text (its UTF-8 bytes)."""
SecretLookup = Union[Mapping[str, Secret], Callable[[Sender], Optional[Secret]]]
"""Human senders' secrets: by ``from.id``, or a function of the offer's ``from`` (None: unknown sender)."""
Declaration = Union[bytes, bytearray, memoryview, str, Mapping[str, Any]]
DeclarationResolver = Callable[[str, str], Union[Tuple[Declaration, str], Awaitable[Tuple[Declaration, str]]]]
"""``resolver(provenance_id, declaration_url)`` -> ``(declaration, retrieved_from)``, sync or async."""

_DEFAULT_CACHE: Any = object()


@dataclass(frozen=True, slots=True)
class ReceivedOffer:
    """An accepted offer and who sent it.

    ``offer``: the ``JobOffer`` as received (parsed once).  ``identity``: the
    agent's ``SenderIdentity`` from its verified declaration (None for a human
    sender, authenticated by its shared secret).  ``replay_identity``: the key the
    replay guard knows the sender by.  ``digest``: what the guard remembers of the
    content (``offer_digest``).
    """

    offer: JobOffer
    identity: Optional[SenderIdentity]
    replay_identity: str
    digest: bytes

    @property
    def job_id(self) -> str:
        return self.offer.job_id


_new = object.__new__
# The slots' own setters: the receive path fills a ReceivedOffer with them, at half the cost of the
# frozen dataclass's __init__ (four object.__setattr__ calls through a Python frame).
_set_offer, _set_identity, _set_replay_identity, _set_digest = (
    ReceivedOffer.__dict__[name].__set__ for name in ("offer", "identity", "replay_identity", "digest")
)


def _is_async(function: Any) -> bool:
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(getattr(function, "__call__", None))


def _blocking(store: Any) -> bool:
    """Whether a sync store's calls may block (network, disk): run them in a thread from async code."""
    return bool(getattr(store, "blocking", False))


def _no_coroutine(result: Any, what: str) -> Any:
    if inspect.isawaitable(result):
        _refuse_coroutine(result, what)
    return result


def _resolved(result: Any) -> Tuple[Declaration, str]:
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], str)):
        raise KeyUsageError("a declaration resolver returns `(declaration, retrieved_from_url)`")
    return result[0], result[1]


_UNREACHABLE = (OSError, asyncio.TimeoutError)


def _fetch_failed(exc: BaseException) -> DeclarationUnreachable:
    """A resolver's network failure as the reference SDK's ``DECLARATION_UNREACHABLE``."""
    return DeclarationUnreachable(f"sender declaration could not be fetched: {exc}")

_GATED_PAIRS = 4096
"""How many admitted (provenance_id, declaration_url) pairs a Receiver remembers (oldest out first)."""


class Receiver:
    """The receive policy of one AJP agent (or a relay), configured once; thread-safe when its stores are.

    ``recipient`` (required): this agent's ``provenance_id``, a collection of them,
    or ``ajp.ANY_RECIPIENT``; an offer for someone else is ``RecipientMismatch``
    (403, ``WRONG_RECIPIENT``).  Human senders: ``secret`` (one shared secret) or
    ``secrets`` (a mapping from ``from.id`` to its secret, or a function of the
    offer's ``from`` returning the secret or None); an unknown human sender is
    ``SenderIdentityError`` (403, ``SENDER_IDENTITY_FAILED``).  Agents and
    orchestrators: ``declarations``, the host's resolver
    ``resolver(provenance_id, declaration_url) -> (declaration, retrieved_from)``
    (sync or ``async``; a sync one runs in a thread from ``receive_async`` unless
    it has ``blocking = False``), called only for a URL the gate
    (``provenance.check_declaration_url``: https, port 443, a DNS name, the id's
    location) admits; it raises ``DeclarationUnreachable`` when the fetch fails
    (an ``OSError`` or timeout it lets out is mapped to it); without a resolver
    agents are refused (403).  Verified declarations are kept in
    ``identity_cache`` (default ``IdentityCache()``; None keeps none).

    ``pins`` (a ``KeyPins`` store) and ``replay_guard`` (a ``ReplayGuard``): any
    backend; coroutine methods are awaited by the async forms (the sync forms
    refuse them with ``KeyUsageError``), sync stores with ``blocking = True`` run
    in a thread there.  ``require_capabilities``: ``SPEC_CAPABILITIES`` (default:
    ``delegate:agents`` of every agent and orchestrator), capabilities to require
    of them instead, or ``()`` to opt out.  ``skew``/``max_lifetime``: as
    ``validate_offer(strict=True)``.  ``backend``: the Ed25519 library (see
    ``ajpcore.verify``).

    Raises ``KeyUsageError`` for ``secret`` with ``secrets``, a resolver that is
    not callable; ``TypeError``/``ValueError`` for a ``recipient`` naming no one.
    """

    __slots__ = (
        "_recipients", "_secret", "_secrets", "_resolver", "_resolver_async", "pins", "replay_guard",
        "_rule", "skew", "max_lifetime", "identity_cache", "backend", "_gated", "_gated_lock", "_secret_identity",
    )

    def __init__(
        self,
        *,
        recipient: Recipients,
        secret: Optional[Secret] = None,
        secrets: Optional[SecretLookup] = None,
        declarations: Optional[DeclarationResolver] = None,
        pins: Union[KeyPins, AsyncKeyPins, None] = None,
        replay_guard: Union[ReplayGuard, AsyncReplayGuard, None] = None,
        require_capabilities: Capabilities = SPEC_CAPABILITIES,
        skew: float = DEFAULT_SKEW_SECONDS,
        max_lifetime: float = DEFAULT_MAX_LIFETIME_SECONDS,
        identity_cache: Optional[IdentityCache] = _DEFAULT_CACHE,
        backend: Optional[str] = None,
    ) -> None:
        self._recipients = _recipients(recipient)
        if secret is not None and secrets is not None:
            raise KeyUsageError("give `secret=` (one shared secret) or `secrets=` (one per sender), not both")
        if secret is not None and (not isinstance(secret, (str, bytes)) or not secret):
            raise KeyUsageError("`secret` must be a non-empty str or bytes")
        if secrets is not None and not isinstance(secrets, Mapping) and not callable(secrets):
            raise KeyUsageError("`secrets` must be a mapping from `from.id` to a secret, or a function of `from`")
        if declarations is not None and not callable(declarations):
            raise KeyUsageError("`declarations` must be a function (provenance_id, declaration_url) -> (doc, url)")
        if backend is not None and backend not in ("cryptography", "pynacl"):
            raise KeyUsageError(f"unknown Ed25519 backend `{backend}` (expected `cryptography` or `pynacl`)")
        self._secret = secret
        self._secrets = secrets
        self._resolver = declarations
        self._resolver_async = declarations is not None and _is_async(declarations)
        self.pins = pins
        self.replay_guard = replay_guard
        self._rule = _capability_rule(require_capabilities)
        self.skew = skew
        self.max_lifetime = max_lifetime
        self.identity_cache = IdentityCache() if identity_cache is _DEFAULT_CACHE else identity_cache
        self.backend = backend
        # (provenance_id, url) pairs the gate admitted: it is a pure function of the two (no DNS,
        # no clock), so its verdict is kept (bounded) instead of re-parsing the URL per offer.
        self._gated: "OrderedDict[Tuple[str, str], None]" = OrderedDict()
        self._gated_lock = threading.Lock()
        # replay_identity(secret=self._secret), computed on the first offer it verifies (computing it here
        # could raise for a secret the HMAC refuses, before any offer said so).
        self._secret_identity: Optional[str] = None

    # -- the steps, shared by the sync and async forms -----------------------------------------

    def _human_secret(self, offer: JobOffer) -> Secret:
        if self._secret is not None:
            return self._secret
        lookup = self._secrets
        found: Optional[Secret] = None
        if isinstance(lookup, Mapping):
            sender_id = offer._raw["from"].get("id")
            found = lookup.get(sender_id) if isinstance(sender_id, str) else None
        elif lookup is not None:
            found = lookup(offer.sender)
        if found is None:
            raise SenderIdentityError(
                "this receiver knows no secret for the human sender `%s`" % offer._raw["from"].get("id")
                if lookup is not None else "this receiver takes no human senders (no `secret` configured)"
            )
        if not isinstance(found, (str, bytes)) or not found:
            raise KeyUsageError("a secret lookup returned something other than a non-empty str or bytes")
        return found

    def _declaration_url(self, raw: Mapping[str, Any]) -> Tuple[str, str]:
        """The offer's ``from.provenance_id`` and ``from.declaration_url``, once the URL passed the gate.

        The URL was chosen by a sender nothing has authenticated yet: ``check_declaration_url``
        (https, port 443, no userinfo, a public DNS name, the id's own location) runs before the
        resolver may fetch it (no server-side request forgery through ``declaration_url``)."""
        sender = raw["from"]
        if self._resolver is None:
            raise SenderIdentityError("this receiver takes no agent senders (no declaration resolver configured)")
        url = sender.get("declaration_url")
        if not url:
            raise SenderIdentityError(
                "sender did not provide from.declaration_url, so its key cannot be established offline",
                "NO_DECLARATION_URL",
            )
        provenance_id: str = sender["provenance_id"]  # the schema requires it of agents
        pair = (provenance_id, url)
        if pair not in self._gated:
            check_declaration_url(url, provenance_id)
            with self._gated_lock:
                self._gated[pair] = None
                if len(self._gated) > _GATED_PAIRS:
                    self._gated.popitem(last=False)
        return provenance_id, url

    def _identity(self, offer: JobOffer, now_us: int, declaration: Any, retrieved_from: str) -> SenderIdentity:
        raw = offer._raw
        identity = _declared_sender(
            raw["from"], declaration, retrieved_from, backend=self.backend, cache=self.identity_cache, now_us=now_us
        )
        _check_capabilities(identity, _required(self._rule, raw["from"]["type"]))
        return identity

    # -- receive --------------------------------------------------------------------------------

    def _human_received(self, offer: JobOffer) -> ReceivedOffer:
        """A human sender's offer, verified with its secret (the secret lookup's refusals first)."""
        raw = offer._raw
        secret = self._secret
        identity = self._secret_identity
        if secret is None:
            secret = self._human_secret(offer)
            identity = None
        # An exact `sha256:` match returns the tag, which is the signature's 32 bytes (offer_digest).
        digest = _core.impl.hmac_sha256_verified_tag(raw, secret, SIGN_CHUNK_SIZE)
        if digest is None:
            offer.verify(secret=secret, any_scheme=True)  # decides the rest, and explains a refusal
            digest = offer_digest(offer)
        if identity is None:
            identity = replay_identity(secret=secret)
            if secret is self._secret:
                self._secret_identity = identity
        received = _new(ReceivedOffer)  # = ReceivedOffer(offer, None, identity, digest)
        _set_offer(received, offer)
        _set_identity(received, None)
        _set_replay_identity(received, identity)
        _set_digest(received, digest)
        return received

    def _agent_received(self, offer: JobOffer, identity: SenderIdentity) -> ReceivedOffer:
        """The end both forms share: the offer's one signature check under the established key."""
        digest = _ed25519_verified(offer._raw, identity.public_key, self.backend)
        if digest is None:  # not an exact match: the full check decides, and explains a refusal
            offer.verify(public_key=identity.public_key, backend=self.backend, any_scheme=True)
            digest = offer_digest(offer)
        received = _new(ReceivedOffer)  # = ReceivedOffer(offer, identity, "ed25519:" + fingerprint, digest)
        _set_offer(received, offer)
        _set_identity(received, identity)
        _set_replay_identity(received, "ed25519:" + identity.fingerprint)
        _set_digest(received, digest)
        return received

    def _checked(self, data: Any, now: Any) -> Tuple[ReceivedOffer, int, int]:
        """Everything but the replay guard, sync: ``(received, now_us, expires_us)``."""
        offer, now_us, expires_us = _accepted_shape(data, now, self.skew, self.max_lifetime, self._recipients)
        if offer._raw["from"]["type"] == "human":
            return self._human_received(offer), now_us, expires_us
        return self._agent_checked(offer, now_us), now_us, expires_us

    def _agent_checked(self, offer: JobOffer, now_us: int) -> ReceivedOffer:
        """An agent's offer, sync: the URL gate, the resolver, the declaration, the pins, the signature."""
        provenance_id, url = self._declaration_url(offer._raw)
        if self._resolver_async:
            raise KeyUsageError("the declaration resolver is asynchronous: call `receive_async` / `answer_offer_async`")
        assert self._resolver is not None
        try:
            fetched = self._resolver(provenance_id, url)
            if type(fetched) is not tuple:  # the usual answer skips the awaitable check
                _no_coroutine(fetched, "the declaration resolver")
        except AjpError:
            raise
        except _UNREACHABLE as exc:
            raise _fetch_failed(exc) from None
        declaration, retrieved_from = _resolved(fetched)
        identity = self._identity(offer, now_us, declaration, retrieved_from)
        pins = self.pins
        if pins is not None:
            check: Callable[..., Any] = pins.check  # a sync store returns None, an async one a coroutine
            checked = check(identity.provenance_id, identity.fingerprint, identity.public_key)
            if checked is not None:  # a coroutine: an async store in the sync form
                _no_coroutine(checked, "`pins`")
        return self._agent_received(offer, identity)

    def receive(self, data: Union[bytes, bytearray, memoryview, str, JobOffer], *, now: Any) -> ReceivedOffer:
        """Bytes off the wire -> the accepted offer and its sender, or the refusal (an ``AjpError``).

        The steps of ``receive_offer``, in its order and with its errors:
        decode and schema (400), the acceptance rules (400), the recipient (403
        ``WRONG_RECIPIENT``), the sender (403: the secret lookup; for an agent the
        URL gate, the resolver, the declaration through the cache, the capability
        rule, the pins), the signature under the sender's key, checked once (401),
        then the replay guard (409 ``ReplayedMessage`` with ``.same_body``, 429,
        503).  ``now``: an aware datetime, RFC 3339 text or POSIX seconds.
        """
        # _checked and _admit, written out: the hot path of a server (two calls fewer).
        offer, now_us, expires_us = _accepted_shape(data, now, self.skew, self.max_lifetime, self._recipients)
        if offer._raw["from"]["type"] == "human":
            received = self._human_received(offer)
        else:
            received = self._agent_checked(offer, now_us)
        guard = self.replay_guard
        if guard is not None:
            admit: Callable[..., Any] = guard.admit  # a sync store returns None, an async one a coroutine
            admitted = admit(received.replay_identity, offer._raw["job_id"], expires_at_us=expires_us, now_us=now_us,
                             digest=received.digest, confirmed=True)
            if admitted is not None:
                _no_coroutine(admitted, "`replay_guard`")
        return received

    def _admit(self, received: ReceivedOffer, now_us: int, expires_us: int) -> None:
        guard = self.replay_guard
        if guard is not None:
            admit: Callable[..., Any] = guard.admit  # a sync store returns None, an async one a coroutine
            admitted = admit(received.replay_identity, received.offer._raw["job_id"], expires_at_us=expires_us,
                             now_us=now_us, digest=received.digest, confirmed=True)
            if admitted is not None:
                _no_coroutine(admitted, "`replay_guard`")

    async def _call(self, store: Any, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if inspect.iscoroutinefunction(method):
            return await method(*args, **kwargs)
        if _blocking(store):
            result = await asyncio.to_thread(method, *args, **kwargs)
        else:
            result = method(*args, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def _checked_async(self, data: Any, now: Any) -> Tuple[ReceivedOffer, int, int]:
        offer, now_us, expires_us = _accepted_shape(data, now, self.skew, self.max_lifetime, self._recipients)
        if offer._raw["from"]["type"] == "human":
            return self._human_received(offer), now_us, expires_us
        provenance_id, url = self._declaration_url(offer._raw)
        resolver = self._resolver
        assert resolver is not None
        try:
            if self._resolver_async:
                fetched = await resolver(provenance_id, url)  # type: ignore[misc]
            elif getattr(resolver, "blocking", True):
                # A sync resolver fetches (blocks) unless it says otherwise: keep the event loop free.
                fetched = await asyncio.to_thread(resolver, provenance_id, url)
            else:
                fetched = resolver(provenance_id, url)
            if inspect.isawaitable(fetched):
                fetched = await fetched
        except AjpError:
            raise
        except _UNREACHABLE as exc:
            raise _fetch_failed(exc) from None
        declaration, retrieved_from = _resolved(fetched)
        identity = self._identity(offer, now_us, declaration, retrieved_from)
        pins = self.pins
        if pins is not None:
            await self._call(pins, pins.check, identity.provenance_id, identity.fingerprint, identity.public_key)
        return self._agent_received(offer, identity), now_us, expires_us

    async def receive_async(self, data: Union[bytes, bytearray, memoryview, str, JobOffer], *, now: Any) -> ReceivedOffer:
        """``receive`` for async hosts: awaits an async resolver and async stores, runs blocking sync ones in a thread."""
        received, now_us, expires_us = await self._checked_async(data, now)
        guard = self.replay_guard
        if guard is not None:
            await self._call(
                guard, guard.admit, received.replay_identity, received.job_id, expires_at_us=expires_us,
                now_us=now_us, digest=received.digest, confirmed=True,
            )
        return received

    # -- the endpoints ----------------------------------------------------------------------------

    @staticmethod
    def _offer_answer(received: ReceivedOffer, duplicate: bool = False) -> OfferAnswer:
        return OfferAnswer(202, _json_headers(), accepted_answer(received.job_id), received=received, duplicate=duplicate)

    @staticmethod
    def _refused(exc: AjpError) -> OfferAnswer:
        if exc.status >= 500 and exc.status != 503:
            raise exc  # a configuration or programming error: let the host's framework log it (500)
        refused = refusal_answer(exc)
        return OfferAnswer(refused.status, refused.headers, refused.body, error=exc)

    def answer_offer(self, data: Union[bytes, bytearray, memoryview, str], *, now: Any) -> OfferAnswer:
        """The answer to ``POST /jobs``: 202 ``{"job_id", "status": "accepted"}`` or the refusal.

        ``.accepted`` says "run this job" (``.received.offer``); a byte-identical
        re-send of an accepted offer (a replay whose ``same_body`` is True) gets the
        same 202 with ``.duplicate`` set (do not run it again); a different body
        under an accepted job id stays 409.  Refusals carry ``error_response``'s
        status and body (``retry-after`` on 429 and 503).  An ajpcore error of
        status 500 (a configuration error, e.g. ``KeyUsageError``) and any other
        exception propagate: the framework answers 500 and logs it.
        """
        try:
            received, now_us, expires_us = self._checked(data, now)
        except AjpError as exc:
            return self._refused(exc)
        try:
            self._admit(received, now_us, expires_us)
        except ReplayedMessage as exc:
            if getattr(exc, "same_body", False):
                return self._offer_answer(received, duplicate=True)
            return self._refused(exc)
        except AjpError as exc:
            return self._refused(exc)
        return self._offer_answer(received)

    async def answer_offer_async(self, data: Union[bytes, bytearray, memoryview, str], *, now: Any) -> OfferAnswer:
        """``answer_offer`` for async hosts (see ``receive_async``)."""
        try:
            received, now_us, expires_us = await self._checked_async(data, now)
        except AjpError as exc:
            return self._refused(exc)
        guard = self.replay_guard
        try:
            if guard is not None:
                await self._call(
                    guard, guard.admit, received.replay_identity, received.job_id, expires_at_us=expires_us,
                    now_us=now_us, digest=received.digest, confirmed=True,
                )
        except ReplayedMessage as exc:
            if getattr(exc, "same_body", False):
                return self._offer_answer(received, duplicate=True)
            return self._refused(exc)
        except AjpError as exc:
            return self._refused(exc)
        return self._offer_answer(received)

    @staticmethod
    def answer_status(job_id: str, job: Union[JobStatus, Mapping[str, Any], None]) -> HttpAnswer:
        """The answer to ``GET /jobs/:id`` (``status_answer``): 200 and a JobStatus, or 404 when ``job`` is None."""
        return status_answer(job_id, job)

    @staticmethod
    def answer_ack(job_id: str, data: Union[bytes, bytearray, memoryview, str], *, known: bool) -> AckAnswer:
        """The answer to ``POST /jobs/:id/ack`` (``ack_answer``): 200 ``{"settled": true}``, 404 or 400 ``Invalid Ack``."""
        return ack_answer(job_id, data, known=known)
