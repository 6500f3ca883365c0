"""Key pins in Redis or Valkey (``RedisKeyPins``) and its asyncio twin: every change is a compare-and-set.

One key per provenance id, ``<prefix>pin:{<id>}``, holding the record as
canonical JSON, with no expiry.  A change reads the record, decides, and
writes with a Lua compare-and-set (the write happens only if the key still
holds what was read); a lost race re-reads and decides again, so two workers
racing the first use of one id with two keys pin exactly one, and two
rotations racing from one pin cannot both win.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

from .. import _core
from .._state_redis import RedisStore, Script, hash_tag
from ..errors import StateUnavailable
from .pins import T, _AsyncPinStore, _Decision, _PinStore, _Record, stored_record

__all__ = ["RedisKeyPins", "AsyncRedisKeyPins", "CAS_SCRIPT", "MAX_CAS_ATTEMPTS"]

CAS_SCRIPT = """
local current = redis.call('GET', KEYS[1])
if (ARGV[1] == '' and not current) or current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2])
  return 1
end
return 0
"""
"""SET KEYS[1] to ARGV[2] if it holds ARGV[1] ('' = absent); 1 when written, 0 when another writer was first."""

_CAS = Script(CAS_SCRIPT)


def _written(answer: Any) -> bool:
    """Whether the compare-and-set wrote (it answers 1): the write ``min_replicas`` must acknowledge."""
    return bool(answer == 1)

MAX_CAS_ATTEMPTS = 16
"""Lost compare-and-set races a change retries before ``StateUnavailable`` (each loss is another writer's win)."""


class _RedisPinsBase(RedisStore):
    what = "key pins"

    def key(self, provenance_id: str) -> str:
        """The key holding ``provenance_id``'s pin."""
        return f"{self.prefix}pin:{hash_tag(provenance_id)}"

    def _cas_args(self, provenance_id: str, raw: Any, new: _Record) -> Tuple[Any, Any]:
        """``(keys, args)`` of the compare-and-set from the record read (``raw``) to ``new``."""
        return [self.key(provenance_id)], [raw if raw is not None else b"", _core.impl.canonicalize(new)]


def _lost_races(provenance_id: str) -> StateUnavailable:
    return StateUnavailable(f"Redis key pins: {MAX_CAS_ATTEMPTS} writers in a row changed the pin of `{provenance_id}`")


class RedisKeyPins(_RedisPinsBase, _PinStore):
    """A ``KeyPins`` in Redis or Valkey, shared by every process and host using the same server and prefix.

    ``client``: a ``redis.Redis`` built by the caller; ``prefix`` as
    ``RedisReplayGuard``; ``require_noeviction`` as there (pins have no
    expiry, but ``allkeys-*`` policies evict them too, and a forgotten pin is
    a first use again).  Pins must survive a restart: run the server with
    ``appendonly yes``.  ``min_replicas`` and ``replica_timeout`` as
    ``RedisReplayGuard``: each pin written waits for that many replicas.  Every
    server or connection failure raises ``StateUnavailable`` (503), as does a
    stored record that is not exactly a pin.
    """

    blocking = True

    def __repr__(self) -> str:
        return f"RedisKeyPins(prefix={self.prefix!r})"

    def _read_raw(self, provenance_id: str) -> Tuple[Optional[_Record], Any]:
        raw = self.call(lambda: self.client.get(self.key(provenance_id)))
        return stored_record(provenance_id, raw, "Redis key pins"), raw

    def _read(self, provenance_id: str) -> Optional[_Record]:
        return self._read_raw(provenance_id)[0]

    def _update(self, provenance_id: str, decide: Callable[[Optional[_Record]], _Decision[T]]) -> T:
        for _ in range(MAX_CAS_ATTEMPTS):
            record, raw = self._read_raw(provenance_id)
            new, answer = decide(record)
            if new is None or self.run_script(_CAS, *self._cas_args(provenance_id, raw, new), _written) == 1:
                return answer
        raise _lost_races(provenance_id)


class AsyncRedisKeyPins(_RedisPinsBase, _AsyncPinStore):
    """The asyncio twin of ``RedisKeyPins`` over a ``redis.asyncio.Redis`` client: the same methods as coroutines."""

    blocking = False

    def __repr__(self) -> str:
        return f"AsyncRedisKeyPins(prefix={self.prefix!r})"

    async def _read_raw(self, provenance_id: str) -> Tuple[Optional[_Record], Any]:
        raw = await self.call_async(lambda: self.client.get(self.key(provenance_id)))
        return stored_record(provenance_id, raw, "Redis key pins"), raw

    async def _read(self, provenance_id: str) -> Optional[_Record]:
        return (await self._read_raw(provenance_id))[0]

    async def _update(self, provenance_id: str, decide: Callable[[Optional[_Record]], _Decision[T]]) -> T:
        for _ in range(MAX_CAS_ATTEMPTS):
            record, raw = await self._read_raw(provenance_id)
            new, answer = decide(record)
            if new is None or await self.run_script_async(_CAS, *self._cas_args(provenance_id, raw, new), _written) == 1:
                return answer
        raise _lost_races(provenance_id)
