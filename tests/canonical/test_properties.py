"""RFC 8785 canonical JSON, property-based: twin parity, round trips, hostile values, subclasses, callbacks.

Values come from the public strategy ``ajpcore.strategies.json_values``.
"""

import collections
import enum
import math
from decimal import Decimal
from typing import NamedTuple

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ajpcore import EncodeError
from ajpcore._core_py import MAX_DEPTH
from ajpcore.strategies import json_floats, json_strings, json_values

# ``impl`` is stateless, so sharing it across hypothesis examples is safe.
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def outcome(twin, value):
    """What a twin makes of ``value``: ("bytes", output) or ("error", class, message)."""
    try:
        return ("bytes", twin.canonicalize(value))
    except Exception as exc:  # noqa: BLE001 - the class is part of the comparison
        return ("error", type(exc), str(exc))


def streamed(twin, value, chunk_size):
    chunks = []
    total = twin.canonicalize_into(value, chunks.append, chunk_size=chunk_size)
    assert all(0 < len(c) <= chunk_size for c in chunks)
    data = b"".join(chunks)
    assert total == len(data)
    return data


def as_binary64(value):
    """``value`` with every number replaced by ("number", the binary64 it stands for).

    This is exactly what survives a JCS round trip: JSON has one number type, so
    ``5.0`` comes back as ``5``, ints beyond 2**53 come back as the double they
    stand for (orjson reads them as ``float`` past 64 bits), and ``-0.0`` as ``0``
    (equal under ``==``; RFC 8785 §3.2.2.3 writes no sign).  Tagging keeps
    ``True`` apart from ``1``.  Keys, strings, bools, None and nesting compare exactly.
    """
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return ("number", float(value))
    if isinstance(value, (list, tuple)):
        return [as_binary64(v) for v in value]
    assert isinstance(value, dict)
    return {k: as_binary64(v) for k, v in value.items()}


# -- parity and round trips ---------------------------------------------------


@PROPERTY
@given(value=json_values())
def test_twins_write_identical_bytes(twins, value):
    native, pure = twins
    out = native.canonicalize(value)
    assert pure.canonicalize(value) == out
    assert streamed(native, value, 7) == out
    assert streamed(pure, value, 7) == out


@PROPERTY
@given(value=json_values(), pad=st.integers(0, 5000), copies=st.integers(1, 40), chunk_size=st.integers(1, 9000))
def test_twins_agree_across_buffer_boundaries(twins, value, pad, copies, chunk_size):
    # Large enough to leave the native twin's 4 KiB stack buffer and grow, with every
    # value landing at a different offset of the buffer or of a streamed chunk.
    native, pure = twins
    doc = ["x" * pad, [value] * copies, {"tail": value}]
    out = pure.canonicalize(doc)
    assert native.canonicalize(doc) == out
    assert streamed(native, doc, chunk_size) == out
    assert streamed(pure, doc, chunk_size) == out


@PROPERTY
@given(value=json_values())
def test_round_trip_through_orjson(impl, value):
    out = impl.canonicalize(value)
    assert as_binary64(orjson.loads(out)) == as_binary64(value)


@PROPERTY
@given(value=json_values())
def test_canonical_form_is_a_fixed_point(impl, value):
    out = impl.canonicalize(value)
    assert impl.canonicalize(orjson.loads(out)) == out


@PROPERTY
@given(x=json_floats)
def test_every_double_round_trips_exactly(twins, x):
    native, pure = twins
    out = native.canonicalize(x)
    assert pure.canonicalize(x) == out
    assert float(out) == x  # also the -0.0 case: written "0", equal to -0.0


@PROPERTY
@given(keys=st.lists(json_strings, max_size=60, unique=True))
def test_members_sort_by_utf16_code_units(impl, keys):
    value = {k: i for i, k in enumerate(keys)}
    out = orjson.loads(impl.canonicalize(value))
    assert list(out) == sorted(keys, key=lambda k: k.encode("utf-16-be"))


latin1_names = st.text(st.sampled_from("ab~\x00\x7f\xe9\xff"), max_size=12) | st.text(st.characters(max_codepoint=0xFF), max_size=20)


@PROPERTY
@given(keys=st.lists(latin1_names, max_size=30, unique=True))
def test_latin1_members_sort_as_bytes(impl, keys):
    # The native twin sorts Latin-1 names by an 8-byte prefix first: shared prefixes,
    # NULs and lengths around 4 and 8 are where that could go wrong.
    value = {k: i for i, k in enumerate(keys)}
    out = orjson.loads(impl.canonicalize(value))
    assert list(out) == sorted(keys, key=lambda k: k.encode("utf-16-be"))


@PROPERTY
@given(text=st.text(st.sampled_from('ab"\\\x00\x1f\x7f \xe9\u2028\U0001F600'), max_size=70)
       | st.text(st.sampled_from('abc"\\\n'), max_size=70))
def test_twins_escape_strings_alike(twins, text):
    native, pure = twins
    out = pure.canonicalize(text)
    assert native.canonicalize(text) == out
    assert native.canonicalize({text: text}) == pure.canonicalize({text: text})
    assert streamed(native, [text, text], 5) == pure.canonicalize([text, text])
    assert orjson.loads(out) == text


mixed_text = st.lists(
    st.one_of(
        st.text(st.sampled_from("abcdefgh XYZ0123456789"), max_size=40),
        st.sampled_from(['"', "\\", "\n", "\x00", "\x7f", "\xe9", "\u6771\u4eac", "\u0434", "\U0001F680", "\u2028"]),
    ),
    max_size=25,
).map("".join)


@PROPERTY
@given(text=mixed_text, chunk_size=st.integers(1, 64))
def test_twins_agree_on_ascii_runs_inside_wide_strings(twins, text, chunk_size):
    # Long ASCII runs between non-Latin-1 characters take the native twin's word-wise copy.
    native, pure = twins
    out = pure.canonicalize([text, {text: text}])
    assert native.canonicalize([text, {text: text}]) == out
    assert streamed(native, [text, {text: text}], chunk_size) == out


# -- hostile values -------------------------------------------------------------


def test_twins_share_the_depth_limit(twins):
    assert twins[0].MAX_DEPTH == twins[1].MAX_DEPTH == MAX_DEPTH


def _deep(n):
    v = []
    for _ in range(n):
        v = [v]
    return v


def _not_a_double(x):
    # Beyond 2**53 every double is an even int, and ECMAScript spells it with an even
    # last digit or trailing zeros, so the odd neighbour is refused by the int rule.
    return int(x) + 1


hostile_leaves = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, -math.nan]),
    st.tuples(json_strings, st.characters(categories=["Cs"]), json_strings).map("".join),
    st.tuples(json_strings, st.characters(categories=["Cs"])).map(lambda p: {p[0] + p[1]: 1}),
    st.one_of(st.integers(), st.none(), st.booleans(), json_floats, st.binary(max_size=3), st.tuples(st.integers()))
    .map(lambda k: {"ok": 1, k: 2}),
    st.sampled_from([set(), frozenset([1]), b"x", bytearray(b"y"), object, complex(1, 2), Decimal("1.5"), range(3)]),
    st.floats(min_value=2.0**53, allow_infinity=False).map(_not_a_double).flatmap(lambda n: st.sampled_from([n, -n])),
    st.integers(min_value=2**1024, max_value=2**1100).flatmap(lambda n: st.sampled_from([n, -n])),
    st.builds(_deep, st.integers(MAX_DEPTH, MAX_DEPTH + 3)),
)


@st.composite
def hostile_documents(draw):
    """A JSON value with one hostile value somewhere inside, among valid siblings."""
    v = draw(hostile_leaves)
    for _ in range(draw(st.integers(0, 4))):
        siblings = draw(st.lists(json_values(max_leaves=4), max_size=3))
        if draw(st.booleans()):
            siblings.insert(draw(st.integers(0, len(siblings))), v)
            v = siblings if draw(st.booleans()) else tuple(siblings)
        else:
            names = draw(st.lists(json_strings, min_size=len(siblings) + 1, max_size=len(siblings) + 1, unique=True))
            parent = dict(zip(names[1:], siblings))
            parent[names[0]] = v
            v = parent
    return v


@PROPERTY
@given(value=hostile_documents())
def test_hostile_values_raise_the_same_encode_error(twins, value):
    native, pure = twins
    got = outcome(native, value)
    assert got[0] == "error" and got[1] is EncodeError, got
    assert outcome(pure, value) == got
    for twin in twins:
        with pytest.raises(EncodeError) as info:
            twin.canonicalize_into(value, lambda chunk: None, chunk_size=5)
        assert str(info.value) == got[2]


@PROPERTY
@given(value=st.recursive(
    st.one_of(json_values(max_leaves=3), hostile_leaves),
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(json_strings, children, max_size=4)),
    max_leaves=12,
))
def test_twins_agree_on_mixed_documents(twins, value):
    native, pure = twins
    assert outcome(native, value) == outcome(pure, value)


# -- subclasses of the JSON types ---------------------------------------------


class Level(enum.IntEnum):
    LOW = 1
    HUGE = 2**64


class Colour(str, enum.Enum):
    RED = "rouge"


class Sly(str):
    """Overrides everything an encoder might be tempted to call."""

    def __str__(self):
        return "lie"

    def __len__(self):
        return 0

    def __lt__(self, other):
        return not str.__lt__(self, other)

    def __getitem__(self, i):
        return "lie"

    def encode(self, *args):
        return b"lie"

    def isascii(self):
        return False


class SlyFloat(float):
    def __float__(self):
        return 0.0

    def __repr__(self):
        return "lie"


class SlyInt(int):
    def __int__(self):
        return 0

    def __index__(self):
        return 0


class SlyList(list):
    def __len__(self):
        return 0

    def __iter__(self):
        return iter(())

    def __getitem__(self, i):
        return "lie"


class SlyDict(dict):
    def keys(self):
        return []

    def items(self):
        return []

    def __len__(self):
        return 0

    def __iter__(self):
        return iter(())

    def __getitem__(self, k):
        return "lie"


class Point(NamedTuple):
    x: float
    y: float


SUBCLASS_CASES = [
    (Level.LOW, 1),
    ([Level.HUGE], [2**64]),
    (Colour.RED, "rouge"),
    ({Colour.RED: 1, "a": 2}, {"rouge": 1, "a": 2}),
    (Sly("\u00e9t\u00e9 \U0001F600"), "\u00e9t\u00e9 \U0001F600"),
    ({Sly("b"): 1, Sly("a"): 2, "\U0001F600": 3, "\uff61": 4}, {"b": 1, "a": 2, "\U0001F600": 3, "\uff61": 4}),
    (SlyFloat(2.5), 2.5),
    ([SlyFloat(1e21), SlyFloat(-0.0)], [1e21, -0.0]),
    (SlyInt(7), 7),
    (SlyInt(2**64), 2**64),
    (SlyList([1, "x", None]), [1, "x", None]),
    (SlyDict(b=[1], a=SlyList([2])), {"b": [1], "a": [2]}),
    (collections.OrderedDict([("z", 1), ("a", 2)]), {"z": 1, "a": 2}),
    (collections.defaultdict(list, {"k": [1.5]}), {"k": [1.5]}),
    (collections.Counter("abca"), {"a": 2, "b": 1, "c": 1}),
    (Point(1.0, 0.5), [1.0, 0.5]),
]


@pytest.mark.parametrize("value, plain", SUBCLASS_CASES, ids=[type(v).__name__ for v, _ in SUBCLASS_CASES])
def test_subclasses_write_their_plain_value(twins, value, plain):
    native, pure = twins
    expected = pure.canonicalize(plain)
    assert native.canonicalize(plain) == expected
    assert native.canonicalize(value) == expected
    assert pure.canonicalize(value) == expected
    assert streamed(native, value, 3) == expected
    assert streamed(pure, value, 3) == expected


def test_non_finite_float_subclass_is_refused_alike(twins):
    value = {"a": SlyFloat("nan")}
    assert outcome(twins[0], value) == outcome(twins[1], value)
    assert outcome(twins[0], value)[2] == "Non-finite float `nan` has no JSON form - at `$.a`"


class Twin(str):
    """Distinct objects with the same text, so one dict can hold the name twice."""

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


def test_one_member_name_twice_is_refused(twins):
    value = {"x": {Twin("a"): 1, "b": 2, Twin("a"): 3}}
    assert len(value["x"]) == 3
    got = outcome(twins[0], value)
    assert got == ("error", EncodeError, "Duplicate object key `a` - at `$.x`")
    assert outcome(twins[1], value) == got


def test_userdict_is_not_a_dict(twins):
    value = [collections.UserDict(a=1)]
    assert outcome(twins[0], value) == outcome(twins[1], value) == (
        "error", EncodeError, "Unsupported type `UserDict` - at `$[0]`")


# -- write callbacks ------------------------------------------------------------


class Boom(Exception):
    pass


@pytest.mark.parametrize("fail_at", [1, 2, 5])
def test_a_failing_write_propagates_its_exception(impl, fail_at):
    calls = []

    def write(chunk):
        calls.append(chunk)
        if len(calls) == fail_at:
            raise Boom(len(calls))

    value = {"a": ["x" * 40, 1.5, {"b": "\U0001F600" * 10}], "c": list(range(30))}
    with pytest.raises(Boom) as info:
        impl.canonicalize_into(value, write, chunk_size=16)
    assert info.value.args == (fail_at,)
    assert len(calls) == fail_at
    # The twin is left usable.
    assert impl.canonicalize_into(value, lambda c: None, chunk_size=16) == len(impl.canonicalize(value))


def _mutations(value):
    """Every way a callback can reshape a document between two chunks."""
    lists = []
    dicts = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            lists.append(v)
            stack.extend(v)
        elif isinstance(v, dict):
            dicts.append(v)
            stack.extend(v.values())
    return lists, dicts


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values(max_leaves=30), ops=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 50)), max_size=40),
       chunk_size=st.integers(1, 9))
def test_a_callback_mutating_the_value_never_breaks_the_encoder(impl, value, ops, chunk_size):
    value = [value, {"pad": "p" * 20, "list": [1, 2, 3], "d": {"k": "v"}}]
    lists, dicts = _mutations(value)
    pending = list(ops)
    chunks = []

    def write(chunk):
        chunks.append(chunk)
        if not pending:
            return
        op, n = pending.pop()
        if op == 0 and lists:
            lists[n % len(lists)].clear()
        elif op == 1 and lists:
            lists[n % len(lists)].append({"new": [n] * n})
        elif op == 2 and dicts:
            dicts[n % len(dicts)].clear()
        elif op == 3 and dicts:
            dicts[n % len(dicts)][f"k{n}"] = list(range(n))
        elif op == 4 and lists:
            target = lists[n % len(lists)]
            target[:] = [n, "x" * n, None]
        elif op == 5 and dicts:
            target = dicts[n % len(dicts)]
            for key in list(target)[: n % 3]:
                del target[key]

    try:
        total = impl.canonicalize_into(value, write, chunk_size=chunk_size)
    except EncodeError:
        return  # refusing a document that changed under it is fine
    data = b"".join(chunks)
    assert total == len(data)
    orjson.loads(data)  # whatever was written is one well-formed JSON document


# -- number formatting: the native shortest-digit search against float.__repr__ ---------


def _edge_doubles():
    """Doubles where shortest-digit searches go wrong: interval edges and exact ties."""
    import struct

    def from_bits(b):
        return struct.unpack("<d", struct.pack("<Q", b))[0]

    xs = []
    for e in range(-1074, 1024):
        p = math.ldexp(1.0, e)
        xs += [p, math.nextafter(p, 0.0), math.nextafter(p, math.inf), math.nextafter(math.nextafter(p, math.inf), math.inf)]
    for k in range(-324, 309):
        t = float(f"1e{k}")
        xs += [t, math.nextafter(t, 0.0), math.nextafter(t, math.inf), float(f"5e{k}"), float(f"9.999999999999999e{k}")]
    for n in range(1, 64):
        xs += [from_bits(n), from_bits(0x000FFFFFFFFFFFFF - n), from_bits(0x7FEFFFFFFFFFFFFF - n)]
    xs += [float(2**53 + 2 * i) for i in range(-50, 50)] + [float(2**64 + 4096 * i) for i in range(-50, 50)]
    # Exact binary fractions and short decimals: the digit search's trailing-zero paths.
    xs += [m / 1024 for m in range(1, 20000)] + [m / 10**k for k in range(1, 8) for m in range(1, 3000, 7)]
    xs += [math.ldexp(m, e) for m in range(1, 200) for e in range(-60, 80, 3)]
    xs = [x for x in xs if x and math.isfinite(x)]
    return xs + [-x for x in xs]


def test_native_number_text_matches_the_reference_on_edge_doubles(twins):
    native, pure = twins
    xs = _edge_doubles()
    assert native.canonicalize(xs) == pure.canonicalize(xs)


def test_native_number_text_matches_the_reference_on_random_bit_patterns(twins):
    import random
    import struct

    native, pure = twins
    rng = random.Random(8785)
    xs = [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(200_000)]
    xs = [x for x in xs if math.isfinite(x)]
    assert native.canonicalize(xs) == pure.canonicalize(xs)
