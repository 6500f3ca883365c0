"""Replay protection: the ``ReplayGuard`` interface, its in-memory implementation
and the identity a guard keys senders by (their verifying key, not a claimed name).
"""

from __future__ import annotations

import hashlib
import heapq
import threading
from typing import Any, Dict, List, Optional, Protocol, Tuple

from .. import _core
from ..errors import Busy, InvalidMessage, ReplayedMessage
from ._rules import DEFAULT_SKEW_SECONDS


class ReplayGuard(Protocol):
    """Remembers accepted ``(identity, job_id)`` pairs until their offer can no longer be accepted.

    ``admit`` records the pair and returns None, or raises ``ReplayedMessage``
    (HTTP 409) when the pair is already held, or ``Busy`` (HTTP 429) when the
    guard cannot remember one more pair.  A guard must never forget a pair
    before ``expires_at + skew``: forgetting early would let a replay through.
    """

    def admit(self, identity: str, job_id: str, *, expires_at_us: int, now_us: int) -> None: ...


def replay_identity(*, secret: Any = None, public_key: Any = None) -> str:
    """The replay-guard identity of a verified sender: its key, not a name it claims.

    ``ed25519:<fingerprint>`` (SHA-256 of the SPKI DER) for a public key;
    ``sha256:<32 hex>`` of a domain-separated SHA-256 of the HMAC secret (the
    secret itself is never stored).
    """
    if (secret is None) == (public_key is None):
        raise TypeError("give exactly one of `secret` or `public_key`")
    if public_key is not None:
        from ..keys import Ed25519PublicKey

        key = public_key if isinstance(public_key, Ed25519PublicKey) else Ed25519PublicKey.from_string(public_key)
        return "ed25519:" + key.fingerprint
    t = type(secret)
    cached = t is str or t is bytes  # exact types only: a subclass may redefine hashing and equality
    if cached:
        identity = _identities.get((t, secret))
        if identity is not None:
            return identity
    raw = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    identity = "sha256:" + hashlib.sha256(b"ajpcore-replay-identity-v1\x00" + raw).hexdigest()[:32]
    size = _core.impl.HMAC_CACHE_SIZE  # one read: another thread may set it meanwhile
    if cached and size > 0:
        with _identities_lock:
            while len(_identities) >= size:
                del _identities[next(iter(_identities))]
            _identities[(t, secret)] = identity
    return identity


# The identities of recently seen HMAC secrets, so a receiver does not hash its secret on every
# offer: keyed like the core's HMAC key cache by ``(type, secret)`` and bounded by the same
# ``HMAC_CACHE_SIZE`` (oldest first out; 0 keeps none), so it keeps alive only the kind of
# secrets that cache already keeps (see ``ajpcore._core_py.hmac_sink``).
_identities: Dict[Tuple[type, Any], str] = {}
_identities_lock = threading.Lock()


def _forget_identities() -> None:
    """Drop every cached identity, and with it every secret kept as a key (``ajpcore.clear_hmac_cache``)."""
    with _identities_lock:
        _identities.clear()


MAX_JOB_ID_LENGTH = 256
"""Longest ``job_id`` (characters) the schemas and ``MemoryReplayGuard`` accept (the reference SDK mints 24)."""
MAX_IDENTITY_LENGTH = 256
"""Longest replay identity ``MemoryReplayGuard`` stores (``replay_identity`` gives at most 72 characters)."""


class MemoryReplayGuard:
    """An in-process ``ReplayGuard`` holding at most ``max_entries`` pairs, ``max_per_identity`` per sender.

    Each pair is kept until ``expires_at + skew``.  When a sender already holds
    ``max_per_identity`` (default 1,000) live pairs, its next new offer is
    refused with ``Busy`` (429, ``retry_after`` = seconds until its own next
    pair expires): one sender's flood is answered 429 to that sender only, and
    up to ``max_entries // max_per_identity`` senders never feel each other's
    load.  When the whole table is full, expired pairs are evicted first
    (oldest expiry first); if none has expired the new offer is refused with
    ``Busy`` rather than forgetting a live pair, which would re-open a replay
    window.

    Sizes are bounded too: ``job_id`` at most ``MAX_JOB_ID_LENGTH`` (256)
    characters (longer: ``InvalidMessage``, 400) and the identity at most
    ``MAX_IDENTITY_LENGTH`` (256; longer: ``ValueError``), both ``str``
    (``TypeError``), so the table holds at most ``max_entries`` pairs of at most
    512 characters each.  Not thread-safe: guard it with a lock, or use one per
    worker with a sender-affine load balancer.
    """

    __slots__ = ("max_entries", "max_per_identity", "skew_us", "_jobs", "_size", "_heap", "_full_until")

    def __init__(
        self, *, max_entries: int = 100_000, max_per_identity: int = 1_000, skew: float = DEFAULT_SKEW_SECONDS
    ) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
            raise ValueError("max_entries must be a positive int")
        if isinstance(max_per_identity, bool) or not isinstance(max_per_identity, int) or max_per_identity < 1:
            raise ValueError("max_per_identity must be a positive int")
        self.max_entries = max_entries
        self.max_per_identity = max_per_identity
        self.skew_us = int(skew * 1_000_000)
        self._jobs: Dict[str, Dict[str, int]] = {}  # identity -> job_id -> held until (µs)
        self._size = 0
        self._heap: List[Tuple[int, Tuple[str, str]]] = []  # expiry order, with stale entries
        self._full_until: Dict[str, int] = {}  # identity at its quota -> its earliest expiry

    def __len__(self) -> int:
        return self._size

    def _evict(self, now_us: int) -> None:
        heap, jobs = self._heap, self._jobs
        while heap and heap[0][0] <= now_us:
            t, (identity, job_id) = heapq.heappop(heap)
            held = jobs.get(identity)
            if held is not None and held.get(job_id) == t:
                del held[job_id]
                self._size -= 1
                if not held:
                    del jobs[identity]
                    self._full_until.pop(identity, None)

    def _sender_busy(self, identity: str, now_us: int) -> Optional[Busy]:
        """``Busy`` when ``identity`` holds ``max_per_identity`` live pairs, else None (after evicting expired ones)."""
        known = self._full_until.get(identity)
        if known is None or known <= now_us:
            self._evict(now_us)
            held = self._jobs.get(identity, {})
            if len(held) < self.max_per_identity:
                self._full_until.pop(identity, None)
                return None
            # Every pair left is live and this sender can add none, so the answer holds
            # until its earliest expiry: computed once per expiry, not once per request.
            known = min(held.values())
            self._full_until[identity] = known
        wait = max(1, -(-(known - now_us) // 1_000_000))
        return Busy(f"this sender holds {self.max_per_identity} unexpired offers; retry later", retry_after=wait)

    def admit(self, identity: str, job_id: str, *, expires_at_us: int, now_us: int) -> None:
        """Record ``(identity, job_id)`` until ``expires_at_us + skew``; see ``ReplayGuard`` and the class docstring."""
        if type(identity) is not str or type(job_id) is not str:
            raise TypeError("`identity` and `job_id` must be str")
        if len(job_id) > MAX_JOB_ID_LENGTH:
            raise InvalidMessage([f"job_id is longer than {MAX_JOB_ID_LENGTH} characters"])
        if len(identity) > MAX_IDENTITY_LENGTH:
            raise ValueError(f"replay identity is longer than {MAX_IDENTITY_LENGTH} characters")
        held_by = self._jobs.get(identity)
        held = held_by.get(job_id) if held_by is not None else None
        if held is not None and held > now_us:
            raise ReplayedMessage(f"job `{job_id}` from this sender was already received")
        if held is None and held_by is not None and len(held_by) >= self.max_per_identity:
            busy = self._sender_busy(identity, now_us)
            if busy is not None:
                raise busy
        if held is None and self._size >= self.max_entries:
            self._evict(now_us)
            if self._size >= self.max_entries:
                wait = max(1, -(-(self._heap[0][0] - now_us) // 1_000_000))
                raise Busy("replay guard is full of unexpired offers; retry later", retry_after=wait)
        held_by = self._jobs.setdefault(identity, {})  # eviction may have dropped the sender or the pair
        if job_id not in held_by:
            self._size += 1
        t = expires_at_us + self.skew_us
        held_by[job_id] = t
        heapq.heappush(self._heap, (t, (identity, job_id)))
        if len(self._heap) > 2 * self.max_entries:  # stale entries of re-admitted pairs
            self._evict(now_us)
            if len(self._heap) > 2 * self.max_entries:
                self._heap = [(u, (i, j)) for i, held_map in self._jobs.items() for j, u in held_map.items()]
                heapq.heapify(self._heap)
