# Included by native/_core_c.pyx (shares its namespace).  Pure twin: ajpcore/_core_py/canonical_writer.py.
# The Writer it writes into (buffer, chunks, refusals) is canonical_buffer.pxi's.

# ---------------------------------------------------------------------------
# Canonical JSON writer (RFC 8785): values, containers
# ---------------------------------------------------------------------------

from ajpcore._core_rules import _RECURSION_REASON  # one text for both twins

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
