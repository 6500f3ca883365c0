# Included by native/_core_c.pyx (shares its namespace).  Pure twin: ajpcore/_core_py/decoder.py.

# ---------------------------------------------------------------------------
# Strict decoding (RFC 8259 + I-JSON, RFC 7493)
# ---------------------------------------------------------------------------

from ajpcore._core_py import (  # the error texts and the big-int rule are shared, never duplicated
    _Refusal,
    _decode_big_int,
    _decode_error,
    _duplicate_reason,
    _surrogate_reason,
)

cdef extern from "Python.h":
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void* PyUnicode_1BYTE_DATA(object o)
    const char* PyUnicode_AsUTF8AndSize(object o, Py_ssize_t* size) except NULL
    double PyOS_string_to_double(const char* s, char** endptr, PyObject* overflow_exception) except? -1.0
    int PyDict_SetItem(object d, object k, object v) except -1
    int PyDict_Contains(object d, object k) except -1
    int PyList_Append(object l, object v) except -1
    bint PyByteArray_Check(object o)
    bint PyMemoryView_Check(object o)
    bint PyBytes_Check(object o)
    Py_ssize_t PyBytes_GET_SIZE(object o)
    bint PyByteArray_CheckExact(object o)
    char* PyByteArray_AS_STRING(object o)
    Py_ssize_t PyByteArray_GET_SIZE(object o)
    object PyUnicode_AsEncodedString(object o, const char* encoding, const char* errors)

cdef extern from "math.h":
    bint isinf(double x) nogil

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* First i' >= i where p[i'] is '"', '\\', a control character or a non-ASCII byte.
       Eight bytes at a time: in each mask the lowest flagged byte is exact (a borrow
       only flags bytes above a true hit), so the lowest flag overall is the answer. */
    static inline Py_ssize_t ajpcore_scan_plain(const unsigned char *p, Py_ssize_t i, Py_ssize_t n) {
        const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
        while (i + 8 <= n) {
            uint64_t w, q, b, m;
            memcpy(&w, p + i, 8);
            q = w ^ (ones * 0x22);
            b = w ^ (ones * 0x5C);
            m = (w | ((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b)) & highs;
            if (m) {
    #if PY_LITTLE_ENDIAN
                return i + (__builtin_ctzll(m) >> 3);
    #else
                return i + (__builtin_clzll(m) >> 3);
    #endif
            }
            i += 8;
        }
        while (i < n && p[i] >= 0x20 && p[i] < 0x80 && p[i] != 0x22 && p[i] != 0x5C)
            i++;
        return i;
    }
    """
    Py_ssize_t _scan_plain "ajpcore_scan_plain" (const unsigned char* p, Py_ssize_t i, Py_ssize_t n) nogil

# Per byte: 1 = JSON whitespace (RFC 8259 §2).
cdef unsigned char _IS_WS[256]


cdef void _init_decode_tables():
    cdef int c
    for c in range(256):
        _IS_WS[c] = 1 if (c == 0x20 or c == 0x09 or c == 0x0A or c == 0x0D) else 0


_init_decode_tables()

cdef long long _INT_DIGITS_SAFE = 15

# Member names repeat across the records of a document and across documents:
# a small direct-mapped cache of ASCII names saves building and hashing the same
# str again.  An entry is used only after a full byte comparison, and str is
# immutable, so a hit is exactly the str a miss would build.
cdef enum:
    _KEY_CACHE_SIZE = 2048
    _KEY_CACHE_MAX_LEN = 64
cdef PyObject* _key_cache[_KEY_CACHE_SIZE]


cdef void _init_key_cache():
    cdef int k
    for k in range(_KEY_CACHE_SIZE):
        _key_cache[k] = NULL


_init_key_cache()


cdef object _ascii_key(const unsigned char* p, Py_ssize_t size):
    """The str of the ASCII bytes ``p[:size]`` (a member name), from the cache when present."""
    cdef unsigned int h = 2166136261u
    cdef Py_ssize_t k
    cdef PyObject* hit
    cdef object s
    if size > _KEY_CACHE_MAX_LEN:
        s = PyUnicode_New(size, 127)
        memcpy(PyUnicode_1BYTE_DATA(s), p, size)
        return s
    for k in range(size):
        h = (h ^ p[k]) * 16777619u
    h = (h ^ <unsigned int>size) & (_KEY_CACHE_SIZE - 1)
    hit = _key_cache[h]
    if hit != NULL and PyUnicode_GET_LENGTH(<object>hit) == size and memcmp(PyUnicode_1BYTE_DATA(<object>hit), p, size) == 0:
        return <object>hit
    s = PyUnicode_New(size, 127)
    memcpy(PyUnicode_1BYTE_DATA(s), p, size)
    hash(s)  # cached in the str: every later hit skips hashing
    Py_XDECREF(_key_cache[h])
    Py_INCREF(s)
    _key_cache[h] = <PyObject*>s
    return s


cdef inline int _hex_value(unsigned char c) noexcept nogil:
    if 0x30 <= c <= 0x39:
        return c - 0x30
    if 0x61 <= c <= 0x66:
        return c - 0x57
    if 0x41 <= c <= 0x46:
        return c - 0x37
    return -1


cdef inline Py_ssize_t _utf8_sequence(const unsigned char* p, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """Length of the well-formed UTF-8 sequence at ``p[i]`` (a byte >= 0x80), 0 if ill-formed.

    Unicode 15 Table 3-7: no overlongs, no surrogates (ED A0..BF), nothing past U+10FFFF.
    """
    cdef unsigned char c = p[i], lo = 0x80, hi = 0xBF
    cdef Py_ssize_t need, k
    if 0xC2 <= c <= 0xDF:
        need = 1
    elif 0xE0 <= c <= 0xEF:
        need = 2
        if c == 0xE0:
            lo = 0xA0
        elif c == 0xED:
            hi = 0x9F
    elif 0xF0 <= c <= 0xF4:
        need = 3
        if c == 0xF0:
            lo = 0x90
        elif c == 0xF4:
            hi = 0x8F
    else:
        return 0
    if i + need >= n:
        return 0
    if not (lo <= p[i + 1] <= hi):
        return 0
    for k in range(2, need + 1):
        if not (0x80 <= p[i + k] <= 0xBF):
            return 0
    return need + 1


cdef class _StrictParser:
    """The native reader: the same steps as ``_StrictParser`` of the pure twin, over a C buffer."""

    cdef const unsigned char* p
    cdef Py_ssize_t n
    cdef Py_ssize_t i
    cdef Py_ssize_t max_depth
    cdef object max_depth_shown
    cdef bint allow_duplicate_keys
    cdef list stack   # open containers, outermost first
    cdef list keys    # current member name of each open object (None for arrays)
    cdef unsigned char* scratch  # unescaped string bytes
    cdef Py_ssize_t scratch_cap
    cdef Settled settled     # large documents: finished containers wait untracked (_settle)

    def __cinit__(self):
        self.scratch = NULL
        self.scratch_cap = 0
        self.stack = []
        self.keys = []
        _settled_init(&self.settled, False)

    def __dealloc__(self):
        PyMem_Free(self.scratch)
        _settled_clear(&self.settled)


    cdef int fail(self, str reason, Py_ssize_t pos) except -1:
        cdef list steps = []
        cdef Py_ssize_t k
        for k in range(len(self.stack) - 1):
            container = self.stack[k]
            steps.append(self.keys[k] if type(container) is dict else len(container))
        head = PyBytes_FromStringAndSize(<const char*>self.p, pos)
        raise _decode_error(head, reason, pos, steps)

    cdef int eof(self) except -1:
        return self.fail("unexpected end of data", self.n)

    cdef inline Py_ssize_t skip_ws(self, Py_ssize_t i) noexcept:
        while i < self.n and _IS_WS[self.p[i]]:
            i += 1
        return i

    cdef object parse(self):
        cdef const unsigned char* p = self.p
        cdef Py_ssize_t n = self.n
        cdef Py_ssize_t i = 0
        cdef Py_ssize_t depth = 0
        cdef unsigned char c
        cdef list stack = self.stack
        cdef list keys = self.keys
        cdef str expect = "expected a value"
        cdef object value, container
        if n >= 3 and p[0] == 0xEF and p[1] == 0xBB and p[2] == 0xBF:
            # RFC 8259 §8.1: implementations MUST NOT add a byte order mark.
            self.fail("byte order mark is not allowed", 0)
        while True:
            # A value starts here.
            i = self.skip_ws(i)
            if i >= n:
                self.eof()
            c = p[i]
            if c == 0x22:
                value = self.parse_string(i)
                i = self.i
            elif c == 0x7B:
                if depth >= self.max_depth:
                    self.fail(f"nesting deeper than {self.max_depth_shown}", i)
                i = self.skip_ws(i + 1)
                if i < n and p[i] == 0x7D:
                    value = {}
                    i += 1
                else:
                    stack.append({})
                    keys.append(None)
                    depth += 1
                    i = self.parse_key(i, "expected a member name or `}`")
                    expect = "expected a value"
                    continue
            elif c == 0x5B:
                if depth >= self.max_depth:
                    self.fail(f"nesting deeper than {self.max_depth_shown}", i)
                i = self.skip_ws(i + 1)
                if i < n and p[i] == 0x5D:
                    value = []
                    _settle(&self.settled, value)
                    i += 1
                else:
                    stack.append([])
                    keys.append(None)
                    depth += 1
                    expect = "expected a value or `]`"
                    continue
            elif c == 0x2D or 0x30 <= c <= 0x39:
                value = self.parse_number(i)
                i = self.i
            elif c == 0x74:
                i = self.parse_literal(i, b"true", 4)
                value = True
            elif c == 0x66:
                i = self.parse_literal(i, b"false", 5)
                value = False
            elif c == 0x6E:
                i = self.parse_literal(i, b"null", 4)
                value = None
            else:
                self.fail(expect, i)
            # The value is complete: hand it to its container, close what ends here.
            while True:
                if depth == 0:
                    i = self.skip_ws(i)
                    if i != n:
                        self.fail("trailing data after the document", i)
                    _settled_release(&self.settled)
                    return value
                container = <object>PyList_GET_ITEM(stack, depth - 1)
                i = self.skip_ws(i)
                if PyList_CheckExact(container):
                    PyList_Append(container, value)
                    if i >= n:
                        self.eof()
                    c = p[i]
                    if c == 0x2C:
                        i += 1
                        expect = "expected a value"
                        break
                    if c == 0x5D:
                        i += 1
                        value = stack.pop()
                        keys.pop()
                        depth -= 1
                        _settle(&self.settled, value)
                        continue
                    self.fail("expected `,` or `]`", i)
                PyDict_SetItem(container, <object>PyList_GET_ITEM(keys, depth - 1), value)
                if i >= n:
                    self.eof()
                c = p[i]
                if c == 0x2C:
                    i = self.parse_key(i + 1, "expected a member name")
                    expect = "expected a value"
                    break
                if c == 0x7D:
                    i += 1
                    value = stack.pop()
                    keys.pop()
                    depth -= 1
                    _settle(&self.settled, value)
                    continue
                self.fail("expected `,` or `}`", i)

    cdef Py_ssize_t parse_key(self, Py_ssize_t i, str expect) except -1:
        """Read `"name" :` of a member of the innermost object; return the position after the colon."""
        cdef Py_ssize_t start
        i = self.skip_ws(i)
        if i >= self.n:
            self.eof()
        if self.p[i] != 0x22:
            self.fail(expect, i)
        start = i
        key = self.parse_string(i, True)
        i = self.i
        # RFC 7493 §2.3: member names MUST be unique (compared after unescaping).
        if not self.allow_duplicate_keys and PyDict_Contains(self.stack[len(self.stack) - 1], key):
            self.fail(_duplicate_reason(key), start)
        self.keys[len(self.keys) - 1] = key
        i = self.skip_ws(i)
        if i >= self.n:
            self.eof()
        if self.p[i] != 0x3A:
            self.fail("expected `:`", i)
        return i + 1

    cdef Py_ssize_t parse_literal(self, Py_ssize_t i, const char* word, Py_ssize_t size) except -1:
        cdef Py_ssize_t k
        for k in range(1, size):
            if i + k >= self.n:
                self.eof()
            if self.p[i + k] != <unsigned char>word[k]:
                self.fail("invalid literal", i + k)
        return i + size

    cdef int parse_hex4(self, Py_ssize_t i) except -1:
        cdef Py_ssize_t k
        cdef int v = 0, h
        for k in range(i, i + 4):
            if k >= self.n:
                self.eof()
            h = _hex_value(self.p[k])
            if h < 0:
                self.fail("invalid escape", k)
            v = (v << 4) | h
        return v

    cdef int reserve(self, Py_ssize_t need) except -1:
        cdef Py_ssize_t cap = self.scratch_cap if self.scratch_cap else 256
        cdef void* grown
        while cap < need:
            cap *= 2
        if cap != self.scratch_cap:
            grown = PyMem_Realloc(self.scratch, cap)
            if grown == NULL:
                raise MemoryError()
            self.scratch = <unsigned char*>grown
            self.scratch_cap = cap
        return 0

    cdef object parse_string(self, Py_ssize_t start, bint is_key=False):
        """Read the string whose opening quote is at ``start``; leave ``self.i`` after it."""
        cdef const unsigned char* p = self.p
        cdef Py_ssize_t n = self.n
        cdef Py_ssize_t i = start + 1
        cdef Py_ssize_t seg, j, size, out = 0
        cdef bint escaped = False, ascii = True
        cdef unsigned char c, e
        cdef int cp, low
        cdef object s
        i = _scan_plain(p, i, n)
        if i < n and p[i] == 0x22:
            # The common case: plain ASCII, no escapes.
            size = i - start - 1
            self.i = i + 1
            if is_key:
                return _ascii_key(p + start + 1, size)
            s = PyUnicode_New(size, 127)
            memcpy(PyUnicode_1BYTE_DATA(s), p + start + 1, size)
            self.i = i + 1
            return s
        seg = start + 1  # first raw byte not yet copied to the scratch buffer
        while True:
            i = _scan_plain(p, i, n)
            if i >= n:
                self.eof()
            c = p[i]
            if c >= 0x80:
                # RFC 7493 §2.1: text MUST be valid UTF-8 (RFC 3629, no surrogates).
                size = _utf8_sequence(p, i, n)
                if size == 0:
                    self.fail("invalid UTF-8", i)
                ascii = False
                i += size
                continue
            if c == 0x22:
                break
            if c != 0x5C:
                self.fail("control character in string", i)
            j = i
            if j + 1 >= n:
                self.eof()
            e = p[j + 1]
            # Copy the raw run before the escape, then the escaped character as UTF-8.
            self.reserve(out + (j - seg) + 4)
            memcpy(self.scratch + out, p + seg, j - seg)
            out += j - seg
            escaped = True
            if e != 0x75:
                if e == 0x22 or e == 0x5C or e == 0x2F:
                    c = e
                elif e == 0x62:
                    c = 0x08
                elif e == 0x66:
                    c = 0x0C
                elif e == 0x6E:
                    c = 0x0A
                elif e == 0x72:
                    c = 0x0D
                elif e == 0x74:
                    c = 0x09
                else:
                    self.fail("invalid escape", j + 1)
                self.scratch[out] = c
                out += 1
                i = j + 2
                seg = i
                continue
            cp = self.parse_hex4(j + 2)
            i = j + 6
            if 0xD800 <= cp <= 0xDBFF:
                # RFC 8259 §7 / RFC 7493 §2.1: a high surrogate escape must be followed by a low one.
                if not (i + 1 < n and p[i] == 0x5C and p[i + 1] == 0x75):
                    self.fail(_surrogate_reason(PyBytes_FromStringAndSize(<const char*>p + j, 6)), j)
                low = self.parse_hex4(i + 2)
                if not (0xDC00 <= low <= 0xDFFF):
                    self.fail(_surrogate_reason(PyBytes_FromStringAndSize(<const char*>p + j, 6)), j)
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                i += 6
            elif 0xDC00 <= cp <= 0xDFFF:
                self.fail(_surrogate_reason(PyBytes_FromStringAndSize(<const char*>p + j, 6)), j)
            if cp < 0x80:
                self.scratch[out] = <unsigned char>cp
                out += 1
            elif cp < 0x800:
                self.scratch[out] = <unsigned char>(0xC0 | (cp >> 6))
                self.scratch[out + 1] = <unsigned char>(0x80 | (cp & 0x3F))
                out += 2
            elif cp < 0x10000:
                self.scratch[out] = <unsigned char>(0xE0 | (cp >> 12))
                self.scratch[out + 1] = <unsigned char>(0x80 | ((cp >> 6) & 0x3F))
                self.scratch[out + 2] = <unsigned char>(0x80 | (cp & 0x3F))
                out += 3
            else:
                self.scratch[out] = <unsigned char>(0xF0 | (cp >> 18))
                self.scratch[out + 1] = <unsigned char>(0x80 | ((cp >> 12) & 0x3F))
                self.scratch[out + 2] = <unsigned char>(0x80 | ((cp >> 6) & 0x3F))
                self.scratch[out + 3] = <unsigned char>(0x80 | (cp & 0x3F))
                out += 4
            seg = i
        self.i = i + 1
        if not escaped:
            return PyUnicode_DecodeUTF8(<const char*>p + start + 1, i - start - 1, NULL)
        self.reserve(out + (i - seg))
        memcpy(self.scratch + out, p + seg, i - seg)
        out += i - seg
        return PyUnicode_DecodeUTF8(<const char*>self.scratch, out, NULL)

    cdef object parse_number(self, Py_ssize_t start):
        """Read the number at ``start`` (RFC 8259 §6); leave ``self.i`` after it."""
        cdef const unsigned char* p = self.p
        cdef Py_ssize_t n = self.n
        cdef Py_ssize_t i = start, size, k
        cdef bint negative = False, is_int = True
        cdef long long v = 0
        cdef char small[64]
        cdef char* text
        cdef double x
        cdef unsigned char c
        if p[i] == 0x2D:
            negative = True
            i += 1
        if i >= n:
            self.eof()
        c = p[i]
        if c == 0x30:
            i += 1
            if i < n and 0x30 <= p[i] <= 0x39:
                self.fail("leading zeros are not allowed", i)
        elif 0x31 <= c <= 0x39:
            while i < n and 0x30 <= p[i] <= 0x39:
                i += 1
        else:
            self.fail("invalid number", i)
        if i < n and p[i] == 0x2E:
            i = self.digits_after(i + 1)
            is_int = False
        if i < n and (p[i] == 0x65 or p[i] == 0x45):
            i += 1
            if i < n and (p[i] == 0x2B or p[i] == 0x2D):
                i += 1
            i = self.digits_after(i)
            is_int = False
        self.i = i
        size = i - start
        if is_int:
            if size - negative <= 18:  # fits a long long
                for k in range(start + negative, i):
                    v = v * 10 + (p[k] - 0x30)
                if v <= _MAX_SAFE_INT:
                    return PyLong_FromLongLong(-v if negative else v)
                # The int rule's first case in C: the literal is its own double.
                x = <double>v  # correctly rounded, as float(int) is
                if x < 9.2e18 and <long long>x == v:
                    return PyLong_FromLongLong(-v if negative else v)
            try:
                return _decode_big_int(PyBytes_FromStringAndSize(<const char*>p + start, size))
            except _Refusal as exc:
                self.fail(str(exc), start)
        # float(text) exactly: the same correctly rounded conversion CPython's float() uses.
        if size < 64:
            memcpy(small, p + start, size)
            small[size] = 0
            x = PyOS_string_to_double(small, NULL, NULL)
        else:
            text = <char*>PyMem_Malloc(size + 1)
            if text == NULL:
                raise MemoryError()
            try:
                memcpy(text, p + start, size)
                text[size] = 0
                x = PyOS_string_to_double(text, NULL, NULL)
            finally:
                PyMem_Free(text)
        if isinf(x):
            # RFC 7493 §2.2: the value must fit binary64.
            self.fail("number out of range for binary64", start)
        return PyFloat_FromDouble(x)

    cdef Py_ssize_t digits_after(self, Py_ssize_t i) except -1:
        if i >= self.n:
            self.eof()
        if not (0x30 <= self.p[i] <= 0x39):
            self.fail("invalid number", i)
        while i < self.n and 0x30 <= self.p[i] <= 0x39:
            i += 1
        return i


cdef object _decode_buffer(const unsigned char* p, Py_ssize_t n, object max_depth, bint allow_duplicate_keys):
    cdef _StrictParser d = _StrictParser()
    d.p = p
    d.n = n
    # No document of n bytes nests deeper than n: a larger limit is the same as n.
    d.max_depth = max_depth if max_depth < n else n
    d.max_depth_shown = max_depth
    d.allow_duplicate_keys = allow_duplicate_keys
    # The collector's state belongs to the application: decode never switches it (see _settle).
    d.settled.on = n >= _GC_QUIET_BYTES
    return d.parse()


def decode(data, *, max_depth=MAX_DEPTH, allow_duplicate_keys=False):
    """Parse one strictly valid I-JSON document (see ajpcore._core_py.decode)."""
    cdef const char* text
    cdef Py_ssize_t size
    cdef Py_buffer view
    if type(max_depth) is not int or max_depth < 0:
        raise ValueError("max_depth must be a non-negative int")
    allow = bool(allow_duplicate_keys)
    # The object's own storage and size, whatever a subclass's __len__, __getitem__,
    # __bytes__, __buffer__ or encode say (the pure twin reads the same bytes).
    if PyBytes_Check(data):
        return _decode_buffer(<const unsigned char*>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data), max_depth, allow)
    if PyUnicode_Check(data):
        try:
            text = PyUnicode_AsUTF8AndSize(data, &size)
        except UnicodeEncodeError:
            # Positions are byte offsets of the UTF-8 form; a lone surrogate is kept
            # as its 3-byte (ill-formed) sequence so it is refused like one in bytes.
            raw = PyUnicode_AsEncodedString(data, b"utf-8", b"surrogatepass")
            return _decode_buffer(<const unsigned char*>PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw), max_depth, allow)
        return _decode_buffer(<const unsigned char*>text, size, max_depth, allow)
    if PyByteArray_Check(data) and not PyByteArray_CheckExact(data):
        raw = PyBytes_FromStringAndSize(PyByteArray_AS_STRING(data), PyByteArray_GET_SIZE(data))
        return _decode_buffer(<const unsigned char*>PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw), max_depth, allow)
    if PyByteArray_Check(data) or PyMemoryView_Check(data):
        if PyMemoryView_Check(data) and not (<memoryview>data).c_contiguous:
            raw = (<memoryview>data).tobytes()
            return _decode_buffer(<const unsigned char*>PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw), max_depth, allow)
        # Holding the buffer export keeps a bytearray from being resized under the parser.
        PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
        try:
            return _decode_buffer(<const unsigned char*>view.buf, view.len, max_depth, allow)
        finally:
            PyBuffer_Release(&view)
    raise TypeError(f"decode() takes bytes, bytearray, memoryview or str, not `{type(data).__qualname__}`")
