"""The ajpcore command, run as a user runs it."""

import json

import pytest

from conftest import run_python


def run(*args, stdin=b""):
    return run_python("-m", "ajpcore", *args, stdin=stdin)


def test_canonicalize_stdin():
    out = run("canonicalize", stdin=b'{"b": 1.0, "a": [1e21, -0.0]}')
    assert out.returncode == 0, out.stderr
    assert out.stdout == b'{"a":[1e+21,0],"b":1}'


def test_canonicalize_file(tmp_path):
    path = tmp_path / "doc.json"
    path.write_bytes('{"\u20ac": "x", "1": 2}'.encode())
    out = run("canonicalize", str(path))
    assert out.returncode == 0, out.stderr
    assert out.stdout == '{"1":2,"\u20ac":"x"}'.encode()


@pytest.mark.parametrize("doc", [b'{"a": 1, "a": 2}', b"[1,", b"NaN", b'{"a": NaN}'])
def test_canonicalize_bad_input_exits_2(doc):
    out = run("canonicalize", stdin=doc)
    assert out.returncode == 2
    assert out.stdout == b""
    assert len(out.stderr.decode().strip().splitlines()) == 1


def test_missing_file_exits_2(tmp_path):
    out = run("canonicalize", str(tmp_path / "nope.json"))
    assert out.returncode == 2
    assert b"cannot read" in out.stderr


def test_demo_runs_on_bundled_offer():
    out = run("demo")
    assert out.returncode == 0, out.stderr
    canonical = out.stdout.splitlines()[1]
    assert json.loads(canonical)["ajp"] == "0.1"
