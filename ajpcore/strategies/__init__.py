"""Public hypothesis strategies for ajpcore's inputs, for tests, benches and downstream fuzzing.

``json_values()`` draws JSON values that have a canonical form (I-JSON); the
envelope strategies draw valid AJP/IATP messages and near-valid mutations.
Requires ``hypothesis``, the ``strategies`` extra (``pip install 'ajpcore[strategies]'``);
without it the import raises ModuleNotFoundError naming that extra.  The rest of
ajpcore never imports hypothesis.
"""

from __future__ import annotations

try:
    import hypothesis as _hypothesis  # noqa: F401  (checked here, before the modules that use it)
except ModuleNotFoundError as _exc:  # pragma: no cover - exercised by tests/project/test_packaging.py in a subprocess
    if _exc.name != "hypothesis":
        raise
    raise ModuleNotFoundError(
        "ajpcore.strategies needs hypothesis: pip install 'ajpcore[strategies]'", name="hypothesis"
    ) from None

from ._ajp import (
    job_offers,
    job_results,
    job_statuses,
    offer_mutations,
    result_mutations,
    signed_offers,
    status_mutations,
)
from ._iatp import _iatp_date_time, manifest_mutations, manifests
from ._json import json_characters, json_floats, json_ints, json_strings, json_values

__all__ = [
    "json_characters",
    "json_strings",
    "json_floats",
    "json_ints",
    "json_values",
    "job_offers",
    "signed_offers",
    "job_results",
    "job_statuses",
    "offer_mutations",
    "result_mutations",
    "status_mutations",
    "manifests",
    "manifest_mutations",
]
