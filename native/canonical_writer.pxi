# Included by native/_core_c.pyx (shares its namespace).  Pure twin: ajpcore/_core_py/canonical_writer.py.

# ---------------------------------------------------------------------------
# Canonical JSON writer (RFC 8785): output buffer, values, containers
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


from ajpcore._core_rules import _RECURSION_REASON  # one text for both twins

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


# -- values ------------------------------------------------------------

# The refusals are built out of line: their temporaries would otherwise widen the frame of
# _put_value, which recurses once per nesting level (512 levels fit a 128 KiB stack).

cdef int _fail_value(Writer* w, object v) except -1:
    """Refuse a non-finite float or a value of no JSON type."""
    _w_own(w)  # a metaclass may define __qualname__
    if PyFloat_Check(v):
        _w_fail(w, f"Non-finite float `{float.__repr__(v)}` has no JSON form")
    _w_fail(w, f"Unsupported type `{type(v).__qualname__}`")


cdef int _fail_name(Writer* w, PyObject* key, bint duplicate) except -1:
    """Refuse a member name that is not a str, or one that repeats."""
    _w_own(w)
    if duplicate:
        _w_fail(w, f"Duplicate object key `{str.__str__(<object>key)}`")
    _w_fail(w, f"Object key must be `str`, got `{type(<object>key).__qualname__}`")


# _put_dict and _put_array are inlined into _put_value, their only caller, by declaring them
# always_inline in C (as decoder.pxi does for _parse_key): the three recurse through each other,
# and one frame per level is what lets the deepest value accepted (MAX_DEPTH) fit a 128 KiB
# thread stack (musl's default; tests/receive/test_hostile_callers.py).  Left to GCC, the choice moved
# with the array step's size: once it grew, _put_dict went out of line and a level of objects
# took two frames (144 + 144 bytes, 147 KiB for 512 levels).  The names are Cython's; were they
# to change, the declarations would name nothing and that test would fail.
cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    struct __pyx_t_7ajpcore_7_core_c_Writer;
    static inline __attribute__((always_inline)) int __pyx_f_7ajpcore_7_core_c__put_dict(struct __pyx_t_7ajpcore_7_core_c_Writer *, PyObject *);
    static inline __attribute__((always_inline)) int __pyx_f_7ajpcore_7_core_c__put_array(struct __pyx_t_7ajpcore_7_core_c_Writer *, PyObject *);
    #endif
    """


cdef int _put_value(Writer* w, object v) except -1:
    cdef double x
    if PyUnicode_CheckExact(v):
        return _put_text(w, v)
    if PyLong_CheckExact(v):
        return _put_integer(w, v)
    if PyFloat_CheckExact(v):
        return _put_float(w, v)
    if PyDict_Check(v):
        return _put_dict(w, v)
    if PyList_Check(v) or PyTuple_Check(v):
        return _put_array(w, v)
    if v is None:
        return _w_put(w, b"null", 4)
    if v is True:
        return _w_put(w, b"true", 4)
    if v is False:
        return _w_put(w, b"false", 5)
    if PyUnicode_Check(v):
        return _put_str(w, v)
    if PyLong_Check(v):
        return _put_int(w, v)
    if PyFloat_Check(v):
        x = PyFloat_AS_DOUBLE(v)
        if not isfinite(x):
            _fail_value(w, v)
        return _put_double(w, x)
    _fail_value(w, v)


cdef int _push_members(Writer* w, object d, Py_ssize_t n, bint* exact, bint shaped, Shape** recorded) except -1:
    """Snapshot the members of ``d`` onto the member stack, refusing non-str keys (in insertion order).

    Each name gets its sort prefix: its first 8 bytes when all names are Latin-1
    (ajp_name_prefix), else its first 4 UTF-16 code units (ajp_name_prefix16).  When ``shaped`` and the names are the very objects of a recorded shape, in the same
    order, the members are placed in its sorted order instead (then they are known exact
    str and no prefix is computed): returns 1 and sets ``recorded`` to the shape; else 0.
    """
    cdef Py_ssize_t pos = 0, need = w.mtop + n, count, j
    cdef bint latin1 = True
    cdef Shape* sh = NULL
    cdef PyObject* key
    cdef PyObject* value
    cdef Member* m
    cdef Member* into
    if need > w.mcap:
        if w.members == w.inline_members:
            m = <Member*>PyMem_Malloc(need * 2 * sizeof(Member))
            if m != NULL:
                memcpy(m, w.inline_members, w.mtop * sizeof(Member))
        else:
            m = <Member*>PyMem_Realloc(w.members, need * 2 * sizeof(Member))
        if m == NULL:
            raise MemoryError()
        w.members = m
        w.mcap = need * 2
    exact[0] = True
    # First only collect the pointers and prefetch the values: their cache misses then
    # overlap instead of stalling one by one.  Nothing runs between the loops, so the
    # borrowed pointers stay valid until references are taken.  A record whose first name
    # starts a recorded shape of its size is collected into scratch, to be placed in order.
    into = w.members + w.mtop
    count = 0
    if shaped and 1 < n <= _SHAPE_MAX and PyDict_Next(d, &pos, &key, &value):
        sh = _shape_of(w, key)
        if sh.n == n and sh.keys[0] == key:
            into = w.shape_tmp
        else:
            sh = NULL
        into[0].key = key
        into[0].value = value
        ajp_prefetch(value)
        count = 1
    while w.mtop + count < need and PyDict_Next(d, &pos, &key, &value):
        m = &into[count]
        m.key = key
        m.value = value
        ajp_prefetch(value)
        count += 1
    if sh != NULL:
        # A recorded shape holds strong references, so equal pointers are the same names.
        if count != sh.n:
            sh = NULL
        else:
            for j in range(1, count):
                if into[j].key != sh.keys[j]:
                    sh = NULL
                    break
        m = w.members + w.mtop
        if sh == NULL:
            memcpy(m, into, count * sizeof(Member))
        else:
            for j in range(count):
                m[j] = into[sh.order[j]]
            if not sh.names_ready:
                # Its third record in a row: the usual short ASCII names rendered once as "name":.
                for j in range(count):
                    sh.name_length[j] = <unsigned char>ajp_put_short_name(sh.names[j], m[j].key)
                sh.names_ready = True
            if not w.borrowed:
                for j in range(count):
                    _incref(m[j].key)
                    _incref(m[j].value)
            w.mtop += count
            recorded[0] = sh
            return 1
    for j in range(count):
        m = &w.members[w.mtop]
        key = m.key
        if not PyUnicode_CheckExact(<object>key):
            if not PyUnicode_Check(<object>key):
                _fail_name(w, key, False)
            exact[0] = False
        ajp_unicode_ready(<object>key)  # names are compared through their PEP 393 data
        if not w.borrowed:
            _incref(key)
            _incref(m.value)
        if _name_kind(key) == PyUnicode_1BYTE_KIND:
            m.prefix = ajp_name_prefix(_name_data(key), _name_length(key))
        else:
            m.prefix = ajp_name_prefix16(_name_kind(key), _name_data(key), _name_length(key))
            latin1 = False
        w.mtop += 1
    if not latin1:
        # Names of several kinds: the Latin-1 ones take the UTF-16 prefix too, so all compare.
        for j in range(w.mtop - count, w.mtop):
            key = w.members[j].key
            if _name_kind(key) == PyUnicode_1BYTE_KIND:
                w.members[j].prefix = ajp_name_prefix16(PyUnicode_1BYTE_KIND, _name_data(key), _name_length(key))
    return 0


cdef inline Shape* _shape_of(Writer* w, PyObject* first) noexcept:
    return &w.shapes[(<size_t>first >> 4) % _SHAPES]


cdef void _sort_new_shape(Writer* w, Member* m, Py_ssize_t n, bint exact) noexcept:
    """Sort members of a shape not recorded; record it on its second object in a row."""
    cdef PyObject** names = w.shape_names
    cdef PyObject* first = m[0].key
    cdef Shape* sh = _shape_of(w, first)
    cdef bint record = exact and n <= _SHAPE_MAX and sh.seen == first
    cdef Py_ssize_t s, j
    sh.seen = first
    if record:
        for j in range(n):
            names[j] = m[j].key
    # Names sort mostly by their prefixes (their first 8 Latin-1 bytes or 4 UTF-16 units).
    _sort_members(m, n)
    if not record:
        return
    for j in range(sh.n):
        _decref(sh.keys[j])
    for j in range(n):
        sh.keys[j] = names[j]
        _incref(names[j])
    for s in range(n):
        for j in range(n):
            if m[s].key == names[j]:
                sh.order[s] = <unsigned char>j
                break
    sh.n = n
    sh.generation += 1
    sh.names_ready = False
    w.shapes_live |= 1u << (sh - w.shapes)


cdef int _put_dict(Writer* w, object d) except -1:
    cdef Py_ssize_t i, n, base, written
    cdef bint exact, same, shaped
    cdef Member* m
    cdef PyObject* value
    cdef char* dst
    cdef Step* step
    cdef Shape* sh = NULL
    cdef unsigned int generation = 0
    if w.depth >= _MAX_DEPTH:
        _w_fail(w, f"Nesting deeper than {_MAX_DEPTH}")
    n = PyDict_GET_SIZE(d)
    if n == 0:
        return _w_put(w, b"{}", 2)
    base = w.mtop
    # Only an array's objects are matched against recorded shapes: those are the records.
    shaped = w.depth > 0 and w.steps[w.depth - 1].key == NULL
    same = _push_members(w, d, n, &exact, shaped, &sh)
    n = w.mtop - base
    if same:
        # Arrays of records repeat one shape: its order is known (the members are in it).
        generation = sh.generation
    elif n > 1:
        if shaped:
            _sort_new_shape(w, w.members + base, n, exact)
        else:
            # Names sort mostly by their prefixes (their first 8 Latin-1 bytes or 4 UTF-16 units).
            _sort_members(w.members + base, n)
        if not exact:
            for i in range(1, n):
                m = &w.members[base + i]
                if _compare_names(m.key, (m - 1).key) == 0:
                    _fail_name(w, m.key, True)
    _w_put_char(w, b'{')
    step = &w.steps[w.depth]
    w.depth += 1
    for i in range(n):
        # Index afresh each time: a nested object may have moved the member stack.
        m = &w.members[base + i]
        step.key = m.key
        written = 0
        if w.cap - w.length >= 32:
            # The usual short ASCII name, with its comma, in one go (no string writer call):
            # a record's from the text its shape rendered once, until a nested record of
            # another shape takes the shape's slot (its generation changes).
            dst = w.data + w.length
            dst[0] = b','
            if sh != NULL and sh.generation == generation and sh.name_length[i]:
                memcpy(dst + (i != 0), sh.names[i], 24)
                written = sh.name_length[i]
            else:
                written = ajp_put_short_name(dst + (i != 0), m.key)
            if written:
                w.length += written + (i != 0)
        if not written:
            if i:
                _w_put_char(w, b',')
            _put_str(w, <object>m.key)
            _w_put_char(w, b':')
        value = w.members[base + i].value
        if PyUnicode_CheckExact(<object>value):
            written = ajp_put_value_text_member(w.data + w.length, w.cap - w.length, value)
            if written:
                w.length += written
            else:
                _put_str_general(w, <object>value)
        elif PyLong_CheckExact(<object>value):
            _put_integer(w, <object>value)
        elif PyFloat_CheckExact(<object>value):
            _put_float(w, <object>value)
        else:
            _put_value(w, <object>value)
    w.depth -= 1
    if not w.borrowed:
        for i in range(base, w.mtop):
            _decref(w.members[i].key)
            _decref(w.members[i].value)
    w.mtop = base
    return _w_put_char(w, b'}')


cdef int _put_array(Writer* w, object a) except -1:
    cdef Py_ssize_t i, n, run_end
    cdef bint is_list = PyList_Check(a)
    cdef object item
    cdef Step* step
    if w.depth >= _MAX_DEPTH:
        _w_fail(w, f"Nesting deeper than {_MAX_DEPTH}")
    if (PyList_GET_SIZE(a) if is_list else PyTuple_GET_SIZE(a)) == 0:
        return _w_put(w, b"[]", 2)
    _w_put_char(w, b'[')
    step = &w.steps[w.depth]
    w.depth += 1
    step.key = NULL
    i = 0
    while True:
        # Re-read the size each time: a streaming write callback may mutate the list.
        if is_list:
            n = PyList_GET_SIZE(a)
            if i >= n:
                break
            if i + 4 < n:
                ajp_prefetch(PyList_GET_ITEM(a, i + 4))
            item = <object>PyList_GET_ITEM(a, i)
        else:
            n = PyTuple_GET_SIZE(a)
            if i >= n:
                break
            item = <object>PyTuple_GET_ITEM(a, i)
        if PyFloat_CheckExact(item) or PyLong_CheckExact(item):
            # A run of finite floats and safe ints is written in C (number_format.h); an item
            # it stops at (a refusal, a big int, too little room) takes the path below.
            run_end = ajp_put_numbers(PySequence_Fast_ITEMS(a), i, n, w.data, &w.length, w.cap)
            if run_end != i:
                i = run_end
                continue
        elif PyList_CheckExact(item) and w.depth < _MAX_DEPTH:
            # A nested list of such numbers (a coordinate pair) is written whole there too.
            if ajp_put_number_list(<PyObject*>item, i, w.data, &w.length, w.cap):
                i += 1
                continue
        step.index = i
        if i:
            _w_put_char(w, b',')
        if PyUnicode_CheckExact(item):
            _put_text(w, item)
        elif PyLong_CheckExact(item):
            _put_integer(w, item)
        elif PyFloat_CheckExact(item):
            _put_float(w, item)
        else:
            _put_value(w, item)
        i += 1
    w.depth -= 1
    return _w_put_char(w, b']')


cdef object _encode_guarded(object value, Py_ssize_t chunk, object write):
    """Canonical bytes of ``value`` (chunk 0), or the byte count streamed to ``write``."""
    cdef Writer* w
    ajp_enter_recursive_call(" in canonicalize")
    try:
        w = _w_acquire(chunk, write)
        try:
            if chunk == 0:
                _put_value(w, value)
                return _w_finish(w)
            _w_start_stream(w)
            _put_value(w, value)
            _w_flush(w, False)
            return w.total
        finally:
            _w_recycle(w)
    finally:
        Py_LeaveRecursiveCall()


def canonicalize(value):
    """RFC 8785 canonical JSON of ``value`` as UTF-8 bytes (see ajpcore._core_py.canonicalize)."""
    try:
        return _encode_guarded(value, 0, None)
    except RecursionError:
        # Raised once the guards above are left, so building the error has room.
        raise EncodeError(_RECURSION_REASON) from None


def canonicalize_into(value, write, *, chunk_size=65536):
    """Hand the canonical bytes of ``value`` to ``write`` in chunks of at most ``chunk_size``.

    See ajpcore._core_py.canonicalize_into; this twin hands over at most 1 MiB at a time.
    """
    if type(chunk_size) is not int or chunk_size < 1:
        raise ValueError("chunk_size must be a positive int")
    try:
        return _encode_guarded(value, min(chunk_size, _MAX_CHUNK), write)
    except RecursionError:
        raise EncodeError(_RECURSION_REASON) from None
