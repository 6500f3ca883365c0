"""What a type checker sees of the receiver (issue 21): credentials as ``str | bytes`` and key types,
statuses and sender types as ``Literal`` s, the Receiver's answers; mypy --strict on small scripts."""

import re
import subprocess
import sys

import pytest

pytest.importorskip("mypy", reason="mypy is in the `test` extra")

RIGHT = '''\
from datetime import datetime, timezone
from ajpcore import Ed25519PrivateKey, ajp

now = datetime.now(timezone.utc)
key = Ed25519PrivateKey.generate()
offer = ajp.new_offer(sender={"type": "agent", "provenance_id": "p"}, to="r", task={}, now=now, private_key=key)
reveal_type(offer.sender.type)
reveal_type(ajp.JobStatus.from_json(b"{}").status)
result = ajp.new_result(job_id="j", status="completed", output=None, agent="a", now=now, secret=b"s", mode="sdk")
receiver = ajp.Receiver(recipient=["a", "b"], secret="s", replay_guard=ajp.MemoryReplayGuard())
answer = receiver.answer_offer(b"{}", now=now)
reveal_type(answer.body)
reveal_type(answer.received)
reveal_type(receiver.receive(b"{}", now=now).identity)
ajp.receive_offer(b"{}", now=now, recipient=ajp.ANY_RECIPIENT, replay_guard=ajp.NO_REPLAY_GUARD, secret=b"s",
                  require_capabilities=())
offer.verify(secret="s")
'''
EXPECTED = [
    "Literal['human'] | Literal['agent'] | Literal['orchestrator']",
    "Literal['accepted'] | Literal['running'] | Literal['completed'] | Literal['failed'] | Literal['rejected'] | Literal['expired']",
    "bytes",
    "ajpcore.ajp._pipeline.ReceivedOffer | None",
    "ajpcore.ajp._sender.SenderIdentity | None",
]

WRONG = '''\
from ajpcore import ajp

ajp.new_result(job_id="j", status="done", output=None, agent="a", now=0, secret=b"s")
ajp.new_offer(sender={}, to="r", task={}, now=0, secret=5)
ajp.Sender(type="robot")
ajp.receive_offer(b"{}", now=0, secret=b"s")
ajp.JobOffer.from_json(b"{}").verify(public_key=b"raw bytes")
ajp.new_result(job_id="j", status="completed", output=None, agent="a", now=0, secret=b"s", mode="any")
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


def test_receiver_types_are_what_the_code_means(tmp_path):
    out, lines = _mypy(tmp_path, RIGHT)
    assert [line for line in lines if ": error:" in line] == [], out.stdout
    revealed = [re.search(r'Revealed type is "(.*)"', line).group(1) for line in lines if "Revealed type" in line]
    assert revealed == EXPECTED


def test_wrong_credentials_statuses_and_sender_types_are_type_errors(tmp_path):
    out, lines = _mypy(tmp_path, WRONG)
    flagged = sorted({int(line.split(":")[1]) for line in lines if ": error:" in line})
    assert flagged == [3, 4, 5, 6, 7, 8], out.stdout
