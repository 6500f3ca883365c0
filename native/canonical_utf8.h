/* The canonical writer's text encoder at the avx2 level: PEP 393 text (Latin-1, UCS-2, UCS-4
   code units) to UTF-8 with the JSON escapes of RFC 8785 §3.2.2.2 (ECMA-262 QuoteJSONString:
   \b \t \n \f \r \" \\ and lowercase \u00xx for the other controls), 32 bytes of text a step.
   _put_str (native/canonical_strings.pxi) takes it once per string when AJP_USE_AVX2; the sse2
   and scalar levels keep the encoders of native/canonical_scan.h.  Included once, by the
   generated _core_c.c; everything is static.

   The method is the one of D. Lemire, W. Muła et al., "Transcoding Billions of Unicode
   Characters per Second with SIMD Instructions", Software: Practice and Experience 52(2), 2022,
   section "Transcoding from UTF-16 to UTF-8": widen every code unit to a lane that holds its
   whole UTF-8 form, then squeeze the lanes together with one byte shuffle whose pattern a
   table gives, indexed by the lanes' lengths.  Here:
   - Latin-1: 16-bit lanes, each 1 byte (ASCII) or 2 (lead, continuation); 8 lanes a pattern,
     indexed by which bytes are >= 0x80 (ajp_latin1_squeeze).
   - UCS-2 and UCS-4: 32-bit lanes holding the form last byte first (so every length is the low
     bytes of its lane), 4 lanes a pattern, indexed by two bits of each lane's length
     (ajp_lanes_squeeze).  A run of ASCII is packed to bytes instead, 16 or 8 units a step.
   A step looks at a whole block of units: the characters that need an escape, and surrogates,
   cut it; the units before the cut are transcoded, the one at the cut is escaped here or
   refused by the caller ("String contains a lone surrogate").  The last block of a text is
   read without passing its end (ajp_tail32): its missing units are zeros, controls that cut the
   block exactly at the text's end.  Stores write up to AJP_UTF8_STEP_ROOM bytes past the
   output they keep; the encoder stops (AJP_TEXT_ROOM) before a step that might not fit. */
#ifndef AJPCORE_CANONICAL_UTF8_H
#define AJPCORE_CANONICAL_UTF8_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "simd.h"
#include "canonical_scan.h"

/* How ajp_utf8_avx2 stopped. */
#define AJP_TEXT_DONE 0       /* *pos == end */
#define AJP_TEXT_ROOM 1       /* the next step might write past room: make room, call again */
#define AJP_TEXT_SURROGATE 2  /* data[*pos] is a surrogate code point (a lone surrogate of the str) */

/* Bytes a step may store from where its output starts: 64 (Latin-1: 32 bytes, each up to 2,
   stored as four 16-byte vectors) and an escape (6). */
#define AJP_UTF8_STEP_ROOM 80

/* A character below 0x80 that needs an escape, escaped to out (2 or 6 bytes): returns the length. */
static inline int ajp_put_escape(char *out, unsigned int c) {
    static const char hex[] = "0123456789abcdef";
    out[0] = '\\';
    switch (c) {
    case '\b': out[1] = 'b'; return 2;
    case '\t': out[1] = 't'; return 2;
    case '\n': out[1] = 'n'; return 2;
    case '\f': out[1] = 'f'; return 2;
    case '\r': out[1] = 'r'; return 2;
    case '"': case '\\': out[1] = (char)c; return 2;
    default:
        out[1] = 'u'; out[2] = '0'; out[3] = '0';
        out[4] = hex[c >> 4]; out[5] = hex[c & 15];
        return 6;
    }
}

#if AJP_BUILD_AVX2

/* Latin-1 squeeze: entry m (bit k set: byte k is >= 0x80, lane k holds two bytes) picks the
   bytes to keep from 8 16-bit lanes; the rest of the 16 is zeros (shuffle index 0x80). */
static uint8_t ajp_latin1_squeeze[256][16];

/* Wide squeeze: entry x picks, from 4 32-bit lanes, the form of lane k (length 1 + (x >> k & 1)
   + 2 * (x >> (k + 4) & 1)) last byte first; ajp_lanes_length[x] is the bytes kept. */
static uint8_t ajp_lanes_squeeze[256][16];
static uint8_t ajp_lanes_length[256];

/* Shuffle indices 0..15 then 16 zeroing ones: 16 bytes of it from offset s shift a vector right
   by s bytes, filling with zeros. */
static const uint8_t ajp_shift_window[32] = {
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
};

/* The vector constants, each 8 times in a row, loaded where used: filled at import, so the
   compiler takes them as memory operands rather than building each one in registers anew
   inside the loops (where they do not all fit in the 16 vector registers). */
enum {
    AJP_K_B1F, AJP_K_BQUOTE, AJP_K_BBSLASH,                                   /* bytes */
    AJP_K_W1F, AJP_K_WQUOTE, AJP_K_WBSLASH, AJP_K_WF800, AJP_K_WD800, AJP_K_WFF80,
    AJP_K_W3F, AJP_K_W80C0, AJP_K_W7F,                                        /* 16-bit */
    AJP_K_D20, AJP_K_DQUOTE, AJP_K_DBSLASH, AJP_K_DFFFFF800, AJP_K_DD800, AJP_K_D7F, AJP_K_D7FF,
    AJP_K_DFFFF, AJP_K_D3F, AJP_K_D3F00, AJP_K_D3F0000, AJP_K_D7000000, AJP_K_DC080, AJP_K_DE04000,
    AJP_K_DF0600000,                                                          /* 32-bit */
    AJP_K_COUNT
};
static AJP_ALIGN32 uint32_t ajp_utf8_k[AJP_K_COUNT][8];
#define AJP_K(name) _mm256_load_si256((const __m256i *)ajp_utf8_k[AJP_K_##name])

static void ajp_init_utf8_tables(void) {
    static const uint32_t k32[AJP_K_COUNT] = {
        0x1F1F1F1Fu, 0x22222222u, 0x5C5C5C5Cu,
        0x001F001Fu, 0x00220022u, 0x005C005Cu, 0xF800F800u, 0xD800D800u, 0xFF80FF80u,
        0x003F003Fu, 0x80C080C0u, 0x007F007Fu,
        0x20u, 0x22u, 0x5Cu, 0xFFFFF800u, 0xD800u, 0x7Fu, 0x7FFu,
        0xFFFFu, 0x3Fu, 0x3F00u, 0x3F0000u, 0x07000000u, 0xC080u, 0xE04000u,
        0xF0600000u,
    };
    int x, k, b, o;
    for (x = 0; x < AJP_K_COUNT; x++)
        for (k = 0; k < 8; k++) ajp_utf8_k[x][k] = k32[x];
    for (x = 0; x < 256; x++) {
        o = 0;
        for (k = 0; k < 8; k++) {
            ajp_latin1_squeeze[x][o++] = (uint8_t)(2 * k);
            if ((x >> k) & 1) ajp_latin1_squeeze[x][o++] = (uint8_t)(2 * k + 1);
        }
        while (o < 16) ajp_latin1_squeeze[x][o++] = 0x80;
        o = 0;
        for (k = 0; k < 4; k++) {
            int length = 1 + ((x >> k) & 1) + 2 * ((x >> (k + 4)) & 1);
            for (b = length - 1; b >= 0; b--) ajp_lanes_squeeze[x][o++] = (uint8_t)(4 * k + b);
        }
        ajp_lanes_length[x] = (uint8_t)o;
        while (o < 16) ajp_lanes_squeeze[x][o++] = 0x80;
    }
}

/* The n < 32 bytes at p as a vector, zeros after them, never reading outside p[0..n). */
AJP_TARGET_AVX2 static inline __m256i ajp_tail32(const unsigned char *p, Py_ssize_t n) {
    __m128i lo, hi = _mm_setzero_si128();
    if (n >= 16) {
        lo = _mm_loadu_si128((const __m128i *)p);
        hi = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + n - 16)),
                              _mm_loadu_si128((const __m128i *)(ajp_shift_window + 32 - n)));
    } else if (n >= 8) {
        __m128i b = _mm_shuffle_epi8(_mm_loadl_epi64((const __m128i *)(p + n - 8)),
                                     _mm_loadu_si128((const __m128i *)(ajp_shift_window + 16 - n)));
        lo = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)p), b);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + n - 4, 4);
        lo = _mm_cvtsi64_si128((long long)(a | (((uint64_t)b >> (8 * (8 - n))) << 32)));
    } else {
        uint32_t x = 0;
        if (n) x = p[0] | (uint32_t)p[n >> 1] << (8 * (n >> 1)) | (uint32_t)p[n - 1] << (8 * (n - 1));
        lo = _mm_cvtsi32_si128((int)x);
    }
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

/* Two 16-byte table rows as one vector (the first in the low half). */
AJP_TARGET_AVX2 static inline __m256i ajp_rows(const uint8_t *a, const uint8_t *b) {
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)a)),
                                   _mm_loadu_si128((const __m128i *)b), 1);
}

/* 16 Latin-1 bytes widened to 16-bit lanes, each turned into its UTF-8 form: the byte itself
   below 0x80, else lead 0xC0 | c >> 6 in the low byte and continuation 0x80 | c & 0x3F above. */
AJP_TARGET_AVX2 static inline __m256i ajp_latin1_forms(__m128i bytes) {
    const __m256i x = _mm256_cvtepu8_epi16(bytes);
    const __m256i two = _mm256_or_si256(
        _mm256_or_si256(_mm256_srli_epi16(x, 6), _mm256_slli_epi16(_mm256_and_si256(x, AJP_K(W3F)), 8)),
        AJP_K(W80C0));
    return _mm256_blendv_epi8(x, two, _mm256_cmpgt_epi16(x, AJP_K(W7F)));
}

/* The UTF-8 of the first m of 32 Latin-1 bytes (bit k of high: byte k is >= 0x80) to dst:
   up to 64 bytes stored, m + popcount(high) of them kept (high has no bit from m on).  The
   second 16 bytes are left alone when m does not reach them (a short text's one block). */
AJP_TARGET_AVX2 static inline void ajp_latin1_block(__m256i v, uint32_t high, uint32_t m, char *dst) {
    __m256i a = ajp_latin1_forms(_mm256_castsi256_si128(v));
    a = _mm256_shuffle_epi8(a, ajp_rows(ajp_latin1_squeeze[high & 255], ajp_latin1_squeeze[(high >> 8) & 255]));
    _mm_storeu_si128((__m128i *)dst, _mm256_castsi256_si128(a));
    _mm_storeu_si128((__m128i *)(dst + 8 + _mm_popcnt_u32(high & 0xFF)), _mm256_extracti128_si256(a, 1));
    if (m > 16) {
        __m256i b = ajp_latin1_forms(_mm256_extracti128_si256(v, 1));
        b = _mm256_shuffle_epi8(b, ajp_rows(ajp_latin1_squeeze[(high >> 16) & 255], ajp_latin1_squeeze[high >> 24]));
        _mm_storeu_si128((__m128i *)(dst + 16 + _mm_popcnt_u32(high & 0xFFFF)), _mm256_castsi256_si128(b));
        _mm_storeu_si128((__m128i *)(dst + 24 + _mm_popcnt_u32(high & 0xFFFFFF)), _mm256_extracti128_si256(b, 1));
    }
}

AJP_TARGET_AVX2 static Py_ssize_t ajp_utf8_latin1_avx2(const unsigned char *p, Py_ssize_t *pos, Py_ssize_t end,
                                                       char *dst, Py_ssize_t room, int *status) {
    Py_ssize_t i = *pos, o = 0;
    const Py_ssize_t limit = room - AJP_UTF8_STEP_ROOM;
    while (i < end) {
        const Py_ssize_t r = end - i;
        __m256i v, bad;
        uint32_t cut, high, m;
        if (o > limit) {
            *pos = i;
            *status = AJP_TEXT_ROOM;
            return o;
        }
        v = r >= 32 ? _mm256_loadu_si256((const __m256i *)(p + i)) : ajp_tail32(p + i, r);
        /* Unsigned c < 0x20 as min(c, 0x1F) == c; a tail's zeros are such controls. */
        bad = _mm256_or_si256(_mm256_cmpeq_epi8(_mm256_min_epu8(v, AJP_K(B1F)), v),
                              _mm256_or_si256(_mm256_cmpeq_epi8(v, AJP_K(BQUOTE)), _mm256_cmpeq_epi8(v, AJP_K(BBSLASH))));
        cut = (uint32_t)_mm256_movemask_epi8(bad);
        m = cut ? (uint32_t)ajp_ctz(cut) : 32;
        high = _bzhi_u32((uint32_t)_mm256_movemask_epi8(v), m);
        if (high) {
            ajp_latin1_block(v, high, m, dst + o);
            o += m + _mm_popcnt_u32(high);
        } else {
            _mm256_storeu_si256((__m256i *)(dst + o), v);
            o += m;
        }
        i += m;
        if (cut && i < end) {
            o += ajp_put_escape(dst + o, p[i]);
            i++;
        }
    }
    *pos = i;
    *status = AJP_TEXT_DONE;
    return o;
}

/* The UTF-8 of 8 code points in 32-bit lanes (none a surrogate or a character needing an
   escape) to dst: up to 32 bytes stored (16 from where the first 4 end); returns the bytes
   kept.  wide: code points beyond U+FFFF may occur (UCS-4).
   A lane of length L holds, from its low byte up: the last continuation byte, ..., the lead
   byte; the bits of c spread 6 to a byte ("spread"), and the tag bits by length ("tags"). */
AJP_TARGET_AVX2 static inline Py_ssize_t ajp_lanes_block(__m256i c, char *dst, const int wide) {
    const __m256i ge80 = _mm256_cmpgt_epi32(c, AJP_K(D7F));
    const __m256i ge800 = _mm256_cmpgt_epi32(c, AJP_K(D7FF));
    __m256i spread = _mm256_or_si256(
        _mm256_or_si256(_mm256_and_si256(c, AJP_K(D3F)),
                        _mm256_and_si256(_mm256_slli_epi32(c, 2), AJP_K(D3F00))),
        _mm256_and_si256(_mm256_slli_epi32(c, 4), AJP_K(D3F0000)));
    /* Tags 0xC080 (2 bytes), 0xE08080 (3), 0xF0808080 (4), each the one before xor a step. */
    __m256i tags = _mm256_xor_si256(_mm256_and_si256(ge80, AJP_K(DC080)),
                                    _mm256_and_si256(ge800, AJP_K(DE04000)));
    __m256i odd = _mm256_xor_si256(ge80, ge800);  /* length 2 or 4: bit 0 of length - 1 */
    __m256i rows;
    uint32_t lo, hi, x0, x1;
    Py_ssize_t k0;
    if (wide) {
        const __m256i ge10000 = _mm256_cmpgt_epi32(c, AJP_K(DFFFF));
        spread = _mm256_or_si256(spread, _mm256_and_si256(_mm256_slli_epi32(c, 6), AJP_K(D7000000)));
        tags = _mm256_xor_si256(tags, _mm256_and_si256(ge10000, AJP_K(DF0600000)));
        odd = _mm256_xor_si256(odd, ge10000);
    }
    c = _mm256_blendv_epi8(c, _mm256_or_si256(spread, tags), ge80);
    lo = (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(odd));
    hi = (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(ge800));
    x0 = (lo & 15) | ((hi & 15) << 4);
    x1 = (lo >> 4) | (hi & 0xF0);
    rows = ajp_rows(ajp_lanes_squeeze[x0], ajp_lanes_squeeze[x1]);
    c = _mm256_shuffle_epi8(c, rows);
    k0 = ajp_lanes_length[x0];
    _mm_storeu_si128((__m128i *)dst, _mm256_castsi256_si128(c));
    _mm_storeu_si128((__m128i *)(dst + k0), _mm256_extracti128_si256(c, 1));
    return k0 + ajp_lanes_length[x1];
}

AJP_TARGET_AVX2 static Py_ssize_t ajp_utf8_ucs2_avx2(const uint16_t *p, Py_ssize_t *pos, Py_ssize_t end,
                                                     char *dst, Py_ssize_t room, int *status) {
    const __m256i zero = _mm256_setzero_si256();
    Py_ssize_t i = *pos, o = 0;
    const Py_ssize_t limit = room - AJP_UTF8_STEP_ROOM;
    while (i < end) {
        const Py_ssize_t r = end - i;
        __m256i v, bad;
        uint32_t cut, m, ge80;
        if (o > limit) {
            *pos = i;
            *status = AJP_TEXT_ROOM;
            return o;
        }
        v = r >= 16 ? _mm256_loadu_si256((const __m256i *)(p + i)) : ajp_tail32((const unsigned char *)(p + i), 2 * r);
        bad = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi16(_mm256_min_epu16(v, AJP_K(W1F)), v),
                            _mm256_cmpeq_epi16(_mm256_and_si256(v, AJP_K(WF800)), AJP_K(WD800))),
            _mm256_or_si256(_mm256_cmpeq_epi16(v, AJP_K(WQUOTE)), _mm256_cmpeq_epi16(v, AJP_K(WBSLASH))));
        cut = (uint32_t)_mm256_movemask_epi8(bad);
        m = cut ? (uint32_t)ajp_ctz(cut) / 2 : 16;
        /* Two bits a unit: >= 0x80, >= 0x800 (among the m before the cut). */
        ge80 = _bzhi_u32(~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi16(_mm256_and_si256(v, AJP_K(WFF80)), zero)), 2 * m);
        if (!ge80) {
            /* ASCII: the low bytes of the units, packed (packus works within 128-bit halves). */
            __m256i b = _mm256_permute4x64_epi64(_mm256_packus_epi16(v, v), 0xD8);
            _mm_storeu_si128((__m128i *)(dst + o), _mm256_castsi256_si128(b));
            o += m;
        } else {
            Py_ssize_t k = ajp_lanes_block(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(v)), dst + o, 0);
            if (m > 8)  /* (a short text's one block often ends in the first half) */
                k += ajp_lanes_block(_mm256_cvtepu16_epi32(_mm256_extracti128_si256(v, 1)), dst + o + k, 0);
            if (m < 16) {
                uint32_t ge800 = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi16(_mm256_and_si256(v, AJP_K(WF800)), zero));
                k = m + (_mm_popcnt_u32(ge80) + _mm_popcnt_u32(_bzhi_u32(ge800, 2 * m))) / 2;
            }
            o += k;
        }
        i += m;
        if (cut && i < end) {
            if ((p[i] & 0xF800) == 0xD800) {
                *pos = i;
                *status = AJP_TEXT_SURROGATE;
                return o;
            }
            o += ajp_put_escape(dst + o, p[i]);
            i++;
        }
    }
    *pos = i;
    *status = AJP_TEXT_DONE;
    return o;
}

AJP_TARGET_AVX2 static Py_ssize_t ajp_utf8_ucs4_avx2(const uint32_t *p, Py_ssize_t *pos, Py_ssize_t end,
                                                     char *dst, Py_ssize_t room, int *status) {
    Py_ssize_t i = *pos, o = 0;
    const Py_ssize_t limit = room - AJP_UTF8_STEP_ROOM;
    while (i < end) {
        const Py_ssize_t r = end - i;
        __m256i v, bad;
        uint32_t cut, m, ge80;
        if (o > limit) {
            *pos = i;
            *status = AJP_TEXT_ROOM;
            return o;
        }
        v = r >= 8 ? _mm256_loadu_si256((const __m256i *)(p + i)) : ajp_tail32((const unsigned char *)(p + i), 4 * r);
        /* Code points are at most 0x10FFFF: signed compares are exact. */
        bad = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpgt_epi32(AJP_K(D20), v),
                            _mm256_cmpeq_epi32(_mm256_and_si256(v, AJP_K(DFFFFF800)), AJP_K(DD800))),
            _mm256_or_si256(_mm256_cmpeq_epi32(v, AJP_K(DQUOTE)), _mm256_cmpeq_epi32(v, AJP_K(DBSLASH))));
        cut = (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(bad));
        m = cut ? (uint32_t)ajp_ctz(cut) : 8;
        ge80 = _bzhi_u32((uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(v, AJP_K(D7F)))), m);
        if (!ge80) {
            /* ASCII: the low bytes of the 8 units, packed within each half, then the halves joined. */
            __m256i b = _mm256_packus_epi16(_mm256_packus_epi32(v, v), v);
            _mm_storel_epi64((__m128i *)(dst + o),
                             _mm_unpacklo_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1)));
            o += m;
        } else {
            Py_ssize_t k = ajp_lanes_block(v, dst + o, 1);
            if (m < 8) {
                uint32_t ge800 = (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(v, AJP_K(D7FF))));
                uint32_t ge10000 = (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(v, AJP_K(DFFFF))));
                k = m + _mm_popcnt_u32(ge80) + _mm_popcnt_u32(_bzhi_u32(ge800, m)) + _mm_popcnt_u32(_bzhi_u32(ge10000, m));
            }
            o += k;
        }
        i += m;
        if (cut && i < end) {
            if ((p[i] & 0xFFFFF800u) == 0xD800) {
                *pos = i;
                *status = AJP_TEXT_SURROGATE;
                return o;
            }
            o += ajp_put_escape(dst + o, p[i]);
            i++;
        }
    }
    *pos = i;
    *status = AJP_TEXT_DONE;
    return o;
}

/* UTF-8 with JSON escapes of the PEP 393 text data[*pos..end) of kind 1, 2 or 4 to dst, which
   holds room bytes: returns the bytes written and moves *pos; *status says why it stopped. */
AJP_ALWAYS_INLINE Py_ssize_t ajp_utf8_avx2(int kind, const void *data, Py_ssize_t *pos, Py_ssize_t end,
                                           char *dst, Py_ssize_t room, int *status) {
    if (kind == 1) return ajp_utf8_latin1_avx2((const unsigned char *)data, pos, end, dst, room, status);
    if (kind == 2) return ajp_utf8_ucs2_avx2((const uint16_t *)data, pos, end, dst, room, status);
    return ajp_utf8_ucs4_avx2((const uint32_t *)data, pos, end, dst, room, status);
}

/* A ready str as a JSON string "..." to dst, which has room bytes: returns the bytes written,
   or 0 when the room might not hold it or the text has a surrogate (the caller's general
   writer then starts over: nothing was written as far as it is concerned). */
AJP_ALWAYS_INLINE Py_ssize_t ajp_put_text_avx2(char *dst, Py_ssize_t room, PyObject *s) {
    Py_ssize_t pos = 0, o, n = ajp_text_length(s);
    int status;
    if (room < n + 2 + AJP_UTF8_STEP_ROOM) return 0;  /* surely too small: no partial attempt */
    dst[0] = '"';
    o = ajp_utf8_avx2(ajp_text_kind(s), ajp_text_data(s), &pos, n, dst + 1, room - 2, &status);
    if (status != AJP_TEXT_DONE) return 0;
    dst[o + 1] = '"';
    return o + 2;
}

#else /* !AJP_BUILD_AVX2 */

static void ajp_init_utf8_tables(void) {}

/* A build without the avx2 level never takes this encoder (AJP_USE_AVX2 is 0); it keeps the
   contract anyway, one code point at a time. */
static Py_ssize_t ajp_utf8_avx2(int kind, const void *data, Py_ssize_t *pos, Py_ssize_t end,
                                char *dst, Py_ssize_t room, int *status) {
    Py_ssize_t i = *pos, o = 0;
    while (i < end) {
        uint32_t c = kind == 1 ? ((const uint8_t *)data)[i]
                   : kind == 2 ? ((const uint16_t *)data)[i] : ((const uint32_t *)data)[i];
        if (o > room - 6) { *pos = i; *status = AJP_TEXT_ROOM; return o; }
        if (c >= 0xD800 && c <= 0xDFFF) { *pos = i; *status = AJP_TEXT_SURROGATE; return o; }
        if (c < 0x80) {
            if (ajp_escaped_byte[c]) o += ajp_put_escape(dst + o, c);
            else dst[o++] = (char)c;
        } else if (c < 0x800) {
            dst[o++] = (char)(0xC0 | (c >> 6));
            dst[o++] = (char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            dst[o++] = (char)(0xE0 | (c >> 12));
            dst[o++] = (char)(0x80 | ((c >> 6) & 0x3F));
            dst[o++] = (char)(0x80 | (c & 0x3F));
        } else {
            dst[o++] = (char)(0xF0 | (c >> 18));
            dst[o++] = (char)(0x80 | ((c >> 12) & 0x3F));
            dst[o++] = (char)(0x80 | ((c >> 6) & 0x3F));
            dst[o++] = (char)(0x80 | (c & 0x3F));
        }
        i++;
    }
    *pos = i;
    *status = AJP_TEXT_DONE;
    return o;
}

static inline Py_ssize_t ajp_put_text_avx2(char *dst, Py_ssize_t room, PyObject *s) {
    Py_ssize_t pos = 0, o;
    int status;
    if (room < 2) return 0;
    dst[0] = '"';
    o = ajp_utf8_avx2(ajp_text_kind(s), ajp_text_data(s), &pos, ajp_text_length(s), dst + 1, room - 2, &status);
    if (status != AJP_TEXT_DONE) return 0;
    dst[o + 1] = '"';
    return o + 2;
}

#endif /* AJP_BUILD_AVX2 */

/* An exact str value written as "text" to dst, which has room bytes: clean compact ASCII by
   ajp_put_clean_text (word stores, the run copier: inline, cheaper than an encoder call);
   at the avx2 level any other compact text in one encoder call.  Returns the bytes written,
   or 0 to leave the text to the general string writer. */
AJP_ALWAYS_INLINE Py_ssize_t ajp_put_value_text(char *dst, Py_ssize_t room, PyObject *s) {
    if (PyUnicode_IS_COMPACT_ASCII(s)) return ajp_put_clean_text(dst, room, s);
    /* A compact str is always ready (its data follows the object). */
    if (AJP_USE_AVX2 && PyUnicode_IS_COMPACT(s)) return ajp_put_text_avx2(dst, room, s);
    return 0;
}

/* ajp_put_value_text with the ASCII run copier always inline (_put_dict's member values). */
AJP_ALWAYS_INLINE Py_ssize_t ajp_put_value_text_member(char *dst, Py_ssize_t room, PyObject *s) {
    if (PyUnicode_IS_COMPACT_ASCII(s)) return ajp_put_clean_text_inline(dst, room, s);
    /* A compact str is always ready (its data follows the object). */
    if (AJP_USE_AVX2 && PyUnicode_IS_COMPACT(s)) return ajp_put_text_avx2(dst, room, s);
    return 0;
}

#endif /* AJPCORE_CANONICAL_UTF8_H */
