"""The one loader of known-answer vectors under tests/vectors/<family>/."""

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parent / "vectors"


def vector_path(family: str, name: str) -> Path:
    return ROOT / family / name


def load_json(family: str, name: str) -> Any:
    with open(vector_path(family, name), "rb") as f:
        return json.load(f)
