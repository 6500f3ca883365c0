/* The decoder's strings at the avx2 level (native/simd.h), the second step: writing the str
   of a string decoder_utf8.h checked, at its final length and kind (PEP 393), 32 bytes a step;
   and ajpcore_text_str, which takes both steps at the level in use (picked once per string).
   Included once, by the generated _core_c.c; everything is static. */
#ifndef AJPCORE_DECODER_UTF8_WRITE_H
#define AJPCORE_DECODER_UTF8_WRITE_H

#include "decoder_str.h"
#include "decoder_utf8.h"
#include "decoder_ascii_escapes.h"

#if AJP_BUILD_AVX2

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

/* The str of the string whose body starts at p[first] and whose first byte that is not plain
   ASCII is p[i] (or, from ajpcore_escaped_str, whose body p[first:i] is well formed ASCII text
   with escapes: the first at `escape`, else -1, worth `shrink` bytes more than their
   characters): checked (ajpcore_scan_text_avx2, else ajpcore_scan_string), made at its final
   length and kind (PEP 393; ajpcore_str_new) and written (ajpcore_fill_text_avx2, else ajpcore_fill_ucs1/2/4),
   the level picked once (the scalar steps at the avx2 level too for a short string of mixed
   text, see ajpcore_scan_text_avx2).  A new reference, r->end at its closing
   quote; or NULL: *status says the refusal (r as ajpcore_scan_string leaves it), or is
   AJPCORE_STR_OK with a Python exception set (no memory). */
AJP_ALWAYS_INLINE PyObject *ajpcore_text_from(
    const unsigned char *p, Py_ssize_t first, Py_ssize_t i, Py_ssize_t n, Py_ssize_t shrink, Py_ssize_t escape,
    ajpcore_str_scan *r, int *status) {
    PyObject *s;
#if AJP_BUILD_AVX2
    if (AJP_USE_AVX2) {
        int st = escape < 0 ? ajpcore_scan_text_avx2(p, first, i, n, r)
                            : ajpcore_scan_text_avx2_resume(p, first, i, n, shrink, escape, r);
        if (st != AJPCORE_U8_SHORT) {
            if (st < 0) {
                r->escape = first;
                st = escape < 0 ? ajpcore_scan_string(p, first, i, n, r)
                                : ajpcore_scan_string_resume(p, first, i, n, shrink, r);
            }
            *status = st;
            if (st != AJPCORE_STR_OK)
                return NULL;
            s = ajpcore_str_new(r->length, r->maxchar);
            if (s != NULL)
                ajpcore_fill_text_avx2(p, first, r->end, r->escape, n, PyUnicode_DATA(s), PyUnicode_KIND(s), r->length);
            return s;
        }
        /* a short string of mixed text: the scalar steps below */
    }
#endif
    *status = escape < 0 ? ajpcore_scan_string(p, first, i, n, r)
                         : ajpcore_scan_string_resume(p, first, i, n, shrink, r);
    if (*status != AJPCORE_STR_OK)
        return NULL;
    s = ajpcore_str_new(r->length, r->maxchar);
    if (s == NULL)
        return NULL;
    if (PyUnicode_KIND(s) == PyUnicode_1BYTE_KIND)
        ajpcore_fill_ucs1(p + first, p + r->end, (Py_UCS1 *)PyUnicode_DATA(s), r->length);
    else if (PyUnicode_KIND(s) == PyUnicode_2BYTE_KIND)
        ajpcore_fill_ucs2(p + first, p + r->end, (Py_UCS2 *)PyUnicode_DATA(s), r->length);
    else
        ajpcore_fill_ucs4(p + first, p + r->end, (Py_UCS4 *)PyUnicode_DATA(s), r->length);
    return s;
}

/* ajpcore_text_from for a string whose first byte that is not plain ASCII is p[i]. */
static PyObject *ajpcore_text_str(const unsigned char *p, Py_ssize_t first, Py_ssize_t i, Py_ssize_t n,
                                  ajpcore_str_scan *r, int *status) {
    return ajpcore_text_from(p, first, i, n, 0, -1, r, status);
}

/* The same for a string whose first byte that is not plain ASCII is p[i], a backslash (i < n):
   in one pass when it is ASCII throughout (decoder_ascii_escapes.h), else ajpcore_text_from
   from where that pass stopped. */
static PyObject *ajpcore_escaped_str(const unsigned char *p, Py_ssize_t first, Py_ssize_t i, Py_ssize_t n,
                                     ajpcore_str_scan *r, int *status) {
    unsigned char buf[AJPCORE_ESC_CAP];
    Py_ssize_t j = i, count;
    PyObject *s;
    int done;
#if AJP_BUILD_AVX2
    if (AJP_USE_AVX2)
        done = ajpcore_esc_one_pass_avx2(p, &j, n, buf, &count);
    else
#endif
        done = ajpcore_esc_one_pass(p, &j, n, buf, &count);
    if (!done)
        return ajpcore_text_from(p, first, j, n, (j - i) - count, i, r, status);
    *status = AJPCORE_STR_OK;
    r->end = j;
    s = ajpcore_ascii_new((i - first) + count);
    if (s != NULL) {
        unsigned char *d = (unsigned char *)PyUnicode_DATA(s);
        memcpy(d, p + first, (size_t)(i - first));
        memcpy(d + (i - first), buf, (size_t)count);
    }
    return s;
}

#endif /* AJPCORE_DECODER_UTF8_WRITE_H */
