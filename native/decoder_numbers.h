/* C parts of the strict decoder (native/decoder.pxi), continued from decoder_scan.h: numbers
   (binary64 without strtod, ints and plain fractions in one pass) and the literals.  Included
   once, by the generated _core_c.c; everything is static.  No Python API calls. */
#ifndef AJPCORE_DECODER_NUMBERS_H
#define AJPCORE_DECODER_NUMBERS_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "simd.h"

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
   decoder.pxi from exact integers). */
static uint64_t ajpcore_pow5_128[AJPCORE_POW5_MAX - AJPCORE_POW5_MIN + 1][2];

static const double ajpcore_exact_pow10[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* The binary64 bits (no sign) of w * 10^q, w != 0; 0 when undecided. */
static int ajpcore_eisel_lemire(uint64_t w, int q, uint64_t *bits) {
    const uint64_t *pow5 = ajpcore_pow5_128[q - AJPCORE_POW5_MIN];
    int lz = __builtin_clzll(w);
    unsigned __int128 product;
    uint64_t hi, lo, mantissa;
    int upperbit, power2;
    w <<= lz;
    product = (unsigned __int128)w * pow5[0];
    hi = (uint64_t)(product >> 64);
    lo = (uint64_t)product;
    if ((hi & 0x1FF) == 0x1FF) {
        /* The 9 bits below the 55 that decide the rounding are all ones: refine with the
           low word of 5^q (exact for 5^q < 2^128, i.e. q <= 55). */
        uint64_t second_hi = (uint64_t)(((unsigned __int128)w * pow5[1]) >> 64);
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

/* Whether p[0:8) are eight ASCII digits; if so *value is their decimal value, p[0] the most
   significant (the SWAR test and conversion of Lemire's fast_float, three multiplies).  The
   per-digit loops below take eight at a time where they can; AJPCORE_NO_SIMD keeps them one
   by one. */
static inline int ajpcore_eight_digits(const unsigned char *p, uint64_t *value) {
#if defined(AJPCORE_NO_SIMD)
    (void)p;
    (void)value;
    return 0;
#else
    uint64_t w;
    memcpy(&w, p, 8);
#if !PY_LITTLE_ENDIAN
    w = __builtin_bswap64(w);
#endif
    if (((w & 0xF0F0F0F0F0F0F0F0ULL) | (((w + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4))
        != 0x3333333333333333ULL)
        return 0;
    w -= 0x3030303030303030ULL;
    w = (w * 10) + (w >> 8);
    w = (((w & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32)))
         + (((w >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
    *value = w;
    return 1;
#endif
}

/* A number at p[i..n) whose int part is "0" or 1-9 then at most 14 more digits (either
   after a '-'): an int that no fraction, exponent or further digit follows, its value
   (below 2^53) into *out; or, with a fraction and/or exponent the JSON grammar accepts,
   float(text) into *fout (*is_float = 1): w / 10^k for at most 15 digits and no exponent
   (one correctly rounded division of two exact doubles), else the rest of the literal read
   in the same pass and ajpcore_double_of, what ajpcore_parse_double gives.
   Returns the position after it; else -1, and the full number reader decides (errors,
   longer ints and undecided doubles included). */
static inline Py_ssize_t ajpcore_scan_small_number(const unsigned char *p, Py_ssize_t i, Py_ssize_t n, long long *out,
                                                   double *fout, int *is_float) {
    Py_ssize_t first, frac;
    int negative = 0;
    long long v;
    uint64_t w, eight;
    int64_t q = 0;
    if (p[i] == '-') {
        negative = 1;
        if (++i >= n) return -1;
    }
    first = i;
    if ((unsigned)(p[i] - '0') > 9u) return -1;
    v = p[i++] - '0';
    if (v != 0) {
        while (i < n && (unsigned)(p[i] - '0') <= 9u) {
            if (i - first >= 15) return -1;
            v = v * 10 + (p[i++] - '0');
        }
    }
    if (i >= n || (p[i] != '.' && (p[i] | 0x20) != 'e')) {
        if (i < n && (unsigned)(p[i] - '0') <= 9u) return -1;  /* a leading zero */
        *out = negative ? -v : v;
        return i;
    }
    w = (uint64_t)v;
    if (p[i] == '.') {
        frac = ++i;
        if (i + 8 <= n && i + 8 - first <= 16 && ajpcore_eight_digits(p + i, &eight)) {
            v = v * 100000000 + (long long)eight;  /* still at most 15 digits */
            i += 8;
        }
        while (i < n && (unsigned)(p[i] - '0') <= 9u && i - first < 16) /* 15 digits, and the '.' */
            v = v * 10 + (p[i++] - '0');
        if (i == frac) return -1;  /* no digit after the '.' */
        if (i >= n || ((unsigned)(p[i] - '0') > 9u && (p[i] | 0x20) != 'e')) {
            double d = (double)v / ajpcore_exact_pow10[i - frac];
            *fout = negative ? -d : d;
            *is_float = 1;
            return i;
        }
        /* More fraction digits and/or an exponent: read on in the same pass, as
           ajpcore_parse_double would (each fraction digit shifts q; leading zeros are not
           significant; a 20th significant digit leaves it to the full reader). */
        w = (uint64_t)v;
        q = -(int64_t)(i - frac);
        /* Eight at a time while w < 10^11: w stays below 10^19, so no 20th significant digit
           can be among them (w only grows as digits are appended). */
        while (i + 8 <= n && w < 100000000000ULL && ajpcore_eight_digits(p + i, &eight)) {
            w = w * 100000000 + eight;
            q -= 8;
            i += 8;
        }
        while (i < n && (unsigned)(p[i] - '0') <= 9u) {
            unsigned int digit = p[i++] - '0';
            q--;
            if (w == 0 && digit == 0)
                continue;
            if (w >= 1000000000000000000ULL)
                return -1;  /* a 20th significant digit */
            w = w * 10 + digit;
        }
    }
    if (i < n && (p[i] | 0x20) == 'e') {
        int eneg = 0;
        int64_t e = 0;
        if (++i < n && (p[i] == '+' || p[i] == '-')) {
            eneg = p[i] == '-';
            i++;
        }
        if (i >= n || (unsigned)(p[i] - '0') > 9u) return -1;  /* no exponent digit */
        while (i < n && (unsigned)(p[i] - '0') <= 9u) {
            e = e * 10 + (p[i++] - '0');
            if (e >= AJPCORE_EXPONENT_LIMIT)
                return -1;  /* beyond any binary64: the full reader and float(text) decide */
        }
        q += eneg ? -e : e;
    }
    if (!ajpcore_double_of(w, q, negative, fout)) return -1;
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
