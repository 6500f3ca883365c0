"""The ajpcore command, run as a user runs it."""

import json
import os
import subprocess
import sys
import tempfile

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


# -- version, help, prefixes ---------------------------------------------------------------


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_names_the_core_in_use(flag):
    import ajpcore

    out = run(flag)
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode().strip()
    assert text.startswith(f"ajpcore {ajpcore.__version__}, ")
    assert text.endswith(f"native core ({ajpcore._core.SIMD})") if ajpcore.BACKEND == "c" else "pure Python core (" in text


def test_version_of_a_pure_run_says_why():
    env = {k: v for k, v in os.environ.items() if not k.startswith("AJPCORE_")}
    out = run_python("-m", "ajpcore", "--version", env=dict(env, AJPCORE_NO_EXTENSIONS="1"))
    assert out.stdout.decode().strip().endswith("pure Python core (AJPCORE_NO_EXTENSIONS is set)")


def _all_help_texts():
    from ajpcore.cli import build_parser

    parser = build_parser()
    yield parser.format_help()
    stack = [parser]
    while stack:
        for action in stack.pop()._actions:
            for sub in getattr(action, "choices", None) or {}:
                if isinstance(action.choices, dict):
                    stack.append(action.choices[sub])
                    yield action.choices[sub].format_help()


def test_help_has_no_raw_markup():
    texts = list(_all_help_texts())
    assert len(texts) > 10
    for text in texts:
        assert "``" not in text and ":func:" not in text and ":class:" not in text, text


def test_every_error_line_carries_the_command_prefix(tmp_path):
    doc = tmp_path / "doc.json"
    doc.write_bytes(b"[1,")
    for args in [("canonicalize", str(doc)), ("decode-check", str(doc)), ("check", "offer", str(doc)),
                 ("verify", str(doc), "--public-key", "junk"), ("manifest", "verify", str(doc))]:
        out = run(*args)
        assert out.returncode == 2, (args, out.stderr)
        for line in out.stderr.decode().splitlines():
            assert line.startswith(f"ajpcore {args[0]}: "), (args, line)


# -- bounded input, no tracebacks -----------------------------------------------------------------


def test_max_bytes_refuses_a_larger_input_with_one_line(tmp_path):
    out = run("canonicalize", "--max-bytes", "8", stdin=b'{"a": [1, 2, 3]}')
    assert out.returncode == 2
    assert out.stderr.decode().splitlines() == ["ajpcore canonicalize: standard input is larger than 8 bytes (raise --max-bytes to read it)"]
    assert run("canonicalize", "--max-bytes", "16", stdin=b'{"a": [1, 2, 3]}').returncode == 0
    assert run("canonicalize", "--max-bytes", "1K", stdin=b"[1]").returncode == 0
    assert run("canonicalize", "--max-bytes", "0", stdin=b"[1]").returncode == 2


def test_endless_input_stops_at_the_default_bound():
    from ajpcore.cli._io import DEFAULT_MAX_BYTES

    assert DEFAULT_MAX_BYTES == 64 * 1024 * 1024
    out = run("decode-check", "/dev/zero")
    assert out.returncode == 2
    assert out.stderr.decode().splitlines() == [f"ajpcore decode-check: /dev/zero is larger than {DEFAULT_MAX_BYTES} bytes (raise --max-bytes to read it)"]


@pytest.mark.parametrize("args", [["demo"], ["canonicalize", "-"]])
def test_closed_output_pipe_ends_quietly(args):
    # The reader is gone before the first write, as after `ajpcore demo | head -c1` has read its byte.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        out = subprocess.run([sys.executable, "-m", "ajpcore", *args], input=b'{"a": 1}', stdout=write_end,
                             stderr=subprocess.PIPE, cwd=tempfile.gettempdir())
    finally:
        os.close(write_end)
    assert (out.returncode, out.stderr) == (141, b"")


def _run_with(args, stdout, stderr, stdin=b""):
    """``python -m ajpcore *args`` with stdout/stderr each "closed" (``>&-``), "full" (/dev/full) or "pipe"."""
    closed = [fd for fd, how in ((1, stdout), (2, stderr)) if how == "closed"]
    with open("/dev/full", "wb") as full:
        pick = {"pipe": subprocess.PIPE, "full": full, "closed": subprocess.DEVNULL}
        return subprocess.run([sys.executable, "-m", "ajpcore", *args], input=stdin, stdout=pick[stdout], stderr=pick[stderr],
                              cwd=tempfile.gettempdir(), preexec_fn=lambda: [os.close(fd) for fd in closed])


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("stdout, stderr, code", [
    ("closed", "pipe", 2), ("full", "pipe", 2), ("closed", "closed", 2), ("full", "full", 2), ("pipe", "closed", 0),
])
def test_demo_without_a_usable_output_ends_without_a_traceback(stdout, stderr, code):
    # On main `ajpcore demo >&-` ended in an AttributeError traceback (exit 1).
    out = _run_with(["demo"], stdout, stderr)
    assert out.returncode == code
    if stderr == "pipe":
        assert out.stderr.decode().splitlines()[-1] in ("ajpcore demo: standard output is closed",
                                                        "ajpcore demo: No space left on device")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("stderr", ["full", "closed"])
@pytest.mark.parametrize("args, stdin, code", [
    (["canonicalize"], b"{bad", 2),                                     # malformed input: CliError/AjpError path
    (["--no-such-option"], b"", 2),                                     # argparse's own usage error
    (["a2a", "sign", "-", "--key", "/no/such/key", "--kid", "k"], b"{}", 2),
    (["verify", "--public-key", "x"], b"{}", 2),                          # an unreadable key
    (["check", "offer"], b"[]", 1),                                  # a well-formed document failing its check
])
def test_exit_status_holds_when_stderr_is_unwritable(stderr, args, stdin, code):
    # On main a bad input exited 1 (a traceback that could not be written) with stderr on /dev/full.
    out = _run_with(args, "pipe", stderr, stdin)
    assert out.returncode == code, out.stdout


def test_interrupt_is_a_clean_exit(tmp_path):
    code = "import ajpcore.cli._documents as d, sys\n" \
           "def boom(args): raise KeyboardInterrupt\n" \
           "d.cmd_demo = boom\n" \
           "from ajpcore.cli import main\n" \
           "sys.exit(main(['demo']))\n"
    out = run_python("-c", code)
    assert out.returncode == 130
    assert out.stderr.decode().splitlines() == ["ajpcore demo: interrupted"]


def test_memory_error_is_a_clean_exit():
    code = "import ajpcore.cli._documents as d, sys\n" \
           "def boom(args): raise MemoryError\n" \
           "d.cmd_canonicalize = boom\n" \
           "from ajpcore.cli import main\n" \
           "sys.exit(main(['canonicalize']))\n"
    out = run_python("-c", code)
    assert out.returncode == 2
    lines = out.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ajpcore canonicalize: out of memory"), lines


def test_missing_file_says_no_such_file():
    out = run("canonicalize", "/nonexistent/doc.json")
    assert out.returncode == 2
    assert out.stderr.decode().splitlines() == ["ajpcore canonicalize: cannot read /nonexistent/doc.json: No such file or directory"]


def test_signed_document_must_be_an_object_named_in_json_terms():
    for doc, name in [(b"null", "null"), (b"[1]", "array"), (b'"x"', "string"), (b"1.5", "number")]:
        out = run("verify", "--secret-env", "PATH", stdin=doc)
        assert out.returncode == 2
        assert out.stderr.decode().strip().endswith(f"must be a JSON object, got {name}"), out.stderr


# -- keys: text or file, everywhere ----------------------------------------------------------------

KEY_SEED = bytes(range(32))


def _keys(tmp_path):
    from ajpcore.keys import Ed25519PrivateKey

    key = Ed25519PrivateKey.from_seed(KEY_SEED)
    private = tmp_path / "private.key"
    private.write_bytes(key.to_string().encode() + b"\r\n")  # CRLF, as a Windows editor saves it
    public = tmp_path / "public.key"
    public.write_bytes(key.public_key.to_string("spki").encode() + b"\r\n")
    return key, str(private), str(public)


def test_sign_verify_with_crlf_key_files(tmp_path):
    key, private, public = _keys(tmp_path)
    signed = run("sign", "--key", private, stdin=b'{"a": 1}')
    assert signed.returncode == 0, signed.stderr
    for given in (public, key.public_key.to_string("spki"), key.public_key.to_string("ed25519")):
        out = run("verify", "--public-key", given, stdin=signed.stdout)
        assert out.returncode == 0, out.stderr
        assert out.stdout == b"valid: ed25519 signature\n"


def test_missing_key_file_is_reported_as_such(tmp_path):
    out = run("verify", "--public-key", str(tmp_path / "nope.key"), stdin=b'{"signature": "x"}')
    assert out.returncode == 2
    assert out.stderr.decode().splitlines() == [f"ajpcore verify: --public-key: cannot read {tmp_path / 'nope.key'}: No such file or directory"]
    out = run("sign", "--key", str(tmp_path / "nope.key"), stdin=b"{}")
    assert out.returncode == 2 and b"No such file or directory" in out.stderr


def test_private_key_given_as_public_key_says_so(tmp_path):
    key, private, _ = _keys(tmp_path)
    signed = run("sign", "--key", private, stdin=b'{"a": 1}').stdout
    for given in (private, key.to_string()):
        for args in (["verify"], ["check", "result"]):
            out = run(*args, "--public-key", given, stdin=signed)
            assert out.returncode == 2, out.stderr
            assert b"is a private key (PKCS#8); give the public key" in out.stderr


def test_public_key_given_to_sign_says_so(tmp_path):
    _, _, public = _keys(tmp_path)
    out = run("sign", "--key", public, stdin=b"{}")
    assert out.returncode == 2 and b"is a public key; signing needs the private key file" in out.stderr


@pytest.mark.parametrize("command", [["verify"], ["check", "offer"], ["check", "result"], ["check", "status"],
                                     ["check", "manifest"], ["manifest", "verify"]])
def test_bad_key_exits_2_on_every_command(command, tmp_path):
    bad = tmp_path / "bad.key"
    bad.write_bytes(b"ed25519:not-a-key\n")
    for given in (str(bad), "ed25519:not-a-key"):
        out = run(*command, "--public-key", given, stdin=b"{}")
        assert out.returncode == 2, (command, out.stderr)
        assert len(out.stderr.decode().splitlines()) == 1


# -- the bundled example -----------------------------------------------------------------------


def test_bundled_offer_passes_check_offer_with_the_demo_secret():
    from importlib import resources

    path = str(resources.files("ajpcore.examples").joinpath("offer.json"))
    env = dict(os.environ, AJPCORE_DEMO_SECRET="ajpcore-demo-secret")
    out = run_python("-m", "ajpcore", "check", "offer", path, "--now", "2026-03-05T10:01:00Z",
                     "--secret-env", "AJPCORE_DEMO_SECRET", env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode().splitlines()[-1] == "signature: valid"
