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
import contextlib
import inspect
import logging
import threading
from collections import OrderedDict
from typing import Any, AsyncIterator, Awaitable, Callable, Iterator, Mapping, Optional, Tuple, Union

from .. import _core
from ..errors import (
    AjpError,
    DeclarationUnreachable,
    KeyUsageError,
    ReplayedMessage,
    SenderIdentityError,
    StateUnavailable,
)
from ..provenance.location import check_declaration_url
from ..provenance.pins import AsyncKeyPins, KeyPins
from ._answers import AckAnswer, HttpAnswer, OfferAnswer, ack_answer, offer_accepted, offer_refused, status_answer
from ._messages import JobOffer, JobStatus, Sender
from ._pipeline import (
    RECEIVED_SLOTS,
    ReceivedOffer,
    admit,
    blocking,
    check_pins,
    declared,
    check_content_type,
    host_now,
    quota_host,
    read,
    received_offer,
    refuse_awaitable,
    replayed,
    run_async,
    settle,
    shape,
    signed,
    signer_identity,
)
from ._policy import (
    DEFAULT_MAX_BODY_BYTES,
    SPEC_CAPABILITIES,
    Capabilities,
    Guard,
    Recipients,
    _capability_rule,
    _max_body_bytes,
    _recipients,
    _replay_guard,
)
from ._rules import DEFAULT_MAX_LIFETIME_SECONDS, DEFAULT_SKEW_SECONDS
from ._sender import IdentityCache, SenderIdentity, _gate

__all__ = ["Receiver", "ReceivedOffer"]

Secret = Union[str, bytes]
"""An HMAC secret: bytes, or text (its UTF-8 bytes)."""
SecretLookup = Union[Mapping[str, Secret], Callable[[Sender], Optional[Secret]]]
"""Human senders' secrets: by ``from.id``, or a function of the offer's ``from`` (None: unknown sender)."""
Declaration = Union[bytes, bytearray, memoryview, str, Mapping[str, Any]]
DeclarationResolver = Callable[[str, str], Union[Tuple[Declaration, str], Awaitable[Tuple[Declaration, str]]]]
"""``resolver(provenance_id, declaration_url)`` -> ``(declaration, retrieved_from)``, sync or async."""

_DEFAULT_CACHE: Any = object()
_UNCHECKED: Any = object()  # answer_offer's content_type when the host did not give the header


def _is_async(function: Any) -> bool:
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(getattr(function, "__call__", None))


def _resolved(result: Any) -> Tuple[Declaration, str]:
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], str)):
        raise KeyUsageError("a declaration resolver returns `(declaration, retrieved_from_url)`")
    return result[0], result[1]


_UNREACHABLE = (OSError, asyncio.TimeoutError)


_log = logging.getLogger("ajpcore.ajp")


def _fetch_failed(exc: BaseException, url: str) -> DeclarationUnreachable:
    """A resolver's network failure as the reference SDK's ``DECLARATION_UNREACHABLE``, with a fixed text.

    The failure's own text (an ``OSError`` names addresses, host names, proxies of the host's network)
    goes to the ``ajpcore.ajp`` log, never into the answer to the sender.
    """
    _log.warning("sender declaration %s could not be fetched: %s: %s", url, type(exc).__name__, exc)
    return DeclarationUnreachable("sender declaration could not be fetched")




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
    (an ``OSError`` or timeout it lets out is mapped to it: the answer's reason is
    a fixed text, the failure is logged on the ``ajpcore.ajp`` logger); without a
    resolver agents are refused (403).  Verified declarations are kept in
    ``identity_cache`` (default ``IdentityCache()``; None keeps none).

    ``replay_guard`` (required): a ``ReplayGuard`` of any backend, or
    ``ajp.NO_REPLAY_GUARD`` for a host that refuses replays elsewhere (every
    re-send of an offer is then accepted again).  ``pins`` (a ``KeyPins`` store)
    and ``replay_guard``: coroutine methods are awaited by the async forms (the sync forms
    refuse them with ``KeyUsageError``), sync stores with ``blocking = True`` run
    in a thread there.  ``require_capabilities``: ``SPEC_CAPABILITIES`` (default:
    ``delegate:agents`` of every agent and orchestrator), capabilities to require
    of them instead, or ``()`` to opt out.  ``skew``/``max_lifetime``: as
    ``validate_offer(strict=True)``.  ``backend``: the Ed25519 library (see
    ``ajpcore.verify``).  ``max_body_bytes`` (default 1 MiB, the attribute of the
    same name): a larger body is ``PayloadTooLarge`` (413) before any decoding;
    the adapters (``ajpcore.ajp.asgi``/``wsgi``) stop reading at it.

    Raises ``KeyUsageError`` for ``secret`` with ``secrets``, a resolver that is
    not callable; ``TypeError``/``ValueError`` for a ``recipient`` naming no one,
    a missing ``replay_guard`` (None included), a wrong ``max_body_bytes``.
    """

    __slots__ = (
        "_recipients", "_secret", "_secrets", "_resolver", "_resolver_async", "pins", "replay_guard",
        "_rule", "skew", "max_lifetime", "identity_cache", "backend", "_secret_identity",
        "max_body_bytes",
    )

    def __init__(
        self,
        *,
        recipient: Recipients,
        replay_guard: Guard,
        secret: Optional[Secret] = None,
        secrets: Optional[SecretLookup] = None,
        declarations: Optional[DeclarationResolver] = None,
        pins: Union[KeyPins, AsyncKeyPins, None] = None,
        require_capabilities: Capabilities = SPEC_CAPABILITIES,
        skew: float = DEFAULT_SKEW_SECONDS,
        max_lifetime: float = DEFAULT_MAX_LIFETIME_SECONDS,
        identity_cache: Optional[IdentityCache] = _DEFAULT_CACHE,
        backend: Optional[str] = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ) -> None:
        self._recipients = _recipients(recipient)
        self.replay_guard = _replay_guard(replay_guard)
        self.max_body_bytes = _max_body_bytes(max_body_bytes)
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
        self._rule = _capability_rule(require_capabilities)
        self.skew = skew
        self.max_lifetime = max_lifetime
        self.identity_cache = IdentityCache() if identity_cache is _DEFAULT_CACHE else identity_cache
        self.backend = backend
        # signer_identity(self._secret, None), computed on the first offer it verifies (computing it here
        # could raise for a secret the HMAC refuses, before any offer said so).
        self._secret_identity: Optional[str] = None

    # -- the sender step's policy: a human's secret, an agent's declaration URL behind the gate ---

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
        _gate(provenance_id, url)
        return provenance_id, url

    # -- the signature step, and what it makes ----------------------------------------------------

    def _human_signed(self, offer: JobOffer) -> ReceivedOffer:
        """A human sender's offer, verified with its secret (the secret lookup's refusals first)."""
        secret = self._secret
        who: Optional[str] = self._secret_identity
        if secret is None:
            secret = self._human_secret(offer)
            who = signer_identity(secret, None)
        digest = signed(offer, secret, None, None)
        if who is None:  # this receiver's one secret, on the first offer it verified
            who = self._secret_identity = signer_identity(secret, None)
        # = received_offer(offer, None, who, digest), inline: a server's hot path
        received: ReceivedOffer = _core.impl.new_slotted(ReceivedOffer, RECEIVED_SLOTS, (offer, None, who, digest, False))
        return received

    def _agent_signed(self, offer: JobOffer, identity: SenderIdentity, first_use: bool) -> ReceivedOffer:
        """An agent's offer, verified under the key its declaration established (``first_use``: the pins
        took that key with this offer)."""
        public_key = identity.public_key
        digest = signed(offer, None, public_key, self.backend)
        return received_offer(offer, identity, signer_identity(None, public_key), digest, first_use)

    def _declared(self, offer: JobOffer, now_us: int, fetched: Any) -> SenderIdentity:
        """The sender step of an agent once the resolver answered ``fetched``: its declaration, through the
        identity cache, and the capability rule."""
        declaration, retrieved_from = _resolved(fetched)
        return declared(
            offer, declaration, retrieved_from, self._rule, backend=self.backend, cache=self.identity_cache,
            now_us=now_us, gated=True,
        )

    # -- the admit step, with this receiver's guard ------------------------------------------------
    #
    # One step, two forms: accepted at once (`confirmed`: receive, answer_offer without `run`), or
    # pending until the host has the job: `_taken` runs the host's step and settles the pair
    # (confirm on its normal return; release on any exception, cancellation included).

    def _admit(self, received: ReceivedOffer, now_us: int, expires_us: int, confirmed: bool = True) -> None:
        identity = received.identity
        admitted = admit(
            self.replay_guard, received.replay_identity, received.offer._raw["job_id"], received.digest, now_us,
            expires_us, None if identity is None else quota_host(identity), confirmed, received.first_use,
        )
        if admitted is not None:
            refuse_awaitable(admitted, "`replay_guard`")

    async def _admit_async(self, received: ReceivedOffer, now_us: int, expires_us: int, confirmed: bool = True) -> None:
        guard = self.replay_guard
        job_id = received.offer._raw["job_id"]
        try:
            await run_async(
                blocking(guard), admit, guard, received.replay_identity, job_id, received.digest,
                now_us, expires_us, quota_host(received.identity), confirmed, received.first_use,
            )
        except ReplayedMessage as exc:  # an asyncio guard's, raised when awaited (`admit` names a sync guard's)
            replayed(exc, job_id)
            raise

    def _settle(self, received: ReceivedOffer, now_us: int, taken: bool) -> None:
        # A store failure here is no refusal: on a confirm the host has the job (the pair stays pending
        # until its lease ends: the at-least-once residue, docs/deploying.md); on a release the lease
        # ends the pair anyway, and the host's own exception is the one to propagate.
        try:
            settle(self.replay_guard, received.replay_identity, received.job_id, now_us,
                   quota_host(received.identity), taken)
        except StateUnavailable:
            pass

    async def _settle_async(self, received: ReceivedOffer, now_us: int, taken: bool) -> None:
        guard = self.replay_guard
        try:
            await run_async(
                blocking(guard), settle, guard, received.replay_identity, received.job_id, now_us,
                quota_host(received.identity), taken,
            )
        except StateUnavailable:
            pass

    def _taken(self, run: Callable[[ReceivedOffer], Any], received: ReceivedOffer, now_us: int) -> None:
        try:
            run(received)
        except BaseException:
            self._settle(received, now_us, taken=False)
            raise
        self._settle(received, now_us, taken=True)

    async def _taken_async(self, run: Callable[[ReceivedOffer], Any], received: ReceivedOffer, now_us: int) -> None:
        try:
            outcome = run(received)
            if inspect.isawaitable(outcome):
                await outcome
        except BaseException:  # an exception of the host's step, or the request cancelled while it ran
            await self._settle_async(received, now_us, taken=False)
            raise
        await self._settle_async(received, now_us, taken=True)

    @contextlib.contextmanager
    def receiving(
        self, data: Union[bytes, bytearray, memoryview, str, JobOffer], *, now: Any
    ) -> Iterator[ReceivedOffer]:
        """``receive`` whose acceptance is the host's: ``with receiver.receiving(data, now=...) as received:``.

        On entry, the steps of ``receive`` (same refusals), the pair admitted as pending; the body
        takes the job (records it in the host's job table); a normal exit confirms the pair (a
        retry is then ``ReplayedMessage``), an exception releases it (a retry is admitted anew).
        A retry while the body runs gets ``JobInProgress`` (503, ``Retry-After``).
        """
        received, now_us, expires_us = self._received(data, now)
        self._admit(received, now_us, expires_us, confirmed=False)
        try:
            yield received
        except BaseException:
            self._settle(received, now_us, taken=False)
            raise
        self._settle(received, now_us, taken=True)

    @contextlib.asynccontextmanager
    async def receiving_async(
        self, data: Union[bytes, bytearray, memoryview, str, JobOffer], *, now: Any
    ) -> AsyncIterator[ReceivedOffer]:
        """``receiving`` for async hosts: ``async with receiver.receiving_async(data, now=...) as received:``;
        a cancellation inside the body releases the pair, as an exception does."""
        received, now_us, expires_us = await self._received_async(data, now)
        await self._admit_async(received, now_us, expires_us, confirmed=False)
        try:
            yield received
        except BaseException:
            await self._settle_async(received, now_us, taken=False)
            raise
        await self._settle_async(received, now_us, taken=True)

    # -- the faces: the pipeline's steps, sync and async ----------------------------------------

    def _received(self, data: Any, now: Any) -> Tuple[ReceivedOffer, int, int]:
        """Read, shape, sender, signature, sync: ``(received, now_us, expires_us)``, ready to admit."""
        value, now_us = read(data, now, self.max_body_bytes)
        offer, expires_us = shape(value, now_us, self.skew, self.max_lifetime, self._recipients)
        if offer._raw["from"]["type"] == "human":
            return self._human_signed(offer), now_us, expires_us
        provenance_id, url = self._declaration_url(offer._raw)
        if self._resolver_async:
            raise KeyUsageError("the declaration resolver is asynchronous: call `receive_async` / `answer_offer_async`")
        assert self._resolver is not None
        try:
            fetched = self._resolver(provenance_id, url)
            if type(fetched) is not tuple:  # the usual answer skips the awaitable check
                refuse_awaitable(fetched, "the declaration resolver")
        except AjpError:
            raise
        except _UNREACHABLE as exc:
            raise _fetch_failed(exc, url) from None
        identity = self._declared(offer, now_us, fetched)
        checked = check_pins(self.pins, identity)
        if checked is not None and checked is not True and checked is not False:
            refuse_awaitable(checked, "`pins`")
        return self._agent_signed(offer, identity, checked is True), now_us, expires_us

    async def _received_async(self, data: Any, now: Any) -> Tuple[ReceivedOffer, int, int]:
        """``_received`` for async hosts: the resolver and the pins awaited, or run in a worker thread."""
        value, now_us = read(data, now, self.max_body_bytes)
        offer, expires_us = shape(value, now_us, self.skew, self.max_lifetime, self._recipients)
        if offer._raw["from"]["type"] == "human":
            return self._human_signed(offer), now_us, expires_us
        provenance_id, url = self._declaration_url(offer._raw)
        resolver = self._resolver
        assert resolver is not None
        # A sync resolver fetches (blocks) unless it says otherwise (`blocking = False`): keep the loop free.
        in_thread = not self._resolver_async and getattr(resolver, "blocking", True)
        try:
            fetched = await run_async(in_thread, resolver, provenance_id, url)
        except AjpError:
            raise
        except _UNREACHABLE as exc:
            raise _fetch_failed(exc, url) from None
        identity = self._declared(offer, now_us, fetched)
        pins = self.pins
        checked = await run_async(blocking(pins), check_pins, pins, identity)
        return self._agent_signed(offer, identity, checked is True), now_us, expires_us

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
        received, now_us, expires_us = self._received(data, now)
        # `_admit`, written out: the hot path of a server (one call fewer, 0.3 % of an HMAC receive)
        admitted = admit(self.replay_guard, received.replay_identity, received.offer._raw["job_id"], received.digest,
                         now_us, expires_us)
        if admitted is not None:
            refuse_awaitable(admitted, "`replay_guard`")
        return received

    async def receive_async(self, data: Union[bytes, bytearray, memoryview, str, JobOffer], *, now: Any) -> ReceivedOffer:
        """``receive`` for async hosts: awaits an async resolver and async stores, runs blocking sync ones in a thread."""
        received, now_us, expires_us = await self._received_async(data, now)
        await self._admit_async(received, now_us, expires_us)
        return received

    # -- the endpoints ----------------------------------------------------------------------------

    def answer_offer(
        self, data: Union[bytes, bytearray, memoryview, str], *, now: Any,
        run: Optional[Callable[[ReceivedOffer], Any]] = None, content_type: Any = _UNCHECKED,
    ) -> OfferAnswer:
        """The answer to ``POST /jobs``: 202 ``{"job_id", "status": "accepted"}`` or the refusal.

        ``run`` (recommended): the host's step that takes the job, called with the
        ``ReceivedOffer`` once the offer passed every step, the pair pending in the
        replay guard; its normal return confirms the pair and the answer is 202; an
        exception it raises releases the pair (the sender's retry is admitted anew)
        and propagates (the framework answers 500).  So a 202 means the host has the
        job.  A retry while ``run`` runs is 503 ``IN_PROGRESS`` with ``Retry-After``.
        Without ``run`` the pair is accepted at once and ``.accepted`` says "run this
        job" (``.received.offer``): a host that dies before taking it loses the job.

        A byte-identical re-send of an accepted offer (a replay whose ``same_body``
        is True) gets the same 202 with ``.duplicate`` set (``run`` is not called);
        a different body under an accepted job id stays 409.  Refusals carry
        ``error_response``'s status and body (``retry-after`` on 429 and 503).  An
        ajpcore error of status 500 (a configuration error, e.g. ``KeyUsageError``)
        and any other exception propagate: the framework answers 500 and logs it.

        ``content_type``: the request's ``Content-Type`` header (None when it had
        none); given, ``check_content_type`` rules on it first (415
        ``UNSUPPORTED_MEDIA_TYPE``); left out, the host checked it (the adapters do).
        A body over ``max_body_bytes`` is 413.  A wrong ``now`` raises
        ``TypeError``/``ValueError`` (the host's bug, never an answer).
        """
        received = None
        try:
            if content_type is not _UNCHECKED:
                host_now(now)  # the host's own error first, whatever the request
                check_content_type(content_type)
            received, now_us, expires_us = self._received(data, now)
            self._admit(received, now_us, expires_us, run is None)
        except AjpError as exc:
            return offer_refused(exc, received)
        if run is not None:
            self._taken(run, received, now_us)
        return offer_accepted(received)

    async def answer_offer_async(
        self, data: Union[bytes, bytearray, memoryview, str], *, now: Any,
        run: Optional[Callable[[ReceivedOffer], Any]] = None, content_type: Any = _UNCHECKED,
    ) -> OfferAnswer:
        """``answer_offer`` for async hosts (see ``receive_async``): ``run`` may be a coroutine function; a
        cancellation while it runs releases the pair, as an exception does."""
        received = None
        try:
            if content_type is not _UNCHECKED:
                host_now(now)  # the host's own error first, whatever the request
                check_content_type(content_type)
            received, now_us, expires_us = await self._received_async(data, now)
            await self._admit_async(received, now_us, expires_us, run is None)
        except AjpError as exc:
            return offer_refused(exc, received)
        if run is not None:
            await self._taken_async(run, received, now_us)
        return offer_accepted(received)

    @staticmethod
    def answer_status(job_id: str, job: Union[JobStatus, Mapping[str, Any], None]) -> HttpAnswer:
        """The answer to ``GET /jobs/:id`` (``status_answer``): 200 and a JobStatus, or 404 when ``job`` is None."""
        return status_answer(job_id, job)

    @staticmethod
    def answer_ack(job_id: str, data: Union[bytes, bytearray, memoryview, str], *, known: bool) -> AckAnswer:
        """The answer to ``POST /jobs/:id/ack`` (``ack_answer``): 200 ``{"settled": true}``, 404 or 400 ``Invalid Ack``."""
        return ack_answer(job_id, data, known=known)
