"""The replay guard of several hosts: Redis or Valkey through redis-py (``RedisReplayGuard``) and ``redis.asyncio``.

One admit is one round trip: ``EVALSHA`` of a Lua script (loaded on first use;
after a ``SCRIPT FLUSH``, a restart or a failover the server answers
``NOSCRIPT`` and the guard loads it again and retries) that looks the pair up,
checks the sender's quota (purging its expired pairs when it is reached) and
records the pair, atomically, since Redis runs a script alone.  The command
is sent with ``execute_command`` rather than redis-py's ``Script`` object,
which costs a few microseconds more per call for the same NOSCRIPT recovery.  A sender's keys share one hash tag (``{identity}``), so the
script touches one slot and runs on Redis Cluster.

Keys (``P`` the prefix, ``T`` the identity's hash tag): ``P replay: T :held``, a
sorted set of job ids scored by held-until (µs on the receiver's clock, which
``now_us`` also is), and ``P replay: T :digest``, a hash job id -> digest.  Both
expire (relative ``PEXPIRE``, so clock offsets between hosts and server do not
matter) once the sender's last pair has, so an idle sender leaves nothing.
"""

from __future__ import annotations

import hashlib
from typing import Any, List, Optional

from .._state_redis import (
    DEFAULT_PREFIX,
    RedisPolicy,
    check_prefix,
    hash_tag,
    is_no_script,
    is_store_error,
    unavailable,
)
from ..errors import Busy, ReplayedMessage
from ._replay import (
    Quota,
    Quotas,
    _ceil_seconds,
    check_admit,
)
from ._rules import DEFAULT_SKEW_SECONDS

__all__ = ["RedisReplayGuard", "AsyncRedisReplayGuard", "ADMIT_SCRIPT", "DEFAULT_REDIS_QUOTA"]

DEFAULT_REDIS_QUOTA = 25_000
"""Live pairs one sender may hold without ``max_per_identity`` (the memory guard's default for 100,000 entries)."""

ADMIT_SCRIPT = """
-- times travel as decimal strings (ARGV): Lua would print a number of 16 digits as 1.759e+15
local held, digests = KEYS[1], KEYS[2]
local job, hold, now, quota = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local score = redis.call('ZSCORE', held, job)
if score and tonumber(score) > now then
  return {1, redis.call('HGET', digests, job)}
end
if not score and redis.call('ZCARD', held) >= quota then
  -- expired pairs are dropped only here: the set never holds more than the quota, and each
  -- expired pair is read once, so a sender flooding past its quota costs O(log n) per refusal
  local old = redis.call('ZRANGEBYSCORE', held, '-inf', ARGV[3])
  for i = 1, #old, 1000 do
    local chunk = {unpack(old, i, math.min(i + 999, #old))}
    redis.call('ZREM', held, unpack(chunk))
    redis.call('HDEL', digests, unpack(chunk))
  end
  if redis.call('ZCARD', held) >= quota then
    return {2, redis.call('ZRANGE', held, 0, 0, 'WITHSCORES')[2]}
  end
end
redis.call('ZADD', held, ARGV[2], job)
if ARGV[5] ~= '' then redis.call('HSET', digests, job, ARGV[5]) elseif score then redis.call('HDEL', digests, job) end
-- both keys outlive the sender's last pair (a relative expiry: host and server clocks may differ);
-- extended with a minute to spare, so most admits find the expiry already long enough
local ttl = math.ceil((hold - now) / 1000) + 1000
if redis.call('PTTL', held) < ttl then
  redis.call('PEXPIRE', held, ttl + 60000)
  redis.call('PEXPIRE', digests, ttl + 60000)
end
return 0
"""
"""The admit, run atomically by the server. Answers 0 admitted, {1, digest|nil} replay, {2, first expiry} busy."""


class _RedisGuardBase:
    def __init__(
        self,
        client: Any,
        *,
        prefix: str = DEFAULT_PREFIX,
        max_per_identity: Quota = None,
        skew: float = DEFAULT_SKEW_SECONDS,
        require_noeviction: bool = True,
    ) -> None:
        self.client = client
        self.prefix = check_prefix(prefix)
        self.quotas = Quotas(max_per_identity, None, default=DEFAULT_REDIS_QUOTA)
        self.skew_us = int(skew * 1_000_000)
        self.policy = RedisPolicy(require_noeviction)
        self._sha = hashlib.sha1(ADMIT_SCRIPT.encode("utf-8")).hexdigest()

    def keys(self, identity: str) -> List[str]:
        """The two keys holding ``identity``'s pairs (one hash slot)."""
        base = f"{self.prefix}replay:{hash_tag(identity)}"
        return [base + ":held", base + ":digest"]

    def _args(
        self, identity: str, job_id: str, expires_at_us: Any, now_us: Any, digest: Optional[bytes]
    ) -> List[Any]:
        check_admit(identity, job_id, digest, expires_at_us, now_us)
        held_until = expires_at_us + self.skew_us
        # the digest travels as hex, so a client with decode_responses=True reads it back intact
        return [job_id, str(held_until), str(now_us), self.quotas(identity), digest.hex() if digest else ""]

    def _answer(self, answer: Any, identity: str, job_id: str, now_us: int, digest: Optional[bytes]) -> None:
        if answer == 0:
            return
        if not isinstance(answer, list) or not answer or answer[0] not in (1, 2):
            raise unavailable(ValueError(f"unexpected script answer {answer!r}"), "replay guard")
        if answer[0] == 1:
            stored = answer[1] if len(answer) > 1 else None
            if isinstance(stored, bytes):
                stored = stored.decode("ascii", "replace")
            same = digest is not None and isinstance(stored, str) and stored == digest.hex()
            raise ReplayedMessage(f"job `{job_id}` from this sender was already received", same_body=same)
        first = int(float(answer[1]))
        quota = self.quotas(identity)
        raise Busy(f"this sender holds {quota} unexpired offers; retry later", retry_after=_ceil_seconds(first - now_us))


class RedisReplayGuard(_RedisGuardBase):
    """A ``ReplayGuard`` in Redis or Valkey, shared by every process and host using the same server and prefix.

    ``client``: a ``redis.Redis`` (or ``redis.RedisCluster``) built by the
    caller; its timeouts (``socket_timeout``, ``socket_connect_timeout``) bound
    how long an admit can wait.  ``prefix`` (default ``"ajp:"``, no braces)
    separates receivers sharing a server.  ``max_per_identity``: the quota per
    sender (an int, a mapping or a callable, as ``MemoryReplayGuard``; default
    25,000).  ``max_entries`` does not apply: there is no table bound of ours,
    the server's ``maxmemory`` is, and with ``noeviction`` a full server
    answers out-of-memory, which is a refusal (``StateUnavailable``).

    ``require_noeviction`` (default True): on first use and every 60 s the
    guard reads ``maxmemory-policy`` and answers ``StateUnavailable`` while it
    is not ``noeviction`` (eviction silently forgets accepted offers); a server
    that refuses ``CONFIG GET`` gets one ``RuntimeWarning``.

    ``admit`` raises ``ReplayedMessage`` (409, ``.same_body``), ``Busy`` (429),
    ``InvalidMessage`` (400) for an oversize job id, and ``StateUnavailable``
    (503) for every server or connection failure: refused, timed out, out of
    memory, read-only replica, loading.  Durability across a server restart
    needs persistence (``appendonly yes``; ``appendfsync always`` to lose no
    acknowledged admit, ``everysec`` loses up to a second): see
    ``docs/deploying.md``.
    """

    blocking = True

    def admit(
        self, identity: str, job_id: str, *, expires_at_us: int, now_us: int, digest: Optional[bytes] = None
    ) -> None:
        """Record ``(identity, job_id)`` until ``expires_at_us + skew``: one round trip; see the class docstring."""
        args = self._args(identity, job_id, expires_at_us, now_us, digest)
        try:
            if self.policy.due():
                self._check_policy()
            keys = self.keys(identity)
            try:
                answer = self.client.execute_command("EVALSHA", self._sha, 2, *keys, *args)
            except Exception as exc:
                if not is_no_script(exc):
                    raise
                self.client.script_load(ADMIT_SCRIPT)  # a new server, a failover, SCRIPT FLUSH
                answer = self.client.execute_command("EVALSHA", self._sha, 2, *keys, *args)
        except Exception as exc:
            if is_store_error(exc):
                raise unavailable(exc, "replay guard") from None
            raise
        self._answer(answer, identity, job_id, now_us, digest)

    def _check_policy(self) -> None:
        try:
            answer = self.client.config_get("maxmemory-policy")
        except Exception as exc:
            if not RedisPolicy.is_refusal(exc):
                raise
            self.policy.unreadable(str(exc))
            return
        self.policy.verdict(answer)


class AsyncRedisReplayGuard(_RedisGuardBase):
    """The asyncio twin of ``RedisReplayGuard`` over a ``redis.asyncio.Redis`` client: ``await guard.admit(...)``.

    Same keywords, keys, script and outcomes as ``RedisReplayGuard``; one round
    trip per admit, and the event loop never blocks on the server.
    """

    blocking = False

    async def admit(
        self, identity: str, job_id: str, *, expires_at_us: int, now_us: int, digest: Optional[bytes] = None
    ) -> None:
        """Record ``(identity, job_id)`` until ``expires_at_us + skew``; see ``RedisReplayGuard.admit``."""
        args = self._args(identity, job_id, expires_at_us, now_us, digest)
        try:
            if self.policy.due():
                await self._check_policy()
            keys = self.keys(identity)
            try:
                answer = await self.client.execute_command("EVALSHA", self._sha, 2, *keys, *args)
            except Exception as exc:
                if not is_no_script(exc):
                    raise
                await self.client.script_load(ADMIT_SCRIPT)
                answer = await self.client.execute_command("EVALSHA", self._sha, 2, *keys, *args)
        except Exception as exc:
            if is_store_error(exc):
                raise unavailable(exc, "replay guard") from None
            raise
        self._answer(answer, identity, job_id, now_us, digest)

    async def _check_policy(self) -> None:
        try:
            answer = await self.client.config_get("maxmemory-policy")
        except Exception as exc:
            if not RedisPolicy.is_refusal(exc):
                raise
            self.policy.unreadable(str(exc))
            return
        self.policy.verdict(answer)
