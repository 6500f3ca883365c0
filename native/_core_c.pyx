# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Native twin of ``ajpcore._core_py``: same functions, same order, same bytes, same errors.

The hot paths of ajpcore: RFC 8785 canonical encoding (here), and, in the
sections below it, strict decoding, the streaming HMAC sink and Ed25519 byte
checks.  Errors are the classes of ``ajpcore.errors``; their text and JSON
paths are built by the same Python helpers the pure twin uses.
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.dict cimport PyDict_Next
from cpython.float cimport PyFloat_FromDouble
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_FromLongLong
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.object cimport PyObject
from cpython.ref cimport Py_DECREF, Py_INCREF, Py_XDECREF
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdlib cimport atoi
from libc.string cimport memcmp, memcpy

import gc as _gc
import threading as _threading
from hashlib import sha256 as _sha256
from hmac import compare_digest as _compare_digest

from ajpcore.errors import (
    BadSignature,
    EncodeError,
    KeyFormatError,
    KeyUsageError,
    MalformedSignature,
    SignerFinalized,
    WeakKey,
    format_path,
)
from ajpcore._core_py import _format_int as _py_format_int  # rare path: ints beyond 2**53

cdef extern from "Python.h":
    ctypedef struct PyBytesObject
    int _PyBytes_Resize(PyObject **bytes, Py_ssize_t newsize) except -1
    PyObject* PyBytes_FromStringAndSize_raw "PyBytes_FromStringAndSize" (const char *v, Py_ssize_t n) except NULL
    char* PyOS_double_to_string(double val, char format_code, int precision, int flags, int *ptype) except NULL
    bint PyUnicode_IS_ASCII(object o)
    int PyUnicode_KIND(object o)
    void* PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    int PyUnicode_1BYTE_KIND
    int PyUnicode_2BYTE_KIND
    bint PyUnicode_Check(object o)
    bint PyUnicode_CheckExact(object o)
    bint PyLong_CheckExact(object o)
    bint PyLong_Check(object o)
    bint PyFloat_CheckExact(object o)
    bint PyFloat_Check(object o)
    double PyFloat_AS_DOUBLE(object o)
    bint PyDict_CheckExact(object o)
    bint PyDict_Check(object o)
    bint PyList_CheckExact(object o)
    bint PyList_Check(object o)
    bint PyTuple_CheckExact(object o)
    bint PyTuple_Check(object o)
    bint PyBool_Check(object o)
    Py_ssize_t PyDict_GET_SIZE(object o)

cdef extern from "math.h":
    bint isfinite(double x) nogil

cdef enum:
    _MAX_DEPTH = 512

MAX_DEPTH = _MAX_DEPTH
"""Deepest nesting of containers ``canonicalize`` accepts (``[]`` has depth 1)."""

cdef long long _MAX_SAFE_INT = 9007199254740991LL


# ---------------------------------------------------------------------------
# Canonical JSON (RFC 8785)
# ---------------------------------------------------------------------------

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>

    /* Shortest round-trip digits of a double (the Ryu method, Adams 2018): the same
       digits as float.__repr__ and ECMAScript Number::toString, without
       PyOS_double_to_string's big-number arithmetic and malloc.  The two tables are
       5**i scaled to 125 significant bits and 2**j / 5**i rounded up, filled at
       import from Python ints (ajp_set_pow5 below). */
    static uint64_t ajp_pow5_inv[342][2];   /* [i][0] low 64 bits, [i][1] high */
    static uint64_t ajp_pow5[326][2];

    static void ajp_set_pow5(int inv, int i, uint64_t lo, uint64_t hi) {
        if (inv) { ajp_pow5_inv[i][0] = lo; ajp_pow5_inv[i][1] = hi; }
        else { ajp_pow5[i][0] = lo; ajp_pow5[i][1] = hi; }
    }

    static inline int32_t ajp_pow5bits(int32_t e) { return (int32_t)(((uint32_t)e * 1217359u) >> 19) + 1; }
    static inline uint32_t ajp_log10_pow2(int32_t e) { return ((uint32_t)e * 78913u) >> 18; }
    static inline uint32_t ajp_log10_pow5(int32_t e) { return ((uint32_t)e * 732923u) >> 20; }

    static inline uint32_t ajp_pow5_factor(uint64_t v) {
        uint32_t count = 0;
        for (;;) {
            uint64_t q = v / 5;
            if (v != q * 5) return count;
            v = q;
            ++count;
        }
    }

    static inline int ajp_multiple_of_pow5(uint64_t v, uint32_t p) { return ajp_pow5_factor(v) >= p; }
    static inline int ajp_multiple_of_pow2(uint64_t v, uint32_t p) { return (v & ((1ull << p) - 1)) == 0; }

    #if defined(__SIZEOF_INT128__)
    static inline uint64_t ajp_mul_shift64(uint64_t m, const uint64_t *mul, int32_t j) {
        unsigned __int128 b0 = (unsigned __int128)m * mul[0];
        unsigned __int128 b2 = (unsigned __int128)m * mul[1];
        return (uint64_t)(((b0 >> 64) + b2) >> (j - 64));
    }
    #else
    static inline uint64_t ajp_umul128(uint64_t a, uint64_t b, uint64_t *hi) {
        uint64_t a_lo = (uint32_t)a, a_hi = a >> 32, b_lo = (uint32_t)b, b_hi = b >> 32;
        uint64_t b00 = a_lo * b_lo, b01 = a_lo * b_hi, b10 = a_hi * b_lo, b11 = a_hi * b_hi;
        uint64_t mid1 = b10 + (b00 >> 32);
        uint64_t mid2 = b01 + (uint32_t)mid1;
        *hi = b11 + (mid1 >> 32) + (mid2 >> 32);
        return (mid2 << 32) | (uint32_t)b00;
    }
    static inline uint64_t ajp_mul_shift64(uint64_t m, const uint64_t *mul, int32_t j) {
        uint64_t high1, high0, sum, low1 = ajp_umul128(m, mul[1], &high1);
        uint32_t dist = (uint32_t)(j - 64);
        ajp_umul128(m, mul[0], &high0);
        sum = high0 + low1;
        if (sum < high0) ++high1;
        if (dist == 0) return sum;
        if (dist >= 64) return high1 >> (dist - 64);
        return (high1 << (64 - dist)) | (sum >> dist);
    }
    #endif

    /* x > 0, finite.  Sets *digits (no trailing zeros needed) and returns e10 with
       x ~ digits * 10**e10, the shortest such decimal inside x's rounding interval,
       nearest to x, ties to even (ECMA-262 7.1.12.1 step 5). */
    static int32_t ajp_shortest(double x, uint64_t *digits) {
        uint64_t bits;
        memcpy(&bits, &x, sizeof bits);
        const uint64_t mant = bits & ((1ull << 52) - 1);
        const uint32_t exp = (uint32_t)((bits >> 52) & 0x7ff);
        int32_t e2;
        uint64_t m2;
        if (exp == 0) { e2 = 1 - 1023 - 52 - 2; m2 = mant; }
        else { e2 = (int32_t)exp - 1023 - 52 - 2; m2 = (1ull << 52) | mant; }
        const int accept_bounds = (m2 & 1) == 0;
        const uint64_t mv = 4 * m2;
        const uint32_t mm_shift = mant != 0 || exp <= 1;
        uint64_t vr, vp, vm;
        int32_t e10;
        int vm_trailing_zeros = 0, vr_trailing_zeros = 0;
        if (e2 >= 0) {
            const uint32_t q = ajp_log10_pow2(e2) - (e2 > 3);
            const int32_t k = 125 + ajp_pow5bits((int32_t)q) - 1;
            const int32_t i = -e2 + (int32_t)q + k;
            e10 = (int32_t)q;
            vr = ajp_mul_shift64(4 * m2, ajp_pow5_inv[q], i);
            vp = ajp_mul_shift64(4 * m2 + 2, ajp_pow5_inv[q], i);
            vm = ajp_mul_shift64(4 * m2 - 1 - mm_shift, ajp_pow5_inv[q], i);
            if (q <= 21) {
                if (mv % 5 == 0) vr_trailing_zeros = ajp_multiple_of_pow5(mv, q);
                else if (accept_bounds) vm_trailing_zeros = ajp_multiple_of_pow5(mv - 1 - mm_shift, q);
                else vp -= ajp_multiple_of_pow5(mv + 2, q);
            }
        } else {
            const uint32_t q = ajp_log10_pow5(-e2) - (-e2 > 1);
            const int32_t i = -e2 - (int32_t)q;
            const int32_t k = ajp_pow5bits(i) - 125;
            const int32_t j = (int32_t)q - k;
            e10 = (int32_t)q + e2;
            vr = ajp_mul_shift64(4 * m2, ajp_pow5[i], j);
            vp = ajp_mul_shift64(4 * m2 + 2, ajp_pow5[i], j);
            vm = ajp_mul_shift64(4 * m2 - 1 - mm_shift, ajp_pow5[i], j);
            if (q <= 1) {
                vr_trailing_zeros = 1;
                if (accept_bounds) vm_trailing_zeros = mm_shift == 1;
                else --vp;
            } else if (q < 63) {
                vr_trailing_zeros = ajp_multiple_of_pow2(mv, q);
            }
        }
        int32_t removed = 0;
        uint64_t output;
        if (vm_trailing_zeros || vr_trailing_zeros) {
            uint32_t last_removed = 0;
            /* Two digits a step while both fit: the same flags as two single steps
               (vm's pair must be 00; vr's lower digit and the previous last digit 0). */
            for (;;) {
                uint64_t vp100 = vp / 100, vm100 = vm / 100;
                if (vp100 <= vm100) break;
                uint64_t vr100 = vr / 100;
                uint32_t vm_mod = (uint32_t)(vm - 100 * vm100), vr_mod = (uint32_t)(vr - 100 * vr100);
                vm_trailing_zeros &= vm_mod == 0;
                vr_trailing_zeros &= last_removed == 0 && vr_mod % 10 == 0;
                last_removed = vr_mod / 10;
                vr = vr100; vp = vp100; vm = vm100;
                removed += 2;
            }
            for (;;) {
                uint64_t vp10 = vp / 10, vm10 = vm / 10;
                if (vp10 <= vm10) break;
                uint32_t vm_mod = (uint32_t)(vm - 10 * vm10);
                uint64_t vr10 = vr / 10;
                uint32_t vr_mod = (uint32_t)(vr - 10 * vr10);
                vm_trailing_zeros &= vm_mod == 0;
                vr_trailing_zeros &= last_removed == 0;
                last_removed = vr_mod;
                vr = vr10; vp = vp10; vm = vm10;
                ++removed;
            }
            if (vm_trailing_zeros) {
                for (;;) {
                    uint64_t vm100 = vm / 100;
                    if (vm - 100 * vm100 != 0) break;
                    uint64_t vp100 = vp / 100, vr100 = vr / 100;
                    uint32_t vr_mod = (uint32_t)(vr - 100 * vr100);
                    vr_trailing_zeros &= last_removed == 0 && vr_mod % 10 == 0;
                    last_removed = vr_mod / 10;
                    vr = vr100; vp = vp100; vm = vm100;
                    removed += 2;
                }
                for (;;) {
                    uint64_t vm10 = vm / 10;
                    uint32_t vm_mod = (uint32_t)(vm - 10 * vm10);
                    if (vm_mod != 0) break;
                    uint64_t vp10 = vp / 10, vr10 = vr / 10;
                    uint32_t vr_mod = (uint32_t)(vr - 10 * vr10);
                    vr_trailing_zeros &= last_removed == 0;
                    last_removed = vr_mod;
                    vr = vr10; vp = vp10; vm = vm10;
                    ++removed;
                }
            }
            if (vr_trailing_zeros && last_removed == 5 && vr % 2 == 0) last_removed = 4;
            output = vr + ((vr == vm && (!accept_bounds || !vm_trailing_zeros)) || last_removed >= 5);
        } else {
            int round_up = 0;
            uint64_t vp100 = vp / 100, vm100 = vm / 100;
            if (vp100 > vm100) {
                uint64_t vr100 = vr / 100;
                round_up = (uint32_t)(vr - 100 * vr100) >= 50;
                vr = vr100; vp = vp100; vm = vm100;
                removed += 2;
            }
            for (;;) {
                uint64_t vp10 = vp / 10, vm10 = vm / 10;
                if (vp10 <= vm10) break;
                uint64_t vr10 = vr / 10;
                round_up = (uint32_t)(vr - 10 * vr10) >= 5;
                vr = vr10; vp = vp10; vm = vm10;
                ++removed;
            }
            output = vr + (vr == vm || round_up);
        }
        *digits = output;
        return e10 + removed;
    }

    static const char ajp_digit_pairs[201] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";

    /* Exactly 8 decimal digits of v < 10**8 (leading zeros kept) at p. */
    static inline void ajp_8_digits(uint32_t v, char *p) {
        uint32_t hi = v / 10000, lo = v - hi * 10000;
        memcpy(p, ajp_digit_pairs + 2 * (hi / 100), 2);
        memcpy(p + 2, ajp_digit_pairs + 2 * (hi % 100), 2);
        memcpy(p + 4, ajp_digit_pairs + 2 * (lo / 100), 2);
        memcpy(p + 6, ajp_digit_pairs + 2 * (lo % 100), 2);
    }

    /* Decimal digits of v, ending just before `end`; returns the digit count.
       Eight digits at a time in 32-bit arithmetic, then pairs. */
    static inline int ajp_u64_digits(uint64_t v, char *end) {
        char *p = end;
        uint32_t v32;
        while (v >= 100000000u) {
            uint64_t q = v / 100000000u;
            p -= 8;
            ajp_8_digits((uint32_t)(v - q * 100000000u), p);
            v = q;
        }
        v32 = (uint32_t)v;
        while (v32 >= 100) {
            uint32_t q = v32 / 100;
            p -= 2;
            memcpy(p, ajp_digit_pairs + 2 * (v32 - q * 100), 2);
            v32 = q;
        }
        if (v32 >= 10) { p -= 2; memcpy(p, ajp_digit_pairs + 2 * v32, 2); }
        else { *--p = (char)('0' + v32); }
        return (int)(end - p);
    }

    /* Fixed-size copies compile to a few moves where a variable memcpy is a call; the
       bytes past the real length land in slack the callers reserve and are never counted. */
    #define AJP_COPY24(dst, src) memcpy((dst), (src), 24)

    /* Decimal text of v into out (needs 25 bytes of room); returns the length. */
    static inline int ajp_format_i64(long long v, char *out) {
        char digits[48];
        int o = 0, k;
        unsigned long long u = (unsigned long long)v;
        if (v < 0) { out[o++] = '-'; u = 0 - u; }
        k = ajp_u64_digits(u, digits + 24);
        AJP_COPY24(out + o, digits + 24 - k);
        return o + k;
    }

    /* ECMAScript Number::toString (ECMA-262 7.1.12.1) of a finite double into out
       (needs 48 bytes of room); returns the length.  Integral values below 2**53 skip
       the digit search. */
    static int ajp_format_double(double x, char *out) {
        char digits[48];   /* digits end at digits + 24; 24-byte copies may read to the end */
        char *p;
        uint64_t d;
        int o = 0, k, n, e, i;
        if (x == 0.0) { out[0] = '0'; return 1; }
        if (x < 0) { out[o++] = '-'; x = -x; }
        if (x <= 9007199254740991.0 && x == (double)(uint64_t)x) {
            k = ajp_u64_digits((uint64_t)x, digits + 24);
            AJP_COPY24(out + o, digits + 24 - k);
            return o + k;
        }
        n = ajp_shortest(x, &d);
        k = ajp_u64_digits(d, digits + 24);
        p = digits + 24 - k;
        n += k;   /* position of the decimal point relative to the first digit */
        if (k <= n && n <= 21) {
            AJP_COPY24(out + o, p); o += k;
            for (i = k; i < n; i++) out[o++] = '0';
        } else if (0 < n && n <= 21) {
            AJP_COPY24(out + o, p); o += n;
            out[o++] = '.';
            AJP_COPY24(out + o, p + n); o += k - n;
        } else if (-6 < n && n <= 0) {
            out[o++] = '0'; out[o++] = '.';
            for (i = 0; i < -n; i++) out[o++] = '0';
            AJP_COPY24(out + o, p); o += k;
        } else {
            e = n - 1;
            out[o++] = p[0];
            if (k > 1) { out[o++] = '.'; AJP_COPY24(out + o, p + 1); o += k - 1; }
            out[o++] = 'e';
            out[o++] = e >= 0 ? '+' : '-';
            if (e < 0) e = -e;
            if (e >= 100) out[o++] = (char)('0' + e / 100);
            if (e >= 10) out[o++] = (char)('0' + e / 10 % 10);
            out[o++] = (char)('0' + e % 10);
        }
        return o;
    }

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
        while (i + 16 <= n) {
            __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
            /* Signed compare: bytes >= 0x80 are negative, so they stop the copy too. */
            __m128i bad = _mm_or_si128(_mm_cmplt_epi8(v, space),
                                       _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
            int mask = _mm_movemask_epi8(bad);
            _mm_storeu_si128((__m128i *)(dst + i), v);
            if (mask) {
    #if defined(__GNUC__) || defined(__clang__)
                return i + __builtin_ctz((unsigned)mask);
    #else
                break;
    #endif
            }
            i += 16;
        }
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
       *pos; *status: 0 reached end, 1 stopped after 8 plain ASCII characters in a row
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
                    if (++streak >= 8) { *pos = i; *status = 1; return o; }
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

    /* The value of an int that fits one internal digit (|v| < 2**30, the common case),
       read without a call; returns 0 for any other int.  Uses the documented
       PyUnstable_Long_* API from 3.12, the long-stable digit layout before it. */
    static inline int ajp_compact_long(PyObject *v, long long *out) {
    #if defined(PYPY_VERSION)
        (void)v; (void)out;
        return 0;
    #elif PY_VERSION_HEX >= 0x030C0000
        if (!PyUnstable_Long_IsCompact((PyLongObject *)v)) return 0;
        *out = (long long)PyUnstable_Long_CompactValue((PyLongObject *)v);
        return 1;
    #else
        Py_ssize_t size = Py_SIZE(v);
        if (size == 0) { *out = 0; return 1; }
        if (size == 1) { *out = (long long)((PyLongObject *)v)->ob_digit[0]; return 1; }
        if (size == -1) { *out = -(long long)((PyLongObject *)v)->ob_digit[0]; return 1; }
        return 0;
    #endif
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
    void ajp_set_pow5(int inv, int i, unsigned long long lo, unsigned long long hi)
    int ajp_format_double(double x, char* out) nogil
    int ajp_format_i64(long long v, char* out) nogil
    bint ajp_word_needs_escape(unsigned long long w) nogil
    int ajp_compare_names(int ka, const void* a, Py_ssize_t na, int kb, const void* b, Py_ssize_t nb) nogil
    unsigned long long ajp_name_prefix(const void* data, Py_ssize_t n) nogil
    void ajp_prefetch(const void* p) nogil
    Py_ssize_t ajp_copy_clean_ascii(char* dst, const unsigned char* p, Py_ssize_t n) nogil
    Py_ssize_t ajp_copy_clean_wide(int kind, char* dst, const void* data, Py_ssize_t n) nogil
    bint ajp_compact_long(PyObject* v, long long* out) nogil
    Py_ssize_t ajp_encode_wide(int kind, const void* data, Py_ssize_t* pos, Py_ssize_t end, char* block, int* status) nogil
    void ajp_init_escaped_bytes()
    int _name_kind "PyUnicode_KIND" (PyObject* o) nogil
    void* _name_data "PyUnicode_DATA" (PyObject* o) nogil
    Py_ssize_t _name_length "PyUnicode_GET_LENGTH" (PyObject* o) nogil


cdef void _init_pow5_tables():
    cdef int i
    cdef object p, v
    cdef unsigned long long mask = 0xFFFFFFFFFFFFFFFF
    for i in range(342):
        p = (<object>5) ** i
        v = (1 << (p.bit_length() - 1 + 125)) // p + 1
        ajp_set_pow5(1, i, v & mask, v >> 64)
    for i in range(326):
        p = (<object>5) ** i
        v = p >> (p.bit_length() - 125) if p.bit_length() >= 125 else p << (125 - p.bit_length())
        ajp_set_pow5(0, i, v & mask, v >> 64)


_init_pow5_tables()
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


cdef enum:
    _SCRATCH = 4096       # unbounded mode starts in this stack buffer: no allocation for small documents
    _MAX_CHUNK = 1 << 20  # streaming never buffers more than this, whatever chunk_size allows
    _COPY_OUT = 1 << 20   # outputs this large are copied out of the grown buffer (see _w_finish)
    _INLINE_MEMBERS = 48  # members of the open objects, on the stack until they outgrow it
    _STR_BLOCK = 64       # non-ASCII text is encoded in blocks of this many code points


cdef struct Step:
    PyObject* key      # borrowed from the member stack; NULL for an array index
    Py_ssize_t index


cdef struct Member:
    PyObject* key      # strong references: a ``write`` callback may mutate the dict
    PyObject* value
    unsigned long long prefix  # ajp_name_prefix of a Latin-1 name, else 0


cdef struct Writer:
    char* data          # scratch, or the payload of buf
    Py_ssize_t length
    Py_ssize_t cap
    PyObject* buf       # owned bytes object; NULL while data is scratch
    Py_ssize_t chunk    # 0: unbounded (canonicalize); else flush every chunk bytes
    Py_ssize_t total
    PyObject* write     # borrowed
    int depth
    Member* members     # a stack: each open object owns members[base:base + n]
    Py_ssize_t mtop
    Py_ssize_t mcap
    Step steps[_MAX_DEPTH + 1]
    Member inline_members[_INLINE_MEMBERS]
    char scratch[_SCRATCH]


cdef void _w_init(Writer* w, Py_ssize_t chunk, object write):
    w.data = w.scratch
    w.length = 0
    w.cap = _SCRATCH
    w.buf = NULL
    w.chunk = chunk
    w.total = 0
    w.write = <PyObject*>write
    w.depth = 0
    w.members = w.inline_members
    w.mtop = 0
    w.mcap = _INLINE_MEMBERS


cdef void _w_release(Writer* w):
    """Drop everything the writer still owns (after success or an exception)."""
    cdef Py_ssize_t i
    for i in range(w.mtop):
        Py_DECREF(<object>w.members[i].key)
        Py_DECREF(<object>w.members[i].value)
    w.mtop = 0
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
    try:
        (<object>w.write)(<object>full)
    finally:
        Py_XDECREF(full)
    if more:
        _w_new_chunk(w)
    return 0


cdef int _w_grow(Writer* w, Py_ssize_t need) except -1:
    """Unbounded: room for ``need`` more bytes (leave the stack scratch for a bytes object)."""
    cdef Py_ssize_t cap = w.cap
    while cap - w.length < need:
        cap = cap * 2
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


cdef int _w_fail(Writer* w, str reason) except -1:
    raise EncodeError(reason, _w_path(w))


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
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(s)
    cdef int kind = PyUnicode_KIND(s)
    cdef void* raw = PyUnicode_DATA(s)
    cdef Py_ssize_t i, end, o, copied
    cdef int status
    cdef bint at_run
    cdef unsigned int c
    cdef char block[_STR_BLOCK * 6]
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
        # ... everything else through a small block: escapes, UTF-8, and short ASCII runs
        # (back to the run copier after 8 plain characters in a row).
        end = i + _STR_BLOCK
        if end > n:
            end = n
        o = ajp_encode_wide(kind, raw, &i, end, block, &status)
        _w_put(w, block, o)
        if status == 2:
            _w_fail(w, "String contains a lone surrogate")
        at_run = status == 1
    return _w_put_char(w, b'"')


# -- numbers -----------------------------------------------------------

cdef inline int _put_ll(Writer* w, long long v) except -1:
    cdef char out[32]
    if w.cap - w.length >= 32:
        w.length += ajp_format_i64(v, w.data + w.length)
        return 0
    return _w_put(w, out, ajp_format_i64(v, out))


cdef int _put_double(Writer* w, double x) except -1:
    """ECMAScript Number::toString of a finite double (RFC 8785 §3.2.2.3, ECMA-262 7.1.12.1)."""
    cdef char out[64]
    if w.cap - w.length >= 64:
        w.length += ajp_format_double(x, w.data + w.length)
        return 0
    return _w_put(w, out, ajp_format_double(x, out))


def _format_double(double x):
    """The native twin of ``_core_py._format_double`` (exposed for tests)."""
    cdef char out[64]
    return out[:ajp_format_double(x, out)].decode("ascii")


def _unlocated(): return "$"


cdef int _put_int(Writer* w, object v) except -1:
    cdef int overflow = 0
    cdef long long n
    cdef bytes text
    if ajp_compact_long(<PyObject*>v, &n):
        return _put_ll(w, n)
    n = PyLong_AsLongLongAndOverflow(v, &overflow)
    if overflow == 0 and -_MAX_SAFE_INT <= n <= _MAX_SAFE_INT:
        return _put_ll(w, n)
    try:
        text = _py_format_int(int.__index__(v), _unlocated).encode('ascii')
    except EncodeError as exc:
        _w_fail(w, exc.reason)
    return _w_put(w, PyBytes_AS_STRING(text), len(text))


# -- values ------------------------------------------------------------

cdef int _put_value(Writer* w, object v) except -1:
    cdef double x
    if PyUnicode_CheckExact(v):
        return _put_str(w, v)
    if PyLong_CheckExact(v):
        return _put_int(w, v)
    if PyFloat_CheckExact(v):
        x = PyFloat_AS_DOUBLE(v)
        if not isfinite(x):
            _w_fail(w, f"Non-finite float `{float.__repr__(v)}` has no JSON form")
        return _put_double(w, x)
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
            _w_fail(w, f"Non-finite float `{float.__repr__(v)}` has no JSON form")
        return _put_double(w, x)
    _w_fail(w, f"Unsupported type `{type(v).__qualname__}`")


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


cdef int _push_members(Writer* w, object d, Py_ssize_t n, bint* exact, bint* latin1) except -1:
    """Snapshot the members of ``d`` onto the member stack, refusing non-str keys (in insertion order)."""
    cdef Py_ssize_t pos = 0, need = w.mtop + n, count, j
    cdef PyObject* key
    cdef PyObject* value
    cdef Member* m
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
    latin1[0] = True
    # First only collect the pointers and prefetch the values: their cache misses then
    # overlap instead of stalling one by one.  Nothing runs between the two loops, so
    # the borrowed pointers stay valid until the second loop takes references.
    count = 0
    while w.mtop + count < need and PyDict_Next(d, &pos, &key, &value):
        m = &w.members[w.mtop + count]
        m.key = key
        m.value = value
        ajp_prefetch(value)
        count += 1
    for j in range(count):
        m = &w.members[w.mtop]
        key = m.key
        if not PyUnicode_CheckExact(<object>key):
            if not PyUnicode_Check(<object>key):
                _w_fail(w, f"Object key must be `str`, got `{type(<object>key).__qualname__}`")
            exact[0] = False
        Py_INCREF(<object>key)
        Py_INCREF(<object>m.value)
        if _name_kind(key) == PyUnicode_1BYTE_KIND:
            m.prefix = ajp_name_prefix(_name_data(key), _name_length(key))
        else:
            m.prefix = 0
            latin1[0] = False
        w.mtop += 1
    return 0


cdef int _put_dict(Writer* w, object d) except -1:
    cdef Py_ssize_t i, n, base
    cdef bint exact, latin1
    cdef Member* m
    if w.depth >= _MAX_DEPTH:
        _w_fail(w, f"Nesting deeper than {_MAX_DEPTH}")
    n = PyDict_GET_SIZE(d)
    if n == 0:
        return _w_put(w, b"{}", 2)
    base = w.mtop
    _push_members(w, d, n, &exact, &latin1)
    n = w.mtop - base
    if n > 1:
        # Latin-1 names sort as bytes, mostly by their first 8 (ajp_name_prefix); others by UTF-16 units.
        _sort_members(w.members + base, n, latin1)
        if not exact:
            for i in range(1, n):
                m = &w.members[base + i]
                if _compare_names(m.key, (m - 1).key) == 0:
                    _w_fail(w, f"Duplicate object key `{str.__str__(<object>m.key)}`")
    _w_put_char(w, b'{')
    w.depth += 1
    for i in range(n):
        # Index afresh each time: a nested object may have moved the member stack.
        w.steps[w.depth - 1].key = w.members[base + i].key
        if i:
            _w_put_char(w, b',')
        _put_str(w, <object>w.members[base + i].key)
        _w_put_char(w, b':')
        _put_value(w, <object>w.members[base + i].value)
    w.depth -= 1
    for i in range(base, w.mtop):
        Py_DECREF(<object>w.members[i].key)
        Py_DECREF(<object>w.members[i].value)
    w.mtop = base
    return _w_put_char(w, b'}')


cdef int _put_array(Writer* w, object a) except -1:
    cdef Py_ssize_t i
    cdef bint is_list = PyList_Check(a)
    cdef object item
    if w.depth >= _MAX_DEPTH:
        _w_fail(w, f"Nesting deeper than {_MAX_DEPTH}")
    if (PyList_GET_SIZE(a) if is_list else PyTuple_GET_SIZE(a)) == 0:
        return _w_put(w, b"[]", 2)
    _w_put_char(w, b'[')
    w.depth += 1
    w.steps[w.depth - 1].key = NULL
    i = 0
    while True:
        # Re-read the size each time: a streaming write callback may mutate the list.
        if is_list:
            if i >= PyList_GET_SIZE(a):
                break
            if i + 4 < PyList_GET_SIZE(a):
                ajp_prefetch(PyList_GET_ITEM(a, i + 4))
            item = <object>PyList_GET_ITEM(a, i)
        else:
            if i >= PyTuple_GET_SIZE(a):
                break
            item = <object>PyTuple_GET_ITEM(a, i)
        w.steps[w.depth - 1].index = i
        if i:
            _w_put_char(w, b',')
        _put_value(w, item)
        i += 1
    w.depth -= 1
    return _w_put_char(w, b']')


def canonicalize(value):
    """RFC 8785 canonical JSON of ``value`` as UTF-8 bytes (see ajpcore._core_py.canonicalize)."""
    cdef Writer w
    _w_init(&w, 0, None)
    try:
        _put_value(&w, value)
        return _w_finish(&w)
    finally:
        _w_release(&w)


def canonicalize_into(value, write, *, chunk_size=65536):
    """Hand the canonical bytes of ``value`` to ``write`` in chunks of at most ``chunk_size``.

    See ajpcore._core_py.canonicalize_into; this twin hands over at most 1 MiB at a time.
    """
    if type(chunk_size) is not int or chunk_size < 1:
        raise ValueError("chunk_size must be a positive int")
    cdef Writer w
    _w_init(&w, min(chunk_size, _MAX_CHUNK), write)
    try:
        _w_start_stream(&w)
        _put_value(&w, value)
        _w_flush(&w, False)
        return w.total
    finally:
        _w_release(&w)


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

    def __cinit__(self):
        self.scratch = NULL
        self.scratch_cap = 0
        self.stack = []
        self.keys = []

    def __dealloc__(self):
        PyMem_Free(self.scratch)

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


cdef Py_ssize_t _GC_PAUSE_BYTES = 16384


cdef object _decode_buffer(const unsigned char* p, Py_ssize_t n, object max_depth, bint allow_duplicate_keys):
    cdef _StrictParser d = _StrictParser()
    d.p = p
    d.n = n
    # No document of n bytes nests deeper than n: a larger limit is the same as n.
    d.max_depth = max_depth if max_depth < n else n
    d.max_depth_shown = max_depth
    d.allow_duplicate_keys = allow_duplicate_keys
    if n < _GC_PAUSE_BYTES or not _gc.isenabled():
        return d.parse()
    # A large document creates containers by the hundred thousand; each of them
    # would otherwise trigger the cyclic collector to rescan the young, growing,
    # acyclic tree.  Nothing the parser runs can create a cycle, so the collector
    # waits until the tree is complete.
    _gc.disable()
    try:
        return d.parse()
    finally:
        _gc.enable()


def decode(data, *, max_depth=MAX_DEPTH, allow_duplicate_keys=False):
    """Parse one strictly valid I-JSON document (see ajpcore._core_py.decode)."""
    cdef const char* text
    cdef Py_ssize_t size
    cdef Py_buffer view
    if type(max_depth) is not int or max_depth < 0:
        raise ValueError("max_depth must be a non-negative int")
    allow = bool(allow_duplicate_keys)
    if PyBytes_Check(data):
        return _decode_buffer(<const unsigned char*>PyBytes_AS_STRING(data), len(data), max_depth, allow)
    if PyUnicode_Check(data):
        try:
            text = PyUnicode_AsUTF8AndSize(data, &size)
        except UnicodeEncodeError:
            # Positions are byte offsets of the UTF-8 form; a lone surrogate is kept
            # as its 3-byte (ill-formed) sequence so it is refused like one in bytes.
            raw = (<str>data).encode("utf-8", "surrogatepass")
            return _decode_buffer(<const unsigned char*>PyBytes_AS_STRING(raw), len(raw), max_depth, allow)
        return _decode_buffer(<const unsigned char*>text, size, max_depth, allow)
    if PyByteArray_Check(data) or PyMemoryView_Check(data):
        if PyMemoryView_Check(data) and not (<memoryview>data).c_contiguous:
            raw = (<memoryview>data).tobytes()
            return _decode_buffer(<const unsigned char*>PyBytes_AS_STRING(raw), len(raw), max_depth, allow)
        # Holding the buffer export keeps a bytearray from being resized under the parser.
        PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
        try:
            return _decode_buffer(<const unsigned char*>view.buf, view.len, max_depth, allow)
        finally:
            PyBuffer_Release(&view)
    raise TypeError(f"decode() takes bytes, bytearray, memoryview or str, not `{type(data).__qualname__}`")


# ---------------------------------------------------------------------------
# Streaming HMAC-SHA256 (RFC 2104 over OpenSSL's SHA-256 from hashlib)
# ---------------------------------------------------------------------------

# Keyed states of recently used secrets: see the pure twin for why caching them is acceptable.
HMAC_CACHE_SIZE = 32
"""How many secrets ``HmacSigner`` keeps keyed SHA-256 states for (oldest evicted first; 0: none)."""

cdef enum:
    _HMAC_BLOCK = 64  # SHA-256 block size in bytes (RFC 2104 §2: B)
    _HMAC_TAG_SIZE = 32
cdef bytes _IPAD = bytes([x ^ 0x36 for x in range(256)])
cdef bytes _OPAD = bytes([x ^ 0x5C for x in range(256)])
cdef dict _hmac_cache = {}
_hmac_cache_lock = _threading.Lock()


cdef tuple _hmac_keyed_states(object secret):
    """The (inner, outer) SHA-256 states keyed with ``secret``, from the cache when present."""
    cdef object states, key, cache_key
    t = type(secret)
    if t is str or t is bytes:
        states = _hmac_cache.get(secret)
        if states is not None:
            return <tuple>states
        cache_key = secret
        key = secret if t is bytes else _utf8_secret(secret)
    elif isinstance(secret, str):
        # A subclass may redefine hashing and equality: key the cache by plain bytes.
        key = cache_key = _utf8_secret(str.__str__(secret))
    elif isinstance(secret, (bytes, bytearray, memoryview)):
        key = cache_key = bytes(secret)
    else:
        raise KeyUsageError(f"HMAC secret must be `bytes` or `str`, got `{type(secret).__qualname__}`")
    if cache_key is not secret:
        states = _hmac_cache.get(cache_key)
        if states is not None:
            return <tuple>states
    # RFC 2104 §2: a key longer than the block is hashed first, then zero-padded to B bytes.
    if len(key) > _HMAC_BLOCK:
        key = _sha256(key).digest()
    key = key.ljust(_HMAC_BLOCK, b"\0")
    states = (_sha256(key.translate(_IPAD)), _sha256(key.translate(_OPAD)))
    if HMAC_CACHE_SIZE > 0:
        with _hmac_cache_lock:
            while len(_hmac_cache) >= HMAC_CACHE_SIZE:
                del _hmac_cache[next(iter(_hmac_cache))]
            _hmac_cache[cache_key] = states
    return <tuple>states


cdef bytes _utf8_secret(str secret):
    try:
        return secret.encode("utf-8")
    except UnicodeEncodeError:
        raise KeyFormatError("HMAC secret contains a lone surrogate (not UTF-8 encodable)") from None


def clear_hmac_cache():
    """Forget every cached keyed HMAC state (and the secrets they are keyed by)."""
    with _hmac_cache_lock:
        _hmac_cache.clear()


cdef class HmacSigner:
    """Streaming HMAC-SHA256 (RFC 2104) over OpenSSL's SHA-256 (see ajpcore._core_py.HmacSigner)."""

    cdef object _inner
    cdef object _update
    cdef object _outer
    cdef bint _done

    def __init__(self, secret):
        cdef tuple states = _hmac_keyed_states(secret)
        self._inner = states[0].copy()
        self._update = self._inner.update
        self._outer = states[1]
        self._done = False

    cdef int _spent(self) except -1:
        raise SignerFinalized("HmacSigner is finalized; call copy() before finalize() to continue a stream")

    def update(self, data):
        """Feed ``data`` (bytes-like) to the MAC."""
        if self._done:
            self._spent()
        self._update(data)

    def copy(self):
        """An independent signer that has seen the same bytes."""
        if self._done:
            self._spent()
        cdef HmacSigner other = HmacSigner.__new__(HmacSigner)
        other._inner = self._inner.copy()
        other._update = other._inner.update
        other._outer = self._outer
        other._done = False
        return other

    def finalize(self):
        """The 32-byte HMAC-SHA256 tag of everything fed so far; spends the signer."""
        if self._done:
            self._spent()
        self._done = True
        outer = self._outer.copy()
        outer.update(self._inner.digest())
        self._inner = None
        self._update = None
        return outer.digest()

    def hexdigest(self):
        """``finalize()`` as 64 lowercase hex digits; spends the signer."""
        return self.finalize().hex()

    def verify(self, tag):
        """Check ``tag`` (32 bytes) against the MAC in constant time; spends the signer."""
        mac = self.finalize()
        if not isinstance(tag, (bytes, bytearray, memoryview)):
            raise BadSignature(f"HMAC-SHA256 tag must be bytes, got `{type(tag).__qualname__}`")
        tag = bytes(tag)
        if len(tag) != _HMAC_TAG_SIZE:
            raise BadSignature(f"HMAC-SHA256 tag must be {_HMAC_TAG_SIZE} bytes, got {len(tag)} (truncated tags are refused)")
        if not _compare_digest(mac, tag):
            raise BadSignature("HMAC-SHA256 tag does not match")


def hmac_sha256_canonical(value, secret, *, chunk_size=65536):
    """HMAC-SHA256 under ``secret`` of ``canonicalize(value)``, streamed (see ajpcore._core_py)."""
    cdef tuple states = _hmac_keyed_states(secret)
    inner = states[0].copy()
    canonicalize_into(value, inner.update, chunk_size=chunk_size)
    outer = states[1].copy()
    outer.update(inner.digest())
    return outer.digest()


# ---------------------------------------------------------------------------
# Ed25519 byte-level checks (RFC 8032 encodings; strict policy)
# ---------------------------------------------------------------------------

# Little-endian encodings of p = 2**255 - 19 and of the group order L (RFC 8032 §5.1).
cdef bytes _ED25519_P = bytes.fromhex("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
cdef bytes _ED25519_L = bytes.fromhex("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")
# y-coordinates (< p) of the 8 points of order 1, 2, 4 and 8: any point with one of
# these y is of small order whatever its sign bit (libsodium's blocklist, RFC 8032 §5.1.3).
cdef bytes _ED25519_SMALL_ORDER_Y = bytes.fromhex(
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0100000000000000000000000000000000000000000000000000000000000000"
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"
)


cdef bytes _ed25519_bytes(object data, str what, object error):
    if type(data) is bytes:
        return <bytes>data
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise error(f"{what} must be bytes, got `{type(data).__name__}`")


cdef inline bint _le_at_least(const unsigned char* a, const unsigned char* b) noexcept:
    """a >= b for two 32-byte little-endian numbers."""
    cdef int i = 31
    while i >= 0:
        if a[i] != b[i]:
            return a[i] > b[i]
        i -= 1
    return True


cdef int _ed25519_point_refusal(const unsigned char* enc) noexcept:
    """0 if a 32-byte point encoding is admitted, 1 if y >= p, 2 if x = 0 with the sign
    bit set, 3 if the point has small order."""
    cdef unsigned char y[32]
    cdef const unsigned char* small = <const unsigned char*>PyBytes_AS_STRING(_ED25519_SMALL_ORDER_Y)
    cdef int k
    memcpy(y, enc, 32)
    y[31] &= 0x7F  # bit 255 is the sign of x
    if _le_at_least(y, <const unsigned char*>PyBytes_AS_STRING(_ED25519_P)):
        return 1
    for k in range(5):
        if memcmp(y, small + 32 * k, 32) == 0:
            # y = 1 and y = p - 1 are the two points with x = 0, which has no negative (RFC 8032 §5.1.3 step 4).
            if (enc[31] & 0x80) and (k == 1 or k == 2):
                return 2
            return 3
    return 0


def ed25519_check_public_key(raw):
    """Refuse an Ed25519 public key encoding the strict policy does not admit.

    ``raw`` is the 32-byte RFC 8032 encoding (bytes-like).  Raises
    ``KeyFormatError`` for another type or length, ``WeakKey`` when y >= p
    (non-canonical) or the point has small order (order 1, 2, 4 or 8).
    """
    cdef bytes b = _ed25519_bytes(raw, "Ed25519 public key", KeyFormatError)
    if len(b) != 32:
        raise KeyFormatError(f"Ed25519 public key must be 32 bytes, got {len(b)}")
    cdef int refusal = _ed25519_point_refusal(<const unsigned char*>PyBytes_AS_STRING(b))
    if refusal == 1:
        raise WeakKey("Ed25519 public key is not canonically encoded (y >= p)")
    if refusal == 2:
        raise WeakKey("Ed25519 public key is not canonically encoded (x = 0 with the sign bit set)")
    if refusal == 3:
        raise WeakKey("Ed25519 public key has small order")


def ed25519_check_signature(sig):
    """Refuse an Ed25519 signature the strict policy does not admit, before any arithmetic.

    ``sig`` is the raw 64 bytes R || S (bytes-like).  Raises
    ``MalformedSignature`` for a non-bytes value and ``BadSignature`` for a
    length other than 64, an R with y >= p, an R of small order, or S >= L
    (RFC 8032 §5.1.7: S must be in range; R must be the canonical encoding).
    """
    cdef bytes b = _ed25519_bytes(sig, "Ed25519 signature", MalformedSignature)
    if len(b) != 64:
        raise BadSignature(f"Ed25519 signature must be 64 bytes, got {len(b)}")
    cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(b)
    cdef int refusal = _ed25519_point_refusal(s)
    if refusal == 1:
        raise BadSignature("Ed25519 signature R is not canonically encoded (y >= p)")
    if refusal == 2:
        raise BadSignature("Ed25519 signature R is not canonically encoded (x = 0 with the sign bit set)")
    if refusal == 3:
        raise BadSignature("Ed25519 signature R has small order")
    if _le_at_least(s + 32, <const unsigned char*>PyBytes_AS_STRING(_ED25519_L)):
        raise BadSignature("Ed25519 signature S is not reduced (S >= L)")
