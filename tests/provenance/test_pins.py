"""Key pins: first use, rotation only by a notice signed by the pinned key, chains (the pin contract,
on every store: memory, file, SQLite, Redis and the asyncio twins), and a pin file that survives a
crash mid-write."""

from __future__ import annotations

import json
import os
import signal
import sys
import textwrap

import pytest

from ajpcore import (
    AjpError,
    Ed25519PrivateKey,
    KeyPinsCorrupt,
    KeyRotated,
    KeyRotationRefused,
    KeyUsageError,
    SenderIdentityError,
    ValidationError,
)
from ajpcore.provenance import FileKeyPins, sign_notice
from conftest import run_python
from state_servers import pins, redis_url  # noqa: F401 (fixtures: the pin contract runs on every store)

PID = "provenance:domain:agent.example.com"
A, B, C = (Ed25519PrivateKey.from_seed(bytes([i]) * 32) for i in (1, 2, 3))


def rotation(old: Ed25519PrivateKey, new: Ed25519PrivateKey, *, pid: str = PID, n: str = "n-1", at: str = "") -> dict:
    """A key-rotation notice ``n`` (``n-<k>``, issued k seconds after 10:00 unless ``at`` says when)."""
    at = at or f"2026-09-24T10:00:{int(n.rsplit('-', 1)[1]):02d}Z"
    return sign_notice(
        {
            "notice": "0.1",
            "id": n,
            "event": "key-rotation",
            "provenance_id": pid,
            "key_fingerprint": old.public_key.fingerprint,
            "issued_at": at,
            "claims": {"new_public_key": new.public_key.to_string(), "reason": "routine"},
        },
        old,
    )


def fp(key: Ed25519PrivateKey) -> str:
    return key.public_key.fingerprint


def test_every_store_is_key_pins(pins):
    inner = getattr(pins, "store", pins)  # an asyncio store behind the test's facade
    for method in ("check", "accept_rotation", "pinned", "history"):
        assert callable(getattr(inner, method))
    assert pins.pinned(PID) is None and pins.history(PID) == ()


def test_first_use_pins_then_same_key_passes_then_other_key_raises(pins):
    pins.check(PID, fp(A))
    pins.check(PID, fp(A), A.public_key)
    assert pins.pinned(PID) == fp(A)
    with pytest.raises(KeyRotated) as exc:
        pins.check(PID, fp(B))
    err = exc.value
    assert isinstance(err, SenderIdentityError) and isinstance(err, AjpError)
    assert (err.status, err.code, err.pinned, err.presented) == (403, "KEY_ROTATED", fp(A), fp(B))
    assert err.error_body()["code"] == "KEY_ROTATED"
    assert pins.pinned(PID) == fp(A)


def test_chain_a_b_c_one_step_at_a_time(pins):
    pins.check(PID, fp(A), A.public_key)
    b_to_c = rotation(B, C, n="n-2")
    with pytest.raises(KeyRotationRefused):  # B is not pinned yet: the chain moves one step at a time
        pins.accept_rotation(b_to_c)
    got = pins.accept_rotation(rotation(A, B))
    assert got.valid and got.new_key_fingerprint == fp(B) and pins.pinned(PID) == fp(B)
    with pytest.raises(KeyRotated):
        pins.check(PID, fp(A))
    pins.check(PID, fp(B))
    pins.accept_rotation(b_to_c)
    pins.check(PID, fp(C))
    assert [n["id"] for n in pins.history(PID)] == ["n-1", "n-2"]
    with pytest.raises(KeyRotationRefused):  # replaying an old step cannot move the pin back
        pins.accept_rotation(rotation(A, B))
    assert pins.pinned(PID) == fp(C)


def test_rotation_signed_by_b_for_a_pin_is_refused(pins):
    pins.check(PID, fp(A), A.public_key)
    # B signs, naming itself: not the pinned key
    with pytest.raises(KeyRotationRefused):
        pins.accept_rotation(rotation(B, C))
    # B signs while naming A's fingerprint: the signature is not A's
    forged = rotation(A, C)
    forged = sign_notice({k: v for k, v in forged.items() if k != "signature"}, B)
    with pytest.raises(KeyRotationRefused, match="signature does not verify"):
        pins.accept_rotation(forged)
    # the new key vouching for itself
    self_vouch = sign_notice(dict(rotation(A, B), key_fingerprint=fp(B)), B)
    with pytest.raises(KeyRotationRefused):
        pins.accept_rotation(self_vouch)
    assert pins.pinned(PID) == fp(A) and pins.history(PID) == ()


def test_rotation_from_a_never_pinned_key_is_refused(pins):
    with pytest.raises(KeyRotationRefused, match="never pinned"):
        pins.accept_rotation(rotation(A, B))
    pins.check("provenance:domain:other.example", fp(A), A.public_key)
    with pytest.raises(KeyRotationRefused, match="never pinned"):
        pins.accept_rotation(rotation(A, B))  # A is pinned, but for another id
    assert pins.pinned(PID) is None


def test_fingerprint_only_pin_needs_the_key_to_rotate(pins):
    pins.check(PID, fp(A))
    with pytest.raises(KeyRotationRefused, match="public_key="):
        pins.accept_rotation(rotation(A, B))
    with pytest.raises(KeyRotationRefused, match="not the pinned key"):
        pins.accept_rotation(rotation(A, B), public_key=B.public_key)
    pins.accept_rotation(rotation(A, B), public_key=A.public_key.to_string())
    assert pins.pinned(PID) == fp(B)


@pytest.mark.parametrize(
    "notice",
    [None, [], {}, {"provenance_id": 5}, {"provenance_id": PID, "notice": "9.9"}],
)
def test_hostile_notices_are_refused(pins, notice):
    pins.check(PID, fp(A), A.public_key)
    with pytest.raises(KeyRotationRefused):
        pins.accept_rotation(notice)


def test_a_valid_non_rotation_notice_does_not_move_the_pin(pins):
    pins.check(PID, fp(A), A.public_key)
    release = sign_notice(
        {"notice": "0.1", "id": "r", "event": "release", "provenance_id": PID, "key_fingerprint": fp(A),
         "issued_at": "2026-09-24T10:00:00Z", "claims": {"version": "1"}},
        A,
    )
    with pytest.raises(KeyRotationRefused, match="not a key rotation"):
        pins.accept_rotation(release)


@pytest.mark.parametrize("pid, fingerprint", [("", "0" * 64), (None, "0" * 64), (PID, "0" * 63), (PID, "F" * 64), (PID, 5)])
def test_check_arguments(pins, pid, fingerprint):
    with pytest.raises(ValidationError):
        pins.check(pid, fingerprint)


def test_check_key_must_have_the_fingerprint(pins):
    with pytest.raises(KeyUsageError):
        pins.check(PID, fp(A), B.public_key)
    assert pins.pinned(PID) is None


# -- the file store -------------------------------------------------------------------------


def test_file_store_persists_pins_keys_and_history(tmp_path):
    path = tmp_path / "pins.json"
    pins = FileKeyPins(path)
    pins.check(PID, fp(A), A.public_key)
    pins.accept_rotation(rotation(A, B))
    again = FileKeyPins(path)
    assert again.pinned(PID) == fp(B) and again.history(PID) == pins.history(PID)
    again.accept_rotation(rotation(B, C, n="n-2"))  # the stored key B verifies the next step
    assert FileKeyPins(str(path)).pinned(PID) == fp(C)
    assert sorted(os.listdir(tmp_path)) == ["pins.json", "pins.json.lock"]  # no temporary file left
    assert json.loads(path.read_bytes())["version"] == 1


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{",
        b"null",
        b"[]",
        b'{"version": 1}',
        b'{"version": 2, "pins": {}}',
        b'{"version": true, "pins": {}}',
        b'{"version": 1.0, "pins": {}}',
        b'{"version": 1, "pins": {}, "extra": 0}',
        b'{"version": 1, "pins": {"p": {"fingerprint": "x", "public_key": null, "rotations": []}}}',
        b'{"version": 1, "pins": {"p": {"fingerprint": "' + b"0" * 64 + b'", "public_key": null}}}',
        b'{"version": 1, "pins": {"p": {"fingerprint": "' + b"0" * 64 + b'", "public_key": "MCow", "rotations": []}}}',
        b'{"version": 1, "pins": {"p": {"fingerprint": "' + b"0" * 64 + b'", "public_key": null, "rotations": [1]}}}',
        b'{"version": 1, "pins": {}, "pins": {}}',
        b"\xff\xfe",
    ],
)
def test_corrupt_file_is_an_error_never_an_empty_store(tmp_path, content):
    path = tmp_path / "pins.json"
    path.write_bytes(content)
    with pytest.raises(KeyPinsCorrupt) as exc:
        FileKeyPins(path)
    assert exc.value.status == 500 and str(path) in str(exc.value)


def test_stored_key_must_have_the_pinned_fingerprint(tmp_path):
    path = tmp_path / "pins.json"
    doc = {"version": 1, "pins": {PID: {"fingerprint": fp(A), "public_key": B.public_key.to_string(), "rotations": []}}}
    path.write_text(json.dumps(doc))
    with pytest.raises(KeyPinsCorrupt, match="fingerprint"):
        FileKeyPins(path)


def test_failed_rename_keeps_old_file_and_old_state(tmp_path, monkeypatch):
    path = tmp_path / "pins.json"
    pins = FileKeyPins(path)
    pins.check(PID, fp(A), A.public_key)
    before = path.read_bytes()

    def refuse(src, dst):
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError):
        pins.accept_rotation(rotation(A, B))
    with pytest.raises(OSError):
        pins.check("provenance:domain:new.example", fp(C))
    assert path.read_bytes() == before
    assert pins.pinned(PID) == fp(A) and pins.pinned("provenance:domain:new.example") is None
    assert sorted(os.listdir(tmp_path)) == ["pins.json", "pins.json.lock"]  # the temporary file was removed


WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from ajpcore import Ed25519PrivateKey
    from ajpcore.provenance import FileKeyPins, sign_notice

    path, stage = sys.argv[1], sys.argv[2]
    a, b = (Ed25519PrivateKey.from_seed(bytes([i]) * 32) for i in (1, 2))
    pins = FileKeyPins(path)
    if stage == "setup":
        pins.check("{pid}", a.public_key.fingerprint, a.public_key)
        sys.exit(0)
    real_replace = os.replace

    def die(src, dst):
        # the new content is written and fsynced in `src`; the process dies before the rename
        assert os.path.getsize(src) > 0
        os.kill(os.getpid(), signal.SIGKILL)

    os.replace = die
    notice = sign_notice({{"notice": "0.1", "id": "n-1", "event": "key-rotation", "provenance_id": "{pid}",
        "key_fingerprint": a.public_key.fingerprint, "issued_at": "2026-09-24T10:00:00Z",
        "claims": {{"new_public_key": b.public_key.to_string()}}}}, a)
    pins.accept_rotation(notice)
    print("not killed")
    """
).format(pid=PID)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")
def test_writer_killed_between_write_and_rename_leaves_the_old_file(tmp_path):
    path = tmp_path / "pins.json"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    setup = run_python(str(script), str(path), "setup")
    assert setup.returncode == 0, setup.stderr.decode()
    before = path.read_bytes()
    crashed = run_python(str(script), str(path), "rotate")
    assert crashed.returncode == -signal.SIGKILL, (crashed.returncode, crashed.stdout, crashed.stderr)
    assert b"not killed" not in crashed.stdout
    assert path.read_bytes() == before  # the old file, whole
    leftovers = [p for p in os.listdir(tmp_path) if p.startswith(".pins.json.")]
    assert len(leftovers) == 1  # the written-but-not-renamed temporary file
    survivor = FileKeyPins(path)  # a leftover temporary file does not disturb reading
    assert survivor.pinned(PID) == fp(A) and survivor.history(PID) == ()
    survivor.accept_rotation(rotation(A, B))  # and the store still works
    assert FileKeyPins(path).pinned(PID) == fp(B)
