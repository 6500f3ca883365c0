"""Schema validation (ajpcore._schema on jsonschema-rs): differential against jsonschema, ECMA regexes, reasons."""

import calendar
import copy
import re

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ajpcore.errors import SchemaError, ValidationError
from ajpcore._schema import compile_schema
from vector_files import load_json

# -- an independent RFC 3339 checker for jsonschema (its own needs a package not installed) --

_DT = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))\Z", re.ASCII
)


def reference_date_time(text):
    if not isinstance(text, str):
        return True
    m = _DT.match(text)
    if not m:
        return False
    y, mo, d, h, mi, s = (int(x) for x in m.groups()[:6])
    if not (1 <= mo <= 12 and 1 <= d <= calendar.monthrange(y if y else 2000, mo)[1]):
        return False
    if h > 23 or mi > 59 or s > 60:
        return False
    off = 0
    if m.group(8) not in ("Z", "z"):
        oh, om = int(m.group(9)), int(m.group(10))
        if oh > 23 or om > 59:
            return False
        off = (oh * 60 + om) * (1 if m.group(8)[0] == "+" else -1)
    if s == 60:
        return (h * 60 + mi - off) % 1440 == 23 * 60 + 59
    return True


FORMAT_CHECKER = jsonschema.FormatChecker()
FORMAT_CHECKER.checks("date-time")(reference_date_time)
# Only date-time, for comparisons where the compiled side switches the other formats off.
DATE_TIME_ONLY = jsonschema.FormatChecker(formats=())
DATE_TIME_ONLY.checks("date-time")(reference_date_time)


def _ecma_pattern(validator, pattern, instance, schema):
    # jsonschema searches with Python's re, where `$` also matches before a final newline and
    # `\d` matches any Unicode digit; ECMA-262 (the regex dialect JSON Schema names) does neither.
    # The patterns in these tests use only `^ $ \d` and plain classes, so this rewrite is exact.
    if isinstance(instance, str):
        python = pattern.replace("$", r"\Z").replace(r"\d", "[0-9]")
        if re.search(python, instance) is None:
            yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def reference(schema, format_checker=FORMAT_CHECKER):
    cls = jsonschema.validators.validator_for(schema)
    cls = jsonschema.validators.extend(cls, {"pattern": _ecma_pattern})
    return cls(schema, format_checker=format_checker)


# -- values --

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
    st.sampled_from([0, 1, -1, 0.0, 1.0, -0.0, 1.5, 2.0, 1e300, -1e-7, 255, 256, 1000, 1001]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["", "a", "1.0", "12.34", "1.2.3", "x@y.z", "2026-03-05T10:00:00Z", "2026-02-29T00:00:00Z",
                     "2024-02-29T23:59:60Z", "2026-03-05T10:00:00.123+01:00", "2026-03-05 10:00:00Z",
                     "sha256:" + "a" * 64, "ed25519:AAAA", "human", "agent", "full", "none", "ü", "🚀",
                     "1.0\n", "٣.٤"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(["a", "b", "c", "x1", "type", "level", "n", "s"]), inner, max_size=4),
    ),
    max_leaves=12,
)

KEYWORD_SCHEMAS = [
    {"type": "integer"},
    {"type": "number", "minimum": 0, "maximum": 1},
    {"type": ["string", "null"]},
    {"type": ["integer", "string"], "minimum": 5, "minLength": 2},
    {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 256},
    {"minimum": 1.5},
    {"type": "string", "minLength": 1, "maxLength": 3},
    {"type": "string", "pattern": r"^\d+\.\d+$"},
    {"pattern": "^(sha256:[a-f0-9]{64}|ed25519:[A-Za-z0-9+/=]+)$"},
    {"type": "string", "format": "date-time"},
    {"format": "date-time"},
    {"enum": ["human", "agent", "orchestrator"]},
    {"enum": [1, "1", None, True, [1], {"a": 1}]},
    {"const": 1},
    {"const": {"a": [1, 2.0]}},
    {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3},
    {"uniqueItems": True},
    {"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
    {"type": "object", "required": ["a", "b"], "properties": {"a": {"type": "string"}}},
    {"properties": {"a": {"type": "integer"}}, "additionalProperties": False},
    {"properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
    {"patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": {"type": "boolean"}},
    {"propertyNames": {"maxLength": 1}, "minProperties": 1, "maxProperties": 2},
    {"dependentRequired": {"a": ["b"]}},
    {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 10}]},
    {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]},
    {"allOf": [{"type": "number"}, {"maximum": 100}]},
    {"not": {"type": "object"}},
    {"if": {"properties": {"type": {"enum": ["agent"]}}}, "then": {"required": ["a"]}, "else": {"required": ["b"]}},
    {"$defs": {"pos": {"type": "integer", "minimum": 0}}, "type": "array", "items": {"$ref": "#/$defs/pos"}},
    {"$defs": {"node": {"type": "object", "properties": {"c": {"$ref": "#/$defs/node"}, "n": {"type": "integer"}}}},
     "$ref": "#/$defs/node"},
    {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}], "additionalItems": {"type": "integer"}},
    {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"s": {"type": "string"}},
     "properties": {"a": {"$ref": "#/definitions/s"}}},
    True,
    False,
]


@pytest.mark.parametrize("schema", KEYWORD_SCHEMAS, ids=[str(i) for i in range(len(KEYWORD_SCHEMAS))])
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=values)
def test_keyword_agrees_with_jsonschema(schema, value):
    compiled = compile_schema(schema)
    expected = reference(schema).is_valid(value)
    assert compiled.is_valid(value) == expected
    problems = compiled.errors(value)
    assert bool(problems) == (not expected)
    for path, reason in problems:
        assert path.startswith("$") and reason


# -- the published schemas, on mutations of their valid documents --

IATP = load_json("iatp", "iatp-capability-manifest.schema.json")
AJP_01 = load_json("ajp", "ajp-schema-job-offer-0.1.json")
AJP_MESSAGES = load_json("ajp", "ajp-spec-messages.json")


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, prefix + (i,))


@st.composite
def mutated(draw, base):
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(0, 3))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["delete", "replace", "add"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "replace":
            parent[path[-1]] = draw(values)
        elif isinstance(parent[path[-1]], dict):
            parent[path[-1]][draw(st.sampled_from(["extra", "level", "type", "x"]))] = draw(values)
    return doc


def _iatp_base():
    return IATP["examples"][0]


def _ajp_base():
    offer = copy.deepcopy(AJP_MESSAGES["JobOffer"])
    del offer["from"]["declaration_url"]
    offer["signature"] = "sha256:" + "ab" * 32
    return offer


@settings(max_examples=150, deadline=None)
@given(doc=mutated(_iatp_base()))
def test_iatp_schema_agrees_with_jsonschema(doc):
    # The published schema's uri, uri-reference and email formats are annotations for jsonschema
    # without extra packages; this test compares structure and date-time, the formats it checks.
    formats = {"uri": None, "uri-reference": None, "email": None}
    compiled = compile_schema(IATP, formats=formats)
    expected = reference(IATP, DATE_TIME_ONLY).is_valid(doc)
    assert compiled.is_valid(doc) == expected
    assert (compiled.errors(doc) == []) == expected


@settings(max_examples=150, deadline=None)
@given(doc=mutated(_ajp_base()))
def test_ajp_01_schema_agrees_with_jsonschema(doc):
    compiled = compile_schema(AJP_01, formats={"uri": None})
    expected = reference(AJP_01).is_valid(doc)
    assert compiled.is_valid(doc) == expected
    assert (compiled.errors(doc) == []) == expected


def test_published_examples_are_valid():
    assert compile_schema(IATP).errors(IATP["examples"][0]) == []
    assert compile_schema(AJP_01).errors(_ajp_base()) == []


# -- reasons and paths --


def test_every_problem_is_reported_with_its_path():
    doc = copy.deepcopy(IATP["examples"][0])
    del doc["protocol_version"]
    doc["identity"]["agent_id"] = 5
    doc["trust_level"] = "friend"
    doc["capabilities"]["sla_availability"] = "high"
    doc["capabilities"]["concurrency_limit"] = 0
    doc["updated_at"] = "2026-01-23"
    compiled = compile_schema(IATP)
    problems = dict(compiled.errors(doc))
    assert problems["$"] == "Object missing required field `protocol_version`"
    assert problems["$.identity.agent_id"] == "Expected `str`, got `int`"
    assert problems["$.capabilities.sla_availability"] == "Expected `number`, got `str`"
    assert problems["$.capabilities.concurrency_limit"] == "Expected `int` >= 1"
    assert problems["$.trust_level"].startswith('Invalid enum value "friend"')
    assert problems["$.updated_at"] == "Invalid RFC 3339 date-time"
    with pytest.raises(ValidationError) as info:
        compiled.validate(doc)
    assert len(info.value.errors) == len(problems)
    assert "Expected `number`, got `str` - at `$.capabilities.sla_availability`" in str(info.value).splitlines()


def test_paths_quote_odd_keys_and_index_arrays():
    schema = {"properties": {"a b": {"type": "array", "items": {"type": "integer"}}}}
    assert compile_schema(schema).errors({"a b": [1, "x"]}) == [('$["a b"][1]', "Expected `int`, got `str`")]


def test_unknown_field_is_named_at_its_object():
    schema = {"properties": {"a": {}}, "additionalProperties": False}
    assert compile_schema(schema).errors({"a": 1, "zz": 2}) == [("$", "Object contains unknown field `zz`")]


def test_union_type_reason():
    assert compile_schema({"type": ["string", "null"]}).errors(3) == [("$", "Expected `str | null`, got `int`")]


def test_integer_is_a_json_number_without_fraction():
    compiled = compile_schema({"type": "integer", "minimum": 0})
    assert compiled.is_valid(1.0) and compiled.is_valid(3)
    assert not compiled.is_valid(1.5) and not compiled.is_valid(True) and not compiled.is_valid(-1.0)


def test_length_counts_code_points():
    compiled = compile_schema({"maxLength": 1})
    assert compiled.is_valid("🚀") and not compiled.is_valid("ab")


def test_subclasses_read_as_their_json_kind():
    from collections import OrderedDict

    compiled = compile_schema({"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}})
    assert compiled.is_valid(OrderedDict(a=1))
    assert compiled.errors(OrderedDict(a="x")) == [("$.a", "Expected `int`, got `str`")]
    assert compiled.errors((1,)) == [("$", "Expected `object`, got `tuple`")]


def test_problems_come_in_document_order():
    schema = {
        "type": "object",
        "required": ["z", "a"],
        "properties": {"b": {"type": "string"}, "c": {"enum": [1]}, "d": {"minimum": 0}},
        "additionalProperties": {"type": "integer"},
    }
    value = {"d": -1, "x": "s", "c": 2, "b": 1}
    assert compile_schema(schema).errors(value) == [
        ("$", "Object missing required field `z`"),
        ("$", "Object missing required field `a`"),
        ("$.d", "Expected `number` >= 0"),
        ("$.x", "Expected `int`, got `str`"),
        ("$.c", "Invalid enum value 2 (expected one of 1)"),
        ("$.b", "Expected `str`, got `int`"),
    ]


def test_a_wrong_value_nested_past_the_engine_limit_is_still_named():
    deep: list = []
    for _ in range(400):  # the engine cannot hand back values nested past 255 levels
        deep = [deep]
    compiled = compile_schema({"properties": {"a": {"type": "string"}, "b": {"type": "string"}}})
    assert compiled.errors({"a": deep, "b": 1}) == [("$.a", "Expected `str`, got `array`"), ("$.b", "Expected `str`, got `int`")]


def test_values_that_are_not_json_are_named_not_raised():
    compiled = compile_schema({"type": "object"})
    value = {"a": {1, 2}, "b": [object()], 3: 4}
    assert not compiled.is_valid(value)
    assert [path for path, _ in compiled.errors(value)] == ["$.a", "$.b[0]", "$"]
    with pytest.raises(ValidationError):
        compiled.validate(value)


def test_dependent_required_and_bounds_name_their_cause():
    compiled = compile_schema({"dependentRequired": {"a": ["b"]}, "properties": {"n": {"type": "integer", "exclusiveMaximum": 3}}})
    assert compiled.errors({"a": 1, "n": 3}) == [
        ("$", "Object missing field `b` required by `a`"),
        ("$.n", "Expected `int` < 3"),
    ]


# -- refusals at compile time --


@pytest.mark.parametrize(
    "schema",
    [
        {"typo": 1},  # unknown keywords: a misspelt constraint would be dropped silently
        {"properties": {"a": {"maxLenght": 3}}},
        {"format": "hostname-ish"},
        {"type": "text"},
        {"$ref": "https://example.com/s"},  # nothing is fetched
        {"$ref": "#/$defs/missing"},
        {"pattern": "[]"},
        {"pattern": "(?>a)"},
        {"pattern": "\\Z"},
        {"pattern": "^a{,2}$"},  # ECMA-262 Annex B reads a literal `{,2}`: refused, not guessed
        {"pattern": "^[\\d-z]+$"},  # Annex B: a literal dash after a class escape
        {"pattern": "\\bab"},  # the engine's `\b` knows Unicode word characters, ECMA-262's only ASCII
        {"patternProperties": {"\\Bx": {}}},
        {"items": [{}]},
        {"$schema": "http://example.com/my-meta-schema"},
        {"properties": {"a": {"minLength": -1}}},
        [],
    ],
)
def test_unsupported_schema_is_refused(schema):
    with pytest.raises(SchemaError):
        compile_schema(schema)


def test_escaped_backslash_before_b_is_a_literal():
    assert compile_schema({"pattern": "^\\\\b$"}).is_valid("\\b")


@pytest.mark.parametrize(
    "schema, good, bad",
    [
        # Keywords the old hand-written compiler refused: the engine enforces them.
        ({"multipleOf": 2}, [4, 0, -2.0, "x"], [3, 2.5]),
        ({"contains": {"type": "integer"}}, [[1], ["a", 2], {}], [[], ["a"]]),
        ({"properties": {"a": {}}, "unevaluatedProperties": False}, [{"a": 1}, {}], [{"b": 1}]),
        ({"$schema": "http://json-schema.org/draft-04/schema#", "maximum": 3, "exclusiveMaximum": True}, [2], [3]),
    ],
)
def test_keywords_beyond_the_old_subset_are_enforced(schema, good, bad):
    compiled = compile_schema(schema)
    assert all(compiled.is_valid(v) for v in good)
    assert not any(compiled.is_valid(v) for v in bad)
    assert all(compiled.errors(v) for v in bad)


def test_formats_can_be_made_annotations_explicitly():
    assert not compile_schema({"format": "uri"}).is_valid("not a uri")
    assert compile_schema({"format": "uri"}, formats={"uri": None}).is_valid("not a uri")
    assert compile_schema({"format": "slug"}, formats={"slug": str.isidentifier}).errors("a b") == [("$", "Invalid `slug`")]


@pytest.mark.parametrize(
    "fmt, good, bad",
    [
        ("uri", ["https://a.example/x?y=1#z", "urn:isbn:0451450523", "mailto:a@b.c", "http://[::1]:80/"],
         ["", "/relative", "no scheme", "http://a b", "http://x/%zz", "1http://x"]),
        # RFC 3986 section 3.2.2: IP-literal = "[" ( IPv6address / IPvFuture ) "]"
        ("uri", ["http://[2001:db8::1]:8080/x", "http://[v1.x]/", "http://[::ffff:1.2.3.4]/", "http://[1:2:3:4:5:6:7:8]/"],
         ["http://[:]/", "http://[.]/", "http://[1.2.3.4]/", "http://[1:2:3:4:5:6:7:8:9]/", "http://[::1.2.3.04]/",
          "http://[12345::]/", "http://[v1.]/", "http://[fe80::1%25eth0]/"]),
        ("uri-reference", ["/jobs/1/result", "", "../a?b#c", "https://x.example/"],
         ["POST /compensate/{id}", "a b", "%zz", "x:y z"]),
        ("email", ["security@expedia.com", "a.b+c@d-e.example", "x@[127.0.0.1]"],
         ["", "@x", "x@", "a..b@c", "a b@c.d", "x@-a.com", "x@y@z", "Ada <ada@example.com>"]),
        ("date-time", ["2026-03-05T10:00:00Z", "2026-03-05t10:00:00.5z", "2024-02-29T00:00:00+14:00",
                       "2016-12-31T23:59:60Z", "2016-12-31T15:59:60-08:00"],
         ["2026-03-05T10:00:00", "2026-03-05 10:00:00Z", "2025-02-29T00:00:00Z", "2026-03-05T24:00:00Z",
          "2026-03-05T10:00:60Z", "2026-03-05T10:00:00+0100", "2026-03-05T10:00:00.Z", "2026-03-05T10:00Z",
          "2026-13-01T00:00:00Z", "2026-03-05T10:00:00+24:00", "２０26-03-05T10:00:00Z"]),
    ],
)
def test_format_checkers(fmt, good, bad):
    compiled = compile_schema({"format": fmt})
    for text in good:
        assert compiled.is_valid(text), text
    for text in bad:
        assert not compiled.is_valid(text), text
    assert compiled.is_valid(12)  # formats constrain strings only


# -- ECMA-262 regexes read as ECMAScript reads them --


@pytest.mark.parametrize(
    "pattern, text, matches",
    [
        (r"^\d+$", "123\n", False),  # Python's $ would match before a final newline
        (r"^\d+$", "١٢٣", False),  # \d is ASCII in ECMAScript
        (r"^\w+$", "é", False),
        (r"^\s$", "\u00a0", True),  # \s is Unicode white space in ECMAScript
        (r"^\s$", "\ufeff", True),
        (r"^.$", "\r", False),
        (r"^.$", "\u2028", False),
        (r"^.$", "é", True),
        (r"^a{2}$", "aa", True),
        (r"^(?<v>\d)\.x$", "1.x", True),
        (r"^[^\s]+$", "a\u3000", False),
        (r"^\x41\u00e9$", "Aé", True),
        (r"^[a-c-e]+$", "-e", True),
        (r"^[a-c-e]+$", "d", False),
        (r"^a+?b*?c??$", "aab", True),
        (r"^.$", "\U0001f680", True),  # code points, as with the u flag JSON Schema recommends
        (r"^\D\W$", "١é", True),
        (r"^[\w]$", "é", False),
        (r"(a)\1", "aa", True),  # back references, as in ECMA-262
        (r"^\p{L}$", "é", True),  # property escapes, as with the u flag
        (r"^\cA$", "\x01", True),
        (r"^[^\d]$", "١", True),
        (r"^x\.", "x.y", True),  # unanchored: `pattern` searches
    ],
)
def test_ecma_regex_semantics(pattern, text, matches):
    assert compile_schema({"type": "string", "pattern": pattern}).is_valid(text) == matches
