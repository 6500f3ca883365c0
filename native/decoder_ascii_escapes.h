/* The decoder's ASCII strings with escapes, in one pass: a string whose first stop (after its
   plain ASCII prefix) is a backslash is read once, its plain runs copied as they are found and
   its escapes decoded, into a bounded local buffer; the str is made at the closing quote.  Only
   a string that turns out to be ASCII with escapes of ASCII characters is decided here: at the
   first anything else (a non-ASCII byte, a control character, an escape of a wider or invalid
   character, the document's end, AJPCORE_ESC_CAP characters after the first escape) the pass
   stops and the two steps of ajpcore_text_from (decoder_utf8_write.h) go on from there, told
   what the pass learned (the body so far is well formed; how many bytes its escapes saved), so
   every refusal stays theirs and nothing is read twice by the checks.  Included once, by
   decoder_utf8_write.h; everything is static. */
#ifndef AJPCORE_DECODER_ASCII_ESCAPES_H
#define AJPCORE_DECODER_ASCII_ESCAPES_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "simd.h"
#include "decoder_scan.h"
#include "decoder_str.h"
#include "decoder_utf8.h"

/* Characters after the first escape a string may have to be decided here (the local buffer). */
#define AJPCORE_ESC_CAP 4096

/* The escape whose backslash is p[*i], when it stands for an ASCII character (a two-character
   escape, or \u0000..\u007F): that character, with *i just after the escape; else -1 (nothing
   changed: the two steps decide). */
static inline int ajpcore_esc_ascii(const unsigned char *p, Py_ssize_t *i, Py_ssize_t n) {
    Py_ssize_t j = *i;
    unsigned int e, hi;
    int lo;
    if (j + 1 >= n)
        return -1;
    e = p[j + 1];
    if (e != 0x75) {
        if (!ajpcore_esc_short[e])
            return -1;
        *i = j + 2;
        return ajpcore_esc_short[e];
    }
    if (j + 6 > n || p[j + 2] != 0x30 || p[j + 3] != 0x30)
        return -1;
    hi = p[j + 4] - 0x30u;  /* 0..7: below U+0080 */
    lo = ajpcore_hex_digit(p[j + 5]);
    if (hi > 7u || lo < 0)
        return -1;
    *i = j + 6;
    return (int)((hi << 4) | (unsigned int)lo);
}

/* One pass over the string from p[*i], a backslash: its characters from there on written to
   buf (room for AJPCORE_ESC_CAP), *count of them.  1 when the string ends there (*i at its
   closing quote); else 0, with *i where the pass stopped: p[i:*i) was ASCII text and escapes
   of ASCII characters, well formed, the *count characters in buf.
   STEP(i, o) copies a block of plain bytes p[i:i+W) to buf[o:o+W) and sets the local k to the
   index of its first stop (W when none); the function takes that step while the document and
   buf both hold W more bytes, then goes byte by byte. */
#define AJPCORE_ESC_ONE_PASS(NAME, ATTR, W, STEP)                                                    \
static ATTR int NAME(const unsigned char *p, Py_ssize_t *at, Py_ssize_t n, unsigned char *buf,      \
                     Py_ssize_t *count) {                                                           \
    Py_ssize_t o = 0, i = *at;                                                                      \
    for (;;) {                                                                                      \
        unsigned int c = p[i];  /* i < n: a stop */                                                 \
        int ch;                                                                                     \
        if (c != 0x5C || o >= AJPCORE_ESC_CAP)                                                      \
            break;  /* the closing quote, or the two steps go on from here */                       \
        ch = ajpcore_esc_ascii(p, &i, n);                                                           \
        if (ch < 0)                                                                                 \
            break;                                                                                  \
        buf[o++] = (unsigned char)ch;                                                               \
        for (;;) {                                                                                  \
            if (i + (W) <= n && o + (W) <= AJPCORE_ESC_CAP) {                                       \
                unsigned int k;                                                                     \
                STEP(i, o);                                                                         \
                i += k;                                                                             \
                o += k;                                                                             \
                if (k < (W))                                                                        \
                    break;                                                                          \
                continue;                                                                           \
            }                                                                                       \
            if (i >= n || o >= AJPCORE_ESC_CAP)                                                     \
                goto out;                                                                           \
            c = p[i];                                                                               \
            if (c < 0x20 || c >= 0x80 || c == 0x22 || c == 0x5C)                                    \
                break;                                                                              \
            buf[o++] = (unsigned char)c;                                                            \
            i++;                                                                                    \
        }                                                                                           \
    }                                                                                               \
out:                                                                                                \
    *at = i;                                                                                        \
    *count = o;                                                                                     \
    return i < n && p[i] == 0x22;                                                                   \
}

#if AJP_BUILD_SSE2
#define AJPCORE_ESC_STEP(i, o)                                                                      \
    do {                                                                                            \
        unsigned int m_ = ajpcore_stops16(p + (i));                                                 \
        memcpy(buf + (o), p + (i), 16);                                                             \
        k = m_ ? (unsigned int)__builtin_ctz(m_) : 16u;                                             \
    } while (0)
AJPCORE_ESC_ONE_PASS(ajpcore_esc_one_pass, , 16, AJPCORE_ESC_STEP)
#else
/* The word test of ajpcore_scan_plain: its lowest flagged byte is exact. */
#define AJPCORE_ESC_STEP(i, o)                                                                      \
    do {                                                                                            \
        const uint64_t ones_ = 0x0101010101010101ULL;                                               \
        uint64_t w_, q_, b_, m_;                                                                    \
        memcpy(&w_, p + (i), 8);                                                                    \
        memcpy(buf + (o), &w_, 8);                                                                  \
        q_ = w_ ^ (ones_ * 0x22);                                                                   \
        b_ = w_ ^ (ones_ * 0x5C);                                                                   \
        m_ = (w_ | ((w_ - ones_ * 0x20) & ~w_) | ((q_ - ones_) & ~q_) | ((b_ - ones_) & ~b_))       \
             & 0x8080808080808080ULL;                                                               \
        k = m_ ? (unsigned int)AJPCORE_FIRST_FLAGGED(m_) : 8u;                                      \
    } while (0)
AJPCORE_ESC_ONE_PASS(ajpcore_esc_one_pass, , 8, AJPCORE_ESC_STEP)
#endif

#if AJP_BUILD_AVX2
#define AJPCORE_ESC_STEP_AVX2(i, o)                                                                 \
    do {                                                                                            \
        __m256i v_ = _mm256_loadu_si256((const __m256i *)(p + (i)));                                \
        uint32_t m_ = (uint32_t)_mm256_movemask_epi8(ajpcore_u8_plain_stops(v_));                   \
        _mm256_storeu_si256((__m256i *)(void *)(buf + (o)), v_);                                    \
        k = m_ ? (unsigned int)__builtin_ctz(m_) : 32u;                                             \
    } while (0)
AJPCORE_ESC_ONE_PASS(ajpcore_esc_one_pass_avx2, AJP_TARGET_AVX2, 32, AJPCORE_ESC_STEP_AVX2)
#endif

#endif /* AJPCORE_DECODER_ASCII_ESCAPES_H */
