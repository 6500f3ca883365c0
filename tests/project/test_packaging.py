"""What the package declares matches what it is: dependencies, extras, failure messages, the stub."""

import ast
import inspect
import os
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest

import ajpcore
from conftest import run_python

PACKAGE = Path(ajpcore.__file__).parent
STRATEGIES = PACKAGE / "strategies"  # the only package that imports hypothesis


def _normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _is_type_checking(test):
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _third_party_imports(paths):
    """Top-level names of the non-stdlib modules imported at run time anywhere in ``paths``
    (imports under ``if TYPE_CHECKING:`` are for type checkers only)."""
    names = set()

    def visit(node):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        for child in ast.iter_child_nodes(node):
            visit(child)

    for path in paths:
        visit(ast.parse(path.read_text("utf-8")))
    return {n for n in names if n not in sys.stdlib_module_names and n not in ("ajpcore", "__future__")}


def _module_owners():
    """Top-level import name -> distributions, read from each installed distribution's file list.

    ``importlib.metadata.packages_distributions()`` only reads ``top_level.txt`` before Python 3.11,
    and wheels built by maturin or without setuptools (cryptography, jsonschema-rs) have none."""
    owners = {}
    for dist in metadata.distributions():
        for file in dist.files or ():
            top = file.parts[0] if len(file.parts) > 1 else file.name.split(".")[0]
            if top.endswith((".dist-info", ".data")) or top in ("..", "__pycache__"):
                continue
            owners.setdefault(top, []).append(dist.metadata["Name"])
    return owners


def _distributions(modules):
    owners = _module_owners()
    missing = sorted(m for m in modules if m not in owners)
    assert missing == [], f"imported but not installed: {missing}"
    return {_normalize(owners[m][0]) for m in modules}


def _requirements(extra=None):
    out = set()
    for req in metadata.requires("ajpcore") or []:
        name = _normalize(re.match(r"[A-Za-z0-9_.-]+", req).group(0))
        marker = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", req)
        if (marker.group(1) if marker else None) == extra:
            out.add(name)
    return out


REDIS_CLIENT = PACKAGE / "_state_redis.py"
"""The one module that imports redis-py (lazily): the Redis replay guards and pins take the caller's client."""


def test_runtime_dependencies_are_exactly_what_the_package_imports():
    sources = [p for p in PACKAGE.rglob("*.py") if STRATEGIES not in p.parents and p != REDIS_CLIENT]
    assert _distributions(_third_party_imports(sources)) == _requirements()


def test_redis_extra_is_exactly_what_the_redis_stores_add():
    others = [p for p in PACKAGE.rglob("*.py") if p != REDIS_CLIENT]
    assert _third_party_imports([REDIS_CLIENT]) - _third_party_imports(others) == {"redis"}
    assert _requirements("redis") == {"redis"}


def test_strategies_extra_is_exactly_what_ajpcore_strategies_adds():
    added = _third_party_imports(STRATEGIES.rglob("*.py")) - _third_party_imports(
        [p for p in PACKAGE.rglob("*.py") if STRATEGIES not in p.parents]
    )
    assert _distributions(added) == _requirements("strategies") == {"hypothesis"}


def test_strategies_without_hypothesis_names_the_extra():
    out = run_python("-c", "import sys; sys.modules['hypothesis'] = None; import ajpcore.strategies")
    assert out.returncode == 1
    last = out.stderr.decode().strip().splitlines()[-1]
    assert last == "ModuleNotFoundError: ajpcore.strategies needs hypothesis: pip install 'ajpcore[strategies]'"


def test_required_native_core_missing_names_it_and_how_to_build_it():
    env = {k: v for k, v in os.environ.items() if not k.startswith("AJPCORE_")}
    env["AJPCORE_REQUIRE_EXTENSIONS"] = "1"
    out = run_python("-c", "import sys; sys.modules['ajpcore._core_c'] = None; import ajpcore", env=env)
    assert out.returncode == 1
    text = out.stderr.decode()
    assert "partially initialized" not in text
    last = text.strip().splitlines()[-1]
    assert last.startswith("ImportError: AJPCORE_REQUIRE_EXTENSIONS is set, but ajpcore's native core is not usable (")
    assert "C compiler" in last and "pip install" in last


def test_pure_fallback_says_why_in_the_version():
    env = {k: v for k, v in os.environ.items() if not k.startswith("AJPCORE_")}
    code = "import sys; sys.modules['ajpcore._core_c'] = None; from ajpcore.cli import version_text; print(version_text())"
    out = run_python("-c", code, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode().strip() == (
        f"ajpcore {ajpcore.__version__}, pure Python core (no compiled extension: "
        "ajpcore._core_c is not installed)"
    )


def test_one_version_source():
    from ajpcore._version import __version__

    assert ajpcore.__version__ == __version__ == metadata.version("ajpcore")


# -- the stub of the native core and the pure twin ------------------------------------------------


def _stub_functions():
    """``{qualified name: [(param name, kind, default source)]}`` of every def in ``_core_c.pyi``."""
    tree = ast.parse((PACKAGE / "_core_c.pyi").read_text("utf-8"))
    found = {}

    def params(fn):
        a = fn.args
        out = []
        positional = a.posonlyargs + a.args
        defaults = [None] * (len(positional) - len(a.defaults)) + [ast.unparse(d) for d in a.defaults]
        for arg, default in zip(positional, defaults):
            kind = "POSITIONAL_ONLY" if arg in a.posonlyargs else "POSITIONAL_OR_KEYWORD"
            out.append((arg.arg, kind, default))
        if a.vararg:
            out.append((a.vararg.arg, "VAR_POSITIONAL", None))
        for arg, default in zip(a.kwonlyargs, a.kw_defaults):
            out.append((arg.arg, "KEYWORD_ONLY", None if default is None else ast.unparse(default)))
        if a.kwarg:
            out.append((a.kwarg.arg, "VAR_KEYWORD", None))
        return out

    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = params(node)
        elif isinstance(node, ast.ClassDef):
            found[node.name] = None
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    found[f"{node.name}.{item.name}"] = params(item)
        elif isinstance(node, ast.AnnAssign):
            found[node.target.id] = None
    return found


def _runtime_params(obj):
    out = []
    for p in inspect.signature(obj).parameters.values():
        default = None if p.default is inspect.Parameter.empty else repr(p.default)
        out.append((p.name, p.kind.name, default))
    return out


NATIVE_ONLY = {"SIMD", "SIMD_LEVELS", "SIMD_AVAILABLE"}
"""Stub names only the native core has (its SIMD level, native/simd.h)."""


def test_stub_matches_the_pure_twin():
    import ajpcore._core_py as pure

    stub = _stub_functions()
    assert "decode" in stub and "HmacSigner.update" in stub
    for name, params in stub.items():
        if name in NATIVE_ONLY:
            assert not hasattr(pure, name), name
            continue
        owner, _, attr = name.rpartition(".")
        obj = getattr(getattr(pure, owner), attr) if owner else getattr(pure, name)
        if params is None:
            continue
        assert _runtime_params(obj) == params, name


def test_stub_names_exist_in_the_native_twin(twins):
    native, _ = twins
    for name in _stub_functions():
        owner, _, attr = name.rpartition(".")
        assert hasattr(getattr(native, owner), attr) if owner else hasattr(native, name), name


def test_top_level_decode_resolves_to_the_stub_for_type_checkers():
    source = (PACKAGE / "_core.py").read_text("utf-8")
    assert "if TYPE_CHECKING:\n    from . import _core_c as impl" in source
    assert ajpcore.decode is ajpcore._core.impl.decode
