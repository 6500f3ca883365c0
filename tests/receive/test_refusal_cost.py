"""Refusals that cost what the answer costs (issue 29 §5, §6), on both core twins.

- §5: telling ``LegacySignature`` from ``BadSignature`` rebuilt the pre-0.3 form of the
  whole body in Python on every refused signature (1 MB of nested arrays: ~0.7 s against
  ~15 ms for the signature check).  The legacy check is now made only for bodies of at most
  ``LEGACY_CHECK_MAX_VALUES`` values, decided in at most that many steps.
- §6: a schema refusal computed and placed every problem (64,000 bad items: 3.0 s against
  20 ms for valid items); it now stops after the problems the answer lists.
"""

from __future__ import annotations

import hmac

import pytest

from ajpcore import BadSignature, LegacySignature, signing
from ajpcore.keys import Ed25519PrivateKey
from ajpcore.signing import LEGACY_CHECK_MAX_VALUES, sign, verify

SECRET = "s3cret"
KEY = Ed25519PrivateKey.from_seed(bytes(range(32)))


class CountedReads:
    """The core twin as it is, recording each call that reads a whole body: its canonical
    encoding, or a MAC over it.  The count is the cost, in a unit this shared machine cannot move
    (a wall-clock bound here failed once in CI, 41 ms against 3 x 8.8 ms + 10 ms)."""

    READS = ("canonicalize", "hmac_sha256_canonical", "hmac_sha256_verified_tag")

    def __init__(self, real):
        self.real = real
        self.reads = []

    def __getattr__(self, name):
        found = getattr(self.real, name)
        if name not in self.READS:
            return found

        def counted(*args, **kwargs):
            self.reads.append(name)
            return found(*args, **kwargs)

        return counted


def reads_of(call, monkeypatch):
    """The whole-body reads ``call`` makes through ``_core.impl``."""
    from ajpcore import _core

    counted = CountedReads(_core.impl)
    monkeypatch.setattr(_core, "impl", counted)
    try:
        call()
    except (BadSignature, LegacySignature):
        pass
    finally:
        monkeypatch.setattr(_core, "impl", counted.real)
    return counted.reads


def deep_arrays():
    """About 1 MB of arrays nested 500 deep, under a member the legacy form keeps."""
    chain = 0
    for _ in range(500):
        chain = [chain]
    return {"ajp": "0.3", "job_id": "job_1", "task": [chain for _ in range(1000)]}


@pytest.mark.parametrize("scheme", ["ed25519", "sha256"])
def test_a_refused_signature_costs_no_more_than_the_check_it_explains(core, monkeypatch, scheme):
    keys = {"public_key": KEY.public_key} if scheme == "ed25519" else {"secret": SECRET}
    signer = {"private_key": KEY} if scheme == "ed25519" else {"secret": SECRET}
    body = deep_arrays()
    assert len(core.canonicalize(body)) > 1_000_000
    good = dict(body, signature=sign(body, **signer))
    bad = dict(body, signature=sign(dict(body, job_id="job_2"), **signer))
    built = []
    monkeypatch.setattr(signing, "_legacy_form", lambda rest: built.append(rest) or {})
    with pytest.raises(BadSignature):
        verify(bad, **keys)
    assert built == []  # the legacy form of a body this large is never rebuilt
    monkeypatch.undo()
    check = reads_of(lambda: verify(good, **keys), monkeypatch)
    refusal = reads_of(lambda: verify(bad, **keys), monkeypatch)
    # Before: the refusal rebuilt the legacy form, ~30-60x the check (0.5 s against 9-19 ms native).
    # Now the check reads the body once; the refusal twice (the fast path, then the full check
    # that explains), and deciding not to build the legacy form reads no more than its bound
    # (test_the_bound_is_decided_in_bounded_steps).
    assert len(check) == 1, check
    assert len(refusal) == 2, refusal


def legacy_signed(items):
    """A body of ``4 + items`` values whose ``sha256`` signature covers only its pre-0.3 form."""
    rest = {"a": "x", "b": {"z": 1}, "c": list(range(items))}
    legacy = core_canonical_legacy(rest)
    return dict(rest, signature="sha256:" + hmac.digest(SECRET.encode(), legacy, "sha256").hex())


def core_canonical_legacy(rest):
    from ajpcore import _core

    return _core.impl.canonicalize(signing._legacy_form(rest))


def test_the_legacy_label_up_to_the_bound(core):
    with pytest.raises(LegacySignature):
        verify(legacy_signed(LEGACY_CHECK_MAX_VALUES - 4), secret=SECRET)
    with pytest.raises(BadSignature) as refused:
        verify(legacy_signed(LEGACY_CHECK_MAX_VALUES - 3), secret=SECRET)
    assert type(refused.value) is BadSignature  # refused all the same; only the label differs


def test_the_bound_is_decided_in_bounded_steps():
    class Counted(list):
        reads = 0

        def __iter__(self):
            Counted.reads += 1
            return super().__iter__()

    chain = Counted([0])
    for _ in range(100_000):  # 100,000 arrays deep: a walk of the whole body would read each
        chain = Counted([chain])
    assert not signing._holds_at_most({"a": chain}, LEGACY_CHECK_MAX_VALUES)
    assert Counted.reads <= LEGACY_CHECK_MAX_VALUES


# -- §6: a schema refusal reads what it lists -------------------------------------------------

import json  # noqa: E402
from datetime import datetime, timezone  # noqa: E402

from ajpcore import ValidationError, ajp  # noqa: E402
from ajpcore import _schema  # noqa: E402
from ajpcore._schema import MAX_PROBLEMS, compile_schema  # noqa: E402

NOW = datetime(2026, 3, 5, 10, 0, tzinfo=timezone.utc)


def offer_with(constraints, **extra):
    body = ajp.new_offer(sender={"type": "human", "id": "u1"}, to="provenance:domain:receiver.example",
                         task={"type": "t", "instruction": "i"}, now=NOW, secret=b"s").to_dict()
    body["context"]["constraints"] = constraints
    body.update(extra)
    return body


class CountingEngine:
    """The engine as it is, counting the errors it hands back."""

    def __init__(self, real):
        self.real = real
        self.handed = 0

    def iter_errors(self, value):
        found = list(self.real.iter_errors(value))
        self.handed += len(found)
        return iter(found)

    def __getattr__(self, name):
        return getattr(self.real, name)


def test_a_schema_refusal_reads_what_it_lists(core, monkeypatch):
    lazy = ajp.JobOffer._VALIDATOR
    compiled = lazy._real() if hasattr(lazy, "_real") else lazy
    engine = CountingEngine(compiled._validator)
    monkeypatch.setattr(compiled, "_validator", engine)
    raw = json.dumps(offer_with([0] * 64_000), separators=(",", ":")).encode()
    with pytest.raises(ValidationError) as refused:
        ajp.JobOffer.from_json(raw)
    listed = refused.value.errors
    assert listed[:MAX_PROBLEMS] == [(f"$.context.constraints[{i}]", "Expected `str`, got `int`") for i in range(MAX_PROBLEMS)]
    assert listed[MAX_PROBLEMS:] == [("$", "... and more problems not listed")]
    # Before: the engine handed back all 64,000 errors (2.2 s of the refusal's 2.7 s).
    assert engine.handed <= 4 * MAX_PROBLEMS


def _whole(compiled, value, monkeypatch):
    """``errors`` as it reads the whole document (the cut turned off)."""
    monkeypatch.setattr(_schema.CompiledSchema, "_first_of_cut", lambda self, value: None)
    try:
        return compiled.errors(value)
    finally:
        monkeypatch.undo()


ARRAYS = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
          "properties": {"a": {"type": "array", "items": {"type": "string"}},
                         "b": {"type": "array", "prefixItems": [{"type": "integer"}],
                               "items": {"type": "object", "required": ["k"], "additionalProperties": False,
                                         "properties": {"k": {"type": "string", "maxLength": 2}}}},
                         "c": {"$ref": "#/$defs/c"}},
          "$defs": {"c": {"type": "array", "items": {"enum": ["x", "y"]}}},
          "additionalProperties": {"type": "integer"}}
WATCHING = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
            "properties": {"a": {"type": "array", "items": {"type": "string"}, "maxItems": 500}}}


@pytest.mark.parametrize("doc", [
    {"a": [0] * 5_000},
    {"z": "x", "a": ["ok"] * 300 + [0] * 5_000, "b": [1] + [{"k": "long"}] * 900},
    {"b": ["no"] + [{"j": 1}] * 3_000, "a": [1] * 2_000, "y": "s"},
    {"c": ["x"] * 390 + ["q"] * 4_000, "a": [[0] * 900] * 3},
    {"a": [0] * 3_000, "c": [set()]},  # not plain JSON: read whole, the refusal of the set first
], ids=["one-array", "two-arrays", "objects-in-items", "ref-and-nesting", "not-json"])
def test_the_cut_lists_what_reading_the_whole_document_lists(core, monkeypatch, doc):
    compiled = compile_schema(ARRAYS)
    whole = _whole(compiled, doc, monkeypatch)
    got = compiled.errors(doc)
    assert got[:MAX_PROBLEMS] == whole[:MAX_PROBLEMS]
    assert len(got) == len(whole)


def test_a_schema_that_sees_the_cut_is_read_whole(core, monkeypatch):
    compiled = compile_schema(WATCHING)
    doc = {"a": [0] * 3_000}
    whole = _whole(compiled, doc, monkeypatch)
    assert whole[0] == ("$.a", "Expected `array` of length <= 500")  # what a cut array would not show
    assert compiled.errors(doc) == whole and whole[-1] == ("$", "... and 2901 more problems not listed")
