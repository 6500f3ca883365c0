/* C parts of the strict decoder (native/decoder.pxi), continued from decoder_scan.h: numbers
   (binary64 without strtod, ints and plain fractions in one pass) and the literals.  Included
   once, by the generated _core_c.c; everything is static.  No Python API calls. */
#ifndef AJPCORE_DECODER_NUMBERS_H
#define AJPCORE_DECODER_NUMBERS_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "simd.h"
#include "number_format.h"  /* ajp_umul128: the 64x64->128 product, also where no __int128 is (MSVC) */

/* The number reader's entry is compiled into the decoder's loop (decoder.pxi _parse), where a
   document of numbers spends most of its time: a call would save and restore the registers
   of the whole loop for every number (AJP_ALWAYS_INLINE, simd.h). */

/* ---------------------------------------------------------------------------
   Numbers: the correctly rounded binary64 of a decimal literal, as float(text) gives it,
   for the usual literals: Clinger's exact fast path (the significand and the power of ten
   are both exact doubles), else the Eisel-Lemire algorithm (D. Lemire, "Number Parsing
   at a Gigabyte per Second", Software: Practice and Experience 51(8), 2021, §5-6) over a
   128-bit approximation of 5^q.  Whenever the result could be ambiguous (more than 19
   significant digits, a subnormal or out-of-range result, a product too close to a
   halfway point) the caller falls back to CPython's exact PyOS_string_to_double. */

#define AJPCORE_POW5_MIN (-342)
#define AJPCORE_POW5_MAX 308
/* [q - AJPCORE_POW5_MIN] = {high, low} 64-bit words of 5^q scaled into [2^127, 2^128):
   truncated for q >= 0, the reciprocal rounded up for q < 0 (filled at import by
   decoder_numbers.pxi from exact integers). */
static uint64_t ajpcore_pow5_128[AJPCORE_POW5_MAX - AJPCORE_POW5_MIN + 1][2];

static const double ajpcore_exact_pow10[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* The binary64 bits (no sign) of w * 10^q, w != 0; 0 when undecided. */
static int ajpcore_eisel_lemire(uint64_t w, int q, uint64_t *bits) {
    const uint64_t *pow5 = ajpcore_pow5_128[q - AJPCORE_POW5_MIN];
    int lz = __builtin_clzll(w);
    uint64_t hi, lo, mantissa;
    int upperbit, power2;
    w <<= lz;
    hi = ajp_umul128(w, pow5[0], &lo);
    if ((hi & 0x1FF) == 0x1FF) {
        /* The 9 bits below the 55 that decide the rounding are all ones: refine with the
           low word of 5^q (exact for 5^q < 2^128, i.e. q <= 55). */
        uint64_t second_lo, second_hi = ajp_umul128(w, pow5[1], &second_lo);
        lo += second_hi;
        if (second_hi > lo)
            hi++;
    }
    if (lo == 0xFFFFFFFFFFFFFFFFULL && (q < -27 || q > 55))
        return 0;  /* the approximation may be one unit short of a carry */
    upperbit = (int)(hi >> 63);
    mantissa = hi >> (upperbit + 9);
    /* floor(log2(10^q)) + 63 via 217706 / 2^16 ~ log2(10), exact over the table's range */
    power2 = ((q * (152170 + 65536)) >> 16) + 63 + upperbit - lz + 1023;
    if (power2 <= 0)
        return 0;  /* subnormal: the slow path */
    if (lo <= 1 && q >= -4 && q <= 23 && (mantissa & 3) == 1 && (mantissa << (upperbit + 9)) == hi)
        mantissa &= ~1ULL;  /* exactly halfway (5^q exact): round to even, i.e. down */
    mantissa += mantissa & 1;
    mantissa >>= 1;
    if (mantissa >= (2ULL << 52)) {
        mantissa = 1ULL << 52;
        power2++;
    }
    mantissa &= ~(1ULL << 52);
    if (power2 >= 0x7FF)
        return 0;  /* overflow: the slow path says infinity */
    *bits = mantissa | ((uint64_t)power2 << 52);
    return 1;
}

/* An exponent whose value reaches this bound is not read here: the slow path decides it.  It is
   far beyond any binary64 (|q| <= 342 here), so a literal that keeps it is never decided in
   this file; it stays exact in int64_t together with the fraction's shift (q >= -PY_SSIZE_T_MAX),
   whatever the document's size. */
#define AJPCORE_EXPONENT_LIMIT 100000000

/* *out = (negative ? -1 : 1) * w * 10^q correctly rounded (w has at most 19 digits), or 0 when
   undecided here (the caller takes the slow path). */
static inline int ajpcore_double_of(uint64_t w, int64_t q, int negative, double *out) {
    uint64_t bits;
    double d;
    if (w == 0) {
        *out = negative ? -0.0 : 0.0;
        return 1;
    }
    if (q >= -22 && q <= 22 && w <= (1ULL << 53)) {
        d = (double)w;  /* exact, and so is 10^|q|: one correctly rounded operation */
        d = q < 0 ? d / ajpcore_exact_pow10[-q] : d * ajpcore_exact_pow10[q];
        *out = negative ? -d : d;
        return 1;
    }
    if (q < AJPCORE_POW5_MIN || q > AJPCORE_POW5_MAX || !ajpcore_eisel_lemire(w, (int)q, &bits))
        return 0;
    bits |= (uint64_t)negative << 63;
    memcpy(out, &bits, sizeof bits);
    return 1;
}

/* p[i:end) is a number literal the JSON grammar accepted (RFC 8259 §6) with a fraction or an
   exponent.  Returns 1 with *out = float(text), or 0 when the caller must use the slow path.
   The decimal exponent q is exact: the fraction's digits each shift it by one, and an explicit
   exponent of AJPCORE_EXPONENT_LIMIT or more is never truncated (a long run of fraction zeros
   would otherwise bring a truncated exponent back into range and forge the value). */
static int ajpcore_parse_double(const unsigned char *p, Py_ssize_t i, Py_ssize_t end, double *out) {
    uint64_t w = 0;
    int negative = 0, digits = 0;
    int64_t q = 0;
    if (p[i] == 0x2D) {
        negative = 1;
        i++;
    }
    for (; i < end && p[i] - 0x30u < 10u; i++) {
        if (w == 0 && p[i] == 0x30)
            continue;
        if (++digits > 19)
            return 0;
        w = w * 10 + (p[i] - 0x30u);
    }
    if (i < end && p[i] == 0x2E) {
        for (i++; i < end && p[i] - 0x30u < 10u; i++) {
            q--;
            if (w == 0 && p[i] == 0x30)
                continue;
            if (++digits > 19)
                return 0;
            w = w * 10 + (p[i] - 0x30u);
        }
    }
    if (i < end && (p[i] | 0x20) == 0x65) {
        int eneg = 0;
        int64_t e = 0;
        i++;
        if (p[i] == 0x2B || p[i] == 0x2D) {
            eneg = p[i] == 0x2D;
            i++;
        }
        for (; i < end && p[i] - 0x30u < 10u; i++) {
            e = e * 10 + (p[i] - 0x30u);
            if (e >= AJPCORE_EXPONENT_LIMIT)
                return 0;  /* beyond any binary64 whatever the fraction: float(text) decides */
        }
        q += eneg ? -e : e;
    }
    return ajpcore_double_of(w, q, negative, out);
}

/* Digit runs.  A number's int part, fraction and exponent are each one run of ASCII digits:
   its length is found first (sixteen bytes a step where SSE2 is there), then its value from
   whole 8-byte words, each converted by the SWAR method of D. Lemire, "Number Parsing at a
   Gigabyte per Second" (Software: Practice and Experience 51(8), 2021, §7): the eight
   digit values of one word are paired into two-digit, then four-digit, then one eight-digit
   value by three multiplies.  A build with AJPCORE_NO_SIMD reads them byte by byte: the
   plain reference every other level is tested against. */

#if !defined(AJPCORE_NO_SIMD)
#define AJPCORE_SWAR_DIGITS 1
#else
#define AJPCORE_SWAR_DIGITS 0
#endif

static const uint64_t ajpcore_pow10_u64[20] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL, 100000000ULL,
    1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL, 10000000000000ULL,
    100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
    1000000000000000000ULL, 10000000000000000000ULL,
};

/* How many ASCII digits start at p[i] (0 when p[i] is none or i >= n). */
static inline Py_ssize_t ajpcore_digit_run(const unsigned char *p, Py_ssize_t i, Py_ssize_t n) {
    Py_ssize_t start = i;
#if AJP_BUILD_SSE2
    /* A byte is a digit iff (b - 0x30) is 0..9 unsigned, i.e. (b - 0xB0) as a signed byte is
       -128..-119: one subtraction and one signed compare per sixteen bytes. */
    while (i + 16 <= n) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        unsigned int digits = (unsigned int)_mm_movemask_epi8(
            _mm_cmplt_epi8(_mm_sub_epi8(v, _mm_set1_epi8((char)0xB0)), _mm_set1_epi8(-118)));
        if (digits != 0xFFFFu)
            return i - start + __builtin_ctz(~digits);
        i += 16;
    }
#endif
    while (i < n && p[i] - 0x30u < 10u)
        i++;
    return i - start;
}

#if AJPCORE_SWAR_DIGITS
/* The eight bytes at p as a word, p[0] in its low byte whatever the byte order. */
static inline uint64_t ajpcore_load_le64(const unsigned char *p) {
    uint64_t w;
    memcpy(&w, p, 8);
#if !PY_LITTLE_ENDIAN
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* The decimal value of eight digit values (0..9, the most significant in the low byte). */
static inline uint64_t ajpcore_swar8(uint64_t w) {
    w = w * 10 + (w >> 8);  /* byte 2k: the two-digit value of bytes 2k, 2k+1 */
    return (((w & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32)))
            + (((w >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
}
#endif

/* The value of the k digits at p[0..k), 1 <= k <= 19 (so below 10^19 < 2^64); the bytes
   p[0..avail) are inside the buffer (avail >= k).  Always inlined: against CPython 3.14's
   headers (whose reference counting, inlined everywhere, makes the parse loop larger) gcc 12
   called it instead, ~50 instructions more a number (decode:mesh 9.90M -> 10.65M). */
AJP_ALWAYS_INLINE uint64_t ajpcore_digits_value(const unsigned char *p, Py_ssize_t k, Py_ssize_t avail) {
    uint64_t v = 0;
#if AJPCORE_SWAR_DIGITS
    const uint64_t zeros = 0x3030303030303030ULL;
    if (k > 3 && avail >= ((k + 7) & ~(Py_ssize_t)7)) {  /* every word read is inside the buffer;
                                                           up to 3 digits the plain loop is shorter */
        /* The last (or only) word: its digits move to the top bytes, the low ones become
           leading zeros, and what follows the run goes out at the top (a borrow of the
           subtraction only moves upwards, from a byte after the run).  Unrolled for the
           three word counts a run of at most 19 digits has. */
        unsigned int top = (unsigned int)k;
        if (top <= 8)
            return ajpcore_swar8((ajpcore_load_le64(p) - zeros) << (8 * (8 - top)));
        v = ajpcore_swar8(ajpcore_load_le64(p) - zeros);
        if (top > 16) {
            v = v * 100000000 + ajpcore_swar8(ajpcore_load_le64(p + 8) - zeros);
            return v * ajpcore_pow10_u64[top - 16] + ajpcore_swar8((ajpcore_load_le64(p + 16) - zeros) << (8 * (24 - top)));
        }
        return v * ajpcore_pow10_u64[top - 8] + ajpcore_swar8((ajpcore_load_le64(p + 8) - zeros) << (8 * (16 - top)));
    }
#else
    (void)avail;
#endif
    for (; k > 0; k--, p++)
        v = v * 10 + (uint64_t)(p[0] - 0x30u);
    return v;
}

#if AJP_BUILD_SSE2
/* Bit k set when p[k] is an ASCII digit, k < 32 (the test of ajpcore_digit_run). */
static inline uint64_t ajpcore_digits32(const unsigned char *p) {
    const __m128i bias = _mm_set1_epi8((char)0xB0), top = _mm_set1_epi8(-118);
    __m128i a = _mm_loadu_si128((const __m128i *)p), b = _mm_loadu_si128((const __m128i *)(p + 16));
    uint64_t lo = (unsigned int)_mm_movemask_epi8(_mm_cmplt_epi8(_mm_sub_epi8(a, bias), top));
    uint64_t hi = (unsigned int)_mm_movemask_epi8(_mm_cmplt_epi8(_mm_sub_epi8(b, bias), top));
    return lo | (hi << 16);
}

/* ajpcore_scan_number from p[i] (after the sign) when p[i..i+AJPCORE_NUMBER_WINDOW) is inside
   the buffer: one mask of the next 32 bytes gives the int part's and the fraction's lengths,
   and no read needs a bounds check (the furthest: a 19-digit fraction's words from i + 20,
   to i + 44; an exponent's 8 digits from i + 33, to i + 42).  Decides exactly what the general
   path decides: every literal it leaves (-1) the general path leaves to the full reader too
   (a run reaching the mask's end is longer than 19 significant digits allow). */
#define AJPCORE_NUMBER_WINDOW 64
AJP_ALWAYS_INLINE Py_ssize_t ajpcore_scan_number_window(const unsigned char *p, Py_ssize_t i, int negative,
                                                    long long *out, double *fout, int *is_float) {
    uint64_t nondigit = ~ajpcore_digits32(p + i);  /* bits 32..63 set: the mask's end stops every run */
    Py_ssize_t run = __builtin_ctzll(nondigit), fraction;
    uint64_t w;
    int64_t q = 0;
    unsigned int c;
    if (run == 0 || run > 19 || (run > 1 && p[i] == '0'))
        return -1;
    w = ajpcore_digits_value(p + i, run, AJPCORE_NUMBER_WINDOW);
    c = p[i + run];
    if (c != '.' && (c | 0x20) != 'e') {
        if (run > 18)
            return -1;
        if (w > 9007199254740991ULL) {
            double x = (double)(long long)w;
            if (!(x < 9.2e18 && (long long)x == (long long)w))
                return -1;
        }
        *out = negative ? -(long long)w : (long long)w;
        return i + run;
    }
    if (c == '.') {
        fraction = __builtin_ctzll(nondigit >> (run + 1));
        if (fraction == 0 || fraction > 19 || run + 1 + fraction >= 32)
            return -1;
        if (w == 0)
            w = ajpcore_digits_value(p + i + run + 1, fraction, AJPCORE_NUMBER_WINDOW);
        else if (run + fraction <= 19)
            w = w * ajpcore_pow10_u64[fraction]
                + ajpcore_digits_value(p + i + run + 1, fraction, AJPCORE_NUMBER_WINDOW);
        else
            return -1;
        q = -(int64_t)fraction;
        i += run + 1 + fraction;
    } else {
        i += run;
    }
    if ((p[i] | 0x20) == 'e') {
        int eneg = 0, digits = 0;
        int64_t e = 0;
        i++;
        if (p[i] == '+' || p[i] == '-') {
            eneg = p[i] == '-';
            i++;
        }
        for (; p[i] - 0x30u < 10u; i++) {
            if (++digits > 8)
                return -1;  /* AJPCORE_EXPONENT_LIMIT or more: never truncated */
            e = e * 10 + (p[i] - 0x30u);
        }
        if (digits == 0)
            return -1;
        q += eneg ? -e : e;
    }
    if (!ajpcore_double_of(w, q, negative, fout))
        return -1;
    *is_float = 1;
    return i;
}
#endif

/* The number at p[i..n) (p[i] is '-' or a digit) when it is one of the usual ones, read in
   one pass: an int of at most 18 digits that is below 2^53 or its own double (what the full
   reader accepts without Python ints), into *out; or, with a fraction and/or an exponent,
   float(text) (at most 19 significant digits, an exponent of at most 8 digits; Clinger or
   Eisel-Lemire through ajpcore_double_of) into *fout with *is_float = 1.  Returns the
   position after it; else -1, and the full number reader decides (every refusal, leading
   zeros, longer literals, results that need the exact reader). */
static Py_ssize_t ajpcore_scan_number_near_end(const unsigned char *p, Py_ssize_t i, Py_ssize_t n, int negative,
                                               long long *out, double *fout, int *is_float);

AJP_ALWAYS_INLINE Py_ssize_t ajpcore_scan_number(const unsigned char *p, Py_ssize_t i, Py_ssize_t n, long long *out,
                                                            double *fout, int *is_float) {
    int negative = 0;
    if (p[i] == '-') {
        negative = 1;
        i++;
    }
#if AJP_BUILD_SSE2
    if (i + AJPCORE_NUMBER_WINDOW <= n)
        return ajpcore_scan_number_window(p, i, negative, out, fout, is_float);
#endif
    return ajpcore_scan_number_near_end(p, i, n, negative, out, fout, is_float);
}

/* ajpcore_scan_number from p[i] (after the sign) with bounds checks: a number near the end of
   the document (or every number, without SSE2).  Not inline: the decoder's loop keeps only the
   window's code. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static Py_ssize_t ajpcore_scan_number_near_end(const unsigned char *p, Py_ssize_t i, Py_ssize_t n, int negative,
                                               long long *out, double *fout, int *is_float) {
    Py_ssize_t run, fraction;
    uint64_t w;
    int64_t q = 0;
    run = ajpcore_digit_run(p, i, n);
    if (run == 0 || run > 19 || (run > 1 && p[i] == '0'))
        return -1;
    w = ajpcore_digits_value(p + i, run, n - i);
    i += run;
    if (i >= n || (p[i] != '.' && (p[i] | 0x20) != 'e')) {
        /* An int: below 2^53, or (the int rule's first case) the literal is its own double. */
        if (run > 18)
            return -1;
        if (w > 9007199254740991ULL) {
            double x = (double)(long long)w;  /* correctly rounded, as float(int) is */
            if (!(x < 9.2e18 && (long long)x == (long long)w))
                return -1;
        }
        *out = negative ? -(long long)w : (long long)w;
        return i;
    }
    if (p[i] == '.') {
        fraction = ajpcore_digit_run(p, ++i, n);
        if (fraction == 0 || fraction > 19)
            return -1;
        if (w == 0)  /* "0.": the fraction's leading zeros are not significant */
            w = ajpcore_digits_value(p + i, fraction, n - i);
        else if (run + fraction <= 19)
            w = w * ajpcore_pow10_u64[fraction] + ajpcore_digits_value(p + i, fraction, n - i);
        else
            return -1;  /* a 20th significant digit: the exact reader */
        q = -(int64_t)fraction;
        i += fraction;
    }
    if (i < n && (p[i] | 0x20) == 'e') {
        int eneg = 0;
        int64_t e;
        if (++i < n && (p[i] == '+' || p[i] == '-')) {
            eneg = p[i] == '-';
            i++;
        }
        /* At most 8 digits: below AJPCORE_EXPONENT_LIMIT, so never truncated (see there). */
        run = ajpcore_digit_run(p, i, n);
        if (run == 0 || run > 8)
            return -1;
        e = (int64_t)ajpcore_digits_value(p + i, run, n - i);
        q += eneg ? -e : e;
        i += run;
    }
    if (!ajpcore_double_of(w, q, negative, fout))
        return -1;
    *is_float = 1;
    return i;
}

/* Whether the literal word[0..size) (true, false, null: 4 or 5 bytes) is at p[0..size). */
static inline int ajpcore_literal_at(const unsigned char *p, const char *word, Py_ssize_t size) {
    uint32_t a, b;
    memcpy(&a, p, 4);
    memcpy(&b, word, 4);
    return a == b && (size == 4 || p[4] == (unsigned char)word[4]);
}

#endif  /* AJPCORE_DECODER_NUMBERS_H */
