"""``signing.verify``'s HMAC hot path accepts exactly the signature the full check accepts.

The hot path compares ``"sha256:" + hex(tag)`` with the whole signature text; anything it
does not accept goes to the full check (strict parse, legacy form, errors).  So: a body is
accepted iff its signature is exactly ``sign(body)``, and every other spelling gets the
error the full check gives (never a ``TypeError`` from comparing non-ASCII text).
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ajpcore import signing
from ajpcore.errors import BadSignature, MalformedSignature, SignatureError

SECRET = b"hot-path-secret"
BODY = {"ajp": "0.1", "job_id": "job_hot", "task": {"type": "t", "instruction": "x \u00e9 \U0001f600"}, "n": [1, 2.5]}
EDITS = "0123456789abcdefABCDEF:sS \u00e9\u0661\uff10\x00"


@st.composite
def _near_signatures(draw: st.DrawFn) -> str:
    text = signing.sign(BODY, secret=SECRET)
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["replace", "insert", "delete", "upper"]))
        ch = draw(st.sampled_from(EDITS))
        if op == "insert":
            text = text[:at] + ch + text[at:]
        elif op == "upper":
            text = text.upper()
        elif at < len(text):
            text = text[:at] + (ch if op == "replace" else "") + text[at + 1 :]
    return text


@settings(max_examples=400, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(signature=_near_signatures())
def test_accepted_iff_exactly_the_signature_and_the_same_error_otherwise(core, signature):
    body = dict(BODY, signature=signature)
    if signature == signing.sign(BODY, secret=SECRET):
        signing.verify(body, secret=SECRET)
        signing.verify(body, secret=bytearray(SECRET))  # a secret type the hot path leaves to the full check
        return
    with pytest.raises(SignatureError) as full:
        signing.verify(body, secret=bytearray(SECRET))
    with pytest.raises(SignatureError) as hot:
        signing.verify(body, secret=SECRET)
    assert (type(hot.value), str(hot.value)) == (type(full.value), str(full.value))
    strict = signing._SHA256_SIGNATURE.fullmatch(signature) is not None
    assert type(hot.value) is (BadSignature if strict else type(hot.value))
    assert strict or type(hot.value) is not BadSignature


@pytest.mark.parametrize("secret", [SECRET, SECRET.decode()])
def test_non_ascii_text_of_the_right_length_is_malformed_not_a_type_error(core, secret):
    good = signing.sign(BODY, secret=SECRET)
    for bad in (good[:-1] + "\u00e9", good[:-1] + "\uff10", good[:10] + "\U0001f600" + good[12:]):
        assert len(bad) in (71, 70)
        with pytest.raises(MalformedSignature):
            signing.verify(dict(BODY, signature=bad), secret=secret)
    signing.verify(dict(BODY, signature=good), secret=secret)
