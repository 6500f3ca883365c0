# Included by native/_core_c.pyx (shares its namespace).  Pure twin: ajpcore/_core_py/replay_table.py.

# ---------------------------------------------------------------------------
# The in-memory replay guard's table and its usual admit (MemoryReplayGuard)
# ---------------------------------------------------------------------------

from cpython.bytes cimport PyBytes_GET_SIZE

from heapq import heappush as _heappush

from ajpcore._core_rules import MAX_DIGEST_LENGTH, MAX_IDENTITY_LENGTH, MAX_JOB_ID_LENGTH
from ajpcore._core_rules import _check_table  # the constructor's refusals, the pure twin's

cdef extern from "Python.h":
    Py_ssize_t PY_SSIZE_T_MAX

cdef long long _TABLE_BOUND = 4611686018427387904  # 2**62 µs: instants, skew and lease strictly within it
cdef Py_ssize_t _MAX_JOB_ID = MAX_JOB_ID_LENGTH
cdef Py_ssize_t _MAX_IDENTITY = MAX_IDENTITY_LENGTH
cdef Py_ssize_t _MAX_DIGEST = MAX_DIGEST_LENGTH


cdef inline bint _table_instant(object value, long long* out) except -1:
    """An exact int strictly within +-2**62 into *out (True), else False (the full admit reads it)."""
    cdef int overflow = 0
    cdef long long n
    if type(value) is not int:
        return False
    n = PyLong_AsLongLongAndOverflow(value, &overflow)
    if overflow or not (-_TABLE_BOUND < n < _TABLE_BOUND):
        return False
    out[0] = n
    return True


cdef class ReplayTable:
    """The pairs of one ``MemoryReplayGuard`` and its usual admit (see ajpcore._core_py.replay_table)."""

    cdef public dict jobs
    cdef public list heap
    cdef public dict full_until
    cdef public Py_ssize_t size
    cdef readonly object lock
    cdef readonly object max_entries
    cdef readonly object quota
    cdef readonly object skew_us
    cdef readonly object lease_us
    cdef Py_ssize_t _max_entries  # max_entries, at most PY_SSIZE_T_MAX // 2 (no table holds more)
    cdef long long _quota  # quota, or -1 when None (a quota per group)
    cdef long long _skew
    cdef long long _lease
    cdef bint _bounded  # skew and lease within +-2**62: the usual admit may run
    cdef object _acquire
    cdef object _release

    def __init__(self, max_entries, quota, skew_us, lease_us):
        _check_table(max_entries, quota, skew_us, lease_us)
        self.jobs = {}
        self.heap = []
        self.full_until = {}
        self.size = 0
        self.lock = _threading.Lock()
        self.max_entries = max_entries
        self.quota = quota
        self.skew_us = skew_us
        self.lease_us = lease_us
        self._max_entries = min(max_entries, PY_SSIZE_T_MAX // 2)
        self._quota = -1 if quota is None else min(quota, PY_SSIZE_T_MAX)
        self._bounded = _table_instant(skew_us, &self._skew) and _table_instant(lease_us, &self._lease)
        self._acquire = self.lock.acquire
        self._release = self.lock.release

    def admit_new(self, identity, job_id, expires_at_us, now_us, digest, confirmed):
        """Record the new pair ``(identity, job_id)`` in ``identity``'s own group and answer True,
        or change nothing and answer False (the guard's full admit decides); in C."""
        cdef long long expires, now, hold, until
        cdef Py_ssize_t held
        cdef object got
        if not (
            type(identity) is str and type(job_id) is str and PyUnicode_GET_LENGTH(job_id) <= _MAX_JOB_ID
            and PyUnicode_GET_LENGTH(identity) <= _MAX_IDENTITY and _table_instant(expires_at_us, &expires)
            and _table_instant(now_us, &now) and self._bounded
            and (digest is None or (type(digest) is bytes and PyBytes_GET_SIZE(digest) <= _MAX_DIGEST))
            and (confirmed is True or confirmed is False)
        ):
            return False
        if not self._acquire(False):
            return False
        try:
            got = self.jobs.get(identity)
            if got is not None:
                if type(got) is not dict or job_id in <dict>got:  # (only this table's own dicts are read in C)
                    return False
                held = len(<dict>got)
                if held and (self._quota < 0 or held >= self._quota):
                    return False
            if self.size >= self._max_entries or len(self.heap) >= 2 * self._max_entries:
                return False
            hold = expires + self._skew
            until = hold if confirmed is True else min(now + self._lease, hold)
            self._record(got, identity, job_id, until, digest, None if confirmed is True else hold, identity)
            return True
        finally:
            self._release()

    def record(self, identity, job_id, until, digest, hold, group):
        """Store the pair ``(identity, job_id)`` as held until ``until`` (see ajpcore._core_py.replay_table)."""
        self._record(self.jobs.get(identity), identity, job_id, until, digest, hold, group)

    cdef _record(self, object held_by, object identity, object job_id, object until, object digest, object hold,
                 object group):
        """``record``, given ``identity``'s pairs (``held_by``; None when it holds none)."""
        cdef object known
        if held_by is None:
            held_by = {}
            self.jobs[identity] = held_by
        self.size += 1
        held_by[job_id] = (until, digest, hold, group)
        if self.full_until:  # a group refused until its earliest expiry: this pair may expire sooner
            known = self.full_until.get(group)
            if known is not None and until < known:
                self.full_until[group] = until
        _heappush(self.heap, (until, identity, job_id))
