"""The conformance command against hostile directories and malformed packs (issue 20 §4).

- ``export DIR`` replaces a symbolic link planted in DIR under a pack file's name; it never
  writes through it (the link's target is untouched, a dangling link's target is not created).
- ``run DIR`` on a pack whose fields have the wrong type exits 2 with one line, never a
  traceback (exit 1 means "a case failed").
- Pack files are read only when they are regular files within a size limit: a link to
  ``/dev/zero`` or a FIFO is refused at once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ajpcore import conformance
from ajpcore.conformance import PACK_FILES, PackError

REPO = Path(__file__).resolve().parents[2]
PACK = REPO / "conformance"
needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink") or sys.platform == "win32", reason="POSIX links")


def _cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "ajpcore", "conformance", *map(str, args)], capture_output=True,
                          cwd=tempfile.gettempdir(), timeout=timeout)


# -- export ---------------------------------------------------------------------------------


@needs_symlinks
@pytest.mark.parametrize("how", ["api", "cli"])
def test_export_replaces_a_planted_link_and_leaves_its_target_alone(tmp_path, how):
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    victim.chmod(0o600)
    out = tmp_path / "out"
    out.mkdir()
    (out / "canonical.json").symlink_to(victim)
    (out / "decode.json").symlink_to(tmp_path / "would-be-created.json")  # dangling
    if how == "api":
        conformance.export(out)
    else:
        proc = _cli("export", out)
        assert proc.returncode == 0, proc.stderr.decode()
    assert victim.read_bytes() == b"precious\n" and (victim.stat().st_mode & 0o777) == 0o600
    assert not (tmp_path / "would-be-created.json").exists()
    for name in PACK_FILES:
        path = out / name
        assert not path.is_symlink() and path.is_file()
        assert path.read_bytes() == (PACK / name).read_bytes()
    assert sorted(p.name for p in out.iterdir()) == sorted(PACK_FILES)  # no temporary file left behind


def test_export_over_existing_files_and_their_mode(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "signatures.json").write_bytes(b"old")
    old_umask = os.umask(0o022)
    try:
        conformance.export(out)
    finally:
        os.umask(old_umask)
    assert (out / "signatures.json").read_bytes() == (PACK / "signatures.json").read_bytes()
    if sys.platform != "win32":
        assert all((out / name).stat().st_mode & 0o777 == 0o644 for name in PACK_FILES)


def test_export_onto_a_directory_is_a_pack_error(tmp_path):
    (tmp_path / "envelopes.json").mkdir()
    with pytest.raises(PackError, match="^cannot write the pack to"):
        conformance.export(tmp_path)
    proc = _cli("export", tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and b"Traceback" not in proc.stderr


# -- malformed packs ------------------------------------------------------------------------


MALFORMED = {
    # (file, which case, change, what the one line says)
    "canonical input is a number": ("canonical.json", lambda c: True, {"input": 5}, "`input` must be a string"),
    "canonical with neither result": ("canonical.json", lambda c: "canonical" in c, {"canonical": None}, "exactly one of"),
    "canonical with both results": ("canonical.json", lambda c: "canonical" in c, {"error": "syntax"}, "exactly one of"),
    "canonical expected as a number": ("canonical.json", lambda c: "canonical" in c, {"canonical": 1}, "`canonical` must be a string"),
    "decode input is bad base64": ("decode.json", lambda c: True, {"input_b64": "not base64!"}, "`input_b64` must be canonical base64"),
    "decode input is a number": ("decode.json", lambda c: True, {"input_b64": 5}, "`input_b64` must be canonical base64"),
    "decode expect is a list": ("decode.json", lambda c: True, {"expect": ["accept"]}, "`expect` must be a string"),
    "decode reason is null": ("decode.json", lambda c: True, {"reason": None}, "`reason` must be a string"),
    "signatures body is a number": ("signatures.json", lambda c: True, {"body": 5}, "`body` must be an object"),
    "signatures body is a list": ("signatures.json", lambda c: True, {"body": []}, "`body` must be an object"),
    "signatures secret is a number": ("signatures.json", lambda c: "secret" in c, {"secret": 5}, "`secret` must be a string"),
    "signatures with two credentials": ("signatures.json", lambda c: "secret" in c, {"public_key": "x"}, "exactly one of"),
    "signatures mode is a number": ("signatures.json", lambda c: True, {"mode": 1}, "`mode` must be a string"),
    "envelopes follows is a number": ("envelopes.json", lambda c: True, {"follows": 5}, "`follows` must be an array of case ids"),
    "envelopes follows holds a number": ("envelopes.json", lambda c: True, {"follows": [5]}, "`follows` must be an array of case ids"),
    "envelopes message is bad base64": ("envelopes.json", lambda c: True, {"message_b64": "@@@"}, "`message_b64` must be canonical base64"),
    "envelopes status is text": ("envelopes.json", lambda c: True, {"expect_status": "202"}, "`expect_status` must be an integer"),
    "envelopes status is a bool": ("envelopes.json", lambda c: True, {"expect_status": True}, "`expect_status` must be an integer"),
    "envelopes now is a number": ("envelopes.json", lambda c: True, {"now": 1700000000}, "`now` must be a string"),
    "envelopes capacity is zero": ("envelopes.json", lambda c: True, {"replay_capacity": 0}, "`replay_capacity` must be a positive integer"),
    "envelopes capacity is text": ("envelopes.json", lambda c: True, {"replay_capacity": "3"}, "`replay_capacity` must be a positive integer"),
    "envelopes code is a number": ("envelopes.json", lambda c: True, {"expect_code": 409}, "`expect_code` must be a string"),
    "a2a card is a list": ("a2a.json", lambda c: "card" in c and "payloads" not in c, {"card": []}, "`card` must be an object"),
    "a2a payload profiles differ": ("a2a.json", lambda c: "payloads" in c, {"unsigned": {}}, "`unsigned` names the profiles"),
    "a2a two key sets": ("a2a.json", lambda c: "jwks" in c and "payloads" not in c, {"jwks_text": "{}"},
                         "exactly one of `jwks` and `jwks_text`"),
    "a2a algorithms is text": ("a2a.json", lambda c: "expect" in c, {"algorithms": "EdDSA"}, "`algorithms` must be an array of strings"),
}


def _pack_with(tmp_path, name, predicate, change):
    for file in PACK_FILES:
        shutil.copy(PACK / file, tmp_path / file)
    doc = json.loads((tmp_path / name).read_bytes())
    case = next(c for c in doc["cases"] if predicate(c))
    for key, value in change.items():
        if value is None and key in ("canonical",):
            case.pop(key)
        else:
            case[key] = value
    (tmp_path / name).write_text(json.dumps(doc))
    return case["id"]


@pytest.mark.parametrize("what", sorted(MALFORMED))
def test_a_malformed_pack_is_a_pack_error(tmp_path, what):
    name, predicate, change, said = MALFORMED[what]
    case_id = _pack_with(tmp_path, name, predicate, change)
    with pytest.raises(PackError) as exc:
        conformance.run(tmp_path)
    assert said in str(exc.value) and f"`{name}`:{case_id}" in str(exc.value)


@pytest.mark.parametrize("what", ["decode input is bad base64", "envelopes follows is a number", "canonical input is a number",
                                  "signatures body is a number"])
def test_cli_malformed_pack_exits_2_with_one_line(tmp_path, what):
    name, predicate, change, said = MALFORMED[what]
    _pack_with(tmp_path, name, predicate, change)
    proc = _cli("run", tmp_path)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and proc.stdout == b"", err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("ajpcore conformance: ") and said in err


# -- what a pack file may be ----------------------------------------------------------------


@needs_symlinks
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_link_to_dev_zero_is_refused_at_once(tmp_path):
    for file in PACK_FILES:
        shutil.copy(PACK / file, tmp_path / file)
    (tmp_path / "decode.json").unlink()
    (tmp_path / "decode.json").symlink_to("/dev/zero")
    with pytest.raises(PackError, match="^cannot read `decode.json`: not a regular file$"):
        conformance.run(tmp_path)
    proc = _cli("run", tmp_path, timeout=60)  # an unbounded read would never end
    assert proc.returncode == 2 and b"not a regular file" in proc.stderr and len(proc.stderr.splitlines()) == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_does_not_hang_the_runner(tmp_path):
    os.mkfifo(tmp_path / "canonical.json")
    with pytest.raises(PackError, match="^cannot read `canonical.json`: not a regular file$"):
        conformance.run(tmp_path)


def test_a_pack_file_beyond_the_size_limit_is_refused(tmp_path, monkeypatch):
    for file in PACK_FILES:
        shutil.copy(PACK / file, tmp_path / file)
    monkeypatch.setattr(conformance, "MAX_PACK_FILE_BYTES", 1000)
    with pytest.raises(PackError, match="^cannot read `canonical.json`: larger than 1000 bytes$"):
        conformance.run(tmp_path)
    assert conformance.MAX_PACK_FILE_BYTES == 1000 and (PACK / "canonical.json").stat().st_size > 1000


def test_the_bundled_pack_fits_the_limit():
    monkey = conformance.MAX_PACK_FILE_BYTES
    assert all((PACK / name).stat().st_size < monkey // 10 for name in PACK_FILES)
