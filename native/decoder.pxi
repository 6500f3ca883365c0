# Included by native/_core_c.pyx (shares its namespace).  Pure twin: ajpcore/_core_py/decoder.py.

# ---------------------------------------------------------------------------
# Strict decoding (RFC 8259 + I-JSON, RFC 7493)
# ---------------------------------------------------------------------------

cimport cython

from ajpcore._core_rules import (  # the error texts and the big-int rule both twins share
    _Refusal,
    _decode_big_int,
    _decode_error,
    _duplicate_reason,
    _noncharacter_reason,
    _surrogate_reason,
)

cdef extern from "Python.h":
    PyObject* _long_from_long_long "PyLong_FromLongLong" (long long v) except NULL
    PyObject* _float_from_double "PyFloat_FromDouble" (double v) except NULL
    void* PyUnicode_1BYTE_DATA(object o)
    const char* PyUnicode_AsUTF8AndSize(object o, Py_ssize_t* size) except NULL
    Py_hash_t PyObject_Hash(object o) except? -1
    bint PyByteArray_Check(object o)
    bint PyMemoryView_Check(object o)
    bint PyBytes_Check(object o)
    Py_ssize_t PyBytes_GET_SIZE(object o)
    bint PyByteArray_CheckExact(object o)
    char* PyByteArray_AS_STRING(object o)
    Py_ssize_t PyByteArray_GET_SIZE(object o)
    object PyUnicode_AsEncodedString(object o, const char* encoding, const char* errors)

cdef extern from "decoder_scan.h":
    ctypedef struct ajpcore_str_scan:
        Py_ssize_t end
        Py_ssize_t length
        Py_UCS4 maxchar
        Py_UCS4 cp
    enum:
        AJPCORE_STR_OK
        AJPCORE_STR_EOF
        AJPCORE_STR_BAD_UTF8
        AJPCORE_STR_CONTROL
        AJPCORE_STR_BAD_ESCAPE
        AJPCORE_STR_SURROGATE
        AJPCORE_STR_NONCHAR
    Py_ssize_t _scan_name "ajpcore_scan_name" (const unsigned char* p, Py_ssize_t i, Py_ssize_t n, unsigned long long* h) nogil
    Py_ssize_t _short_name "ajpcore_short_name" (const unsigned char* p, Py_ssize_t i, Py_ssize_t n, unsigned long long* w) nogil
    bint _same_bytes "ajpcore_same_bytes" (const unsigned char* a, const unsigned char* b, Py_ssize_t n) nogil
    Py_ssize_t _text_name "ajpcore_text_name" (const unsigned char* p, Py_ssize_t body, Py_ssize_t i, Py_ssize_t n, Py_ssize_t max, unsigned long long* h) nogil
    Py_ssize_t _skip_ws_at "ajpcore_skip_ws_at" (const unsigned char* p, Py_ssize_t i, Py_ssize_t n) nogil

# _parse_key (below) is inlined into the parse loop, where it reads most member names, by
# declaring it always_inline in C: Cython has no way to ask for it, and GCC leaves a `cdef inline`
# function out of line once the loop it is called from is large (catalog-pretty: a call per member,
# +2 % instructions; which side of its limit the loop falls on moved with unrelated edits).  The name
# is Cython's for ajpcore._core_c._parse_key; were it to change, the declaration would name nothing
# and the compiler would decide again (the callgrind job's 3 % would show it), never change a result.
cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    struct __pyx_t_7ajpcore_7_core_c_Parser;
    static inline __attribute__((always_inline)) Py_ssize_t __pyx_f_7ajpcore_7_core_c__parse_key(struct __pyx_t_7ajpcore_7_core_c_Parser *, Py_ssize_t, int);
    #endif
    """

cdef extern from "decoder_str.h":  # every str decode makes (see there)
    PyObject* _ascii_new "ajpcore_ascii_new" (Py_ssize_t size) except NULL  # a new reference

cdef extern from "decoder_utf8_write.h":  # includes decoder_utf8.h
    void _utf8_init "ajpcore_utf8_init" ()
    Py_ssize_t _scan_plain_any "ajpcore_scan_plain_any" (const unsigned char* p, Py_ssize_t i, Py_ssize_t n) nogil
    PyObject* _text_str "ajpcore_text_str" (const unsigned char* p, Py_ssize_t first, Py_ssize_t i, Py_ssize_t n, ajpcore_str_scan* r, int* status)
    PyObject* _escaped_str "ajpcore_escaped_str" (const unsigned char* p, Py_ssize_t first, Py_ssize_t i, Py_ssize_t n, ajpcore_str_scan* r, int* status)

# Per byte: 1 = JSON whitespace (RFC 8259 §2).
cdef unsigned char _IS_WS[256]

# Per byte: what a value that starts with it is (RFC 8259 §3), or whitespace.  One table
# lookup and a switch pick the reader, where a chain of comparisons tested the value kinds
# one after the other.
cdef enum:
    _V_NONE = 0
    _V_STRING = 1
    _V_NUMBER = 2
    _V_OBJECT = 3
    _V_ARRAY = 4
    _V_TRUE = 5
    _V_FALSE = 6
    _V_NULL = 7
    _V_SPACE = 8

cdef unsigned char _VALUE_KIND[256]


cdef void _init_decode_tables():
    cdef int c
    for c in range(256):
        _IS_WS[c] = 1 if (c == 0x20 or c == 0x09 or c == 0x0A or c == 0x0D) else 0
        _VALUE_KIND[c] = _V_SPACE if _IS_WS[c] else _V_NONE
    _VALUE_KIND[0x22] = _V_STRING
    _VALUE_KIND[0x2D] = _V_NUMBER
    for c in range(0x30, 0x3A):
        _VALUE_KIND[c] = _V_NUMBER
    _VALUE_KIND[0x7B] = _V_OBJECT
    _VALUE_KIND[0x5B] = _V_ARRAY
    _VALUE_KIND[0x74] = _V_TRUE
    _VALUE_KIND[0x66] = _V_FALSE
    _VALUE_KIND[0x6E] = _V_NULL


_init_decode_tables()
_utf8_init()

# The native reader: the same steps as ``_StrictParser`` of the pure twin, over a C buffer.
# A Parser lives on the C stack of its decode call (see OpenTree) and its functions take it
# as ``self``; _decode_buffer drops what it holds however the call ends.
cdef struct Parser:
    const unsigned char* p
    Py_ssize_t n
    Py_ssize_t i
    Py_ssize_t max_depth
    PyObject* max_depth_shown  # borrowed: decode's argument
    bint allow_duplicate_keys
    OpenTree tree              # the open containers and their members (see _tree_close)
    Settled settled            # large documents: finished containers wait untracked (_settle)


cdef int _fail(Parser* self, str reason, Py_ssize_t pos) except -1:
    """Refuse the document: ``reason`` at byte ``pos``, unless an open object repeats a name.

    Past _LINEAR_NAMES names an object's names are checked at its close (_tree_close): a
    repeat among the open objects' names, all read before ``pos``, is the first problem."""
    if not self.allow_duplicate_keys:
        _refuse_repeated_name(self)
    return _fail_at(self, reason, pos, self.tree.depth)


cdef int _fail_at(Parser* self, str reason, Py_ssize_t pos, Py_ssize_t depth) except -1:
    """Raise the DecodeError for ``reason`` at byte ``pos``, in the open container ``depth - 1``."""
    head = PyBytes_FromStringAndSize(<const char*>self.p, pos)
    raise _decode_error(head, reason, pos, _tree_path(&self.tree, depth))


cdef int _refuse_repeated_name(Parser* self) except -1:
    """Refuse the first repeated name of the open objects past _LINEAR_NAMES names, if any
    (outermost first: its names precede the inner ones')."""
    cdef OpenTree* t = &self.tree
    cdef Py_ssize_t d, at = 0
    cdef PyObject* name
    for d in range(t.depth):
        name = _tree_repeated_name(t, d, &at)
        if name != NULL:
            _fail_at(self, _duplicate_reason(<object>name), at, d + 1)
    return 0


cdef int _eof(Parser* self) except -1:
    return _fail(self, "unexpected end of data", self.n)


cdef inline Py_ssize_t _skip_ws(const unsigned char* p, Py_ssize_t i, Py_ssize_t n) noexcept:
    """The first byte from ``i`` that is not whitespace (or ``n``): none is one lookup, a run
    (`": "`, indentation) is skipped by ajpcore_skip_ws_at."""
    if i < n and _IS_WS[p[i]]:
        return _skip_ws_at(p, i, n)
    return i


cdef inline PyObject* _own(object o) noexcept:
    """A new reference to ``o``, as a PyObject*."""
    _incref(<PyObject*>o)
    return <PyObject*>o


cdef object _parse(Parser* self):
    cdef const unsigned char* p = self.p
    cdef Py_ssize_t n = self.n
    cdef Py_ssize_t i = 0
    cdef unsigned char c, kind
    cdef bint array_opened = False  # the value may also be the `]` of an array just opened
    cdef unsigned char closer = 0  # the byte that closes the innermost open container (`]`, `}`), 0 at the top
    cdef PyObject* v = NULL  # the value just read: a new reference, until the tree or the caller takes it
    cdef Py_ssize_t end
    cdef long long iv
    cdef double fv
    cdef int is_float
    cdef OpenTree* t = &self.tree
    if n >= 3 and p[0] == 0xEF and p[1] == 0xBB and p[2] == 0xBF:
        # RFC 8259 §8.1: implementations MUST NOT add a byte order mark.
        _fail(self, "byte order mark is not allowed", 0)
    while True:
        # A value starts here (whitespace first only where there is some).
        if i >= n:
            _eof(self)
        kind = _VALUE_KIND[p[i]]
        if kind == _V_SPACE:
            i = _skip_ws_at(p, i, n)
            if i >= n:
                _eof(self)
            kind = _VALUE_KIND[p[i]]
        if kind == _V_STRING:
            v = _parse_string(self, i)
            i = self.i
        elif kind == _V_NUMBER:
            # The usual int or float, read in one pass (ajpcore_scan_number, inline here: in a
            # document of numbers this is the loop's hot path); every other number, and every
            # refusal, is _parse_any_number's.
            is_float = 0
            end = _scan_number(p, i, n, &iv, &fv, &is_float)
            if end >= 0:
                v = _float_from_double(fv) if is_float else _long_from_long_long(iv)
                i = end
            else:
                v = _own(_parse_any_number(self, i))
                i = self.i
        elif kind == _V_OBJECT:
            if t.depth >= self.max_depth:
                _fail_depth(self, i)
            i = _skip_ws(p, i + 1, n)
            if i < n and p[i] == 0x7D:
                v = _dict_new()
                if self.settled.on:  # a dict of nothing is never tracked: only its holder is
                    _tree_holds_container(t)
                i += 1
            else:
                _tree_open(t, True)
                closer = 0x7D
                i = _parse_key(self, i, True)
                array_opened = False
                continue
        elif kind == _V_ARRAY:
            if t.depth >= self.max_depth:
                _fail_depth(self, i)
            i = _skip_ws(p, i + 1, n)
            if i < n and p[i] == 0x5D:
                v = _list_new(0)
                if self.settled.on:
                    _settle(&self.settled, v)
                    _tree_holds_container(t)
                i += 1
            else:
                _tree_open(t, False)
                closer = 0x5D
                array_opened = True
                continue
        elif kind == _V_TRUE:
            i = _parse_literal(self, i, b"true", 4)
            v = _own(True)
        elif kind == _V_FALSE:
            i = _parse_literal(self, i, b"false", 5)
            v = _own(False)
        elif kind == _V_NULL:
            i = _parse_literal(self, i, b"null", 4)
            v = _own(None)
        else:
            _fail(self, "expected a value or `]`" if array_opened else "expected a value", i)
        # The value is complete: hand it to its container, close what ends here.
        while True:
            if closer == 0:
                i = _skip_ws(p, i, n)
                if i != n:
                    _decref(v)
                    _fail(self, "trailing data after the document", i)
                _settled_release(&self.settled)
                value = <object>v
                _decref(v)
                return value
            _tree_push(t, v)
            if i >= n:
                _eof(self)
            c = p[i]
            if _IS_WS[c]:
                i = _skip_ws_at(p, i, n)
                if i >= n:
                    _eof(self)
                c = p[i]
            if c == 0x2C:
                i += 1
                if closer == 0x7D:
                    if i < n and _IS_WS[p[i]]:  # pretty-printed: the name is on its own line
                        i = _skip_ws_at(p, i, n)
                    i = _parse_key(self, i, False)
                array_opened = False
                break
            if c == closer:
                i += 1
                if closer == 0x5D or t.n - t.frames[t.depth - 1].base <= 2 * _LINEAR_NAMES:
                    v = _tree_close(t, &self.settled)
                elif _tree_close_wide(t, &self.settled, not self.allow_duplicate_keys, &v):
                    _refuse_repeated_name(self)  # the object repeats a name: found and refused
                closer = _tree_closer(t)
                continue
            _fail(self, "expected `,` or `]`" if closer == 0x5D else "expected `,` or `}`", i)


cdef int _fail_depth(Parser* self, Py_ssize_t i) except -1:
    return _fail(self, f"nesting deeper than {<object>self.max_depth_shown}", i)


cdef inline Py_ssize_t _parse_key(Parser* self, Py_ssize_t i, bint first) except -1:
    """Read `"name" :` of a member of the innermost object (``first``: right after its `{`);
    return the position after the colon.

    Inline, the usual member: a short ASCII name the cache holds, right where it starts
    (the caller skips indentation) and followed by its colon, whose hash bit no earlier name
    of its object has set (so no duplicate), or any such name past the object's first
    _LINEAR_NAMES (checked at its close).  Every other case, and every refusal, is
    _parse_member_name from the same ``i``: nothing here changes any state before the member
    is known to be the usual one.
    """
    cdef const unsigned char* p = self.p
    cdef OpenTree* t = &self.tree
    cdef Py_ssize_t size
    cdef unsigned long long w[2]
    cdef unsigned long long bit
    cdef bint wide
    cdef KeyEntry* e
    cdef Frame* f
    if i < self.n and p[i] == 0x22 and t.n < t.cap_hashes and not self.allow_duplicate_keys:
        size = _short_name(p, i + 1, self.n, w)
        if size >= 0:
            e = _short_entry(w)
            if e.w0 == w[0] and e.w1 == w[1] and e.size == size and i + size + 2 < self.n and p[i + size + 2] == 0x3A:
                f = &t.frames[t.depth - 1]
                bit = 1ULL << (<unsigned long long>e.hash & 63)
                wide = t.n - f.base >= 2 * _LINEAR_NAMES  # checked at the close: its byte, in case it repeats
                if wide or not (f.names & bit):
                    f.names |= bit
                    _incref(e.name)
                    t.vals[t.n] = e.name
                    t.hashes[t.n] = i if wide else e.hash
                    t.n += 1
                    return i + size + 3
        elif size < 0:
            return _parse_member_name(self, i, first, False)  # at the quote, and no short name
    return _parse_member_name(self, i, first, True)


cdef Py_ssize_t _parse_member_name(Parser* self, Py_ssize_t i, bint first, bint maybe_short) except -1:
    """``parse_key`` in full: whitespace, every kind of name, the duplicate check, the refusals.
    ``maybe_short`` false: ``i`` is the name's opening quote and ajpcore_short_name already
    found no short name there (the inline path looked), so it is not looked for again."""
    cdef const unsigned char* p = self.p
    cdef Py_ssize_t n = self.n
    cdef Py_ssize_t start, size
    cdef Py_hash_t h
    cdef unsigned long long bit
    cdef unsigned long long w[2]
    cdef OpenTree* t = &self.tree
    cdef Frame* f
    cdef PyObject* key  # a strong reference, handed to the tree
    if i >= n or p[i] != 0x22:
        i = _skip_ws(p, i, n)
        if i >= n:
            _eof(self)
        if p[i] != 0x22:
            _fail(self, "expected a member name or `}`" if first else "expected a member name", i)
    if t.n == t.cap:  # room first: once the name exists, nothing fails before the tree owns it
        _tree_grow(t)
    if t.n >= t.cap_hashes:
        _tree_grow_hashes(t)
    start = i
    size = _short_name(p, start + 1, n, w) if maybe_short else -1
    if size >= 0:
        # Plain ASCII of at most 15 bytes: from the name cache, by its bytes.
        key = _short_key(w, size, p + start + 1, &h)
        i = start + size + 2
    else:
        key = _other_key(self, start, &h)
        i = self.i
    # RFC 7493 §2.3: member names MUST be unique (compared after unescaping).
    t.vals[t.n] = key
    f = &t.frames[t.depth - 1]
    if t.n - f.base >= 2 * _LINEAR_NAMES:
        t.hashes[t.n] = start  # past _LINEAR_NAMES names: checked at the close (_tree_close)
    else:
        t.hashes[t.n] = h
        if not self.allow_duplicate_keys:
            # The object's earlier names, one by one (the hash first), when the bit of
            # this hash is set by one of them.
            bit = 1ULL << (<unsigned long long>h & 63)
            if f.names & bit:
                _linear_duplicate(self, f, start)
            f.names |= bit
    t.n += 1
    if i < n and p[i] == 0x3A:
        return i + 1
    i = _skip_ws(p, i, n)
    if i >= n:
        _eof(self)
    if p[i] != 0x3A:
        _fail(self, "expected `:`", i)
    return i + 1


cdef int _linear_duplicate(Parser* self, Frame* f, Py_ssize_t start) except -1:
    """Refuse the name on top of the tree if one of the object's earlier names equals it."""
    cdef OpenTree* t = &self.tree
    cdef PyObject* key = t.vals[t.n]
    cdef Py_hash_t h = t.hashes[t.n]
    cdef Py_ssize_t k
    for k in range(f.base, t.n, 2):
        if t.hashes[k] == h and (t.vals[k] == key or _same_str(t.vals[k], key)):
            t.n += 1  # the tree owns the name: the refusal drops it
            _fail(self, _duplicate_reason(<object>key), start)
    return 0


cdef inline Py_ssize_t _parse_literal(Parser* self, Py_ssize_t i, const char* word, Py_ssize_t size) except -1:
    if i + size <= self.n and _literal_at(self.p + i, word, size):
        return i + size
    return _literal_refusal(self, i, word, size)


cdef Py_ssize_t _literal_refusal(Parser* self, Py_ssize_t i, const char* word, Py_ssize_t size) except -1:
    """The refusal of a literal that is not ``word``: at its first byte that differs, or at the end."""
    cdef Py_ssize_t k
    for k in range(1, size):
        if i + k >= self.n:
            _eof(self)
        if self.p[i + k] != <unsigned char>word[k]:
            _fail(self, "invalid literal", i + k)
    return i + size

cdef int _string_error(Parser* self, int status, ajpcore_str_scan* r) except -1:
    """Raise the DecodeError for a string ``_text_str`` refused."""
    cdef Py_ssize_t at = r.end
    if status == AJPCORE_STR_EOF:
        return _eof(self)
    if status == AJPCORE_STR_BAD_UTF8:
        # RFC 7493 §2.1: text MUST be valid UTF-8 (RFC 3629, no surrogates).
        return _fail(self, "invalid UTF-8", at)
    if status == AJPCORE_STR_CONTROL:
        return _fail(self, "control character in string", at)
    if status == AJPCORE_STR_BAD_ESCAPE:
        return _fail(self, "invalid escape", at)
    if status == AJPCORE_STR_SURROGATE:
        return _fail(self, _surrogate_reason(PyBytes_FromStringAndSize(<const char*>self.p + at, 6)), at)
    return _fail(self, _noncharacter_reason(<long>r.cp), at)

cdef inline PyObject* _parse_string(Parser* self, Py_ssize_t start) except NULL:
    """Read the string whose opening quote is at ``start`` (a new reference); leave ``self.i`` after it."""
    cdef const unsigned char* p = self.p
    cdef Py_ssize_t i = _scan_plain_any(p, start + 1, self.n)
    cdef Py_ssize_t size
    cdef PyObject* s
    if i < self.n:
        if p[i] == 0x22:
            # The common case: plain ASCII, no escapes.
            size = i - start - 1
            self.i = i + 1
            s = _ascii_new(size)
            memcpy(_ascii_data(s), p + start + 1, size)
            return s
        if p[i] == 0x5C:
            return _parse_escaped(self, start, i)
    return _parse_text(self, start, i)

cdef PyObject* _parse_escaped(Parser* self, Py_ssize_t start, Py_ssize_t i) except NULL:
    """``_parse_text`` of a string whose first stop ``i`` is a backslash: ASCII text with
    escapes in one pass (ajpcore_escaped_str: decoder_ascii_escapes.h)."""
    cdef ajpcore_str_scan r
    cdef int status
    r.length = 0   # string_error always raises; set so gcc sees no uninitialized read
    r.maxchar = 0
    cdef PyObject* s = _escaped_str(self.p, start + 1, i, self.n, &r, &status)
    if s == NULL:
        if status == AJPCORE_STR_OK:
            raise MemoryError()
        _string_error(self, status, &r)
    self.i = r.end + 1
    return s

cdef PyObject* _parse_text(Parser* self, Py_ssize_t start, Py_ssize_t i) except NULL:
    """The rest of ``parse_string`` from ``i``, its first byte that is not plain ASCII (a new reference)."""
    cdef ajpcore_str_scan r
    cdef int status
    # Escapes or non-ASCII text: checked once, then the str is made at its final length and
    # kind and written straight from the bytes (ajpcore_text_str: decoder_scan.h, and
    # decoder_utf8.h / decoder_utf8_write.h at the avx2 level).
    r.length = 0   # string_error always raises; set so gcc sees no uninitialized read
    r.maxchar = 0
    cdef PyObject* s = _text_str(self.p, start + 1, i, self.n, &r, &status)
    if s == NULL:
        if status == AJPCORE_STR_OK:
            raise MemoryError()
        _string_error(self, status, &r)
    self.i = r.end + 1
    return s

cdef object _decode_buffer(const unsigned char* p, Py_ssize_t n, object max_depth, bint allow_duplicate_keys):
    cdef Parser d
    cdef long long limit
    cdef int overflow = 0
    d.p = p
    d.n = n
    d.i = 0
    # No document of n bytes nests deeper than n: a larger limit is the same as n.
    limit = PyLong_AsLongLongAndOverflow(max_depth, &overflow)  # decode checked: an int >= 0
    d.max_depth = n if overflow or limit >= n else <Py_ssize_t>limit
    d.max_depth_shown = <PyObject*>max_depth
    d.allow_duplicate_keys = allow_duplicate_keys
    _tree_init(&d.tree)
    # The collector's state belongs to the application: decode never switches it, and keeps
    # a large document's containers out of its way only while it collects (see _settle).
    _settled_init(&d.settled, n >= _GC_QUIET_BYTES and ajp_gc_collects())
    try:
        return _parse(&d)
    finally:
        _tree_clear(&d.tree)
        _settled_clear(&d.settled)


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
