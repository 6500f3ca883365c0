"""Python format checks moved out of jsonschema-rs (``ajpcore._schema_formats``): same verdicts.

The split validator (engine without the ``date-time`` callback, then ``is_timestamp``
on the members) must answer exactly what the engine with the callback answers, and
a document differing only in one timestamp must be valid exactly when
``ajpcore.timestamps.is_timestamp`` accepts that string.
"""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ajpcore
from ajpcore import ajp, strategies
from ajpcore._schema import compile_schema
from ajpcore.ajp._messages import _OFFER_SCHEMA
from ajpcore._schema_formats import split_formats
from ajpcore.errors import ValidationError
from ajpcore.timestamps import is_timestamp, timestamp_micros

SCHEMAS = sorted((Path(ajpcore.__file__).parent / "schemas").glob("*.schema.json"))
OFFER = ajp.JobOffer.from_dict(
    {"signature": "sha256:" + "0" * 64,
        "ajp": "0.1", "job_id": "job_0001", "from": {"type": "human", "id": "u1"},
        "to": {"provenance_id": "provenance:github:acme/agent"},
        "task": {"type": "code_review", "instruction": "Review"}, "budget": {"max_usd": 1},
        "issued_at": "2026-03-05T10:00:00Z", "expires_at": "2026-03-05T11:00:00Z",
    }
).to_dict()

# Valid timestamps of every shape, and edits of them: a character replaced, inserted or deleted
# (digits, separators, T/Z in both cases, Arabic-Indic and fullwidth digits, space, comma).
_SEEDS = [
    "2026-03-05T10:00:00Z", "2026-03-05t10:00:00.123456789z", "2024-02-29T23:59:59+14:00",
    "2016-12-31T23:59:60Z", "2016-12-31T15:59:60-08:00", "0000-01-01T00:00:00-23:59", "9999-12-31T23:59:59.5+00:00",
]
_EDIT = "0123456789:-+.TtZz ,\u0661\uff11"


@st.composite
def _mutated_timestamps(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(_SEEDS) | strategies._iatp_date_time())
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["replace", "insert", "delete"]))
        ch = draw(st.sampled_from(_EDIT))
        if op == "insert":
            text = text[:at] + ch + text[at:]
        elif at < len(text):
            text = text[:at] + (ch if op == "replace" else "") + text[at + 1 :]
    return text


timestamps = _mutated_timestamps() | st.text(alphabet="0123456789-:T.Z+", max_size=30) | st.text(max_size=30)


def test_every_shipped_date_time_is_checked_after_the_engine():
    """The split applies to the shipped AJP schemas (else this module tests nothing on them)."""
    split = [path.name for path in SCHEMAS if compile_schema(json.loads(path.read_text()))._fast is not None]
    assert "ajp-job-offer.schema.json" in split and "ajp-job-status.schema.json" in split
    assert [path for path, _ in _OFFER_SCHEMA._checks] == [("issued_at",), ("expires_at",)]


@settings(max_examples=1500)
@given(text=timestamps, member=st.sampled_from(["issued_at", "expires_at"]))
def test_offer_verdict_is_is_timestamp(text, member):
    schema = compile_schema(json.loads((SCHEMAS[0].parent / "ajp-job-offer.schema.json").read_text()))
    assert schema._fast is not None
    doc = dict(OFFER, **{member: text})
    assert schema.is_valid(doc) is is_timestamp(text) is bool(schema._validator.is_valid(doc))
    assert (schema.errors(doc) == []) is is_timestamp(text)


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_split_agrees_with_the_engine_callback_on_mutations(path):
    schema = compile_schema(json.loads(path.read_text()))

    @settings(max_examples=60)
    @given(doc=strategies.offer_mutations() | strategies.result_mutations() | strategies.status_mutations()
           | strategies.json_values())
    def check(doc):
        assert schema.is_valid(doc) is bool(schema._validator.is_valid(doc))

    check()


@pytest.mark.parametrize(
    "schema, expected",
    [
        ({"format": "date-time"}, [()]),
        ({"properties": {"a": {"properties": {"b": {"type": "string", "format": "date-time"}}}}}, [("a", "b")]),
        ({"properties": {"a": {"format": "date-time"}, "b": {"format": "uri"}}}, [("a",)]),
        ({"properties": {"a": {"format": "uri"}}}, None),  # no Python checker: nothing to move
        ({"anyOf": [{"format": "date-time"}, {"type": "integer"}]}, None),
        ({"not": {"format": "date-time"}}, None),
        ({"items": {"format": "date-time"}}, None),
        ({"patternProperties": {"^a": {"format": "date-time"}}}, None),
        ({"additionalProperties": {"format": "date-time"}}, None),
        ({"if": {"properties": {"a": {"const": 1}}}, "then": {"properties": {"b": {"format": "date-time"}}}}, None),
        ({"$defs": {"t": {"format": "date-time"}}, "properties": {"a": {"$ref": "#/$defs/t"}}}, None),
        ({"properties": {"a": {"format": "date-time"}, "b": {"$ref": "#/properties/a"}}}, None),
        ({"properties": {"a": {"format": "date-time"}}, "enum": [{"format": "date-time"}]}, None),  # overcount: kept
        ({"properties": {"properties": {"format": "date-time"}, "format": {"type": "string"}}}, [("properties",)]),
    ],
)
def test_split_only_where_the_format_always_applies(schema, expected):
    split = split_formats(schema, {"date-time": is_timestamp})
    assert (None if split is None else [path for path, _ in split]) == expected
    before = json.dumps(schema)
    compiled = compile_schema(schema)
    assert json.dumps(schema) == before  # the caller's schema is not modified
    assert (compiled._fast is None) is (expected is None)


_INSTANCE_KEYS = st.sampled_from(["a", "b", "properties", "format"])
_INSTANCES = st.recursive(
    timestamps | st.integers() | st.none(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_INSTANCE_KEYS, inner, max_size=4),
    max_leaves=8,
)


@settings(max_examples=600)
@given(value=_INSTANCES)
def test_split_agrees_with_the_engine_callback_on_nested_chains(value):
    for schema in (
        {"properties": {"a": {"properties": {"b": {"format": "date-time"}}}, "b": {"format": "date-time"}}},
        {"format": "date-time", "properties": {"properties": {"format": "date-time"}}},
        {"properties": {"a": {"type": ["string", "object"], "format": "date-time", "minLength": 3}},
         "additionalProperties": {"type": ["string", "object", "array"]}},
    ):
        compiled = compile_schema(schema)
        assert compiled._fast is not None
        assert compiled.is_valid(value) is bool(compiled._validator.is_valid(value))


def test_formats_the_engine_does_not_know_stay_callbacks():
    schema = {"properties": {"a": {"format": "even"}, "b": {"format": "note"}, "c": {"format": "date-time"}}}
    compiled = compile_schema(schema, formats={"even": lambda s: len(s) % 2 == 0, "note": None})
    assert compiled._fast is None
    assert compiled.is_valid({"a": "xx", "b": "anything"}) and not compiled.is_valid({"a": "x"})
    assert compiled.errors({"a": "x"}) == [("$.a", "Invalid `even`")]


class _Text(str):
    pass


@pytest.mark.parametrize(
    "value",
    [{"a": {1, 2}}, {1: "x"}, {"b": {1, 2}}, {"a": [{1}]}, {"a": {1: "x"}}, {"a": {"b": {1}}}, {"a": {"b": _Text("x")}},
     {"a": _Text("2026-03-05T10:00:00Z")}, {"a": {"b": "2016-12-31T15:59:60-08:00"}}, {"a": {"b": "2016-12-31T23:59:60+01:00"}},
     {"a": (1,)}, {"a": float("nan")}, {"a": 10**30}, {"a": {"b": None}}, [{"a": 1}], "2026-03-05T10:00:00Z"],
)
def test_values_that_are_not_plain_json_get_the_same_verdict(value):
    for schema in ({"properties": {"a": {"format": "date-time"}}}, {"properties": {"a": {"properties": {"b": {"format": "date-time"}}}}}):
        compiled = compile_schema(schema)
        try:
            exact = bool(compiled._validator.is_valid(value))
        except ValueError:
            exact = False
        assert compiled.is_valid(value) is exact


def test_from_json_reports_a_bad_timestamp_as_before(core):
    for text in ("2026-02-30T10:00:00Z", "2026-03-05T10:00:00", "2015-12-31T23:59:60+01:00"):
        with pytest.raises(ValidationError) as info:
            ajp.JobOffer.from_json(core.canonicalize(dict(OFFER, issued_at=text)))
        assert info.value.errors == [("$.issued_at", "Invalid RFC 3339 date-time")]
    assert ajp.JobOffer.from_json(core.canonicalize(dict(OFFER, issued_at="2016-12-31T23:59:60Z"))).issued_at


_MORE_SEEDS = st.sampled_from([
    "2024-02-29T10:00:00Z", "2026-01-31t23:59:59.999999999z", "2026-04-30T00:00:00-23:59", "0001-01-01T00:00:00+23:59",
    "9999-12-31T23:59:59.9999999-23:59", "0000-03-01T00:00:00Z", "1900-02-28T12:00:00.000001+05:30",
])


@settings(max_examples=3000)
@given(text=timestamps | _MORE_SEEDS)
def test_twins_read_the_same_instant(twins, text):
    """The schema's verdict and the instant receive_offer reads come from one parse, alike on both twins."""
    native, pure = twins
    micros = native.rfc3339_micros(text)
    assert micros == pure.rfc3339_micros(text)
    assert is_timestamp(text) == (micros is not None)
    if micros is not None:
        assert timestamp_micros(text) == micros


class _LyingDict(dict):
    def get(self, key, default=None):  # a dict subclass may read differently: the general walk decides
        return "not a timestamp"


_TOP_CHECKS = [(("issued_at",), is_timestamp), (("expires_at",), is_timestamp)]
_NESTED_CHECKS = [(("issued_at",), is_timestamp), (("a", "b"), is_timestamp)]


@settings(max_examples=300)
@given(
    value=st.one_of(
        st.dictionaries(
            st.sampled_from(["issued_at", "expires_at", "a", "x"]),
            st.one_of(st.none(), st.integers(), st.sampled_from(["2026-03-05T10:00:00Z", "2026-02-30T10:00:00Z", "x"]),
                      st.dictionaries(st.sampled_from(["b", "c"]), st.sampled_from(["2026-03-05T10:00:00Z", "no", 1]))),
        ),
        st.lists(st.integers(), max_size=2),
        st.text(max_size=3),
        st.none(),
    ),
    wrap=st.booleans(),
)
def test_formats_holder_is_formats_hold(value, wrap):
    from ajpcore._schema_formats import formats_hold, formats_holder

    if wrap and isinstance(value, dict):
        value = _LyingDict(value)
    for checks in (_TOP_CHECKS, _NESTED_CHECKS, []):
        assert formats_holder(checks)(value) == formats_hold(value, checks)
