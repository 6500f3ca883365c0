"""The AJP signature vectors (made with the reference SDK's canonicalizer and Node's crypto),
on both core twins and both Ed25519 backends.

JobResult verification over the reference SDK's subset is the envelope layer's job
(``ajpcore.ajp``); here the subset vector shows what ``sign``/``verify`` themselves do
with it: the full body does not verify, the subset body does.
"""

import copy

import pytest

from ajpcore import BadSignature, LegacySignature, sign, signing_bytes, verify
from ajpcore import signing
from ajpcore.keys import Ed25519PrivateKey, Ed25519PublicKey
from vector_files import load_json

FILE = load_json("ajp", "ajp-signature-vectors.json")
VECTORS = {v["id"]: v for v in FILE["vectors"]}
SECRET = FILE["hmac_secret_utf8"]
PUBLIC = FILE["keypair"]["public_key_spki_der_b64"]
PRIVATE = FILE["keypair"]["private_key_pkcs8_der_b64"]
BACKENDS = [None, "cryptography"]  # None is libsodium (the default)


def key_for(message):
    if message["signature"].startswith("sha256:"):
        return {"secret": SECRET}
    return {"public_key": PUBLIC}


def without_signature(message):
    return {k: v for k, v in message.items() if k != "signature"}


def test_file_holds_the_expected_cases():
    assert set(VECTORS) == {
        "offer-agent-ed25519-jcs",
        "offer-human-hmac-jcs",
        "offer-agent-ed25519-legacy",
        "offer-human-hmac-legacy",
        "offer-agent-tampered-nested",
        "offer-agent-legacy-tampered-nested",
        "result-ed25519-sdk-subset",
    }


def test_keypair_matches_its_fingerprint():
    public = Ed25519PrivateKey.from_string(PRIVATE).public_key
    assert public == Ed25519PublicKey.from_string(PUBLIC)
    assert public.fingerprint == FILE["keypair"]["fingerprint_sha256_of_spki_der_hex"]


VALID = ["offer-agent-ed25519-jcs", "offer-human-hmac-jcs"]


@pytest.mark.parametrize("vid", VALID)
@pytest.mark.parametrize("backend", BACKENDS)
def test_valid_vectors_verify(core, vid, backend):
    message = VECTORS[vid]["message"]
    before = copy.deepcopy(message)
    assert signing_bytes(message) == VECTORS[vid]["signed_bytes"].encode()
    verify(message, backend=backend, **key_for(message))
    assert message == before


@pytest.mark.parametrize("vid", VALID)
def test_sign_reproduces_the_reference_signature(core, vid):
    message = VECTORS[vid]["message"]
    if message["signature"].startswith("sha256:"):
        assert sign(message, secret=SECRET) == message["signature"]
    else:  # Ed25519 (RFC 8032) signatures are deterministic
        assert sign(message, private_key=PRIVATE) == message["signature"]
        assert sign(message, private_key=Ed25519PrivateKey.from_string(PRIVATE)) == message["signature"]


@pytest.mark.parametrize("vid", ["offer-agent-ed25519-legacy", "offer-human-hmac-legacy"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_legacy_vectors_are_recognised_and_refused(core, vid, backend):
    vector = VECTORS[vid]
    message = vector["message"]
    # Our model of JSON.stringify(rest, Object.keys(rest).sort()) gives the reference bytes.
    legacy_bytes = core.canonicalize(signing._legacy_form(without_signature(message)))
    assert legacy_bytes == vector["signed_bytes"].encode()
    with pytest.raises(LegacySignature, match="upgrade your sender"):
        verify(message, backend=backend, **key_for(message))


@pytest.mark.parametrize("backend", BACKENDS)
def test_tampered_nested_fields_fail(core, backend):
    message = VECTORS["offer-agent-tampered-nested"]["message"]
    with pytest.raises(BadSignature) as info:
        verify(message, backend=backend, public_key=PUBLIC)
    assert type(info.value) is BadSignature


@pytest.mark.parametrize("backend", BACKENDS)
def test_legacy_hole_is_refused(core, backend):
    # The pre-0.3 form does not cover nested fields: the rewritten offer still matches it.
    message = VECTORS["offer-agent-legacy-tampered-nested"]["message"]
    with pytest.raises(LegacySignature):
        verify(message, backend=backend, public_key=PUBLIC)


SDK_RESULT_SUBSET = ("job_id", "status", "output", "constraints_asserted", "completed_at")


@pytest.mark.parametrize("backend", BACKENDS)
def test_result_signed_over_the_sdk_subset(core, backend):
    vector = VECTORS["result-ed25519-sdk-subset"]
    message = vector["message"]
    # The specification signs the full body: that check fails (and it is no legacy form either).
    with pytest.raises(BadSignature) as info:
        verify(message, backend=backend, public_key=PUBLIC)
    assert type(info.value) is BadSignature
    subset = {k: message[k] for k in SDK_RESULT_SUBSET}
    subset["agent"] = {"provenance_id": message["agent"]["provenance_id"]}
    assert signing_bytes(subset) == vector["signed_bytes"].encode()
    verify(dict(subset, signature=message["signature"]), backend=backend, public_key=PUBLIC)


def leaf_paths(value, prefix=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaf_paths(v, prefix + (k,))
    elif isinstance(value, list) and value:
        for i, v in enumerate(value):
            yield from leaf_paths(v, prefix + (i,))
    else:
        yield prefix


def replaced(value, path, new):
    out = copy.deepcopy(value)
    target = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return out


@pytest.mark.parametrize("vid", VALID)
def test_changing_any_leaf_fails(core, vid):
    message = VECTORS[vid]["message"]
    paths = [p for p in leaf_paths(without_signature(message))]
    assert len(paths) > 15
    for path in paths:
        for new in ("tampered", 0, None, [], {}):
            tampered = replaced(message, path, new)
            if core.canonicalize(tampered) == core.canonicalize(message):
                continue  # the same value: nothing changed
            with pytest.raises(BadSignature):
                verify(tampered, **key_for(message))
