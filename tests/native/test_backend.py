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


# -- the native core's SIMD level (native/simd.h, issue 23) ----------------------------------------


def _simd_with(level, require=True):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AJPCORE_")}
    env["AJPCORE_SIMD"] = level
    if require:
        env["AJPCORE_REQUIRE_EXTENSIONS"] = "1"
    code = "import ajpcore, ajpcore._core as c; from ajpcore.cli import version_text; print(c.SIMD); print(version_text())"
    out = run_python("-c", code, env=env)
    return out.returncode, out.stdout.decode().split("\n"), out.stderr.decode()


def test_the_simd_level_in_use_is_the_one_asked_for_or_the_best(twins):
    # Under AJPCORE_SIMD (the `simd` CI job forces each level) the core must really run it.
    native, _ = twins
    asked = os.environ.get("AJPCORE_SIMD", "").strip().lower()
    assert native.SIMD_LEVELS == ("scalar", "sse2", "avx2")
    assert native.SIMD_AVAILABLE in (("scalar",), ("sse2",), ("sse2", "avx2"))
    assert native.SIMD == (asked if asked not in ("", "auto") else native.SIMD_AVAILABLE[-1])


def test_each_available_simd_level_can_be_forced_and_is_reported(twins):
    native, _ = twins
    for level in native.SIMD_AVAILABLE:
        code, out, err = _simd_with(level)
        assert code == 0, err
        assert out[0] == level
        assert out[1].endswith(f", native core ({level})")


@pytest.mark.parametrize("name", ["avx512", "sse4", "fast", "0"])
def test_an_unknown_simd_level_stops_the_import(twins, name):
    code, _, err = _simd_with(name)
    assert code != 0
    assert f"AJPCORE_SIMD must be one of auto, scalar, sse2, avx2; got '{name}'" in err
    # Without AJPCORE_REQUIRE_EXTENSIONS the pure twin runs, and says why.
    code, out, err = _simd_with(name, require=False)
    assert code == 0, err
    assert out[0] == "None" and "pure Python core (no compiled extension: AJPCORE_SIMD must be one of" in out[1]


def test_a_simd_level_this_core_lacks_is_refused(twins):
    native, _ = twins
    available = ", ".join(native.SIMD_AVAILABLE)
    for level in native.SIMD_LEVELS:
        if level in native.SIMD_AVAILABLE:
            continue
        code, _, err = _simd_with(level)
        assert code != 0
        if level == "scalar":  # sse2 is compiled in: scalar paths are the -DAJPCORE_NO_SIMD build's
            assert f"AJPCORE_SIMD=scalar asks for a build option (CFLAGS=-DAJPCORE_NO_SIMD) (available: {available})" in err
        else:
            assert f"AJPCORE_SIMD={level} asks for a path this build and CPU do not have (available: {available})" in err
