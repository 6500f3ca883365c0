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
from .._state_redis import DEFAULT_PREFIX, RedisPolicy, check_prefix, hash_tag, is_store_error, unavailable
from ..errors import DecodeError, StateUnavailable
from .notices import NoticeVerification
from .pins import (
    T,
    _Decision,
    _PinStore,
    _Record,
    check_arguments,
    decide_check,
    decide_rotation,
    parse_record,
    rotation_id,
)

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

MAX_CAS_ATTEMPTS = 16
"""Lost compare-and-set races a change retries before ``StateUnavailable`` (each loss is another writer's win)."""


def _decode_record(provenance_id: str, raw: Any) -> Optional[_Record]:
    if raw is None:
        return None

    def corrupt(why: str) -> StateUnavailable:
        return StateUnavailable(f"Redis key pins: the stored pin for {provenance_id!r} is corrupt: {why}")

    try:
        doc = _core.impl.decode(raw)
    except DecodeError as exc:
        raise corrupt(f"not strict JSON: {exc}") from None
    return parse_record(provenance_id, doc, corrupt)


class _RedisPinsBase:
    def __init__(self, client: Any, *, prefix: str = DEFAULT_PREFIX, require_noeviction: bool = True) -> None:
        self.client = client
        self.prefix = check_prefix(prefix)
        self.policy = RedisPolicy(require_noeviction)
        self._cas = client.register_script(CAS_SCRIPT)

    def key(self, provenance_id: str) -> str:
        """The key holding ``provenance_id``'s pin."""
        return f"{self.prefix}pin:{hash_tag(provenance_id)}"


def _lost_races(provenance_id: str) -> StateUnavailable:
    return StateUnavailable(f"Redis key pins: {MAX_CAS_ATTEMPTS} writers in a row changed the pin of `{provenance_id}`")


class RedisKeyPins(_RedisPinsBase, _PinStore):
    """A ``KeyPins`` in Redis or Valkey, shared by every process and host using the same server and prefix.

    ``client``: a ``redis.Redis`` built by the caller; ``prefix`` as
    ``RedisReplayGuard``; ``require_noeviction`` as there (pins have no
    expiry, but ``allkeys-*`` policies evict them too, and a forgotten pin is
    a first use again).  Pins must survive a restart: run the server with
    ``appendonly yes``.  Every server or connection failure raises
    ``StateUnavailable`` (503), as does a stored record that is not exactly a pin.
    """

    blocking = True

    def __repr__(self) -> str:
        return f"RedisKeyPins(prefix={self.prefix!r})"

    def _call(self, fn: Callable[[], T]) -> T:
        try:
            if self.policy.due():
                try:
                    self.policy.verdict(self.client.config_get("maxmemory-policy"))
                except Exception as exc:
                    if not RedisPolicy.is_refusal(exc):
                        raise
                    self.policy.unreadable(str(exc))
            return fn()
        except Exception as exc:
            if is_store_error(exc):
                raise unavailable(exc, "key pins") from None
            raise

    def _read_raw(self, provenance_id: str) -> Tuple[Optional[_Record], Any]:
        raw = self._call(lambda: self.client.get(self.key(provenance_id)))
        return _decode_record(provenance_id, raw), raw

    def _read(self, provenance_id: str) -> Optional[_Record]:
        return self._read_raw(provenance_id)[0]

    def _update(self, provenance_id: str, decide: Callable[[Optional[_Record]], _Decision[T]]) -> T:
        key = self.key(provenance_id)
        for _ in range(MAX_CAS_ATTEMPTS):
            record, raw = self._read_raw(provenance_id)
            new, answer = decide(record)
            if new is None:
                return answer
            text = _core.impl.canonicalize(new)
            if self._call(lambda: self._cas(keys=[key], args=[raw if raw is not None else b"", text])) == 1:
                return answer
        raise _lost_races(provenance_id)


class AsyncRedisKeyPins(_RedisPinsBase):
    """The asyncio twin of ``RedisKeyPins`` over a ``redis.asyncio.Redis`` client: the same methods as coroutines."""

    blocking = False

    def __repr__(self) -> str:
        return f"AsyncRedisKeyPins(prefix={self.prefix!r})"

    async def _read_raw(self, provenance_id: str) -> Tuple[Optional[_Record], Any]:
        try:
            await self._check_policy()
            raw = await self.client.get(self.key(provenance_id))
        except Exception as exc:
            if is_store_error(exc):
                raise unavailable(exc, "key pins") from None
            raise
        return _decode_record(provenance_id, raw), raw

    async def _check_policy(self) -> None:
        if not self.policy.due():
            return
        try:
            answer = await self.client.config_get("maxmemory-policy")
        except Exception as exc:
            if not RedisPolicy.is_refusal(exc):
                raise
            self.policy.unreadable(str(exc))
            return
        self.policy.verdict(answer)

    async def _update(self, provenance_id: str, decide: Callable[[Optional[_Record]], _Decision[T]]) -> T:
        key = self.key(provenance_id)
        for _ in range(MAX_CAS_ATTEMPTS):
            record, raw = await self._read_raw(provenance_id)
            new, answer = decide(record)
            if new is None:
                return answer
            try:
                won = await self._cas(keys=[key], args=[raw if raw is not None else b"", _core.impl.canonicalize(new)])
            except Exception as exc:
                if is_store_error(exc):
                    raise unavailable(exc, "key pins") from None
                raise
            if won == 1:
                return answer
        raise _lost_races(provenance_id)

    async def pinned(self, provenance_id: str) -> Optional[str]:
        """The fingerprint pinned for ``provenance_id``, or None."""
        if not isinstance(provenance_id, str) or not provenance_id:
            return None
        record = (await self._read_raw(provenance_id))[0]
        return None if record is None else str(record["fingerprint"])

    async def history(self, provenance_id: str) -> Tuple[Any, ...]:
        """The rotation notices accepted for ``provenance_id``, oldest first."""
        if not isinstance(provenance_id, str) or not provenance_id:
            return ()
        record = (await self._read_raw(provenance_id))[0]
        return () if record is None else tuple(record["rotations"])

    async def check(self, provenance_id: str, fingerprint: str, public_key: Any = None) -> None:
        """``RedisKeyPins.check``, awaited."""
        key_text = check_arguments(provenance_id, fingerprint, public_key)
        await self._update(provenance_id, lambda record: decide_check(provenance_id, record, fingerprint, key_text))

    async def accept_rotation(self, notice: Any, *, public_key: Any = None) -> NoticeVerification:
        """``RedisKeyPins.accept_rotation``, awaited."""
        provenance_id = rotation_id(notice)
        return await self._update(
            provenance_id, lambda record: decide_rotation(provenance_id, record, notice, public_key)
        )
