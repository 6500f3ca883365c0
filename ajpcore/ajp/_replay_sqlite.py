"""The replay guard of several worker processes on one host: a SQLite file (stdlib ``sqlite3``).

Each ``admit`` is one transaction (the database's single writer lock, so two
processes cannot both find a pair absent and both insert it), in WAL mode so
readers never wait: a new pair under its limits is one conditional ``INSERT``
run on its own (a statement is a transaction by itself), anything else one
``BEGIN IMMEDIATE`` transaction, as are ``confirm`` and ``release``.
A pending row's ``held_until`` is its lease end and its ``hold`` what a
confirm makes it (NULL once accepted).  The per-group and whole-table counts
are kept by triggers, so the quota and the full-table refusal cost an index
probe, not a count.  Expired rows are purged as admits go (a bounded batch
every ``PURGE_EVERY`` admits, and all of one group's when it reaches its
quota).
"""

from __future__ import annotations

import asyncio
import functools
import os
import sqlite3
from typing import Any, Optional, Tuple

from .._state_sqlite import Commit, Job, Rollback, SQLiteState, WorkerThread
from ..errors import StateUnavailable
from ._replay import (
    DEFAULT_LEASE_SECONDS,
    Quota,
    Quotas,
    SharedGuardSettings,
    check_admit,
    group_busy,
    in_progress,
    replayed,
    table_full,
)
from ._rules import DEFAULT_SKEW_SECONDS

__all__ = ["SQLiteReplayGuard", "AsyncSQLiteReplayGuard", "PURGE_EVERY", "PURGE_BATCH"]

PURGE_EVERY = 16
"""Every this many admits (per process), one bounded purge of expired rows runs inside the admit."""
PURGE_BATCH = 64
"""Rows the periodic purge deletes at most: more than ``PURGE_EVERY``, so the purge outruns the inserts."""

# One statement for everything an admit reads: the pair (held until, digest, hold), its group's and the table's counts.
# Plain ``?`` placeholders, each bound once: numbered ones (``?1``) bound from a sequence warn on CPython 3.12.0-3.12.3.
_LOOKUP = (
    "SELECT (SELECT held_until FROM replay WHERE identity = ? AND job_id = ?),"
    " (SELECT digest FROM replay WHERE identity = ? AND job_id = ?),"
    " (SELECT hold FROM replay WHERE identity = ? AND job_id = ?),"
    " (SELECT live FROM replay_groups WHERE grp = ?), (SELECT live FROM replay_total)"
)
# The common admit in one statement: a new pair, its group under the quota and the table under its bound;
# inserts nothing otherwise (the pair held, expired, or a limit reached), and the full admit runs.
_INSERT_NEW = (
    "INSERT INTO replay SELECT ?, ?, ?, ?, ?, ?"
    " WHERE coalesce((SELECT live FROM replay_groups WHERE grp = ?), 0) < ? AND (SELECT live FROM replay_total) < ?"
    " ON CONFLICT DO NOTHING"
)
_PURGE = (
    "DELETE FROM replay WHERE (identity, job_id) IN"
    " (SELECT identity, job_id FROM replay WHERE held_until <= ? ORDER BY held_until LIMIT ?)"
)
_CONFIRM = "UPDATE replay SET held_until = hold, hold = NULL WHERE identity = ? AND job_id = ? AND hold IS NOT NULL"
_HELD = "SELECT 1 FROM replay WHERE identity = ? AND job_id = ?"
_RELEASE = "DELETE FROM replay WHERE identity = ? AND job_id = ? AND hold IS NOT NULL"


class SQLiteReplayGuard(SharedGuardSettings):
    """A ``ReplayGuard`` in a SQLite file, shared by every thread and process that opens ``path``.

    Same meaning and keywords as ``MemoryReplayGuard`` (``max_entries``,
    ``max_per_identity``, ``skew``, ``lease``): exactly one admit per
    ``(identity, job_id)`` while it is pending or accepted, the quota per
    group and the full-table refusal (``Busy``, 429), under any interleaving
    of threads and processes on this host.

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

    ``admit`` raises ``ReplayedMessage`` (409, ``.same_body``), ``JobInProgress``
    (503, a pending pair), ``Busy`` (429),
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
        lease: float = DEFAULT_LEASE_SECONDS,
        synchronous: str = "NORMAL",
        busy_timeout: float = 5.0,
        allow_network_filesystem: bool = False,
    ) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 2:
            raise ValueError("max_entries must be an int >= 2")
        self.max_entries = max_entries
        SharedGuardSettings.__init__(self, Quotas(max_per_identity, max_entries), skew, lease)
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
        self, identity: str, job_id: str, *, expires_at_us: int, now_us: int, digest: Optional[bytes] = None,
        host: Optional[str] = None, first_use: bool = False, confirmed: bool = False,
    ) -> None:
        """Record ``(identity, job_id)`` as pending (accepted when ``confirmed``): one transaction; see ``ReplayGuard``."""
        plan = self.plan(identity, job_id, digest, expires_at_us, now_us, host, first_use, confirmed)
        self._admits += 1
        purge = self._admits % PURGE_EVERY == 0
        row = (identity, job_id, plan.until, digest, plan.group, None if confirmed else plan.hold)
        admit = functools.partial(self._admit, row, now_us, plan.limit, purge)
        if purge:
            self._state.transaction(admit)
        else:
            self._state.statement_or_transaction(functools.partial(self._insert_new, row, plan.limit), admit)

    def _insert_new(self, row: Tuple[Any, ...], limit: int, conn: sqlite3.Connection) -> bool:
        """The common admit in one statement (``_INSERT_NEW``, autocommit): True when it inserted the pair.

        An error that changed nothing (a read-only or full store) returns False, so that ``_admit`` still
        answers a replay; an error after the row was written (its commit failed: it may be durable) is
        raised, as a failed ``COMMIT`` is.
        """
        before = conn.total_changes
        try:
            return bool(conn.execute(_INSERT_NEW, (*row, row[4], limit, self.max_entries)).rowcount)
        except sqlite3.OperationalError as exc:
            if conn.in_transaction:  # the failed statement's own transaction: ended before anything else runs
                conn.execute("ROLLBACK")
            if SQLiteState.is_busy(exc) or conn.total_changes != before:
                raise
            return False

    def _admit(self, row: Tuple[Any, ...], now_us: int, limit: int, purge: bool, conn: sqlite3.Connection) -> None:
        identity, job_id, _, digest, group, _ = row
        held, stored, pending, live, total = conn.execute(_LOOKUP, (identity, job_id, identity, job_id, identity, job_id, group)).fetchone()
        if held is not None:
            if held > now_us:
                if pending is not None:
                    raise Rollback(in_progress(job_id, held, now_us))
                raise Rollback(replayed(job_id, digest is not None and stored is not None and bytes(stored) == digest))
            conn.execute("DELETE FROM replay WHERE identity = ? AND job_id = ?", (identity, job_id))
        if purge:
            conn.execute(_PURGE, (now_us, PURGE_BATCH))
        if live is not None and live >= limit or total >= self.max_entries:
            live = conn.execute("SELECT live FROM replay_groups WHERE grp = ?", (group,)).fetchone()
            if live is not None and live[0] >= limit:
                conn.execute("DELETE FROM replay WHERE grp = ? AND held_until <= ?", (group, now_us))
                live = conn.execute("SELECT live FROM replay_groups WHERE grp = ?", (group,)).fetchone()
                if live is not None and live[0] >= limit:
                    first = conn.execute("SELECT min(held_until) FROM replay WHERE grp = ?", (group,)).fetchone()
                    raise Commit(group_busy(limit, first[0], now_us))  # keep the purge
            total = conn.execute("SELECT live FROM replay_total").fetchone()[0]
            if total >= self.max_entries:
                conn.execute("DELETE FROM replay WHERE held_until <= ?", (now_us,))
                total = conn.execute("SELECT live FROM replay_total").fetchone()[0]
                if total >= self.max_entries:
                    first = conn.execute("SELECT min(held_until) FROM replay").fetchone()
                    raise Commit(table_full(first[0], now_us))
        conn.execute("INSERT INTO replay VALUES (?, ?, ?, ?, ?, ?)", row)

    def confirm(
        self, identity: str, job_id: str, *, now_us: int, host: Optional[str] = None,
        connection: Optional[sqlite3.Connection] = None,
    ) -> bool:
        """Make the pair accepted until ``expires_at + skew``; True when it is accepted now (see ``ReplayGuard``).

        ``connection``: the host's own ``sqlite3`` connection to this file,
        inside a transaction the host has begun (``BEGIN IMMEDIATE``): the
        confirm is then one more statement of that transaction, so the host's
        job row and the confirm commit together or not at all.  A connection
        whose main database is another file is refused (``ValueError``): its
        confirm would leave this file's pair pending, to be admitted again when
        its lease ends, while the host's job row commits.  Without it the
        confirm is a transaction of its own.
        """
        check_admit(identity, job_id, None, 0, now_us)
        if connection is not None:
            if not connection.in_transaction:
                raise ValueError("`connection` must be inside the host's transaction (BEGIN IMMEDIATE first)")
            _check_opened_on(connection, self.path)
            return self._confirm(identity, job_id, connection)
        return self._state.transaction(functools.partial(self._confirm, identity, job_id))

    @staticmethod
    def _confirm(identity: str, job_id: str, conn: sqlite3.Connection) -> bool:
        if conn.execute(_CONFIRM, (identity, job_id)).rowcount:
            return True
        return conn.execute(_HELD, (identity, job_id)).fetchone() is not None

    def release(self, identity: str, job_id: str, *, now_us: int, host: Optional[str] = None) -> bool:
        """Drop the pair if it is pending; True when one was dropped (see ``ReplayGuard``)."""
        check_admit(identity, job_id, None, 0, now_us)
        return bool(self._state.transaction(lambda conn: conn.execute(_RELEASE, (identity, job_id)).rowcount))


def _check_opened_on(connection: sqlite3.Connection, path: str) -> None:
    """Refuse (``ValueError``) a host's connection whose main database is not the file ``path``."""
    main = ""
    try:
        main = next((str(row[2]) for row in connection.execute("PRAGMA database_list") if row[1] == "main"), "")
        same = bool(main) and os.path.samefile(main, path)
    except (sqlite3.Error, OSError):
        same = False
    if not same:
        raise ValueError(f"`connection` is open on `{main}`, not on `{path}`, this guard's file")


class AsyncSQLiteReplayGuard:
    """The asyncio twin of ``SQLiteReplayGuard``: ``await guard.admit(...)`` runs the admit in a worker thread.

    Same arguments and outcomes as ``SQLiteReplayGuard`` (whose keywords the
    constructor takes); the event loop never waits on the file (one
    ``WorkerThread`` per guard).  An ``admit`` whose await is cancelled still
    runs to its end in the thread (SQLite cannot be interrupted mid-commit);
    if it recorded the pair, the guard releases it right after, in the same
    thread, so the retry is admitted anew instead of waiting out the lease.
    ``close()`` stops the thread and the connection.
    """

    blocking = False

    def __init__(self, path: "os.PathLike[str] | str", **options: Any) -> None:
        self.sync = SQLiteReplayGuard(path, **options)
        self._thread = WorkerThread("ajpcore-sqlite-guard")

    def __repr__(self) -> str:
        return f"AsyncSQLiteReplayGuard({self.sync.path!r})"

    async def admit(
        self, identity: str, job_id: str, *, expires_at_us: int, now_us: int, digest: Optional[bytes] = None,
        host: Optional[str] = None, first_use: bool = False, confirmed: bool = False,
    ) -> None:
        """``SQLiteReplayGuard.admit`` in the guard's worker thread; same arguments, same errors."""
        admitted = self._thread.start(
            self.sync.admit, identity, job_id, expires_at_us=expires_at_us, now_us=now_us, digest=digest, host=host,
            first_use=first_use, confirmed=confirmed,
        )
        try:
            await admitted.future
        except asyncio.CancelledError:
            if not confirmed:
                self._thread.submit(self._release_if_admitted, admitted, identity, job_id, now_us)
            raise

    def _release_if_admitted(self, admitted: Job, identity: str, job_id: str, now_us: int) -> None:
        # Runs after the admit in the one worker thread: its outcome is known. A failed release leaves
        # the pair pending, which its lease ends.
        if admitted.ran and admitted.error is None:
            try:
                self.sync.release(identity, job_id, now_us=now_us)
            except StateUnavailable:
                pass

    async def confirm(self, identity: str, job_id: str, *, now_us: int, host: Optional[str] = None) -> bool:
        """``SQLiteReplayGuard.confirm`` in the worker thread."""
        return await self._thread.call(self.sync.confirm, identity, job_id, now_us=now_us)

    async def release(self, identity: str, job_id: str, *, now_us: int, host: Optional[str] = None) -> bool:
        """``SQLiteReplayGuard.release`` in the worker thread."""
        return await self._thread.call(self.sync.release, identity, job_id, now_us=now_us)

    def close(self) -> None:
        """Wait for running calls, then stop the worker thread and close the connection."""
        self._thread.close()
        self.sync.close()
