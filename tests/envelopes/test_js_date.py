"""``ajpcore._js_date.read_date``: ``new Date(value)`` as the reference SDK's runtime (V8) computes it.

Known answers come from ECMA-262 (TimeClip, ToNumber, the Date Time String Format) and
``datetime``; the differential test runs node on a seeded corpus under three time zones.
"""

import json
import os
import random
import shutil
import subprocess
from datetime import datetime, timezone

import pytest

from ajpcore._js_date import DAY_MS, EXACT, INVALID, LOCAL, MAX_TIME_MS, UNKNOWN, read_date


def utc_ms(*fields):
    return int(datetime(*fields, tzinfo=timezone.utc).timestamp() * 1000)


JAN_2020 = utc_ms(2020, 1, 1)


@pytest.mark.parametrize(
    "value, ms",
    [
        ("2020-01-01", JAN_2020),  # a date alone is UTC (ECMA-262 21.4.3.2)
        ("2020", JAN_2020),
        ("2020-01", JAN_2020),
        ("2020-01-01T00:00Z", JAN_2020),
        ("2020-01-01t00:00:00z", JAN_2020),
        ("2020-01-01T00:00+01:00", JAN_2020 - 3_600_000),
        ("2020-01-01T00:00+0100", JAN_2020 - 3_600_000),
        ("2020-01-01T00:00:00.5Z", JAN_2020 + 500),
        ("2020-01-01T00:00:00.1239Z", JAN_2020 + 123),  # truncated, never rounded
        ("2020-01-01T00:00:00.0123456789Z", JAN_2020 + 123),  # V8 quirk: 9 significant digits, then scaled
        ("2020-01-01T00:00:00.000000000123Z", JAN_2020),
        ("2020-01-01T24:00Z", utc_ms(2020, 1, 2)),
        ("2020-02-30", utc_ms(2020, 3, 1)),  # V8 checks day <= 31 only, then rolls over
        ("+275760-09-13T00:00:00Z", MAX_TIME_MS),
        ("-000001-01-01T00:00Z", utc_ms(1, 1, 1) - 366 * DAY_MS - 365 * DAY_MS),
        (1577836800000, JAN_2020),
        (1577836800000.9, JAN_2020),  # truncated toward zero
        (-0.5, 0),
        (True, 1),
    ],
)
def test_exact_readings(value, ms):
    assert read_date(value) == (EXACT, ms)


@pytest.mark.parametrize(
    "value", ["+275760-09-13T00:00:00.001Z", "-271821-04-20T00:00:00+01:00", 8_640_000_000_000_001, 1e300]
)
def test_time_clip_is_invalid_date(value):
    assert read_date(value) == (INVALID, None)


@pytest.mark.parametrize(
    "value, naive",
    [("2020-01-01T00:00", JAN_2020), ("2020-01-01t10:00:00.25", JAN_2020 + 36_000_250)],
)
def test_date_time_without_offset_is_local_time(value, naive):
    assert read_date(value) == (LOCAL, naive)


@pytest.mark.parametrize(
    "value",
    [
        "Jan 1 2020", "2020/01/01", "2020-1-1", " 2020-01-01", "2020-01-01 ", "2020-01-01 00:00:00Z",
        "2020-01-01Z",  # V8's legacy parser, not its ISO path: 0000-01-01Z reads as 2000
        "-000000-01-01", "2020-13-01", "2020-01-32", "2020-01-01T25:00Z", "2020-01-01T24:00:00.001Z",
        "2020-01-01T00:00+24:00", "1577836800000", "", [2020], {"t": 1}, "+275760-09-13T00:00",
    ],
)
def test_anything_else_is_unknown(value):
    assert read_date(value) == (UNKNOWN, None)


# -- against node ------------------------------------------------------------------------

NODE_DATES = r"""
const xs = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(xs.map((x) => {
  const t = new Date(x).getTime();
  return Number.isNaN(t) ? null : t;
})));
"""

# Fixed-offset zones at both ends of the range: a local reading moves by exactly the offset.
ZONES = {"UTC": 0, "Etc/GMT-14": -14 * 3_600_000, "Etc/GMT+12": 12 * 3_600_000}


def date_corpus(seed, count):
    """Strings drawn from the ES Date Time String Format with out-of-range fields, then mutated."""
    r = random.Random(seed)

    def field(width, hi, *edges):
        return str(r.choice(edges + (r.randint(0, hi),))).zfill(width)

    out = []
    for _ in range(count):
        s = r.choice([field(4, 9999, 0, 1970, 2020, 9999), r.choice("+-") + field(6, 999999, 0, 271821, 275760)])
        if r.random() < 0.8:
            s += "-" + field(2, 13, 0, 1, 2, 12, 13)
            if r.random() < 0.8:
                s += "-" + field(2, 32, 0, 1, 28, 29, 30, 31, 32)
        k = r.random()
        if k < 0.15:
            s += r.choice("Zz")
        elif k < 0.9:
            s += r.choice("Tt") + field(2, 25, 0, 23, 24, 25) + ":" + field(2, 60, 0, 59, 60)
            if r.random() < 0.7:
                s += ":" + field(2, 60, 0, 59, 60)
                if r.random() < 0.6:
                    s += "." + "".join(r.choice("0000000123456789") for _ in range(r.randint(1, 14)))
            z = r.random()
            if z < 0.4:
                s += r.choice("Zz")
            elif z < 0.8:
                s += r.choice("+-") + field(2, 24, 0, 23, 24) + r.choice([":", ""]) + field(2, 60, 0, 59, 60)
        if r.random() < 0.15:
            i = r.randint(0, len(s))
            s = s[:i] + r.choice([" ", "0", ":", "-", ".", "T", "Z", ""]) + s[i + 1:]
        out.append(s)
    return out


def test_readings_agree_with_node():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the cross-check against V8's Date needs it")
    corpus = date_corpus(2026, 4000) + [0.5, -1.5, 8.64e15, 8.64e15 + 2, True, 1577836800000]
    answers = {}
    for zone in ZONES:
        env = dict(os.environ, TZ=zone)
        run = subprocess.run([node, "-e", NODE_DATES], input=json.dumps(corpus).encode(), env=env,
                             capture_output=True, check=True)
        answers[zone] = json.loads(run.stdout)
    kinds = set()
    for i, value in enumerate(corpus):
        reading = read_date(value)
        kinds.add(reading.kind)
        got = {zone: answers[zone][i] for zone in ZONES}
        if reading.kind == EXACT:
            assert set(got.values()) == {reading.ms}, value
        elif reading.kind == INVALID:
            assert set(got.values()) == {None}, value
        elif reading.kind == LOCAL:
            assert got == {zone: reading.ms + shift for zone, shift in ZONES.items()}, value
    assert kinds == {EXACT, INVALID, LOCAL, UNKNOWN}  # the corpus reaches every kind
