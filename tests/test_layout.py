"""The layout rules of the package: the base of the tree depends on nothing above it,
the protocol packages are split into modules a reader can hold."""

import ast
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
