# Included by native/_core_c.pyx (shares its namespace).  Pure twin: ajpcore/_core_py/canonical_strings.py.

# ---------------------------------------------------------------------------
# Canonical strings and member-name order (RFC 8785 §3.2.2.2, §3.2.3)
# ---------------------------------------------------------------------------

cdef extern from "canonical_scan.h":
    bint ajp_word_needs_escape(unsigned long long w) nogil
    int ajp_compare_names(int ka, const void* a, Py_ssize_t na, int kb, const void* b, Py_ssize_t nb) nogil
    int ajp_compare_name_objects(PyObject* a, PyObject* b) nogil
    unsigned long long ajp_name_prefix(const void* data, Py_ssize_t n) nogil
    unsigned long long ajp_name_prefix16(int kind, const void* data, Py_ssize_t n) nogil
    void ajp_prefetch(const void* p) nogil
    int ajp_ctz(unsigned int x) nogil
    Py_ssize_t ajp_copy_clean_ascii(char* dst, const unsigned char* p, Py_ssize_t n) nogil
    Py_ssize_t ajp_put_short_name(char* dst, PyObject* s) nogil
    Py_ssize_t ajp_put_clean_text(char* dst, Py_ssize_t room, PyObject* s) nogil
    Py_ssize_t ajp_copy_clean_wide(int kind, char* dst, const void* data, Py_ssize_t n) nogil
    Py_ssize_t ajp_encode_wide(int kind, const void* data, Py_ssize_t* pos, Py_ssize_t end, char* block, int* status) nogil
    void ajp_init_escaped_bytes()
    int _name_kind "ajp_text_kind" (PyObject* o) nogil
    void* _name_data "ajp_text_data" (PyObject* o) nogil
    Py_ssize_t _name_length "ajp_text_length" (PyObject* o) nogil

cdef extern from "canonical_utf8.h":
    bint AJP_USE_AVX2
    enum:
        AJP_TEXT_DONE
        AJP_TEXT_ROOM
        AJP_TEXT_SURROGATE
        AJP_UTF8_STEP_ROOM
    Py_ssize_t ajp_utf8_avx2(int kind, const void* data, Py_ssize_t* pos, Py_ssize_t end, char* dst, Py_ssize_t room, int* status) nogil
    Py_ssize_t ajp_put_text_avx2(char* dst, Py_ssize_t room, PyObject* s) nogil
    Py_ssize_t ajp_put_value_text(char* dst, Py_ssize_t room, PyObject* s) nogil
    Py_ssize_t ajp_put_value_text_member(char* dst, Py_ssize_t room, PyObject* s) nogil
    void ajp_init_utf8_tables()


ajp_init_escaped_bytes()
ajp_init_utf8_tables()


# Per byte < 0x80: 0 = copy as is, 1 = short escape, 2 = \u00xx escape (ECMA-262 QuoteJSONString).
cdef unsigned char _ESC[128]
cdef char _SHORT[128]
cdef const char* _HEX = b"0123456789abcdef"


cdef void _init_tables():
    cdef int c
    for c in range(128):
        _ESC[c] = 0
        _SHORT[c] = 0
    for c in range(0x20):
        _ESC[c] = 2
    for c, s in ((8, b'b'), (9, b't'), (10, b'n'), (12, b'f'), (13, b'r'), (34, b'"'), (92, b'\\')):
        _ESC[c] = 1
        _SHORT[c] = (<char*>s)[0]


_init_tables()



# -- strings -----------------------------------------------------------

cdef inline Py_ssize_t _escape_code(unsigned int c, char* out):
    """One code point that is not a plain ASCII character: its escape or UTF-8 (no surrogates here)."""
    if c < 0x80:
        out[0] = b'\\'
        if _ESC[c] == 1:
            out[1] = _SHORT[c]
            return 2
        out[1] = b'u'
        out[2] = b'0'
        out[3] = b'0'
        out[4] = _HEX[c >> 4]
        out[5] = _HEX[c & 15]
        return 6
    if c < 0x800:
        out[0] = <char>(0xC0 | (c >> 6))
        out[1] = <char>(0x80 | (c & 0x3F))
        return 2
    if c < 0x10000:
        out[0] = <char>(0xE0 | (c >> 12))
        out[1] = <char>(0x80 | ((c >> 6) & 0x3F))
        out[2] = <char>(0x80 | (c & 0x3F))
        return 3
    out[0] = <char>(0xF0 | (c >> 18))
    out[1] = <char>(0x80 | ((c >> 12) & 0x3F))
    out[2] = <char>(0x80 | ((c >> 6) & 0x3F))
    out[3] = <char>(0x80 | (c & 0x3F))
    return 4


cdef int _put_ascii_text(Writer* w, const unsigned char* p, Py_ssize_t n) except -1:
    """Latin-1 text (PEP 393 kind 1), buffer-checked: copy plain runs, escape or UTF-8 the rest."""
    cdef Py_ssize_t i = 0, run = 0
    cdef unsigned long long word
    cdef unsigned int c
    cdef char tmp[6]
    while i < n:
        while i + 8 <= n:
            memcpy(&word, p + i, 8)
            if ajp_word_needs_escape(word):
                break
            i += 8
        if i >= n:
            break
        c = p[i]
        if c < 0x80 and _ESC[c] == 0:
            i += 1
            continue
        if i > run:
            _w_put(w, <const char*>p + run, i - run)
        _w_put(w, tmp, _escape_code(c, tmp))
        i += 1
        run = i
    if n > run:
        _w_put(w, <const char*>p + run, n - run)
    return 0


cdef inline Py_ssize_t _put_ascii_in_place(Writer* w, const unsigned char* p, Py_ssize_t n) noexcept:
    """The opening quote and as much of Latin-1 ``p`` as the buffer surely holds, in one pass.

    The caller guarantees room for ``n + 18`` bytes; an escape or a two-byte UTF-8 character
    is written only while the rest (at most 6 bytes for it, 1 per remaining byte, the
    quote, 16 for a word store) fits.
    Returns how many bytes of ``p`` were written.
    """
    cdef char* dst = w.data + w.length
    cdef Py_ssize_t room = w.cap - w.length, o = 1, i = 0, run
    dst[0] = b'"'
    while True:
        run = ajp_copy_clean_ascii(dst + o, p + i, n - i)
        o += run
        i += run
        if i >= n or room - o < 6 + (n - i) + 17:
            break
        o += _escape_code(p[i], dst + o)
        i += 1
    w.length += o
    return i


cdef int _put_str(Writer* w, object s) except -1:
    """Any str as a JSON string: the avx2 text encoder, chosen once per string, or the others.

    At the avx2 level a compact text the buffer surely holds is written in one call; the
    rest (the buffer's end, streaming, a surrogate to refuse) takes the general writer.
    """
    cdef Py_ssize_t k
    if AJP_USE_AVX2 and PyUnicode_IS_COMPACT(s):
        k = ajp_put_text_avx2(w.data + w.length, w.cap - w.length, <PyObject*>s)
        if k:
            w.length += k
            return 0
    return _put_str_general(w, s)


cdef int _put_str_general(Writer* w, object s) except -1:
    """``_put_str`` from its quote on, whatever the room: the encoder of the SIMD level."""
    ajp_unicode_ready(s)
    if AJP_USE_AVX2:
        return _put_str_avx2(w, _name_kind(<PyObject*>s), _name_data(<PyObject*>s), _name_length(<PyObject*>s))
    return _put_str_sse2(w, s)


cdef int _put_str_sse2(Writer* w, object s) except -1:
    """``_put_str`` at the sse2 and scalar levels (canonical_scan.h)."""
    cdef Py_ssize_t n
    cdef int kind
    cdef void* raw
    cdef Py_ssize_t i, end, o, copied
    cdef int status
    cdef bint at_run
    cdef unsigned int c
    cdef char block[_STR_BLOCK * 6]
    n = PyUnicode_GET_LENGTH(s)
    kind = PyUnicode_KIND(s)
    raw = PyUnicode_DATA(s)
    if kind == PyUnicode_1BYTE_KIND and w.chunk == 0 and w.cap - w.length < n + 18:
        # Unbounded: grow now rather than write the text byte by byte to the buffer's end.
        _w_grow(w, n + 18)
    if kind == PyUnicode_1BYTE_KIND and w.cap - w.length >= n + 18:
        i = _put_ascii_in_place(w, <const unsigned char*>raw, n)
        if i < n:
            _put_ascii_text(w, <const unsigned char*>raw + i, n - i)
        return _w_put_char(w, b'"')
    _w_put_char(w, b'"')
    if kind == PyUnicode_1BYTE_KIND:
        _put_ascii_text(w, <const unsigned char*>raw, n)
        return _w_put_char(w, b'"')
    i = 0
    at_run = True
    while i < n:
        # Runs of plain ASCII go straight into the buffer when it surely holds them (16
        # bytes of slack for the word stores) ...
        if at_run and w.cap - w.length >= (n - i) + 16:
            copied = ajp_copy_clean_wide(kind, w.data + w.length, <const char*>raw + i * kind, n - i)
            w.length += copied
            i += copied
            if i >= n:
                break
        # ... everything else (escapes, UTF-8, and short ASCII runs; back to the run copier
        # after 16 plain characters in a row) straight into the buffer when it surely holds
        # the rest (6 bytes a code point at most), else through a small block.
        if w.cap - w.length >= (n - i) * 6:
            o = ajp_encode_wide(kind, raw, &i, n, w.data + w.length, &status)
            w.length += o
        else:
            end = i + _STR_BLOCK
            if end > n:
                end = n
            o = ajp_encode_wide(kind, raw, &i, end, block, &status)
            _w_put(w, block, o)
        if status == 2:
            _w_fail(w, "String contains a lone surrogate")
        at_run = status == 1
    return _w_put_char(w, b'"')


cdef int _put_str_avx2(Writer* w, int kind, const void* raw, Py_ssize_t n) except -1:
    """``_put_str`` at the avx2 level (canonical_utf8.h): the text encoded straight into the
    buffer while it surely holds the next step; short of room, unbounded mode grows the buffer,
    streaming encodes _STR_BLOCK code points into a block and puts it (flushing full chunks)."""
    cdef Py_ssize_t i = 0, end, o
    cdef int status
    cdef char block[_STR_BLOCK * 6 + AJP_UTF8_STEP_ROOM]
    _w_put_char(w, b'"')
    while True:
        w.length += ajp_utf8_avx2(kind, raw, &i, n, w.data + w.length, w.cap - w.length, &status)
        if status == AJP_TEXT_ROOM:
            if w.chunk == 0:
                _w_grow(w, (n - i) + AJP_UTF8_STEP_ROOM)
                continue
            end = i + _STR_BLOCK
            if end > n:
                end = n
            o = ajp_utf8_avx2(kind, raw, &i, end, block, sizeof(block), &status)
            _w_put(w, block, o)
            if status == AJP_TEXT_DONE:
                continue
        if status == AJP_TEXT_SURROGATE:
            _w_fail(w, "String contains a lone surrogate")
        return _w_put_char(w, b'"')


cdef inline int _put_text(Writer* w, object s) except -1:
    """``_put_str`` of an exact str, the usual compact ASCII needing no escape written inline."""
    cdef Py_ssize_t k = ajp_put_value_text(w.data + w.length, w.cap - w.length, <PyObject*>s)
    if k:
        w.length += k
        return 0
    # Wider, escaped or tight: the general writer (it starts over from the quote).
    return _put_str_general(w, s)


# -- member-name order ---------------------------------------------------

cdef inline int _compare_names(PyObject* a, PyObject* b) noexcept:
    return ajp_compare_names(_name_kind(a), _name_data(a), _name_length(a), _name_kind(b), _name_data(b), _name_length(b))


cdef inline bint _member_less(Member* a, Member* b) noexcept:
    # The names' prefixes first (_push_members: the same kind of prefix for all of them).
    if a.prefix != b.prefix:
        return a.prefix < b.prefix
    return ajp_compare_name_objects(a.key, b.key) < 0


cdef void _sort_members(Member* m, Py_ssize_t n) noexcept:
    """RFC 8785 §3.2.3 order: insertion sort for the usual handful of members, else a merge sort."""
    cdef Py_ssize_t i, j
    cdef Member tmp
    cdef Member* scratch
    if n <= 24:
        for i in range(1, n):
            tmp = m[i]
            j = i
            while j > 0 and _member_less(&tmp, &m[j - 1]):
                m[j] = m[j - 1]
                j -= 1
            m[j] = tmp
        return
    scratch = <Member*>PyMem_Malloc(n * sizeof(Member))
    if scratch == NULL:  # out of memory: fall back to the slow but allocation-free sort
        for i in range(1, n):
            tmp = m[i]
            j = i
            while j > 0 and _member_less(&tmp, &m[j - 1]):
                m[j] = m[j - 1]
                j -= 1
            m[j] = tmp
        return
    _merge_sort(m, scratch, n)
    PyMem_Free(scratch)


cdef void _merge_sort(Member* m, Member* scratch, Py_ssize_t n) noexcept:
    cdef Py_ssize_t half, i, j, k
    if n <= 24:
        _sort_members(m, n)
        return
    half = n // 2
    _merge_sort(m, scratch, half)
    _merge_sort(m + half, scratch, n - half)
    memcpy(scratch, m, half * sizeof(Member))
    i = 0
    j = half
    k = 0
    while i < half and j < n:
        if _member_less(&m[j], &scratch[i]):
            m[k] = m[j]
            j += 1
        else:
            m[k] = scratch[i]
            i += 1
        k += 1
    while i < half:
        m[k] = scratch[i]
        i += 1
        k += 1
