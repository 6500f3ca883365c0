"""Schema problems of a hostile document cost linear work, and at most MAX_PROBLEMS are listed.

Issue 20 §3: the problems were put in document order by rebuilding an object's member list
once per problem, so k problems under an object of m members cost O(k * m) before any
signature was looked at (an unsigned 245 kB offer: 3.2 s).  These tests count the work
instead of timing it: each object's member order is read once per ``errors`` call, and only
the listed problems are worded, whatever k and m are.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

import ajpcore._schema as schema_module
from ajpcore import ValidationError, ajp
from ajpcore._schema import MAX_PROBLEMS, compile_schema

NOW = datetime(2026, 3, 5, 10, 0, tzinfo=timezone.utc)


def _hostile_offer(k: int) -> bytes:
    """An unsigned-looking offer: k bad ``context.constraints`` items and k unknown top-level members."""
    body = ajp.new_offer(sender={"type": "human", "id": "u1"}, to="provenance:domain:receiver.example",
                         task={"type": "t", "instruction": "i"}, now=NOW, secret=b"s").to_dict()
    body["context"]["constraints"] = [0] * k
    for i in range(k):
        body[f"x{i}"] = 0
    return json.dumps(body, separators=(",", ":")).encode()


class _Counter:
    def __init__(self, real):
        self.real = real
        self.calls = 0

    def __call__(self, *args):
        self.calls += 1
        return self.real(*args)


def _work(monkeypatch, k: int):
    """(member-order reads, problems worded, the ValidationError) for the hostile offer of size k."""
    index = _Counter(schema_module._member_index)
    worded = _Counter(schema_module.CompiledSchema._worded)
    monkeypatch.setattr(schema_module, "_member_index", index)
    monkeypatch.setattr(schema_module.CompiledSchema, "_worded", lambda self, *a: worded(self, *a))
    with pytest.raises(ValidationError) as exc:
        ajp.JobOffer.from_json(_hostile_offer(k))
    monkeypatch.undo()
    return index.calls, worded.calls, exc.value


def test_work_does_not_grow_with_the_problems_under_one_object(core, monkeypatch):
    small = _work(monkeypatch, 300)
    large = _work(monkeypatch, 6_000)
    # The offer and its context: each member order read once, for 300 problems as for 6,000.
    assert small[0] == large[0] <= 2
    assert small[1] == large[1] == MAX_PROBLEMS
    for k, (_, _, exc) in [(300, small), (6_000, large)]:
        assert len(exc.errors) == MAX_PROBLEMS + 1
        assert exc.errors[:3] == [(f"$.context.constraints[{i}]", "Expected `str`, got `int`") for i in range(3)]
        assert exc.errors[MAX_PROBLEMS - 1][0] == f"$.context.constraints[{MAX_PROBLEMS - 1}]"
        # 300 items are read whole and counted; of 6,000 only the first hundreds are read (issue 29 §6).
        counted = ("$", f"... and {k - MAX_PROBLEMS} more problems not listed")
        assert exc.errors[-1] == (counted if k <= 4 * MAX_PROBLEMS else ("$", "... and more problems not listed"))
        assert str(exc).count("\n") == MAX_PROBLEMS


def test_unknown_members_and_other_problems_stay_in_document_order():
    compiled = compile_schema({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "patternProperties": {"^p": {"type": "integer"}},
        "additionalProperties": False,
    })
    doc = {}
    expected = []
    for i in range(400):
        doc[f"p{i}"] = "x"
        doc[f"u{i}"] = 0
        expected += [(f"$.p{i}", "Expected `int`, got `str`"), ("$", f"Object contains unknown field `u{i}`")]
    got = compiled.errors(doc)
    assert got[:MAX_PROBLEMS] == expected[:MAX_PROBLEMS]
    assert got[MAX_PROBLEMS:] == [("$", f"... and {len(expected) - MAX_PROBLEMS} more problems not listed")]
    assert compiled.errors({"p0": "x", "u0": 0}) == expected[:2]  # under the cap: all, no count line


def test_exactly_the_cap_lists_everything():
    compiled = compile_schema({"$schema": "https://json-schema.org/draft/2020-12/schema",
                               "type": "array", "items": {"type": "string"}})
    assert len(compiled.errors([0] * MAX_PROBLEMS)) == MAX_PROBLEMS
    more = compiled.errors([0] * (MAX_PROBLEMS + 1))
    assert more[-1] == ("$", "... and 1 more problem not listed") and len(more) == MAX_PROBLEMS + 1


def test_a_deep_value_where_a_string_belongs_costs_linear_work():
    """A 200,000-deep list as ``from.type`` (a caller's dict: the decoder's depth limit never saw it).

    The prefix cut built each node's path as a new tuple, O(depth) per node: about 50 s of CPU
    for this offer (test_ajp.py's hostile-depth case, the slowest test of the suite); linear now."""
    import time

    body = json.loads(_hostile_offer(0))
    deep: list = []
    for _ in range(200_000):
        deep = [deep]
    body["from"]["type"] = deep
    start = time.process_time()
    check = ajp.validate_offer(body, now=NOW, strict=True)
    spent = time.process_time() - start
    assert not check.valid
    assert spent < 5.0, f"{spent:.1f} s of CPU"  # linear: about 0.5 s on the CI machine
