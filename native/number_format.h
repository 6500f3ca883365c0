/* C parts of the canonical writer's numbers (native/number_format.pxi): the ECMAScript text of a
   double (RFC 8785 §3.2.2.3, ECMA-262 7.1.12.1 Number::toString) and the decimal text of an
   int.  Included once, by the generated _core_c.c; everything is static.  No Python API calls
   (an int's value is read from its digits, below). */
#ifndef AJPCORE_NUMBER_FORMAT_H
#define AJPCORE_NUMBER_FORMAT_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "simd.h"

/* -- bit helpers ------------------------------------------------------------------------- */

/* Trailing / leading zero bits of x != 0. */
static inline int ajp_ctz64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#else
    int k = 0;
    while (!((x >> k) & 1u)) k++;
    return k;
#endif
}

static inline int ajp_clz64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_clzll(x);
#else
    int k = 0;
    while (!((x << k) >> 63)) k++;
    return k;
#endif
}

/* The high 64 bits of a * b; *lo gets the low 64. */
static inline uint64_t ajp_umul128(uint64_t a, uint64_t b, uint64_t *lo) {
#if defined(__SIZEOF_INT128__)
    unsigned __int128 p = (unsigned __int128)a * b;
    *lo = (uint64_t)p;
    return (uint64_t)(p >> 64);
#else
    uint64_t a_lo = (uint32_t)a, a_hi = a >> 32, b_lo = (uint32_t)b, b_hi = b >> 32;
    uint64_t b00 = a_lo * b_lo, b01 = a_lo * b_hi, b10 = a_hi * b_lo, b11 = a_hi * b_hi;
    uint64_t mid1 = b10 + (b00 >> 32);
    uint64_t mid2 = b01 + (uint32_t)mid1;
    *lo = (mid2 << 32) | (uint32_t)b00;
    return b11 + (mid1 >> 32) + (mid2 >> 32);
#endif
}

/* Stores the word w at p with its lowest byte first, whatever the byte order. */
static inline void ajp_store_le64(char *p, uint64_t w) {
#if PY_LITTLE_ENDIAN
    memcpy(p, &w, 8);
#else
    int i;
    for (i = 0; i < 8; i++) p[i] = (char)(w >> (8 * i));
#endif
}

/* -- shortest digits: Schubfach -----------------------------------------------------------

   R. Giulietti, "The Schubfach way to render doubles" (2020-2022).  A finite double
   v = c * 2^q > 0 rounds back from every decimal inside its rounding interval
   R = [vl, vr] (closed when c is even, open when odd; ties-to-even reading), where
   vr = v + 2^(q-1) and vl = v - 2^(q-1), or vl = v - 2^(q-2) at the bottom of a binade
   (c = 2^52 with q above the minimum, where the spacing below halves).  With
   k = floor(log10(width of R)), R holds at least one multiple of 10^k and at
   most one of 10^(k+1):
   - if it holds a multiple of 10^(k+1), that one is the only decimal of the fewest digits
     (any shorter one is a multiple of 10^(k+1) too);
   - else every multiple of 10^k in R has the fewest digits, and the one nearest v is
     s * 10^k or (s + 1) * 10^k with s = floor(v / 10^k); between two equally near, the even.
   That is ECMA-262 7.1.12.1 step 5 and its note 2 (fewest digits, then nearest, then even s),
   the digits float.__repr__ gives.  v, vl and vr are scaled by 4 * 10^-k with a 126-bit
   overestimate g of 10^-k and rounded to odd: the paper proves the floor and the integer
   comparisons below then exact.  The integer and the result are at most 17 digits. */

#define AJP_G_MIN (-292)
#define AJP_G_MAX 324
/* [e - AJP_G_MIN] = {high, low} 64-bit words of g(e) = floor(10^e * 2^(125 - floor(log2 10^e))) + 1,
   so 2^125 < g <= 2^126; filled at import from exact integers (number_format.pxi). */
static uint64_t ajp_g[AJP_G_MAX - AJP_G_MIN + 1][2];

static void ajp_set_g(int e, uint64_t hi, uint64_t lo) {
    ajp_g[e - AJP_G_MIN][0] = hi;
    ajp_g[e - AJP_G_MIN][1] = lo;
}

/* floor(q log10 2), floor(log10(3/4 * 2^q)) and floor(e log2 10), by fixed-point products
   checked against exact rationals over q in [-1200, 1100), e in [-400, 400) (wider than the
   doubles need: q in [-1074, 971], e in [-292, 324]). */
static inline int ajp_flog10_pow2(int q) { return (int)(((int64_t)q * 661971961083LL) >> 41); }
static inline int ajp_flog10_three_quarters_pow2(int q) {
    return (int)(((int64_t)q * 661971961083LL - 274743187321LL) >> 41);
}
static inline int ajp_flog2_pow10(int e) { return (int)(((int64_t)e * 913124641741LL) >> 38); }

/* [biased exponent] = (k + 512) << 3 | h for the regular interval (k = floor(q log10 2),
   h = q + floor(-k log2 10) + 2, in [2, 5]): two products and a sum less per double (filled by
   ajp_init_kh at import). */
static uint16_t ajp_kh[2047];

static void ajp_init_kh(void) {
    int bq;
    for (bq = 0; bq < 2047; bq++) {
        const int q = bq ? bq - 1075 : -1074, k = ajp_flog10_pow2(q);
        ajp_kh[bq] = (uint16_t)(((k + 512) << 3) | (q + ajp_flog2_pow10(-k) + 2));
    }
}

#if defined(__GNUC__) || defined(__clang__)
#define AJP_NOINLINE static __attribute__((noinline))
#else
#define AJP_NOINLINE static
#endif

/* The top 128 bits of g * cp (the 192-bit product's low 64 dropped) for the 126-bit
   g = {hi, lo} and cp < 2^61: *hi gets the high word, the low one is returned. */
static inline uint64_t ajp_mul_g(const uint64_t *g, uint64_t cp, uint64_t *hi) {
    uint64_t x_lo, y_lo;
    const uint64_t x_hi = ajp_umul128(g[1], cp, &x_lo);
    uint64_t y_hi = ajp_umul128(g[0], cp, &y_lo);
    (void)x_lo;
    y_lo += x_hi;
    *hi = y_hi + (y_lo < x_hi);
    return y_lo;
}

/* g * cp / 2^127 rounded to odd, from the product's top 128 bits {hi, lo}: its floor, with
   the lowest bit set when it is not an integer.  The product's low 64 bits are dropped: g
   exceeds the exact 10^e * 2^(125 - floor(log2 10^e)) by less than 1, so g * cp exceeds the
   exact product by less than cp < 2^61, and without those bits a value that is exactly an
   integer (4 * v * 10^-k when v * 10^-k is a multiple of 1/4: 1125899906842624.25) reads
   as one, while an inexact one still reads as inexact: the paper's analysis keeps its
   fraction much farther than 2^-63 from an integer. */
static inline uint64_t ajp_round_to_odd(uint64_t hi, uint64_t lo) {
    return (hi << 1) | (lo >> 63) | ((lo << 1) != 0);
}

static inline uint64_t ajp_rop(const uint64_t *g, uint64_t cp) {
    uint64_t hi, lo = ajp_mul_g(g, cp, &hi);
    return ajp_round_to_odd(hi, lo);
}

/* The paper's algorithm as it stands: the interval's ends vbl and vbr rounded to odd from
   their own products, every comparison exact.  ajp_shortest's fast path leaves it the
   doubles whose interval ends lie too near a candidate to tell from one product (ends that
   are exactly a candidate, mostly: large integers c * 2^q with 2c -+ 1 a multiple of 5^k). */
AJP_NOINLINE int ajp_shortest_exact(const uint64_t *g, int k, int h, uint64_t c, int regular,
                                    uint64_t *digits) {
    const uint64_t out = c & 1, cb = c << 2;
    const uint64_t vb = ajp_rop(g, cb << h);
    const uint64_t vbl = ajp_rop(g, (cb - (regular ? 2 : 1)) << h);
    const uint64_t vbr = ajp_rop(g, (cb + 2) << h);
    const uint64_t s = vb >> 2, sp10 = s / 10 * 10, tp10 = sp10 + 10, u = s + 1;
    const int upin = vbl + out <= sp10 << 2, wpin = (tp10 << 2) + out <= vbr;
    int uin, win;
    if (upin != wpin) {
        *digits = upin ? sp10 : tp10;
        return k;
    }
    uin = vbl + out <= s << 2;
    win = (u << 2) + out <= vbr;
    if (uin != win) {
        *digits = uin ? s : u;
        return k;
    }
    *digits = (vb < (s << 2) + 2 || (vb == (s << 2) + 2 && (s & 1) == 0)) ? s : u;
    return k;
}

/* The bottom of a binade (c = 2^52, q above the minimum: 2^q for q > -1022, where the
   spacing below halves): its own k and h, and the exact path (powers of two that are not
   integers below 2^52 or binary fractions with a short decimal, which ajp_format_double
   writes before asking: rare). */
AJP_NOINLINE int ajp_shortest_irregular(int bq, uint64_t c, uint64_t *digits) {
    const int q = bq - 1075, k = ajp_flog10_three_quarters_pow2(q);
    return ajp_shortest_exact(ajp_g[-k - AJP_G_MIN], k, q + ajp_flog2_pow10(-k) + 2, c, 0, digits);
}

/* Within this many 2^-57 of zero, a fast-path comparison is left to ajp_shortest_exact (the
   fixed-point differences below are off by less than 2.6 of these units: V by 1.02, D by 1,
   D/2 by 1.5). */
#define AJP_UNSURE 4

/* bits: a finite double > 0.  Sets *digits = d and returns k with d * 10^k the decimal
   ECMA-262 7.1.12.1 picks (d may end in zeros; d < 10^17, and d < 10^16 but for the
   17-digit d of the last case below, or 10^16 itself).

   The fast path needs one product: V = 4 v 10^-k, rounded to odd (vb, exact: its floor
   s and the tie test), and as a fixed-point number with 57 fractional bits; the half-width
   of R on the same scale is D = 2^(q+1) 10^-k = g / 2^(126-h), the top bits of g.  A
   candidate 4m is in R when its distance to V is below D; distances are under 44 and D
   under 20, so the fixed-point values are kept modulo 2^64.  A multiple of 10^(k+1) found
   is returned as its tenth with k + 1: one digit fewer to write, and no 17th digit. */
AJP_ALWAYS_INLINE int ajp_shortest(uint64_t bits, uint64_t *digits) {
    const uint64_t t = bits & ((1ull << 52) - 1);
    const int bq = (int)(bits >> 52);
    const uint64_t c = bq ? t | (1ull << 52) : t;
    const uint64_t *g;
    uint64_t hi, lo, vb, s, s10, sp10, u, vf, dr;
    int64_t below, above;
    int k, h;   /* h in [2, 5]: (4c + 2) << h < 2^60 */
    if (t == 0 && bq > 1) return ajp_shortest_irregular(bq, c, digits);
    k = (int)(ajp_kh[bq] >> 3) - 512;
    h = ajp_kh[bq] & 7;
    g = ajp_g[-k - AJP_G_MIN];
    lo = ajp_mul_g(g, (c << 2) << h, &hi);
    vb = ajp_round_to_odd(hi, lo);
    s = vb >> 2;
    vf = (hi << 58) | (lo >> 6);   /* V * 2^57, rounded down (by < 1.02), mod 2^64 */
    dr = g[0] >> (5 - h);           /* D * 2^57 = g / 2^(69-h), rounded down */
    /* A multiple of 10^(k+1) in R: the one shortest decimal. */
    s10 = s / 10;
    sp10 = s10 * 10;
    below = (int64_t)(vf - (sp10 << 59) - dr);          /* < 0: sp10 in R */
    above = (int64_t)(((sp10 + 10) << 59) - vf - dr);   /* < 0: sp10 + 10 in R */
    if ((uint64_t)(below + AJP_UNSURE) <= 2 * AJP_UNSURE || (uint64_t)(above + AJP_UNSURE) <= 2 * AJP_UNSURE)
        return ajp_shortest_exact(g, k, h, c, 1, digits);
    if ((below < 0) != (above < 0)) {
        *digits = s10 + (below >= 0);
        return k + 1;
    }
    /* Else the multiple of 10^k in R nearest v: s or s + 1, the even one on a tie. */
    u = s + 1;
    below = (int64_t)(vf - (s << 59) - dr);
    above = (int64_t)((u << 59) - vf - dr);
    if ((uint64_t)(below + AJP_UNSURE) <= 2 * AJP_UNSURE || (uint64_t)(above + AJP_UNSURE) <= 2 * AJP_UNSURE)
        return ajp_shortest_exact(g, k, h, c, 1, digits);
    if ((below < 0) != (above < 0)) {
        *digits = below < 0 ? s : u;
        return k;
    }
    *digits = (vb < (s << 2) + 2 || (vb == (s << 2) + 2 && (s & 1) == 0)) ? s : u;
    return k;
}

/* -- decimal digits ----------------------------------------------------------------------- */

static const char ajp_digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

#define AJP_ASCII_ZEROS 0x3030303030303030ull

/* The 8 decimal digits of v < 10^8 (leading zeros kept) as the bytes of a word, the first
   digit in the lowest byte, as values 0-9 (or AJP_ASCII_ZEROS for text).  Divides by 10^4,
   then by 100 in two 32-bit lanes, then by 10 in four 16-bit lanes, each by a multiply and a
   shift (exact for these ranges: checked over every input). */
static inline uint64_t ajp_swar8(uint32_t v) {
    uint64_t hi = ((uint64_t)v * 109951163u) >> 40;   /* v / 10^4 */
    uint64_t x = hi | ((uint64_t)(v - (uint32_t)hi * 10000u) << 32);
    uint64_t q = ((x * 10486u) >> 20) & 0x0000007F0000007Full;   /* lanes / 100 */
    x = q | ((x - q * 100u) << 16);
    q = ((x * 103u) >> 10) & 0x000F000F000F000Full;   /* lanes / 10 */
    return q | ((x - q * 10u) << 8);
}

#if AJP_BUILD_SSE2 && (defined(__GNUC__) || defined(__clang__))
/* v, with its value hidden from the compiler: a multiply by it stays one pmullw instead of
   becoming a chain of shifts and adds (fewer instructions, the cost measured here). */
static inline __m128i ajp_opaque(__m128i v) {
    __asm__("" : "+x"(v));
    return v;
}
#elif AJP_BUILD_SSE2
#define ajp_opaque(v) (v)
#endif

/* The 16 decimal digits of v < 10^16 (leading zeros kept) as text at p[0..16); *lz and *tz
   get how many of them are leading and trailing zeros (16 both when v = 0). */
#if AJP_BUILD_SSE2
/* The same three divisions as ajp_swar8 on both 8-digit halves at once. */
AJP_ALWAYS_INLINE void ajp_digits16(uint64_t v, char *p, int *lz, int *tz) {
    const uint64_t hi = v / 100000000u;
    __m128i x = _mm_set_epi64x((long long)(v - hi * 100000000u), (long long)hi);
    __m128i q = _mm_srli_epi64(_mm_mul_epu32(x, _mm_set1_epi32((int)3518437209u)), 45);   /* / 10^4 */
    unsigned int nonzero;
    x = _mm_or_si128(q, _mm_slli_epi64(_mm_sub_epi32(x, _mm_mul_epu32(q, _mm_set1_epi32(10000))), 32));
    q = _mm_srli_epi16(_mm_mulhi_epu16(x, _mm_set1_epi16(5243)), 3);   /* / 100 */
    x = _mm_or_si128(q, _mm_slli_epi32(_mm_sub_epi16(x, _mm_mullo_epi16(q, ajp_opaque(_mm_set1_epi16(100)))), 16));
    q = _mm_mulhi_epu16(x, _mm_set1_epi16(6554));   /* / 10 */
    x = _mm_or_si128(q, _mm_slli_epi16(_mm_sub_epi16(x, _mm_mullo_epi16(q, ajp_opaque(_mm_set1_epi16(10)))), 8));
    _mm_storeu_si128((__m128i *)p, _mm_or_si128(x, _mm_set1_epi8('0')));
    nonzero = (unsigned int)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_setzero_si128())) ^ 0xFFFFu;
    *lz = ajp_ctz64(nonzero | 0x10000u);
    *tz = ajp_clz64(((uint64_t)nonzero << 48) | (1ull << 47));
}
#else
AJP_ALWAYS_INLINE void ajp_digits16(uint64_t v, char *p, int *lz, int *tz) {
    const uint64_t hi = v / 100000000u;
    const uint64_t w1 = ajp_swar8((uint32_t)hi), w2 = ajp_swar8((uint32_t)(v - hi * 100000000u));
    ajp_store_le64(p, w1 | AJP_ASCII_ZEROS);
    ajp_store_le64(p + 8, w2 | AJP_ASCII_ZEROS);
    *lz = w1 ? ajp_ctz64(w1) >> 3 : w2 ? 8 + (ajp_ctz64(w2) >> 3) : 16;
    *tz = w2 ? ajp_clz64(w2) >> 3 : w1 ? 8 + (ajp_clz64(w1) >> 3) : 16;
}
#endif

/* Decimal text of u < 10^16 at out (needs 16 bytes of room; bytes past the length are
   slack the callers reserve and never count); returns the length. */
AJP_ALWAYS_INLINE int ajp_format_u64(uint64_t u, char *out) {
    if (u < 100) {
        if (u < 10) {
            out[0] = (char)('0' + u);
            return 1;
        }
        memcpy(out, ajp_digit_pairs + 2 * u, 2);
        return 2;
    }
    if (u < 10000) {   /* the usual counters and years: two pairs */
        const uint32_t hi = (uint32_t)u / 100, lo = (uint32_t)u - hi * 100;
        if (hi >= 10) {
            memcpy(out, ajp_digit_pairs + 2 * hi, 2);
            memcpy(out + 2, ajp_digit_pairs + 2 * lo, 2);
            return 4;
        }
        out[0] = (char)('0' + hi);
        memcpy(out + 1, ajp_digit_pairs + 2 * lo, 2);
        return 3;
    }
    if (u < 100000000u) {
        const uint64_t w = ajp_swar8((uint32_t)u);
        const int lz = ajp_ctz64(w) >> 3;
        ajp_store_le64(out, (w | AJP_ASCII_ZEROS) >> (8 * lz));
        return 8 - lz;
    }
    {
        char digits[32];   /* the 16-byte copy from digits + lz reads up to 31 */
        int lz, tz;
        ajp_digits16(u, digits, &lz, &tz);
        (void)tz;
        memset(digits + 16, 0, 16);   /* the slack copied past the length: initialised, never counted */
        memcpy(out, digits + lz, 16);
        return 16 - lz;
    }
}

/* Decimal text of v, |v| < 10^16 (needs 17 bytes of room); returns the length. */
AJP_ALWAYS_INLINE int ajp_format_i64(long long v, char *out) {
    if (v < 0) {
        out[0] = '-';
        return 1 + ajp_format_u64(0 - (unsigned long long)v, out + 1);
    }
    return ajp_format_u64((uint64_t)v, out);
}

/* -- ECMAScript Number::toString ---------------------------------------------------------- */

/* [e] for 0 <= e < 325: the decimal digits of e, then at [3] their count (filled by
   ajp_init_exponent_text at import). */
static char ajp_exponent_text[325][4];

static void ajp_init_exponent_text(void) {
    int e, n;
    for (e = 0; e < 325; e++) {
        char *t = ajp_exponent_text[e];
        n = 0;
        if (e >= 100) t[n++] = (char)('0' + e / 100);
        if (e >= 10) t[n++] = (char)('0' + e / 10 % 10);
        t[n++] = (char)('0' + e % 10);
        t[3] = (char)n;
    }
}

/* Lays out the digits p[0..len) (no trailing zero; p readable to p + 24) with the decimal
   point n digits after the first, as ECMA-262 7.1.12.1 steps 6-10 say, at o (48 bytes of
   room); returns the length. */
AJP_ALWAYS_INLINE int ajp_layout(char *o, const char *p, int len, int n) {
    int e;
    if (0 < n && n <= 21) {
        if (len <= n) {   /* an integer: the digits, then n - len zeros */
            memcpy(o, p, 24);
            memset(o + len, '0', 24);
            return n;
        }
        memcpy(o, p, 16);   /* n < len <= 17 */
        o[n] = '.';
        memcpy(o + n + 1, p + n, 16);
        return len + 1;
    }
    if (-6 < n && n <= 0) {   /* 0.000ddd */
        memcpy(o, "0.000000", 8);
        memcpy(o + 2 - n, p, 24);
        return 2 - n + len;
    }
    o[0] = p[0];   /* d.ddde+x */
    if (len > 1) {
        o[1] = '.';
        memcpy(o + 2, p + 1, 16);
        o += len + 1;
    } else {
        o += 1;
    }
    e = n - 1;   /* |e| <= 324 */
    o[0] = 'e';
    o[1] = e < 0 ? '-' : '+';
    {
        const char *text = ajp_exponent_text[e < 0 ? -e : e];
        memcpy(o + 2, text, 4);
        return (len > 1 ? len + 1 : 1) + 2 + text[3];
    }
}

/* [j] = 5^j and the largest m with m * 5^j < 10^15, for 1 <= j <= 22 (5^22 < 2^52). */
static uint64_t ajp_pow5[23], ajp_pow5_bound[23];

static void ajp_init_pow5(void) {
    int j;
    for (ajp_pow5[0] = 1, j = 1; j < 23; j++) ajp_pow5[j] = ajp_pow5[j - 1] * 5;
    for (j = 0; j < 23; j++) ajp_pow5_bound[j] = 999999999999999ull / ajp_pow5[j];
}

/* The text of a finite double x (needs 48 bytes of room); returns the length.  Two kinds
   skip the digit search (one test tells them from the rest: x = m / 2^j, m odd, j <= 22):
   - integers below 2^52 are their own shortest digits (their rounding interval is at most
     1/2 wide, so a decimal of fewer digits, 10 or more away, lies outside);
   - binary fractions m / 2^j (1 <= j <= 22) whose exact decimal m * 5^j * 10^-j has at most
     15 significant digits (0.5, 0.75, 93.5): decimals of at most 15 digits are 10^(e-14)
     apart near x in [10^e, 10^(e+1)) and x's rounding interval is under 2.3 * 10^(e-15)
     wide, so no other one, shorter or not, lies in it; m * 5^j is odd, so it ends in no 0.
   The others take ajp_shortest and the 16-digit writer.  Inlined into the loops that write
   runs of numbers (ajp_put_numbers); ajp_format_double is the one copy for the others. */
AJP_ALWAYS_INLINE int ajp_format_double_inline(double x, char *out) {
    char buf[48];   /* 17 digits; the layout's fixed-size copies read up to buf + 40 */
    char *o;        /* past the sign */
    uint64_t bits, d, lead;
    int k, lz, tz, nd;
    memcpy(&bits, &x, sizeof bits);
    if ((bits << 1) == 0) {   /* 0 and -0 */
        out[0] = '0';
        return 1;
    }
    out[0] = '-';   /* kept only for a negative x */
    o = out + (bits >> 63);
    bits &= ~(1ull << 63);
    {
        const int bq = (int)(bits >> 52);   /* a subnormal's j is far above 22 */
        const uint64_t c = (bits & ((1ull << 52) - 1)) | (1ull << 52);
        const int zeros = ajp_ctz64(c), j = 1075 - bq - zeros;   /* x = (c >> zeros) / 2^j */
        if (j <= 22) {
            if (j <= 0) {
                if (bq < 1075) return (int)(o - out) + ajp_format_u64(c >> (1075 - bq), o);
            } else if ((c >> zeros) <= ajp_pow5_bound[j]) {
                d = (c >> zeros) * ajp_pow5[j];
                if (d < 100000000u) {
                    const uint64_t w = ajp_swar8((uint32_t)d);
                    lz = ajp_ctz64(w) >> 3;
                    nd = 8 - lz;
                    ajp_store_le64(buf, (w | AJP_ASCII_ZEROS) >> (8 * lz));
                    return (int)(o - out) + ajp_layout(o, buf, nd, nd - j);
                }
                k = -j;
                goto write_digits;
            }
        }
    }
    k = ajp_shortest(bits, &d);
write_digits:
    lead = 0;
    if (d >= 10000000000000000ull) {
        lead = d / 10000000000000000ull;
        d -= lead * 10000000000000000ull;
    }
    buf[0] = (char)('0' + lead);
    ajp_digits16(d, buf + 1, &lz, &tz);
    lz = lead ? 0 : lz + 1;
    nd = 17 - lz;   /* digits of d; without its trailing zeros, nd - tz */
    return (int)(o - out) + ajp_layout(o, buf + lz, nd - tz, nd + k);
}

static int ajp_format_double(double x, char *out) { return ajp_format_double_inline(x, out); }

/* -- ints ---------------------------------------------------------------------------------- */

/* The value of an int of at most two internal digits (|v| < 2^60 with CPython's 30-bit
   digits), read without a call; returns 0 for any other int.  The digit layout is
   CPython's: 3.12 moved the size and sign into long_value.lv_tag (what the documented
   PyUnstable_Long_CompactValue reads, ob_digit[0] included for 0), before it they were
   ob_size (0 has no digit then). */
static inline int ajp_long_value(PyObject *v, long long *out) {
#if defined(PYPY_VERSION)
    (void)v; (void)out;
    return 0;
#elif PY_VERSION_HEX >= 0x030C0000
    const uintptr_t tag = ((PyLongObject *)v)->long_value.lv_tag;
    const digit *d = ((PyLongObject *)v)->long_value.ob_digit;
    long long mag;
    if (tag >= (3u << _PyLong_NON_SIZE_BITS)) return 0;
    mag = (long long)d[0];
    if (tag >= (2u << _PyLong_NON_SIZE_BITS)) mag |= (long long)d[1] << PyLong_SHIFT;
    *out = (1 - (long long)(tag & _PyLong_SIGN_MASK)) * mag;
    return 1;
#else
    const Py_ssize_t size = Py_SIZE(v);
    const digit *d = ((PyLongObject *)v)->ob_digit;
    long long mag;
    if (size == 0) {
        *out = 0;
        return 1;
    }
    if (size < -2 || size > 2) return 0;
    mag = (long long)d[0];
    if (size == 2 || size == -2) mag |= (long long)d[1] << PyLong_SHIFT;
    *out = size < 0 ? -mag : mag;
    return 1;
#endif
}

#define AJP_MAX_SAFE_INT 9007199254740991LL   /* 2^53 - 1 */

/* An exact int within +-(2^53 - 1) written to dst, which has room for `room` bytes:
   returns the bytes written, or 0 to leave it to _put_int (a larger int, or too little room). */
AJP_ALWAYS_INLINE int ajp_put_safe_int(char *dst, Py_ssize_t room, PyObject *v) {
    long long n;
    if (room < 32 || !ajp_long_value(v, &n) || n > AJP_MAX_SAFE_INT || n < -AJP_MAX_SAFE_INT) return 0;
    return ajp_format_i64(n, dst);
}

/* -- runs of numbers in an array -------------------------------------------------------- */

/* Writes items[i], items[i + 1], ... of an array of n items at data + *length, each after a
   comma (but the item at index 0), for as long as each is an exact float that is finite or
   an exact int within +-(2^53 - 1) and at least 64 bytes of room are left below cap; returns
   the index of the first item not written (i when none was).  No Python code runs here and
   nothing can fail, so the items cannot change under the loop; the canonical writer's
   general per-item path (_put_array) takes the item this stops at.  Coordinates, meshes and
   number arrays are such runs: each number costs its digits and a type test. */
AJP_ALWAYS_INLINE Py_ssize_t ajp_put_numbers_inline(PyObject *const *items, Py_ssize_t i, Py_ssize_t n, char *data,
                                                   Py_ssize_t *length, Py_ssize_t cap) {
    Py_ssize_t len = *length;
    for (; i < n && cap - len >= 64; i++) {
        PyObject *v = items[i];
        char *dst = data + len;
        dst[0] = ',';
        dst += i != 0;
        if (Py_IS_TYPE(v, &PyFloat_Type)) {
            const double x = PyFloat_AS_DOUBLE(v);
            uint64_t bits;
            memcpy(&bits, &x, sizeof bits);
            if ((~bits & (0x7FFull << 52)) == 0) break;   /* inf and nan: refused by the general path */
            dst += ajp_format_double_inline(x, dst);
        } else if (Py_IS_TYPE(v, &PyLong_Type)) {
            long long m;
            if (!ajp_long_value(v, &m) || m > AJP_MAX_SAFE_INT || m < -AJP_MAX_SAFE_INT) break;
            dst += ajp_format_i64(m, dst);
        } else {
            break;
        }
        len = dst - data;
    }
    *length = len;
    return i;
}

/* Out of line (as ajp_put_number_list): inlined into the canonical writer's array step, the
   formatter's buffers would enlarge every frame of its recursion, and the deepest value
   accepted (MAX_DEPTH) would no longer fit a 128 KiB thread stack (musl's default). */
AJP_NOINLINE Py_ssize_t ajp_put_numbers(PyObject *const *items, Py_ssize_t i, Py_ssize_t n, char *data, Py_ssize_t *length,
                                  Py_ssize_t cap) {
    return ajp_put_numbers_inline(items, i, n, data, length, cap);
}

/* A whole exact list of finite floats and safe ints (a coordinate pair, a vector), as item
   i of the array being written (after a comma when i != 0): writes "[...]" and returns 1,
   or returns 0 having written nothing (an empty list, another item, too little room), for
   the general path.  Saves a nested list its pass through the general path (_put_value). */
AJP_NOINLINE int ajp_put_number_list(PyObject *list, Py_ssize_t i, char *data, Py_ssize_t *length, Py_ssize_t cap) {
    const Py_ssize_t n = PyList_GET_SIZE(list);
    Py_ssize_t len = *length + (i != 0) + 1;
    PyObject *first;
    if (n == 0 || cap - len < 65) return 0;   /* the comma and '[' land below the loop's 64 bytes and ']' */
    first = PyList_GET_ITEM(list, 0);
    if (!Py_IS_TYPE(first, &PyFloat_Type) && !Py_IS_TYPE(first, &PyLong_Type)) return 0;
    data[*length] = ',';
    data[len - 1] = '[';
    /* cap - 1 keeps the byte for ']' */
    if (ajp_put_numbers_inline(((PyListObject *)list)->ob_item, 0, n, data, &len, cap - 1) != n) return 0;
    data[len] = ']';
    *length = len + 1;
    return 1;
}

#endif /* AJPCORE_NUMBER_FORMAT_H */
