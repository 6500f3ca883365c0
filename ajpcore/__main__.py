"""``python -m ajpcore``: the ``ajpcore`` command.

``python -m`` imports ajpcore from the current directory first, so inside a checkout
it runs the source tree, which has no compiled extension unless one was built in place
(``python setup.py build_ext --inplace``).  So that nobody mistakes which copy ran, a
run from a source tree first prints one line on stderr naming its path and its core;
an installed ajpcore prints nothing extra.
"""

import sys
from pathlib import Path

from . import BACKEND, __file__ as _package_file
from .cli import main, version_text
from .cli._io import complain


def source_tree_banner() -> "str | None":
    """``ajpcore: running the source tree at PATH (<version text>)``, or None for an installed ajpcore."""
    package = Path(_package_file).resolve().parent
    checkout = package.parent
    if not ((checkout / "native" / "_core_c.pyx").is_file() and (checkout / "pyproject.toml").is_file()):
        return None
    hint = "" if BACKEND == "c" else "; `pip install .` installs the native core"
    return f"ajpcore: running the source tree at {package} ({version_text()}){hint}"


if __name__ == "__main__":
    banner = source_tree_banner()
    if banner is not None:
        complain(banner)
    sys.exit(main())
