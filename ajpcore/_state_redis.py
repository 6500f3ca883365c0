"""What the Redis (and Valkey) stores share: key names, the eviction-policy check, error translation, scripts.

``RedisStore`` is the one base of the Redis replay guards and key pins, sync
and asyncio: every call goes through ``call`` / ``call_async``, which run the
eviction-policy check when it is due and turn every server or connection
failure into ``StateUnavailable``; ``run_script`` / ``run_script_async`` send
a Lua script by its SHA-1 and load it again on ``NOSCRIPT``.

ajpcore never imports redis-py itself at module level: the caller builds the
client (``redis.Redis`` / ``redis.asyncio.Redis``, from the optional extra
``ajpcore[redis]``) and passes it in; the exceptions are looked up when the
first error has to be classified.
"""

from __future__ import annotations

import hashlib
import time
import warnings
from typing import Any, Awaitable, Callable, Optional, Sequence, Tuple, TypeVar

from .errors import StateUnavailable

__all__ = ["check_prefix", "hash_tag", "RedisPolicy", "RedisStore", "Script", "unavailable", "DEFAULT_PREFIX"]

T = TypeVar("T")

DEFAULT_PREFIX = "ajp:"
"""The default key prefix: change it to share one server between receivers that must not share state."""


def check_prefix(prefix: Any) -> str:
    """``prefix`` if it is a str without ``{`` or ``}`` (which would move the hash tag), else ``ValueError``."""
    if type(prefix) is not str or "{" in prefix or "}" in prefix or len(prefix) > 128:
        raise ValueError("`prefix` must be a str of at most 128 characters without `{` or `}`")
    return prefix


def hash_tag(name: str) -> str:
    """``{name}``, the Redis Cluster hash tag that keeps every key of one identity (or pin) in one slot.

    A name holding a brace would end the tag early: such names (and long ones) are tagged by their SHA-256.
    """
    if "{" in name or "}" in name or len(name) > 128 or not name:
        name = "h" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return "{" + name + "}"


def _redis_errors() -> Tuple[type, ...]:
    try:
        from redis.exceptions import RedisError
    except ImportError:  # pragma: no cover - the client came from somewhere
        return (OSError,)
    return (RedisError, OSError)


def is_store_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a failure of the Redis server or the connection to it (never our own refusal)."""
    return isinstance(exc, _redis_errors()) and not isinstance(exc, StateUnavailable)


def is_no_script(exc: BaseException) -> bool:
    """The server does not know the script (``NOSCRIPT``): load it and send it again."""
    try:
        from redis.exceptions import NoScriptError
    except ImportError:  # pragma: no cover
        return False
    return isinstance(exc, NoScriptError)


def unavailable(exc: BaseException, what: str) -> StateUnavailable:
    """The ``StateUnavailable`` that answers ``exc`` (connection refused, timeout, OOM, read-only replica...)."""
    return StateUnavailable(f"Redis {what}: {type(exc).__name__}: {exc}")


class RedisPolicy:
    """The ``maxmemory-policy`` check: eviction would drop replay records or pins and let replays through.

    ``verdict(answer)`` reads a ``CONFIG GET maxmemory-policy`` answer:
    ``noeviction`` passes; anything else raises ``StateUnavailable``.  When the
    server refuses ``CONFIG`` (managed services often do), a ``RuntimeWarning``
    says so once and the store runs on the operator's word
    (``docs/deploying.md``).  Checked on first use and again every ``interval``
    seconds, so a policy changed at run time is noticed.
    """

    def __init__(self, require_noeviction: bool, interval: float = 60.0) -> None:
        self.require = bool(require_noeviction)
        self.interval = float(interval)
        self._checked_at: Optional[float] = None
        self._unreadable = False

    def due(self) -> bool:
        if not self.require or self._unreadable:
            return False
        return self._checked_at is None or time.monotonic() - self._checked_at >= self.interval

    def verdict(self, answer: Any) -> None:
        policy = None
        if isinstance(answer, dict):
            for key, value in answer.items():
                key = key.decode() if isinstance(key, bytes) else key
                if key == "maxmemory-policy":
                    policy = value.decode() if isinstance(value, bytes) else value
        if policy is None:
            self.unreadable("CONFIG GET returned no maxmemory-policy")
            return
        if policy != "noeviction":
            raise StateUnavailable(
                f"Redis maxmemory-policy is `{policy}`: eviction would forget accepted offers and pins, "
                "so this store refuses to answer; set `maxmemory-policy noeviction`", retry_after=60
            )
        self._checked_at = time.monotonic()

    def unreadable(self, why: str) -> None:
        self._unreadable = True
        warnings.warn(
            f"cannot read the Redis maxmemory-policy ({why}): make sure it is `noeviction`, or evicted "
            "replay records let replays through (pass require_noeviction=False to silence this)",
            RuntimeWarning,
            stacklevel=4,
        )

    def check(self, client: Any) -> None:
        """Read the policy with ``client`` (sync) and give the verdict."""
        try:
            answer = client.config_get("maxmemory-policy")
        except Exception as exc:
            self.refused(exc)
            return
        self.verdict(answer)

    async def check_async(self, client: Any) -> None:
        """``check`` with a ``redis.asyncio`` client."""
        try:
            answer = await client.config_get("maxmemory-policy")
        except Exception as exc:
            self.refused(exc)
            return
        self.verdict(answer)

    def refused(self, exc: Exception) -> None:
        """A failed ``CONFIG GET``: the server's refusal makes the policy unreadable; anything else is raised."""
        if not self.is_refusal(exc):
            raise exc
        self.unreadable(str(exc))

    @staticmethod
    def is_refusal(exc: BaseException) -> bool:
        """A ``CONFIG GET`` the server refuses (unknown/renamed command, no permission), not an outage."""
        try:
            from redis.exceptions import ResponseError
        except ImportError:  # pragma: no cover
            return False
        return isinstance(exc, ResponseError)


class Script:
    """A Lua script sent by its SHA-1 (``EVALSHA``), loaded again when the server answers ``NOSCRIPT``.

    Sent with ``execute_command`` rather than redis-py's ``Script`` object, which
    costs a few microseconds more per call for the same recovery; ``NOSCRIPT``
    comes after a ``SCRIPT FLUSH``, a restart or a failover.
    """

    __slots__ = ("text", "sha")

    def __init__(self, text: str) -> None:
        self.text = text
        self.sha = hashlib.sha1(text.encode("utf-8")).hexdigest().encode("ascii")  # sent as it is


class RedisStore:
    """The client, prefix and policy of a Redis store, and the one way its calls reach the server.

    ``what`` (class attribute) names the store in ``StateUnavailable`` messages.
    ``min_replicas`` (default 0) and ``replica_timeout`` (seconds, default 1.0):
    after each write the store sends ``WAIT min_replicas timeout`` and answers
    ``StateUnavailable`` when fewer replicas acknowledged it, so a write the
    store reports done survives a failover to one of those replicas.  Without it
    Redis replication is asynchronous: a failover may lose the last writes
    (``docs/deploying.md``).
    """

    what = "state"

    def __init__(
        self, client: Any, *, prefix: str = DEFAULT_PREFIX, require_noeviction: bool = True, min_replicas: int = 0,
        replica_timeout: float = 1.0,
    ) -> None:
        self.client = client
        self.prefix = check_prefix(prefix)
        self.policy = RedisPolicy(require_noeviction)
        if isinstance(min_replicas, bool) or not isinstance(min_replicas, int) or min_replicas < 0:
            raise ValueError("min_replicas must be an int >= 0")
        if isinstance(replica_timeout, bool) or not isinstance(replica_timeout, (int, float)) or not replica_timeout > 0:
            raise ValueError("replica_timeout must be a number of seconds > 0")
        self.min_replicas = min_replicas
        self.replica_timeout = float(replica_timeout)

    def _acked(self, acked: Any) -> None:
        if int(acked) < self.min_replicas:
            raise StateUnavailable(
                f"Redis {self.what}: {acked} of {self.min_replicas} replicas acknowledged the write within "
                f"{self.replica_timeout} s"
            )

    def call(self, fn: Callable[[], T]) -> T:
        """``fn()`` after the policy check when due; a server or connection failure is ``StateUnavailable``."""
        try:
            if self.policy.due():
                self.policy.check(self.client)
            return fn()
        except Exception as exc:
            if is_store_error(exc):
                raise unavailable(exc, self.what) from None
            raise

    async def call_async(self, fn: Callable[[], Awaitable[T]]) -> T:
        """``call`` for a ``redis.asyncio`` client: ``await fn()``."""
        try:
            if self.policy.due():
                await self.policy.check_async(self.client)
            return await fn()
        except Exception as exc:
            if is_store_error(exc):
                raise unavailable(exc, self.what) from None
            raise

    def _with_wait(self, script: Script, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        """A pipeline (one connection, one round trip) of the script and a ``WAIT`` for ``min_replicas``."""
        pipe = self.client.pipeline(transaction=False)
        pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
        pipe.execute_command("WAIT", self.min_replicas, max(1, int(self.replica_timeout * 1000)))
        return pipe

    def _script_answer(self, result: Any, wrote: Optional[Callable[[Any], bool]]) -> Any:
        """The script's answer; with ``min_replicas``, out of the pipeline's, ``WAIT``'s count checked if it wrote."""
        if not self.min_replicas or wrote is None:
            return result
        if wrote(result[0]):
            self._acked(result[1])
        return result[0]

    def run_script(
        self, script: Script, keys: Sequence[Any], args: Sequence[Any], wrote: Optional[Callable[[Any], bool]] = None
    ) -> Any:
        """``EVALSHA`` of ``script`` (loaded again on ``NOSCRIPT``), through ``call``.

        With ``min_replicas``, a ``WAIT`` follows on the same connection (one pipeline, one round
        trip), and when ``wrote(answer)`` says the script wrote, fewer acknowledgements than
        ``min_replicas`` are ``StateUnavailable``.
        """
        waiting = self.min_replicas > 0 and wrote is not None

        def once() -> Any:
            if not waiting:
                return self.client.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
            return self._with_wait(script, keys, args).execute()

        def send() -> Any:
            try:
                return once()
            except Exception as exc:
                if not is_no_script(exc):
                    raise
            self.client.script_load(script.text)
            return once()

        return self._script_answer(self.call(send), wrote)

    async def run_script_async(
        self, script: Script, keys: Sequence[Any], args: Sequence[Any], wrote: Optional[Callable[[Any], bool]] = None
    ) -> Any:
        """``run_script`` for a ``redis.asyncio`` client."""
        waiting = self.min_replicas > 0 and wrote is not None

        async def once() -> Any:
            if not waiting:
                return await self.client.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
            return await self._with_wait(script, keys, args).execute()

        async def send() -> Any:
            try:
                return await once()
            except Exception as exc:
                if not is_no_script(exc):
                    raise
            await self.client.script_load(script.text)
            return await once()

        return self._script_answer(await self.call_async(send), wrote)
