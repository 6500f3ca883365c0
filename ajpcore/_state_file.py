"""What a SQLite state file must be before its rows are trusted: where it lies, who may write it, what it holds.

The replay guard and the key pins decide who is accepted from the rows of one
file (``_state_sqlite.SQLiteState``).  A file anyone else could write, or one
carrying a trigger of someone else's, decides for them: a planted ``AFTER
INSERT ... DELETE`` trigger made every offer run again.  So before use:

- ``check_filesystem``: the file (its real path, after symlinks) and its
  directory lie on a local file system type SQLite's WAL locks hold on
  (``LOCAL_FILESYSTEMS``, an allow-list read from ``/proc/self/mountinfo``);
  anything else (NFS, SMB, 9p, FUSE, virtiofs, Ceph, ...) is refused unless the
  caller passes the override documented as unsafe.
- ``check_state_file``: the file is owned by this process's user and writable
  by no one else, as are its ``-wal`` and ``-shm`` when present; its directory
  (before and after symlinks) is owned by this user or root, and writable by
  others only with the sticky bit (``/tmp``: others cannot rename or delete
  the file there).
- ``check_schema``: ``sqlite_master`` holds exactly the schema ajpcore wrote:
  no extra trigger, view, index or table.
"""

from __future__ import annotations

import functools
import os
import re
import sqlite3
import stat
from typing import List, Optional, Sequence, Tuple

from .errors import StateUnavailable

__all__ = ["LOCAL_FILESYSTEMS", "filesystem_type", "check_filesystem", "check_state_file", "check_schema"]

LOCAL_FILESYSTEMS = frozenset({
    "ext2", "ext3", "ext4", "xfs", "btrfs", "zfs", "bcachefs", "f2fs", "jfs", "reiserfs", "nilfs2",
    "tmpfs", "ramfs", "overlay", "apfs", "hfs", "hfsplus", "ufs",
})
"""File system types a state file may lie on: local disks and memory, where the byte-range locks and
shared memory of SQLite's WAL mode hold (https://www.sqlite.org/wal.html: "WAL does not work over a
network filesystem").  Every other type is refused: nfs, cifs/smb3, 9p, fuse.*, vboxsf, virtiofs,
ceph, glusterfs, lustre, and any type this list does not know."""

_MOUNTINFO = "/proc/self/mountinfo"
_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")


def _unescape(field: str) -> str:
    """A mountinfo path field as the path it is (the kernel writes space, tab, newline, backslash as ``\\ooo``)."""
    return _OCTAL_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), field)


def filesystem_type(path: str, mountinfo: Optional[str] = None) -> Optional[str]:
    """The type of the file system the real path of ``path`` lies on, or None when unknown (no mountinfo).

    ``mountinfo``: the text of ``/proc/self/mountinfo`` (read when None; None is returned where it
    does not exist: not Linux).  The mount is the longest mount point holding the path; of mounts
    stacked on one point, the last listed (the one on top).
    """
    if mountinfo is None:
        try:
            with open(_MOUNTINFO, encoding="utf-8", errors="surrogateescape") as f:
                mountinfo = f.read()
        except OSError:
            return None
    real = os.path.realpath(path)
    best, best_type = "", None
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or not tail:
            continue
        mount = _unescape(fields[4])
        inside = real == mount or real.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) >= len(best):
            best, best_type = mount, tail[0]
    return best_type


def check_filesystem(path: str, allow_network_filesystem: bool) -> None:
    """Refuse (``ValueError``) a state file whose real path or real directory is not on a ``LOCAL_FILESYSTEMS`` type.

    Both are checked: SQLite opens the file through its symlinks and puts ``-wal`` and ``-shm``
    beside the real file.  ``allow_network_filesystem=True`` skips the check: unsafe, SQLite's locks
    may not hold there and then an offer can be accepted twice.  Where there is no
    ``/proc/self/mountinfo`` (not Linux) the check is not made.
    """
    if allow_network_filesystem:
        return
    absolute = os.path.abspath(path)
    for where in (absolute, os.path.dirname(absolute)):
        kind = filesystem_type(where)
        if kind is not None and kind not in LOCAL_FILESYSTEMS:
            raise ValueError(
                f"`{path}` lies on a `{kind}` file system ({os.path.realpath(where)}), not a local disk where"
                " SQLite's locks hold: use a local disk, or RedisReplayGuard for several hosts"
                " (allow_network_filesystem=True overrides this, unsafely)"
            )


def _refuse(path: str, why: str) -> StateUnavailable:
    return StateUnavailable(f"the state file `{path}` is refused: {why}")


def _check_owned_file(path: str, shown: str, uid: int, fd: Optional[int] = None) -> None:
    """Refuse ``path`` (``fd``: the file already opened by that name) unless it is a regular file of ``uid``
    that no group or other may write; an absent file passes."""
    try:
        st = os.stat(path) if fd is None else os.fstat(fd)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _refuse(shown, f"cannot stat `{path}`: {exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(shown, f"`{path}` is not a regular file")
    if st.st_uid != uid:
        raise _refuse(shown, f"`{path}` is owned by uid {st.st_uid}, not by this process's user (uid {uid})")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise _refuse(shown, f"`{path}` is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o}; use 0600)")


def _check_directory(directory: str, shown: str, uid: int) -> None:
    try:
        st = os.stat(directory)
    except OSError as exc:
        raise _refuse(shown, f"cannot stat its directory `{directory}`: {exc}") from None
    if st.st_uid not in (uid, 0):
        raise _refuse(shown, f"its directory `{directory}` is owned by uid {st.st_uid}, who could replace the file")
    if st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
        raise _refuse(shown, f"its directory `{directory}` is writable by others without the sticky bit"
                             f" (mode {stat.S_IMODE(st.st_mode):04o})")


def check_opened_file(fd: int, name: str, path: str) -> None:
    """``check_state_file``'s test of one file, on the descriptor just opened (no window between check and open)."""
    if hasattr(os, "geteuid"):
        _check_owned_file(name, path, os.geteuid(), fd)


def check_state_file(path: str) -> None:
    """Refuse (``StateUnavailable``) an existing state file someone other than this process's user could change.

    The file must exist (a dangling symlink is refused), be a regular file owned by the
    effective user and writable by no group or other; so must its ``-wal``, ``-shm`` and
    ``-lock`` (the writers' queue of ``_state_sqlite``) when present.  Its directory, before and after symlinks, must be owned by that user or root
    and be writable by others only with the sticky bit.
    """
    if not hasattr(os, "geteuid"):  # pragma: no cover - Windows: no POSIX owners or modes
        return
    uid = os.geteuid()
    real = os.path.realpath(path)
    if not os.path.exists(real):
        raise _refuse(path, f"`{real}` does not exist (a dangling symlink?)")
    for name in (real, real + "-wal", real + "-shm", real + "-lock"):
        _check_owned_file(name, path, uid)
    for directory in dict.fromkeys((os.path.dirname(os.path.abspath(path)), os.path.dirname(real))):
        _check_directory(directory, path, uid)


Entry = Tuple[str, str, str, Optional[str]]


@functools.lru_cache(maxsize=4)
def _expected(schema: Tuple[str, ...]) -> Tuple[Entry, ...]:
    """``sqlite_master`` as ``schema`` writes it (built once in memory): what a state file must hold exactly."""
    conn = sqlite3.connect(":memory:")
    try:
        for statement in schema:
            conn.execute(statement)
        return _entries(conn)
    finally:
        conn.close()


def _entries(conn: sqlite3.Connection) -> Tuple[Entry, ...]:
    rows: List[Entry] = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    return tuple(sorted(rows, key=lambda row: (row[0], row[1])))


def check_schema(conn: sqlite3.Connection, schema: Sequence[str], path: str) -> None:
    """Refuse (``StateUnavailable``) a file whose ``sqlite_master`` differs from ``schema``'s, naming the first difference.

    The host's own tables may share the file (the documented pattern: a job table whose row
    commits in the same transaction as the replay guard's confirm), with their indexes: they
    cannot change ajpcore's rows.  A trigger or a view is never the host's, whatever its table
    (a trigger on a host table can write ajpcore's), and neither is any object on ajpcore's tables
    beyond the schema's own.
    """
    want = _expected(tuple(schema))
    ours = {row[2] for row in want}
    got = tuple(row for row in _entries(conn) if row[0] not in ("table", "index") or row[2] in ours)
    if got == want:
        return
    extra = [row for row in got if row not in want]
    missing = [row for row in want if row not in got]
    if extra:
        kind, name = extra[0][0], extra[0][1]
        raise _refuse(path, f"it holds a {kind} `{name}` that is not ajpcore's schema (or differs from it)")
    kind, name = missing[0][0], missing[0][1]
    raise _refuse(path, f"its {kind} `{name}` is missing")
