"""The replay guard of several worker processes on one host: a SQLite file (stdlib ``sqlite3``).

Each ``admit`` is one ``BEGIN IMMEDIATE`` transaction (the database's single
writer lock, so two processes cannot both find a pair absent and both insert
it), in WAL mode so readers never wait.  The per-sender and whole-table
counts are kept by triggers, so the quota and the full-table refusal cost an
index probe, not a count.  Expired rows are purged as admits go (a bounded
batch every ``PURGE_EVERY`` admits, and all of one sender's when it reaches
its quota).
"""

from __future__ import annotations

import asyncio
import functools
import os
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional

from .._state_sqlite import Commit, Rollback, SQLiteState
from ..errors import Busy, ReplayedMessage
from ._replay import Quota, Quotas, _ceil_seconds, check_admit
from ._rules import DEFAULT_SKEW_SECONDS

__all__ = ["SQLiteReplayGuard", "AsyncSQLiteReplayGuard", "PURGE_EVERY", "PURGE_BATCH"]

PURGE_EVERY = 16
"""Every this many admits (per process), one bounded purge of expired rows runs inside the admit."""
PURGE_BATCH = 64
"""Rows the periodic purge deletes at most: more than ``PURGE_EVERY``, so the purge outruns the inserts."""

# One statement for everything an admit reads: the pair (held until, digest), the sender's and the table's counts.
_LOOKUP = (
    "SELECT (SELECT held_until FROM replay WHERE identity = ?1 AND job_id = ?2),"
    " (SELECT digest FROM replay WHERE identity = ?1 AND job_id = ?2),"
    " (SELECT live FROM replay_senders WHERE identity = ?1), (SELECT live FROM replay_total)"
)
_PURGE = (
    "DELETE FROM replay WHERE (identity, job_id) IN"
    " (SELECT identity, job_id FROM replay WHERE held_until <= ? ORDER BY held_until LIMIT ?)"
)


class SQLiteReplayGuard:
    """A ``ReplayGuard`` in a SQLite file, shared by every thread and process that opens ``path``.

    Same meaning and keywords as ``MemoryReplayGuard`` (``max_entries``,
    ``max_per_identity``, ``skew``): exactly one acceptance per ``(identity,
    job_id)`` until ``expires_at + skew``, the quota per sender and the
    full-table refusal (``Busy``, 429), under any interleaving of threads and
    processes on this host.

    - ``path``: the database file, created with mode 0600 (SQLite gives its
      ``-wal`` and ``-shm`` files the same mode); it must be on a local file
      system (``ValueError`` for NFS, SMB and other network file systems, whose
      locks WAL cannot rely on, unless ``allow_network_filesystem=True``).  The
      file may hold ``SQLiteKeyPins`` too.
    - ``synchronous``: ``"NORMAL"`` (default) makes each admit durable against a
      crash of the process (``kill -9``) at once, and against a power cut or OS
      crash at the next WAL checkpoint: a power cut may forget the last
      accepted ids, which then replay until they expire.  ``"FULL"`` fsyncs
      every admit, surviving a power cut too, at the cost of an fsync per admit
      (0.13-0.28 ms at best, milliseconds typically, on the development
      machine's disk, against 15-28 µs: ``docs/deploying.md``).
    - ``busy_timeout``: seconds an admit waits for another process's
      transaction; past it ``StateUnavailable`` (503).

    ``admit`` raises ``ReplayedMessage`` (409, ``.same_body``), ``Busy`` (429),
    ``InvalidMessage`` (400) for an oversize job id, and ``StateUnavailable``
    (503, ``retry_after``) for any store failure: locked past the busy timeout,
    a corrupt file, a read-only file or directory, a full disk.  Construction
    raises ``StateUnavailable`` when the file cannot be opened or created, or
    is not an ajpcore state file of this schema version.
    """

    blocking = True

    def __init__(
        self,
        path: "os.PathLike[str] | str",
        *,
        max_entries: int = 1_000_000,
        max_per_identity: Quota = None,
        skew: float = DEFAULT_SKEW_SECONDS,
        synchronous: str = "NORMAL",
        busy_timeout: float = 5.0,
        allow_network_filesystem: bool = False,
    ) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 2:
            raise ValueError("max_entries must be an int >= 2")
        self.max_entries = max_entries
        self.quotas = Quotas(max_per_identity, max_entries)
        self.skew_us = int(skew * 1_000_000)
        self._state = SQLiteState(
            path, synchronous=synchronous, busy_timeout=busy_timeout, allow_network_filesystem=allow_network_filesystem
        )
        self.path = self._state.path
        self._admits = 0

    @property
    def synchronous(self) -> str:
        return self._state.synchronous

    def __repr__(self) -> str:
        return f"SQLiteReplayGuard({self.path!r}, synchronous={self._state.synchronous!r})"

    def __len__(self) -> int:
        """Pairs stored (live or expired but not purged yet)."""
        return int(self._state.read(lambda c: c.execute("SELECT live FROM replay_total").fetchone()[0]))

    def close(self) -> None:
        """Close this process's connection; the next ``admit`` opens a new one."""
        self._state.close()

    def admit(
        self, identity: str, job_id: str, *, expires_at_us: int, now_us: int, digest: Optional[bytes] = None
    ) -> None:
        """Record ``(identity, job_id)`` until ``expires_at_us + skew``; see ``ReplayGuard`` and the class docstring."""
        check_admit(identity, job_id, digest, expires_at_us, now_us)
        quota = self.quotas(identity)
        held_until = expires_at_us + self.skew_us
        self._admits += 1
        purge = self._admits % PURGE_EVERY == 0
        self._state.transaction(
            functools.partial(self._admit, identity, job_id, held_until, now_us, digest, quota, purge)
        )

    def _admit(
        self, identity: str, job_id: str, held_until: int, now_us: int, digest: Optional[bytes], quota: int,
        purge: bool, conn: sqlite3.Connection,
    ) -> None:
        held, stored, live, total = conn.execute(_LOOKUP, (identity, job_id)).fetchone()
        if held is not None:
            if held > now_us:
                same = digest is not None and stored is not None and bytes(stored) == digest
                raise Rollback(ReplayedMessage(f"job `{job_id}` from this sender was already received", same_body=same))
            conn.execute("DELETE FROM replay WHERE identity = ? AND job_id = ?", (identity, job_id))
        if purge:
            conn.execute(_PURGE, (now_us, PURGE_BATCH))
        if held is None and (live is not None and live >= quota or total >= self.max_entries):
            live = conn.execute("SELECT live FROM replay_senders WHERE identity = ?", (identity,)).fetchone()
            if live is not None and live[0] >= quota:
                conn.execute("DELETE FROM replay WHERE identity = ? AND held_until <= ?", (identity, now_us))
                live = conn.execute("SELECT live FROM replay_senders WHERE identity = ?", (identity,)).fetchone()
                if live is not None and live[0] >= quota:
                    first = conn.execute("SELECT min(held_until) FROM replay WHERE identity = ?", (identity,)).fetchone()
                    busy = Busy(f"this sender holds {quota} unexpired offers; retry later",
                                retry_after=_ceil_seconds(first[0] - now_us))
                    raise Commit(busy)  # keep the purge
            total = conn.execute("SELECT live FROM replay_total").fetchone()[0]
            if total >= self.max_entries:
                conn.execute("DELETE FROM replay WHERE held_until <= ?", (now_us,))
                total = conn.execute("SELECT live FROM replay_total").fetchone()[0]
                if total >= self.max_entries:
                    first = conn.execute("SELECT min(held_until) FROM replay").fetchone()
                    busy = Busy("replay guard is full of unexpired offers; retry later",
                                retry_after=_ceil_seconds(first[0] - now_us))
                    raise Commit(busy)
        conn.execute("INSERT INTO replay VALUES (?, ?, ?, ?)", (identity, job_id, held_until, digest))


class AsyncSQLiteReplayGuard:
    """The asyncio twin of ``SQLiteReplayGuard``: ``await guard.admit(...)`` runs the admit in a worker thread.

    Same arguments and outcomes as ``SQLiteReplayGuard`` (whose keywords the
    constructor takes); the event loop never waits on the file.  One thread
    per guard: SQLite has one writer at a time anyway, so more threads would
    only queue on its lock.  ``close()`` stops the thread and the connection.
    """

    blocking = False

    def __init__(self, path: "os.PathLike[str] | str", **options: Any) -> None:
        self.sync = SQLiteReplayGuard(path, **options)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ajpcore-sqlite-guard")

    def __repr__(self) -> str:
        return f"AsyncSQLiteReplayGuard({self.sync.path!r})"

    async def admit(
        self, identity: str, job_id: str, *, expires_at_us: int, now_us: int, digest: Optional[bytes] = None
    ) -> None:
        """``SQLiteReplayGuard.admit`` in the guard's worker thread; same arguments, same errors."""
        call = functools.partial(
            self.sync.admit, identity, job_id, expires_at_us=expires_at_us, now_us=now_us, digest=digest
        )
        await asyncio.get_running_loop().run_in_executor(self._executor, call)

    def close(self) -> None:
        """Wait for running admits, then stop the worker thread and close the connection."""
        self._executor.shutdown(wait=True)
        self.sync.close()
