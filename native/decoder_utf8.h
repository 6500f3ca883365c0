/* The decoder's strings at the avx2 level (native/simd.h): the same two steps as
   decoder_scan.h (check the body and learn its length and widest code point, then write the
   characters into a str of that size and kind), 32 bytes a step.  Included once, by the
   generated _core_c.c, after decoder_scan.h; everything is static.

   The check (ajpcore_scan_text_avx2) decides only strings it finds well formed; on anything
   else (invalid UTF-8, a control character, a bad escape, the end of the document, a possible
   noncharacter) it gives up and ajpcore_scan_string, the exact code of the other levels,
   reads the string again from its start: errors and their positions are those of the scalar
   code by construction, and a string costs at most two reads.

   The dispatchers ajpcore_scan_text and ajpcore_fill_text pick the level once per string. */
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

/* The vector constants of the loops below, written once by ajpcore_utf8_init.  They live in
   writable memory, so the compiler cannot fold them into the code: a loop reads each where it
   is used (an operand of the instruction, or one load), where GCC would otherwise rebuild a
   broadcast from an immediate (three instructions) every time registers run short. */
static struct {
    unsigned char first_high[32], first_low[32], second_high[32], lead_mask[32], lead_shift[32];
    unsigned char quote[32], bslash[32], x1f[32], x20[32], nibble[32], x60[32], x70[32], x80[32];
    unsigned char x08[32], xbf[32], xef[32], xc0[32], x44[32], x3f[32];
    unsigned char w3f[32], w7c0[32], wbf[32], wdf[32], w4001[32], wf000[32], xf0[32], xe0[32];
    unsigned char gather4[32], cjk_high[32], cjk_low[32], cjk_low_bound[32], cjk_high_bound[32];
    unsigned char d_ff3f3f3f[32], d_10000001[32], d_ff[32];
} __attribute__((aligned(32))) ajpcore_u8_k;

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

/* ajpcore_scan_plain at the avx2 level: 64 bytes a step (one test for both halves), then 32,
   then the sse2 / word steps. */
static AJP_TARGET_AVX2 Py_ssize_t ajpcore_scan_plain_avx2(const unsigned char *p, Py_ssize_t i, Py_ssize_t n) {
    uint32_t m;
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

/* ajpcore_scan_string, decided at the avx2 level when the string is well formed: the same
   r (end, length, maxchar) and r->escape, the index of its first backslash (end if none);
   -1 when the scalar code must decide.  p[first:i] is plain ASCII.

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
static AJP_TARGET_AVX2 int ajpcore_scan_text_avx2(const unsigned char *p, Py_ssize_t first, Py_ssize_t i,
                                                   Py_ssize_t n, ajpcore_str_scan *r) {
    const __m256i t_first_high = AJPCORE_K(first_high);
    const __m256i t_first_low = AJPCORE_K(first_low);
    const __m256i t_second_high = AJPCORE_K(second_high);
    const __m256i nibble = AJPCORE_K(nibble);
    const __m256i incomplete = _mm256_loadu_si256((const __m256i *)ajpcore_u8_incomplete);
    __m256i prev = _mm256_setzero_si256(), bad = _mm256_setzero_si256(), top = _mm256_setzero_si256();
    Py_ssize_t shrink = 0, escape = -1;
    Py_UCS4 maxc = 0x7F;
    int three = 0;  /* runs of three-byte characters were seen: cut blocks before one */
    int after_run = 0;
    unsigned char tail[32];
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

/* ---------------------------------------------------------------------------
   Writing the characters.  A run (bytes without a backslash, whole characters, checked) is
   written 32 bytes a step: every byte that is not a continuation byte starts a character,
   whose code point is computed from it and the bytes after it, in place; the code points of
   the continuation bytes are then squeezed out by a shuffle whose pattern comes from a table
   indexed by 8 bits of the keep mask.  A character cut by the end of a block is computed
   from the bytes after the block (loads reach up to 16 bytes past it); its continuation
   bytes start the next block and are dropped there.  Stores write whole vectors, up to
   AJPCORE_U8_SLACK_W characters past the block's own: into the str while it has room for
   them, else into a local buffer copied exactly. */

/* For each 8-bit mask m: the indices of its set bits, in order, then zeros. */
static unsigned char ajpcore_u8_squeeze8[256][8];
/* The same for 16-bit elements: byte indices 2k, 2k + 1 for each set bit k. */
static unsigned char ajpcore_u8_squeeze16[256][16];

/* Bytes a block step may read: 32 and what a character starting at byte 31 reaches, rounded
   up to the 16-byte loads of the widest step (UCS-4: p + 24, 16 bytes). */
#define AJPCORE_U8_READ 40

/* Characters a block's stores may write past its own (see each block). */
#define AJPCORE_U8_SLACK_1 8
#define AJPCORE_U8_SLACK_2 16
#define AJPCORE_U8_SLACK_4 8

/* d[0:size) = s[0:size), size <= 128, by (overlapping) vector moves. */
static inline AJP_TARGET_AVX2 void ajpcore_u8_copy(unsigned char *d, const unsigned char *s, size_t size) {
    if (size >= 32) {
        size_t k;
        for (k = 0; k + 32 < size; k += 32)
            _mm256_storeu_si256((__m256i *)(d + k), _mm256_loadu_si256((const __m256i *)(s + k)));
        _mm256_storeu_si256((__m256i *)(d + size - 32), _mm256_loadu_si256((const __m256i *)(s + size - 32)));
    } else if (size >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)s), y = _mm_loadu_si128((const __m128i *)(s + size - 16));
        _mm_storeu_si128((__m128i *)d, x);
        _mm_storeu_si128((__m128i *)(d + size - 16), y);
    } else if (size >= 8) {
        uint64_t x, y;
        memcpy(&x, s, 8);
        memcpy(&y, s + size - 8, 8);
        memcpy(d, &x, 8);
        memcpy(d + size - 8, &y, 8);
    } else if (size >= 4) {
        uint32_t x, y;
        memcpy(&x, s, 4);
        memcpy(&y, s + size - 4, 4);
        memcpy(d, &x, 4);
        memcpy(d + size - 4, &y, 4);
    } else if (size) {
        unsigned char x = s[0], y = s[size >> 1], z = s[size - 1];
        d[0] = x;
        d[size >> 1] = y;
        d[size - 1] = z;
    }
}

/* The blocks: the bytes at s (AJPCORE_U8_READ of them readable), v0 their first 32, keep the
   bit of each byte that starts a character of the run, high the bit of each non-ASCII byte
   among them; the characters go to o (popcount(keep) of them, and up to AJPCORE_U8_SLACK_W
   elements of junk after them). */

/* Latin-1 (only ASCII and C2 / C3 pairs): (lead & 3) << 6 | (next & 3F); four 8-byte stores. */
static inline AJP_TARGET_AVX2 void ajpcore_u8_block_ucs1(const unsigned char *s, __m256i v0, uint32_t keep,
                                                         uint32_t high, unsigned char *o) {
    __m256i v1, val, shuf, q;
    __m128i lo, hi;
    uint32_t k0 = keep & 0xFF, k1 = (keep >> 8) & 0xFF, k2 = (keep >> 16) & 0xFF, k3 = keep >> 24;
    uint64_t s0, s1, s2, s3;
    (void)high;  /* not all ASCII: ajpcore_u8_run_ucs1 writes those itself */
    v1 = _mm256_loadu_si256((const __m256i *)(s + 1));
    val = _mm256_blendv_epi8(
        v0, _mm256_or_si256(_mm256_and_si256(_mm256_slli_epi16(v0, 6), AJPCORE_K(xc0)), _mm256_and_si256(v1, AJPCORE_K(x3f))),
        v0);
    memcpy(&s0, ajpcore_u8_squeeze8[k0], 8);
    memcpy(&s1, ajpcore_u8_squeeze8[k1], 8);
    memcpy(&s2, ajpcore_u8_squeeze8[k2], 8);
    memcpy(&s3, ajpcore_u8_squeeze8[k3], 8);
    shuf = _mm256_set_epi64x((long long)(s3 + 0x0808080808080808ULL), (long long)s2,
                             (long long)(s1 + 0x0808080808080808ULL), (long long)s0);
    q = _mm256_shuffle_epi8(val, shuf);
    lo = _mm256_castsi256_si128(q);
    hi = _mm256_extracti128_si256(q, 1);
    _mm_storel_epi64((__m128i *)o, lo);
    o += __builtin_popcount(k0);
    _mm_storeh_pd((double *)(void *)o, _mm_castsi128_pd(lo));
    o += __builtin_popcount(k1);
    _mm_storel_epi64((__m128i *)o, hi);
    o += __builtin_popcount(k2);
    _mm_storeh_pd((double *)(void *)o, _mm_castsi128_pd(hi));
}

/* UCS-2 (ASCII, two- and three-byte sequences), 16 bytes at a time in 16-bit lanes; each half
   stores 16 elements (ASCII) or 8 + 8 at o and after its first 8 bits' characters. */
static inline AJP_TARGET_AVX2 void ajpcore_u8_block_ucs2(const unsigned char *s, __m256i v0, uint32_t keep,
                                                         uint32_t high, unsigned char *o) {
    int h;
    (void)v0;
    for (h = 0; h < 2; h++, s += 16, keep >>= 16, high >>= 16) {
        __m256i w0 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)s));
        __m256i w1, w2, m1, two, three, val, q;
        uint32_t k0 = keep & 0xFF, k1 = (keep >> 8) & 0xFF;
        if (!(high & 0xFFFF)) {
            _mm256_storeu_si256((__m256i *)o, w0);
            o += 2 * __builtin_popcount(keep & 0xFFFF);
            continue;
        }
        w1 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(s + 1)));
        w2 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(s + 2)));
        m1 = _mm256_and_si256(w1, AJPCORE_K(w3f));
        two = _mm256_or_si256(_mm256_and_si256(_mm256_slli_epi16(w0, 6), AJPCORE_K(w7c0)), m1);
        three = _mm256_or_si256(_mm256_slli_epi16(w0, 12),
                                _mm256_or_si256(_mm256_slli_epi16(m1, 6), _mm256_and_si256(w2, AJPCORE_K(w3f))));
        val = _mm256_blendv_epi8(w0, two, _mm256_cmpgt_epi16(w0, AJPCORE_K(wbf)));
        val = _mm256_blendv_epi8(val, three, _mm256_cmpgt_epi16(w0, AJPCORE_K(wdf)));
        q = _mm256_shuffle_epi8(
            val, _mm256_inserti128_si256(
                     _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)ajpcore_u8_squeeze16[k0])),
                     _mm_loadu_si128((const __m128i *)ajpcore_u8_squeeze16[k1]), 1));
        _mm_storeu_si128((__m128i *)o, _mm256_castsi256_si128(q));
        o += 2 * __builtin_popcount(k0);
        _mm_storeu_si128((__m128i *)o, _mm256_extracti128_si256(q, 1));
        o += 2 * __builtin_popcount(k1);
    }
}

/* In a checked run: bit k set when byte k of v leads a three-byte sequence. */
static inline AJP_TARGET_AVX2 uint32_t ajpcore_u8_three_leads(__m256i v) {
    return (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(v, AJPCORE_K(xf0)), AJPCORE_K(xe0)));
}

/* In a checked run: whether ten three-byte characters start v. */
static inline AJP_TARGET_AVX2 int ajpcore_u8_three_ten(__m256i v) {
    return (ajpcore_u8_three_leads(v) & AJPCORE_U8_TEN) == 0x09249249u;
}

/* In a checked run: how many three-byte characters start v, up to ten (30 bytes), from
   where its leads stop being at bytes 0, 3, 6, ... */
static inline AJP_TARGET_AVX2 uint32_t ajpcore_u8_three_chars(__m256i v) {
    return (uint32_t)__builtin_ctz((ajpcore_u8_three_leads(v) ^ 0x09249249u) | (1u << 30)) / 3;
}

/* Ten three-byte characters from the 30 bytes at s (readable: 32), to o: 5 of them from each
   lane, one per 16-bit element (the first byte's 4 bits and the second byte's 6 above the
   third byte's 6); stores 13 elements, the last 3 junk. */
static const unsigned char ajpcore_u8_cjk_high[32] = {
    1, 0, 4, 3, 7, 6, 10, 9, 13, 12, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    1, 0, 4, 3, 7, 6, 10, 9, 13, 12, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
static const unsigned char ajpcore_u8_cjk_low[32] = {
    2, 0x80, 5, 0x80, 8, 0x80, 11, 0x80, 14, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    2, 0x80, 5, 0x80, 8, 0x80, 11, 0x80, 14, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};

static inline AJP_TARGET_AVX2 void ajpcore_u8_cjk10(const unsigned char *s, unsigned char *o) {
    __m256i x = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)s)),
                                        _mm_loadu_si128((const __m128i *)(s + 15)), 1);
    __m256i hi = _mm256_shuffle_epi8(x, AJPCORE_K(cjk_high));  /* b0 << 8 | b1 */
    __m256i lo = _mm256_shuffle_epi8(x, AJPCORE_K(cjk_low));   /* b2 */
    __m256i val = _mm256_or_si256(
        _mm256_or_si256(_mm256_and_si256(_mm256_slli_epi16(hi, 4), AJPCORE_K(wf000)),
                        _mm256_slli_epi16(_mm256_and_si256(hi, AJPCORE_K(w3f)), 6)),
        _mm256_and_si256(lo, AJPCORE_K(w3f)));
    _mm_storeu_si128((__m128i *)o, _mm256_castsi256_si128(val));
    _mm_storeu_si128((__m128i *)(o + 10), _mm256_extracti128_si256(val, 1));
}

/* UCS-4, 8 bytes at a time in 32-bit lanes: lane k holds bytes k..k+3, the first one highest;
   each byte is masked (the lead by its length, the others to their 6 bits), two multiply-adds
   put the 21 bits of a four-byte sequence together and a shift by lane keeps the character's
   own bytes (18 bits off for ASCII, 12 for two bytes, 6 for three); each group stores 8. */
static const unsigned char ajpcore_u8_gather4[32] = {
    3, 2, 1, 0, 4, 3, 2, 1, 5, 4, 3, 2, 6, 5, 4, 3,
    7, 6, 5, 4, 8, 7, 6, 5, 9, 8, 7, 6, 10, 9, 8, 7};
/* By high nibble: the mask of a lead of that nibble (continuation bytes: their 6 bits). */
static const unsigned char ajpcore_u8_lead_mask[16] = {
    0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x3F, 0x3F, 0x3F, 0x3F, 0x1F, 0x1F, 0x0F, 0x07};
/* By the lead's high nibble: the bits that belong to the next characters. */
static const unsigned char ajpcore_u8_lead_shift[16] = {
    18, 18, 18, 18, 18, 18, 18, 18, 0, 0, 0, 0, 12, 12, 6, 0};

static inline AJP_TARGET_AVX2 void ajpcore_u8_block_ucs4(const unsigned char *s, __m256i v0, uint32_t keep,
                                                         uint32_t high, unsigned char *o) {
    int g;
    (void)v0;
    for (g = 0; g < 4; g++, s += 8, keep >>= 8, high >>= 8) {
        __m256i d, bits, val;
        uint32_t k = keep & 0xFF;
        if (!(high & 0xFF)) {
            _mm256_storeu_si256((__m256i *)o, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)s)));
            o += 4 * __builtin_popcount(k);
            continue;
        }
        d = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)s)), AJPCORE_K(gather4));
        bits = _mm256_and_si256(
            d, _mm256_and_si256(_mm256_shuffle_epi8(AJPCORE_K(lead_mask), _mm256_and_si256(_mm256_srli_epi16(d, 4), AJPCORE_K(nibble))),
                                AJPCORE_K(d_ff3f3f3f)));
        val = _mm256_madd_epi16(_mm256_maddubs_epi16(bits, AJPCORE_K(w4001)), AJPCORE_K(d_10000001));
        val = _mm256_srlv_epi32(
            val, _mm256_and_si256(_mm256_shuffle_epi8(AJPCORE_K(lead_shift), _mm256_srli_epi32(d, 28)), AJPCORE_K(d_ff)));
        val = _mm256_permutevar8x32_epi32(val, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)ajpcore_u8_squeeze8[k])));
        _mm256_storeu_si256((__m256i *)o, val);
        o += 4 * __builtin_popcount(k);
    }
}

/* The run s[0:e - s) written at o (W bytes a character); o_end: the str's end; limit: the end
   of the document (loads stay below it).  Returns o after the run's characters.  At UCS-2,
   three-byte characters in a row (CJK) take the steps of ajpcore_u8_cjk10. */
#define AJPCORE_U8_RUN(NAME, BLOCK, W)                                                                  \
static inline AJP_TARGET_AVX2 unsigned char *NAME(const unsigned char *s, const unsigned char *e,     \
                                                  unsigned char *o, unsigned char *o_end,             \
                                                  const unsigned char *limit) {                       \
    while (s < e) {                                                                                   \
        Py_ssize_t left = e - s, made;                                                                \
        uint32_t count = left < 32 ? (uint32_t)left : 32, keep, high, chars;                          \
        unsigned char in[64];                                                                         \
        const unsigned char *src = s;                                                                 \
        __m256i v0;                                                                                   \
        if (limit - s < AJPCORE_U8_READ) {                                                            \
            memset(in, 0, sizeof in);                                                                 \
            memcpy(in, s, (size_t)(limit - s));                                                       \
            src = in;                                                                                 \
        }                                                                                             \
        v0 = _mm256_loadu_si256((const __m256i *)src);                                                \
        if ((W) == 2 && (src[0] & 0xF0) == 0xE0 && (chars = ajpcore_u8_three_chars(v0)) != 0) {        \
            /* three-byte characters (CJK), ten a step while they last */                            \
            if (chars == 10 && src == s && o_end - o >= 26) {                                         \
                const uintptr_t s_last = (uintptr_t)limit - AJPCORE_U8_READ;                          \
                const uintptr_t o_last = (uintptr_t)o_end - 26;  /* integers: no pointer below a buffer */ \
                do {                                                                                  \
                    ajpcore_u8_cjk10(s, o);                                                           \
                    o += 20;                                                                          \
                    s += 30;                                                                          \
                } while ((uintptr_t)s <= s_last && (uintptr_t)o <= o_last                             \
                         && ajpcore_u8_three_ten(_mm256_loadu_si256((const __m256i *)s)));            \
                continue;                                                                             \
            }                                                                                         \
            if (o_end - o >= 26) {                                                                    \
                ajpcore_u8_cjk10(src, o);                                                             \
            } else {                                                                                  \
                unsigned char out[32];                                                                \
                ajpcore_u8_cjk10(src, out);                                                           \
                ajpcore_u8_copy(o, out, 2 * chars);                                                   \
            }                                                                                         \
            o += 2 * chars;                                                                           \
            s += 3 * chars;                                                                           \
            continue;                                                                                 \
        }                                                                                             \
        if ((W) == 2 && count == 32) {                                                                \
            /* a three-byte character cut by the block's end starts the next block */                 \
            if ((src[31] & 0xF0) == 0xE0)                                                             \
                count = 31;                                                                           \
            else if ((src[30] & 0xF0) == 0xE0)                                                        \
                count = 30;                                                                           \
        }                                                                                             \
        keep = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(AJPCORE_K(xc0), v0));                \
        high = (uint32_t)_mm256_movemask_epi8(v0);                                                    \
        if (count < 32) {                                                                             \
            keep = _bzhi_u32(keep, count);                                                            \
            high = _bzhi_u32(high, count);                                                            \
        }                                                                                             \
        made = __builtin_popcount(keep);                                                              \
        if ((W) == 1 && !high) {                                                                      \
            /* ASCII: the bytes themselves */                                                         \
            if (o_end - o >= 32)                                                                      \
                _mm256_storeu_si256((__m256i *)o, v0);                                                \
            else                                                                                      \
                ajpcore_u8_copy(o, src, count);                                                       \
        } else if (o_end - o >= (made + AJPCORE_U8_SLACK_##W) * (W)) {                                \
            BLOCK(src, v0, keep, high, o);                                                            \
        } else {                                                                                      \
            unsigned char out[(32 + AJPCORE_U8_SLACK_##W) * (W)];                                     \
            BLOCK(src, v0, keep, high, out);                                                          \
            ajpcore_u8_copy(o, out, (size_t)made * (W));                                              \
        }                                                                                             \
        o += made * (W);                                                                              \
        s += count;                                                                                   \
    }                                                                                                 \
    return o;                                                                                         \
}
AJPCORE_U8_RUN(ajpcore_u8_run_ucs1, ajpcore_u8_block_ucs1, 1)
AJPCORE_U8_RUN(ajpcore_u8_run_ucs2, ajpcore_u8_block_ucs2, 2)
AJPCORE_U8_RUN(ajpcore_u8_run_ucs4, ajpcore_u8_block_ucs4, 4)

/* Write the characters of the checked body p[body:end) (r of ajpcore_scan_text: no backslash
   before `escape`) to o, a str's data of `kind` with room for exactly `length` characters;
   n: the document's size. */
static AJP_TARGET_AVX2 void ajpcore_fill_text_avx2(const unsigned char *p, Py_ssize_t body, Py_ssize_t end,
                                                   Py_ssize_t escape, Py_ssize_t n, void *data, int kind,
                                                   Py_ssize_t length) {
    unsigned char *o = (unsigned char *)data, *o_end = o + length * kind;
    const unsigned char *limit = p + n;
    for (;;) {
        Py_UCS4 cp;
        if (escape < end && p[escape] != 0x5C) {
            const unsigned char *b = (const unsigned char *)memchr(p + escape, 0x5C, (size_t)(end - escape));
            escape = b ? b - p : end;
        }
        if (kind == PyUnicode_1BYTE_KIND)
            o = ajpcore_u8_run_ucs1(p + body, p + escape, o, o_end, limit);
        else if (kind == PyUnicode_2BYTE_KIND)
            o = ajpcore_u8_run_ucs2(p + body, p + escape, o, o_end, limit);
        else
            o = ajpcore_u8_run_ucs4(p + body, p + escape, o, o_end, limit);
        if (escape >= end)
            return;
        if (p[escape + 1] != 0x75) {
            cp = ajpcore_short_escape(p[escape + 1]);
            body = escape + 2;
        } else {
            cp = ajpcore_hex4_checked(p + escape + 2);
            body = escape + 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (ajpcore_hex4_checked(p + body + 2) - 0xDC00);
                body += 6;
            }
        }
        if (kind == PyUnicode_1BYTE_KIND)
            *o = (Py_UCS1)cp;
        else if (kind == PyUnicode_2BYTE_KIND)
            *(Py_UCS2 *)(void *)o = (Py_UCS2)cp;
        else
            *(Py_UCS4 *)(void *)o = cp;
        o += kind;
        escape = body;
    }
}

static void ajpcore_u8_fill(unsigned char *dst, const void *pattern, size_t size) {
    size_t k;
    for (k = 0; k < 32; k += size)
        memcpy(dst + k, pattern, size);
}

static void ajpcore_utf8_init(void) {
    int m, k, c;
    const uint16_t w3f = 0x3F, w7c0 = 0x7C0, wbf = 0xBF, wdf = 0xDF, w4001 = 0x4001, wf000 = 0xF000;
    const uint32_t d_ff3f3f3f = 0xFF3F3F3F, d_10000001 = 0x10000001, d_ff = 0xFF;
    ajpcore_u8_fill(ajpcore_u8_k.first_high, ajpcore_u8_first_high, 16);
    ajpcore_u8_fill(ajpcore_u8_k.first_low, ajpcore_u8_first_low, 16);
    ajpcore_u8_fill(ajpcore_u8_k.second_high, ajpcore_u8_second_high, 16);
    ajpcore_u8_fill(ajpcore_u8_k.lead_mask, ajpcore_u8_lead_mask, 16);
    ajpcore_u8_fill(ajpcore_u8_k.lead_shift, ajpcore_u8_lead_shift, 16);
    memset(ajpcore_u8_k.quote, 0x22, 32);
    memset(ajpcore_u8_k.bslash, 0x5C, 32);
    memset(ajpcore_u8_k.x1f, 0x1F, 32);
    memset(ajpcore_u8_k.x20, 0x20, 32);
    memset(ajpcore_u8_k.nibble, 0x0F, 32);
    memset(ajpcore_u8_k.x60, 0xE0 - 0x80, 32);
    memset(ajpcore_u8_k.x70, 0xF0 - 0x80, 32);
    memset(ajpcore_u8_k.x80, 0x80, 32);
    memset(ajpcore_u8_k.x08, 0x08, 32);
    memset(ajpcore_u8_k.xbf, 0xBF, 32);
    memset(ajpcore_u8_k.xef, 0xEF, 32);
    memset(ajpcore_u8_k.xc0, 0xC0, 32);
    memset(ajpcore_u8_k.x44, 0x44, 32);
    memset(ajpcore_u8_k.x3f, 0x3F, 32);
    ajpcore_u8_fill(ajpcore_u8_k.w3f, &w3f, 2);
    ajpcore_u8_fill(ajpcore_u8_k.w7c0, &w7c0, 2);
    ajpcore_u8_fill(ajpcore_u8_k.wbf, &wbf, 2);
    ajpcore_u8_fill(ajpcore_u8_k.wdf, &wdf, 2);
    ajpcore_u8_fill(ajpcore_u8_k.w4001, &w4001, 2);
    ajpcore_u8_fill(ajpcore_u8_k.wf000, &wf000, 2);
    memset(ajpcore_u8_k.xf0, 0xF0, 32);
    memset(ajpcore_u8_k.xe0, 0xE0, 32);
    memcpy(ajpcore_u8_k.gather4, ajpcore_u8_gather4, 32);
    memcpy(ajpcore_u8_k.cjk_high, ajpcore_u8_cjk_high, 32);
    memcpy(ajpcore_u8_k.cjk_low, ajpcore_u8_cjk_low, 32);
    memcpy(ajpcore_u8_k.cjk_low_bound, ajpcore_u8_cjk_low_bound, 32);
    memcpy(ajpcore_u8_k.cjk_high_bound, ajpcore_u8_cjk_high_bound, 32);
    ajpcore_u8_fill(ajpcore_u8_k.d_ff3f3f3f, &d_ff3f3f3f, 4);
    ajpcore_u8_fill(ajpcore_u8_k.d_10000001, &d_10000001, 4);
    ajpcore_u8_fill(ajpcore_u8_k.d_ff, &d_ff, 4);
    for (m = 0; m < 256; m++) {
        memset(ajpcore_u8_squeeze8[m], 0, 8);
        memset(ajpcore_u8_squeeze16[m], 0, 16);
        for (k = 0, c = 0; k < 8; k++) {
            if (m & (1 << k)) {
                ajpcore_u8_squeeze8[m][c] = (unsigned char)k;
                ajpcore_u8_squeeze16[m][2 * c] = (unsigned char)(2 * k);
                ajpcore_u8_squeeze16[m][2 * c + 1] = (unsigned char)(2 * k + 1);
                c++;
            }
        }
    }
}

#else
static void ajpcore_utf8_init(void) {}
#endif /* AJP_BUILD_AVX2 */

/* ajpcore_scan_plain at the level in use. */
static inline Py_ssize_t ajpcore_scan_plain_any(const unsigned char *p, Py_ssize_t i, Py_ssize_t n) {
#if AJP_BUILD_AVX2
    if (AJP_USE_AVX2)
        return ajpcore_scan_plain_avx2(p, i, n);
#endif
    return ajpcore_scan_plain(p, i, n);
}

/* ajpcore_fill_ucs1/2/4 at the level in use: the checked body p[body:r->end) into data, a
   str's characters of `kind` (PEP 393) with room for r->length of them; n: the document's size. */
static inline void ajpcore_fill_text(const unsigned char *p, Py_ssize_t body, const ajpcore_str_scan *r,
                                     Py_ssize_t n, void *data, int kind) {
#if AJP_BUILD_AVX2
    if (AJP_USE_AVX2) {
        ajpcore_fill_text_avx2(p, body, r->end, r->escape, n, data, kind, r->length);
        return;
    }
#endif
    if (kind == PyUnicode_1BYTE_KIND)
        ajpcore_fill_ucs1(p + body, p + r->end, (Py_UCS1 *)data, r->length);
    else if (kind == PyUnicode_2BYTE_KIND)
        ajpcore_fill_ucs2(p + body, p + r->end, (Py_UCS2 *)data, r->length);
    else
        ajpcore_fill_ucs4(p + body, p + r->end, (Py_UCS4 *)data, r->length);
}

/* The str of the string whose body starts at p[first] and whose first byte that is not plain
   ASCII is p[i]: checked (ajpcore_scan_text), made at its final length and kind (PEP 393) and
   written (ajpcore_fill_text), the level picked once.  A new reference, r->end at its closing
   quote; or NULL: *status says the refusal (r as ajpcore_scan_string leaves it), or is
   AJPCORE_STR_OK with a Python exception set (no memory). */
static PyObject *ajpcore_text_str(const unsigned char *p, Py_ssize_t first, Py_ssize_t i, Py_ssize_t n,
                                  ajpcore_str_scan *r, int *status) {
    PyObject *s;
#if AJP_BUILD_AVX2
    if (AJP_USE_AVX2) {
        int st = ajpcore_scan_text_avx2(p, first, i, n, r);
        if (st < 0) {
            r->escape = first;
            st = ajpcore_scan_string(p, first, i, n, r);
        }
        *status = st;
        if (st != AJPCORE_STR_OK)
            return NULL;
        s = PyUnicode_New(r->length, r->maxchar);
        if (s != NULL)
            ajpcore_fill_text_avx2(p, first, r->end, r->escape, n, PyUnicode_DATA(s), PyUnicode_KIND(s), r->length);
        return s;
    }
#endif
    *status = ajpcore_scan_string(p, first, i, n, r);
    if (*status != AJPCORE_STR_OK)
        return NULL;
    s = PyUnicode_New(r->length, r->maxchar);
    if (s == NULL)
        return NULL;
    r->escape = first;
    ajpcore_fill_text(p, first, r, n, PyUnicode_DATA(s), PyUnicode_KIND(s));
    return s;
}

#endif /* AJPCORE_DECODER_UTF8_H */
