# Included by native/_core_c.pyx (shares its namespace).  Pure twin: ajpcore/_core_py/number_format.py.

# ---------------------------------------------------------------------------
# Number formatting (RFC 8785 §3.2.2.3, ECMA-262 Number::toString; Ryu)
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

    /* x > 0, finite, not an integer below 2**53.  When x = m / 2**k (m odd, 1 <= k <= 22)
       and its exact decimal m * 5**k / 10**k has at most 15 significant digits (0.5,
       0.75, 93.5 ...), that decimal is the shortest and nearest: decimals of at most 15
       significant digits are at least 10**(e-14) apart near x in [10**e, 10**(e+1)),
       while x's rounding interval is under 2.3 * 10**(e-15) wide, so no other one lies in
       it.  m * 5**k is odd, so it has no trailing zero.  Sets *digits and *e10 as
       ajp_shortest does and returns 1; returns 0 to leave x to ajp_shortest. */
    static inline int ajp_short_dyadic(double x, uint64_t *digits, int *e10) {
        static const uint64_t pow5[23] = {
            1ull, 5ull, 25ull, 125ull, 625ull, 3125ull, 15625ull, 78125ull, 390625ull,
            1953125ull, 9765625ull, 48828125ull, 244140625ull, 1220703125ull, 6103515625ull,
            30517578125ull, 152587890625ull, 762939453125ull, 3814697265625ull,
            19073486328125ull, 95367431640625ull, 476837158203125ull, 2384185791015625ull};
        uint64_t bits, m;
        int32_t e2;
        uint32_t be;
        memcpy(&bits, &x, sizeof bits);
        be = (uint32_t)(bits >> 52) & 0x7ff;
        if (be == 0 || be == 0x7ff) return 0;   /* subnormal (or not finite): Ryu */
        m = (bits & ((1ull << 52) - 1)) | (1ull << 52);
        e2 = (int32_t)be - 1075;
    #if defined(__GNUC__) || defined(__clang__)
        {
            int tz = __builtin_ctzll(m);
            m >>= tz;
            e2 += tz;
        }
    #else
        while (!(m & 1)) { m >>= 1; e2++; }
    #endif
        if (e2 >= 0 || e2 < -22) return 0;
        if (m > 999999999999999ull / pow5[-e2]) return 0;
        *digits = m * pow5[-e2];
        *e10 = e2;
        return 1;
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
        if (!ajp_short_dyadic(x, &d, &n)) n = ajp_shortest(x, &d);
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

    #ifndef AJP_ALWAYS_INLINE
    #if defined(__GNUC__) || defined(__clang__)
    #define AJP_ALWAYS_INLINE static inline __attribute__((always_inline))
    #else
    #define AJP_ALWAYS_INLINE static inline
    #endif
    #endif

    /* An exact int of one digit (the usual one) written to dst, which has room for
       `room` bytes: returns the bytes written, or 0 to leave it to _put_int. */
    AJP_ALWAYS_INLINE int ajp_put_small_int(char *dst, Py_ssize_t room, PyObject *v) {
        long long n;
        if (room < 32 || !ajp_compact_long(v, &n)) return 0;
        return ajp_format_i64(n, dst);
    }

    """
    void ajp_set_pow5(int inv, int i, unsigned long long lo, unsigned long long hi)
    int ajp_format_double(double x, char* out) nogil
    int ajp_format_i64(long long v, char* out) nogil
    bint ajp_compact_long(PyObject* v, long long* out) nogil
    int ajp_put_small_int(char* dst, Py_ssize_t room, PyObject* v) nogil


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
    _w_own(w)  # Python code runs (and may collect garbage) from here
    try:
        text = _py_format_int(int.__index__(v), _unlocated).encode('ascii')
    except EncodeError as exc:
        _w_fail(w, exc.reason)
    return _w_put(w, PyBytes_AS_STRING(text), len(text))


cdef inline int _put_integer(Writer* w, object v) except -1:
    """``_put_int`` of an exact int, the usual one-digit int written inline."""
    cdef int k = ajp_put_small_int(w.data + w.length, w.cap - w.length, <PyObject*>v)
    if k:
        w.length += k
        return 0
    return _put_int(w, v)
