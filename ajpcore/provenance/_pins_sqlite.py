"""Key pins in a SQLite file shared by the worker processes of one host (``SQLiteKeyPins``) and its asyncio twin."""

from __future__ import annotations

import asyncio
import functools
import os
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Optional, Tuple

from .. import _core
from .._state_sqlite import SQLiteState
from ..errors import DecodeError, StateUnavailable
from .notices import NoticeVerification
from .pins import T, _Decision, _PinStore, _Record, parse_record

__all__ = ["SQLiteKeyPins", "AsyncSQLiteKeyPins"]


def _record_of(provenance_id: str, text: Any) -> _Record:
    def corrupt(why: str) -> StateUnavailable:
        return StateUnavailable(f"SQLite key pins: the stored pin is corrupt: {why}")

    try:
        doc = _core.impl.decode(text)
    except DecodeError as exc:
        raise corrupt(f"not strict JSON: {exc}") from None
    return parse_record(provenance_id, doc, corrupt)


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
        return None if row is None else _record_of(provenance_id, row[0])

    def _update(self, provenance_id: str, decide: Callable[[Optional[_Record]], _Decision[T]]) -> T:
        def body(conn: sqlite3.Connection) -> T:
            row = conn.execute("SELECT record FROM pins WHERE provenance_id = ?", (provenance_id,)).fetchone()
            record, answer = decide(None if row is None else _record_of(provenance_id, row[0]))
            if record is not None:
                text = _core.impl.canonicalize(record).decode("utf-8")
                conn.execute("INSERT OR REPLACE INTO pins VALUES (?, ?)", (provenance_id, text))
            return answer

        return self._state.transaction(body)


class AsyncSQLiteKeyPins:
    """The asyncio twin of ``SQLiteKeyPins``: the same methods as coroutines, run in one worker thread."""

    blocking = False

    def __init__(self, path: "os.PathLike[str] | str", **options: Any) -> None:
        self.sync = SQLiteKeyPins(path, **options)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ajpcore-sqlite-pins")

    def __repr__(self) -> str:
        return f"AsyncSQLiteKeyPins({self.sync.path!r})"

    async def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    async def check(self, provenance_id: str, fingerprint: str, public_key: Any = None) -> None:
        """``SQLiteKeyPins.check`` in the worker thread."""
        await self._call(self.sync.check, provenance_id, fingerprint, public_key)

    async def accept_rotation(self, notice: Any, *, public_key: Any = None) -> NoticeVerification:
        """``SQLiteKeyPins.accept_rotation`` in the worker thread."""
        return await self._call(self.sync.accept_rotation, notice, public_key=public_key)

    async def pinned(self, provenance_id: str) -> Optional[str]:
        """``SQLiteKeyPins.pinned`` in the worker thread."""
        return await self._call(self.sync.pinned, provenance_id)

    async def history(self, provenance_id: str) -> Tuple[Any, ...]:
        """``SQLiteKeyPins.history`` in the worker thread."""
        return await self._call(self.sync.history, provenance_id)

    def close(self) -> None:
        """Stop the worker thread and close the connection."""
        self._executor.shutdown(wait=True)
        self.sync.close()
