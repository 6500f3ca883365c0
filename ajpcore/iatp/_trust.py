"""The trust score of IATP-001 section 2.3: allow, warn or block."""

from __future__ import annotations

import dataclasses
from typing import Iterable, List, Tuple

from ._enums import ReversibilityLevel, RetentionPolicy, TrustLevel
from ._manifest import CapabilityManifest, Privacy
from ._model import _DATACLASS


# ---------------------------------------------------------------------------
# Trust score (IATP-001 section 2.3)
# ---------------------------------------------------------------------------

_BASE_SCORE = {
    TrustLevel.VERIFIED_PARTNER: 10,
    TrustLevel.TRUSTED: 7,
    TrustLevel.STANDARD: 5,
    TrustLevel.UNKNOWN: 2,
    TrustLevel.UNTRUSTED: 0,
}
ALLOW_THRESHOLD = 7
"""Lowest trust score that IATP-001 section 2.3 allows without a warning."""


@dataclasses.dataclass(**_DATACLASS)
class TrustScore:
    """The outcome of ``trust_score``.

    ``score`` is 0..10; ``decision`` is ``"allow"`` (score >= 7), ``"warn"``
    (answer 449 and require an override) or ``"block"`` (403, only when
    sensitive data meets the retention the specification forbids for it).
    ``terms`` lists each rule that applied as ``(label, points)``, the base
    first; ``reasons`` says why the decision is not ``allow``.
    """

    score: int
    decision: str
    status: int
    terms: Tuple[Tuple[str, int], ...]
    reasons: Tuple[str, ...]


def trust_score(
    manifest: CapabilityManifest, *, sensitive_data: Iterable[str] = ()
) -> TrustScore:
    """IATP-001 section 2.3: score a manifest and decide allow / warn / block.

    Base by ``trust_level`` (verified_partner 10, trusted 7, standard 5,
    unknown 2, untrusted 0); +2 when ``reversibility.level`` is ``full`` or
    ``partial`` (a manifest that declares no reversibility gets nothing); +1
    for ``ephemeral`` retention, -1 for ``permanent`` or ``forever``; -2 when
    ``human_in_loop``; -1 when ``training_consent``; absent privacy members take
    the schema defaults (``temporary``, false, false).  Clamped to 0..10.
    Score >= 7 allows (200), anything lower warns (449).

    ``sensitive_data`` names what the request carries: ``"credit_card"`` with
    ``permanent`` or ``forever`` retention, or ``"ssn"`` with any retention but
    ``ephemeral``, blocks (403) whatever the score.  Raises ``ValueError`` for
    another name.
    """
    if not isinstance(manifest, CapabilityManifest):
        raise TypeError(f"Expected `CapabilityManifest`, got `{type(manifest).__name__}`")
    sensitive = {sensitive_data} if isinstance(sensitive_data, str) else set(sensitive_data)
    unknown_kinds = sensitive - {"credit_card", "ssn"}
    if unknown_kinds:
        raise ValueError(f"unknown sensitive data kind(s): {sorted(unknown_kinds)}")
    level = manifest.trust_level
    terms: List[Tuple[str, int]] = [(f"trust_level {level.value}", _BASE_SCORE[level])]
    rev = manifest.reversibility
    if rev is not None and rev.level is not ReversibilityLevel.NONE:
        terms.append((f"reversibility {rev.level.value}", 2))
    privacy = (manifest.privacy or Privacy()).with_defaults()
    retention = privacy.retention_policy
    if retention is RetentionPolicy.EPHEMERAL:
        terms.append(("retention ephemeral", 1))
    elif retention in (RetentionPolicy.PERMANENT, RetentionPolicy.FOREVER):
        terms.append((f"retention {retention.value}", -1))
    if privacy.human_in_loop:
        terms.append(("human in loop", -2))
    if privacy.training_consent:
        terms.append(("training consent", -1))
    score = max(0, min(10, sum(points for _label, points in terms)))

    reasons: List[str] = []
    if "credit_card" in sensitive and retention in (RetentionPolicy.PERMANENT, RetentionPolicy.FOREVER):
        reasons.append(f"credit card data with {retention.value} retention")
    if "ssn" in sensitive and retention is not RetentionPolicy.EPHEMERAL:
        reasons.append(f"SSN with {retention.value} retention")
    if reasons:
        return TrustScore(score=score, decision="block", status=403, terms=tuple(terms), reasons=tuple(reasons))
    if score >= ALLOW_THRESHOLD:
        return TrustScore(score=score, decision="allow", status=200, terms=tuple(terms), reasons=())
    reasons.append(f"low trust score ({score}/10)")
    if rev is None or rev.level is ReversibilityLevel.NONE:
        reasons.append("no reversibility support")
    if retention in (RetentionPolicy.PERMANENT, RetentionPolicy.FOREVER):
        reasons.append("data stored permanently")
    return TrustScore(score=score, decision="warn", status=449, terms=tuple(terms), reasons=tuple(reasons))
