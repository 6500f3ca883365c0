"""Key pins in a JSON file (``FileKeyPins``), shared safely by every process that opens it.

The file is written atomically (temporary file beside the real target of a
symlink, fsync, rename, fsync of the directory, the file's mode kept; a new
file is 0600), so a crash leaves either the old file or the new one, never a
torn one; a file that cannot be read back exactly raises ``KeyPinsCorrupt``,
never reads as an empty store.  Every change re-reads the file under an
exclusive ``flock`` of ``<file>.lock``, so stores of several processes on one
file never undo each other's pins.
"""

from __future__ import annotations

import os
import stat
import tempfile
import threading
from typing import Callable, Dict, Optional

from .. import _core
from .._state_sqlite import _new_lock_after_fork
from ..errors import DecodeError, KeyPinsCorrupt, StateUnavailable
from .pins import T, _Decision, _PinStore, _Record, parse_record

try:  # POSIX; elsewhere FileKeyPins serialises writers of one process only (docs/deploying.md)
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - Windows
    _fcntl = None  # type: ignore[assignment]

__all__ = ["FileKeyPins", "PIN_FILE_VERSION"]

PIN_FILE_VERSION = 1
"""The ``version`` member of a pin file this module writes and reads."""


class FileKeyPins(_PinStore):
    """A ``KeyPins`` kept in a JSON file at ``path``, shared safely by every process that opens it.

    The file is ``{"version": 1, "pins": {<provenance_id>: {"fingerprint":
    <64 hex>, "public_key": <SPKI base64> | null, "rotations": [<notice>,
    ...]}}}`` in canonical JSON.  A missing file is an empty store (created
    0600 on the first pin).  ``path`` may be a symlink: the new content is
    written beside its real target (which keeps its mode), so the link stays a
    link.  Every change takes an exclusive ``flock`` on ``<real target>.lock``
    (created 0600), re-reads the file, decides and writes under it; every read
    notices another store's write by a generation counter in that lock file and
    re-reads (so edit the file by hand only while no store has it open, and
    never delete the lock file under open stores: they would stop excluding
    each other).  Raises ``KeyPinsCorrupt`` when the file is not exactly that
    (invalid JSON, duplicate keys, unknown members, a key whose fingerprint is
    not the pinned one), ``StateUnavailable`` (an ``OSError``) when it cannot
    be read or written.
    """

    def __init__(self, path: "os.PathLike[str] | str") -> None:
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        _new_lock_after_fork(self)
        self._lock_fd = -1
        self._lock_pid = -1
        self._generation = -1
        self._pins: Dict[str, _Record] = {}
        with self._lock:
            self._refresh()

    def __len__(self) -> int:
        with self._lock:
            self._refresh()
            return len(self._pins)

    def __repr__(self) -> str:
        return f"FileKeyPins({self.path!r}, {len(self._pins)} pins)"

    def _target(self) -> str:
        return os.path.realpath(self.path)

    def _lock_file(self) -> int:
        if self._lock_fd >= 0 and self._lock_pid == os.getpid():
            return self._lock_fd
        # A new descriptor per process: an flock is shared by every descriptor of one open file
        # description, so a child reusing its parent's would not exclude the parent.
        try:
            fd = os.open(self._target() + ".lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        except OSError as exc:
            raise StateUnavailable(f"cannot open the lock file of pin file `{self.path}`: {exc}") from None
        self._lock_fd, self._lock_pid = fd, os.getpid()
        return fd

    def _read_generation(self, fd: int) -> int:
        if not hasattr(os, "pread"):  # pragma: no cover - Windows: no counter, so every read re-reads the file
            return -2
        raw = os.pread(fd, 8, 0)
        return int.from_bytes(raw, "big") if len(raw) == 8 else 0

    def _refresh(self) -> None:
        """Re-read the file when another store changed it since this one last did (caller holds ``_lock``)."""
        try:
            generation = self._read_generation(self._lock_file())
            if generation != self._generation or generation == -2:
                self._pins = _load(self.path)
                self._generation = generation
        except OSError as exc:
            if isinstance(exc, StateUnavailable):
                raise
            raise StateUnavailable(f"cannot read pin file `{self.path}`: {exc}") from None

    def _read(self, provenance_id: str) -> Optional[_Record]:
        with self._lock:
            self._refresh()
            return self._pins.get(provenance_id)

    def _update(self, provenance_id: str, decide: Callable[[Optional[_Record]], _Decision[T]]) -> T:
        with self._lock:
            fd = self._lock_file()
            try:
                if _fcntl is not None:
                    _fcntl.flock(fd, _fcntl.LOCK_EX)
            except OSError as exc:
                raise StateUnavailable(f"cannot lock pin file `{self.path}`: {exc}") from None
            try:
                try:
                    pins = _load(self.path)  # under the lock: what other stores committed is kept
                    generation = self._read_generation(fd)
                except OSError as exc:
                    raise StateUnavailable(f"cannot read pin file `{self.path}`: {exc}") from None
                self._pins, self._generation = pins, generation
                record, answer = decide(pins.get(provenance_id))
                if record is not None:
                    pins = dict(pins)
                    pins[provenance_id] = record
                    self._commit(pins)
                    try:
                        if hasattr(os, "pwrite"):
                            os.pwrite(fd, (generation + 1).to_bytes(8, "big"), 0)
                    except OSError as exc:
                        raise StateUnavailable(f"cannot update the lock file of `{self.path}`: {exc}") from None
                    self._pins, self._generation = pins, generation + 1
                return answer
            finally:
                if _fcntl is not None:
                    _fcntl.flock(fd, _fcntl.LOCK_UN)

    def _commit(self, pins: Dict[str, _Record]) -> None:
        data = _core.impl.canonicalize({"version": PIN_FILE_VERSION, "pins": pins}) + b"\n"
        target = self._target()
        directory = os.path.dirname(target)
        try:
            mode: Optional[int] = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = None  # mkstemp's 0600
        except OSError as exc:
            raise StateUnavailable(f"cannot write pin file `{self.path}`: {exc}") from None
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp", dir=directory)
            with os.fdopen(fd, "wb") as f:
                if mode is not None:
                    os.fchmod(f.fileno(), mode)
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)  # atomic on POSIX and Windows: readers see old or new, never half
            tmp = None
            _fsync_directory(directory)
        except OSError as exc:
            raise StateUnavailable(f"cannot write pin file `{self.path}`: {exc}") from None
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    def __del__(self) -> None:
        if self._lock_fd >= 0 and self._lock_pid == os.getpid():
            try:
                os.close(self._lock_fd)
            except OSError:
                pass


def _fsync_directory(directory: str) -> None:
    # The rename is durable only once the directory entry is on disk (POSIX); not possible on Windows.
    flags = getattr(os, "O_DIRECTORY", None)
    if flags is None:
        return
    fd = os.open(directory, os.O_RDONLY | flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _load(path: str) -> Dict[str, _Record]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return {}
    try:
        doc = _core.impl.decode(data)
    except DecodeError as exc:
        raise KeyPinsCorrupt(f"pin file `{path}` is not strict JSON: {exc}") from None

    def corrupt(why: str) -> KeyPinsCorrupt:
        return KeyPinsCorrupt(f"pin file `{path}` is corrupt: {why}")

    if not isinstance(doc, dict) or set(doc) != {"version", "pins"}:
        raise corrupt('expected exactly the members "version" and "pins"')
    if type(doc["version"]) is not int or doc["version"] != PIN_FILE_VERSION:
        raise corrupt(f"unknown version (this reader knows {PIN_FILE_VERSION})")
    if not isinstance(doc["pins"], dict):
        raise corrupt('"pins" is not an object')
    return {pid: parse_record(pid, record, corrupt) for pid, record in doc["pins"].items()}
