"""Strict RFC 3339 timestamps and ECMAScript toISOString output, on both core twins.

Every test here runs once per twin (``core`` switches ``ajpcore.timestamps`` to it), and
the differential tests at the end hold the twins' ``rfc3339_micros`` to one answer.
"""

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ajpcore.errors import TimestampError
from ajpcore.timestamps import format_timestamp, instant_micros, is_timestamp, parse_timestamp, timestamp_micros

UTC = timezone.utc
PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2026-03-05T10:00:00Z", datetime(2026, 3, 5, 10, tzinfo=UTC)),
        ("2026-03-05t10:00:00z", datetime(2026, 3, 5, 10, tzinfo=UTC)),
        ("2026-03-05T10:00:00.5Z", datetime(2026, 3, 5, 10, 0, 0, 500000, tzinfo=UTC)),
        ("2026-03-05T10:00:00.123456789Z", datetime(2026, 3, 5, 10, 0, 0, 123456, tzinfo=UTC)),
        ("2026-03-05T11:30:00+01:30", datetime(2026, 3, 5, 10, tzinfo=UTC)),
        ("2026-03-05T00:00:00-05:00", datetime(2026, 3, 5, 5, tzinfo=UTC)),
        ("2024-02-29T00:00:00Z", datetime(2024, 2, 29, tzinfo=UTC)),
        ("2000-02-29T00:00:00Z", datetime(2000, 2, 29, tzinfo=UTC)),
        ("2016-12-31T23:59:60Z", datetime(2016, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)),  # leap second policy
        ("2016-12-31T15:59:60-08:00", datetime(2016, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)),
    ],
)
def test_parse(core, text, expected):
    assert is_timestamp(text)
    got = parse_timestamp(text)
    assert got == expected and got.tzinfo is not None
    assert timestamp_micros(text) == (expected - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)


@pytest.mark.parametrize(
    "text",
    [
        "2026-03-05T10:00:00", "2026-03-05 10:00:00Z", "2026-03-05T10:00Z", "2026-03-05", "2026-03-05T10:00:00.Z",
        "2026-03-05T10:00:00,5Z", "2026-03-05T10:00:00+0100", "2026-03-05T10:00:00+01", "2026-03-05T10:00:00+24:00",
        "2026-03-05T10:00:00+01:60", "2026-13-05T10:00:00Z", "2026-00-05T10:00:00Z", "2026-02-29T10:00:00Z",
        "1900-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-03-05T24:00:00Z", "2026-03-05T10:60:00Z",
        "2026-03-05T10:00:60Z", "2016-12-31T23:59:61Z", "2016-12-31T23:59:60+01:00", "+2026-03-05T10:00:00Z",
        "2026-03-05T10:00:00Z ", " 2026-03-05T10:00:00Z", "2026-03-05T10:00:00Z\n", "\uff12026-03-05T10:00:00Z",
        "2026-03-05T10:00:00.\u0661Z", "", "now",
    ],
)
def test_refused(core, text):
    assert not is_timestamp(text)
    with pytest.raises(TimestampError):
        parse_timestamp(text)


@pytest.mark.parametrize("value", [None, 1, b"2026-03-05T10:00:00Z", ["2026-03-05T10:00:00Z"]])
def test_non_strings_are_refused(core, value):
    assert not is_timestamp(value)
    with pytest.raises(TimestampError):
        timestamp_micros(value)


def test_years_outside_datetime_parse_to_micros_but_not_datetimes(core):
    assert is_timestamp("0000-01-01T00:00:00Z") and timestamp_micros("0000-01-01T00:00:00Z") < 0
    with pytest.raises(TimestampError):
        parse_timestamp("0000-01-01T00:00:00Z")
    with pytest.raises(TimestampError):
        parse_timestamp("9999-12-31T23:00:00-05:00")


def test_format_like_to_iso_string(core):
    assert format_timestamp(datetime(2026, 3, 5, 10, tzinfo=UTC)) == "2026-03-05T10:00:00.000Z"
    assert format_timestamp(datetime(2026, 3, 5, 11, 0, 0, 123999, tzinfo=timezone(timedelta(hours=1)))) == (
        "2026-03-05T10:00:00.123Z"
    )
    with pytest.raises(TimestampError):
        format_timestamp(datetime(2026, 3, 5))
    with pytest.raises(TimestampError):
        format_timestamp("2026-03-05")  # type: ignore[arg-type]


aware = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.sampled_from(
        [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))]
    )
)


@PROPERTY
@given(aware)
def test_format_then_parse_is_the_instant_to_the_millisecond(core, dt):
    text = format_timestamp(dt)
    assert is_timestamp(text)
    back = parse_timestamp(text)
    assert back == dt.replace(microsecond=dt.microsecond // 1000 * 1000)


@PROPERTY
@given(aware, st.sampled_from(["", ".500000", ".123456"]))
def test_parse_agrees_with_fromisoformat(core, dt, frac):
    offset = dt.isoformat()[-6:]
    text = dt.replace(microsecond=0, tzinfo=None).isoformat() + frac + offset
    assert parse_timestamp(text) == datetime.fromisoformat(text)


@PROPERTY
@given(
    st.integers(0, 9999), st.integers(1, 12), st.integers(1, 31), st.integers(0, 23), st.integers(0, 59),
    st.integers(0, 59), st.sampled_from(["", ".0", ".5", ".999999", ".1234567", ".000001"]),
    st.sampled_from(["Z", "z", "+00:00", "-00:00", "+14:00", "-12:00", "+05:30", "-09:59"]),
    st.sampled_from(["T", "t"]),
)
def test_micros_agree_with_calendar_arithmetic(core, year, month, day, hour, minute, second, frac, zone, sep):
    import calendar

    if day > calendar.monthrange(year or 2000, month)[1] or (year == 0 and month == 2 and day == 29):
        return
    text = "%04d-%02d-%02d%s%02d:%02d:%02d%s%s" % (year, month, day, sep, hour, minute, second, frac, zone)
    offset = 0 if zone in "Zz" else (int(zone[1:3]) * 60 + int(zone[4:6])) * (1 if zone[0] == "+" else -1)
    # calendar.timegm works on the proleptic Gregorian calendar; shift year 0 by 400 years (146097 days).
    shift = 400 if year == 0 else 0
    seconds = calendar.timegm((year + shift, month, day, hour, minute, second, 0, 0, 0)) - shift * 146097 * 86400 // 400
    expected = (seconds - offset * 60) * 1_000_000 + (int((frac[1:] + "000000")[:6]) if frac else 0)
    assert is_timestamp(text)
    assert timestamp_micros(text) == expected


def test_leap_second_only_at_the_last_minute_of_the_utc_day(core):
    assert timestamp_micros("2016-12-31T23:59:60.5Z") == timestamp_micros("2016-12-31T23:59:59.999999Z")
    assert timestamp_micros("2017-01-01T00:59:60+01:00") == timestamp_micros("2016-12-31T23:59:59.999999Z")
    # 23:59:60 UTC of the day before year 0000: still an instant, one microsecond before it.
    assert timestamp_micros("0000-01-01T00:29:60+00:30") == timestamp_micros("0000-01-01T00:00:00Z") - 1
    for text in ("2016-12-31T23:58:60Z", "2016-12-31T23:59:60+00:01", "2017-01-01T00:00:60Z", "2016-12-31T22:59:60Z"):
        assert not is_timestamp(text), text


def test_now_forms_agree(core):
    text = "2026-03-05T10:00:00.25+01:00"
    micros = timestamp_micros(text)
    assert instant_micros(text) == micros
    assert instant_micros(datetime(2026, 3, 5, 9, 0, 0, 250000, tzinfo=UTC)) == micros
    assert instant_micros(micros / 1_000_000) == micros
    with pytest.raises(TimestampError):
        instant_micros(type("S", (str,), {})(text))  # a str subclass is not a timestamp


# -- the twins' parse, held to one answer on hostile text --

_VALID = st.builds(
    "{:04d}-{:02d}-{:02d}{}{:02d}:{:02d}:{:02d}{}{}".format,
    st.integers(0, 9999), st.integers(0, 13), st.integers(0, 32), st.sampled_from("Tt T"),
    st.integers(0, 24), st.integers(0, 60), st.integers(0, 61),
    st.sampled_from(["", ".", ".0", ".5", ".123456", ".1234567", ".000000000001"]),
    st.sampled_from(["Z", "z", "", "+00:00", "-00:00", "+23:59", "-23:59", "+24:00", "+01:60", "+0100", "+01"]),
)
_ALPHABET = st.sampled_from(list("0123456789-:.TtZz+ ") + ["\x00", "\u0661", "\uff10", "\U0001f600", "\xb2"])


@st.composite
def _near_timestamps(draw):
    text = draw(_VALID)
    for _ in range(draw(st.integers(0, 3))):
        i = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "replace", "delete"]))
        c = draw(_ALPHABET)
        if op == "insert":
            text = text[:i] + c + text[i:]
        elif op == "replace":
            text = text[:i] + c + text[i + 1 :]
        else:
            text = text[:i] + text[i + 1 :]
    return text


@settings(max_examples=3000, deadline=None)
@given(st.one_of(_near_timestamps(), st.text(max_size=40)))
def test_twins_parse_alike(twins, text):
    native, pure = twins
    assert native.rfc3339_micros(text) == pure.rfc3339_micros(text)


@pytest.mark.parametrize(
    "value", [None, 1, 1.5, b"2026-03-05T10:00:00Z", bytearray(b"2026-03-05T10:00:00Z"), ["2026-03-05T10:00:00Z"],
              type("S", (str,), {})("2026-03-05T10:00:00Z"), "2026-03-05T10:00:00" + "0" * 100_000 + "Z",
              "2026-03-05T10:00:00." + "9" * 100_000 + "Z"],
    ids=["none", "int", "float", "bytes", "bytearray", "list", "str-subclass", "long-tail", "long-fraction"],
)
def test_twins_agree_on_non_timestamps_and_long_fractions(twins, value):
    native, pure = twins
    assert native.rfc3339_micros(value) == pure.rfc3339_micros(value)


# -- clock_micros: a host's clock reading in its usual forms, one core call --------------------------

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)


def _reading(value):
    """What a clock reading means, computed apart from the core: (datetime arithmetic, ``int()``), or None."""
    if type(value) is datetime:
        return (value - _EPOCH) // _MICRO if value.tzinfo is UTC else None
    if type(value) is float:
        return int(value * 1_000_000) if abs(value * 1_000_000) < 2.0**62 else None
    if type(value) is int:
        return value * 1_000_000 if abs(value) < 2**62 // 10**6 else None
    return None


_READINGS = st.one_of(
    st.datetimes(timezones=st.sampled_from([UTC])),
    st.datetimes(timezones=st.sampled_from([timezone(timedelta(hours=2)), timezone(-timedelta(minutes=30))])),
    st.datetimes(),  # naive: never read here
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-4.7e12, max_value=4.7e12),  # around the 2**62 µs bound
    st.integers(min_value=-(2**63), max_value=2**63),
    st.integers(min_value=4611686018420, max_value=4611686018430),
    st.booleans(),
)


@settings(max_examples=3000, deadline=None)
@given(_READINGS)
def test_twins_read_a_clock_alike_and_as_datetime_arithmetic_does(twins, value):
    native, pure = twins
    got = native.clock_micros(value)
    assert got == pure.clock_micros(value)
    assert got == _reading(value)
    if got is not None:
        assert instant_micros(value) == got  # the reading the full path gives, where the core gives one


@pytest.mark.parametrize("value", [
    datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
    type("Later", (datetime,), {})(2026, 3, 5, tzinfo=UTC), 0.0, -0.0, -1.5, float("nan"), float("inf"),
    4611686018427.387, 4611686018427, -4611686018426, True, "2026-03-05T10:00:00Z", "not a time", None, b"0",
], ids=repr)
def test_twins_read_the_edges_of_a_clock_alike(twins, value):
    native, pure = twins
    assert native.clock_micros(value) == pure.clock_micros(value)
    if type(value) is not str:
        assert native.clock_micros(value) == _reading(value)


def test_every_reading_the_core_declines_is_read_or_refused_as_before(core):
    """The full path still reads what the core leaves to it (another zone, a subclass, a huge number)
    and refuses what is no clock reading."""
    later = type("Later", (datetime,), {})(2026, 3, 5, tzinfo=UTC)
    assert instant_micros(later) == 1_772_668_800_000_000
    assert instant_micros(datetime(2026, 3, 5, 11, tzinfo=timezone(timedelta(hours=1)))) == 1_772_704_800_000_000
    assert instant_micros(10**13) == 10**19
    for bad in (datetime(2026, 3, 5), float("nan"), float("-inf"), True, None, b"0"):
        with pytest.raises(TimestampError):
            instant_micros(bad)
