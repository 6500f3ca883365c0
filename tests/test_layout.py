"""The layout rules of the package: the base of the tree depends on nothing above it,
the protocol packages are split into modules a reader can hold."""

import ast
import os
import pathlib

import ajpcore
from conftest import run_python

PACKAGE = pathlib.Path(ajpcore.__file__).parent


def _imports(path):
    tree = ast.parse(path.read_text("utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            yield ("." * node.level) + (node.module or "")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name


def test_errors_imports_nothing_from_the_package():
    found = [name for name in _imports(PACKAGE / "errors.py") if name.startswith(".") or name.startswith("ajpcore")]
    assert found == []


def test_protocol_packages_are_split_into_modules_a_reader_can_hold():
    modules = sorted((PACKAGE / "ajp").glob("*.py")) + sorted((PACKAGE / "iatp").glob("*.py"))
    assert len(modules) > 8
    too_long = {m.name: n for m in modules if (n := len(m.read_text("utf-8").splitlines())) > 600}
    assert too_long == {}


def test_error_body_works_without_importing_the_protocol_layer_first():
    code = (
        "import sys\n"
        "from ajpcore.errors import BadSignature, Busy\n"
        "assert 'ajpcore.ajp' not in sys.modules\n"
        "print(BadSignature('nope').error_body())\n"
        "print(Busy('full', retry_after=7).error_body()['retry_after'])\n"
    )
    out = run_python("-c", code)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.decode().splitlines()
    assert lines == [
        "{'error': 'Invalid signature', 'code': 'BAD_SIGNATURE', 'reason': 'nope'}",
        "7",
    ]


def test_the_native_core_imports_the_shared_rules_never_the_pure_twin():
    """native/ takes the texts and rules both twins share from ajpcore._core_rules (issue 34 item 2)."""
    native = PACKAGE.parent / "native"
    if not native.is_dir():  # an installed wheel: the import check below still runs
        sources = []
    else:
        sources = sorted(native.glob("*.pyx")) + sorted(native.glob("*.pxi"))
    arrows = [f"{p.name}: {line.strip()}" for p in sources for line in p.read_text("utf-8").splitlines()
              if line.lstrip().startswith(("from ", "import ", "cimport ")) and "_core_py" in line]
    assert arrows == []
    code = (
        "import sys\n"
        "try:\n"
        "    import ajpcore._core_c\n"
        "except ImportError:\n"
        "    print('no native core')\n"
        "else:\n"
        "    print(sorted(m for m in sys.modules if m.startswith('ajpcore._core_py')))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "AJPCORE_NO_EXTENSIONS"}  # the package picks native
    out = run_python("-c", code, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode().strip() in ("[]", "no native core")


def test_the_shared_rules_import_only_the_errors():
    assert [n for n in _imports(PACKAGE / "_core_rules.py") if n.startswith((".", "ajpcore"))] == [".errors"]


def test_no_module_reads_its_own_package_or_another_by_sys_modules():
    """No reach-arounds (issue 34 item 3): a module imports what it uses, nothing pokes sys.modules."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text("utf-8")
        for needle in ("sys.modules.get(", "sys.modules[__package__]", "_install_error_body"):
            if needle in text:
                found.append(f"{path.relative_to(PACKAGE)}: {needle}")
    assert found == []


def test_clear_hmac_cache_forgets_through_the_registry_of_the_core_floor():
    from ajpcore import _core
    from ajpcore.ajp import _replay

    assert ajpcore.clear_hmac_cache is _core.clear_hmac_cache
    assert _replay._forget_identities in _core._HMAC_SECRET_CACHES
