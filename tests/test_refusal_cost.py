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
import time

import pytest

from ajpcore import BadSignature, LegacySignature, signing
from ajpcore.keys import Ed25519PrivateKey
from ajpcore.signing import LEGACY_CHECK_MAX_VALUES, sign, verify

SECRET = "s3cret"
KEY = Ed25519PrivateKey.from_seed(bytes(range(32)))


def best_of(runs, call):
    """The least wall time of ``runs`` calls (the machine is shared: the minimum is the cost)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        try:
            call()
        except (BadSignature, LegacySignature):
            pass
        times.append(time.perf_counter() - start)
    return min(times)


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
    check = best_of(5, lambda: verify(good, **keys))
    refusal = best_of(5, lambda: verify(bad, **keys))
    # Before: the refusal rebuilt the legacy form, ~30-60x the check (0.5 s against 9-19 ms native).
    # The refusal checks twice at most (the fast path, then the full check that explains).
    assert refusal <= 3 * check + 0.01, (refusal, check)


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
