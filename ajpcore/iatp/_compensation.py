"""IATP-002 compensation: request, response, the saga's compensation chain, audit events."""

from __future__ import annotations

from typing import Optional, Sequence, Tuple, Union

from ..errors import ValidationError, format_path
from ._enums import ABSENT, ChainStatus, _Absent
from ._model import _Part
from .._envelope import member


# -- compensation (IATP-002) ------------------------------------------------


class CompensationRequest(_Part):
    """Body of ``POST /compensate/{transaction_id}``: ``reason`` and RFC 3339 ``timestamp``."""

    __slots__ = ()
    _SCHEMA = ("iatp-compensation-request",)

    reason: str
    timestamp: str


class CompensationResponse(_Part):
    """An agent's answer to a compensation request (``success``, amounts, time, ``error``)."""

    __slots__ = ()
    _SCHEMA = ("iatp-compensation-response",)

    success: bool
    compensation_applied: Optional[str] = None
    amount_returned: Optional[float] = None
    fee_charged: Optional[float] = None
    completion_time_ms: Optional[int] = None
    error: Optional[str] = None


class ChainEntry(_Part):
    """One transaction of a saga's compensation chain.

    ``status`` ``failed`` means the transaction itself failed (nothing to undo);
    a compensation that was tried and failed is ``failed`` with the extra member
    ``compensation_attempted: true`` (what ``CompensationChain.record`` writes),
    since IATP-002 uses the one word for both.
    """

    __slots__ = ()
    _SCHEMA = ("iatp-compensation-chain-entry",)

    agent_id: str
    transaction_id: str
    status: ChainStatus
    compensation_method: Union[str, None, _Absent] = member(default=ABSENT)


class CompensationChain(_Part):
    """The saga record of one trace (IATP-002 section 5.2).

    ``entries`` (JSON ``compensation_chain``) are in compensation order: the
    transaction executed last comes first, because a saga undoes its steps
    backwards.  ``from_execution`` builds a chain from the steps in call order;
    ``next_to_compensate`` and ``record`` drive the undo one step at a time.
    """

    __slots__ = ()
    _SCHEMA = ("iatp-compensation-chain",)

    trace_id: str
    entries: Tuple[ChainEntry, ...] = member(json="compensation_chain")

    @classmethod
    def from_execution(cls, trace_id: str, steps: Sequence[ChainEntry]) -> "CompensationChain":
        """The chain for ``steps`` given in the order they executed.

        Each ``completed`` step becomes ``pending`` (it must be undone); a
        ``failed`` step stays ``failed`` (nothing of it to undo).  The result
        lists the steps backwards, the order in which they are compensated.
        Raises ``ValidationError`` for a step in any other status.
        """
        entries = []
        errors = []
        for i, step in enumerate(steps):
            if step.status is ChainStatus.COMPLETED:
                step = step.replace(status=ChainStatus.PENDING)
            elif step.status is not ChainStatus.FAILED:
                errors.append((format_path(["steps", i, "status"]), "Expected `completed` or `failed` for an executed step, got " f"`{step.status.value}`"))
            entries.append(step)
        if errors:
            raise ValidationError(errors)
        return cls(trace_id=trace_id, entries=tuple(reversed(entries)))

    def next_to_compensate(self) -> Optional[ChainEntry]:
        """The first ``pending`` entry in compensation order, or ``None`` when none is left.

        Stops at ``None`` too when an earlier compensation failed after being
        attempted: a saga does not undo an older step past a newer one it could
        not undo.
        """
        for entry in self.entries:
            if entry.status is ChainStatus.PENDING:
                return entry
            if entry.status is ChainStatus.FAILED and entry.extra.get("compensation_attempted") is True:
                return None
        return None

    def record(self, transaction_id: str, status: Union[ChainStatus, str]) -> "CompensationChain":
        """A copy in which the entry of ``transaction_id`` has ``status``
        (``compensated``, or ``failed`` marked ``compensation_attempted: true``).

        Only the entry ``next_to_compensate`` names may be recorded, which keeps
        the reverse order.  Raises ``ValidationError`` otherwise.
        """
        status = ChainStatus(status)
        nxt = self.next_to_compensate()
        if nxt is None or nxt.transaction_id != transaction_id:
            expected = "nothing" if nxt is None else f"`{nxt.transaction_id}`"
            raise ValidationError([(format_path(["compensation_chain"]), f"Out of order: `{transaction_id}` recorded while {expected} is next to compensate")])
        if status not in (ChainStatus.COMPENSATED, ChainStatus.FAILED):
            raise ValidationError([(format_path(["status"]), f"Expected `compensated` or `failed`, got `{status.value}`")])
        entries = []
        for entry in self.entries:
            if entry is nxt:
                extra = dict(entry.extra)
                if status is ChainStatus.FAILED:
                    extra["compensation_attempted"] = True
                entry = entry.replace(status=status, extra=extra)
            entries.append(entry)
        return self.replace(entries=tuple(entries))

    @property
    def complete(self) -> bool:
        """True when no entry is ``pending``."""
        return all(e.status is not ChainStatus.PENDING for e in self.entries)


class AuditEvent(_Part):
    """One audit-trail record of an undo (IATP-002 section 8.2)."""

    __slots__ = ()
    _SCHEMA = ("iatp-audit-event",)

    event: str
    trace_id: str
    timestamp: str
    requested_by: Optional[str] = None
    reason: Optional[str] = None
    result: Optional[str] = None


