"""Replay protection: the ``ReplayGuard`` interface (pending, accepted, released pairs), quotas per
sender group, the in-memory guard and the identity a guard keys senders by (their verifying key,
not a claimed name).

The guards shared by processes and hosts live beside it, one module per store:
``_replay_sqlite`` (one host) and ``_replay_redis`` (many hosts).
"""

from __future__ import annotations

import hashlib
import heapq
import threading
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Protocol, Tuple, Union

from .. import _core
# The bounds on what a guard stores, defined below the core twins (whose usual admit checks them too):
from .._core_rules import MAX_DIGEST_LENGTH as MAX_DIGEST_LENGTH
from .._core_rules import MAX_IDENTITY_LENGTH as MAX_IDENTITY_LENGTH
from .._core_rules import MAX_JOB_ID_LENGTH as MAX_JOB_ID_LENGTH
from ..errors import Busy, InvalidMessage, JobInProgress, ReplayedMessage
from ._rules import DEFAULT_SKEW_SECONDS


class ReplayGuard(Protocol):
    """Remembers ``(identity, job_id)`` pairs until their offer can no longer be accepted, in two states.

    ``admit`` records the pair as *pending* for a short lease (the guard's
    ``lease``, default ``DEFAULT_LEASE_SECONDS``) and returns None; ``confirm``
    makes a pending pair *accepted* until ``expires_at + skew`` once the host
    has the job; ``release`` drops a pending pair the host did not take (its
    retry is then admitted anew), and a pending pair whose lease ran out (the
    host died between the two) is admitted again.  ``admit(...,
    confirmed=True)`` records the pair as accepted at once, for a caller that
    takes the job in the same breath (``receive_offer``, ``Receiver.receive``).

    ``admit`` raises ``ReplayedMessage`` (HTTP 409, ``.same_body`` True when
    ``digest`` equals the digest stored with the accepted pair) when the pair
    is accepted, ``JobInProgress`` (HTTP 503, ``retry_after`` = what is left
    of the lease) when it is pending, ``Busy`` (HTTP 429, ``retry_after``) when
    the guard cannot remember one more pair for this sender's quota group or at
    all, ``InvalidMessage`` (400) for a job id longer than
    ``MAX_JOB_ID_LENGTH``, and ``StateUnavailable`` (HTTP 503,
    ``retry_after``) when its store cannot answer.  A store failure is never
    an acceptance, and a failure that leaves the pair recorded anyway (a
    timeout after the server ran the admit, a cancelled await) leaves it
    pending: its retry finds it pending or admits it anew, never "duplicate"
    for a job no host took.  A guard never forgets an accepted pair before
    ``expires_at + skew``: forgetting early would let a replay through.

    ``digest`` (optional, bytes of at most 64) is what the guard remembers of
    the offer: ``receive_offer`` and ``Receiver`` pass ``offer_digest`` (the
    signature's raw bytes, which name the signed content under one key).
    ``host`` (optional): the declaration host the sender's identity lives
    under; identities of one host share one quota (``quota_group``).
    ``first_use``: True when the sender's key was not pinned before this offer
    (or the receiver keeps no pins); it may then hold only a smaller share
    (``NEW_IDENTITY_SHARE``) of its group's quota.

    ``blocking`` (class attribute): True when the methods wait on I/O (SQLite,
    a synchronous Redis client), so an asyncio receiver must run them in a
    worker thread; False when they return at once (``MemoryReplayGuard``).
    The asyncio twins (``AsyncSQLiteReplayGuard``, ``AsyncRedisReplayGuard``)
    have coroutine methods with the same arguments and meaning instead.
    """

    blocking: bool

    def admit(
        self, identity: str, job_id: str, *, expires_at_us: int, now_us: int, digest: Optional[bytes] = None,
        host: Optional[str] = None, first_use: bool = False, confirmed: bool = False,
    ) -> None: ...

    def confirm(self, identity: str, job_id: str, *, now_us: int, host: Optional[str] = None) -> bool:
        """Make the pending pair accepted; True when it is accepted now, False when no pair was held.

        ``host``: the one given to ``admit`` (a store keyed by quota group finds the pair by it)."""
        ...

    def release(self, identity: str, job_id: str, *, now_us: int, host: Optional[str] = None) -> bool:
        """Drop the pair if it is pending (never an accepted one); True when one was dropped."""
        ...


class AsyncReplayGuard(Protocol):
    """The asyncio twin of ``ReplayGuard``: ``await guard.admit(...)``, ``confirm``, ``release``; same outcomes."""

    blocking: bool

    async def admit(
        self, identity: str, job_id: str, *, expires_at_us: int, now_us: int, digest: Optional[bytes] = None,
        host: Optional[str] = None, first_use: bool = False, confirmed: bool = False,
    ) -> None: ...

    async def confirm(self, identity: str, job_id: str, *, now_us: int, host: Optional[str] = None) -> bool: ...

    async def release(self, identity: str, job_id: str, *, now_us: int, host: Optional[str] = None) -> bool: ...


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


@_core.forget_with_hmac_cache
def _forget_identities() -> None:
    """Drop every cached identity, and with it every secret kept as a key (``ajpcore.clear_hmac_cache``)."""
    with _identities_lock:
        _identities.clear()


DEFAULT_QUOTA_SHARE = 4
"""Without ``max_per_identity``, one sender may hold ``max_entries // DEFAULT_QUOTA_SHARE`` live pairs."""

Quota = Union[int, Mapping[str, int], Callable[[str], Optional[int]], None]
"""``max_per_identity``: one int for every sender, a mapping identity -> int (others get the
default), a callable identity -> int or None (None: the default), or None (the default)."""


DEFAULT_LEASE_SECONDS = 5.0
"""How long an admitted pair stays pending without ``confirm`` or ``release`` before it may be admitted again.

It must cover the host's step between the admit and the confirm (recording the job, not running
it); a worker that dies in between holds the pair this long, and the sender's retry is answered
``JobInProgress`` with ``Retry-After`` until then."""
NEW_IDENTITY_SHARE = 4
"""A ``first_use`` admit is refused once its quota group holds ``quota // NEW_IDENTITY_SHARE`` pairs."""
MAX_HOST_LENGTH = 253
"""Longest ``host`` a guard groups quotas by (a DNS name's longest text form)."""


def quota_group(identity: str, host: Optional[str]) -> str:
    """The quota group of a sender: ``host:<host>`` for an identity under a declaration host, else the identity.

    Every identity whose declaration lives under one host shares that host's
    quota, so keys a sender mints for itself under its own domain add nothing
    to its share of the table; an identity with no host (an HMAC sender) is
    its own group.  ``max_per_identity`` is looked up by the group name.
    """
    if host is None:
        return identity
    if type(host) is not str or not host or len(host) > MAX_HOST_LENGTH:
        raise ValueError(f"`host` must be None or a non-empty str of at most {MAX_HOST_LENGTH} characters")
    return "host:" + host


def group_limit(quota: int, first_use: bool) -> int:
    """What a group may hold when this admit is counted: its quota, or the smaller share of a first use."""
    return max(1, quota // NEW_IDENTITY_SHARE) if first_use else quota


def lease_micros(lease: Any) -> int:
    """The guard's ``lease`` (seconds, > 0) in µs, else ``ValueError``."""
    if isinstance(lease, bool) or not isinstance(lease, (int, float)) or not 0 < lease <= 86_400:
        raise ValueError("lease must be a number of seconds in (0, 86400]")
    return max(1, int(lease * 1_000_000))


def replayed(job_id: str, same_body: bool) -> ReplayedMessage:
    return ReplayedMessage(f"job `{job_id}` from this sender was already received", same_body=same_body, job_id=job_id)


def in_progress(job_id: str, lease_until_us: int, now_us: int) -> JobInProgress:
    return JobInProgress(
        f"job `{job_id}` from this sender is being taken by this receiver; retry later",
        retry_after=_ceil_seconds(lease_until_us - now_us),
    )


def group_busy(limit: int, first_until_us: int, now_us: int) -> Busy:
    return Busy(
        f"this sender's quota group holds {limit} unexpired offers; retry later",
        retry_after=_ceil_seconds(first_until_us - now_us),
    )


def table_full(first_until_us: int, now_us: int) -> Busy:
    return Busy("replay guard is full of unexpired offers; retry later", retry_after=_ceil_seconds(first_until_us - now_us))


def check_admit(identity: Any, job_id: Any, digest: Any, expires_at_us: Any, now_us: Any) -> None:
    """The argument checks every guard's ``admit`` shares (types and sizes), before it touches its store."""
    if (
        type(identity) is str and type(job_id) is str and len(job_id) <= MAX_JOB_ID_LENGTH
        and len(identity) <= MAX_IDENTITY_LENGTH and type(expires_at_us) is int and type(now_us) is int
        and (digest is None or (type(digest) is bytes and len(digest) <= MAX_DIGEST_LENGTH))
    ):
        return  # the usual call: one test, then the precise error below otherwise
    if type(identity) is not str or type(job_id) is not str:
        raise TypeError("`identity` and `job_id` must be str")
    if len(job_id) > MAX_JOB_ID_LENGTH:
        raise InvalidMessage([f"job_id is longer than {MAX_JOB_ID_LENGTH} characters"])
    if len(identity) > MAX_IDENTITY_LENGTH:
        raise ValueError(f"replay identity is longer than {MAX_IDENTITY_LENGTH} characters")
    if digest is not None and (type(digest) is not bytes or len(digest) > MAX_DIGEST_LENGTH):
        raise TypeError(f"`digest` must be None or bytes of at most {MAX_DIGEST_LENGTH}")
    raise TypeError("`expires_at_us` and `now_us` must be int (microseconds)")


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int")
    return value


class Quotas:
    """The per-sender quota of a guard: ``quotas(identity)`` is how many live pairs that sender may hold.

    Built from ``max_per_identity`` (see ``Quota``) and the table size
    ``max_entries`` (None: the store has no table bound of its own, as Redis,
    whose bound is its ``maxmemory``).  The default is ``max_entries //
    DEFAULT_QUOTA_SHARE`` (``default`` when given instead).  A quota of at least
    ``max_entries`` would let one sender fill the whole table and lock every
    other sender out, so it is refused with ``ValueError`` at construction (an
    int or a mapping's values) or on the call (a callable's answer).
    """

    __slots__ = ("max_entries", "default", "_fixed", "_table", "_call")

    def __init__(self, max_per_identity: Quota, max_entries: Optional[int], *, default: Optional[int] = None) -> None:
        self.max_entries = max_entries
        if default is None:
            if max_entries is None:
                raise ValueError("max_per_identity is required when the store has no max_entries")
            default = max(1, max_entries // DEFAULT_QUOTA_SHARE)
        self.default = self._valid(default, "max_per_identity")
        self._fixed: Optional[int] = None
        self._table: Optional[Dict[str, int]] = None
        self._call: Optional[Callable[[str], Optional[int]]] = None
        if max_per_identity is None:
            self._fixed = self.default
        elif isinstance(max_per_identity, Mapping):
            self._table = {}
            for identity, quota in max_per_identity.items():
                if type(identity) is not str:
                    raise ValueError("max_per_identity: mapping keys must be replay identities (str)")
                self._table[identity] = self._valid(quota, f"max_per_identity[{identity!r}]")
        elif callable(max_per_identity) and not isinstance(max_per_identity, int):
            self._call = max_per_identity
        else:
            self._fixed = self._valid(max_per_identity, "max_per_identity")

    def _valid(self, quota: Any, name: str) -> int:
        quota = _positive_int(quota, name)
        if self.max_entries is not None and quota >= self.max_entries:
            raise ValueError(
                f"{name} = {quota} lets one sender fill the whole table of {self.max_entries}: "
                f"give less than max_entries"
            )
        return int(quota)

    @property
    def fixed(self) -> Optional[int]:
        """The quota when it is the same for every sender, else None."""
        return self._fixed

    def __call__(self, identity: str) -> int:
        if self._fixed is not None:
            return self._fixed
        if self._table is not None:
            return self._table.get(identity, self.default)
        assert self._call is not None
        quota = self._call(identity)
        return self.default if quota is None else self._valid(quota, f"max_per_identity({identity!r})")

    def __repr__(self) -> str:
        what = self._fixed if self._fixed is not None else (self._table if self._table is not None else self._call)
        return f"Quotas({what!r}, default={self.default})"


class AdmitPlan(NamedTuple):
    """What one admit writes, decided before the store is touched (``SharedGuardSettings.plan``)."""

    group: str  # the quota group (``quota_group``)
    limit: int  # what the group may hold when this admit counts (``group_limit``)
    hold: int  # held until (µs) once accepted: expires_at + skew
    until: int  # held until (µs) as recorded: the lease end of a pending pair, else ``hold``


class SharedGuardSettings:
    """The settings and the admit plan the shared guards (SQLite, Redis) have in common."""

    def __init__(self, quotas: Quotas, skew: float, lease: float) -> None:
        self.quotas = quotas
        self.skew_us = int(skew * 1_000_000)
        self.lease_us = lease_micros(lease)

    def plan(
        self, identity: Any, job_id: Any, digest: Any, expires_at_us: Any, now_us: Any, host: Optional[str],
        first_use: bool, confirmed: bool,
    ) -> AdmitPlan:
        """The arguments checked (``check_admit``) and what the admit records."""
        check_admit(identity, job_id, digest, expires_at_us, now_us)
        group = quota_group(identity, host)
        hold = expires_at_us + self.skew_us
        until = hold if confirmed else min(now_us + self.lease_us, hold)
        return AdmitPlan(group, group_limit(self.quotas(group), first_use), hold, until)


_heappush = heapq.heappush


def _ceil_seconds(us: int) -> int:
    return max(1, -(-us // 1_000_000))


_Entry = Tuple[int, Optional[bytes], Optional[int], str]
"""A held pair: (held until µs, digest, held-until once confirmed or None when accepted, quota group)."""


class MemoryReplayGuard:
    """An in-process ``ReplayGuard`` holding at most ``max_entries`` pairs, a quota per sender's group.

    A pair is pending for ``lease`` seconds after ``admit`` (default
    ``DEFAULT_LEASE_SECONDS``), accepted until ``expires_at + skew`` after
    ``confirm`` (see ``ReplayGuard``).  Pending and accepted pairs both count
    against quotas.  When a sender's quota group (``quota_group``: its
    declaration host, else its identity) already holds its quota of live
    pairs (``max_per_identity``: an int, a mapping group -> int, or a
    callable; default ``max_entries // 4``, 25,000 of the default 100,000; a
    quota that lets one group fill the table is refused with ``ValueError``),
    its next new offer is refused with ``Busy`` (429, ``retry_after`` = seconds
    until the group's next pair expires): one sender's flood is answered 429
    to that sender's group only, however many keys it mints under its host.
    A ``first_use`` admit gets ``quota // NEW_IDENTITY_SHARE`` of its group.
    When the whole table is full, expired pairs are evicted first (oldest
    expiry first); if none has expired the new offer is refused with ``Busy``
    rather than forgetting a live pair, which would re-open a replay window.

    Sizing: a group sustains ``quota / (max_lifetime + skew)`` offers per
    second (each pair lives that long), and at most ``max_entries // quota``
    groups (4 by default) can hold the table full at once: size ``quota`` for
    the busiest honest host and ``max_entries`` for the hosts that may flood
    together (``docs/deploying.md``).

    Sizes are bounded too: ``job_id`` at most ``MAX_JOB_ID_LENGTH`` (256)
    characters (longer: ``InvalidMessage``, 400) and the identity at most
    ``MAX_IDENTITY_LENGTH`` (256; longer: ``ValueError``), both ``str``
    (``TypeError``), ``digest`` None or at most 64 bytes, ``host`` at most
    ``MAX_HOST_LENGTH``, so the table holds at most ``max_entries`` pairs of
    bounded size.

    Thread-safe: one lock around each call (a few hundred nanoseconds, see
    ``bench/test_state.py``).  It lives in one process: a receiver with
    several worker processes or hosts needs ``SQLiteReplayGuard`` or
    ``RedisReplayGuard`` (``docs/deploying.md``).
    """

    blocking = False

    __slots__ = ("max_entries", "quotas", "skew_us", "lease_us", "_fixed_quota", "_groups", "_group_size", "_table")

    def __init__(
        self, *, max_entries: int = 100_000, max_per_identity: Quota = None, skew: float = DEFAULT_SKEW_SECONDS,
        lease: float = DEFAULT_LEASE_SECONDS,
    ) -> None:
        self.max_entries = _positive_int(max_entries, "max_entries")
        if max_entries < 2:
            raise ValueError("max_entries must be at least 2 (one sender must not fill the table)")
        self.quotas = Quotas(max_per_identity, max_entries)
        self._fixed_quota = self.quotas.fixed
        self.skew_us = int(skew * 1_000_000)
        self.lease_us = lease_micros(lease)
        self._group_size: Dict[str, int] = {}  # quota group -> pairs it holds
        self._groups: Dict[str, Dict[str, int]] = {}  # quota group -> identity -> pairs of it in the group
        # The pairs (identity -> job_id -> entry), their expiry heap (until µs, identity, job_id; with
        # stale entries), the groups refused until their earliest expiry, the count and the lock, in
        # the core (the twin chosen now), whose `admit_new` takes the usual admit in one call.
        self._table: Any = _core.impl.ReplayTable(int(max_entries), self._fixed_quota, self.skew_us, self.lease_us)

    @property
    def max_per_identity(self) -> int:
        """The default quota (what a group not named by ``max_per_identity`` may hold)."""
        return self.quotas.default

    def __len__(self) -> int:
        return self._table.size  # type: ignore[no-any-return]

    def _drop(self, identity: str, job_id: str, held: Dict[str, _Entry], entry: _Entry) -> None:
        """Forget one pair (caller holds the lock)."""
        table = self._table
        del held[job_id]
        table.size -= 1
        if not held:
            del table.jobs[identity]
            table.full_until.pop(identity, None)
        group = entry[3]
        if group != identity:  # a host's group: its own counts (an identity's group is its table of pairs)
            counts = self._groups[group]
            if counts[identity] > 1:
                counts[identity] -= 1
            else:
                del counts[identity]
            left = self._group_size[group] - 1
            if left:
                self._group_size[group] = left
            else:
                del self._group_size[group], self._groups[group]
                table.full_until.pop(group, None)

    def _evict(self, now_us: int) -> None:
        heap, jobs = self._table.heap, self._table.jobs
        while heap and heap[0][0] <= now_us:
            t, identity, job_id = heapq.heappop(heap)
            held = jobs.get(identity)
            if held is not None:
                entry = held.get(job_id)
                if entry is not None and entry[0] == t:
                    self._drop(identity, job_id, held, entry)

    def _held(self, group: str, hosted: bool) -> List[int]:
        """The held-until of each pair ``group`` holds (caller holds the lock)."""
        jobs = self._table.jobs
        if not hosted:  # an identity's own group: every pair of that identity (conservative if it also has hosts)
            return [e[0] for e in jobs.get(group, {}).values()]
        return [e[0] for identity in self._groups.get(group, {}) for e in jobs[identity].values() if e[3] == group]

    def _group_busy(self, group: str, limit: int, now_us: int, hosted: bool) -> Optional[Busy]:
        """``Busy`` when ``group`` holds ``limit`` live pairs, else None (after evicting expired ones)."""
        full_until = self._table.full_until
        known = full_until.get(group)
        if known is None or known <= now_us:
            self._evict(now_us)
            held = self._held(group, hosted)
            if len(held) < limit:
                full_until.pop(group, None)
                return None
            # Every pair left is live and this group can add none, so the answer holds
            # until its earliest expiry: computed once per expiry, not once per request.
            known = min(held)
            full_until[group] = known
        return group_busy(limit, known, now_us)

    def admit(
        self, identity: str, job_id: str, *, expires_at_us: int, now_us: int, digest: Optional[bytes] = None,
        host: Optional[str] = None, first_use: bool = False, confirmed: bool = False,
    ) -> None:
        """Record ``(identity, job_id)`` as pending (or accepted when ``confirmed``); see ``ReplayGuard``."""
        table = self._table
        if host is None and not first_use and table.admit_new(identity, job_id, expires_at_us, now_us, digest, confirmed):
            return  # the usual admit, in the core: a new pair of a sender in its own group, with room
        if not (  # check_admit's own first test, inline; it raises the precise error otherwise
            type(identity) is str and type(job_id) is str and len(job_id) <= MAX_JOB_ID_LENGTH
            and len(identity) <= MAX_IDENTITY_LENGTH and type(expires_at_us) is int and type(now_us) is int
            and (digest is None or (type(digest) is bytes and len(digest) <= MAX_DIGEST_LENGTH))
        ):
            check_admit(identity, job_id, digest, expires_at_us, now_us)
        group = identity if host is None else quota_group(identity, host)
        lock = table.lock
        lock.acquire()  # (acquire/release: a third of the cost of `with` here)
        try:
            jobs = table.jobs
            held_by = jobs.get(identity)
            entry = held_by.get(job_id) if held_by is not None else None
            if entry is not None:
                if entry[0] > now_us:
                    if entry[2] is not None:
                        raise in_progress(job_id, entry[0], now_us)
                    raise replayed(job_id, digest is not None and entry[1] is not None and entry[1] == digest)
                assert held_by is not None
                self._drop(identity, job_id, held_by, entry)  # expired: admitted anew below, in its group now
                held_by = jobs.get(identity)
            held = (len(held_by) if held_by is not None else 0) if host is None else self._group_size.get(group, 0)
            if held:
                quota = self._fixed_quota
                if quota is None:
                    quota = self.quotas(group)
                limit = group_limit(quota, True) if first_use else quota
                if held >= limit:
                    busy = self._group_busy(group, limit, now_us, host is not None)
                    if busy is not None:
                        raise busy
            if table.size >= self.max_entries:
                self._evict(now_us)
                if table.size >= self.max_entries:
                    raise table_full(table.heap[0][0], now_us)
            if host is not None:
                counts = self._groups.get(group)
                if counts is None:
                    counts = self._groups[group] = {}
                counts[identity] = counts.get(identity, 0) + 1
                self._group_size[group] = self._group_size.get(group, 0) + 1
            hold = expires_at_us + self.skew_us
            until = hold if confirmed else min(now_us + self.lease_us, hold)
            table.record(identity, job_id, until, digest, None if confirmed else hold, group)
            if len(table.heap) > 2 * self.max_entries:  # stale entries of re-admitted and confirmed pairs
                self._compact(now_us)
        finally:
            lock.release()

    def _compact(self, now_us: int) -> None:
        self._evict(now_us)
        table = self._table
        if len(table.heap) > 2 * self.max_entries:
            table.heap = [(e[0], i, j) for i, held_map in table.jobs.items() for j, e in held_map.items()]
            heapq.heapify(table.heap)

    def confirm(self, identity: str, job_id: str, *, now_us: int, host: Optional[str] = None) -> bool:
        """Make the pair accepted until ``expires_at + skew``; True when it is accepted now (see ``ReplayGuard``)."""
        check_admit(identity, job_id, None, 0, now_us)
        table = self._table
        with table.lock:
            held_by = table.jobs.get(identity)
            entry = held_by.get(job_id) if held_by is not None else None
            if entry is None:
                return False
            if entry[2] is not None:
                assert held_by is not None
                held_by[job_id] = (entry[2], entry[1], None, entry[3])
                _heappush(table.heap, (entry[2], identity, job_id))
                if len(table.heap) > 2 * self.max_entries:
                    self._compact(now_us)
            return True

    def release(self, identity: str, job_id: str, *, now_us: int, host: Optional[str] = None) -> bool:
        """Drop the pair if it is pending; True when one was dropped (see ``ReplayGuard``)."""
        check_admit(identity, job_id, None, 0, now_us)
        table = self._table
        with table.lock:
            held_by = table.jobs.get(identity)
            entry = held_by.get(job_id) if held_by is not None else None
            if entry is None or entry[2] is None:
                return False
            assert held_by is not None
            self._drop(identity, job_id, held_by, entry)
            table.full_until.pop(entry[3], None)  # room again before the group's earliest expiry
            return True
