# Included by native/_core_c.pyx (shares its namespace), before canonical_strings.pxi.  Native
# only: the pure twin (ajpcore/_core_py/canonical_writer.py) collects str pieces and encodes them;
# here the canonical writer (canonical_writer.pxi) and the string and number writers put bytes into
# a Writer, whose buffer, chunks, spare and failure path are this file's.

# ---------------------------------------------------------------------------
# The canonical writer's output: buffer, streamed chunks, the spare Writer, refusals
# ---------------------------------------------------------------------------

cdef void _w_init(Writer* w, Py_ssize_t chunk, object write):
    cdef int i
    w.data = w.scratch
    w.length = 0
    w.cap = _SCRATCH
    w.buf = NULL
    w.chunk = chunk
    w.total = 0
    w.write = <PyObject*>write
    w.depth = 0
    # Unbounded mode runs no Python code while it writes, so nothing can mutate or free
    # the value: its members are not referenced, until something may run code (_w_own).
    w.borrowed = chunk == 0
    w.members = w.inline_members
    w.mtop = 0
    w.mcap = _INLINE_MEMBERS
    for i in range(_SHAPES):
        w.shapes[i].seen = NULL  # shapes are recorded within one call only


cdef Writer* _spare_writer = NULL  # one heap Writer kept between calls (the GIL guards it)


cdef Writer* _w_acquire(Py_ssize_t chunk, object write) except NULL:
    """A ready Writer on the heap: the spare one, or a new one while the spare is in use."""
    global _spare_writer
    cdef Writer* w = _spare_writer
    cdef int i
    if w != NULL:
        _spare_writer = NULL
    else:
        w = <Writer*>PyMem_Malloc(sizeof(Writer))
        if w == NULL:
            raise MemoryError()
        # Shapes start empty and are emptied again by _w_release (a stale ``seen`` is harmless).
        w.shapes_live = 0
        for i in range(_SHAPES):
            w.shapes[i].n = 0
            w.shapes[i].seen = NULL
            w.shapes[i].generation = 0
    _w_init(w, chunk, write)
    return w


cdef void _w_recycle(Writer* w):
    """Release what ``w`` owns and keep it as the spare (or free it if there is one)."""
    global _spare_writer
    _w_release(w)
    if _spare_writer == NULL:
        _spare_writer = w
    else:
        PyMem_Free(w)


cdef void _w_release(Writer* w):
    """Drop everything the writer still owns (after success or an exception)."""
    cdef Py_ssize_t i
    if not w.borrowed:
        for i in range(w.mtop):
            _decref(w.members[i].key)
            _decref(w.members[i].value)
    w.mtop = 0
    cdef int k
    while w.shapes_live:
        k = ajp_ctz(w.shapes_live)
        w.shapes_live &= w.shapes_live - 1
        for i in range(w.shapes[k].n):
            _decref(w.shapes[k].keys[i])
        w.shapes[k].n = 0
    if w.members != w.inline_members:
        PyMem_Free(w.members)
        w.members = w.inline_members
    Py_XDECREF(w.buf)
    w.buf = NULL


cdef int _w_start_stream(Writer* w) except -1:
    """Streaming starts in the stack scratch: a small document costs one exact-size bytes."""
    w.data = w.scratch
    w.cap = w.chunk if w.chunk < _SCRATCH else _SCRATCH
    return 0


cdef int _w_new_chunk(Writer* w) except -1:
    w.buf = PyBytes_FromStringAndSize_raw(NULL, w.chunk)
    w.data = PyBytes_AS_STRING(<object>w.buf)
    w.cap = w.chunk
    return 0


cdef int _w_flush(Writer* w, bint more) except -1:
    """Streaming: hand what is buffered over as bytes and, if ``more``, start a new chunk.

    A chunk filled in a bytes object is handed over as that object (no copy);
    the stack scratch, used only until the first flush, is copied out.
    """
    cdef PyObject* full
    if w.length == 0:
        return 0
    if w.buf == NULL:
        full = PyBytes_FromStringAndSize_raw(w.scratch, w.length)
    else:
        if w.length != w.cap:
            _PyBytes_Resize(&w.buf, w.length)
        full = w.buf
        w.buf = NULL
    w.data = NULL
    w.total += w.length
    w.length = 0
    cdef bint entered = False
    try:
        # The callback may re-enter the encoder: the interpreter's recursion limit bounds it.
        ajp_enter_recursive_call(" in a canonicalize_into write callback")
        entered = True
        (<object>w.write)(<object>full)
    finally:
        if entered:
            Py_LeaveRecursiveCall()
        Py_XDECREF(full)
    if more:
        _w_new_chunk(w)
    return 0


cdef int _w_grow(Writer* w, Py_ssize_t need) except -1:
    """Unbounded: room for ``need`` more bytes (leave the stack scratch for a bytes object)."""
    cdef Py_ssize_t cap = w.cap
    while cap - w.length < need:
        # Fourfold below 256 KiB, then doubling: 4 -> 16 -> 64 -> 256 KiB copies 84 KiB for a
        # 200 KB document where doubling copied 252 KiB, and a 64 KB one still fits 64 KiB
        # (growing eightfold took result64k to a 256 KiB buffer, fresh memory each call: ~18 %).
        cap = cap * 4 if cap < (1 << 18) else cap * 2
    if w.buf == NULL:
        w.buf = PyBytes_FromStringAndSize_raw(NULL, cap)
        memcpy(PyBytes_AS_STRING(<object>w.buf), w.scratch, w.length)
    else:
        _PyBytes_Resize(&w.buf, cap)
    w.data = PyBytes_AS_STRING(<object>w.buf)
    w.cap = cap
    return 0


cdef int _w_put_slow(Writer* w, const char* src, Py_ssize_t n) except -1:
    cdef Py_ssize_t room
    if w.chunk == 0:
        _w_grow(w, n)
        memcpy(w.data + w.length, src, n)
        w.length += n
        return 0
    while n > 0:
        room = w.cap - w.length
        if room == 0:
            _w_flush(w, True)
            room = w.cap
        if room > n:
            room = n
        memcpy(w.data + w.length, src, room)
        w.length += room
        src += room
        n -= room
    return 0


cdef inline int _w_put(Writer* w, const char* src, Py_ssize_t n) except -1:
    if w.cap - w.length >= n:
        memcpy(w.data + w.length, src, n)
        w.length += n
        return 0
    return _w_put_slow(w, src, n)


cdef inline int _w_put_char(Writer* w, char c) except -1:
    if w.length < w.cap:
        w.data[w.length] = c
        w.length += 1
        return 0
    return _w_put_slow(w, &c, 1)


cdef object _w_finish(Writer* w):
    """Unbounded mode: the output as bytes (the writer keeps nothing)."""
    cdef object result
    if w.buf == NULL:
        return PyBytes_FromStringAndSize(w.scratch, w.length)
    if w.length >= _COPY_OUT:
        # A large output is copied out at its exact size and the grown buffer freed
        # whole, instead of shrinking that buffer in place.  glibc sizes its mmap
        # threshold by the blocks freed, so this keeps the next large document in
        # reused heap memory; shrinking in place left every later call to fault in
        # fresh pages (about 2000 page faults, 20 % of the time, for 8 MB).
        return PyBytes_FromStringAndSize(w.data, w.length)
    _PyBytes_Resize(&w.buf, w.length)
    result = <object>w.buf
    Py_XDECREF(w.buf)
    w.buf = NULL
    return result


cdef str _w_path(Writer* w):
    steps = []
    cdef int i
    for i in range(w.depth):
        if w.steps[i].key == NULL:
            steps.append(w.steps[i].index)
        else:
            steps.append(<object>w.steps[i].key)
    return format_path(steps)


cdef void _w_own(Writer* w) noexcept:
    """Take the references unbounded mode left borrowed, before anything that may run Python code.

    A finalizer (run by a garbage collection that any allocation of a tracked object may
    start), another thread (switched to while bytecode runs) or a metaclass's
    ``__qualname__`` may mutate or free the value's containers: from here on every
    member on the stack, and every member pushed later, is a strong reference.
    """
    cdef Py_ssize_t i
    if w.borrowed:
        for i in range(w.mtop):
            _incref(w.members[i].key)
            _incref(w.members[i].value)
        w.borrowed = False


cdef int _w_fail(Writer* w, str reason) except -1:
    _w_own(w)  # the path's names are read after the list for it is allocated
    raise EncodeError(reason, _w_path(w))
