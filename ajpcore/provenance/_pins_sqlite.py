"""Key pins in a SQLite file shared by the worker processes of one host (``SQLiteKeyPins``) and its asyncio twin."""

from __future__ import annotations

import os
import sqlite3
from typing import Any, Callable, Optional

from .. import _core
from .._state_sqlite import SQLiteState, WorkerThread
from .pins import T, _AsyncPinStore, _Decision, _PinStore, _Record, stored_record

__all__ = ["SQLiteKeyPins", "AsyncSQLiteKeyPins"]

_WHAT = "SQLite key pins"


class SQLiteKeyPins(_PinStore):
    """A ``KeyPins`` in a SQLite file, shared by every thread and process that opens ``path``.

    First use and rotation each run in one ``BEGIN IMMEDIATE`` transaction
    that reads the pin and writes the decision, so two processes racing the
    first use of one id with two keys pin exactly one (the other gets
    ``KEY_ROTATED``) and two racing rotations cannot both win.  The file is
    created 0600 and may also hold ``SQLiteReplayGuard``; the keywords
    (``synchronous``, ``busy_timeout``, ``allow_network_filesystem``) are
    ``SQLiteReplayGuard``'s.  Each pin is one row, its record in canonical
    JSON.  Raises ``StateUnavailable`` (503) for every store failure,
    including a stored record that is not exactly a pin.
    """

    def __init__(self, path: "os.PathLike[str] | str", **options: Any) -> None:
        self._state = SQLiteState(path, **options)
        self.path = self._state.path

    def __repr__(self) -> str:
        return f"SQLiteKeyPins({self.path!r})"

    def __len__(self) -> int:
        return int(self._state.read(lambda c: c.execute("SELECT count(*) FROM pins").fetchone()[0]))

    def close(self) -> None:
        """Close this process's connection; the next call opens a new one."""
        self._state.close()

    def _read(self, provenance_id: str) -> Optional[_Record]:
        row = self._state.read(
            lambda c: c.execute("SELECT record FROM pins WHERE provenance_id = ?", (provenance_id,)).fetchone()
        )
        return stored_record(provenance_id, None if row is None else row[0], _WHAT)

    def _update(self, provenance_id: str, decide: Callable[[Optional[_Record]], _Decision[T]]) -> T:
        def body(conn: sqlite3.Connection) -> T:
            row = conn.execute("SELECT record FROM pins WHERE provenance_id = ?", (provenance_id,)).fetchone()
            record, answer = decide(stored_record(provenance_id, None if row is None else row[0], _WHAT))
            if record is not None:
                text = _core.impl.canonicalize(record).decode("utf-8")
                conn.execute("INSERT OR REPLACE INTO pins VALUES (?, ?)", (provenance_id, text))
            return answer

        return self._state.transaction(body)


class AsyncSQLiteKeyPins(_AsyncPinStore):
    """The asyncio twin of ``SQLiteKeyPins``: the same methods as coroutines, run in one ``WorkerThread``."""

    def __init__(self, path: "os.PathLike[str] | str", **options: Any) -> None:
        self.sync = SQLiteKeyPins(path, **options)
        self._thread = WorkerThread("ajpcore-sqlite-pins")

    def __repr__(self) -> str:
        return f"AsyncSQLiteKeyPins({self.sync.path!r})"

    async def _read(self, provenance_id: str) -> Optional[_Record]:
        return await self._thread.call(self.sync._read, provenance_id)

    async def _update(self, provenance_id: str, decide: Callable[[Optional[_Record]], _Decision[T]]) -> T:
        return await self._thread.call(self.sync._update, provenance_id, decide)

    def close(self) -> None:
        """Stop the worker thread and close the connection."""
        self._thread.close()
        self.sync.close()
