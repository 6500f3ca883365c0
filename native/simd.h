/* The SIMD level of the native core: which vector paths the scanners, transcoders and copiers
   take.  Included first by the native headers; everything is static.

   Levels, ordered:
   - scalar: bytes and 64-bit words (SWAR) only.  The one level of a build without SSE2 (not
             x86-64: arm64 and the rest) or with -DAJPCORE_NO_SIMD.
   - sse2:   16-byte vectors, compiled in wherever the compiler targets SSE2 (every x86-64
             build): a compile-time choice, so the many small scans that use them carry no
             run-time test.
   - avx2:   32-byte vectors for the long loops (text transcoding, long runs), compiled per
             function with __attribute__((target)) so the rest of the extension stays baseline
             x86-64, and taken only when ajp_simd says so: picked at import (native/_core_c.pyx,
             _simd_init) when the CPU has AVX2, BMI1, BMI2 and POPCNT and the OS saves the
             YMM registers (what __builtin_cpu_supports checks; with MSVC, __cpuid and _xgetbv), unless AJPCORE_SIMD=sse2 keeps
             the sse2 paths.  Each AVX2 path is chosen once per call of a long loop, never per
             byte, and falls back to the sse2 code, which therefore stays tested by forcing it. */
#ifndef AJPCORE_SIMD_H
#define AJPCORE_SIMD_H

#define AJP_SIMD_SCALAR 0
#define AJP_SIMD_SSE2 1
#define AJP_SIMD_AVX2 2

/* SSE2 is where the compiler targets it: GCC and clang say so with __SSE2__, MSVC for x64 does not
   (x64 always has it).  Nothing x86 is compiled anywhere else (arm64 builds the scalar level). */
#if (defined(__SSE2__) || defined(_M_X64)) && !defined(AJPCORE_NO_SIMD)
#define AJP_BUILD_SSE2 1
#include <emmintrin.h>
#else
#define AJP_BUILD_SSE2 0
#endif

#if AJP_BUILD_SSE2 && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define AJP_BUILD_AVX2 1
#include <immintrin.h>
/* A function compiled for AVX2 and the bit instructions every CPU ajp_simd_best accepts has. */
#define AJP_TARGET_AVX2 __attribute__((target("avx2,bmi,bmi2,popcnt")))
#elif AJP_BUILD_SSE2 && defined(_M_X64) && defined(_MSC_VER) && !defined(__clang__)
#define AJP_BUILD_AVX2 1
#include <immintrin.h>
/* MSVC compiles AVX2 intrinsics in any function: no per-function target to ask for. */
#define AJP_TARGET_AVX2
#else
#define AJP_BUILD_AVX2 0
#endif

/* MSVC has none of GCC's bit builtins the native headers use: the same operations from its
   intrinsics, under GCC's names (only ever defined for MSVC proper, never for clang-cl).  Each
   takes a nonzero argument where GCC's does (ctz, clz). */
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#include <stdint.h>
static __forceinline int ajp_msvc_ctz(unsigned long x) { unsigned long i; _BitScanForward(&i, x); return (int)i; }
static __forceinline int ajp_msvc_ctzll(unsigned long long x) { unsigned long i; _BitScanForward64(&i, x); return (int)i; }
static __forceinline int ajp_msvc_clzll(unsigned long long x) { unsigned long i; _BitScanReverse64(&i, x); return 63 - (int)i; }
static __forceinline int ajp_msvc_popcount(unsigned int x) {
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    return (int)((((x + (x >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24);
}
#define __builtin_ctz(x) ajp_msvc_ctz((unsigned long)(x))
#define __builtin_ctzll(x) ajp_msvc_ctzll((unsigned long long)(x))
#define __builtin_clzll(x) ajp_msvc_clzll((unsigned long long)(x))
#define __builtin_popcount(x) ajp_msvc_popcount((unsigned int)(x))
#define __builtin_bswap32(x) _byteswap_ulong(x)
#define __builtin_bswap64(x) _byteswap_uint64(x)
#define __builtin_prefetch(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
#endif

/* A variable aligned to 32 bytes (the avx2 constants, read with aligned loads), written before
   the declaration: GCC and clang take the attribute there, and MSVC only there. */
#if defined(_MSC_VER) && !defined(__clang__)
#define AJP_ALIGN32 __declspec(align(32))
#else
#define AJP_ALIGN32 __attribute__((aligned(32)))
#endif

/* A static function the compiler must inline wherever it is called (where a call would save and
   restore the registers of a hot loop, or where each caller needs its own specialised copy); the
   one spelling of the attribute for the native core's headers. */
#if defined(__GNUC__) || defined(__clang__)
#define AJP_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define AJP_ALWAYS_INLINE static inline
#endif

/* The level in use.  Set once by ajp_simd_set while the module is imported, before any other
   of its functions can run; only read afterwards. */
static int ajp_simd = AJP_BUILD_SSE2 ? AJP_SIMD_SSE2 : AJP_SIMD_SCALAR;

/* The lowest and the best level this build can run on this CPU. */
static int ajp_simd_lowest(void) { return AJP_BUILD_SSE2 ? AJP_SIMD_SSE2 : AJP_SIMD_SCALAR; }

static int ajp_simd_best(void) {
#if AJP_BUILD_AVX2 && defined(_MSC_VER) && !defined(__clang__)
    /* What __builtin_cpu_supports checks, asked of the CPU with MSVC's intrinsics: leaf 1 ECX
       POPCNT (23), OSXSAVE (27), AVX (28); the OS saves XMM and YMM (XCR0 bits 1, 2); leaf 7
       EBX BMI1 (3), AVX2 (5), BMI2 (8). */
    int r[4];
    __cpuid(r, 0);
    if (r[0] >= 7) {
        __cpuid(r, 1);
        if ((r[2] & (1 << 23)) && (r[2] & (1 << 27)) && (r[2] & (1 << 28)) && (_xgetbv(0) & 6) == 6) {
            __cpuidex(r, 7, 0);
            if ((r[1] & (1 << 3)) && (r[1] & (1 << 5)) && (r[1] & (1 << 8)))
                return AJP_SIMD_AVX2;
        }
    }
#elif AJP_BUILD_AVX2
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2")
        && __builtin_cpu_supports("popcnt"))
        return AJP_SIMD_AVX2;
#endif
    return ajp_simd_lowest();
}

static void ajp_simd_set(int level) { ajp_simd = level; }

/* Whether the AVX2 paths run: test it once before a long loop, never inside one. */
#define AJP_USE_AVX2 (AJP_BUILD_AVX2 && ajp_simd >= AJP_SIMD_AVX2)

#endif /* AJPCORE_SIMD_H */
