"""The paths that give the GIL away, run from several threads at once: same results as one thread.

The native core lets another thread run while it verifies an Ed25519 signature (the message
read from a pinned buffer), and while a large decode hands its finished tree back to the
collector (native/decoded_tree.pxi, _settled_release); hashlib does while it hashes an HMAC's
bytes.  A tiny switch interval makes the interpreter ask for the GIL all the time, so the
threads really interleave at those points.  No wall-clock thresholds here: the scaling is
measured by bench/thread_scaling.py.
"""

from __future__ import annotations

import gc
import hashlib
import hmac
import sys
import threading
from typing import Any, Callable, Iterator, List

import pytest

from ajpcore import Ed25519PrivateKey, Ed25519PublicKey
from ajpcore.errors import BadSignature

THREADS = 4


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """The interpreter asks the running thread for the GIL every microsecond."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _in_threads(work: Callable[[int], Any], rounds: int) -> List[Any]:
    """``work(k)`` for k in range(rounds) on each of THREADS threads started together: every result."""
    results: List[Any] = []
    errors: List[BaseException] = []
    lock = threading.Lock()
    start = threading.Barrier(THREADS)

    def run() -> None:
        start.wait()
        try:
            mine = [work(k) for k in range(rounds)]
        except BaseException as exc:  # reported by the test, not lost in the thread
            with lock:
                errors.append(exc)
            return
        with lock:
            results.extend(mine)

    pool = [threading.Thread(target=run) for _ in range(THREADS)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert not errors, errors
    assert len(results) == THREADS * rounds
    return results


def _document(seed: int) -> dict:
    return {
        "seed": seed,
        "rows": [{"id": i, "name": f"row {i} of {seed}", "tags": ["a", "b", [i, i + 1]]} for i in range(600)],
    }


def test_large_decodes_in_threads_are_exact_and_tracked(impl, busy_switching):
    # Large enough (>= 16 KiB) for the native decoder to settle its containers and offer the GIL.
    texts = [impl.canonicalize(_document(seed)) for seed in range(3)]
    assert all(len(t) > 16384 for t in texts)
    expected = [_document(seed) for seed in range(3)]

    def decode(k: int) -> Any:
        value = impl.decode(texts[k % 3])
        # Every container a cycle could pass through is back in the collector's lists.
        return value, k % 3, gc.is_tracked(value["rows"]) and gc.is_tracked(value["rows"][-1]["tags"])

    for value, which, tracked in _in_threads(decode, 9):
        assert value == expected[which]
        assert tracked


def test_ed25519_verify_in_threads(core, busy_switching):
    private = Ed25519PrivateKey.from_seed(bytes(range(32)))
    key = Ed25519PublicKey.from_bytes(private.public_key.raw)
    message = bytes(range(256)) * 4096  # 1 MiB
    signature = private.sign(message)
    tampered = bytearray(message)
    tampered[-1] ^= 1
    views = [message, bytearray(message), memoryview(message), memoryview(message)[::1], bytes(tampered)]

    def verify(k: int) -> bool:
        return core.ed25519_sodium_verify(signature, views[k % len(views)], key.raw)

    results = _in_threads(verify, 10)
    assert results.count(False) == 2 * THREADS  # the tampered message, twice per thread
    assert results.count(True) == 8 * THREADS


def test_ed25519_verify_pins_a_bytearray(core, busy_switching):
    # While one thread verifies a message held in a bytearray, others resize it back and
    # forth: a resize either happens between verifications (the verify then sees the message
    # one byte longer, and says False) or is refused while the buffer is held (BufferError);
    # never a read of freed memory, never an error from the verify.
    private = Ed25519PrivateKey.from_seed(bytes(range(32)))
    message = bytearray(b"m" * (1 << 20))
    signature = private.sign(bytes(message))
    stop = threading.Event()
    outcomes: List[str] = []

    def resizer() -> None:
        while not stop.is_set():
            try:
                message.append(0x6D)
            except BufferError:
                outcomes.append("refused")
                continue
            while True:  # take the byte back, however long the buffer stays held
                try:
                    del message[-1]
                    break
                except BufferError:
                    outcomes.append("refused")

    others = [threading.Thread(target=resizer) for _ in range(2)]
    for t in others:
        t.start()
    try:
        verdicts = [core.ed25519_sodium_verify(signature, message, private.public_key.raw) for _ in range(20)]
    finally:
        stop.set()
        for t in others:
            t.join()
    assert set(verdicts) <= {True, False}
    assert bytes(message) == b"m" * (1 << 20)
    assert core.ed25519_sodium_verify(signature, message, private.public_key.raw)


def test_ed25519_verify_refusals_are_the_checks(core):
    # The strict checks run first, with the check's own errors.
    private = Ed25519PrivateKey.from_seed(bytes(range(32)))
    signature = bytearray(private.sign(b"x"))
    signature[63] |= 0xF0  # S >= L
    with pytest.raises(BadSignature, match="S is not reduced"):
        core.ed25519_sodium_verify(bytes(signature), b"x", private.public_key.raw)
    with pytest.raises(BadSignature, match="must be 64 bytes"):
        core.ed25519_sodium_verify(b"\x00" * 63, b"x", private.public_key.raw)


def test_hmac_of_bytes_in_threads(impl, busy_switching):
    secret = b"thread-secret"
    bodies = [bytes([k]) * (1 << 20) + b"tail" for k in range(3)]
    expected = [hmac.new(secret, body, hashlib.sha256).digest() for body in bodies]

    def tag(k: int) -> Any:
        mac = impl.HmacSigner(secret)
        mac.update(memoryview(bodies[k % 3])[:4096])
        mac.update(memoryview(bodies[k % 3])[4096:])
        return mac.finalize(), k % 3

    for digest, which in _in_threads(tag, 6):
        assert digest == expected[which]


def test_ed25519_verify_reads_a_strided_view_in_order(core):
    # A view the buffer protocol cannot hand over whole is read as its bytes, in order.
    private = Ed25519PrivateKey.from_seed(bytes(range(32)))
    view = memoryview(bytes(range(256)) * 16)[::3]
    assert core.ed25519_sodium_verify(private.sign(bytes(view)), view, private.public_key.raw)
    assert not core.ed25519_sodium_verify(private.sign(bytes(view)[1:]), view, private.public_key.raw)
