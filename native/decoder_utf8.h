/* The decoder's strings at the avx2 level (native/simd.h), the check: the same first step as
   ajpcore_scan_string (decoder_scan.h: check the body, learn its length and widest code point),
   32 bytes a step; the second step, writing the str, is decoder_utf8_write.h.  Included once,
   by the generated _core_c.c, after decoder_scan.h; everything is static.

   The check (ajpcore_scan_text_avx2) decides only strings it finds well formed; on anything
   else (invalid UTF-8, a control character, a bad escape, the end of the document, a possible
   noncharacter) it gives up and ajpcore_scan_string, the exact code of the other levels,
   reads the string again from its start: errors and their positions are those of the scalar
   code by construction, and a string costs at most two reads. */
#ifndef AJPCORE_DECODER_UTF8_H
#define AJPCORE_DECODER_UTF8_H

#include "decoder_scan.h"

#if AJP_BUILD_AVX2

/* UTF-8 validation by three nibble lookups: J. Keiser, D. Lemire, "Validating UTF-8 In Less
   Than One Instruction Per Byte", Software: Practice and Experience 51(5), 2021, §5.  Every
   ill-formed two-byte window (a byte and the one before it) falls in one of eight classes,
   each a product (high nibble of the first byte) x (its low nibble) x (high nibble of the
   second byte); a table per nibble gives, for each class, whether the nibble belongs to it,
   and the AND of the three lookups is nonzero exactly for an ill-formed window.  The classes
   (Unicode 15 Table 3-7):
     TOO_SHORT   a lead byte C0..FF, then no continuation byte (ASCII or a lead)
     TOO_LONG    ASCII, then a continuation byte 80..BF
     OVERLONG_3  E0, then 80..9F
     SURROGATE   ED, then A0..BF (U+D800..U+DFFF)
     OVERLONG_2  C0 or C1, then anything
     F_LOW       F0 or F5..FF, then 80..8F (F0: overlong; F5..FF: beyond U+10FFFF)
     F_HIGH      F4..FF, then 90..BF (beyond U+10FFFF)
     TWO_CONTS   a continuation byte, then another: right only as the third or fourth byte of
                 a sequence, which the two and three bytes before tell (XORed below). */
#define AJPCORE_U8_TOO_SHORT 0x01
#define AJPCORE_U8_TOO_LONG 0x02
#define AJPCORE_U8_OVERLONG_3 0x04
#define AJPCORE_U8_SURROGATE 0x08
#define AJPCORE_U8_OVERLONG_2 0x10
#define AJPCORE_U8_F_LOW 0x20
#define AJPCORE_U8_F_HIGH 0x40
#define AJPCORE_U8_TWO_CONTS 0x80

#define AJPCORE_U8_ANY_LOW (AJPCORE_U8_TOO_SHORT | AJPCORE_U8_TOO_LONG | AJPCORE_U8_TWO_CONTS)
#define AJPCORE_U8_CONT_AFTER                                                                           \
    (AJPCORE_U8_TOO_LONG | AJPCORE_U8_TWO_CONTS | AJPCORE_U8_OVERLONG_2)
#define AJPCORE_U8_NOT_CONT (AJPCORE_U8_TOO_SHORT | AJPCORE_U8_OVERLONG_2)

/* By the first byte's high nibble. */
static const unsigned char ajpcore_u8_first_high[16] = {
    AJPCORE_U8_TOO_LONG, AJPCORE_U8_TOO_LONG, AJPCORE_U8_TOO_LONG, AJPCORE_U8_TOO_LONG,
    AJPCORE_U8_TOO_LONG, AJPCORE_U8_TOO_LONG, AJPCORE_U8_TOO_LONG, AJPCORE_U8_TOO_LONG,
    AJPCORE_U8_TWO_CONTS, AJPCORE_U8_TWO_CONTS, AJPCORE_U8_TWO_CONTS, AJPCORE_U8_TWO_CONTS,
    AJPCORE_U8_TOO_SHORT | AJPCORE_U8_OVERLONG_2,                                        /* C */
    AJPCORE_U8_TOO_SHORT,                                                                /* D */
    AJPCORE_U8_TOO_SHORT | AJPCORE_U8_OVERLONG_3 | AJPCORE_U8_SURROGATE,                 /* E */
    AJPCORE_U8_TOO_SHORT | AJPCORE_U8_F_LOW | AJPCORE_U8_F_HIGH};                        /* F */
/* By the first byte's low nibble. */
static const unsigned char ajpcore_u8_first_low[16] = {
    AJPCORE_U8_ANY_LOW | AJPCORE_U8_OVERLONG_2 | AJPCORE_U8_OVERLONG_3 | AJPCORE_U8_F_LOW,  /* 0 */
    AJPCORE_U8_ANY_LOW | AJPCORE_U8_OVERLONG_2,                                             /* 1 */
    AJPCORE_U8_ANY_LOW, AJPCORE_U8_ANY_LOW,                                                 /* 2, 3 */
    AJPCORE_U8_ANY_LOW | AJPCORE_U8_F_HIGH,                                                 /* 4 */
    AJPCORE_U8_ANY_LOW | AJPCORE_U8_F_LOW | AJPCORE_U8_F_HIGH,                              /* 5 */
    AJPCORE_U8_ANY_LOW | AJPCORE_U8_F_LOW | AJPCORE_U8_F_HIGH,
    AJPCORE_U8_ANY_LOW | AJPCORE_U8_F_LOW | AJPCORE_U8_F_HIGH,
    AJPCORE_U8_ANY_LOW | AJPCORE_U8_F_LOW | AJPCORE_U8_F_HIGH,
    AJPCORE_U8_ANY_LOW | AJPCORE_U8_F_LOW | AJPCORE_U8_F_HIGH,
    AJPCORE_U8_ANY_LOW | AJPCORE_U8_F_LOW | AJPCORE_U8_F_HIGH,
    AJPCORE_U8_ANY_LOW | AJPCORE_U8_F_LOW | AJPCORE_U8_F_HIGH,
    AJPCORE_U8_ANY_LOW | AJPCORE_U8_F_LOW | AJPCORE_U8_F_HIGH,                              /* C */
    AJPCORE_U8_ANY_LOW | AJPCORE_U8_F_LOW | AJPCORE_U8_F_HIGH | AJPCORE_U8_SURROGATE,       /* D */
    AJPCORE_U8_ANY_LOW | AJPCORE_U8_F_LOW | AJPCORE_U8_F_HIGH,
    AJPCORE_U8_ANY_LOW | AJPCORE_U8_F_LOW | AJPCORE_U8_F_HIGH};
/* By the second byte's high nibble. */
static const unsigned char ajpcore_u8_second_high[16] = {
    AJPCORE_U8_NOT_CONT, AJPCORE_U8_NOT_CONT, AJPCORE_U8_NOT_CONT, AJPCORE_U8_NOT_CONT,
    AJPCORE_U8_NOT_CONT, AJPCORE_U8_NOT_CONT, AJPCORE_U8_NOT_CONT, AJPCORE_U8_NOT_CONT,
    AJPCORE_U8_CONT_AFTER | AJPCORE_U8_OVERLONG_3 | AJPCORE_U8_F_LOW,                        /* 8 */
    AJPCORE_U8_CONT_AFTER | AJPCORE_U8_OVERLONG_3 | AJPCORE_U8_F_HIGH,                       /* 9 */
    AJPCORE_U8_CONT_AFTER | AJPCORE_U8_SURROGATE | AJPCORE_U8_F_HIGH,                        /* A */
    AJPCORE_U8_CONT_AFTER | AJPCORE_U8_SURROGATE | AJPCORE_U8_F_HIGH,                        /* B */
    AJPCORE_U8_NOT_CONT, AJPCORE_U8_NOT_CONT, AJPCORE_U8_NOT_CONT, AJPCORE_U8_NOT_CONT};

/* 32 bytes of 0xFF then 32 of 0x00: the 32 bytes from offset 32 - k keep the first k bytes. */
static const unsigned char ajpcore_u8_prefix[64] = {
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

/* A block's last three bytes start a sequence the block does not finish when byte 31 is a
   lead (>= C0), byte 30 a lead of three or four (>= E0) or byte 29 one of four (>= F0):
   subtracting these bytes (saturated) leaves a nonzero byte exactly then. */
static const unsigned char ajpcore_u8_incomplete[32] = {
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xEF, 0xDF, 0xBF};

/* The vector constants of the avx2 loops (here and in decoder_utf8_write.h), written once by
   ajpcore_utf8_init (decoder_utf8_write.h).  They live in
   writable memory, so the compiler cannot fold them into the code: a loop reads each where it
   is used (an operand of the instruction, or one load), where GCC would otherwise rebuild a
   broadcast from an immediate (three instructions) every time registers run short. */
static AJP_ALIGN32 struct {
    unsigned char first_high[32], first_low[32], second_high[32], lead_mask[32], lead_shift[32];
    unsigned char quote[32], bslash[32], x1f[32], x20[32], nibble[32], x60[32], x70[32], x80[32];
    unsigned char x08[32], xbf[32], xef[32], xc0[32], x44[32], x3f[32];
    unsigned char w3f[32], w7c0[32], wbf[32], wdf[32], w4001[32], wf000[32], xf0[32], xe0[32];
    unsigned char gather4[32], cjk_high[32], cjk_low[32], cjk_low_bound[32], cjk_high_bound[32];
    unsigned char d_ff3f3f3f[32], d_10000001[32], d_ff[32];
} ajpcore_u8_k;

#define AJPCORE_K(name) _mm256_load_si256((const __m256i *)(const void *)ajpcore_u8_k.name)

/* Bit k set when byte k of v is '"', '\' or a control character (not for non-ASCII bytes). */
static inline AJP_TARGET_AVX2 uint32_t ajpcore_u8_stops(__m256i v) {
    __m256i ctl = _mm256_cmpeq_epi8(_mm256_min_epu8(v, AJPCORE_K(x1f)), v);
    __m256i q = _mm256_cmpeq_epi8(v, AJPCORE_K(quote));
    __m256i b = _mm256_cmpeq_epi8(v, AJPCORE_K(bslash));
    return (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(ctl, _mm256_or_si256(q, b)));
}

/* Bytes of v that end a plain run: '"', '\', control characters and non-ASCII bytes (a signed
   compare: bytes >= 0x80 are negative, so below 0x20 too). */
static inline AJP_TARGET_AVX2 __m256i ajpcore_u8_plain_stops(__m256i v) {
    return _mm256_or_si256(_mm256_cmpgt_epi8(AJPCORE_K(x20), v),
                           _mm256_or_si256(_mm256_cmpeq_epi8(v, AJPCORE_K(quote)), _mm256_cmpeq_epi8(v, AJPCORE_K(bslash))));
}

/* ajpcore_scan_plain at the avx2 level: 32 bytes first (most strings end there: one test),
   then 64 bytes a step (one test for both halves), then 32, then the sse2 / word steps. */
static AJP_TARGET_AVX2 Py_ssize_t ajpcore_scan_plain_avx2(const unsigned char *p, Py_ssize_t i, Py_ssize_t n) {
    uint32_t m;
    if (i + 32 <= n) {
        m = (uint32_t)_mm256_movemask_epi8(ajpcore_u8_plain_stops(_mm256_loadu_si256((const __m256i *)(p + i))));
        if (m)
            return i + __builtin_ctz(m);
        i += 32;
    }
    while (i + 64 <= n) {
        __m256i a = ajpcore_u8_plain_stops(_mm256_loadu_si256((const __m256i *)(p + i)));
        __m256i b = ajpcore_u8_plain_stops(_mm256_loadu_si256((const __m256i *)(p + i + 32)));
        if (!_mm256_testz_si256(_mm256_or_si256(a, b), _mm256_or_si256(a, b))) {
            m = (uint32_t)_mm256_movemask_epi8(a);
            if (m)
                return i + __builtin_ctz(m);
            return i + 32 + __builtin_ctz((uint32_t)_mm256_movemask_epi8(b));
        }
        i += 64;
    }
    if (i + 32 <= n) {
        m = (uint32_t)_mm256_movemask_epi8(ajpcore_u8_plain_stops(_mm256_loadu_si256((const __m256i *)(p + i))));
        if (m)
            return i + __builtin_ctz(m);
        i += 32;
    }
    return ajpcore_scan_plain(p, i, n);
}

/* Runs of three-byte characters led by E1..EC (CJK text: U+1000..U+CFFF): their continuation
   bytes may be any of 80..BF (Unicode 15 Table 3-7) and they are neither surrogates (ED) nor
   noncharacters (EF) nor overlong (E0), so they are well formed with nothing more to check.
   Bit k of the result is set when byte k of v is in the range its place in such a run allows
   (lead, continuation, continuation, ...); ten characters fit when bits 0..29 are set. */
static const unsigned char ajpcore_u8_cjk_low_bound[32] = {
    0xE1, 0x80, 0x80, 0xE1, 0x80, 0x80, 0xE1, 0x80, 0x80, 0xE1, 0x80, 0x80, 0xE1, 0x80, 0x80, 0xE1,
    0x80, 0x80, 0xE1, 0x80, 0x80, 0xE1, 0x80, 0x80, 0xE1, 0x80, 0x80, 0xE1, 0x80, 0x80, 0xFF, 0xFF};
static const unsigned char ajpcore_u8_cjk_high_bound[32] = {
    0xEC, 0xBF, 0xBF, 0xEC, 0xBF, 0xBF, 0xEC, 0xBF, 0xBF, 0xEC, 0xBF, 0xBF, 0xEC, 0xBF, 0xBF, 0xEC,
    0xBF, 0xBF, 0xEC, 0xBF, 0xBF, 0xEC, 0xBF, 0xBF, 0xEC, 0xBF, 0xBF, 0xEC, 0xBF, 0xBF, 0x00, 0x00};
#define AJPCORE_U8_TEN 0x3FFFFFFFu

static inline AJP_TARGET_AVX2 uint32_t ajpcore_u8_cjk_fit(__m256i v) {
    __m256i low = _mm256_cmpeq_epi8(_mm256_max_epu8(v, AJPCORE_K(cjk_low_bound)), v);
    __m256i high = _mm256_cmpeq_epi8(_mm256_min_epu8(v, AJPCORE_K(cjk_high_bound)), v);
    return (uint32_t)_mm256_movemask_epi8(_mm256_and_si256(low, high));
}

/* The whole characters at the start of a run that ajpcore_u8_cjk_fit's mask allows. */
static inline uint32_t ajpcore_u8_fit_chars(uint32_t fit) {
    return (uint32_t)__builtin_ctz(~fit | (1u << 30)) / 3;
}

/* A string that ends within the 32 bytes from its first byte that is not plain ASCII, with at
   most AJPCORE_U8_FEW non-ASCII bytes before its end (a word with an accent or an emoji, a CJK
   name, an escape or two: result64k's strings), is better read by the scalar steps: the avx2
   steps work on whole 32-byte blocks and set up their vector state first, which costs more
   than they save there (measured per string, a document of them: "tab\there" 827 against
   619 instructions, "na\u00efve" 744 against 617) and less than they save on denser text
   ("\u00fcn\u00efc\u00f6d\u00e9 Z\u00fcrich r\u00e9sum\u00e9" 741 against 1214).  The
   end is guessed from the first quote that does not follow a backslash: only a choice of
   path, both give the same str or the same refusal.  So are the document's last 32 bytes
   (the avx2 steps would copy them first). */
#define AJPCORE_U8_FEW 8
#define AJPCORE_U8_SHORT (-2)

static inline AJP_TARGET_AVX2 int ajpcore_u8_is_short(const unsigned char *p, Py_ssize_t i, Py_ssize_t n) {
    __m256i v;
    uint32_t quote, before;
    if (i + 32 > n)
        return 1;
    v = _mm256_loadu_si256((const __m256i *)(p + i));
    quote = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, AJPCORE_K(quote)));
    quote &= ~((uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, AJPCORE_K(bslash))) << 1);
    if (!quote)
        return 0;
    before = (quote & (0u - quote)) - 1;
    return __builtin_popcount((uint32_t)_mm256_movemask_epi8(v) & before) <= AJPCORE_U8_FEW;
}

/* ajpcore_scan_string, decided at the avx2 level when the string is well formed: the same
   r (end, length, maxchar) and r->escape, the index of its first backslash (end if none);
   -1 when the scalar code must decide; AJPCORE_U8_SHORT (nothing read) for a short string
   of mixed text (see ajpcore_u8_is_short).  p[first:i] is well formed ASCII text: plain
   but for escapes (the first at `escape`, -1 if none) worth `shrink` bytes more than their
   characters.

   Per 32-byte block: the stops (quote, backslash, control characters) end the block early,
   the bytes from the first stop on counting as zeros (ASCII, so a sequence cut short by the
   stop is TOO_SHORT); the block's UTF-8 is checked against the one before (prev) by the
   lookups above; its code points are its bytes that are not continuation bytes; its widest
   class follows from its largest byte (>= F0: a four-byte lead; >= C4: a lead of U+0100 or
   more; >= 80: Latin-1).  RFC 7493 §2.1 noncharacters (U+FDD0..U+FDEF: EF B7 90..AF;
   U+xFFFE, U+xFFFF: EF BF BE..BF and F? ?F BF BE..BF) are caught by a wider net: B7 or BF
   right after EF, or two bytes after a four-byte lead; such a string (U+FDC0..U+FDFF,
   U+FFC0..U+FFFF, a few supplementary characters) goes to the scalar code, which decides.
   Problems are gathered and looked at once, where the string or a run before an escape ends:
   the scalar code then finds the first one in byte order. */
AJP_ALWAYS_INLINE AJP_TARGET_AVX2 int ajpcore_scan_text_avx2_at(
    const unsigned char *p, Py_ssize_t first, Py_ssize_t i, Py_ssize_t n, Py_ssize_t shrink, Py_ssize_t escape,
    ajpcore_str_scan *r) {
    const __m256i t_first_high = AJPCORE_K(first_high);
    const __m256i t_first_low = AJPCORE_K(first_low);
    const __m256i t_second_high = AJPCORE_K(second_high);
    const __m256i nibble = AJPCORE_K(nibble);
    const __m256i incomplete = _mm256_loadu_si256((const __m256i *)ajpcore_u8_incomplete);
    __m256i prev = _mm256_setzero_si256(), bad = _mm256_setzero_si256(), top = _mm256_setzero_si256();
    Py_UCS4 maxc = 0x7F;
    int three = 0;  /* runs of three-byte characters were seen: cut blocks before one */
    int after_run = 0;
    unsigned char tail[32];
    if (ajpcore_u8_is_short(p, i, n))
        return AJPCORE_U8_SHORT;
    for (;;) {
        const unsigned char *src = p + i;
        __m256i v;
        uint32_t stops, k, high;
        if (i + 32 <= n) {
            v = _mm256_loadu_si256((const __m256i *)src);
            uint32_t fit;
            if ((src[0] & 0xF0) == 0xE0 && !after_run && ((fit = ajpcore_u8_cjk_fit(v)) & 7) == 7) {
                /* A run of three-byte characters (see ajpcore_u8_cjk_fit), ten a step; what
                   came before must be whole (a lead here after an unfinished sequence is the
                   scalar code's error). */
                uint32_t chars;
                bad = _mm256_or_si256(bad, _mm256_subs_epu8(prev, incomplete));
                while ((fit & AJPCORE_U8_TEN) == AJPCORE_U8_TEN && i + 62 <= n) {
                    i += 30;
                    shrink += 20;
                    fit = ajpcore_u8_cjk_fit(_mm256_loadu_si256((const __m256i *)(p + i)));
                }
                chars = ajpcore_u8_fit_chars(fit);
                i += 3 * chars;
                shrink += 2 * chars;
                maxc |= 0xFFFF;
                if (i < n && p[i] == 0x22 && _mm256_testz_si256(bad, bad))
                    break;  /* the string ends with the run */
                three = 1;
                after_run = 1;  /* what stopped the run takes the block step */
                prev = _mm256_setzero_si256();
                continue;
            }
            after_run = 0;
        } else {
            /* The document's last bytes: zeros after them stop the block where it ends. */
            memset(tail, 0, sizeof tail);
            memcpy(tail, p + i, (size_t)(n - i));
            src = tail;
            v = _mm256_loadu_si256((const __m256i *)src);
        }
        stops = ajpcore_u8_stops(v);
        k = 32;
        if (stops) {
            k = (uint32_t)__builtin_ctz(stops);
        } else if (three) {
            /* A three-byte character cut by the block's end starts the next block, which
               then may be a run of them again. */
            if ((src[31] & 0xF0) == 0xE0)
                k = 31;
            else if ((src[30] & 0xF0) == 0xE0)
                k = 30;
        }
        if (k < 32)
            v = _mm256_and_si256(v, _mm256_loadu_si256((const __m256i *)(ajpcore_u8_prefix + 32 - k)));
        high = (uint32_t)_mm256_movemask_epi8(v);
        if (!high) {
            bad = _mm256_or_si256(bad, _mm256_subs_epu8(prev, incomplete));
        } else {
            __m256i before = _mm256_permute2x128_si256(prev, v, 0x21);
            __m256i prev1 = _mm256_alignr_epi8(v, before, 15);
            __m256i prev2 = _mm256_alignr_epi8(v, before, 14);
            __m256i prev3 = _mm256_alignr_epi8(v, before, 13);
            __m256i cls = _mm256_and_si256(
                _mm256_and_si256(
                    _mm256_shuffle_epi8(t_first_high, _mm256_and_si256(_mm256_srli_epi16(prev1, 4), nibble)),
                    _mm256_shuffle_epi8(t_first_low, _mm256_and_si256(prev1, nibble))),
                _mm256_shuffle_epi8(t_second_high, _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble)));
            /* bit 7 where a continuation byte must come: two after a lead >= E0, three after >= F0 */
            __m256i must = _mm256_and_si256(
                _mm256_or_si256(_mm256_subs_epu8(prev2, AJPCORE_K(x60)),
                                _mm256_subs_epu8(prev3, AJPCORE_K(x70))),
                AJPCORE_K(x80));
            /* noncharacter net: B7 or BF after EF, or two after a lead >= F0 */
            __m256i net = _mm256_and_si256(
                _mm256_cmpeq_epi8(_mm256_or_si256(v, AJPCORE_K(x08)), AJPCORE_K(xbf)),
                _mm256_or_si256(_mm256_cmpeq_epi8(prev1, AJPCORE_K(xef)),
                                _mm256_subs_epu8(prev2, AJPCORE_K(xef))));
            bad = _mm256_or_si256(bad, _mm256_or_si256(_mm256_xor_si256(cls, must), net));
            top = _mm256_max_epu8(top, v);
            /* continuation bytes 80..BF: below -64 as signed bytes */
            shrink += __builtin_popcount(
                (uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(AJPCORE_K(xc0), v)));
        }
        prev = v;
        i += k;
        if (!stops)
            continue;
        if (i >= n || !_mm256_testz_si256(bad, bad))
            return -1;  /* the end of the document, or a problem before this stop */
        if (p[i] == 0x22)
            break;
        if (p[i] != 0x5C)
            return -1;  /* a control character */
        if (escape < 0)
            escape = i;
        if (ajpcore_scan_escape(p, i, n, &i, &shrink, &maxc, r) != AJPCORE_STR_OK)
            return -1;
        prev = _mm256_setzero_si256();  /* an escape ends in ASCII */
    }
    /* the widest class, from the largest byte of each position */
    if (_mm256_movemask_epi8(top)) {
        if (_mm256_movemask_epi8(_mm256_subs_epu8(top, AJPCORE_K(x70))))        /* >= F0 */
            maxc |= 0x10FFFF;
        else if (_mm256_movemask_epi8(_mm256_subs_epu8(top, AJPCORE_K(x44))))   /* >= C4 */
            maxc |= 0xFFFF;
        else
            maxc |= 0xFF;
    }
    r->end = i;
    r->length = (i - first) - shrink;
    r->maxchar = maxc;
    r->escape = escape < 0 ? i : escape;
    return AJPCORE_STR_OK;
}

/* ajpcore_scan_text_avx2_at compiled twice: for a string with no escape before p[i] (the usual
   case: its constants folded in) and for one ajpcore_escaped_str read up to p[i]. */
static AJP_TARGET_AVX2 int ajpcore_scan_text_avx2(const unsigned char *p, Py_ssize_t first, Py_ssize_t i,
                                                   Py_ssize_t n, ajpcore_str_scan *r) {
    return ajpcore_scan_text_avx2_at(p, first, i, n, 0, -1, r);
}

static AJP_TARGET_AVX2 int ajpcore_scan_text_avx2_resume(const unsigned char *p, Py_ssize_t first, Py_ssize_t i,
                                                          Py_ssize_t n, Py_ssize_t shrink, Py_ssize_t escape,
                                                          ajpcore_str_scan *r) {
    return ajpcore_scan_text_avx2_at(p, first, i, n, shrink, escape, r);
}

#endif /* AJP_BUILD_AVX2 */

/* ajpcore_scan_plain at the level in use. */
static inline Py_ssize_t ajpcore_scan_plain_any(const unsigned char *p, Py_ssize_t i, Py_ssize_t n) {
#if AJP_BUILD_AVX2
    if (AJP_USE_AVX2)
        return ajpcore_scan_plain_avx2(p, i, n);
#endif
    return ajpcore_scan_plain(p, i, n);
}

#endif /* AJPCORE_DECODER_UTF8_H */
