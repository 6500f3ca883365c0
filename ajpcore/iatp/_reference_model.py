"""Conversion from the reference Python package's internal manifest model to a wire manifest."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .._jsoncopy import copy_json_collecting
from ..errors import ValidationError, format_path
from ._manifest import CapabilityManifest


# ---------------------------------------------------------------------------
# The reference Python package's internal model
# ---------------------------------------------------------------------------

# Durations of the reference model's `undo_window` ("24h", "7d") and `sla_latency`
# ("2000ms", "5s"): digits and one unit.
_DURATION = re.compile(r"([0-9]+)(ms|s|m|h|d)", re.ASCII)
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
# Where the reference model's defaults differ from the wire schema's, they are
# written out, so the wire manifest says what the model meant.
_REFERENCE_PRIVACY_DEFAULTS = {"human_review": False, "encryption_at_rest": True, "encryption_in_transit": True}


def manifest_from_reference_model(
    model: Mapping[str, Any], *, owner: str, protocol_version: str = "1.0"
) -> CapabilityManifest:
    """Convert the reference Python package's internal manifest model to a wire manifest.

    That model (``agent_id``, ``agent_version``, ``trust_level``,
    ``capabilities`` with ``reversibility``, ``idempotency``, ``undo_window``
    such as ``"24h"``, ``sla_latency`` such as ``"2000ms"``, ``rate_limit`` in
    requests per minute; ``privacy_contract`` with ``retention``,
    ``storage_location``, ``human_review``, encryption flags) is not what the
    published schema describes: it has no ``identity.owner`` (give ``owner``)
    and no ``protocol_version``.  Mapping: ``reversibility`` ->
    ``reversibility.level`` (default ``none``), ``undo_window`` ->
    ``undo_window_seconds``, ``sla_latency`` -> ``capabilities.sla_latency_ms``,
    ``rate_limit`` -> ``rate_limiting.requests_per_minute``, ``retention`` ->
    ``privacy.retention_policy``, ``human_review`` -> ``privacy.human_in_loop``;
    the model's defaults (trust ``standard``, no human review, encrypted at rest
    and in transit) are written out; ``agent_version``, ``scopes`` and other
    members are kept as extra members.  Raises ``ValidationError``: first for
    what cannot be converted (paths into ``model``), then for anything the
    converted manifest breaks (paths into the wire manifest).
    """
    errors: List[Tuple[str, str]] = []
    source = copy_json_collecting(model, errors)
    if errors:
        raise ValidationError(errors)
    if not isinstance(source, dict):
        raise ValidationError([("$", f"Expected `object`, got `{type(model).__name__}`")])

    def duration_ms(value: Any, where: List[Any]) -> Optional[int]:
        m = _DURATION.fullmatch(value) if isinstance(value, str) else None
        if m is None:
            errors.append((format_path(where), f"Expected a duration such as `24h` or `2000ms`, got `{value!r}`"))
            return None
        return int(m.group(1)) * _UNIT_MS[m.group(2)]

    capabilities = source.pop("capabilities", None)
    privacy_contract = source.pop("privacy_contract", None)
    for name, value in (("capabilities", capabilities), ("privacy_contract", privacy_contract)):
        if not isinstance(value, dict):
            errors.append((format_path([name]), "Expected `object`" if value is not None else f"Object missing required field `{name}`"))
    if errors:
        raise ValidationError(errors)
    assert isinstance(capabilities, dict) and isinstance(privacy_contract, dict)

    doc: Dict[str, Any] = {
        "identity": {"agent_id": source.pop("agent_id", None), "owner": owner},
        "trust_level": source.pop("trust_level", "standard"),
        "protocol_version": protocol_version,
    }
    caps: Dict[str, Any] = {}
    reversibility: Dict[str, Any] = {"level": capabilities.pop("reversibility", "none")}
    if "idempotency" in capabilities:
        caps["idempotency"] = capabilities.pop("idempotency")
    if "undo_window" in capabilities:
        window = capabilities.pop("undo_window")
        if window is not None:
            ms = duration_ms(window, ["capabilities", "undo_window"])
            if ms is not None and ms % 1000:
                errors.append((format_path(["capabilities", "undo_window"]), "An undo window is whole seconds"))
            elif ms is not None:
                reversibility["undo_window_seconds"] = ms // 1000
    if "sla_latency" in capabilities:
        latency = capabilities.pop("sla_latency")
        if latency is not None:
            ms = duration_ms(latency, ["capabilities", "sla_latency"])
            if ms is not None:
                caps["sla_latency_ms"] = ms
    rate_limit = capabilities.pop("rate_limit", None)
    caps.update(capabilities)  # members the model does not name stay with the capabilities
    privacy: Dict[str, Any] = {}
    if "retention" not in privacy_contract:
        errors.append((format_path(["privacy_contract"]), "Object missing required field `retention`"))
    else:
        privacy["retention_policy"] = privacy_contract.pop("retention")
    if "storage_location" in privacy_contract:
        location = privacy_contract.pop("storage_location")
        if location is not None:
            privacy["storage_location"] = location
    for name, default in _REFERENCE_PRIVACY_DEFAULTS.items():
        target = "human_in_loop" if name == "human_review" else name
        privacy[target] = privacy_contract.pop(name, default)
    privacy.update(privacy_contract)
    if errors:
        raise ValidationError(errors)
    doc["capabilities"] = caps
    doc["reversibility"] = reversibility
    doc["privacy"] = privacy
    if rate_limit is not None:
        doc["rate_limiting"] = {"requests_per_minute": rate_limit}
    doc.update(source)  # agent_version, scopes and anything else
    return CapabilityManifest._from_checked(doc)
