"""Public hypothesis strategies for ajpcore's inputs, for tests, benches and downstream fuzzing.

``json_values()`` draws JSON values that have a canonical form (I-JSON); the
envelope strategies draw valid AJP/IATP messages and near-valid mutations.
Requires ``hypothesis`` (an optional dependency: ``pip install ajpcore[test]``).
"""

from __future__ import annotations

# -- JSON values --


# -- AJP envelopes --


# -- IATP manifests --
