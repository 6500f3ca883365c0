"""Sender identity, offline: an agent's offer tied to the key in its own Provenance declaration.

The AJP reference SDK 0.3 establishes an agent sender's key before it checks an
offer's signature (its declaration key resolver); ``verify_sender`` runs the
same flow on the declaration document the caller fetched from
``from.declaration_url`` and then checks the offer's signature under that key;
``receive_offer(..., declaration=...)`` and ``Receiver`` run it inside the
receive path (one signature check there too).  Every identity refusal is a
``SenderIdentityError`` (HTTP 403) whose ``.code`` is the SDK's code for that
failure (see ``verify_sender``).  ``IdentityCache`` keeps verified declarations
so the same bytes from the same URL are verified once.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Literal, Optional, Sequence, Tuple, Union

from .. import _core
from ..errors import AjpError, DecodeError, KeyUsageError, SenderIdentityError
from ..keys import Ed25519PublicKey
from ..provenance import declaration_digest, verify_declaration
from ..provenance.location import check_declaration_url
from ..provenance.pins import KeyPins
from ._messages import JobOffer

__all__ = ["SenderIdentity", "verify_sender", "DELEGATION_CAPABILITY", "IdentityCache"]

DELEGATION_CAPABILITY = "delegate:agents"
"""The capability the AJP specification requires of an agent that hires another agent
(``require_capabilities=(DELEGATION_CAPABILITY,)``)."""


@dataclass(frozen=True)
class SenderIdentity:
    """Who sent an offer, established offline from its verified declaration.

    ``provenance_id``: the sender's id (equal to ``from.provenance_id`` and the
    declaration's own id).  ``public_key``/``fingerprint``: the key the offer
    must be signed with, taken from the declaration.  ``declaration_digest``:
    ``sha256:`` + hex of the declaration's signing payload (which state of the
    declaration was checked).  ``coverage``: ``"declaration"`` (spec 0.2+: every
    field signed) or ``"identity"`` (0.1: only id and key signed, so
    ``capabilities`` and ``constraints`` are the document's unsigned claims).
    ``capabilities``/``constraints``: the declaration's lists (strings only).
    ``retrieved_from``: where the declaration was fetched from.
    """

    provenance_id: str
    public_key: Ed25519PublicKey
    fingerprint: str
    declaration_digest: str
    coverage: Literal["declaration", "identity"]
    capabilities: Tuple[str, ...]
    constraints: Tuple[str, ...]
    retrieved_from: str



def _strings(value: Any) -> Tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


class IdentityCache:
    """Verified declarations, so the same bytes from the same URL are verified once.

    An entry is keyed by the SHA-256 of the URL the declaration was retrieved
    from and its bytes as served (``bytes``/``str`` declarations only: a decoded
    one is verified every time), and holds what verifying it established: the
    declaration's id, key, digest, coverage, capabilities and constraints.  It
    lives ``ttl`` seconds (default 300, measured on the ``now`` the receiver is
    given) and at most ``max_entries`` (default 1,024) are kept, least recently
    used out first.  A cache hit skips only the declaration's own verification:
    the offer's ``from`` is compared with it, the capability rule and the key pins
    are consulted, and the offer's signature is checked, on every offer, so a pin
    change or a rotation is never hidden (a rotated declaration has other bytes,
    hence another entry).  A resolver that hands back the same ``bytes``/``str``
    object for a URL is not hashed again: the last object per URL and its key are
    kept (an immutable object is its bytes), at most 1 MiB of them in all, objects
    over 64 KiB never.  Thread-safe.
    """

    __slots__ = ("max_entries", "ttl_us", "_entries", "_lock", "_memo", "_memo_size")

    def __init__(self, *, max_entries: int = 1024, ttl: float = 300) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 0:
            raise ValueError("max_entries must be an int >= 0 (0 caches nothing)")
        if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not ttl >= 0:
            raise ValueError("ttl must be a number of seconds >= 0")
        self.max_entries = max_entries
        self.ttl_us = int(ttl * 1_000_000)
        self._entries: "OrderedDict[bytes, Tuple[int, SenderIdentity]]" = OrderedDict()
        self._lock = threading.Lock()
        # Per URL, the last declaration object hashed into a key, and that key: a resolver that hands back
        # the same (immutable) object is not hashed again.  At most _MEMO_BUDGET characters or bytes of
        # declarations are held, oldest out first.
        self._memo: "OrderedDict[str, Tuple[Union[bytes, str], bytes]]" = OrderedDict()
        self._memo_size = 0

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()
            self._memo.clear()
            self._memo_size = 0

    def _key(self, url: str, declaration: Any) -> Optional[bytes]:
        """``_cache_key(url, declaration)``, without hashing again the object this URL gave last time.

        ``is`` on a ``bytes`` or ``str`` (immutable) object means the same bytes: the key is the
        one computed from them.  Any other object, or another one, is hashed.
        """
        memo = self._memo.get(url)
        if memo is not None and memo[0] is declaration:
            return memo[1]
        key = _cache_key(url, declaration)
        kind = type(declaration)
        if key is None or (kind is not bytes and kind is not str) or self.max_entries == 0 or self.ttl_us == 0:
            return key
        size = len(declaration)
        if size <= _MEMO_BUDGET // 16:
            with self._lock:
                old = self._memo.pop(url, None)
                if old is not None:
                    self._memo_size -= len(old[0])
                self._memo[url] = (declaration, key)
                self._memo_size += size
                while self._memo_size > _MEMO_BUDGET or len(self._memo) > self.max_entries:
                    self._memo_size -= len(self._memo.popitem(last=False)[1][0])
        return key

    def _get(self, key: bytes, now_us: int) -> Optional[SenderIdentity]:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if now_us >= entry[0] or now_us < entry[0] - self.ttl_us:  # expired, or a clock set back
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def _put(self, key: bytes, declared: SenderIdentity, now_us: int) -> None:
        if self.max_entries == 0 or self.ttl_us == 0:
            return
        with self._lock:
            self._entries[key] = (now_us + self.ttl_us, declared)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)


_MEMO_BUDGET = 1 << 20
"""How many characters or bytes of declaration objects an ``IdentityCache`` holds to skip re-hashing them
(one object at most a sixteenth of it)."""


def _cache_key(retrieved_from: str, declaration: Any) -> Optional[bytes]:
    if type(declaration) is str:
        declaration = declaration.encode("utf-8", "surrogatepass")
    elif type(declaration) in (bytearray, memoryview):
        declaration = bytes(declaration)
    if type(declaration) is not bytes:
        return None
    url = retrieved_from.encode("utf-8", "surrogatepass")
    return hashlib.sha256(len(url).to_bytes(4, "big") + url + declaration).digest()


@dataclass(frozen=True)
class _Declared:
    """What a verified declaration establishes, whatever offer it is used for (what the cache keeps)."""

    provenance_id: str
    public_key: Ed25519PublicKey
    fingerprint: str
    declaration_digest: str
    coverage: Literal["declaration", "identity"]
    capabilities: Tuple[str, ...]
    constraints: Tuple[str, ...]


def _offer_declaration_url(sender: Any) -> str:
    """``from.declaration_url`` of an agent's offer (``sender`` is ``_raw["from"]``), or the SDK's refusal."""
    if sender["type"] == "human":
        raise SenderIdentityError(
            "a human sender is authenticated by its HMAC signature (secret=), not by a Provenance declaration"
        )
    declaration_url = sender.get("declaration_url")
    if not declaration_url:
        raise SenderIdentityError(
            "sender did not provide from.declaration_url, so its key cannot be established offline",
            "NO_DECLARATION_URL",
        )
    assert isinstance(declaration_url, str)  # the schema's type
    return declaration_url


_GATED_PAIRS = 4096
"""How many (provenance_id, declaration_url) pairs the gate admitted are remembered (oldest out first)."""
_gated: "OrderedDict[Tuple[str, str], None]" = OrderedDict()
_gated_lock = threading.Lock()


def _gate(provenance_id: Any, url: str) -> None:
    """``check_declaration_url(url, provenance_id)``, whose verdict is remembered once admitted.

    The URL was chosen by a sender nothing has authenticated yet: the gate (https, port 443, no
    userinfo, a public DNS name, the id's own location) runs before anything is fetched from it
    (``Receiver``) and before a declaration said to come from it is believed (``receive_offer``,
    ``verify_sender``): every path, the same verdicts and codes.  It is a pure function of the two
    (no DNS, no clock), so an admitted pair is kept (bounded, shared) instead of re-parsing the URL
    per offer; a refusal is decided every time.
    """
    pair = (provenance_id, url)
    if pair in _gated:
        return
    check_declaration_url(url, provenance_id)
    with _gated_lock:
        _gated[pair] = None
        if len(_gated) > _GATED_PAIRS:
            _gated.popitem(last=False)


def _verified_declaration(declaration: Any, retrieved_from: str, backend: Optional[str]) -> _Declared:
    """Verify a declaration document retrieved from ``retrieved_from`` (no offer involved)."""
    if isinstance(declaration, (bytes, bytearray, memoryview, str)):
        try:
            declaration = _core.impl.decode(declaration)
        except DecodeError as exc:
            raise SenderIdentityError(f"sender declaration is not strict JSON: {exc}", "DECLARATION_UNPARSEABLE") from None
    result = verify_declaration(declaration, retrieved_from, backend=backend)
    if result.public_key is None:
        raise SenderIdentityError(
            f"sender declaration publishes no key: {result.reason}", "NO_PUBLIC_KEY"
        )
    if not result.valid:
        raise SenderIdentityError(f"sender declaration did not verify: {result.reason}", "DECLARATION_INVALID")
    if result.location != "match":
        raise SenderIdentityError(
            "sender declaration was not served from the location its provenance id names",
            "DECLARATION_LOCATION_MISMATCH",
        )
    assert isinstance(declaration, dict) and result.fingerprint is not None and result.provenance_id is not None
    try:
        digest = declaration_digest(declaration)
    except AjpError as exc:  # only a 0.1 declaration (whose signature never canonicalises it) gets here
        raise SenderIdentityError(f"sender declaration cannot be canonicalised: {exc}", "DECLARATION_INVALID") from None
    coverage: Literal["declaration", "identity"] = "identity" if result.coverage == "identity" else "declaration"
    return _Declared(
        provenance_id=result.provenance_id,
        public_key=Ed25519PublicKey.from_string(result.public_key),  # verify_declaration parsed it already
        fingerprint=result.fingerprint,
        declaration_digest=digest,
        coverage=coverage,
        capabilities=_strings(declaration.get("capabilities")),
        constraints=_strings(declaration.get("constraints")),
    )


def _declared_sender(
    sender: Any,
    declaration: Any,
    retrieved_from: Any,
    *,
    backend: Optional[str] = None,
    cache: Optional[IdentityCache] = None,
    now_us: int = 0,
    gated: bool = False,
) -> SenderIdentity:
    """The identity flow up to the key (no pins, no capability rule, no offer signature): ``verify_sender``'s
    codes in its order.  ``sender`` is the offer's ``from`` object; ``cache`` skips re-verifying known bytes;
    ``gated``: the caller already ran the URL gate (the ``Receiver``, before it fetched)."""
    declaration_url = _offer_declaration_url(sender)
    if not gated:
        _gate(sender.get("provenance_id"), declaration_url)
    if retrieved_from != declaration_url:
        raise SenderIdentityError(
            "the declaration was not retrieved from the sender's from.declaration_url",
            "DECLARATION_LOCATION_MISMATCH",
        )
    key = cache._key(declaration_url, declaration) if cache is not None else None
    identity = cache._get(key, now_us) if cache is not None and key is not None else None
    if identity is None:
        declared = _verified_declaration(declaration, declaration_url, backend)
        identity = SenderIdentity(
            provenance_id=declared.provenance_id,
            public_key=declared.public_key,
            fingerprint=declared.fingerprint,
            declaration_digest=declared.declaration_digest,
            coverage=declared.coverage,
            capabilities=declared.capabilities,
            constraints=declared.constraints,
            retrieved_from=declaration_url,
        )
        if cache is not None and key is not None:
            cache._put(key, identity, now_us)  # the key covers the URL, so `retrieved_from` is the same
    provenance_id = sender.get("provenance_id")
    if identity.provenance_id != provenance_id:
        raise SenderIdentityError(
            f"sender declaration is for `{identity.provenance_id}`, not `{provenance_id}`", "DECLARATION_ID_MISMATCH"
        )
    return identity


def _check_capabilities(identity: SenderIdentity, wanted: Sequence[str]) -> None:
    """``CAPABILITY_NOT_DECLARED`` unless the declaration lists every capability in ``wanted`` under its signature."""
    for capability in wanted:
        if identity.coverage != "declaration":
            raise SenderIdentityError(
                f"capability `{capability}` cannot be checked: a spec 0.1 signature does not cover capabilities",
                "CAPABILITY_NOT_DECLARED",
            )
        if capability not in identity.capabilities:
            raise SenderIdentityError(f"sender does not declare capability `{capability}`", "CAPABILITY_NOT_DECLARED")


def _wanted(require_capabilities: Union[str, Sequence[str]]) -> Tuple[str, ...]:
    if isinstance(require_capabilities, str):
        return (require_capabilities,)
    wanted = tuple(require_capabilities)
    for capability in wanted:
        if not isinstance(capability, str):
            raise TypeError(f"require_capabilities must hold strings, got `{type(capability).__name__}`")
    return wanted


def verify_sender(
    offer: Any,
    declaration: Any,
    *,
    retrieved_from: Any,
    pins: Optional[KeyPins] = None,
    require_capabilities: Union[str, Sequence[str]] = (),
    backend: Optional[str] = None,
) -> SenderIdentity:
    """The sender of an agent's offer, from the declaration the caller fetched: its key, and the offer signed by it.

    ``offer``: a ``JobOffer`` (or its JSON object).  ``declaration``: the
    document as fetched (bytes or str, decoded strictly) or already decoded.
    ``retrieved_from``: the URL it was fetched from, which must be the offer's
    ``from.declaration_url``.  ``pins``: a ``KeyPins`` store (first use pins,
    another key later is ``KEY_ROTATED``).  ``require_capabilities``: capability
    strings the declaration must list under a signature that covers them
    (``DELEGATION_CAPABILITY`` is the AJP specification's rule for agents
    hiring agents; ``receive_offer`` and ``Receiver`` apply it by default).

    The reference SDK 0.3's flow, each failure raising ``SenderIdentityError``
    (403) with its code:

    - ``SENDER_IDENTITY_FAILED``: the sender is human (humans are authenticated
      by the HMAC signature, ``secret=``);
    - ``NO_DECLARATION_URL``: the offer has no ``from.declaration_url``;
    - ``DECLARATION_URL_REFUSED``, ``PROVENANCE_ID_INVALID``,
      ``PROVENANCE_ID_NOT_CANONICAL``, ``DECLARATION_LOCATION_MISMATCH``: the URL
      gate (``provenance.check_declaration_url``) refuses that URL for that id, as
      ``Receiver`` refuses it before fetching (an intranet name, ``*.internal``,
      ``*.local``, an IP literal...);
    - ``DECLARATION_LOCATION_MISMATCH``: ``retrieved_from`` is not that URL, or
      the declaration's location check is not ``match``;
    - ``DECLARATION_UNPARSEABLE``: the document is not strict JSON;
    - ``NO_PUBLIC_KEY``: the declaration has no ``identity.public_key``;
    - ``DECLARATION_INVALID``: its signature does not verify (or it has none);
    - ``DECLARATION_ID_MISMATCH``: its ``provenance_id`` is not ``from.provenance_id``;
    - ``CAPABILITY_NOT_DECLARED`` (ajpcore's code): a required capability is
      missing, or the signature (spec 0.1) does not cover capabilities;
    - ``KEY_ROTATED`` (``KeyRotated``): ``pins`` holds another key for that id.

    Then the offer's own signature is checked under the established key
    (``JobOffer.verify``): a sender identity is returned only for an offer that
    key signed.  That raises ``BadSignature``, ``MalformedSignature``,
    ``UnsupportedScheme``, ``LegacySignature`` (401) or ``InvalidMessage`` (400,
    an ``sha256:`` signature from an agent).

    Raises ``ValidationError`` when ``offer`` is a JSON object that is not a
    well-formed JobOffer, ``KeyUsageError`` for an unknown ``backend``.
    """
    if not isinstance(offer, JobOffer):
        offer = JobOffer.from_dict(offer)
    identity = _declared_sender(offer._raw["from"], declaration, retrieved_from, backend=backend)
    _check_capabilities(identity, _wanted(require_capabilities))
    if pins is not None:
        check: Any = pins.check  # Any: an asyncio pin store passed here by mistake returns a coroutine
        outcome = check(identity.provenance_id, identity.fingerprint, identity.public_key)
        if outcome is not None and outcome is not True and outcome is not False:
            # an awaitable: nothing was checked, never an acceptance
            getattr(outcome, "close", lambda: None)()
            raise KeyUsageError("`pins` is an asyncio store (its methods are coroutines): await it in an async receiver")
    offer.verify(public_key=identity.public_key, backend=backend)
    return identity
