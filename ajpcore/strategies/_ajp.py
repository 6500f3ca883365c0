"""Valid AJP messages as the shipped schemas define them, unknown members included, and near-valid mutations."""

from __future__ import annotations

# job_offers(), job_results(), job_statuses(): valid AJP messages (JSON objects) as the
# shipped schemas define them, unknown members included; offer_mutations(),
# result_mutations(), status_mutations(): near-valid ones, each with one or two edits.

from typing import Any as _AjpAny
from typing import Dict as _AjpDict
from typing import List as _AjpList
from typing import Tuple as _AjpTuple

from hypothesis import strategies as _st_ajp

from ._json import json_characters

_AJP_TEXT = _st_ajp.text(json_characters, max_size=24)
_AJP_NONEMPTY = _st_ajp.text(json_characters, min_size=1, max_size=24)
_AJP_NAME = _st_ajp.sampled_from(["x_future", "trace_id", "priority", "é", "a b", "\U0001f680"])
_AJP_SMALL_JSON = _st_ajp.recursive(
    _st_ajp.one_of(
        _st_ajp.none(), _st_ajp.booleans(), _st_ajp.integers(-(2**53) + 1, 2**53 - 1),
        _st_ajp.floats(allow_nan=False, allow_infinity=False), _AJP_TEXT,
    ),
    lambda inner: _st_ajp.one_of(
        _st_ajp.lists(inner, max_size=3), _st_ajp.dictionaries(_AJP_TEXT, inner, max_size=3)
    ),
    max_leaves=6,
)
_AJP_ID = _st_ajp.from_regex(r"job_[0-9a-z]{8,24}", fullmatch=True)
_AJP_PROVENANCE = _st_ajp.from_regex(r"provenance:(github|domain):[a-z0-9-]{1,12}(/[a-z0-9-]{1,12})?", fullmatch=True)
_AJP_URL = _st_ajp.from_regex(r"https://[a-z]{1,10}\.example(/[A-Za-z0-9_.-]{1,10}){0,3}", fullmatch=True)
_AJP_HEX64 = _st_ajp.from_regex(r"[0-9a-f]{64}", fullmatch=True)
_AJP_B64 = _st_ajp.binary(min_size=64, max_size=64).map(lambda b: __import__("base64").b64encode(b).decode())


def _ajp_timestamp(seconds: int, draw: _AjpAny) -> str:
    from datetime import datetime, timedelta, timezone

    instant = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=seconds)
    offset = draw(_st_ajp.sampled_from([0, 0, 60, -300, 330, 840]))
    local = instant + timedelta(minutes=offset)
    frac: str = draw(_st_ajp.sampled_from(["", ".000", ".5", ".123456", ".123456789"]))
    zone: str = draw(_st_ajp.sampled_from(["Z", "z"])) if offset == 0 and draw(_st_ajp.booleans()) else (
        "%s%02d:%02d" % ("+" if offset >= 0 else "-", abs(offset) // 60, abs(offset) % 60)
    )
    return local.strftime("%Y-%m-%dT%H:%M:%S") + frac + zone


def _ajp_optional(draw: _AjpAny, out: _AjpDict[str, _AjpAny], optional: _AjpDict[str, _AjpAny]) -> _AjpDict[str, _AjpAny]:
    for key, strategy in optional.items():
        if draw(_st_ajp.booleans()):
            out[key] = draw(strategy)
    if draw(_st_ajp.integers(0, 4)) == 0:
        out[draw(_AJP_NAME)] = draw(_AJP_SMALL_JSON)
    return out


@_st_ajp.composite
def job_offers(draw: _AjpAny, *, issued_at: "int | None" = None, lifetime: "int | None" = None) -> _AjpDict[str, _AjpAny]:
    """Valid AJP JobOffers (JSON objects; the signature is well formed but signs nothing).

    ``issued_at`` (POSIX seconds) and ``lifetime`` (seconds) pin the timestamps,
    e.g. to build offers that pass ``validate_offer(strict=True)`` at a known ``now``;
    by default both are drawn (lifetime 1 s to 1 day).
    """
    sender_type = draw(_st_ajp.sampled_from(["human", "agent", "orchestrator"]))
    sender: _AjpDict[str, _AjpAny] = {"type": sender_type}
    if sender_type == "human":
        _ajp_optional(draw, sender, {"id": _st_ajp.one_of(_st_ajp.none(), _AJP_NONEMPTY),
                                     "provenance_id": _st_ajp.none(), "declaration_url": _st_ajp.none()})
        signature = "sha256:" + draw(_AJP_HEX64)
    else:
        sender["provenance_id"] = draw(_AJP_PROVENANCE)
        _ajp_optional(draw, sender, {"id": _st_ajp.none(), "declaration_url": _st_ajp.one_of(_st_ajp.none(), _AJP_URL)})
        signature = "ed25519:" + draw(_AJP_B64)
    start = issued_at if issued_at is not None else draw(_st_ajp.integers(1_700_000_000, 1_900_000_000))
    span = lifetime if lifetime is not None else draw(_st_ajp.integers(1, 86_400))
    task = _ajp_optional(draw, {"type": draw(_AJP_NONEMPTY), "instruction": draw(_AJP_NONEMPTY)}, {
        "input": _st_ajp.dictionaries(_AJP_TEXT, _AJP_SMALL_JSON, max_size=3),
        "output_format": _st_ajp.sampled_from(["json", "text", "markdown", "html", "any"]),
    })
    budget = _ajp_optional(draw, {"max_usd": draw(_st_ajp.one_of(
        _st_ajp.just(0), _st_ajp.integers(0, 1000), _st_ajp.floats(0, 1e6, allow_nan=False)))}, {
        "max_seconds": _st_ajp.one_of(_st_ajp.integers(1, 86_400), _st_ajp.floats(1, 1e5)),
        "max_llm_tokens": _st_ajp.integers(1, 10**7),
    })
    offer: _AjpDict[str, _AjpAny] = {
        "ajp": draw(_st_ajp.sampled_from(["0.1", "0.1", "0.2", "1.0"])),
        "job_id": draw(_AJP_ID),
        "from": sender,
        "to": _ajp_optional(draw, {"provenance_id": draw(_AJP_PROVENANCE)}, {}),
        "task": task,
        "budget": budget,
        "issued_at": _ajp_timestamp(start, draw),
        "expires_at": _ajp_timestamp(start + span, draw),
        "signature": signature,
    }
    return _ajp_optional(draw, offer, {
        "parent_job_id": _st_ajp.one_of(_st_ajp.none(), _AJP_ID),
        "context": _st_ajp.fixed_dictionaries({}, optional={
            "credentials": _st_ajp.dictionaries(_AJP_TEXT, _AJP_TEXT, max_size=2),
            "memory": _st_ajp.lists(_AJP_SMALL_JSON, max_size=3),
            "constraints": _st_ajp.lists(_AJP_TEXT, max_size=3),
        }),
        "callback": _st_ajp.one_of(_st_ajp.none(), _st_ajp.fixed_dictionaries(
            {"url": _AJP_URL}, optional={"headers": _st_ajp.dictionaries(_AJP_NONEMPTY, _AJP_TEXT, max_size=2)})),
    })


_AJP_STATUSES = ["accepted", "running", "completed", "failed", "rejected", "expired"]


def _ajp_result_members(draw: _AjpAny) -> _AjpDict[str, _AjpAny]:
    return {
        "output": _AJP_SMALL_JSON,
        "constraints_asserted": _st_ajp.lists(_st_ajp.sampled_from(["no:pii", "no:persist:data", "cite:sources"]), max_size=3),
        "usage": _st_ajp.fixed_dictionaries({}, optional={
            "llm_tokens": _st_ajp.integers(0, 10**7),
            "duration_seconds": _st_ajp.floats(0, 1e5),
            "cost_usd": _st_ajp.one_of(_st_ajp.just(0), _st_ajp.floats(0, 1e3)),
        }),
    }


def _ajp_agent(draw: _AjpAny) -> _AjpDict[str, _AjpAny]:
    return _ajp_optional(draw, {"provenance_id": draw(_AJP_PROVENANCE)}, {
        "version": _st_ajp.from_regex(r"[0-9]\.[0-9]\.[0-9]", fullmatch=True),
        "model": _st_ajp.one_of(_AJP_NONEMPTY, _st_ajp.fixed_dictionaries(
            {"provider": _AJP_NONEMPTY, "model_id": _AJP_NONEMPTY})),
    })


@_st_ajp.composite
def job_results(draw: _AjpAny) -> _AjpDict[str, _AjpAny]:
    """Valid AJP JobResults (JSON objects, unknown members included)."""
    result = {
        "job_id": draw(_AJP_ID),
        "status": draw(_st_ajp.sampled_from(_AJP_STATUSES)),
        "agent": _ajp_agent(draw),
        "completed_at": _ajp_timestamp(draw(_st_ajp.integers(1_700_000_000, 1_900_000_000)), draw),
        "signature": "ed25519:" + draw(_AJP_B64),
    }
    members = _ajp_result_members(draw)
    members["ajp"] = _st_ajp.just("0.1")
    return _ajp_optional(draw, result, members)


@_st_ajp.composite
def job_statuses(draw: _AjpAny) -> _AjpDict[str, _AjpAny]:
    """Valid AJP JobStatus messages (progress, message, timestamps; sometimes result members)."""
    status = {"job_id": draw(_AJP_ID), "status": draw(_st_ajp.sampled_from(_AJP_STATUSES))}
    t = draw(_st_ajp.integers(1_700_000_000, 1_900_000_000))
    optional = {
        "ajp": _st_ajp.just("0.1"),
        "progress": _st_ajp.one_of(_st_ajp.sampled_from([0, 1, 0.0, 1.0]), _st_ajp.floats(0, 1)),
        "message": _AJP_TEXT,
        "started_at": _st_ajp.just(_ajp_timestamp(t, draw)),
        "updated_at": _st_ajp.just(_ajp_timestamp(t + 5, draw)),
        "estimated_completion": _st_ajp.just(_ajp_timestamp(t + 60, draw)),
    }
    if status["status"] == "completed":
        optional.update(_ajp_result_members(draw))
        optional["agent"] = _st_ajp.just(_ajp_agent(draw))
        optional["completed_at"] = _st_ajp.just(_ajp_timestamp(t + 30, draw))
        optional["signature"] = _st_ajp.just("ed25519:" + draw(_AJP_B64))
    return _ajp_optional(draw, status, optional)


def _ajp_schema_members(node: _AjpAny, path: _AjpTuple[_AjpAny, ...]) -> _AjpList[_AjpAny]:
    out = []
    for name, sub in node.get("properties", {}).items():
        out.append((path + (name,), sub))
        out.extend(_ajp_schema_members(sub, path + (name,)))
    for key in ("if", "then"):
        if key in node:  # conditional members (from.provenance_id of agents)
            out.extend(_ajp_schema_members(node[key], path))
    return out


_AJP_WRONG: _AjpDict[str, _AjpList[_AjpAny]] = {
    "string": [1, 1.5, True, None, [], {}],
    "number": ["0.5", False, None, [], {}],
    "integer": [1.5, "1", True, None],
    "boolean": [0, 1, "true", None],
    "object": ["x", 1, True, None, []],
    "array": ["x", {}, 1, None],
}
_AJP_BAD_TIMES = [
    "2026-03-05", "2026-03-05T10:00:00", "2026-03-05 10:00:00Z", "2026-02-29T00:00:00Z", "2026-03-05T24:00:00Z",
    "2026-03-05T10:00:00+0100", "2026-03-05T10:00:60Z", "2026-03-05T10:00:00Z\n", "", "yesterday",
]


def _ajp_mutations(base: _AjpAny, schema_name: str) -> _AjpAny:
    @_st_ajp.composite
    def mutate(draw: _AjpAny) -> _AjpDict[str, _AjpAny]:
        from ..schemas import load

        doc: _AjpDict[str, _AjpAny] = draw(base)
        members = _ajp_schema_members(load(schema_name), ())
        for _ in range(draw(_st_ajp.integers(1, 2))):
            present = []
            for path, sub in members:
                parent: _AjpAny = doc
                for key in path[:-1]:
                    parent = parent.get(key) if isinstance(parent, dict) else None
                if isinstance(parent, dict) and path[-1] in parent:
                    present.append((parent, path[-1], sub))
            if not present:
                break
            parent, key, sub = draw(_st_ajp.sampled_from(present))
            types = sub.get("type", "string")
            kinds = ["remove", "wrong_type", "extra"]
            if "minimum" in sub or "maximum" in sub:
                kinds.append("range")
            if "enum" in sub or "const" in sub:
                kinds.append("enum")
            if "pattern" in sub:
                kinds.append("pattern")
            if "minLength" in sub:
                kinds.append("length")
            if sub.get("format") == "date-time":
                kinds.append("date_time")
            kind = draw(_st_ajp.sampled_from(kinds))
            if kind == "remove":
                del parent[key]
            elif kind == "wrong_type":
                first = types if isinstance(types, str) else types[0]
                parent[key] = draw(_st_ajp.sampled_from(_AJP_WRONG.get(first, _AJP_WRONG["string"])))
            elif kind == "extra":
                target = parent[key] if isinstance(parent[key], dict) else parent
                target[draw(_AJP_NAME)] = draw(_AJP_SMALL_JSON)
            elif kind == "range":
                choices = []
                if "minimum" in sub:
                    choices += [sub["minimum"] - 1, sub["minimum"] - 1e-9, -1e300]
                if "maximum" in sub:
                    choices += [sub["maximum"] + 1e-9, 2]
                parent[key] = draw(_st_ajp.sampled_from(choices))
            elif kind == "enum":
                parent[key] = draw(_st_ajp.sampled_from(["", "Human", "robot", "done", "JSON", "accepted ", None]))
            elif kind == "pattern":
                parent[key] = draw(_st_ajp.sampled_from(["", "0.1\n", "v0.1", "1", "\u0661.\u0661", "SHA256:ab", "sha256", ":x"]))
            elif kind == "length":
                parent[key] = draw(_st_ajp.sampled_from(["", "job_1"]))
            elif kind == "date_time":
                parent[key] = draw(_st_ajp.sampled_from(_AJP_BAD_TIMES))
        return doc

    return mutate()


def offer_mutations() -> _AjpAny:
    """Near-valid JobOffers: one or two edits (a required member removed, a wrong JSON type, a
    number out of range, an enum or pattern missed, a too-short id, an impossible timestamp, an
    extra member); most are invalid, some stay valid."""
    return _ajp_mutations(job_offers(), "ajp-job-offer")


def result_mutations() -> _AjpAny:
    """Near-valid JobResults (edits as ``offer_mutations``)."""
    return _ajp_mutations(job_results(), "ajp-job-result")


def status_mutations() -> _AjpAny:
    """Near-valid JobStatus messages (edits as ``offer_mutations``)."""
    return _ajp_mutations(job_statuses(), "ajp-job-status")




# -- signed offers a given receiver accepts -------------------------------------------------------------

import itertools as _ajp_itertools  # noqa: E402
import threading as _ajp_threading  # noqa: E402

_SIGNED_COUNTER = _ajp_itertools.count()
_SIGNED_COUNTER_LOCK = _ajp_threading.Lock()


def _next_job_number() -> int:
    with _SIGNED_COUNTER_LOCK:
        return next(_SIGNED_COUNTER)


def signed_offers(
    *,
    sender: _AjpAny,
    to: str,
    now: _AjpAny,
    secret: "str | bytes | None" = None,
    private_key: _AjpAny = None,
) -> _AjpAny:
    """Signed ``JobOffer`` s from ``sender`` to ``to`` that a receiver accepts at ``now``, each with its own job id.

    ``sender``: the offer's ``from`` (``{"type": "human", "id": ...}`` signed with
    ``secret``, or ``{"type": "agent" | "orchestrator", "provenance_id": ...,
    "declaration_url": ...}`` signed with ``private_key``), as ``ajp.new_offer``
    takes it.  ``to``: the receiver's provenance id.  ``now``: the instant the
    offers are issued at (``issued_at``; ``expires_at`` is 1 s to 1 hour later).
    Drawn: the task (type, instruction, input with JSON values that have a
    canonical form), the budget, the context's constraints, the callback.

    Job ids are unique across every example this process draws (``job_hyp`` +
    a drawn part + a process-wide counter), so a replay guard shared between
    examples never answers 409 to a fresh example; a re-run of a failing example
    gets a new id (the rest of it is reproduced).  Raises ``KeyUsageError`` (on
    the first draw) for a key that does not fit the sender type.
    """
    from ..ajp import new_offer

    budgets = _st_ajp.fixed_dictionaries({
        "max_usd": _st_ajp.one_of(_st_ajp.just(0), _st_ajp.integers(0, 1000), _st_ajp.floats(0, 1e6, allow_nan=False)),
        "max_seconds": _st_ajp.integers(1, 3600),
    }, optional={"max_llm_tokens": _st_ajp.integers(1, 10**7)})
    tasks = _st_ajp.fixed_dictionaries({"type": _AJP_NONEMPTY, "instruction": _AJP_NONEMPTY}, optional={
        "input": _st_ajp.dictionaries(_AJP_TEXT, _AJP_SMALL_JSON, max_size=3),
        "output_format": _st_ajp.sampled_from(["json", "text", "markdown"]),
    })

    @_st_ajp.composite
    def draw_offer(draw: _AjpAny) -> _AjpAny:
        job_id = f"job_hyp{draw(_st_ajp.from_regex(r'[0-9a-z]{4}', fullmatch=True))}_{_next_job_number():x}"
        context = {"constraints": draw(_st_ajp.lists(_AJP_NONEMPTY, max_size=2))}
        callback = draw(_st_ajp.one_of(_st_ajp.none(), _st_ajp.fixed_dictionaries({"url": _AJP_URL})))
        return new_offer(sender=sender, to=to, task=draw(tasks), budget=draw(budgets), now=now, secret=secret,
                         private_key=private_key, context=context, callback=callback, job_id=job_id)

    return draw_offer()
