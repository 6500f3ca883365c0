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
    assert _pure_twin_modules_after("import ajpcore._core_c") in ("[]", "no native core")


def test_only_the_backend_switch_imports_the_pure_twin():
    """``ajpcore._core`` picks the twin; every other module reaches the core through it, so a process
    on the native core never loads the pure twin (``import ajpcore.ajp`` did, for one calendar rule)."""
    arrows = [f"{path.relative_to(PACKAGE)}: {name}" for path in sorted(PACKAGE.rglob("*.py"))
              if path.parent.name != "_core_py" and path.name != "_core.py"
              for name in _imports(path) if "_core_py" in name]
    assert arrows == []
    loaded = _pure_twin_modules_after("import ajpcore, ajpcore.ajp, ajpcore.iatp, ajpcore.provenance, ajpcore.a2a, ajpcore.cli")
    assert loaded in ("[]", "no native core")


def _pure_twin_modules_after(imports: str) -> str:
    """The ``ajpcore._core_py`` modules a fresh interpreter holds after ``imports`` on the native core
    (the package left to pick it), or "no native core" where there is none."""
    code = (
        "import sys\n"
        "try:\n"
        "    import ajpcore._core_c\n"
        "except ImportError:\n"
        "    print('no native core')\n"
        "else:\n"
        f"    {imports}\n"
        "    print(sorted(m for m in sys.modules if m.startswith('ajpcore._core_py')))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "AJPCORE_NO_EXTENSIONS"}  # the package picks native
    out = run_python("-c", code, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.decode().strip()


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


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level_imports(path):
    """The modules ``path`` imports when it is imported or type-checked: every import outside a
    function or class body (``if TYPE_CHECKING:`` and ``try:`` blocks included), resolved."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    body = list(ast.parse(path.read_text("utf-8")).body)
    while body:
        node = body.pop(0)
        if isinstance(node, (ast.If, ast.Try)):
            body.extend(node.body + node.orelse + getattr(node, "finalbody", []))
            body.extend(h for handler in getattr(node, "handlers", []) for h in handler.body)
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:  # `from . import _core` imports the module `_core`
                sub = f"{base}.{alias.name}"
                yield sub if (PACKAGE.parent / sub.replace(".", "/")).with_suffix(".py").exists() else base


def _import_graph():
    graph = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = _module_name(path)
        graph[name] = sorted({m for m in _top_level_imports(path) if m.startswith("ajpcore") and m != name
                              and not name.startswith(m + ".")})  # a package above: imported first anyway
    return graph


def _circles(graph):
    found, state = [], {}

    def visit(node, trail):
        state[node] = "open"
        for nxt in graph.get(node, ()):
            if state.get(nxt) == "open":
                found.append(trail[trail.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def test_no_import_circle_between_modules_not_even_for_type_checkers():
    """Issue 34 item 4: `_messages` and `_subset` imported each other (the one under TYPE_CHECKING).

    Every module-level import counts, those only a type checker reads included; a package's
    ``__init__`` is no arrow for its own modules (Python imports it before them)."""
    graph = _import_graph()
    assert "ajpcore.ajp._subset" in graph["ajpcore.ajp._messages"]  # the graph sees the arrows it must
    assert "ajpcore._envelope" in graph["ajpcore.ajp._subset"]
    assert _circles(graph) == []


def test_the_protocol_packages_export_no_private_names():
    """Issue 34 item 4: the old single modules' private names are no longer re-exported."""
    import types

    from ajpcore import ajp, iatp

    for package in (ajp, iatp):
        private = [n for n, v in vars(package).items()
                   if n.startswith("_") and not n.startswith("__") and not isinstance(v, types.ModuleType)]
        assert private == [], package.__name__


def test_every_envelope_names_its_shipped_schema_one_way():
    """Issue 34 item 4: AJP and IATP bind a class's schema the same way, ``_SCHEMA`` (name, member path)."""
    from ajpcore import ajp, iatp, schemas  # noqa: F401  (every envelope class defined)
    from ajpcore._envelope import Envelope

    def concrete(cls):
        for sub in cls.__subclasses__():
            if sub._FIELDS and not sub.__name__.startswith("_"):
                yield sub
            yield from concrete(sub)

    classes = sorted(set(concrete(Envelope)), key=lambda c: c.__qualname__)
    assert len(classes) >= 28
    assert not hasattr(Envelope, "_bind_schema")
    unbound = [c.__name__ for c in classes if "_SCHEMA" not in c.__dict__ or c._SCHEMA[0] not in schemas.names()]
    assert unbound == []
    # The receive path's schema and JobOffer's are one compiled object.
    from ajpcore.ajp import _messages
    from ajpcore._envelope_schemas import compiled

    assert compiled("ajp-job-offer") is _messages._OFFER_SCHEMA
