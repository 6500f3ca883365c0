"""ajpcore's Agent Card signatures in a2a-sdk 1.3 (a2a-python): a signer for its server, a verifier for its client.

a2a-sdk's own hooks sign and check the card it has already parsed (protobuf ``ParseDict``,
unknown members ignored), so what they check is not what arrived.  These two plug into the
same hooks and keep ajpcore's rules:

- ``CardSigner(private_key, kid=, alg=, jku=None)``: ``signer(card)`` is a signed copy of an
  ``a2a.types.AgentCard``, signed by ``sign_card`` (its default profile: A2A §8.4.1 as both
  SDKs read it), where a2a-sdk's ``create_agent_card_signer(...)`` would go;
  ``signer.card_modifier`` and ``signer.extended_card_modifier`` are the async forms
  ``create_agent_card_routes(card_modifier=)`` and
  ``DefaultRequestHandler(extended_card_modifier=)`` take.
- ``CardVerifier(keys, algorithms=None, profile=None, allowed_jku=None)``: an httpx response
  hook (``verifier.capture``, or a client from ``verifier.httpx_client()``) keeps the card's
  bytes as received; ``verifier`` itself is the ``signature_verifier=`` of
  ``A2ACardResolver.get_agent_card``, ``ClientFactory.connect`` and ``Client.get_card``.
  It checks those bytes with ``verify_card`` (strict decoding, keys by ``kid``), then that
  the card a2a-sdk parsed says nothing the signature does not cover (a v0.3 member such as
  ``url``, unsigned, must not become the card's interface).  Refusals are a2a-sdk's own
  ``NoSignatureError`` and ``InvalidSignaturesError`` (both ``SignatureVerificationError``),
  with ajpcore's error as ``__cause__``; ``verifier.verified`` is the last ``VerifiedCard``
  of the current task.

a2a-sdk is imported on first use only: it is no dependency of ajpcore
(``pip install 'a2a-sdk[signing]'`` for these two).  docs/a2a.md shows both in a server and a client.
"""

from __future__ import annotations

import contextvars
import importlib
from typing import Any, Collection, Dict, Iterable, Optional, Tuple, Union

from ..errors import AjpError, UnsignedCard
from ._card import VerifiedCard, sign_card, verify_card
from ._jwk import KeySet
from ._jws import PrivateKey
from ._profiles import payload

__all__ = ["CardSigner", "CardVerifier", "AGENT_CARD_PATH"]

AGENT_CARD_PATH = "/.well-known/agent-card.json"
"""Where A2A v1.0 §8.2 serves the public card (a2a-sdk's ``AGENT_CARD_WELL_KNOWN_PATH``)."""

_RECEIVED: contextvars.ContextVar[Optional[bytes]] = contextvars.ContextVar("ajpcore_a2a_card_bytes", default=None)
_VERIFIED: contextvars.ContextVar[Optional[VerifiedCard]] = contextvars.ContextVar("ajpcore_a2a_verified", default=None)


def _sdk(module: str) -> Any:
    """An a2a-sdk module, imported now; ImportError naming the install when a2a-sdk is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"ajpcore.a2a.sdk needs a2a-sdk 1.3 with signing: pip install 'a2a-sdk[signing]' ({exc})") from exc


def _card_dict(agent_card: Any) -> Dict[str, Any]:
    """The ProtoJSON form of an ``a2a.types.AgentCard`` (what a2a-sdk canonicalizes and serves)."""
    as_dict: Dict[str, Any] = _sdk("google.protobuf.json_format").MessageToDict(agent_card)
    return as_dict


class CardSigner:
    """Signs a2a-sdk ``AgentCard`` messages with ``ajpcore.a2a.sign_card`` (module docstring).

    ``private_key``, ``kid``, ``alg``, ``jku``: as ``sign_card`` takes them.  A card
    ``sign_card`` refuses raises its error (``KeyUsageError`` for a member that would travel
    unsigned) when it is signed: through ``card_modifier`` that is at each request, so sign
    the card once at start-up (``signer(card)``) to learn it before serving.
    """

    __slots__ = ("_key", "_kid", "_alg", "_jku")

    def __init__(self, private_key: PrivateKey, *, kid: str, alg: str, jku: Optional[str] = None) -> None:
        self._key, self._kid, self._alg, self._jku = private_key, kid, alg, jku

    def __call__(self, agent_card: Any) -> Any:
        """A signed copy of ``agent_card`` (an ``a2a.types.AgentCard``), one more entry in ``signatures``."""
        signed = sign_card(_card_dict(agent_card), self._key, kid=self._kid, alg=self._alg, jku=self._jku)
        entry = signed["signatures"][-1]
        out = type(agent_card)()
        out.CopyFrom(agent_card)
        out.signatures.append(_sdk("a2a.types").AgentCardSignature(protected=entry["protected"], signature=entry["signature"]))
        return out

    async def card_modifier(self, agent_card: Any) -> Any:
        """``create_agent_card_routes(card_modifier=...)``: the served card, signed per request."""
        return self(agent_card)

    async def extended_card_modifier(self, agent_card: Any, context: Any) -> Any:
        """``DefaultRequestHandler(extended_card_modifier=...)``: the extended card, signed."""
        return self(agent_card)


class CardVerifier:
    """a2a-sdk's ``signature_verifier`` hook, checking the card's bytes as received (module docstring).

    ``keys``: a ``KeySet`` or a JWKS document; ``algorithms``, ``profile``, ``allowed_jku``: as
    ``verify_card`` takes them.  ``card_paths``: the URL paths whose GET responses ``capture``
    keeps (default: the well-known card path).
    """

    __slots__ = ("_keys", "_algorithms", "_profile", "_allowed_jku", "_paths")

    def __init__(
        self,
        keys: Union[KeySet, bytes, str, Dict[str, Any]],
        *,
        algorithms: Optional[Iterable[str]] = None,
        profile: Optional[str] = None,
        allowed_jku: Optional[Collection[str]] = None,
        card_paths: Iterable[str] = (AGENT_CARD_PATH,),
    ) -> None:
        self._keys = keys if isinstance(keys, KeySet) else KeySet.from_jwks(keys)
        self._algorithms = None if algorithms is None else tuple(algorithms)
        self._profile = profile
        self._allowed_jku = allowed_jku
        self._paths: Tuple[str, ...] = tuple(card_paths)

    async def capture(self, response: Any) -> None:
        """An httpx ``AsyncClient`` response event hook: keeps the body of a card response for the verifier.

        Only GET responses whose path ends with one of ``card_paths`` are read here; a
        streamed answer (a task's events) is never touched.
        """
        request = response.request
        if request.method == "GET" and request.url.path.endswith(self._paths):
            _RECEIVED.set(await response.aread())

    def httpx_client(self, **kwargs: Any) -> Any:
        """An ``httpx.AsyncClient(**kwargs)`` with ``capture`` among its response hooks (for ``ClientConfig``)."""
        httpx = importlib.import_module("httpx")
        hooks = dict(kwargs.pop("event_hooks", None) or {})
        hooks["response"] = [*hooks.get("response", ()), self.capture]
        return httpx.AsyncClient(event_hooks=hooks, **kwargs)

    @property
    def verified(self) -> Optional[VerifiedCard]:
        """The ``VerifiedCard`` of the last card this verifier passed in the current task (or None)."""
        return _VERIFIED.get()

    def __call__(self, agent_card: Any) -> None:
        """Verify the card a2a-sdk fetched: returns, or raises a2a-sdk's ``SignatureVerificationError``."""
        errors = _sdk("a2a.utils.signing")
        received = _RECEIVED.get()
        _RECEIVED.set(None)  # one fetch, one check: bytes are never verified twice or for another card
        if received is None:
            raise errors.InvalidSignaturesError(
                "no card bytes as received: give a2a-sdk an httpx client with CardVerifier.capture among its "
                "response hooks (CardVerifier.httpx_client() is one)")
        try:
            verified = verify_card(received, self._keys, algorithms=self._algorithms, profile=self._profile,
                                   allowed_jku=self._allowed_jku)
            # The SDK's card is built from the whole body; it must say what the signature covers, no more.
            same = payload(_card_dict(agent_card), "sdk") == payload(verified.to_dict(), "sdk")
        except UnsignedCard as exc:
            raise errors.NoSignatureError(f"ajpcore: {exc}") from exc
        except AjpError as exc:
            raise errors.InvalidSignaturesError(f"ajpcore: {type(exc).__name__}: {exc}") from exc
        if not same:
            raise errors.InvalidSignaturesError(
                "ajpcore: the card a2a-sdk parsed differs from what the signature covers "
                f"(members not covered: {' '.join(verified.unsigned_members) or 'none'})")
        _VERIFIED.set(verified)
