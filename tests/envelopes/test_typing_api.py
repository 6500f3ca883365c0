"""What a type checker sees of the core API: sign/verify/signing_bytes take any ``Mapping``, secrets
``str | bytes``, keys the key classes or their text; ``ajpcore.decode`` is the stub's precise signature.
Also the runtime half: a ``Mapping`` that is not a dict signs and verifies like the equal dict."""

import re
import subprocess
import sys
from types import MappingProxyType

import pytest

import ajpcore

USER_SCRIPT = '''\
from types import MappingProxyType
from typing import TypedDict
import ajpcore

class Body(TypedDict):
    job_id: str

body: Body = {"job_id": "job_1"}
signature = ajpcore.sign(body, secret="k")
ajpcore.verify({"job_id": "job_1", "signature": signature}, secret=b"k")
ajpcore.signing_bytes(MappingProxyType({"a": 1}))
key = ajpcore.Ed25519PrivateKey.generate()
ajpcore.verify({"signature": ajpcore.sign(body, private_key=key)}, public_key=key.public_key)
ajpcore.verify({"signature": ajpcore.sign(body, private_key=key.to_string())}, public_key=key.public_key.to_string())
reveal_type(ajpcore.decode)
reveal_type(ajpcore.sign(body, secret=b"k"))
'''

WRONG_CALLS = '''\
import ajpcore

ajpcore.sign({"a": 1}, secret=1)
ajpcore.sign([1], secret="k")
ajpcore.verify({"a": 1}, public_key=b"raw")
ajpcore.sign({"a": 1}, private_key=ajpcore.Ed25519PrivateKey.generate().public_key)
'''


def _mypy(tmp_path, source):
    pytest.importorskip("mypy", reason="mypy is in the `test` extra")
    script = tmp_path / "user.py"
    script.write_text(source)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental",
         "--cache-dir", str(tmp_path / ".mypy"), "--no-error-summary", "--hide-error-context", "--no-pretty", str(script)],
        capture_output=True, text=True,
    )


def test_mapping_bodies_and_typed_keys_check_cleanly(tmp_path):
    out = _mypy(tmp_path, USER_SCRIPT)
    notes = re.findall(r'Revealed type is "(.*)"', out.stdout)
    errors = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert errors == [], out.stdout
    plain = [n.replace("builtins.", "").replace("memoryview[int]", "memoryview") for n in notes]
    assert plain == [
        "def (data: bytes | bytearray | memoryview | str, *, max_depth: int =, allow_duplicate_keys: bool =) -> Any",
        "str",
    ]


def test_wrong_arguments_are_flagged(tmp_path):
    out = _mypy(tmp_path, WRONG_CALLS)
    flagged = {int(m) for m in re.findall(r"user\.py:(\d+): error:", out.stdout)}
    assert flagged == {3, 4, 5, 6}, out.stdout


def test_a_mapping_body_signs_and_verifies_like_the_equal_dict(core):
    body = {"job_id": "job_1", "budget": {"max_usd": 0.25}}
    proxy = MappingProxyType(body)
    assert ajpcore.signing_bytes(proxy) == ajpcore.signing_bytes(body)
    signature = ajpcore.sign(proxy, secret=b"k")
    assert signature == ajpcore.sign(body, secret=b"k")
    ajpcore.verify(MappingProxyType(dict(body, signature=signature)), secret=b"k")
    with pytest.raises(ajpcore.BadSignature):
        ajpcore.verify(MappingProxyType(dict(body, job_id="job_2", signature=signature)), secret=b"k")
