"""``python -m ajpcore``: the ``ajpcore`` command."""

import sys

from .cli import main

sys.exit(main())
