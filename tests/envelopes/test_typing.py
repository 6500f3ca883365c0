"""What a type checker sees of the envelopes: mypy --strict on a small user script.

The envelope classes are dataclass-like for type checkers (``typing.dataclass_transform``),
so ``from_json`` returns the class itself, members have their declared types and a
constructor call is checked keyword by keyword.
"""

import re
import subprocess
import sys

import pytest

pytest.importorskip("mypy", reason="mypy is in the `test` extra")

USER_SCRIPT = '''\
from ajpcore import ajp
from ajpcore.iatp import ABSENT, CapabilityManifest, Identity, Reversibility

def read(data: bytes) -> None:
    offer = ajp.JobOffer.from_json(data)
    reveal_type(offer)
    reveal_type(offer.sender)
    reveal_type(offer.budget.max_usd)
    reveal_type(offer.context)
    reveal_type(offer.replace(job_id="job_0123456789"))
    reveal_type(ajp.JobResult.from_dict({}).agent)
    manifest = CapabilityManifest.from_json(data)
    reveal_type(manifest)
    reveal_type(manifest.trust_level)
    reveal_type(manifest.identity.extra)
    reveal_type(Reversibility.from_dict({}).compensation_method)

budget = ajp.Budget(max_usd=0.25)
reveal_type(budget)
identity = Identity(agent_id="a", owner="o", extra={"x-pgp": "..."})
ajp.Task(type="research", instruction="Summarize.")
'''

EXPECTED = [
    "ajpcore.ajp._messages.JobOffer",
    "ajpcore.ajp._messages.Sender",
    "int | float",
    "ajpcore.ajp._messages.Context | None",
    "ajpcore.ajp._messages.JobOffer",
    "ajpcore.ajp._messages.AgentInfo",
    "ajpcore.iatp._manifest.CapabilityManifest",
    "ajpcore.iatp._enums.TrustLevel",
    "typing.Mapping[str, Any]",
    "str | None | ajpcore._envelope._Absent",
    "ajpcore.ajp._messages.Budget",
]

WRONG_CALLS = '''\
from ajpcore import ajp
from ajpcore.iatp import Identity

ajp.Budget(max_usd="free")
ajp.Budget(0.25)
ajp.Task(type="research")
Identity(agent_id="a", owner="o", nickname="n")
offer: ajp.JobOffer = ajp.JobOffer.from_json(b"{}")
offer.job_id = "job_other"
'''


def _mypy(tmp_path, text):
    script = tmp_path / "user.py"
    script.write_text(text)
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental",
         "--cache-dir", str(tmp_path / "cache"), "--no-error-summary", "--hide-error-context",
         "--no-pretty", str(script)],
        capture_output=True, text=True,
    )
    return out, [line for line in out.stdout.splitlines() if line.startswith(str(script))]


def test_user_script_type_checks_with_the_declared_types(tmp_path):
    out, lines = _mypy(tmp_path, USER_SCRIPT)
    errors = [line for line in lines if ": error:" in line]
    assert errors == [], out.stdout
    revealed = [re.search(r'Revealed type is "(.*)"', line).group(1) for line in lines if "Revealed type" in line]
    assert revealed == EXPECTED


def test_wrong_calls_are_type_errors(tmp_path):
    out, lines = _mypy(tmp_path, WRONG_CALLS)
    flagged = sorted({int(line.split(":")[1]) for line in lines if ": error:" in line})
    assert flagged == [4, 5, 6, 7, 9], out.stdout
