# Included by native/_core_c.pyx (shares its namespace).  Pure twin: ajpcore/_core_py/canonical_strings.py.

# ---------------------------------------------------------------------------
# Canonical strings and member-name order (RFC 8785 §3.2.2.2, §3.2.3)
# ---------------------------------------------------------------------------

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>

    /* 8 Latin-1 bytes at a time: does the word hold a byte that cannot be copied as is
       (< 0x20, '"', '\\' need escaping; >= 0x80 needs two UTF-8 bytes)?  With no high
       byte the three tests below are exact; any high byte answers yes by itself. */
    static inline int ajp_word_needs_escape(uint64_t w) {
        const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
        uint64_t ctrl = (w - ones * 0x20) & ~w & highs;
        uint64_t q = w ^ (ones * '"');
        uint64_t b = w ^ (ones * '\\\\');
        return ((w & highs) | ctrl | ((q - ones) & ~q & highs) | ((b - ones) & ~b & highs)) != 0;
    }

    /* Copies the leading bytes of Latin-1 text p[0..n) that are plain ASCII needing no
       escaping (RFC 8785 §3.2.2.2: not < 0x20, '"' or '\\') to dst and returns how many.
       dst has room for n + 16 bytes: whole words are stored before they are checked. */
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif
    static unsigned char ajp_escaped_byte[256];   /* 1 for < 0x20, '"', '\\\\', >= 0x80 */

    static void ajp_init_escaped_bytes(void) {
        int c;
        for (c = 0; c < 256; c++) ajp_escaped_byte[c] = c < 0x20 || c == '"' || c == '\\\\' || c >= 0x80;
    }

    static inline Py_ssize_t ajp_copy_clean_ascii(char *dst, const unsigned char *p, Py_ssize_t n) {
        Py_ssize_t i = 0;
    #if defined(__SSE2__)
        const __m128i space = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\\\');
    /* Signed compare: bytes >= 0x80 are negative, so they stop the copy too. */
    #define AJP_BAD16(v) _mm_or_si128(_mm_cmplt_epi8((v), space), \\
                                      _mm_or_si128(_mm_cmpeq_epi8((v), quote), _mm_cmpeq_epi8((v), bslash)))
        /* One vector first (Latin-1 prose stops in it), then 32 bytes a step (one branch
           for two vectors), then 16, then one vector that ends at n, overlapping bytes
           already copied (they are clean, so a hit is new). */
        if (n >= 48) {
            __m128i v = _mm_loadu_si128((const __m128i *)p);
            int mask = _mm_movemask_epi8(AJP_BAD16(v));
            _mm_storeu_si128((__m128i *)dst, v);
            if (mask) {
    #if defined(__GNUC__) || defined(__clang__)
                return __builtin_ctz((unsigned)mask);
    #else
                Py_ssize_t k = 0;
                while (!((mask >> k) & 1)) k++;
                return k;
    #endif
            }
            i = 16;
        }
        while (i + 32 <= n) {
            __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
            __m128i u = _mm_loadu_si128((const __m128i *)(p + i + 16));
            __m128i bv = AJP_BAD16(v), bu = AJP_BAD16(u);
            _mm_storeu_si128((__m128i *)(dst + i), v);
            _mm_storeu_si128((__m128i *)(dst + i + 16), u);
            if (_mm_movemask_epi8(_mm_or_si128(bv, bu))) {
                unsigned mask = (unsigned)_mm_movemask_epi8(bv) | ((unsigned)_mm_movemask_epi8(bu) << 16);
    #if defined(__GNUC__) || defined(__clang__)
                return i + __builtin_ctz((unsigned)mask);
    #else
                Py_ssize_t k = 0;
                while (!((mask >> k) & 1)) k++;
                return i + k;
    #endif
            }
            i += 32;
        }
        while (i + 16 <= n) {
            __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
            int mask = _mm_movemask_epi8(AJP_BAD16(v));
            _mm_storeu_si128((__m128i *)(dst + i), v);
            if (mask) {
    #if defined(__GNUC__) || defined(__clang__)
                return i + __builtin_ctz((unsigned)mask);
    #else
                Py_ssize_t k = 0;
                while (!((mask >> k) & 1)) k++;
                return i + k;
    #endif
            }
            i += 16;
        }
        if (i < n && n >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(p + n - 16));
            if (!_mm_movemask_epi8(AJP_BAD16(v))) {
                _mm_storeu_si128((__m128i *)(dst + n - 16), v);
                return n;
            }
        }
    #undef AJP_BAD16
    #endif
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            if (ajp_word_needs_escape(w)) break;
            memcpy(dst + i, &w, 8);
            i += 8;
        }
        /* The short rest as one word that ends at n, overlapping bytes already copied
           (they are clean, so a hit is in the rest); falls through to bytes on a hit. */
        if (i < n && n - i < 8) {
            uint64_t w;
            uint32_t a, b;
            if (n >= 8) {
                memcpy(&w, p + n - 8, 8);
                if (!ajp_word_needs_escape(w)) { memcpy(dst + n - 8, &w, 8); return n; }
            } else if (n >= 4) {
                memcpy(&a, p, 4);
                memcpy(&b, p + n - 4, 4);
                if (!ajp_word_needs_escape((uint64_t)a | ((uint64_t)b << 32))) {
                    memcpy(dst, &a, 4);
                    memcpy(dst + n - 4, &b, 4);
                    return n;
                }
            }
        }
        while (i < n) {
            unsigned char c = p[i];
            if (ajp_escaped_byte[c]) return i;
            dst[i] = (char)c;
            i++;
        }
        return i;
    }

    /* A member name that is compact ASCII of at most 16 characters, none needing an
       escape (the usual name), written as "name": straight from its data with word
       loads and stores; dst has room for 20 bytes.  Returns the bytes written, or 0 to
       leave the name to the general string writer (nothing is stored then but dst[0]). */
    static inline Py_ssize_t ajp_put_short_name(char *dst, PyObject *s) {
        const unsigned char *p;
        Py_ssize_t n, i;
        if (!PyUnicode_IS_COMPACT_ASCII(s)) return 0;
        n = PyUnicode_GET_LENGTH(s);
        if (n > 16) return 0;
        p = (const unsigned char *)(((PyASCIIObject *)s) + 1);
        if (n >= 8) {
            uint64_t a, b;
            memcpy(&a, p, 8);
            memcpy(&b, p + n - 8, 8);
            if (ajp_word_needs_escape(a) || ajp_word_needs_escape(b)) return 0;
            memcpy(dst + 1, &a, 8);
            memcpy(dst + 1 + n - 8, &b, 8);
        } else if (n >= 4) {
            uint32_t a, b;
            memcpy(&a, p, 4);
            memcpy(&b, p + n - 4, 4);
            if (ajp_word_needs_escape((uint64_t)a | ((uint64_t)b << 32))) return 0;
            memcpy(dst + 1, &a, 4);
            memcpy(dst + 1 + n - 4, &b, 4);
        } else {
            for (i = 0; i < n; i++) {
                if (ajp_escaped_byte[p[i]]) return 0;
                dst[1 + i] = (char)p[i];
            }
        }
        dst[0] = '"';
        dst[n + 1] = '"';
        dst[n + 2] = ':';
        return n + 3;
    }

    /* The same for UCS-2 / UCS-4 text (PEP 393 kinds 2 and 4): copies the leading plain
       ASCII code units as bytes.  Packing saturates, so any unit >= 0x80 becomes a byte
       >= 0x80 or 0 (signed 16-bit overflow), and both stop the copy. */
    static inline Py_ssize_t ajp_copy_clean_wide(int kind, char *dst, const void *data, Py_ssize_t n) {
        Py_ssize_t i = 0;
        const uint16_t *p2 = (const uint16_t *)data;
        const uint32_t *p4 = (const uint32_t *)data;
    #if defined(__SSE2__)
        const __m128i space = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\\\');
        while (i + 8 <= n) {
            __m128i v;
            if (kind == 2) {
                __m128i u = _mm_loadu_si128((const __m128i *)(p2 + i));
                v = _mm_packus_epi16(u, u);
            } else {
                __m128i a = _mm_loadu_si128((const __m128i *)(p4 + i));
                __m128i b = _mm_loadu_si128((const __m128i *)(p4 + i + 4));
                __m128i h = _mm_packs_epi32(a, b);
                v = _mm_packus_epi16(h, h);
            }
            __m128i bad = _mm_or_si128(_mm_cmplt_epi8(v, space),
                                       _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
            int mask = _mm_movemask_epi8(bad) & 0xff;
            _mm_storel_epi64((__m128i *)(dst + i), v);
            if (mask) {
    #if defined(__GNUC__) || defined(__clang__)
                return i + __builtin_ctz((unsigned)mask);
    #else
                break;
    #endif
            }
            i += 8;
        }
    #endif
        while (i < n) {
            uint32_t c = kind == 2 ? p2[i] : p4[i];
            if (c >= 0x80 || ajp_escaped_byte[c]) return i;
            dst[i] = (char)c;
            i++;
        }
        return i;
    }

    /* UTF-8 with JSON escapes (RFC 8785 §3.2.2.2) of UCS-2 / UCS-4 text data[*pos..end)
       into block (6 bytes a code point at most).  Returns the bytes written and moves
       *pos; *status: 0 reached end, 1 stopped after 16 plain ASCII characters in a row
       (the caller copies such runs word-wise), 2 stopped after a lone surrogate. */
    #if defined(__GNUC__) || defined(__clang__)
    __attribute__((always_inline))
    #endif
    static inline Py_ssize_t ajp_encode_wide_kind(const int kind, const void *data, Py_ssize_t *pos,
                                                  Py_ssize_t end, char *block, int *status) {
        static const char hex[] = "0123456789abcdef";
        const uint16_t *p2 = (const uint16_t *)data;
        const uint32_t *p4 = (const uint32_t *)data;
        Py_ssize_t i = *pos, o = 0;
        int streak = 0;
        while (i < end) {
            uint32_t c = kind == 2 ? p2[i] : p4[i];
            i++;
            if (c < 0x80) {
                if (!ajp_escaped_byte[c]) {
                    block[o++] = (char)c;
                    if (++streak >= 16) { *pos = i; *status = 1; return o; }
                    continue;
                }
                streak = 0;
                block[o++] = '\\\\';
                switch (c) {
                case '\\b': block[o++] = 'b'; break;
                case '\\t': block[o++] = 't'; break;
                case '\\n': block[o++] = 'n'; break;
                case '\\f': block[o++] = 'f'; break;
                case '\\r': block[o++] = 'r'; break;
                case '"': block[o++] = '"'; break;
                case '\\\\': block[o++] = '\\\\'; break;
                default:
                    block[o++] = 'u'; block[o++] = '0'; block[o++] = '0';
                    block[o++] = hex[c >> 4]; block[o++] = hex[c & 15];
                }
                continue;
            }
            streak = 0;
            if (c < 0x800) {
                block[o++] = (char)(0xC0 | (c >> 6));
                block[o++] = (char)(0x80 | (c & 0x3F));
            } else if (c < 0x10000) {
                if (c >= 0xD800 && c <= 0xDFFF) { *pos = i; *status = 2; return o; }
                block[o++] = (char)(0xE0 | (c >> 12));
                block[o++] = (char)(0x80 | ((c >> 6) & 0x3F));
                block[o++] = (char)(0x80 | (c & 0x3F));
            } else {
                block[o++] = (char)(0xF0 | (c >> 18));
                block[o++] = (char)(0x80 | ((c >> 12) & 0x3F));
                block[o++] = (char)(0x80 | ((c >> 6) & 0x3F));
                block[o++] = (char)(0x80 | (c & 0x3F));
            }
        }
        *pos = i;
        *status = 0;
        return o;
    }

    static Py_ssize_t ajp_encode_wide(int kind, const void *data, Py_ssize_t *pos, Py_ssize_t end,
                                      char *block, int *status) {
        /* Two copies, each with a constant kind, so the inner loop has no kind test. */
        return kind == 2 ? ajp_encode_wide_kind(2, data, pos, end, block, status)
                         : ajp_encode_wide_kind(4, data, pos, end, block, status);
    }

    /* The first 8 bytes of a Latin-1 name, zero-padded, as a big-endian number: comparing
       two of these orders the names as memcmp would (NUL pads sort first, and equal
       prefixes fall through to the full comparison). */
    static inline uint64_t ajp_name_prefix(const void *data, Py_ssize_t n) {
        const unsigned char *p = (const unsigned char *)data;
        uint64_t r = 0;
        Py_ssize_t i;
        if (n >= 8) {
            memcpy(&r, p, 8);
    #if defined(__GNUC__) || defined(__clang__)
            return __builtin_bswap64(r);
    #else
            r = 0;
            n = 8;
    #endif
        }
        if (n == 0) return 0;
        /* Short names are assembled in registers (a partial store reloaded as one word
           stalls on store forwarding): two overlapping 4-byte loads, or single bytes. */
        if (n >= 4) {
            uint32_t hi, lo;
            memcpy(&hi, p, 4);
            memcpy(&lo, p + n - 4, 4);
    #if defined(__GNUC__) || defined(__clang__)
            hi = __builtin_bswap32(hi);
            lo = __builtin_bswap32(lo);
            return ((uint64_t)hi << 32) | ((uint64_t)lo << (8 * (8 - n)));
    #endif
        }
        for (i = 0; i < n; i++) r = (r << 8) | p[i];
        return r << (8 * (8 - n));
    }

    /* Index of the lowest set bit of x != 0. */
    static inline int ajp_ctz(unsigned int x) {
    #if defined(__GNUC__) || defined(__clang__)
        return __builtin_ctz(x);
    #else
        int k = 0;
        while (!((x >> k) & 1u)) k++;
        return k;
    #endif
    }

    #if defined(__GNUC__) || defined(__clang__)
    #define ajp_prefetch(p) __builtin_prefetch((const void *)(p))
    #else
    #define ajp_prefetch(p) ((void)(p))
    #endif

    /* RFC 8785 §3.2.3: compare member names by UTF-16 code units (PEP 393 data). */
    static inline uint32_t ajp_read(int kind, const void *data, Py_ssize_t i) {
        return kind == 1 ? ((const uint8_t *)data)[i] : kind == 2 ? ((const uint16_t *)data)[i] : ((const uint32_t *)data)[i];
    }

    static int ajp_compare_names(int ka, const void *a, Py_ssize_t na, int kb, const void *b, Py_ssize_t nb) {
        Py_ssize_t i = 0, j = 0;
        uint32_t pa = 0, pb = 0;   /* pending low surrogate of an astral code point */
        if (ka == 1 && kb == 1) {
            int c = memcmp(a, b, (size_t)(na < nb ? na : nb));
            if (c) return c;
            return na < nb ? -1 : na > nb;
        }
        if (ka != 4 && kb != 4) {
            /* Below U+10000 a code point is its one UTF-16 unit. */
            Py_ssize_t m = na < nb ? na : nb;
            for (i = 0; i < m; i++) {
                uint32_t ca = ajp_read(ka, a, i), cb = ajp_read(kb, b, i);
                if (ca != cb) return ca < cb ? -1 : 1;
            }
            return na < nb ? -1 : na > nb;
        }
        for (;;) {
            uint32_t ua, ub;
            int a_done = pa == 0 && i >= na, b_done = pb == 0 && j >= nb;
            if (a_done || b_done) return a_done && b_done ? 0 : a_done ? -1 : 1;
            if (pa) { ua = pa; pa = 0; }
            else {
                ua = ajp_read(ka, a, i++);
                if (ua >= 0x10000) { pa = 0xDC00 + ((ua - 0x10000) & 0x3FF); ua = 0xD800 + ((ua - 0x10000) >> 10); }
            }
            if (pb) { ub = pb; pb = 0; }
            else {
                ub = ajp_read(kb, b, j++);
                if (ub >= 0x10000) { pb = 0xDC00 + ((ub - 0x10000) & 0x3FF); ub = 0xD800 + ((ub - 0x10000) >> 10); }
            }
            if (ua != ub) return ua < ub ? -1 : 1;
        }
    }
    """
    bint ajp_word_needs_escape(unsigned long long w) nogil
    int ajp_compare_names(int ka, const void* a, Py_ssize_t na, int kb, const void* b, Py_ssize_t nb) nogil
    unsigned long long ajp_name_prefix(const void* data, Py_ssize_t n) nogil
    void ajp_prefetch(const void* p) nogil
    int ajp_ctz(unsigned int x) nogil
    Py_ssize_t ajp_copy_clean_ascii(char* dst, const unsigned char* p, Py_ssize_t n) nogil
    Py_ssize_t ajp_put_short_name(char* dst, PyObject* s) nogil
    Py_ssize_t ajp_copy_clean_wide(int kind, char* dst, const void* data, Py_ssize_t n) nogil
    Py_ssize_t ajp_encode_wide(int kind, const void* data, Py_ssize_t* pos, Py_ssize_t end, char* block, int* status) nogil
    void ajp_init_escaped_bytes()
    int _name_kind "PyUnicode_KIND" (PyObject* o) nogil
    void* _name_data "PyUnicode_DATA" (PyObject* o) nogil
    Py_ssize_t _name_length "PyUnicode_GET_LENGTH" (PyObject* o) nogil


ajp_init_escaped_bytes()


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
    cdef Py_ssize_t n
    cdef int kind
    cdef void* raw
    cdef Py_ssize_t i, end, o, copied
    cdef int status
    cdef bint at_run
    cdef unsigned int c
    cdef char block[_STR_BLOCK * 6]
    ajp_unicode_ready(s)
    n = PyUnicode_GET_LENGTH(s)
    kind = PyUnicode_KIND(s)
    raw = PyUnicode_DATA(s)
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


# -- member-name order ---------------------------------------------------

cdef inline int _compare_names(PyObject* a, PyObject* b) noexcept:
    return ajp_compare_names(_name_kind(a), _name_data(a), _name_length(a), _name_kind(b), _name_data(b), _name_length(b))


cdef inline bint _member_less(Member* a, Member* b, bint by_prefix) noexcept:
    if by_prefix and a.prefix != b.prefix:
        return a.prefix < b.prefix
    return _compare_names(a.key, b.key) < 0


cdef void _sort_members(Member* m, Py_ssize_t n, bint by_prefix) noexcept:
    """RFC 8785 §3.2.3 order: insertion sort for the usual handful of members, else a merge sort."""
    cdef Py_ssize_t i, j
    cdef Member tmp
    cdef Member* scratch
    if n <= 24:
        for i in range(1, n):
            tmp = m[i]
            j = i
            while j > 0 and _member_less(&tmp, &m[j - 1], by_prefix):
                m[j] = m[j - 1]
                j -= 1
            m[j] = tmp
        return
    scratch = <Member*>PyMem_Malloc(n * sizeof(Member))
    if scratch == NULL:  # out of memory: fall back to the slow but allocation-free sort
        for i in range(1, n):
            tmp = m[i]
            j = i
            while j > 0 and _member_less(&tmp, &m[j - 1], by_prefix):
                m[j] = m[j - 1]
                j -= 1
            m[j] = tmp
        return
    _merge_sort(m, scratch, n, by_prefix)
    PyMem_Free(scratch)


cdef void _merge_sort(Member* m, Member* scratch, Py_ssize_t n, bint by_prefix) noexcept:
    cdef Py_ssize_t half, i, j, k
    if n <= 24:
        _sort_members(m, n, by_prefix)
        return
    half = n // 2
    _merge_sort(m, scratch, half, by_prefix)
    _merge_sort(m + half, scratch, n - half, by_prefix)
    memcpy(scratch, m, half * sizeof(Member))
    i = 0
    j = half
    k = 0
    while i < half and j < n:
        if _member_less(&m[j], &scratch[i], by_prefix):
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
