# Included by native/_core_c.pyx (shares its namespace), before decoder.pxi.  No pure twin:
# this is about how the native decoder builds its containers and CPython's cyclic collector,
# not about what decode returns (the pure twin's containers are built by json's C scanner,
# which leaves the collector alone too).

# ---------------------------------------------------------------------------
# The decoded tree and the cyclic collector
# ---------------------------------------------------------------------------

cdef extern from *:
    """
    /* The collector's tracking of one container, and whether it collects at all (PyPy's
       cpyext has no such lists: nothing to settle there). */
    #if defined(PYPY_VERSION)
    #define ajp_gc_untrack(o) ((void)(o))
    #define ajp_gc_track(o) ((void)(o))
    #define ajp_gc_collects() 0
    #else
    #define ajp_gc_untrack(o) PyObject_GC_UnTrack(o)
    #define ajp_gc_track(o) PyObject_GC_Track(o)
    #define ajp_gc_collects() PyGC_IsEnabled()
    #endif
    /* Let a thread that asked for the GIL have it now (it gets it only when it asked). */
    static void ajp_gil_yield(void) {
        Py_BEGIN_ALLOW_THREADS
        Py_END_ALLOW_THREADS
    }
    """
    void ajp_gc_untrack(PyObject* o)
    void ajp_gc_track(PyObject* o)
    void ajp_gil_yield()
    bint ajp_gc_collects()


cdef Py_ssize_t _GC_QUIET_BYTES = 16384  # documents this large settle their containers


# The settled containers are kept in blocks that are never moved: a block that fills up is
# followed by a new, larger one (up to _SETTLED_BLOCK_MAX), so a large document's list is
# never copied, where one growing array was reallocated (and copied) at every doubling.
cdef enum:
    _SETTLED_BLOCK_FIRST = 256
    _SETTLED_BLOCK_MAX = 1 << 16


cdef struct SettledBlock:
    SettledBlock* prev    # the block filled before this one, or NULL
    Py_ssize_t n          # its containers, once full (the newest block's count is Settled.n)


cdef struct Settled:
    bint on               # settle finished containers (a large document)
    SettledBlock* block   # the newest block, or NULL; its containers (strong references)
    PyObject** items      # follow its header: items = <PyObject**>(block + 1)
    Py_ssize_t n
    Py_ssize_t cap


cdef void _settled_init(Settled* s, bint on) noexcept:
    s.on = on
    s.block = NULL
    s.items = NULL
    s.n = 0
    s.cap = 0


cdef inline void _settle(Settled* s, PyObject* container) noexcept:
    """A finished container of a large document leaves the collector's lists until the end.

    A large document creates containers by the hundred thousand, and every young
    generation collection would rescan the growing, acyclic tree.  Instead of
    switching the collector off (its state belongs to the application, and other
    threads), each container is untracked once complete and tracked again by
    ``_settled_release`` when the document is; only the open containers (at most
    ``max_depth``) stay visible meanwhile.  A document decoded while the collector is off
    (gc.disable(), as some servers run) settles nothing: no collection is due, and each
    container saves its untracking and tracking again (~40 instructions).  Should another
    thread switch the collector on meanwhile (the integer rule runs Python code, where
    threads switch), the containers are simply tracked as any others: a collection may
    scan them, as it would without settling.  The strong reference kept here makes the
    release safe even when a duplicate member (``allow_duplicate_keys``) dropped the
    container from the tree.  Never fails: when no block can be added, the container
    simply stays tracked (the collector may scan it; nothing else changes), so settling
    needs no error path.

    Only tracked containers come here (see _tree_close), so the release tracks exactly
    what was tracked, without asking the collector: every list (PyList_New tracks it), and
    a dict that holds a list or a dict.  CPython creates a dict untracked and tracks it when
    a value (or name) that may be tracked goes in (MAINTAIN_TRACKING in
    Objects/dictobject.c, 3.10-3.13): among decoded values only lists and dicts may be.  A
    dict of atoms is never tracked, so it is left alone.  No one else can track a settled
    container again before the release: until decode returns, only the tree holds it,
    and it is complete (nothing is inserted into it).
    """
    if s.n == s.cap and not _settled_grow(s):
        return
    ajp_gc_untrack(container)
    _incref(container)
    s.items[s.n] = container
    s.n += 1


cdef bint _settled_grow(Settled* s) noexcept:
    """A new block for more settled containers; False (and no exception) when memory is short."""
    cdef Py_ssize_t cap = _SETTLED_BLOCK_FIRST if s.block == NULL else min(s.cap * 2, <Py_ssize_t>_SETTLED_BLOCK_MAX)
    cdef SettledBlock* b = <SettledBlock*>PyMem_Malloc(sizeof(SettledBlock) + cap * sizeof(PyObject*))
    if b == NULL:
        return False
    if s.block != NULL:
        s.block.n = s.n
    b.prev = s.block
    b.n = 0
    s.block = b
    s.items = <PyObject**>(b + 1)
    s.n = 0
    s.cap = cap
    return True


cdef void _settled_release(Settled* s) noexcept:
    """The document is complete: every settled container is tracked again.

    First the GIL is offered to a thread waiting for it (a large document held it for long
    enough that one has asked, after the switch interval; otherwise the pair costs a
    lock and an unlock).  Were the switch left to the interpreter, it would come just after
    decode returns, with this whole tree young in the collector's lists: every collection
    the other thread's allocations start would scan it while it lives (and promote it
    towards a full collection), which took two threads decoding 10 MB to 0.35x one thread's
    work.  Here the tree is untracked and reachable from this C frame only, and nothing is
    read or written while the GIL is away.
    """
    cdef SettledBlock* b = s.block
    cdef PyObject** items
    cdef Py_ssize_t k, count = s.n
    if b != NULL:
        ajp_gil_yield()
    while b != NULL:
        items = <PyObject**>(b + 1)
        for k in range(count):
            ajp_gc_track(items[k])
        b = b.prev
        if b != NULL:
            count = b.n
    _settled_clear(s)


cdef void _settled_clear(Settled* s) noexcept:
    """Drop the references and the blocks (after a refusal the untracked containers are simply freed)."""
    cdef SettledBlock* b = s.block
    cdef SettledBlock* prev
    cdef PyObject** items
    cdef Py_ssize_t k, count = s.n
    s.block = NULL
    s.items = NULL
    s.n = 0
    s.cap = 0
    while b != NULL:
        items = <PyObject**>(b + 1)
        for k in range(count):
            _decref(items[k])
        prev = b.prev
        if prev != NULL:
            count = prev.n
        PyMem_Free(b)
        b = prev


# ---------------------------------------------------------------------------
# Open containers: their members first, each container once it closes
# ---------------------------------------------------------------------------
# Open containers are not built while their members are read: the values wait on one C
# stack (``OpenTree.vals``; an object's as name, value, name, value ...) and each container
# is created complete when it closes, a list at its exact size and a dict presized for its
# members, so neither grows nor rehashes as it fills.  Member names are checked for
# duplicates against the object's earlier names as they are read while it has few
# (decoder.pxi, parse_key); past _LINEAR_NAMES names, by the dict itself when the object
# closes: inserting a name it already holds does not grow it, so a dict smaller than its
# pairs means a repeat, which is then located (_tree_repeated_name) and refused at its byte.
# The first problem in byte order stays the one reported: every refusal first looks for a
# repeat in the open objects (decoder.pxi, _fail), whose names all precede it.

cdef extern from "Python.h":
    ctypedef Py_ssize_t Py_hash_t
    object PyDict_New()
    object PyList_New(Py_ssize_t size)
    void PyList_SET_ITEM_raw "PyList_SET_ITEM" (object l, Py_ssize_t k, PyObject* v)  # steals v

cdef extern from *:
    """
    /* A dict with room for n members (CPython's own presizing, in cpython/dictobject.h on 3.10-3.14). */
    #define ajp_dict_presized(n) _PyDict_NewPresized(n)
    /* d[k] = v where h is hash(k), already known (-1: not computed): CPython's own insertion
       without the hash lookup.  _PyDict_SetItem_KnownHash is in cpython/dictobject.h on
       3.10-3.12 and exported from the internal pycore_dict.h on 3.13-3.14, declared here as there;
       any other version (or PyPy) takes PyDict_SetItem. */
    #if !defined(PYPY_VERSION) && PY_VERSION_HEX >= 0x030D0000 && PY_VERSION_HEX < 0x030F0000
    PyAPI_FUNC(int) _PyDict_SetItem_KnownHash(PyObject *mp, PyObject *key, PyObject *item, Py_hash_t hash);
    #endif
    #if !defined(PYPY_VERSION) && PY_VERSION_HEX < 0x030F0000
    #define ajp_dict_set_known(d, k, v, h) ((h) == -1 ? PyDict_SetItem(d, k, v) : _PyDict_SetItem_KnownHash(d, k, v, h))
    #else
    #define ajp_dict_set_known(d, k, v, h) PyDict_SetItem(d, k, v)
    #endif
    /* A new dict of the count / 2 pairs v[0], v[1], ... (hashes[k]: hash(v[k]) for k < known;
       past it the name gives its own, a str caching it), or NULL with an exception.  Not
       inlined: only objects past _LINEAR_NAMES members come here (_tree_close_wide), and
       the parse loop it would be inlined into is hot. */
    __attribute__((noinline)) static PyObject *ajp_dict_from_pairs(PyObject **v, const Py_hash_t *hashes, Py_ssize_t count, Py_ssize_t known) {
        PyObject *d = _PyDict_NewPresized(count >> 1);
        if (d == NULL)
            return NULL;
        for (Py_ssize_t k = 0; k < count; k += 2) {
            if (ajp_dict_set_known(d, v[k], v[k + 1], k < known ? hashes[k] : -1) < 0) {
                Py_DECREF(d);
                return NULL;
            }
        }
        return d;
    }
    """
    # New references as PyObject*: the decoder hands each one on (to the tree, to its container).
    PyObject* _dict_presized "ajp_dict_presized" (Py_ssize_t n) except NULL
    PyObject* _dict_new "PyDict_New" () except NULL
    PyObject* _list_new "PyList_New" (Py_ssize_t size) except NULL
    int _dict_set_known "ajp_dict_set_known" (PyObject* d, PyObject* k, PyObject* v, Py_hash_t h)  # -1 with an exception
    PyObject* _dict_from_pairs "ajp_dict_from_pairs" (PyObject** v, const Py_hash_t* hashes, Py_ssize_t count, Py_ssize_t known) except NULL
    void _list_set_item "PyList_SET_ITEM" (PyObject* l, Py_ssize_t k, PyObject* v)  # steals v

cdef enum:
    _LINEAR_NAMES = 12   # an object's names compared one by one up to this many (then: at its close)
    _TREE_INLINE = 64    # members and frames held inside the OpenTree until they outgrow it:
    _FRAMES_INLINE = 16  # a small document allocates no stacks at all


cdef struct Frame:
    Py_ssize_t base      # index in vals of the container's first element (or first name)
    unsigned long long names  # bit (hash & 63) of each of its names so far (see parse_key)
    bint is_object
    bint holds_container  # a large document's object that holds a list or a dict (see _settle)


# An OpenTree lives on the C stack of one decode call (~1.4 KB, its first stacks inline),
# so it needs no allocation for small documents and is private to that call, whatever
# other threads or a re-entrant decode do.  It never moves while in use.
cdef struct OpenTree:
    PyObject** vals      # strong references: the members of the open containers, outermost first
    Py_hash_t* hashes    # hashes[k]: the hash of the member name vals[k], one of an object's first
                         # _LINEAR_NAMES names; of a later name, its byte (_tree_repeated_name)
    Py_ssize_t n
    Py_ssize_t cap       # of vals
    Py_ssize_t cap_hashes  # of hashes, at most cap: grown only when a name needs it (_tree_grow_hashes)
    Frame* frames        # the open containers, outermost first
    Py_ssize_t depth
    Py_ssize_t cap_frames
    PyObject* vals_inline[_TREE_INLINE]
    Py_hash_t hashes_inline[_TREE_INLINE]
    Frame frames_inline[_FRAMES_INLINE]


cdef void _tree_init(OpenTree* t) noexcept:
    t.vals = t.vals_inline
    t.hashes = t.hashes_inline
    t.n = 0
    t.cap = _TREE_INLINE
    t.cap_hashes = _TREE_INLINE
    t.frames = t.frames_inline
    t.depth = 0
    t.cap_frames = _FRAMES_INLINE


cdef void _tree_clear(OpenTree* t) noexcept:
    """Drop every reference (after a refusal the members are simply freed)."""
    cdef Py_ssize_t k
    cdef PyObject* o
    for k in range(t.n):
        o = t.vals[k]
        t.vals[k] = NULL
        Py_XDECREF(o)
    t.n = 0
    t.depth = 0
    if t.vals != t.vals_inline:
        PyMem_Free(t.vals)
    if t.hashes != t.hashes_inline:
        PyMem_Free(t.hashes)
    if t.frames != t.frames_inline:
        PyMem_Free(t.frames)
    _tree_init(t)


cdef void* _grown(void* old, void* inline_buf, Py_ssize_t used, Py_ssize_t size) noexcept:
    """``old`` (the inline buffer or a heap one) resized to ``size`` bytes, its first ``used`` kept; NULL if out of memory."""
    cdef void* grown
    if old != inline_buf:
        return PyMem_Realloc(old, size)
    grown = PyMem_Malloc(size)
    if grown != NULL:
        memcpy(grown, old, used)
    return grown


cdef int _tree_grow(OpenTree* t) except -1:
    """Room for more members: vals alone grows (the names' hashes follow in _tree_grow_hashes).

    A long array's items never need a hash: growing both stacks in step copied a hash slot per
    item at every doubling (and held it), 8 bytes an item for nothing.
    """
    cdef Py_ssize_t cap = t.cap * 2 + 64
    cdef PyObject** grown = <PyObject**>_grown(t.vals, t.vals_inline, t.n * sizeof(PyObject*), cap * sizeof(PyObject*))
    if grown == NULL:
        raise MemoryError()
    t.vals = grown
    t.cap = cap
    return 0


cdef int _tree_grow_hashes(OpenTree* t) except -1:
    """Room for a name's hash at t.n (< t.cap): hashes grows to vals' capacity."""
    cdef Py_hash_t* grown = <Py_hash_t*>_grown(t.hashes, t.hashes_inline, t.cap_hashes * sizeof(Py_hash_t),
                                                t.cap * sizeof(Py_hash_t))
    if grown == NULL:
        raise MemoryError()
    t.hashes = grown
    t.cap_hashes = t.cap
    return 0


cdef inline int _tree_push(OpenTree* t, PyObject* v) except -1:
    """A member of the innermost open container is complete: the tree takes over the
    reference ``v`` (and drops it if it cannot grow)."""
    if t.n == t.cap:
        _tree_grow_for(t, v)
    t.vals[t.n] = v
    t.n += 1
    return 0


cdef int _tree_grow_for(OpenTree* t, PyObject* v) except -1:
    """``_tree_grow`` for the pending member ``v``, dropped if that fails."""
    try:
        _tree_grow(t)
    except MemoryError:
        _decref(v)
        raise
    return 0


cdef inline int _tree_open(OpenTree* t, bint is_object) except -1:
    cdef Py_ssize_t cap
    cdef Frame* grown
    if t.depth == t.cap_frames:
        cap = t.cap_frames * 2 + 16
        grown = <Frame*>_grown(t.frames, t.frames_inline, t.depth * sizeof(Frame), cap * sizeof(Frame))
        if grown == NULL:
            raise MemoryError()
        t.frames = grown
        t.cap_frames = cap
    t.frames[t.depth].base = t.n
    t.frames[t.depth].names = 0
    t.frames[t.depth].is_object = is_object
    t.frames[t.depth].holds_container = False
    t.depth += 1
    return 0


cdef inline unsigned char _tree_closer(OpenTree* t) noexcept:
    """The byte that closes the innermost open container: `}` for an object, `]` for an array, 0 for none."""
    if t.depth == 0:
        return 0
    return 0x7D if t.frames[t.depth - 1].is_object else 0x5D


cdef PyObject* _tree_close(OpenTree* t, Settled* s) except NULL:
    """Build the innermost open container (an array, or an object of at most _LINEAR_NAMES
    members: see _tree_close_wide) from its members, and drop it and them from the stacks;
    a new reference."""
    cdef Frame* f = &t.frames[t.depth - 1]
    cdef Py_ssize_t base = f.base, count = t.n - base, k
    cdef PyObject** v = t.vals + base
    cdef Py_hash_t* hashes = t.hashes + base  # hashes[k]: hash(v[k]) for each name (parse_key)
    cdef PyObject* container
    if not f.is_object:
        container = _list_new(count)
        for k in range(count):
            _list_set_item(container, k, v[k])  # steals the stack's reference
        t.n = base
    else:
        container = _dict_presized(count >> 1)
        t.n = base  # the members leave the stack: each pair is dropped once the dict has it
        for k in range(0, count, 2):
            if _dict_set_known(container, v[k], v[k + 1], hashes[k]) < 0:
                for k in range(k, count):  # the pairs the dict does not have
                    _decref(v[k])
                _decref(container)
                return NULL
            _decref(v[k])
            _decref(v[k + 1])
    _tree_closed(t, s, container)
    return container


cdef int _tree_close_wide(OpenTree* t, Settled* s, bint unique, PyObject** out) except -1:
    """_tree_close of an object past _LINEAR_NAMES members (``*out``: a new reference), or 1
    (nothing built, nothing dropped) when ``unique`` and it repeats a name.

    Its later names were not checked when read: the dict checks them all, since inserting
    a name it holds does not grow it.  The members stay on the stack until it has them all,
    so that a repeat can be located (_tree_repeated_name)."""
    cdef Frame* f = &t.frames[t.depth - 1]
    cdef Py_ssize_t base = f.base, count = t.n - base, k
    cdef PyObject** v = t.vals + base
    # The first names' hashes, then the names' bytes; on failure the members, still on the
    # stack, are dropped with it (_tree_clear).
    cdef PyObject* container = _dict_from_pairs(v, t.hashes + base, count, 2 * _LINEAR_NAMES)
    if unique and PyDict_GET_SIZE(<object>container) != count >> 1:
        _decref(container)
        return 1
    t.n = base
    for k in range(count):
        _decref(v[k])
    _tree_closed(t, s, container)
    out[0] = container
    return 0


cdef inline void _tree_closed(OpenTree* t, Settled* s, PyObject* container) noexcept:
    """The innermost container is built: its frame goes (a large document settles it)."""
    cdef Frame* f = &t.frames[t.depth - 1]
    t.depth -= 1
    if s.on:
        if not f.is_object or f.holds_container:
            _settle(s, container)
        _tree_holds_container(t)


cdef inline void _tree_holds_container(OpenTree* t) noexcept:
    """A list or a dict goes into the innermost open container (a large document: see _settle)."""
    if t.depth > 0:
        t.frames[t.depth - 1].holds_container = True


cdef list _tree_path(OpenTree* t, Py_ssize_t depth):
    """The JSON Pointer steps to the open container ``depth - 1`` (the innermost: ``t.depth``):
    names and indexes of the open members."""
    cdef list steps = []
    cdef Py_ssize_t k, child
    for k in range(depth - 1):
        child = t.frames[k + 1].base  # the open member of container k starts here
        if t.frames[k].is_object:
            steps.append(<object>t.vals[child - 1])
        else:
            steps.append(child - t.frames[k].base)
    return steps


cdef inline bint _same_str(PyObject* a, PyObject* b) noexcept:
    """Two exact strs built at their canonical kind: equal iff same length, kind and data."""
    cdef Py_ssize_t size = PyUnicode_GET_LENGTH(<object>a)
    cdef int kind = PyUnicode_KIND(<object>a)
    if size != PyUnicode_GET_LENGTH(<object>b) or kind != PyUnicode_KIND(<object>b):
        return False
    return memcmp(PyUnicode_DATA(<object>a), PyUnicode_DATA(<object>b), size * kind) == 0


cdef PyObject* _tree_repeated_name(OpenTree* t, Py_ssize_t depth, Py_ssize_t* at) except? NULL:
    """The first name of the open object ``depth`` (past _LINEAR_NAMES names) equal to one of
    its earlier names (borrowed), and its byte in ``*at``; NULL when there is none.

    A refusal's path only: the object's first _LINEAR_NAMES names were checked as they were
    read, so a repeat is a later name, whose byte ``hashes`` holds (parse_key)."""
    cdef Frame* f = &t.frames[depth]
    cdef Py_ssize_t end = t.frames[depth + 1].base if depth + 1 < t.depth else t.n
    cdef Py_ssize_t k
    cdef set seen = set()
    if not f.is_object or end - f.base <= 2 * _LINEAR_NAMES:
        return NULL
    for k in range(f.base, end, 2):
        name = <object>t.vals[k]
        if name in seen:
            at[0] = t.hashes[k]
            return t.vals[k]
        seen.add(name)
    return NULL
