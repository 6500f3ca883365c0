# Included by native/_core_c.pyx (shares its namespace), before decoder.pxi.  No pure twin:
# this is about CPython's cyclic collector, not about what decode returns (the pure twin's
# containers are built by json's C scanner, which leaves the collector alone too).

# ---------------------------------------------------------------------------
# The decoded tree and the cyclic collector
# ---------------------------------------------------------------------------

cdef extern from *:
    """
    /* The collector's tracking of one container (PyPy's cpyext has no such lists). */
    #if defined(PYPY_VERSION)
    #define ajp_gc_is_tracked(o) 0
    #define ajp_gc_untrack(o) ((void)(o))
    #define ajp_gc_track(o) ((void)(o))
    #else
    #define ajp_gc_is_tracked(o) PyObject_GC_IsTracked(o)
    #define ajp_gc_untrack(o) PyObject_GC_UnTrack(o)
    #define ajp_gc_track(o) PyObject_GC_Track(o)
    #endif
    """
    bint ajp_gc_is_tracked(object o)
    void ajp_gc_untrack(object o)
    void ajp_gc_track(object o)


cdef Py_ssize_t _GC_QUIET_BYTES = 16384  # documents this large settle their containers


cdef struct Settled:
    bint on               # settle finished containers (a large document)
    PyObject** items      # strong references to the containers _settle untracked
    Py_ssize_t n
    Py_ssize_t cap


cdef void _settled_init(Settled* s, bint on) noexcept:
    s.on = on
    s.items = NULL
    s.n = 0
    s.cap = 0


cdef int _settle(Settled* s, object container) except -1:
    """A finished container of a large document leaves the collector's lists until the end.

    A large document creates containers by the hundred thousand, and every young
    generation collection would rescan the growing, acyclic tree.  Instead of
    switching the collector off (its state belongs to the application, and other
    threads), each container is untracked once complete and tracked again by
    ``_settled_release`` when the document is; only the open containers (at most
    ``max_depth``) stay visible meanwhile.  The strong reference kept here makes the
    release safe even when a duplicate member (``allow_duplicate_keys``) dropped the
    container from the tree.
    """
    cdef PyObject** grown
    if not s.on or not ajp_gc_is_tracked(container):
        return 0
    if s.n == s.cap:
        grown = <PyObject**>PyMem_Realloc(s.items, (s.cap * 2 + 256) * sizeof(PyObject*))
        if grown == NULL:
            raise MemoryError()
        s.items = grown
        s.cap = s.cap * 2 + 256
    ajp_gc_untrack(container)
    Py_INCREF(container)
    s.items[s.n] = <PyObject*>container
    s.n += 1
    return 0


cdef void _settled_release(Settled* s) noexcept:
    """The document is complete: every settled container is tracked again."""
    cdef Py_ssize_t k
    for k in range(s.n):
        if not ajp_gc_is_tracked(<object>s.items[k]):
            ajp_gc_track(<object>s.items[k])
    _settled_clear(s)


cdef void _settled_clear(Settled* s) noexcept:
    """Drop the references (after a refusal the untracked containers are simply freed)."""
    cdef Py_ssize_t k
    cdef PyObject* o
    for k in range(s.n):
        o = s.items[k]
        s.items[k] = NULL
        Py_XDECREF(o)
    s.n = 0
    PyMem_Free(s.items)
    s.items = NULL
    s.cap = 0
