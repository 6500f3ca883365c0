/* C parts of the canonical writer's strings (native/canonical_strings.pxi): finding and copying
   runs that need no escaping, writing short ASCII member names, encoding wide text to UTF-8,
   and comparing member names in UTF-16 code-unit order.  Included once, by the generated
   _core_c.c; everything is static. */
#ifndef AJPCORE_CANONICAL_SCAN_H
#define AJPCORE_CANONICAL_SCAN_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "simd.h"

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

/* 8 Latin-1 bytes at a time: does the word hold a byte that cannot be copied as is
   (< 0x20, '"', '\' need escaping; >= 0x80 needs two UTF-8 bytes)?  With no high
   byte the three tests below are exact; any high byte answers yes by itself. */
static inline int ajp_word_needs_escape(uint64_t w) {
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t ctrl = (w - ones * 0x20) & ~w & highs;
    uint64_t q = w ^ (ones * '"');
    uint64_t b = w ^ (ones * '\\');
    return ((w & highs) | ctrl | ((q - ones) & ~q & highs) | ((b - ones) & ~b & highs)) != 0;
}

/* Copies the leading bytes of Latin-1 text p[0..n) that are plain ASCII needing no
   escaping (RFC 8785 §3.2.2.2: not < 0x20, '"' or '\') to dst and returns how many.
   dst has room for n + 16 bytes: whole words are stored before they are checked. */
static unsigned char ajp_escaped_byte[256];   /* 1 for < 0x20, '"', '\\', >= 0x80 */

static void ajp_init_escaped_bytes(void) {
    int c;
    for (c = 0; c < 256; c++) ajp_escaped_byte[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
}

/* The leading bytes of p[0..n) that need no escape, copied to dst: returns their count.
   Always inline in the value writer (ajp_put_clean_text): left out of line by the compiler
   in the large _put_value, it cost a call and its spills per string (offer +40).  Other
   callers take ajp_copy_clean_ascii (the compiler's choice, as before). */
AJP_ALWAYS_INLINE Py_ssize_t ajp_copy_clean_ascii_inline(char *dst, const unsigned char *p, Py_ssize_t n) {
    Py_ssize_t i = 0;
#if AJP_BUILD_SSE2
    const __m128i space = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
/* Signed compare: bytes >= 0x80 are negative, so they stop the copy too. */
#define AJP_BAD16(v) _mm_or_si128(_mm_cmplt_epi8((v), space), \
                                  _mm_or_si128(_mm_cmpeq_epi8((v), quote), _mm_cmpeq_epi8((v), bslash)))
    /* One vector first (Latin-1 prose stops in it), then 32 bytes a step (one branch
       for two vectors), then 16, then one vector that ends at n, overlapping bytes
       already copied (they are clean, so a hit is new). */
    if (n >= 48) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        int mask = _mm_movemask_epi8(AJP_BAD16(v));
        _mm_storeu_si128((__m128i *)dst, v);
        if (mask) {
            return ajp_ctz((unsigned)mask);
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
            return i + ajp_ctz((unsigned)mask);
        }
        i += 32;
    }
    while (i + 16 <= n) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        int mask = _mm_movemask_epi8(AJP_BAD16(v));
        _mm_storeu_si128((__m128i *)(dst + i), v);
        if (mask) {
            return i + ajp_ctz((unsigned)mask);
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

static inline Py_ssize_t ajp_copy_clean_ascii(char *dst, const unsigned char *p, Py_ssize_t n) {
    return ajp_copy_clean_ascii_inline(dst, p, n);
}


/* PEP 393 kind, length and data of a ready str, always inline: CPython's own accessors are
   static inline functions the compiler may leave out of line in the writer's large
   functions (a call for every name and string).  Same fields, read the same way. */
AJP_ALWAYS_INLINE int ajp_text_kind(PyObject *s) { return (int)((PyASCIIObject *)s)->state.kind; }

AJP_ALWAYS_INLINE Py_ssize_t ajp_text_length(PyObject *s) { return ((PyASCIIObject *)s)->length; }

AJP_ALWAYS_INLINE void *ajp_text_data(PyObject *s) {
    if (((PyASCIIObject *)s)->state.compact)
        return ((PyASCIIObject *)s)->state.ascii ? (void *)((PyASCIIObject *)s + 1) : (void *)((PyCompactUnicodeObject *)s + 1);
    return ((PyUnicodeObject *)s)->data.any;
}

/* ajp_word_needs_escape of two words at once (the halves of a short name): one vector
   compare where SSE2 is there (signed: bytes >= 0x80 answer yes too, as in the words). */
static inline int ajp_words_need_escape(uint64_t a, uint64_t b) {
#if AJP_BUILD_SSE2
    __m128i v = _mm_set_epi64x((long long)b, (long long)a);
    __m128i bad = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                               _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
    return _mm_movemask_epi8(bad) != 0;
#else
    return ajp_word_needs_escape(a) || ajp_word_needs_escape(b);
#endif
}

/* A str that is compact ASCII of at most 16 characters, none needing an escape (the
   usual member name), written as "text" straight from its data with word loads and
   stores; dst has room for 20 bytes.  Returns the bytes written, or 0 to leave the
   text to the general string writer (the bytes stored then are past the output). */
AJP_ALWAYS_INLINE Py_ssize_t ajp_put_short_text(char *dst, PyObject *s) {
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
        if (ajp_words_need_escape(a, b)) return 0;
        memcpy(dst + 1, &a, 8);
        memcpy(dst + 1 + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + n - 4, 4);
        uint64_t ab = (uint64_t)a | ((uint64_t)b << 32);
        if (ajp_words_need_escape(ab, ab)) return 0;
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
    return n + 2;
}

/* The usual member name written as "name": (ajp_put_short_text and the colon). */
AJP_ALWAYS_INLINE Py_ssize_t ajp_put_short_name(char *dst, PyObject *s) {
    Py_ssize_t k = ajp_put_short_text(dst, s);
    if (k) dst[k++] = ':';
    return k;
}

/* An exact str that is compact ASCII needing no escape (the usual value), written as
   "text" to dst, which has room for `room` bytes: short ones as ajp_put_short_text,
   longer ones by the run copier when the room holds n + 18 bytes.  Returns the bytes
   written, or 0 to leave the text to the general string writer.  copier_inline, a constant
   at each of the two callers below: the run copier always inline, else as the compiler
   chooses. */
AJP_ALWAYS_INLINE Py_ssize_t ajp_put_clean_text_by(char *dst, Py_ssize_t room, PyObject *s, const int copier_inline) {
    const unsigned char *data;
    Py_ssize_t n;
    if (!PyUnicode_IS_COMPACT_ASCII(s)) return 0;
    n = PyUnicode_GET_LENGTH(s);
    if (n <= 16) return room >= 20 ? ajp_put_short_text(dst, s) : 0;
    if (room < n + 18) return 0;
    dst[0] = '"';
    data = (const unsigned char *)(((PyASCIIObject *)s) + 1);
    if ((copier_inline ? ajp_copy_clean_ascii_inline(dst + 1, data, n) : ajp_copy_clean_ascii(dst + 1, data, n)) != n)
        return 0;
    dst[n + 1] = '"';
    return n + 2;
}

AJP_ALWAYS_INLINE Py_ssize_t ajp_put_clean_text(char *dst, Py_ssize_t room, PyObject *s) {
    return ajp_put_clean_text_by(dst, room, s, 0);
}

/* ajp_put_clean_text with the run copier always inline: for the member values of
   _put_dict (the offer's strings), where the compiler left it out of line. */
AJP_ALWAYS_INLINE Py_ssize_t ajp_put_clean_text_inline(char *dst, Py_ssize_t room, PyObject *s) {
    return ajp_put_clean_text_by(dst, room, s, 1);
}

/* The same for UCS-2 / UCS-4 text (PEP 393 kinds 2 and 4): copies the leading plain
   ASCII code units as bytes.  Packing saturates, so any unit >= 0x80 becomes a byte
   >= 0x80 or 0 (signed 16-bit overflow), and both stop the copy. */
static inline Py_ssize_t ajp_copy_clean_wide(int kind, char *dst, const void *data, Py_ssize_t n) {
    Py_ssize_t i = 0;
    const uint16_t *p2 = (const uint16_t *)data;
    const uint32_t *p4 = (const uint32_t *)data;
#if AJP_BUILD_SSE2
    const __m128i space = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
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
            return i + ajp_ctz((unsigned)mask);
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
AJP_ALWAYS_INLINE Py_ssize_t ajp_encode_wide_kind(const int kind, const void *data, Py_ssize_t *pos,
                                              Py_ssize_t end, char *block, int *status) {
    static const char hex[] = "0123456789abcdef";
    const uint16_t *p2 = (const uint16_t *)data;
    const uint32_t *p4 = (const uint32_t *)data;
    Py_ssize_t i = *pos, o = 0;
    int streak = 0;
    while (i < end) {
        uint32_t c;
#if AJP_BUILD_SSE2
        /* UCS-2 runs of 3-byte characters (CJK): 8 units checked at once (all >= 0x800 and
           none a surrogate), then each written with one 4-byte store, 3 bytes apart (the
           caller's room of 6 bytes a unit covers the store's one byte of overhang). */
        if (kind == 2 && p2[i] >= 0x800 && i + 8 <= end) {
            const __m128i floor = _mm_set1_epi16(0x800), zero = _mm_setzero_si128();
            const __m128i top5 = _mm_set1_epi16((short)0xF800), surrogate = _mm_set1_epi16((short)0xD800);
            do {
                __m128i u = _mm_loadu_si128((const __m128i *)(p2 + i));
                __m128i below = _mm_subs_epu16(floor, u);  /* 0 exactly where u >= 0x800 */
                __m128i bad = _mm_or_si128(_mm_xor_si128(_mm_cmpeq_epi16(below, zero), _mm_set1_epi16(-1)),
                                           _mm_cmpeq_epi16(_mm_and_si128(u, top5), surrogate));
                int k;
                if (_mm_movemask_epi8(bad)) break;
                for (k = 0; k < 8; k++) {
                    uint32_t x = p2[i + k];
                    uint32_t bytes = (0xE0u | (x >> 12)) | ((0x80u | ((x >> 6) & 0x3Fu)) << 8)
                                     | ((0x80u | (x & 0x3Fu)) << 16);
                    memcpy(block + o, &bytes, 4);  /* little-endian: the first byte first */
                    o += 3;
                }
                i += 8;
            } while (i + 8 <= end);
            streak = 0;
            if (i >= end) break;
        }
#endif
        c = kind == 2 ? p2[i] : p4[i];
        i++;
        if (c < 0x80) {
            if (!ajp_escaped_byte[c]) {
                block[o++] = (char)c;
                if (++streak >= 16) { *pos = i; *status = 1; return o; }
                continue;
            }
            streak = 0;
            block[o++] = '\\';
            switch (c) {
            case '\b': block[o++] = 'b'; break;
            case '\t': block[o++] = 't'; break;
            case '\n': block[o++] = 'n'; break;
            case '\f': block[o++] = 'f'; break;
            case '\r': block[o++] = 'r'; break;
            case '"': block[o++] = '"'; break;
            case '\\': block[o++] = '\\'; break;
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

/* RFC 8785 §3.2.3: compare member names by UTF-16 code units (PEP 393 data). */
static inline uint32_t ajp_read(int kind, const void *data, Py_ssize_t i) {
    return kind == 1 ? ((const uint8_t *)data)[i] : kind == 2 ? ((const uint16_t *)data)[i] : ((const uint32_t *)data)[i];
}

/* The first 4 UTF-16 code units of a name of any kind (a code point beyond U+FFFF is its two
   surrogates; a lone surrogate of the str is its own unit), zero-padded, as a big-endian
   number: comparing two of these orders the names as ajp_compare_names would (NUL pads sort
   first, and equal prefixes fall through to the full comparison).  Names of one object are
   all given this prefix, or all (when every one is Latin-1) ajp_name_prefix. */
static inline uint64_t ajp_name_prefix16(int kind, const void *data, Py_ssize_t n) {
    uint64_t r = 0;
    int units = 0;
    Py_ssize_t i = 0;
    while (units < 4 && i < n) {
        uint32_t c = ajp_read(kind, data, i++);
        if (c >= 0x10000) {
            r = (r << 16) | (0xD800 + ((c - 0x10000) >> 10));
            if (++units == 4) break;
            c = 0xDC00 + ((c - 0x10000) & 0x3FF);
        }
        r = (r << 16) | c;
        units++;
    }
    return units ? r << (16 * (4 - units)) : 0;  /* (a shift by 64 is undefined) */
}

#if defined(__GNUC__) || defined(__clang__)
#define ajp_prefetch(p) __builtin_prefetch((const void *)(p))
#else
#define ajp_prefetch(p) ((void)(p))
#endif

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

/* ajp_compare_names of two str names, out of line: the insertion sort reaches it only on
   equal prefixes, and inline it takes registers the sort's loop then spills (offer). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static int ajp_compare_name_objects(PyObject *a, PyObject *b) {
    return ajp_compare_names(ajp_text_kind(a), ajp_text_data(a), ajp_text_length(a),
                             ajp_text_kind(b), ajp_text_data(b), ajp_text_length(b));
}

#endif /* AJPCORE_CANONICAL_SCAN_H */
