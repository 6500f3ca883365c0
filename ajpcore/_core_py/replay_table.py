"""The in-memory replay guard's table and its usual admit: twin of ``native/replay_table.pxi``.

``MemoryReplayGuard`` (``ajpcore.ajp._replay``) keeps its pairs in a ``ReplayTable``:
``jobs`` (identity -> job_id -> entry), ``heap`` (``(until, identity, job_id)`` in expiry
order, with stale entries), ``full_until`` (a group refused until its earliest expiry),
``size`` (the pairs held), all changed only under ``lock``.

``admit_new`` is the admit a receiver makes on nearly every offer: a pair the table does
not hold, of a sender in its own quota group (no declaration host, not a first use), with
room in that group and in the table.  It records the pair exactly as the guard's full
admit would and answers True.  Anything else it leaves untouched and answers False, and
the guard's full admit decides under the lock: a pair held (replayed, in progress, or
expired and admitted anew), a group at its quota or a quota that is not one number, a
full table, a heap due for compaction, arguments the full admit would refuse or read as
big ints (beyond ``_BOUND``), and the lock held by another thread (so a waiting admit
waits in one place, the full admit).  One state machine, one owner: this step only
takes the path of it where nothing is refused or evicted.  Both store a pair through
``record``, the one place that knows how a pair is kept (its entry, the count, the busy
mark of its group, the heap).
"""

from __future__ import annotations

import threading
from heapq import heappush
from typing import Any, Dict, List, Optional, Tuple

from .._core_rules import _check_table, MAX_DIGEST_LENGTH, MAX_IDENTITY_LENGTH, MAX_JOB_ID_LENGTH

__all__ = ["ReplayTable"]

_BOUND = 2**62
"""Instants, skew and lease the usual admit reads lie strictly within +-2**62 µs (146,000 years),
so their sums fit 64 bits on the native twin; beyond, the full admit reads them as Python ints."""


class ReplayTable:
    """The pairs of one ``MemoryReplayGuard``: ``max_entries`` pairs at most, ``quota`` per
    sender's own group (None: a quota per group, which the guard looks up), each held
    until ``expires_at + skew_us`` once accepted, or ``lease_us`` past its admit while pending."""

    __slots__ = ("jobs", "heap", "full_until", "size", "lock", "max_entries", "quota", "skew_us", "lease_us", "_bounded")

    def __init__(self, max_entries: int, quota: Optional[int], skew_us: int, lease_us: int) -> None:
        _check_table(max_entries, quota, skew_us, lease_us)
        self.jobs: Dict[str, Dict[str, Tuple[int, Optional[bytes], Optional[int], str]]] = {}
        self.heap: List[Tuple[int, str, str]] = []
        self.full_until: Dict[str, int] = {}
        self.size = 0
        self.lock = threading.Lock()
        self.max_entries = max_entries
        self.quota = quota
        self.skew_us = skew_us
        self.lease_us = lease_us
        self._bounded = -_BOUND < skew_us < _BOUND and -_BOUND < lease_us < _BOUND  # the usual admit may run

    def admit_new(self, identity: Any, job_id: Any, expires_at_us: Any, now_us: Any, digest: Any, confirmed: Any) -> bool:
        """Record the new pair ``(identity, job_id)`` in ``identity``'s own group and answer True,
        or change nothing and answer False (the guard's full admit decides); see the module."""
        if not (
            type(identity) is str and type(job_id) is str and len(job_id) <= MAX_JOB_ID_LENGTH
            and len(identity) <= MAX_IDENTITY_LENGTH and type(expires_at_us) is int and type(now_us) is int
            and -_BOUND < expires_at_us < _BOUND and -_BOUND < now_us < _BOUND and self._bounded
            and (digest is None or (type(digest) is bytes and len(digest) <= MAX_DIGEST_LENGTH))
            and (confirmed is True or confirmed is False)
        ):
            return False
        lock = self.lock
        if not lock.acquire(False):
            return False
        try:
            jobs = self.jobs
            held_by = jobs.get(identity)
            if held_by is not None:
                if type(held_by) is not dict or job_id in held_by:  # (only this table's own dicts, as the native twin)
                    return False
                held = len(held_by)
                if held and (self.quota is None or held >= self.quota):
                    return False
            if self.size >= self.max_entries or len(self.heap) >= 2 * self.max_entries:
                return False
            hold = expires_at_us + self.skew_us
            until = hold if confirmed else min(now_us + self.lease_us, hold)
            self._record(held_by, identity, job_id, until, digest, None if confirmed else hold, identity)
            return True
        finally:
            lock.release()

    def record(self, identity: str, job_id: str, until: int, digest: Optional[bytes], hold: Optional[int], group: str) -> None:
        """Store the pair ``(identity, job_id)`` as held until ``until`` (µs), with its ``digest``, ``hold``
        (its held-until once confirmed; None when accepted) and quota ``group``: the one place a pair is
        recorded, for ``admit_new`` and the guard's full admit, which holds ``lock`` and decided to admit it."""
        self._record(self.jobs.get(identity), identity, job_id, until, digest, hold, group)

    def _record(
        self, held_by: Optional[Dict[str, Any]], identity: str, job_id: str, until: int, digest: Optional[bytes],
        hold: Optional[int], group: str,
    ) -> None:
        """``record``, given ``identity``'s pairs (``held_by``; None when it holds none)."""
        if held_by is None:
            held_by = self.jobs[identity] = {}
        self.size += 1
        held_by[job_id] = (until, digest, hold, group)
        full_until = self.full_until
        if full_until:  # a group refused until its earliest expiry: this pair may expire sooner
            known = full_until.get(group)
            if known is not None and until < known:
                full_until[group] = until
        heappush(self.heap, (until, identity, job_id))
