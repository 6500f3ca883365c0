/* C parts of the strict decoder (native/decoder.pxi): scanning strings and member names,
   and building strings at their final PEP 393 kind (numbers: decoder_numbers.h).  Included
   once, by the generated _core_c.c; everything is static.  No Python API calls but PyUnicode
   type names: these run on raw bytes. */
#ifndef AJPCORE_DECODER_SCAN_H
#define AJPCORE_DECODER_SCAN_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "simd.h"

/* Index of the lowest-addressed flagged byte of a nonzero mask of 0x80 flags read from memory. */
#if PY_LITTLE_ENDIAN
#define AJPCORE_FIRST_FLAGGED(m) (__builtin_ctzll(m) >> 3)
#else
#define AJPCORE_FIRST_FLAGGED(m) (__builtin_clzll(m) >> 3)
#endif

#if AJP_BUILD_SSE2
/* Bit k set when byte k of p[0:16) is '"', '\', a control character or non-ASCII (the
   signed compare: bytes >= 0x80 are negative, so below 0x20 too). */
static inline unsigned int ajpcore_stops16(const unsigned char *p) {
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    __m128i stop = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                                _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(0x22)), _mm_cmpeq_epi8(v, _mm_set1_epi8(0x5C))));
    return (unsigned int)_mm_movemask_epi8(stop);
}
#endif

/* First i' >= i where p[i'] is '"', '\', a control character or a non-ASCII byte.
   Sixteen bytes at a time where SSE2 is there, then eight: in each word mask the lowest
   flagged byte is exact (a borrow only flags bytes above a true hit), so the lowest flag
   overall is the answer. */
static inline Py_ssize_t ajpcore_scan_plain(const unsigned char *p, Py_ssize_t i, Py_ssize_t n) {
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
#if AJP_BUILD_SSE2
    while (i + 16 <= n) {
        unsigned int m = ajpcore_stops16(p + i);
        if (m)
            return i + __builtin_ctz(m);
        i += 16;
    }
#endif
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

/* JSON whitespace (RFC 8259 §2: space, tab, line feed, carriage return): bits 0x20, 0x09, 0x0A, 0x0D. */
static inline int ajpcore_is_ws(unsigned char c) { return c <= 0x20 && ((1ULL << c) & 0x100002600ULL); }

/* First i' >= i where p[i'] is not whitespace (or n): the rest of a run that
   ajpcore_skip_ws_at did not see the end of (an indentation wider than its window), read
   sixteen bytes at a time where SSE2 is there, looking for spaces, then at the byte that ends
   them; else eight spaces at a time.  Not inlined: it is the rare case. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static Py_ssize_t ajpcore_skip_ws_run(const unsigned char *p, Py_ssize_t i, Py_ssize_t n) {
    if (i >= n || !ajpcore_is_ws(p[i]))
        return i;
#if AJP_BUILD_SSE2
    while (i + 16 <= n) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        unsigned int m = ~(unsigned int)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(0x20))) & 0xFFFFu;
        if (m == 0) {
            i += 16;
            continue;
        }
        i += __builtin_ctz(m);
        if (!ajpcore_is_ws(p[i]))
            return i;
        i++;  /* a line feed, tab or carriage return among the spaces */
    }
#else
    while (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (w != 0x2020202020202020ULL)
            break;
        i += 8;
    }
#endif
    while (i < n && ajpcore_is_ws(p[i]))
        i++;
    return i;
}

/* First i' >= i where p[i'] is not whitespace (or n), p[i - 1] being a line break, a space
   after which more whitespace follows, or the like: a pretty-printer's indentation, whose width
   is known only from the bytes.  The window from i (32 bytes where SSE2 is there: two 16-byte
   compares and one mask, an indentation of up to 31 spaces; else one 8-byte word) is looked at
   for its first byte that is not a space.  That byte ends the run unless it is whitespace too
   (a blank line, a carriage return, a tab, an indentation wider than the window):
   ajpcore_skip_ws_run goes on from there.  Not inlined: the parse loop calls it from several
   places (ajpcore_skip_ws_at). */
AJP_ALWAYS_INLINE Py_ssize_t ajpcore_skip_indent(const unsigned char *p, Py_ssize_t i, Py_ssize_t n) {
#if AJP_BUILD_SSE2
    if (i + 32 <= n) {
        const __m128i spaces = _mm_set1_epi8(0x20);
        uint32_t lo = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i)), spaces));
        uint32_t hi = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i + 16)), spaces));
        uint32_t m = ~(lo | (hi << 16));
        if (m == 0)
            return ajpcore_skip_ws_run(p, i + 32, n);
        i += __builtin_ctz(m);
        if (p[i] > 0x20)  /* not whitespace (else whitespace, or a control character refused later) */
            return i;
    }
#else
    if (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        w ^= 0x2020202020202020ULL;  /* nonzero bytes: not a space */
        if (w == 0)
            return ajpcore_skip_ws_run(p, i + 8, n);
        i += AJPCORE_FIRST_FLAGGED(w);
        if (p[i] > 0x20)
            return i;
    }
#endif
    return ajpcore_skip_ws_run(p, i, n);
}

/* First i' > i where p[i'] is not whitespace (or n), p[i] being whitespace: the parse loop's
   whitespace.  The runs between tokens are of two kinds: one byte (`": "`, `", "`), one test
   inline; and a line break and indentation (ajpcore_skip_indent). */
AJP_ALWAYS_INLINE Py_ssize_t ajpcore_skip_ws_at(const unsigned char *p, Py_ssize_t i, Py_ssize_t n) {
    i++;
    if (i < n && p[i] > 0x20)  /* one byte of whitespace: p[i] is not */
        return i;
    return ajpcore_skip_indent(p, i, n);
}

/* Strings are read in two steps over the bytes of one string: ajpcore_scan_string
   checks everything (RFC 8259 §7 grammar; RFC 7493 §2.1: well-formed UTF-8, no lone
   surrogate escapes, no noncharacters) and learns the string's length in code points
   and its widest code point; ajpcore_fill_ucs1/2/4 then write the characters straight
   from the UTF-8 bytes and escapes into a str allocated at its final size and kind
   (PEP 393), without checks, without an intermediate buffer and without widening. */
enum {
    AJPCORE_STR_OK = 0,
    AJPCORE_STR_EOF,         /* at n */
    AJPCORE_STR_BAD_UTF8,    /* at the first byte of the ill-formed sequence */
    AJPCORE_STR_CONTROL,     /* at the control character */
    AJPCORE_STR_BAD_ESCAPE,  /* at the offending byte after the backslash */
    AJPCORE_STR_SURROGATE,   /* at the backslash of the lone surrogate escape */
    AJPCORE_STR_NONCHAR      /* at its first byte, or the backslash of its escape */
};

typedef struct {
    Py_ssize_t end;      /* OK: index of the closing quote; else where the problem is */
    Py_ssize_t length;   /* OK: code points */
    Py_UCS4 maxchar;     /* OK: 0x7F, 0xFF, 0xFFFF or 0x10FFFF, the class of the widest one */
    Py_UCS4 cp;          /* NONCHAR: the code point */
    Py_ssize_t escape;   /* OK: no backslash in the body before this index (<= end) */
} ajpcore_str_scan;

/* RFC 7493 §2.1 (Unicode §23.7): U+FDD0..U+FDEF and the last two code points of every plane. */
static inline int ajpcore_is_noncharacter(Py_UCS4 cp) {
    return (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE;
}

static inline Py_UCS4 ajpcore_char_class(Py_UCS4 cp) {
    return cp < 0x80 ? 0x7F : cp < 0x100 ? 0xFF : cp < 0x10000 ? 0xFFFF : 0x10FFFF;
}

/* RFC 8259 §7: the character of each two-character escape by its second byte; 0: not one. */
static const unsigned char ajpcore_esc_short[256] = {
    [0x22] = 0x22, [0x2F] = 0x2F, [0x5C] = 0x5C, [0x62] = 0x08,
    [0x66] = 0x0C, [0x6E] = 0x0A, [0x72] = 0x0D, [0x74] = 0x09};

static inline int ajpcore_hex_digit(unsigned int c) {
    if (c - 0x30u < 10u) return (int)(c - 0x30u);
    c |= 0x20u;
    if (c - 0x61u < 6u) return (int)(c - 0x61u + 10u);
    return -1;
}

/* The four hex digits at p[k]; on failure *where is the problem's position. */
static inline int ajpcore_hex4(const unsigned char *p, Py_ssize_t k, Py_ssize_t n, Py_UCS4 *v, Py_ssize_t *where) {
    Py_UCS4 x = 0;
    Py_ssize_t e;
    for (e = k + 4; k < e; k++) {
        int h;
        if (k >= n) { *where = n; return AJPCORE_STR_EOF; }
        h = ajpcore_hex_digit(p[k]);
        if (h < 0) { *where = k; return AJPCORE_STR_BAD_ESCAPE; }
        x = (x << 4) | (Py_UCS4)h;
    }
    *v = x;
    return AJPCORE_STR_OK;
}

/* The escape whose backslash is p[j] (RFC 8259 §7; RFC 7493 §2.1: no lone surrogate escape,
   no noncharacter), checked: on success *i is just after it and *shrink (bytes minus code
   points) and *maxc (the widest class) count it; else the status, with r->end (and r->cp). */
static inline int ajpcore_scan_escape(const unsigned char *p, Py_ssize_t j, Py_ssize_t n, Py_ssize_t *i,
                                      Py_ssize_t *shrink, Py_UCS4 *maxc, ajpcore_str_scan *r) {
    Py_ssize_t k;
    Py_UCS4 cp, low;
    unsigned int e;
    int status;
    if (j + 1 >= n) { r->end = n; return AJPCORE_STR_EOF; }
    e = p[j + 1];
    if (e != 0x75) {
        if (ajpcore_esc_short[e]) {
            *shrink += 1;
            *i = j + 2;
            return AJPCORE_STR_OK;
        }
        r->end = j + 1;
        return AJPCORE_STR_BAD_ESCAPE;
    }
    status = ajpcore_hex4(p, j + 2, n, &cp, &r->end);
    if (status) return status;
    k = j + 6;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        /* RFC 8259 §7 / RFC 7493 §2.1: a high surrogate escape must be followed by a low one. */
        if (!(k + 1 < n && p[k] == 0x5C && p[k + 1] == 0x75)) { r->end = j; return AJPCORE_STR_SURROGATE; }
        status = ajpcore_hex4(p, k + 2, n, &low, &r->end);
        if (status) return status;
        if (low < 0xDC00 || low > 0xDFFF) { r->end = j; return AJPCORE_STR_SURROGATE; }
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        k += 6;
        *shrink += 11;
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        r->end = j;
        return AJPCORE_STR_SURROGATE;
    } else {
        *shrink += 5;
    }
    if (ajpcore_is_noncharacter(cp)) { r->cp = cp; r->end = j; return AJPCORE_STR_NONCHAR; }
    *maxc |= ajpcore_char_class(cp);
    *i = k;
    return AJPCORE_STR_OK;
}

/* Unicode 15 Table 3-7, three-byte sequences: by lead byte E0..EF, the lowest second byte
   and the width of the second byte's range (E0: A0..BF, no overlongs; ED: 80..9F, no
   surrogates; others 80..BF). */
static const unsigned char ajpcore_utf8_3_low[16] = {
    0xA0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
static const unsigned char ajpcore_utf8_3_span[16] = {
    0x1F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x3F, 0x1F, 0x3F, 0x3F};

/* Check the string body starting at p[first] up to its closing quote; p[first:i] is
   already known to be well formed (ASCII but for `shrink` bytes more than its code points:
   escapes already read).  The first problem in byte order is reported. */
AJP_ALWAYS_INLINE int ajpcore_scan_string_at(const unsigned char *p, Py_ssize_t first,
                                                                        Py_ssize_t i, Py_ssize_t n, Py_ssize_t shrink,
                                                                        ajpcore_str_scan *r) {
    /* shrink: bytes minus code points */
    Py_UCS4 maxc = 0x7F;
    for (;;) {
        unsigned int c;
        i = ajpcore_scan_plain(p, i, n);
        if (i >= n) { r->end = n; return AJPCORE_STR_EOF; }
        c = p[i];
        /* Unicode 15 Table 3-7: no overlongs, no surrogates (ED A0..BF), nothing past U+10FFFF. */
        while (c >= 0x80) {
#if PY_LITTLE_ENDIAN
            if ((c & 0xF0) == 0xE0 && i + 8 <= n) {
                /* Runs of 3-byte characters (CJK text), two per 8-byte load: with a lead of
                   E1..EC or EE every continuation byte is allowed and none is a noncharacter,
                   so the byte pattern alone decides (E0, ED and EF take the full check below). */
                Py_ssize_t i0 = i;
                do {
                    uint64_t w;
                    memcpy(&w, p + i, 8);
                    if ((w & 0xC0C0F0C0C0F0ULL) != 0x8080E08080E0ULL
                        || ((0xA001u >> (w & 0x0F)) | (0xA001u >> ((w >> 24) & 0x0F))) & 1u)
                        break;
                    i += 6;
                } while (i + 8 <= n);
                if (i != i0) {
                    maxc |= 0xFFFF;
                    shrink += (i - i0) / 3 * 2;
                    c = p[i];  /* i + 2 <= n: the last step had 8 bytes */
                    continue;
                }
            }
#endif
            if (c < 0xE0) {
                if (c < 0xC2 || i + 1 >= n || (p[i + 1] & 0xC0) != 0x80) goto bad_utf8;
                maxc |= c < 0xC4 ? 0xFF : 0xFFFF;
                shrink += 1;
                i += 2;
            } else if (c < 0xF0) {
                unsigned int c1, c2;
                if (i + 2 >= n) goto bad_utf8;
                c1 = p[i + 1];
                c2 = p[i + 2];
                if ((unsigned int)(c1 - ajpcore_utf8_3_low[c & 0x0F]) > ajpcore_utf8_3_span[c & 0x0F]
                    || (c2 ^ 0x80) > 0x3F)
                    goto bad_utf8;
                if (c == 0xEF && ((c1 == 0xB7 && c2 >= 0x90 && c2 <= 0xAF) || (c1 == 0xBF && c2 >= 0xBE))) {
                    r->cp = ((c & 0x0F) << 12) | ((c1 & 0x3F) << 6) | (c2 & 0x3F);
                    r->end = i;
                    return AJPCORE_STR_NONCHAR;
                }
                maxc |= 0xFFFF;
                shrink += 2;
                i += 3;
            } else {
                unsigned int c1, c2, c3;
                if (c > 0xF4 || i + 3 >= n) goto bad_utf8;
                c1 = p[i + 1];
                c2 = p[i + 2];
                c3 = p[i + 3];
                if (c1 < (c == 0xF0 ? 0x90u : 0x80u) || c1 > (c == 0xF4 ? 0x8Fu : 0xBFu) || (c2 & 0xC0) != 0x80
                    || (c3 & 0xC0) != 0x80)
                    goto bad_utf8;
                if ((c1 & 0x0F) == 0x0F && c2 == 0xBF && c3 >= 0xBE) {  /* U+xFFFE, U+xFFFF */
                    r->cp = ((c & 0x07) << 18) | ((c1 & 0x3F) << 12) | ((c2 & 0x3F) << 6) | (c3 & 0x3F);
                    r->end = i;
                    return AJPCORE_STR_NONCHAR;
                }
                maxc |= 0x10FFFF;
                shrink += 3;
                i += 4;
            }
            if (i >= n) { r->end = n; return AJPCORE_STR_EOF; }
            c = p[i];
        }
        if (c == 0x22) {
            r->end = i;
            r->length = (i - first) - shrink;
            r->maxchar = maxc;
            return AJPCORE_STR_OK;
        }
        if (c == 0x5C) {
            int status = ajpcore_scan_escape(p, i, n, &i, &shrink, &maxc, r);
            if (status) return status;
            continue;
        }
        if (c < 0x20) { r->end = i; return AJPCORE_STR_CONTROL; }
        /* plain ASCII after a multi-byte character: keep scanning */
    }
bad_utf8:
    r->end = i;
    return AJPCORE_STR_BAD_UTF8;
}

/* ajpcore_scan_string_at compiled twice: with no escape before p[i], and after escapes. */
static int ajpcore_scan_string(const unsigned char *p, Py_ssize_t first, Py_ssize_t i, Py_ssize_t n,
                               ajpcore_str_scan *r) {
    return ajpcore_scan_string_at(p, first, i, n, 0, r);
}

static int ajpcore_scan_string_resume(const unsigned char *p, Py_ssize_t first, Py_ssize_t i, Py_ssize_t n,
                                      Py_ssize_t shrink, ajpcore_str_scan *r) {
    return ajpcore_scan_string_at(p, first, i, n, shrink, r);
}

static inline Py_UCS4 ajpcore_hex4_checked(const unsigned char *p) {
    return ((Py_UCS4)ajpcore_hex_digit(p[0]) << 12) | ((Py_UCS4)ajpcore_hex_digit(p[1]) << 8)
           | ((Py_UCS4)ajpcore_hex_digit(p[2]) << 4) | (Py_UCS4)ajpcore_hex_digit(p[3]);
}

/* The character of a checked two-character escape (its second byte e). */
static inline Py_UCS4 ajpcore_short_escape(unsigned int e) { return ajpcore_esc_short[e]; }

/* In a checked string body, a run of 3-byte characters (p is at one): two per 8-byte load
   while both leads are E0..EF (their continuation bytes are known to follow), then at most
   one more through the caller's single-character step.  The caller's c stays p[0]'s class. */
#if PY_LITTLE_ENDIAN
#define AJPCORE_FILL_3X2(T)                                                                         \
                while (end - p >= 8) {                                                              \
                    uint64_t w3;                                                                    \
                    memcpy(&w3, p, 8);                                                              \
                    if ((w3 & 0xF00000F0ULL) != 0xE00000E0ULL)                                       \
                        break;                                                                      \
                    o[0] = (T)(((w3 & 0x0F) << 12) | ((w3 >> 2) & 0xFC0) | ((w3 >> 16) & 0x3F));    \
                    o[1] = (T)(((w3 >> 12) & 0xF000) | ((w3 >> 26) & 0xFC0) | ((w3 >> 40) & 0x3F)); \
                    o += 2;                                                                         \
                    p += 6;                                                                         \
                }                                                                                   \
                c = p[0];                                                                           \
                if ((c & 0xF0) != 0xE0)                                                             \
                    continue;
#else
#define AJPCORE_FILL_3X2(T)
#endif

/* o[0:8) = the eight bytes of w (p[0:8)), each widened to T: SSE2 unpacks for 2- and 4-byte
   kinds (one and two 16-byte stores), one 8-byte store for 1-byte ones; the scalar loop
   without SSE2 or under AJPCORE_NO_SIMD. */
#if AJP_BUILD_SSE2
#define AJPCORE_WIDEN8(T, o, p, w)                                                                  \
    do {                                                                                            \
        if (sizeof(T) == 1) {                                                                       \
            memcpy((o), &(w), 8);                                                                   \
        } else {                                                                                    \
            __m128i zero_ = _mm_setzero_si128();                                                    \
            __m128i b_ = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(p)), zero_);           \
            if (sizeof(T) == 2) {                                                                   \
                _mm_storeu_si128((__m128i *)(void *)(o), b_);                                       \
            } else {                                                                                \
                _mm_storeu_si128((__m128i *)(void *)(o), _mm_unpacklo_epi16(b_, zero_));            \
                _mm_storeu_si128((__m128i *)(void *)((o) + 4), _mm_unpackhi_epi16(b_, zero_));      \
            }                                                                                       \
        }                                                                                           \
    } while (0)
#else
#define AJPCORE_WIDEN8(T, o, p, w)                                                                  \
    do {                                                                                            \
        int j_;                                                                                     \
        for (j_ = 0; j_ < 8; j_++)                                                                  \
            (o)[j_] = (T)(p)[j_];                                                                   \
    } while (0)
#endif

/* Write the code points of the checked string body p[0:end) to o (one element per code point,
   ``length`` of them: o has room for exactly that many).
   A plain ASCII byte starts a block copy of the plain bytes among the next eight (widened);
   multi-byte characters follow each other without that check, as in CJK text. */
#define AJPCORE_FILL(NAME, T)                                                                       \
static void NAME(const unsigned char *p, const unsigned char *end, T *o, Py_ssize_t length) {       \
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;                     \
    T *const oend = o + length;                                                                     \
    while (p < end) {                                                                               \
        unsigned int c = *p;                                                                        \
        if (c >= 0x80) {                                                                            \
            if (c < 0xE0) {                                                                         \
                *o++ = (T)(((c & 0x1F) << 6) | (p[1] & 0x3F));                                      \
                p += 2;                                                                             \
            } else if (c < 0xF0) {                                                                  \
                AJPCORE_FILL_3X2(T)                                                                 \
                *o++ = (T)(((c & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F));              \
                p += 3;                                                                             \
            } else {                                                                                \
                *o++ = (T)(((c & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6)        \
                           | (p[3] & 0x3F));                                                        \
                p += 4;                                                                             \
            }                                                                                       \
        } else if (c == 0x5C) {                                                                     \
            if (p[1] != 0x75) {                                                                     \
                *o++ = (T)ajpcore_short_escape(p[1]);                                               \
                p += 2;                                                                             \
            } else {                                                                                \
                Py_UCS4 cp = ajpcore_hex4_checked(p + 2);                                           \
                p += 6;                                                                             \
                if (cp >= 0xD800 && cp <= 0xDBFF) {                                                 \
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (ajpcore_hex4_checked(p + 2) - 0xDC00);  \
                    p += 6;                                                                         \
                }                                                                                   \
                *o++ = (T)cp;                                                                       \
            }                                                                                       \
        } else if (end - p >= 8) {                                                                  \
            uint64_t w, b, m;                                                                       \
            int k, run;                                                                             \
            memcpy(&w, p, 8);                                                                       \
            b = w ^ (ones * 0x5C);                                                                  \
            m = (w | ((b - ones) & ~b)) & highs;                                                    \
            /* plain bytes before the first non-ASCII byte or backslash (>= 1: p[0] is plain) */    \
            run = m ? (int)(AJPCORE_FIRST_FLAGGED(m)) : 8;                                          \
            if (oend - o >= 8) {                                                                    \
                /* all eight widened at once: o[run:8) is written again by what follows */          \
                AJPCORE_WIDEN8(T, o, p, w);                                                         \
            } else {                                                                                \
                for (k = 0; k < run; k++)                                                           \
                    o[k] = (T)p[k];                                                                 \
            }                                                                                       \
            o += run;                                                                               \
            p += run;                                                                               \
        } else {                                                                                    \
            *o++ = (T)c;                                                                            \
            p++;                                                                                    \
        }                                                                                           \
    }                                                                                               \
}
AJPCORE_FILL(ajpcore_fill_ucs1, Py_UCS1)
AJPCORE_FILL(ajpcore_fill_ucs2, Py_UCS2)
AJPCORE_FILL(ajpcore_fill_ucs4, Py_UCS4)

/* ---------------------------------------------------------------------------
   Member names: the decoder's cache of short ASCII names finds a name by a hash of its
   bytes taken while the name is scanned (one multiply per 8 bytes, from the same loads),
   and confirms a hit by comparing the bytes inline.  The hash only picks a cache slot and
   rejects most misses early; it never decides equality. */
static inline uint64_t ajpcore_name_mix(uint64_t h, uint64_t w) {
    h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
    return h ^ (h >> 32);
}

/* ajpcore_scan_plain from p[i], which also hashes the plain bytes p[i:result] into *hash. */
static inline Py_ssize_t ajpcore_scan_name(const unsigned char *p, Py_ssize_t i, Py_ssize_t n, unsigned long long *hash) {
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t h = 0x9E3779B97F4A7C15ULL, w = 0;
    Py_ssize_t start = i;
    int k = 0;
#if AJP_BUILD_SSE2 && PY_LITTLE_ENDIAN
    /* Sixteen bytes a step: the same words mixed in the same order as below. */
    while (i + 16 <= n) {
        unsigned int m = ajpcore_stops16(p + i);
        uint64_t w1;
        memcpy(&w, p + i, 8);
        memcpy(&w1, p + i + 8, 8);
        if (m) {
            k = __builtin_ctz(m);  /* plain bytes before the stop, 0..15 */
            if (k >= 8) {
                h = ajpcore_name_mix(h, w);
                w = w1;
                k -= 8;
                i += 8;
            }
            if (k) {
                w &= ~0ULL >> (64 - 8 * k);
                h = ajpcore_name_mix(h, w);
            }
            i += k;
            *hash = h ^ (uint64_t)(i - start);
            return i;
        }
        h = ajpcore_name_mix(ajpcore_name_mix(h, w), w1);
        i += 16;
    }
#endif
    while (i + 8 <= n) {
        uint64_t q, b, m;
        memcpy(&w, p + i, 8);
        q = w ^ (ones * 0x22);
        b = w ^ (ones * 0x5C);
        m = (w | ((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b)) & highs;
        if (m) {
            k = (int)AJPCORE_FIRST_FLAGGED(m);  /* plain bytes before the stop, 0..7 */
            if (k) {
#if PY_LITTLE_ENDIAN
                w &= ~0ULL >> (64 - 8 * k);
#else
                w &= ~0ULL << (64 - 8 * k);
#endif
                h = ajpcore_name_mix(h, w);
            }
            i += k;
            *hash = h ^ (uint64_t)(i - start);
            return i;
        }
        h = ajpcore_name_mix(h, w);
        i += 8;
    }
    /* fewer than 8 bytes left in the document */
    w = 0;
    while (i < n && p[i] >= 0x20 && p[i] < 0x80 && p[i] != 0x22 && p[i] != 0x5C) {
        w |= (uint64_t)p[i] << (8 * k);
        k++;
        i++;
    }
    if (k)
        h = ajpcore_name_mix(h, w);
    *hash = h ^ (uint64_t)(i - start);
    return i;
}

/* The usual member name: at most AJPCORE_SHORT_NAME plain ASCII bytes from p[i] (no '"', '\',
   control character or non-ASCII byte), then its closing quote.  Returns its length, with its
   bytes in w[0..1] (p[i] in the low byte of w[0]), the rest zero: the two words are the name
   itself (a name holds no zero byte), so the name cache compares them instead of the bytes.
   Else -1 (a longer name, an escape, non-ASCII text, the end of the document). */
#define AJPCORE_SHORT_NAME 15
AJP_ALWAYS_INLINE Py_ssize_t ajpcore_short_name(const unsigned char *p, Py_ssize_t i, Py_ssize_t n,
                                            unsigned long long w[2]) {
    Py_ssize_t k;
#if AJP_BUILD_SSE2 && PY_LITTLE_ENDIAN
    if (i + 16 <= n) {
        unsigned int m = ajpcore_stops16(p + i);
        uint64_t lo, hi;
        if (m == 0)
            return -1;
        k = __builtin_ctz(m);  /* 0..15 plain bytes, then the first stop */
        if (p[i + k] != 0x22)
            return -1;
        memcpy(&lo, p + i, 8);
        memcpy(&hi, p + i + 8, 8);
        if (k < 8) {
            lo &= (1ULL << (8 * k)) - 1;  /* k = 0: nothing kept */
            hi = 0;
        } else {
            hi &= (1ULL << (8 * (k - 8))) - 1;
        }
        w[0] = lo;
        w[1] = hi;
        return k;
    }
#endif
    /* Byte by byte: near the end of the document, and the reference for the other levels. */
    w[0] = 0;
    w[1] = 0;
    for (k = 0; k <= AJPCORE_SHORT_NAME && i + k < n; k++) {
        unsigned int c = p[i + k];
        if (c == 0x22)
            return k;
        if (k == AJPCORE_SHORT_NAME || c < 0x20 || c >= 0x80 || c == 0x5C)
            return -1;
        w[k >> 3] |= (unsigned long long)c << (8 * (k & 7));
    }
    return -1;
}

/* A member name that is not plain ASCII, from i (its first byte that is not plain ASCII) in
   the body that starts at p[body]: when the body has no backslash and at most max bytes, the
   position of its closing quote, with a hash of the body's bytes in *hash (it only picks a
   slot of the text-name cache); else -1.  The bytes are not checked here.  The quote or
   backslash is looked for 16 bytes at a time where SSE2 is there; the body is hashed a word
   at a time, its last word read whole (masked) while the document goes on for 8 bytes. */
static inline Py_ssize_t ajpcore_text_name(const unsigned char *p, Py_ssize_t body, Py_ssize_t i,
                                           Py_ssize_t n, Py_ssize_t max, unsigned long long *hash) {
    Py_ssize_t limit = body + max + 1 < n ? body + max + 1 : n, q = i, k;
    uint64_t h = 0x9E3779B97F4A7C15ULL, w;
#if AJP_BUILD_SSE2
    while (q < limit && q + 16 <= n) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + q));
        unsigned int m = (unsigned int)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(0x22)), _mm_cmpeq_epi8(v, _mm_set1_epi8(0x5C))));
        if (m) {
            q += __builtin_ctz(m);
            goto found;
        }
        q += 16;
    }
#endif
    for (; q < limit; q++) {
        if (p[q] == 0x22 || p[q] == 0x5C)
            break;
    }
#if AJP_BUILD_SSE2
found:
#endif
    if (q >= limit || p[q] == 0x5C)
        return -1;
    for (k = body; k + 8 <= q; k += 8) {
        memcpy(&w, p + k, 8);
        h = ajpcore_name_mix(h, w);
    }
    if (k < q) {
        if (k + 8 <= n) {
            memcpy(&w, p + k, 8);
#if PY_LITTLE_ENDIAN
            w &= ~0ULL >> (64 - 8 * (q - k));
#else
            w &= ~0ULL << (64 - 8 * (q - k));
#endif
        } else {
            w = 0;
            memcpy(&w, p + k, (size_t)(q - k));
        }
        h = ajpcore_name_mix(h, w);
    }
    *hash = h ^ (uint64_t)(q - body);
    return q;
}

/* a[0:n) == b[0:n), by (overlapping) word loads that stay inside both. */
static inline int ajpcore_same_bytes(const unsigned char *a, const unsigned char *b, Py_ssize_t n) {
    if (n >= 8) {
        uint64_t x, y;
        Py_ssize_t i;
        for (i = 0; i + 8 < n; i += 8) {
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            if (x != y)
                return 0;
        }
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return x == y;
    }
    if (n >= 4) {
        uint32_t x0, y0, x1, y1;
        memcpy(&x0, a, 4);
        memcpy(&y0, b, 4);
        memcpy(&x1, a + n - 4, 4);
        memcpy(&y1, b + n - 4, 4);
        return ((x0 ^ y0) | (x1 ^ y1)) == 0;
    }
    if (n == 0)
        return 1;
    return a[0] == b[0] && a[n >> 1] == b[n >> 1] && a[n - 1] == b[n - 1];  /* n <= 3: every byte */
}

#endif  /* AJPCORE_DECODER_SCAN_H */
