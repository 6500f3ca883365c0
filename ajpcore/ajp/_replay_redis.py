"""The replay guard of several hosts: Redis or Valkey through redis-py (``RedisReplayGuard``) and ``redis.asyncio``.

Every call (``admit``, ``confirm``, ``release``) is one round trip: ``EVALSHA``
of its Lua script (``ADMIT_SCRIPT``, ``CONFIRM_SCRIPT``, ``RELEASE_SCRIPT``,
loaded again on ``NOSCRIPT``) that does the whole step atomically, since Redis
runs a script alone.  The admit looks the pair up, checks the quota of the
sender's group (purging the group's expired pairs when it is reached) and
records the pair, pending or accepted: four Redis commands for a new pair
(``HSETNX`` looks it up and writes it), its values in one MessagePack argument.
A quota group's keys share one hash tag (``{group}``), so each call touches
one slot and runs on Redis Cluster.

Keys (``P`` the prefix, ``G`` the group's hash tag): ``P replay: G :live``, a
sorted set of pairs scored by held-until (µs on the receiver's clock, which
``now_us`` also is: the lease end of a pending pair), and ``P replay: G
:info``, a hash pair -> the digest in hex (``""`` without one), or
``p<hold>|<digest>`` for a pending pair (``hold``: the held-until its confirm
gives).  A pair is the member ``<len(identity)>:<identity><job_id>``.  Both
keys are made together, each with a sentinel (the member ``""`` scored
``+inf``, the field ``""``), and expire together (one relative ``PEXPIRE``
each, so clock offsets between hosts and server do not matter) once the
group's last pair has, so an idle group leaves nothing.  Because the two keys
always exist together and no script empties one, a script meeting a slot
being migrated (``redis-cli --cluster reshard``) runs where both keys are, or
is redirected (``ASK``) where both went; ``TRYAGAIN`` comes only for a group
whose keys are split between two ``MIGRATE`` calls or made during the move,
and redis-py retries it.  (Earlier layouts, never read by this one: ``:held``
and ``:digest`` per identity; ``:pairs``, ``:digests`` and ``:pending`` per
group, which could leave ``:pending`` missing and answer ``TRYAGAIN`` for the
whole of a slot's migration.)
"""

from __future__ import annotations

import struct
from typing import Any, Dict, List, Optional, Tuple

from .._state_redis import DEFAULT_PREFIX, RedisStore, Script, hash_tag, unavailable
from ._replay import (
    DEFAULT_LEASE_SECONDS,
    Quota,
    Quotas,
    SharedGuardSettings,
    check_admit,
    group_busy,
    in_progress,
    quota_group,
    replayed,
)
from ._rules import DEFAULT_SKEW_SECONDS

__all__ = [
    "RedisReplayGuard", "AsyncRedisReplayGuard", "ADMIT_SCRIPT", "CONFIRM_SCRIPT", "RELEASE_SCRIPT", "DEFAULT_REDIS_QUOTA",
]

DEFAULT_REDIS_QUOTA = 25_000
"""Live pairs one quota group may hold without ``max_per_identity`` (the memory guard's default for 100,000 entries)."""

ADMIT_SCRIPT = """
-- KEYS: [1] live, [2] info (the group's two keys).  ARGV[1]: six MessagePack values (``_packed``):
-- the keys' TTL (ms), the group's limit and now (µs) as integers, then as strings the pair's
-- held-until (µs, decimal: ZADD reads it as it is), what info holds for the pair, and the pair.
-- One argument instead of six, since each costs the client ~4,500 instructions to pack and the
-- server ~1,300 to unpack; and cmsgpack (C) hands the integers over as numbers, with no tonumber
-- (strtod) in the script.  (µs since 1970 stay below 2^53, so they are exact as Lua numbers.)
local ttl, limit, now, held, stored, member = cmsgpack.unpack(ARGV[1])
local live, info = KEYS[1], KEYS[2]
-- HSETNX both looks the pair up and writes it: 1 for a pair the group does not hold, the common
-- admit, which then costs four commands (HSETNX, ZCARD, ZADD, PTTL)
local new = redis.call('HSETNX', info, member, stored) == 1
if not new then
  -- held already: answered while its hold lasts; admitted again once it ran out (a lease whose
  -- host died, or an accepted pair past its expiry not yet purged), as a new pair would be
  local score = redis.call('ZSCORE', live, member)
  if score and tonumber(score) > now then
    local was = redis.call('HGET', info, member)
    if string.byte(was, 1) == 112 then return {3, score} end  -- 'p': pending, its lease end
    return {1, was}
  end
end
local n = redis.call('ZCARD', live)  -- the group's pairs and the sentinel; 0 for a new group
if n > limit then
  -- expired pairs are dropped only here: the set never holds more than the quota, and each
  -- expired pair is read once, so a group flooding past its quota costs O(log n) per refusal
  local old = redis.call('ZRANGEBYSCORE', live, '-inf', now)
  for i = 1, #old, 1000 do
    local chunk = {unpack(old, i, math.min(i + 999, #old))}
    redis.call('ZREM', live, unpack(chunk))
    redis.call('HDEL', info, unpack(chunk))
  end
  if n - #old > limit then
    if new then redis.call('HDEL', info, member) end  -- refused: the HSETNX above is undone
    return {2, redis.call('ZRANGE', live, 0, 0, 'WITHSCORES')[2]}
  end
end
if n == 0 then  -- a new group: both keys get their sentinel (live's '' scored +inf, info's '')
  redis.call('ZADD', live, held, member, '+inf', '')
  redis.call('HSET', info, member, stored, '', '')
else
  redis.call('ZADD', live, held, member)
  if not new then redis.call('HSET', info, member, stored) end  -- re-admitted: its new record
end
-- both keys outlive the group's last pair (a relative expiry: host and server clocks may differ),
-- extended with a minute to spare, so most admits find the expiry already long enough
if redis.call('PTTL', live) < ttl then
  redis.call('PEXPIRE', live, ttl + 60000)
  redis.call('PEXPIRE', info, ttl + 60000)
end
return 0
"""
"""The admit, run atomically by the server: 0 admitted, {1, digest hex or ''} accepted already,
{2, first expiry} busy, {3, lease end} pending."""

CONFIRM_SCRIPT = """
-- KEYS: [1] live, [2] info; ARGV: [1] the pair.  A pending pair ('p<hold>|<digest>') is accepted
-- until its hold; answers 1 when the pair is accepted now, 0 when the group does not hold it
local live, info, member = KEYS[1], KEYS[2], ARGV[1]
local stored = redis.call('HGET', info, member)
if not stored then return 0 end
if string.byte(stored, 1) == 112 then
  local bar = string.find(stored, '|', 2, true)
  redis.call('ZADD', live, string.sub(stored, 2, bar - 1), member)
  redis.call('HSET', info, member, string.sub(stored, bar + 1))
end
return 1
"""
"""The confirm of a pending pair, run atomically by the server."""

RELEASE_SCRIPT = """
-- KEYS: [1] live, [2] info; ARGV: [1] the pair.  Drops the pair if it is pending (answers 1),
-- never an accepted one (answers 0)
local live, info, member = KEYS[1], KEYS[2], ARGV[1]
local stored = redis.call('HGET', info, member)
if stored and string.byte(stored, 1) == 112 then
  redis.call('ZREM', live, member)
  redis.call('HDEL', info, member)
  return 1
end
return 0
"""
"""The release of a pending pair, run atomically by the server."""

_KEYS_KEPT = 1024
"""How many quota groups' encoded keys a guard keeps (``_encoded_keys``)."""

_ADMIT = Script(ADMIT_SCRIPT)
_CONFIRM = Script(CONFIRM_SCRIPT)
_RELEASE = Script(RELEASE_SCRIPT)

_NUMBERS = struct.Struct(">BqBqBqBI")  # MessagePack: three int 64 (0xd3), then the header of a str 32 (0xdb)
_STR32 = struct.Struct(">BI")  # the header of a MessagePack str 32: 0xdb, then the length of the UTF-8 bytes
_INT64 = (-(2**63), 2**63 - 1)
_MAX_TTL_MS = 2**53  # exact as a Lua number, and far below the int64 ms PEXPIRE takes with the server's clock added


def _packed(ttl_ms: int, limit: int, now_us: int, held: int, stored: str, member: str) -> bytes:
    """``ADMIT_SCRIPT``'s one argument, MessagePack: three integers, then three strings."""
    held_text, data, pair = b"%d" % held, stored.encode(), member.encode()
    try:
        head = _NUMBERS.pack(0xD3, ttl_ms, 0xD3, limit, 0xD3, now_us, 0xDB, len(held_text))
    except struct.error:  # a quota or a clock beyond int64: as good as unbounded, so bounded
        ttl_ms, limit, now_us = (min(max(number, _INT64[0]), _INT64[1]) for number in (ttl_ms, limit, now_us))
        head = _NUMBERS.pack(0xD3, ttl_ms, 0xD3, limit, 0xD3, now_us, 0xDB, len(held_text))
    return b"".join((head, held_text, _STR32.pack(0xDB, len(data)), data, _STR32.pack(0xDB, len(pair)), pair))


def _admitted(answer: Any) -> bool:
    """Whether an admit wrote the pair (it answers 0)."""
    return bool(answer == 0)


def _settled(answer: Any) -> bool:
    """Whether a confirm or release changed the pair (it answers 1)."""
    return bool(answer == 1)


class _RedisGuardBase(RedisStore, SharedGuardSettings):
    what = "replay guard"

    def __init__(
        self,
        client: Any,
        *,
        prefix: str = DEFAULT_PREFIX,
        max_per_identity: Quota = None,
        skew: float = DEFAULT_SKEW_SECONDS,
        lease: float = DEFAULT_LEASE_SECONDS,
        require_noeviction: bool = True,
        min_replicas: int = 0,
        replica_timeout: float = 1.0,
    ) -> None:
        RedisStore.__init__(
            self, client, prefix=prefix, require_noeviction=require_noeviction, min_replicas=min_replicas,
            replica_timeout=replica_timeout,
        )
        SharedGuardSettings.__init__(self, Quotas(max_per_identity, None, default=DEFAULT_REDIS_QUOTA), skew, lease)
        self._sent_keys: Dict[str, Tuple[bytes, bytes]] = {}

    def keys(self, group: str) -> List[str]:
        """The two keys holding a quota group's pairs (one hash slot); ``group`` as ``quota_group`` names it."""
        base = f"{self.prefix}replay:{hash_tag(group)}"
        return [base + ":live", base + ":info"]

    @staticmethod
    def member(identity: str, job_id: str) -> str:
        """The member naming ``(identity, job_id)`` in its group's keys (the length makes it unambiguous)."""
        return f"{len(identity)}:{identity}{job_id}"

    def _admit_call(
        self, identity: str, job_id: str, expires_at_us: Any, now_us: Any, digest: Optional[bytes],
        host: Optional[str], first_use: bool, confirmed: bool,
    ) -> Tuple[Tuple[bytes, bytes], List[bytes], int]:
        """The admit's keys and arguments (``ADMIT_SCRIPT``), and the group's limit a refusal names.

        They go as bytes (the keys UTF-8, the values packed by ``_packed``), which redis-py sends as they are.
        """
        plan = self.plan(identity, job_id, digest, expires_at_us, now_us, host, first_use, confirmed)
        # the digest travels as hex, so a client with decode_responses=True reads it back intact
        stored = digest.hex() if digest else ""
        if not confirmed:
            stored = f"p{plan.hold}|{stored}"
        # the keys outlive the pair's hold by a second (at most ~285,000 years: what PEXPIRE takes)
        ttl_ms = min(-(-(plan.hold - now_us) // 1000) + 1000, _MAX_TTL_MS)
        packed = _packed(ttl_ms, plan.limit, now_us, plan.until, stored, self.member(identity, job_id))
        return self._encoded_keys(plan.group), [packed], plan.limit

    def _encoded_keys(self, group: str) -> Tuple[bytes, bytes]:
        """``keys(group)`` as sent (UTF-8), kept for the last groups seen: a busy group's admits do not
        build them again; emptied when ``_KEYS_KEPT`` groups are kept, so a flood of groups cannot grow it."""
        keys = self._sent_keys.get(group)
        if keys is None:
            if len(self._sent_keys) >= _KEYS_KEPT:
                self._sent_keys.clear()
            live, info = self.keys(group)
            keys = self._sent_keys[group] = (live.encode(), info.encode())
        return keys

    def _pair_call(
        self, identity: str, job_id: str, now_us: Any, host: Optional[str]
    ) -> Tuple[Tuple[bytes, bytes], List[bytes]]:
        """The keys and the one argument of a confirm or release."""
        check_admit(identity, job_id, None, 0, now_us)
        return self._encoded_keys(quota_group(identity, host)), [self.member(identity, job_id).encode()]

    def _answer(self, answer: Any, limit: int, job_id: str, now_us: int, digest: Optional[bytes]) -> None:
        """Nothing for an admitted pair; the refusal ``ADMIT_SCRIPT`` answered, raised."""
        if answer == 0:
            return
        if not isinstance(answer, list) or not answer or answer[0] not in (1, 2, 3):
            raise unavailable(ValueError(f"unexpected script answer {answer!r}"), self.what)
        if answer[0] == 1:
            stored = answer[1]
            if isinstance(stored, bytes):
                stored = stored.decode("ascii", "replace")
            raise replayed(job_id, digest is not None and digest != b"" and stored == digest.hex())
        first = int(float(answer[1]))
        if answer[0] == 3:
            raise in_progress(job_id, first, now_us)
        raise group_busy(limit, first, now_us)


class RedisReplayGuard(_RedisGuardBase):
    """A ``ReplayGuard`` in Redis or Valkey, shared by every process and host using the same server and prefix.

    ``client``: a ``redis.Redis`` (or ``redis.RedisCluster``) built by the
    caller; its timeouts (``socket_timeout``, ``socket_connect_timeout``) bound
    how long a call can wait.  ``prefix`` (default ``"ajp:"``, no braces)
    separates receivers sharing a server.  ``max_per_identity``: the quota per
    group (an int, a mapping or a callable, as ``MemoryReplayGuard``; default
    25,000).  ``lease``: as ``MemoryReplayGuard``.  ``max_entries`` does not
    apply: there is no table bound of ours, the server's ``maxmemory`` is, and
    with ``noeviction`` a full server answers out-of-memory, which is a
    refusal (``StateUnavailable``).

    ``min_replicas`` (default 0) and ``replica_timeout`` (seconds, default 1):
    each write (an admit that recorded the pair, a confirm, a release) is
    followed by ``WAIT`` on the same connection, and fewer acknowledgements
    than ``min_replicas`` answer ``StateUnavailable``: a pair the guard reported
    recorded survives a failover to one of those replicas.  A pending admit
    refused this way stays pending on the primary until its lease ends (its
    retry is never "duplicate"); use ``run=`` on the Receiver with it.

    ``require_noeviction`` (default True): on first use and every 60 s the
    guard reads ``maxmemory-policy`` and answers ``StateUnavailable`` while it
    is not ``noeviction`` (eviction silently forgets accepted offers); a server
    that refuses ``CONFIG GET`` gets one ``RuntimeWarning``.

    ``admit`` raises ``ReplayedMessage`` (409, ``.same_body``),
    ``JobInProgress`` (503, a pending pair), ``Busy`` (429), ``InvalidMessage``
    (400) for an oversize job id, and ``StateUnavailable`` (503) for every
    server or connection failure: refused, timed out, out of memory,
    read-only replica, loading.  A timeout may come after the server ran the
    admit: the pair is then pending, and its lease ends it.  Durability across
    a server restart needs persistence (``appendonly yes``; ``appendfsync
    always`` to lose no acknowledged admit, ``everysec`` loses up to a
    second): see ``docs/deploying.md``.
    """

    blocking = True

    def admit(
        self, identity: str, job_id: str, *, expires_at_us: int, now_us: int, digest: Optional[bytes] = None,
        host: Optional[str] = None, first_use: bool = False, confirmed: bool = False,
    ) -> None:
        """Record ``(identity, job_id)`` as pending (accepted when ``confirmed``): one round trip; see ``ReplayGuard``."""
        keys, args, limit = self._admit_call(identity, job_id, expires_at_us, now_us, digest, host, first_use, confirmed)
        self._answer(self.run_script(_ADMIT, keys, args, _admitted), limit, job_id, now_us, digest)

    def confirm(self, identity: str, job_id: str, *, now_us: int, host: Optional[str] = None) -> bool:
        """Make the pair accepted until ``expires_at + skew``; True when it is accepted now (see ``ReplayGuard``).

        ``host``: the one given to ``admit`` (the pair lives in its group's keys).
        """
        keys, args = self._pair_call(identity, job_id, now_us, host)
        return bool(self.run_script(_CONFIRM, keys, args, _settled) == 1)

    def release(self, identity: str, job_id: str, *, now_us: int, host: Optional[str] = None) -> bool:
        """Drop the pair if it is pending; True when one was dropped (see ``ReplayGuard``)."""
        keys, args = self._pair_call(identity, job_id, now_us, host)
        return bool(self.run_script(_RELEASE, keys, args, _settled) == 1)


class AsyncRedisReplayGuard(_RedisGuardBase):
    """The asyncio twin of ``RedisReplayGuard`` over a ``redis.asyncio.Redis`` client: ``await guard.admit(...)``.

    Same keywords, keys, script and outcomes as ``RedisReplayGuard``; one round
    trip per call, and the event loop never blocks on the server.  An admit
    whose await is cancelled after the script was sent may still have run:
    the pair is then pending until its lease ends.
    """

    blocking = False

    async def admit(
        self, identity: str, job_id: str, *, expires_at_us: int, now_us: int, digest: Optional[bytes] = None,
        host: Optional[str] = None, first_use: bool = False, confirmed: bool = False,
    ) -> None:
        """Record ``(identity, job_id)``; see ``RedisReplayGuard.admit``."""
        keys, args, limit = self._admit_call(identity, job_id, expires_at_us, now_us, digest, host, first_use, confirmed)
        self._answer(await self.run_script_async(_ADMIT, keys, args, _admitted), limit, job_id, now_us, digest)

    async def confirm(self, identity: str, job_id: str, *, now_us: int, host: Optional[str] = None) -> bool:
        """``RedisReplayGuard.confirm``, awaited."""
        keys, args = self._pair_call(identity, job_id, now_us, host)
        return bool(await self.run_script_async(_CONFIRM, keys, args, _settled) == 1)

    async def release(self, identity: str, job_id: str, *, now_us: int, host: Optional[str] = None) -> bool:
        """``RedisReplayGuard.release``, awaited."""
        keys, args = self._pair_call(identity, job_id, now_us, host)
        return bool(await self.run_script_async(_RELEASE, keys, args, _settled) == 1)
