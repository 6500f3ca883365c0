"""One SQLite database file shared by the worker processes of one host: the replay guard and the key pins.

Both stores (``ajp.SQLiteReplayGuard``, ``provenance.SQLiteKeyPins``) open the
file through ``SQLiteState``, which owns what they share: the schema (one
version for the whole file, ``PRAGMA user_version``), WAL mode, the busy
timeout, one transaction per operation (``BEGIN IMMEDIATE``, or one statement on
its own), a connection per
process (a connection is never used across ``fork``), and the translation of
every ``sqlite3`` failure into ``StateUnavailable`` (HTTP 503).

Why not the ``sqlite3`` busy handler (``timeout=``): SQLite's own handler sleeps
1, 2, 5, 10 ... ms between attempts, so two workers that collide once pay a
millisecond on a transaction of tens of microseconds.  Here the connection has
no busy timeout and a collision is retried after 50-200 µs until ``busy_timeout``
has passed; then the store answers ``StateUnavailable``.

The writers of ajpcore queue on a lock of their own first (``flock`` of the
file ``<path>-lock``, beside the database): a worker finding it taken waits by
a cheap non-blocking ``flock`` retried (a few ``sched_yield``, then short sleeps),
never by starting and failing a ``BEGIN IMMEDIATE`` (5.5-5.8 µs of CPU per
failed try against 1.8-2.0 µs for a failed ``flock``, the lock held by another
process: so the eight tries before the first sleep burn ~15 µs, not ~45).  The
kernel drops a dead process's ``flock``, so a worker killed mid-admit blocks no
one; another program's writer (the host's own connection) still meets the busy
retries above.
"""

from __future__ import annotations

import asyncio
import functools
import os
import queue
import random
import sqlite3
import threading
import time
import weakref
from typing import Any, Callable, List, Optional, TypeVar

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: SQLite's own locks only
    fcntl = None  # type: ignore[assignment]

from ._state_file import check_filesystem, check_opened_file, check_schema, check_state_file
from .errors import StateUnavailable

__all__ = [
    "SQLiteState", "Commit", "Rollback", "SCHEMA_VERSION", "SYNCHRONOUS_MODES",
    "_new_lock_after_fork", "WorkerThread", "Job",
]

SCHEMA_VERSION = 2
"""``PRAGMA user_version`` of a state file this version writes and reads (a version 1 file is upgraded on open)."""

WAL_AUTOCHECKPOINT = 10_000
"""WAL pages (1 KiB each) after which a commit checkpoints the WAL back into the database file."""

SYNCHRONOUS_MODES = ("NORMAL", "FULL")
"""``synchronous=`` values: ``NORMAL`` survives any process crash, ``FULL`` also a power cut."""

_REPLAY_SCHEMA = (
    # replay guard: one row per (identity, job_id); `hold` is the held_until a confirm gives a pending
    # row (whose held_until is its lease end), NULL once accepted; the counts are kept by triggers
    "CREATE TABLE replay (identity TEXT NOT NULL, job_id TEXT NOT NULL, held_until INTEGER NOT NULL,"
    " digest BLOB, grp TEXT NOT NULL, hold INTEGER, PRIMARY KEY (identity, job_id)) WITHOUT ROWID",
    "CREATE INDEX replay_expiry ON replay (held_until)",
    "CREATE INDEX replay_group ON replay (grp, held_until)",
    "CREATE TABLE replay_groups (grp TEXT PRIMARY KEY, live INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE TABLE replay_total (id INTEGER PRIMARY KEY CHECK (id = 0), live INTEGER NOT NULL)",
    "INSERT INTO replay_total VALUES (0, 0)",
    "CREATE TRIGGER replay_in AFTER INSERT ON replay BEGIN"
    " INSERT INTO replay_groups VALUES (NEW.grp, 1) ON CONFLICT (grp) DO UPDATE SET live = live + 1;"
    " UPDATE replay_total SET live = live + 1; END",
    "CREATE TRIGGER replay_out AFTER DELETE ON replay BEGIN"
    " UPDATE replay_groups SET live = live - 1 WHERE grp = OLD.grp;"
    " DELETE FROM replay_groups WHERE grp = OLD.grp AND live <= 0;"
    " UPDATE replay_total SET live = live - 1; END",
)
_PINS_SCHEMA = (
    # key pins: one canonical-JSON record per provenance id
    "CREATE TABLE pins (provenance_id TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID",
)
_SCHEMA = _REPLAY_SCHEMA + _PINS_SCHEMA
"""The statements that make a state file of ``SCHEMA_VERSION``."""

_FROM_VERSION_1 = (
    # version 1 had no lease (every row accepted) and counted per identity: the replay tables are made
    # again from _REPLAY_SCHEMA, their rows kept (accepted, each identity its own group); pins untouched
    "CREATE TEMP TABLE replay_v1 AS SELECT identity, job_id, held_until, digest FROM replay",
    "DROP TRIGGER replay_in",
    "DROP TRIGGER replay_out",
    "DROP TABLE replay",
    "DROP TABLE replay_senders",
    "DROP TABLE replay_total",
    *_REPLAY_SCHEMA,
    "INSERT INTO replay SELECT identity, job_id, held_until, digest, identity, NULL FROM temp.replay_v1",
    "DROP TABLE temp.replay_v1",
)

T = TypeVar("T")


class Rollback(Exception):
    """Raised inside a transaction to roll it back and hand ``.error`` to the caller."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _new_lock_after_fork(owner: Any) -> None:
    """Give ``owner`` a fresh ``_lock`` in a forked child: a thread of the parent may have held it at the fork."""
    if not hasattr(os, "register_at_fork"):  # pragma: no cover - Windows
        return
    ref = weakref.ref(owner)

    def renew() -> None:
        alive = ref()
        if alive is not None:
            alive._lock = threading.Lock()

    os.register_at_fork(after_in_child=renew)


class SQLiteState:
    """The connection, schema and transactions of one state file (see the module docstring).

    ``path``: the database file, created 0600 when missing.  ``synchronous``:
    ``"NORMAL"`` or ``"FULL"``.  ``busy_timeout``: seconds a transaction waits
    for another writer before ``StateUnavailable``.  Raises ``StateUnavailable``
    when the file cannot be opened, is not a state file of ``SCHEMA_VERSION`` or
    fails ``_state_file.check_state_file``/``check_schema`` (owner, mode, directory,
    extra schema objects), ``ValueError`` for bad arguments or a file system that is
    not local (``_state_file.check_filesystem``).
    """

    def __init__(
        self,
        path: "os.PathLike[str] | str",
        *,
        synchronous: str = "NORMAL",
        busy_timeout: float = 5.0,
        allow_network_filesystem: bool = False,
    ) -> None:
        self.path = os.fspath(path)
        if not isinstance(self.path, str) or not self.path or self.path == ":memory:" or self.path.startswith("file:"):
            raise ValueError("`path` must name a database file (not :memory: or a URI)")
        if synchronous not in SYNCHRONOUS_MODES:
            raise ValueError(f"synchronous must be one of {SYNCHRONOUS_MODES}")
        if isinstance(busy_timeout, bool) or not isinstance(busy_timeout, (int, float)) or not busy_timeout >= 0:
            raise ValueError("busy_timeout must be a number of seconds >= 0")
        self.synchronous = synchronous
        self.busy_timeout = float(busy_timeout)
        check_filesystem(self.path, allow_network_filesystem)
        self._lock = threading.Lock()
        _new_lock_after_fork(self)
        self._conn: Optional[sqlite3.Connection] = None
        self._pid = -1
        self._forked: List[sqlite3.Connection] = []  # inherited over fork: kept, never used nor closed
        self._writer: Optional[int] = None  # this process's descriptor of <path>-lock (the writers' queue)
        self.busy_retries = 0  # attempts that found the database or the writers' lock taken (bench figure)
        self._connect()

    # -- connection ------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None:
            if self._pid == os.getpid():
                return self._conn
            self._forked.append(self._conn)  # closing it in the child could disturb the parent's locks
            self._conn = None
            if self._writer is not None:
                os.close(self._writer)  # the parent's open file: its flock stays the parent's
                self._writer = None
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        except OSError as exc:
            raise StateUnavailable(f"cannot create the state file `{self.path}`: {exc}") from None
        else:
            os.close(fd)
        check_state_file(self.path)
        conn = None
        try:
            conn = sqlite3.connect(self.path, timeout=0, isolation_level=None, check_same_thread=False)
            self._run(conn, self._setup)
        except StateUnavailable:
            if conn is not None:
                conn.close()
            raise
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            raise self._unavailable(exc) from None
        if fcntl is not None:
            name = os.path.realpath(self.path) + "-lock"  # beside the real file, as SQLite's -wal and -shm
            try:
                self._writer = os.open(name, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
                check_opened_file(self._writer, name, self.path)  # another user's lock file could stall us
            except (OSError, StateUnavailable) as exc:
                conn.close()
                if self._writer is not None:
                    os.close(self._writer)
                    self._writer = None
                if isinstance(exc, StateUnavailable):
                    raise
                raise StateUnavailable(f"cannot open the writers' lock `{name}`: {exc}") from None
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _setup(self, conn: sqlite3.Connection) -> None:
        if conn.execute("PRAGMA user_version").fetchone()[0] == 0:
            # Before the first table: each commit writes every page it changed to the WAL (a header and
            # the page, two pwrite calls), ~8.6 pages per admit, so 1 KiB pages write ~9 KiB per admit.
            # 4 KiB pages measured fewer calls (12.8 pwrite instead of 17.2 per admit; with two
            # connections taking turns, 10.2 pread instead of 14.4: strace -c) but the same CPU per
            # admit (median of four runs, 65 against 65 µs, and 85 against 86 µs taking turns), for
            # three times the WAL bytes.
            conn.execute("PRAGMA page_size = 1024")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()
        if mode is None or str(mode[0]).lower() != "wal":
            raise StateUnavailable(f"`{self.path}` cannot use WAL mode (journal_mode is {mode and mode[0]})")
        conn.execute(f"PRAGMA synchronous = {self.synchronous}")
        # A checkpoint (with its fsyncs) runs inside the commit that crosses the threshold: every 1,000
        # pages by default, about every 120 admits. 10,000 pages (10 MiB of WAL) measured a mean admit
        # of 110 µs against 195 µs on the development machine's disk, the WAL staying bounded.
        conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT}")
        conn.execute("PRAGMA foreign_keys = OFF")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            check_schema(conn, _SCHEMA, self.path)
            return
        if version not in (0, 1):
            raise StateUnavailable(
                f"`{self.path}` has schema version {version}; this ajpcore reads version {SCHEMA_VERSION}"
            )
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]  # another process may have won
            if version == 0:
                tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
                if tables:
                    raise StateUnavailable(f"`{self.path}` is a SQLite database, but not an ajpcore state file")
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            elif version == 1:
                for statement in _FROM_VERSION_1:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            elif version != SCHEMA_VERSION:
                raise StateUnavailable(f"`{self.path}` has schema version {version}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Close this process's connection (a later operation opens a new one)."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
                if self._writer is not None:
                    os.close(self._writer)
            self._conn = None
            self._writer = None

    # -- transactions ----------------------------------------------------------------------

    def _unavailable(self, exc: BaseException) -> StateUnavailable:
        return StateUnavailable(f"SQLite state `{self.path}`: {type(exc).__name__}: {exc}")

    @staticmethod
    def is_busy(exc: sqlite3.Error) -> bool:
        """Whether ``exc`` says another connection holds the lock (``SQLITE_BUSY``, ``SQLITE_LOCKED``)."""
        code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
        if code is not None:
            return code & 0xFF in (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED
        text = str(exc).lower()
        return "locked" in text or "busy" in text

    def _run(self, conn: sqlite3.Connection, body: Callable[[sqlite3.Connection], T]) -> T:
        """``body(conn)``, retried on a busy database until ``busy_timeout``; sqlite errors stay sqlite errors."""
        deadline = time.monotonic() + self.busy_timeout
        attempt = 0
        while True:
            try:
                return body(conn)
            except sqlite3.Error as exc:
                if not self.is_busy(exc) or time.monotonic() >= deadline:
                    raise
            attempt += 1
            self._pause(attempt)

    def _pause(self, attempt: int) -> None:
        """The wait before retry number ``attempt`` of a taken lock (counted in ``busy_retries``)."""
        self.busy_retries += 1
        if attempt <= 8 and hasattr(os, "sched_yield"):
            os.sched_yield()  # the other writer holds the lock for tens of µs: a sleep would outlast it
        else:
            time.sleep(random.uniform(0.5, 1.0) * min(0.002, 0.00005 * 2 ** min(attempt - 8, 6)))

    def _queue(self) -> None:
        """Take the writers' lock (``flock`` of ``<path>-lock``), waiting at most ``busy_timeout``."""
        if self._writer is None:
            return
        deadline = time.monotonic() + self.busy_timeout
        attempt = 0
        while True:
            try:
                fcntl.flock(self._writer, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StateUnavailable(
                        f"SQLite state `{self.path}` stayed locked by another writer for {self.busy_timeout} s"
                    ) from None
            except OSError as exc:
                raise self._unavailable(exc) from None
            attempt += 1
            self._pause(attempt)

    def transaction(self, body: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``body(conn)`` inside one ``BEGIN IMMEDIATE`` ... ``COMMIT`` and return its result.

        ``body`` raising ``Rollback(error)`` rolls back and raises ``error``;
        ``Commit(error)`` commits what it did and raises ``error``.  A busy
        database is retried until ``busy_timeout``; any ``sqlite3`` error (or
        the timeout) raises ``StateUnavailable``.
        """
        return self._write(functools.partial(self._in_transaction, body))

    def statement_or_transaction(
        self, statement: Callable[[sqlite3.Connection], bool], body: Callable[[sqlite3.Connection], None]
    ) -> None:
        """``statement(conn)`` on its own, then, unless it returned True, ``body(conn)`` as ``transaction`` runs it.

        ``statement`` runs one SQL statement outside ``BEGIN`` (autocommit: the
        statement is a transaction by itself, so it is atomic and sees no other
        writer's half-done work; a writer that committed since it began reading
        makes it fail busy, with nothing written, and it is retried).  Both run
        under one hold of the writers' lock.  What it saves: the ``BEGIN
        IMMEDIATE`` and ``COMMIT`` calls of a transaction of one statement, two
        of the three ``sqlite3`` calls of a new pair's admit (each a statement
        run, and a GIL release and take around each step).
        """

        def attempt(conn: sqlite3.Connection) -> None:
            if not statement(conn):
                self._in_transaction(body, conn)

        self._write(attempt)

    @staticmethod
    def _in_transaction(body: Callable[[sqlite3.Connection], T], conn: sqlite3.Connection) -> T:
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = body(conn)
        except Commit as done:
            conn.execute("COMMIT")
            raise done.error from None
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return result

    def _write(self, attempt: Callable[[sqlite3.Connection], T]) -> T:
        """``attempt(conn)`` holding the writers' lock, retried while busy; errors as ``transaction`` says."""
        with self._lock:
            try:
                conn = self._connect()
                self._queue()
                try:
                    return self._run(conn, attempt)
                finally:
                    if self._writer is not None:
                        fcntl.flock(self._writer, fcntl.LOCK_UN)
            except Rollback as undo:
                raise undo.error from None
            except sqlite3.Error as exc:
                if self.is_busy(exc):
                    raise StateUnavailable(
                        f"SQLite state `{self.path}` stayed locked by another writer for {self.busy_timeout} s"
                    ) from None
                raise self._unavailable(exc) from None

    def read(self, body: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``body(conn)`` outside a write transaction (one consistent snapshot per statement)."""
        with self._lock:
            try:
                return self._run(self._connect(), body)
            except sqlite3.Error as exc:
                raise self._unavailable(exc) from None

    def __getstate__(self) -> Any:
        raise TypeError("a SQLite state store is not picklable: open it again in the other process by its path")


class Commit(Exception):
    """Raised inside a transaction to commit what it did and hand ``.error`` to the caller."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class Job:
    """One call run by a ``WorkerThread``: ``fn(*args, **kwargs)``; once run, ``ran`` is True and ``error``
    holds what it raised (None when it returned).  ``future`` (asyncio, or None) receives the outcome on its
    event loop, unless its awaiter was cancelled meanwhile."""

    __slots__ = ("fn", "args", "kwargs", "loop", "future", "ran", "error")

    def __init__(self, fn: Callable[..., Any], args: Any, kwargs: Any, loop: Any, future: Any) -> None:
        self.fn, self.args, self.kwargs, self.loop, self.future = fn, args, kwargs, loop, future
        self.ran = False
        self.error: Optional[BaseException] = None


def _deliver(future: "asyncio.Future[Any]", error: Optional[BaseException], value: Any) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


class WorkerThread:
    """The one worker thread an asyncio twin of a SQLite store runs the sync store's calls in.

    One thread per store: SQLite has one writer at a time, so more threads
    would only queue on its lock; and the calls run in the order they were
    submitted, so a follow-up submitted after a cancelled call sees that call's
    outcome (``AsyncSQLiteReplayGuard`` releases the pair of an admit whose
    caller was cancelled while the admit ran).  The event loop never waits on
    the file.

    One hop each way and nothing more: a call is a ``Job`` put on a
    ``queue.SimpleQueue`` (C, one futex wake of the thread) and its outcome is
    handed back with ``loop.call_soon_threadsafe`` (one write to the loop's
    wake-up pipe).  ``concurrent.futures`` and ``asyncio.wrap_future`` did the
    same through two futures chained by callbacks, a condition variable and a
    work item: 126 µs of CPU per awaited admit against 53 µs for the sync
    admit, now ~77 µs (bench/state_throughput.py ``--costs``).  The thread is
    a daemon, so a store never closed does not hold the interpreter at exit.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._begin()

    def _begin(self) -> None:
        self._queue: "queue.SimpleQueue[Optional[Job]]" = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
        self._thread.start()
        self._pid = os.getpid()

    def _put(self, job: Job) -> None:
        if self._pid != os.getpid():  # a forked child has no copy of the thread: it gets one of its own
            self._begin()
        self._queue.put(job)

    def _serve(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            value = None
            try:
                value = job.fn(*job.args, **job.kwargs)
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiter
                job.error = exc
            job.ran = True
            if job.future is not None:
                try:
                    job.loop.call_soon_threadsafe(_deliver, job.future, job.error, value)
                except RuntimeError:  # the loop was closed meanwhile: nobody awaits the outcome
                    pass
            del job, value

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Job:
        """Run ``fn(*args, **kwargs)`` in the thread after every call submitted before it; nobody awaits it."""
        job = Job(fn, args, kwargs, None, None)
        self._put(job)
        return job

    def start(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Job:
        """``submit``, with ``job.future`` an asyncio future of the running loop to await for the outcome."""
        loop = asyncio.get_running_loop()
        job = Job(fn, args, kwargs, loop, loop.create_future())
        self._put(job)
        return job

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in the thread, awaited; cancelling the await does not stop a running call."""
        result: T = await self.start(fn, *args, **kwargs).future
        return result

    def close(self) -> None:
        """Wait for the calls submitted, then stop the thread."""
        if self._pid == os.getpid() and self._thread.is_alive():
            self._queue.put(None)
            if threading.current_thread() is not self._thread:
                self._thread.join()
