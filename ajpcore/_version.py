"""The one version source: setuptools reads it (``dynamic = ["version"]``), ``ajpcore.__version__`` exports it."""

__version__ = "0.2.0"
