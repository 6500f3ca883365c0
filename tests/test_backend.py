"""The backend switch: one decision at import, honoured by env vars; native really loaded in CI."""

import os

import pytest

from conftest import REQUIRE_NATIVE, run_python

PURE_NAMES = ["canonicalize", "canonicalize_into", "MAX_DEPTH"]


def _backend_with(env_updates):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AJPCORE_")}
    env.update(env_updates)
    out = run_python("-c", "import ajpcore; print(ajpcore.BACKEND)", env=env)
    return out.returncode, out.stdout.decode().strip(), out.stderr.decode()


def test_native_core_is_loaded_when_required():
    if not REQUIRE_NATIVE:
        pytest.skip("AJPCORE_REQUIRE_EXTENSIONS is not set")
    import ajpcore._core_c  # noqa: F401

    assert ajpcore.BACKEND == "c"
    assert ajpcore.canonicalize is ajpcore._core_c.canonicalize


@pytest.mark.parametrize("value", ["1", "true", "YES", "on"])
def test_no_extensions_selects_pure(value):
    code, backend, err = _backend_with({"AJPCORE_NO_EXTENSIONS": value})
    assert code == 0, err
    assert backend == "py"


def test_default_prefers_native(twins):
    code, backend, err = _backend_with({})
    assert code == 0, err
    assert backend == "c"


def test_twins_expose_the_same_names(twins):
    native, pure = twins
    for name in PURE_NAMES:
        assert hasattr(native, name) and hasattr(pure, name), name
    assert native.MAX_DEPTH == pure.MAX_DEPTH


def test_top_level_exports_every_error_and_api_name():
    import ajpcore.errors

    exported = set(ajpcore.__all__)
    missing_errors = [n for n in ajpcore.errors.__all__ if n != "format_path" and n not in exported]
    assert missing_errors == []
    for name in ajpcore.__all__:
        assert hasattr(ajpcore, name), name
    for name in ["canonicalize", "canonicalize_into", "decode", "HmacSigner", "sign", "verify",
                 "signing_bytes", "Ed25519PrivateKey", "Ed25519PublicKey"]:
        assert name in exported, name
