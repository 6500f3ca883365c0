"""A SQLite state file is trusted only when it is ours (issue 29 §2, §3).

- Its schema is exactly ajpcore's: a planted trigger, index, view or table is refused at
  construction (``StateUnavailable`` naming it), never run.  Before, a file with the real
  schema, ``user_version = 1`` and an ``AFTER INSERT ... DELETE`` trigger made one offer
  accepted on every delivery.
- Nobody else can write it: another owner, a mode writable by group or others (the file,
  its ``-wal``), a directory others can write without the sticky bit, or owned by another
  user, are refused; ``/tmp`` (1777) is accepted.
- It lies on a local file system: the real path of the file and of its directory are
  checked against an allow-list of local types, so a symlink cannot put the database (and
  its ``-wal``/``-shm``) on another file system; ``allow_network_filesystem=True`` is the
  override, documented as unsafe.

Every check runs for both stores of the file (``SQLiteReplayGuard`` and ``SQLiteKeyPins``).
"""

from __future__ import annotations

import os
import sqlite3
import stat

import pytest

from ajpcore import ReplayedMessage, StateUnavailable, ajp
from ajpcore._state_file import LOCAL_FILESYSTEMS, filesystem_type
from ajpcore._state_sqlite import SCHEMA_VERSION
from ajpcore.provenance import SQLiteKeyPins

STORES = {"guard": ajp.SQLiteReplayGuard, "pins": SQLiteKeyPins}
S = 1_000_000
needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file to another user needs root (os.chown)"
)


@pytest.fixture(params=sorted(STORES))
def store(request):
    return STORES[request.param]


def _made(path):
    """A real state file at ``path`` (written by ajpcore itself), closed."""
    ajp.SQLiteReplayGuard(path).close()
    return path


# -- the schema is exactly ajpcore's ---------------------------------------------------------

PLANTED = {
    "trigger": "CREATE TRIGGER forget AFTER INSERT ON replay BEGIN DELETE FROM replay WHERE job_id = NEW.job_id; END",
    "index": "CREATE INDEX replay_by_digest ON replay (digest)",
    "view": "CREATE VIEW everything AS SELECT * FROM replay",
}


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_a_planted_schema_object_is_refused_at_construction(tmp_path, store, kind):
    path = _made(tmp_path / "state.db")
    with sqlite3.connect(path) as conn:
        conn.execute(PLANTED[kind])
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    with pytest.raises(StateUnavailable, match=f"holds a {kind} `"):
        store(path)


def test_a_changed_trigger_is_refused(tmp_path, store):
    path = _made(tmp_path / "state.db")
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TRIGGER replay_in")
        conn.execute("CREATE TRIGGER replay_in AFTER INSERT ON replay BEGIN DELETE FROM replay; END")
    with pytest.raises(StateUnavailable, match="trigger `replay_in`"):
        store(path)


def test_the_trigger_attack_no_longer_replays_an_offer(tmp_path):
    """The attack of the issue: the planted trigger forgot every admit, so each delivery ran again."""
    path = _made(tmp_path / "guard.db")
    with sqlite3.connect(path) as conn:
        conn.execute(PLANTED["trigger"])
    accepted = 0
    for _ in range(5):
        try:
            ajp.SQLiteReplayGuard(path, skew=0).admit("k", "job_1", expires_at_us=10 * S, now_us=0)
            accepted += 1
        except ReplayedMessage:
            pass
        except StateUnavailable:
            pass
    assert accepted == 0


def test_an_untouched_file_is_accepted_again(tmp_path, store):
    path = _made(tmp_path / "state.db")
    store(path).close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


# -- nobody else can write it ----------------------------------------------------------------


@pytest.mark.parametrize("mode", [0o666, 0o620, 0o602])
def test_a_file_writable_by_group_or_others_is_refused(tmp_path, store, mode):
    path = _made(tmp_path / "state.db")
    os.chmod(path, mode)
    with pytest.raises(StateUnavailable, match=f"writable by group or others \\(mode {mode:04o}"):
        store(path)


@pytest.mark.parametrize("suffix", ["-wal", "-lock"])
def test_a_wal_or_lock_file_writable_by_others_is_refused(tmp_path, store, suffix):
    """``-lock`` is the writers' queue (a ``flock``): whoever may write it may hold it, stalling every writer."""
    path = _made(tmp_path / "state.db")
    beside = tmp_path / f"state.db{suffix}"
    beside.write_bytes(b"")
    os.chmod(beside, 0o666)
    with pytest.raises(StateUnavailable, match=f"state.db{suffix}` is writable by group or others"):
        store(path)


@needs_root
def test_a_file_of_another_user_is_refused(tmp_path, store):
    path = _made(tmp_path / "state.db")
    os.chown(path, 12345, -1)
    with pytest.raises(StateUnavailable, match="owned by uid 12345, not by this process's user"):
        store(path)


@needs_root
def test_a_directory_of_another_user_is_refused(tmp_path, store):
    directory = tmp_path / "theirs"
    directory.mkdir(mode=0o755)
    os.chown(directory, 12345, -1)
    with pytest.raises(StateUnavailable, match="directory .* is owned by uid 12345"):
        store(directory / "state.db")


def test_a_world_writable_directory_needs_the_sticky_bit(tmp_path, store):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.raises(StateUnavailable, match="writable by others without the sticky bit \\(mode 0777\\)"):
        store(shared / "state.db")
    os.chmod(shared, 0o1777)  # as /tmp: others may create, never rename or delete our file
    store(shared / "state.db").close()


def test_tmp_itself_is_accepted(store):
    import tempfile

    directory = tempfile.gettempdir()
    if not os.stat(directory).st_mode & stat.S_ISVTX:
        pytest.skip(f"{directory} is not a sticky shared directory here")
    path = os.path.join(directory, f"ajpcore-state-file-test-{os.getpid()}.db")
    try:
        store(path).close()
    finally:
        for suffix in ("", "-wal", "-shm", "-lock"):
            if os.path.exists(path + suffix):
                os.unlink(path + suffix)


def test_a_dangling_symlink_is_refused(tmp_path, store):
    link = tmp_path / "state.db"
    os.symlink(tmp_path / "elsewhere" / "state.db", link)
    with pytest.raises(StateUnavailable):
        store(link)


# -- a local file system, after symlinks -----------------------------------------------------


def test_a_symlinked_file_on_another_file_system_is_refused(tmp_path, store):
    """The directory of the path is on the local disk; the file it names is not (here /proc)."""
    assert filesystem_type(str(tmp_path)) in LOCAL_FILESYSTEMS
    link = tmp_path / "state.db"
    os.symlink("/proc/ajpcore-state.db", link)
    with pytest.raises(ValueError, match="`proc` file system"):
        store(link)


def test_a_symlinked_directory_on_another_file_system_is_refused(tmp_path, store):
    os.symlink("/proc", tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="`proc` file system"):
        store(tmp_path / "elsewhere" / "state.db")


def test_the_override_is_explicit(tmp_path, store):
    link = tmp_path / "state.db"
    os.symlink("/proc/ajpcore-state.db", link)
    with pytest.raises(StateUnavailable):  # the check is skipped; /proc still cannot hold the file
        store(link, allow_network_filesystem=True)


MOUNTINFO = "\n".join([
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw",
    "30 22 0:40 / /srv/shared rw,relatime shared:7 - nfs4 server:/export rw",
    "31 22 0:41 / /srv/my\\040disk rw,relatime - xfs /dev/sdb1 rw",
    "32 30 0:42 / /srv/shared/local rw - ext4 /dev/sdc1 rw",
    "33 22 0:43 / /mnt/c rw - 9p drvfs rw",
    "34 22 0:44 / /mnt/fuse rw - fuse.sshfs host: rw",
    "35 22 0:45 / /mnt/vm rw - virtiofs share rw",
    "36 22 0:46 / /mnt/stack rw - ext4 /dev/sdd1 rw",
    "37 36 0:47 / /mnt/stack rw - cifs //host/share rw",
])


@pytest.mark.parametrize("path, kind", [
    ("/var/lib/app/state.db", "ext4"),
    ("/srv/shared/state.db", "nfs4"),
    ("/srv/shared/local/state.db", "ext4"),
    ("/srv/my disk/state.db", "xfs"),
    ("/mnt/c/state.db", "9p"),
    ("/mnt/fuse/state.db", "fuse.sshfs"),
    ("/mnt/vm/state.db", "virtiofs"),
    ("/mnt/stack/state.db", "cifs"),  # two mounts on one point: the one on top
])
def test_the_file_system_of_a_path(path, kind):
    assert filesystem_type(path, MOUNTINFO) == kind


def test_local_types_are_an_allow_list():
    for refused in ("nfs", "nfs4", "cifs", "smb3", "9p", "fuse.sshfs", "fuseblk", "vboxsf", "virtiofs",
                    "ceph", "glusterfs", "lustre", "proc", "some-new-fs"):
        assert refused not in LOCAL_FILESYSTEMS
    for local in ("ext4", "xfs", "btrfs", "zfs", "tmpfs", "overlay", "f2fs", "apfs"):
        assert local in LOCAL_FILESYSTEMS



def test_the_hosts_own_tables_may_share_the_file(tmp_path):
    """The documented exactly-once pattern keeps the host's job table in the state file (its row and the
    confirm commit together): a host table and its index are accepted, a trigger on it is not."""
    path = tmp_path / "state.db"
    ajp.SQLiteReplayGuard(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE jobs (job_id TEXT PRIMARY KEY, body BLOB)")
        conn.execute("CREATE INDEX jobs_body ON jobs (body)")
    ajp.SQLiteReplayGuard(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TRIGGER jobs_in AFTER INSERT ON jobs BEGIN DELETE FROM replay; END")
    with pytest.raises(StateUnavailable, match="trigger `jobs_in`"):
        ajp.SQLiteReplayGuard(path)
