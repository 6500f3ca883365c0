# Stub for the compiled twin ajpcore._core_c; signatures identical to ajpcore._core_py.
from typing import Any, Callable

MAX_DEPTH: int

def canonicalize(value: Any) -> bytes: ...
def canonicalize_into(value: Any, write: Callable[[bytes], Any], *, chunk_size: int = 65536) -> int: ...

# -- strict decoding --
def decode(data: bytes | bytearray | memoryview | str, *, max_depth: int = 512, allow_duplicate_keys: bool = False) -> Any: ...

# -- streaming HMAC-SHA256 --

# -- Ed25519 byte checks --
