# Included by native/_core_c.pyx (shares its namespace).  Pure twin: ajpcore/_core_py/rfc3339.py.

# ---------------------------------------------------------------------------
# RFC 3339 date-time (section 5.6) to microseconds since 1970-01-01T00:00:00Z
# ---------------------------------------------------------------------------

from cpython.datetime cimport (
    PyDateTime_DATE_GET_HOUR, PyDateTime_DATE_GET_MICROSECOND, PyDateTime_DATE_GET_MINUTE,
    PyDateTime_DATE_GET_SECOND, PyDateTime_DATE_GET_TZINFO, PyDateTime_GET_DAY, PyDateTime_GET_MONTH,
    PyDateTime_GET_YEAR,
)
from datetime import datetime as _DATETIME, timezone as _TIMEZONE

cdef object _UTC = _TIMEZONE.utc
cdef double _CLOCK_LIMIT = 4611686018427387904.0  # 2**62 µs (146,000 years): a clock reading past it is not one
cdef long long _CLOCK_SECONDS = 4611686018427  # 2**62 // 10**6: whole seconds under that bound

cdef extern from *:
    """
    /* Digits s[0..n) (ASCII '0'-'9' only) as a number, or -1. */
    static int ajp_rfc3339_digits(const unsigned char *s, int n) {
        int v = 0, i;
        for (i = 0; i < n; i++) {
            unsigned d = (unsigned)s[i] - '0';
            if (d > 9) return -1;
            v = v * 10 + (int)d;
        }
        return v;
    }

    /* Proleptic Gregorian day count relative to 1970-01-01 (H. Hinnant's days_from_civil). */
    static long long ajp_days_from_civil(long long y, int m, int d) {
        long long era, yoe, doy, doe;
        y -= m <= 2;
        era = (y >= 0 ? y : y - 399) / 400;
        yoe = y - era * 400;
        doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
    }

    /* The instant of s[0..n) in microseconds into *out; 0 if it is not a strict RFC 3339
       date-time (the pure twin's pattern and range checks, character for character). */
    static int ajp_rfc3339_parse(const unsigned char *s, Py_ssize_t n, long long *out) {
        static const int month_days[13] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        int year, month, day, hour, minute, second, limit, offset = 0, micros = 0, digits = 0;
        Py_ssize_t i = 19;
        long long minutes;
        if (n < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't')
            || s[13] != ':' || s[16] != ':')
            return 0;
        year = ajp_rfc3339_digits(s, 4);
        month = ajp_rfc3339_digits(s + 5, 2);
        day = ajp_rfc3339_digits(s + 8, 2);
        hour = ajp_rfc3339_digits(s + 11, 2);
        minute = ajp_rfc3339_digits(s + 14, 2);
        second = ajp_rfc3339_digits(s + 17, 2);
        if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23
            || minute < 0 || minute > 59 || second < 0 || second > 60)
            return 0;
        if (s[i] == '.') {
            i++;
            while (i < n && (unsigned)s[i] - '0' <= 9) {
                if (digits < 6) micros = micros * 10 + (s[i] - '0');
                digits++;
                i++;
            }
            if (digits == 0) return 0;
            for (; digits < 6; digits++) micros *= 10;
        }
        if (i == n - 1 && (s[i] == 'Z' || s[i] == 'z')) {
            offset = 0;
        } else if (i == n - 6 && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
            int oh = ajp_rfc3339_digits(s + i + 1, 2), om = ajp_rfc3339_digits(s + i + 4, 2);
            if (oh < 0 || oh > 23 || om < 0 || om > 59) return 0;
            offset = (oh * 60 + om) * (s[i] == '+' ? 1 : -1);
        } else {
            return 0;
        }
        limit = month_days[month];
        if (month == 2 && year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) limit = 29;
        if (day > limit) return 0;
        minutes = (long long)hour * 60 + minute - offset;
        if (second == 60) {
            /* RFC 3339 5.7: a leap second is 23:59:60 UTC; it reads as the day's last microsecond. */
            if (((minutes % 1440) + 1440) % 1440 != 1439) return 0;
            second = 59;
            micros = 999999;
        }
        *out = ajp_days_from_civil(year, month, day) * 86400000000LL
               + (minutes * 60 + second) * 1000000LL + micros;
        return 1;
    }
    """
    bint ajp_rfc3339_parse(const unsigned char* s, Py_ssize_t n, long long* out) noexcept
    long long ajp_days_from_civil(long long y, int m, int d) noexcept


def rfc3339_micros(text):
    """Microseconds since 1970-01-01T00:00:00Z of a strict RFC 3339 date-time, or None
    (see ajpcore._core_py.rfc3339_micros)."""
    return _rfc3339_micros(text)


cdef object _rfc3339_micros(object text):
    cdef long long micros
    if not PyUnicode_CheckExact(text):
        return None
    ajp_unicode_ready(text)
    # Every character of the form is ASCII, so an ASCII str's data is its bytes.
    if not PyUnicode_IS_ASCII(text):
        return None
    if not ajp_rfc3339_parse(<const unsigned char*>PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), &micros):
        return None
    return PyLong_FromLongLong(micros)


def clock_micros(now):
    """Microseconds since 1970-01-01T00:00:00Z of a host's clock reading in its usual forms, or None
    (see ajpcore._core_py.rfc3339.clock_micros)."""
    cdef double product
    cdef long long whole
    cdef int overflow
    if PyUnicode_CheckExact(now):
        return _rfc3339_micros(now)
    if type(now) is _DATETIME:
        if <object>PyDateTime_DATE_GET_TZINFO(now) is not _UTC:
            return None
        return PyLong_FromLongLong(
            ajp_days_from_civil(PyDateTime_GET_YEAR(now), PyDateTime_GET_MONTH(now), PyDateTime_GET_DAY(now))
            * 86400000000LL
            + ((PyDateTime_DATE_GET_HOUR(now) * 60LL + PyDateTime_DATE_GET_MINUTE(now)) * 60
               + PyDateTime_DATE_GET_SECOND(now)) * 1000000LL
            + PyDateTime_DATE_GET_MICROSECOND(now))
    if PyFloat_CheckExact(now):
        product = PyFloat_AS_DOUBLE(now) * 1000000.0
        if not -_CLOCK_LIMIT < product < _CLOCK_LIMIT:  # NaN fails both
            return None
        return PyLong_FromLongLong(<long long>product)  # truncated toward zero, as int() does
    if PyLong_CheckExact(now):
        whole = PyLong_AsLongLongAndOverflow(now, &overflow)
        if overflow or not -_CLOCK_SECONDS < whole < _CLOCK_SECONDS:
            return None
        return PyLong_FromLongLong(whole * 1000000)
    return None
