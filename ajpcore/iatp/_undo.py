"""The undo decision of IATP-002 section 4: time window, ``until_state``."""

from __future__ import annotations

import dataclasses
import datetime as _dt
from typing import Iterable, Optional, Union

from ._enums import ReversibilityLevel
from ._manifest import CapabilityManifest
from ._model import _DATACLASS, _parse_time


# ---------------------------------------------------------------------------
# Undo decision (IATP-002 section 4)
# ---------------------------------------------------------------------------


@dataclasses.dataclass(**_DATACLASS)
class UndoDecision:
    """The outcome of ``undo_decision``: ``allowed``, a ``reason`` and the ``deadline``
    (the last instant of the time window, ``None`` when no time limit applies, the
    largest ``datetime`` when the window reaches beyond year 9999)."""

    allowed: bool
    reason: str
    deadline: Optional[_dt.datetime] = None


def undo_decision(
    manifest: CapabilityManifest,
    *,
    executed_at: Union[str, _dt.datetime],
    now: Union[str, _dt.datetime],
    state: Union[str, Iterable[str], None] = None,
) -> UndoDecision:
    """May the operation executed at ``executed_at`` still be undone at ``now``?

    IATP-002 section 4: ``reversibility.level`` ``none`` (or no reversibility
    declared) is ``"irreversible"``.  With ``undo_conditions.until_state``
    declared and ``state`` known (the current state, or an iterable of every
    state reached so far), reaching that state refuses (``"state `shipped`
    reached"``) and not reaching it allows whatever the time (section 4.2:
    "until it ships, regardless of time").  Otherwise the time window applies:
    ``undo_window_seconds`` 0 (or absent) means no limit; else undo is allowed
    while ``now - executed_at <= undo_window_seconds`` and refused after
    (``"undo window expired"``).  Times are aware ``datetime`` objects or strict
    RFC 3339 strings; raises ``ValidationError`` for anything else.
    """
    if not isinstance(manifest, CapabilityManifest):
        raise TypeError(f"Expected `CapabilityManifest`, got `{type(manifest).__name__}`")
    executed = _parse_time(executed_at, "executed_at")
    current = _parse_time(now, "now")
    rev = manifest.reversibility
    if rev is None or rev.level is ReversibilityLevel.NONE:
        return UndoDecision(allowed=False, reason="irreversible")
    until = rev.undo_conditions.until_state if rev.undo_conditions is not None else None
    if until is not None and state is not None:
        reached = {state} if isinstance(state, str) else set(state)
        if until in reached:
            return UndoDecision(allowed=False, reason=f"state `{until}` reached")
        return UndoDecision(allowed=True, reason=f"state `{until}` not reached")
    window = rev.undo_window_seconds
    if not window:
        return UndoDecision(allowed=True, reason="no undo time limit")
    # Exact integer microseconds: a window may be far larger than datetime's range.
    elapsed = current - executed
    elapsed_us = (elapsed.days * 86_400 + elapsed.seconds) * 1_000_000 + elapsed.microseconds
    try:
        deadline = executed + _dt.timedelta(seconds=window)
    except OverflowError:  # beyond year 9999
        deadline = _dt.datetime.max.replace(tzinfo=_dt.timezone.utc)
    if elapsed_us > window * 1_000_000:
        return UndoDecision(allowed=False, reason="undo window expired", deadline=deadline)
    return UndoDecision(allowed=True, reason="within undo window", deadline=deadline)
