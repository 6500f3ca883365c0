"""IATP-001 section 2.3 trust score and IATP-002 section 4 undo decision: every term, every edge."""

import datetime as dt
import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ajpcore import ValidationError
from ajpcore.iatp import (
    CapabilityManifest,
    TrustLevel,
    trust_score,
    undo_decision,
)
from ajpcore.strategies import manifests

BASE = {"verified_partner": 10, "trusted": 7, "standard": 5, "unknown": 2, "untrusted": 0}


def manifest(trust_level="standard", reversibility=None, privacy=None):
    doc = {"identity": {"agent_id": "a", "owner": "o"}, "trust_level": trust_level, "protocol_version": "1.0"}
    if reversibility is not None:
        doc["reversibility"] = reversibility
    if privacy is not None:
        doc["privacy"] = privacy
    return CapabilityManifest.from_dict(doc)


# -- trust score ------------------------------------------------------------------------------


@pytest.mark.parametrize("level", sorted(BASE))
def test_base_score_by_trust_level(level):
    result = trust_score(manifest(level))
    assert result.score == BASE[level]
    assert result.terms == ((f"trust_level {level}", BASE[level]),)


@pytest.mark.parametrize(
    "reversibility,delta",
    [(None, 0), ({"level": "none"}, 0), ({"level": "partial"}, 2), ({"level": "full", "undo_window_seconds": 0}, 2)],
)
def test_reversible_means_level_other_than_none(reversibility, delta):
    assert trust_score(manifest("standard", reversibility)).score == 5 + delta


@pytest.mark.parametrize(
    "retention,delta", [(None, 0), ("ephemeral", 1), ("temporary", 0), ("permanent", -1), ("forever", -1)]
)
def test_retention_terms(retention, delta):
    privacy = {} if retention is None else {"retention_policy": retention}
    assert trust_score(manifest("standard", privacy=privacy)).score == 5 + delta


@pytest.mark.parametrize("field,delta", [("human_in_loop", -2), ("training_consent", -1)])
def test_human_in_loop_and_training_consent(field, delta):
    assert trust_score(manifest("standard", privacy={field: True})).score == 5 + delta
    assert trust_score(manifest("standard", privacy={field: False})).score == 5


def test_every_combination_matches_the_formula_and_is_clamped():
    for level, rev, retention, human, training in itertools.product(
        BASE, [None, "none", "partial", "full"], [None, "ephemeral", "temporary", "permanent", "forever"],
        [None, False, True], [None, False, True],
    ):
        privacy = {}
        if retention:
            privacy["retention_policy"] = retention
        if human is not None:
            privacy["human_in_loop"] = human
        if training is not None:
            privacy["training_consent"] = training
        m = manifest(level, None if rev is None else {"level": rev}, privacy)
        raw = (
            BASE[level]
            + (2 if rev in ("partial", "full") else 0)
            + {"ephemeral": 1, "permanent": -1, "forever": -1}.get(retention, 0)
            - (2 if human else 0)
            - (1 if training else 0)
        )
        result = trust_score(m)
        assert result.score == max(0, min(10, raw))
        assert sum(points for _, points in result.terms) == raw
        assert result.decision == ("allow" if result.score >= 7 else "warn")
        assert result.status == (200 if result.score >= 7 else 449)


def test_clamps_at_both_ends():
    top = trust_score(manifest("verified_partner", {"level": "full"}, {"retention_policy": "ephemeral"}))
    assert top.score == 10 and sum(p for _, p in top.terms) == 13
    bottom = trust_score(
        manifest("untrusted", {"level": "none"}, {"retention_policy": "forever", "human_in_loop": True, "training_consent": True})
    )
    assert bottom.score == 0 and sum(p for _, p in bottom.terms) == -4


def test_threshold_is_seven():
    assert trust_score(manifest("trusted")).decision == "allow"  # exactly 7
    assert trust_score(manifest("trusted", privacy={"training_consent": True})).decision == "warn"  # 6
    warn = trust_score(manifest("unknown", {"level": "none"}, {"retention_policy": "permanent"}))
    assert warn.reasons == ("low trust score (1/10)", "no reversibility support", "data stored permanently")


def test_sensitive_data_blocks():
    permanent = manifest("verified_partner", {"level": "full"}, {"retention_policy": "permanent"})
    assert trust_score(permanent).decision == "allow"
    blocked = trust_score(permanent, sensitive_data={"credit_card"})
    assert (blocked.decision, blocked.status) == ("block", 403)
    temporary = manifest("verified_partner", {"level": "full"}, {})
    assert trust_score(temporary, sensitive_data={"credit_card"}).decision == "allow"
    assert trust_score(temporary, sensitive_data={"ssn"}).decision == "block"  # temporary is the default
    assert trust_score(temporary, sensitive_data="ssn").decision == "block"
    ephemeral = manifest("verified_partner", {"level": "full"}, {"retention_policy": "ephemeral"})
    assert trust_score(ephemeral, sensitive_data=["ssn", "credit_card"]).decision == "allow"
    with pytest.raises(ValueError):
        trust_score(ephemeral, sensitive_data={"passport"})
    with pytest.raises(TypeError):
        trust_score({"trust_level": "trusted"})


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(doc=manifests())
def test_score_is_always_an_int_in_range(doc):
    result = trust_score(CapabilityManifest.from_dict(doc))
    assert type(result.score) is int and 0 <= result.score <= 10
    assert result.terms[0][1] == BASE[doc["trust_level"]]


# -- undo decision ------------------------------------------------------------------------------------

T0 = "2026-01-23T12:00:00Z"


def at(seconds):
    return dt.datetime(2026, 1, 23, 12, 0, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=seconds)


def test_irreversible():
    for rev in (None, {"level": "none", "undo_window_seconds": 0, "compensation_method": None}):
        decision = undo_decision(manifest(reversibility=rev), executed_at=T0, now=at(1))
        assert (decision.allowed, decision.reason) == (False, "irreversible")


def test_time_window_boundaries():
    m = manifest(reversibility={"level": "partial", "undo_window_seconds": 3600})
    inside = undo_decision(m, executed_at=T0, now=at(30))
    assert inside.allowed and inside.deadline == at(3600)
    assert undo_decision(m, executed_at=T0, now=at(3600)).allowed  # the last second still counts
    late = undo_decision(m, executed_at=T0, now=at(3601))
    assert (late.allowed, late.reason) == (False, "undo window expired")
    late_fraction = undo_decision(m, executed_at=T0, now="2026-01-23T13:00:00.001Z")
    assert not late_fraction.allowed


def test_zero_or_absent_window_is_unlimited():
    for rev in ({"level": "full", "undo_window_seconds": 0}, {"level": "full"}):
        decision = undo_decision(manifest(reversibility=rev), executed_at=T0, now=at(10**9))
        assert decision.allowed and decision.deadline is None


def test_offsets_are_compared_as_instants():
    m = manifest(reversibility={"level": "partial", "undo_window_seconds": 60})
    assert undo_decision(m, executed_at="2026-01-23T13:00:00+01:00", now="2026-01-23T12:01:00Z").allowed
    assert not undo_decision(m, executed_at="2026-01-23T13:00:00+01:00", now="2026-01-23T07:01:01-05:00").allowed


def test_until_state():
    m = manifest(
        reversibility={
            "level": "partial",
            "undo_window_seconds": 3600,
            "undo_conditions": {"until_state": "shipped", "check_endpoint": "GET /orders/{order_id}/status"},
        }
    )
    shipped = undo_decision(m, executed_at=T0, now=at(10), state="shipped")
    assert (shipped.allowed, shipped.reason) == (False, "state `shipped` reached")
    history = undo_decision(m, executed_at=T0, now=at(10), state=["placed", "shipped", "delivered"])
    assert not history.allowed
    # Section 4.2: "until it ships, regardless of time".
    assert undo_decision(m, executed_at=T0, now=at(10**6), state="packing").allowed
    # State unknown: the time window decides.
    assert undo_decision(m, executed_at=T0, now=at(10)).allowed
    assert undo_decision(m, executed_at=T0, now=at(3601)).reason == "undo window expired"


def test_irreversible_wins_over_state():
    m = manifest(reversibility={"level": "none", "undo_conditions": {"until_state": "shipped"}})
    assert undo_decision(m, executed_at=T0, now=at(1), state="placed").reason == "irreversible"


@pytest.mark.parametrize(
    "executed_at", ["2026-01-23", "2026-01-23T12:00:00", dt.datetime(2026, 1, 23), 1737633600, None]
)
def test_times_must_be_aware_rfc_3339(executed_at):
    m = manifest(reversibility={"level": "full"})
    with pytest.raises(ValidationError, match="executed_at"):
        undo_decision(m, executed_at=executed_at, now=at(0))


def test_trust_level_enum_members():
    assert [t.value for t in TrustLevel] == list(BASE)


# -- specification advice -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "reversibility,privacy,expected",
    [
        ({"level": "full", "compensation_method": "rollback"}, None, []),
        ({"level": "full", "compensation_method": "undo_it"}, None, ["$.reversibility.compensation_method"]),
        ({"level": "partial", "compensation_method": "custom:"}, None, ["$.reversibility.compensation_method"]),
        (
            {"level": "partial", "compensation_method": "custom:email_recall"},
            None,
            ["$.reversibility.compensation_endpoint"],
        ),
        (
            {"level": "none", "compensation_method": "refund", "compensation_notes": "n"},
            None,
            ["$.reversibility.compensation_method"],
        ),
        ({"level": "partial", "compensation_method": None}, None, ["$.reversibility.compensation_method"]),
        ({"level": "none", "compensation_method": None}, None, ["$.reversibility.compensation_notes"]),
        ({"level": "none", "compensation_method": None, "compensation_notes": "n"}, None, []),
        (None, {"retention_policy": "temporary"}, ["$.privacy.retention_duration_seconds"]),
        (None, {"retention_policy": "temporary", "retention_duration_seconds": 60}, []),
        (None, {}, []),
    ],
)
def test_spec_warnings(reversibility, privacy, expected):
    from ajpcore.iatp import spec_warnings

    warnings = spec_warnings(manifest("standard", reversibility, privacy))
    assert [path for path, _ in warnings] == expected
    assert all(message for _, message in warnings)


def test_huge_window_and_clock_skew():
    m = manifest(reversibility={"level": "full", "undo_window_seconds": 2**53 - 1})
    decision = undo_decision(m, executed_at=T0, now="9999-12-31T23:59:59Z")
    assert decision.allowed and decision.deadline == dt.datetime.max.replace(tzinfo=dt.timezone.utc)
    short = manifest(reversibility={"level": "full", "undo_window_seconds": 1})
    assert undo_decision(short, executed_at=T0, now=at(-3600)).allowed  # now before execution


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    doc=manifests(),
    executed=st.datetimes(timezones=st.just(dt.timezone.utc)),
    now=st.datetimes(timezones=st.just(dt.timezone.utc)),
    state=st.none() | st.text(max_size=8) | st.lists(st.text(max_size=8), max_size=3),
)
def test_undo_decision_always_decides(doc, executed, now, state):
    decision = undo_decision(CapabilityManifest.from_dict(doc), executed_at=executed, now=now, state=state)
    assert isinstance(decision.allowed, bool) and decision.reason
