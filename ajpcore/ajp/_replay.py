"""Replay protection: the ``ReplayGuard`` interface, its in-memory implementation
and the identity a guard keys senders by (their verifying key, not a claimed name).
"""

from __future__ import annotations

import hashlib
import heapq
from typing import Any, Dict, List, Protocol, Tuple

from ..errors import Busy, ReplayedMessage
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
    raw = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    return "sha256:" + hashlib.sha256(b"ajpcore-replay-identity-v1\x00" + raw).hexdigest()[:32]


class MemoryReplayGuard:
    """An in-process ``ReplayGuard`` holding at most ``max_entries`` pairs.

    Each pair is kept until ``expires_at + skew``.  When full, expired pairs are
    evicted first (oldest expiry first); if none has expired the new offer is
    refused with ``Busy`` (429, ``retry_after`` = seconds until the next pair
    expires) rather than forgetting a live pair, which would re-open a replay
    window.  Not thread-safe: guard it with a lock, or use one per worker with a
    sender-affine load balancer.
    """

    __slots__ = ("max_entries", "skew_us", "_until", "_heap")

    def __init__(self, *, max_entries: int = 100_000, skew: float = DEFAULT_SKEW_SECONDS) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
            raise ValueError("max_entries must be a positive int")
        self.max_entries = max_entries
        self.skew_us = int(skew * 1_000_000)
        self._until: Dict[Tuple[str, str], int] = {}
        self._heap: List[Tuple[int, Tuple[str, str]]] = []

    def __len__(self) -> int:
        return len(self._until)

    def _evict(self, now_us: int) -> None:
        heap, until = self._heap, self._until
        while heap and heap[0][0] <= now_us:
            t, key = heapq.heappop(heap)
            if until.get(key) == t:
                del until[key]

    def admit(self, identity: str, job_id: str, *, expires_at_us: int, now_us: int) -> None:
        """Record ``(identity, job_id)`` until ``expires_at_us + skew``; see ``ReplayGuard``."""
        key = (identity, job_id)
        until = self._until
        held = until.get(key)
        if held is not None and held > now_us:
            raise ReplayedMessage(f"job `{job_id}` from this sender was already received")
        if len(until) >= self.max_entries:
            self._evict(now_us)
            if len(until) >= self.max_entries:
                wait = max(1, -(-(self._heap[0][0] - now_us) // 1_000_000))
                raise Busy("replay guard is full of unexpired offers; retry later", retry_after=wait)
        t = expires_at_us + self.skew_us
        until[key] = t
        heapq.heappush(self._heap, (t, key))
        if len(self._heap) > 2 * self.max_entries:  # stale entries of re-admitted pairs
            self._evict(now_us)
            if len(self._heap) > 2 * self.max_entries:
                self._heap = [(u, k) for k, u in until.items()]
                heapq.heapify(self._heap)
