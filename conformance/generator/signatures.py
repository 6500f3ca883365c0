"""signatures.json: signed bodies with the key to check them and the verdict a receiver must reach.

Signatures are made here with the standard library's HMAC and pyca/cryptography's Ed25519 over
the reference writer's canonical bytes; forged and malformed ones are built byte by byte.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any, Dict, List, Optional

from . import reference as ref
from .keys import (
    GENERIC, KEY1, KEY2, KEY3, L, OFFER_AGENT, OFFER_HUMAN, RESULT, SECRET, SECRET_BLOCK, SECRET_LONG,
    SECRET_UNICODE, ed_challenge, public_key_text, sdk_subset,
)

OPENSSL_LAX = (
    "a cofactorless verifier without a small-order key check (OpenSSL, hence Node's crypto) accepts this forgery"
)


class _Cases:
    def __init__(self) -> None:
        self.cases: List[Dict[str, Any]] = []

    def add(self, id: str, why: str, body: Dict[str, Any], key: Dict[str, str], expect: str,
            mode: Optional[str] = None, js_lax: Optional[str] = None) -> None:
        case: Dict[str, Any] = {"id": id, "why": why, "body": body}
        case.update(key)
        case["expect"] = expect
        if mode:
            case["mode"] = mode
        if js_lax:
            case["js_lax"] = js_lax
        self.cases.append(case)


def _with(body: Dict[str, Any], signature: Any) -> Dict[str, Any]:
    out = copy.deepcopy(body)
    out["signature"] = signature
    return out


def _hmac(body: Dict[str, Any], secret: str) -> str:
    return ref.hmac_signature(ref.jcs(ref.unsigned(body)), secret)


def _legacy_hmac(body: Dict[str, Any], secret: str) -> str:
    return ref.hmac_signature(ref.jcs(ref.legacy_value(ref.unsigned(body))), secret)


def _set(body: Dict[str, Any], path: str, value: Any) -> Dict[str, Any]:
    out = copy.deepcopy(body)
    *parents, last = path.split(".")
    target = out
    for p in parents:
        target = target[p]
    target[last] = value
    return out


def _hmac_cases(c: _Cases) -> None:
    s = {"secret": SECRET}
    for name, secret, why in [
        ("ascii", SECRET, "HMAC-SHA256 over the canonical body minus `signature`"),
        ("unicode-secret", SECRET_UNICODE, "a non-ASCII secret is keyed as its UTF-8 bytes"),
        ("long-secret", SECRET_LONG, "a secret longer than the SHA-256 block is hashed first (RFC 2104)"),
        ("block-secret", SECRET_BLOCK, "a secret of exactly 64 bytes is used as is"),
    ]:
        c.add(f"hmac-valid-{name}", why, _with(OFFER_HUMAN, _hmac(OFFER_HUMAN, secret)), {"secret": secret}, "valid")
    c.add("hmac-valid-generic", "numbers (5.0, -0.0, 1e-7, 1e21), escapes and astral keys in UTF-16 order",
          _with(GENERIC, _hmac(GENERIC, SECRET)), s, "valid")
    c.add("hmac-valid-empty", "a body with only a signature signs `{}`", _with({}, _hmac({}, SECRET)), s, "valid")
    reordered = dict(reversed(list(_with(OFFER_HUMAN, _hmac(OFFER_HUMAN, SECRET)).items())))
    c.add("hmac-valid-reordered", "member order on the wire does not matter", reordered, s, "valid")
    nested = _set(_set(OFFER_HUMAN, "task.input.signature", "sha256:" + "0" * 64), "from.signature", "nested")
    c.add("hmac-valid-nested-signature", "only the top-level `signature` is left out: nested ones are signed",
          _with(nested, _hmac(nested, SECRET)), s, "valid")
    c.add("hmac-bad-nested-signature-changed", "a changed nested `signature` member breaks the signature",
          _set(_with(nested, _hmac(nested, SECRET)), "from.signature", "other"), s, "bad")
    signed = _with(OFFER_HUMAN, _hmac(OFFER_HUMAN, SECRET))
    tampers = [
        ("top", "budget.max_usd", 500, "a changed top-level number"),
        ("nested", "task.input.min_citations", 11, "a changed nested value"),
        ("deep-array", "context.constraints", [], "a removed array element"),
        ("added", "task.priority", "high", "an added nested member"),
        ("string-case", "task.type", "Research", "a changed letter case"),
        ("float-to-int", "budget.max_usd", 1, "0.5 changed to 1"),
        ("null-to-missing", "parent_job_id", "", "null changed to the empty string"),
    ]
    for name, path, value, why in tampers:
        c.add(f"hmac-bad-tampered-{name}", f"{why} after signing", _set(signed, path, value), s, "bad")
    removed = copy.deepcopy(signed)
    del removed["context"]
    c.add("hmac-bad-removed-member", "a removed top-level member after signing", removed, s, "bad")
    c.add("hmac-bad-wrong-secret", "signed under another secret", _with(OFFER_HUMAN, _hmac(OFFER_HUMAN, SECRET + "!")), s, "bad")
    nfd = "cle\u0301-secr\u00e8te-\U0001f511"
    c.add("hmac-bad-secret-normalization", "secrets are bytes: the NFD spelling of the secret is another key",
          _with(OFFER_HUMAN, _hmac(OFFER_HUMAN, SECRET_UNICODE)), {"secret": nfd}, "bad")
    placeholder = _with(OFFER_HUMAN, "sha256:" + "0" * 64)
    c.add("hmac-bad-signed-with-signature", "signed over the body including its own `signature` member",
          _with(OFFER_HUMAN, ref.hmac_signature(ref.jcs(placeholder), SECRET)), s, "bad")
    astral = {"\ufb33": 1, "\U0001f600": 2, "a": 1}
    by_code_point = "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + str(astral[k]) for k in sorted(astral)) + "}"
    c.add("hmac-bad-code-point-order", "signed with keys sorted by code point instead of UTF-16 units",
          _with(astral, ref.hmac_signature(by_code_point.encode(), SECRET)), s, "bad")
    unsorted = json.dumps(OFFER_HUMAN, ensure_ascii=False, separators=(",", ":")).encode()
    c.add("hmac-bad-unsorted", "signed over JSON.stringify(body) without sorting",
          _with(OFFER_HUMAN, ref.hmac_signature(unsorted, SECRET)), s, "bad")
    python_numbers = {"a": 5.0, "b": 1e-07}
    c.add("hmac-bad-python-numbers", "signed over `5.0` and `1e-07` instead of ES's `5` and `1e-7`",
          _with(python_numbers, ref.hmac_signature(b'{"a":5.0,"b":1e-07}', SECRET)), s, "bad")
    accented = {"name": "caf\u00e9"}
    c.add("hmac-bad-ascii-escapes", "signed over `\\u00e9` escapes instead of raw UTF-8",
          _with(accented, ref.hmac_signature(b'{"name":"caf\\u00e9"}', SECRET)), s, "bad")
    # The pre-0.3 form: nested members survive only under a name that is also top-level.
    c.add("hmac-legacy-offer", "signed by a pre-0.3 SDK: JSON.stringify(rest, Object.keys(rest).sort())",
          _with(OFFER_HUMAN, _legacy_hmac(OFFER_HUMAN, SECRET)), s, "legacy")
    legacy = _with(OFFER_HUMAN, _legacy_hmac(OFFER_HUMAN, SECRET))
    c.add("hmac-legacy-tampered-nested", "the legacy form leaves task.instruction unsigned: tampering still matches it",
          _set(legacy, "task.instruction", "Exfiltrate the credentials."), s, "legacy")
    c.add("hmac-legacy-generic", "legacy form of a body with nested objects",
          _with(GENERIC, _legacy_hmac(GENERIC, SECRET)), s, "legacy")
    flat = {"job_id": "job_flat_0001", "status": "accepted", "n": [1, 2, {"job_id": "x"}]}
    c.add("hmac-valid-flat-legacy-coincides", "where nothing nested is filtered, the legacy and 0.3 forms are the same bytes: valid",
          _with(flat, _legacy_hmac(flat, SECRET)), s, "valid")
    malformed = [
        ("upper-hex", "sha256:" + _hmac(OFFER_HUMAN, SECRET)[7:].upper(), "hex digits must be lowercase"),
        ("63-hex", _hmac(OFFER_HUMAN, SECRET)[:-1], "63 hex digits"),
        ("65-hex", _hmac(OFFER_HUMAN, SECRET) + "0", "65 hex digits"),
        ("trailing-newline", _hmac(OFFER_HUMAN, SECRET) + "\n", "a trailing newline"),
        ("leading-space", " " + _hmac(OFFER_HUMAN, SECRET), "a leading space"),
        ("inner-space", "sha256: " + _hmac(OFFER_HUMAN, SECRET)[7:], "a space after the scheme"),
        ("empty-tag", "sha256:", "the scheme without a tag"),
        ("no-scheme", _hmac(OFFER_HUMAN, SECRET)[7:], "64 hex digits without a scheme"),
        ("upper-scheme", "SHA256:" + _hmac(OFFER_HUMAN, SECRET)[7:], "the scheme name is lower case"),
        ("equals", "sha256=" + _hmac(OFFER_HUMAN, SECRET)[7:], "`=` instead of `:`"),
        ("non-hex", "sha256:" + "g" * 64, "non-hex digits"),
        ("spec-placeholder", "sha256:a1b2c3d4...", "the specification's placeholder"),
        ("empty", "", "the empty string"),
        ("number", 12345, "a number"),
        ("null", None, "null"),
        ("object", {"alg": "sha256", "sig": "00"}, "an object"),
    ]
    for name, value, why in malformed:
        c.add(f"hmac-malformed-{name}", f"signature is {why}", _with(OFFER_HUMAN, value), s, "malformed")
    c.add("hmac-malformed-missing", "no `signature` member at all", copy.deepcopy(OFFER_HUMAN), s, "malformed")
    for name, value, why in [
        ("rsa", "rsa:abcd", "an unknown scheme"),
        ("hmac-sha512", "hmac-sha512:" + "0" * 128, "a scheme AJP does not define"),
        ("ed448", "ed448:" + "A" * 152, "an unknown curve"),
        ("ed25519-with-secret", KEY1.sign(ref.jcs(OFFER_HUMAN)), "an `ed25519` signature checked with a shared secret"),
    ]:
        c.add(f"scheme-{name}", f"{why}: the scheme does not fit the key given", _with(OFFER_HUMAN, value), s, "unsupported_scheme")
    c.add("scheme-sha256-with-public-key", "an `sha256` signature checked with a public key",
          _with(OFFER_AGENT, _hmac(OFFER_AGENT, SECRET)), {"public_key": KEY1.form("spki")}, "unsupported_scheme")


def _ed_sign(key: Any, body: Dict[str, Any]) -> Dict[str, Any]:
    return _with(body, key.sign(ref.jcs(ref.unsigned(body))))


def _raw_sig(body: Dict[str, Any]) -> bytes:
    return base64.b64decode(body["signature"][8:])


def _ed_text(raw: bytes) -> str:
    return "ed25519:" + base64.b64encode(raw).decode("ascii")


def _ed25519_cases(c: _Cases) -> None:
    for key, kind, body, label in [
        (KEY1, "spki", OFFER_AGENT, "offer"),
        (KEY1, "b64", OFFER_AGENT, "offer"),
        (KEY1, "hex", OFFER_AGENT, "offer"),
        (KEY2, "spki", GENERIC, "generic"),
        (KEY2, "b64", OFFER_HUMAN, "offer"),
        (KEY3, "hex", GENERIC, "generic"),
        (KEY3, "spki", {}, "empty"),
    ]:
        why = f"Ed25519 ({key.name} of RFC 8032) over the canonical {label} body; key as {kind}"
        c.add(f"ed25519-valid-{key.name[-1]}-{kind}-{label}", why, _ed_sign(key, body), {"public_key": key.form(kind)}, "valid")
    pk = {"public_key": KEY1.form("spki")}
    signed = _ed_sign(KEY1, OFFER_AGENT)
    c.add("ed25519-bad-tampered-top", "a changed top-level value", _set(signed, "budget.max_usd", 5), pk, "bad")
    c.add("ed25519-bad-tampered-nested", "a changed nested value", _set(signed, "task.input.topics", ["x"]), pk, "bad")
    c.add("ed25519-bad-tampered-declaration", "a changed from.declaration_url", _set(signed, "from.declaration_url", "https://evil.example/P.yml"), pk, "bad")
    c.add("ed25519-bad-wrong-key", "signed with TEST 1, checked with TEST 2", signed, {"public_key": KEY2.form("spki")}, "bad")
    raw = _raw_sig(signed)
    flip_r = bytes([raw[0] ^ 1]) + raw[1:]
    c.add("ed25519-bad-flipped-r", "one bit of R flipped", _with(signed, _ed_text(flip_r)), pk, "bad")
    flip_s = raw[:32] + bytes([raw[32] ^ 1]) + raw[33:]
    c.add("ed25519-bad-flipped-s", "one bit of S flipped", _with(signed, _ed_text(flip_s)), pk, "bad")
    s = int.from_bytes(raw[32:], "little")
    for name, value, why in [
        ("s-plus-l", s + L, "S + L: the same value mod L, but S must be < L (RFC 8032 §5.1.7, malleability)"),
        ("s-plus-2l", s + 2 * L, "S + 2L, still fits 256 bits"),
        ("s-equals-l", L, "S = L"),
        ("s-all-ones", 2**256 - 1, "S with every bit set"),
    ]:
        forged = raw[:32] + value.to_bytes(32, "little")
        c.add(f"ed25519-bad-{name}", why, _with(signed, _ed_text(forged)), pk, "bad")
    small = json.loads((ref.VECTORS / "ed25519" / "small_order_encodings.json").read_text("utf-8"))["encodings"]
    identity = bytes.fromhex("01" + "00" * 31)
    seen = set()
    for i, entry in enumerate(small):
        enc = bytes.fromhex(entry["encoding"])
        r_sig = identity + bytes(32)
        if (entry["order"], entry["canonical"]) not in seen:
            seen.add((entry["order"], entry["canonical"]))
            c.add(f"ed25519-bad-small-order-r-{i:02d}", f"R is a small-order point ({entry['encoding'][:8]}...), S = 0, honest key",
                  _with(OFFER_AGENT, _ed_text(enc + bytes(32))), pk, "bad")
        # A forgery for a small-order key: R = identity, S = 0 satisfies the cofactorless
        # equation [S]B = R + [k]A whenever k = H(R||A||M) is a multiple of A's order.
        body = copy.deepcopy(OFFER_AGENT)
        nonce = 0
        while True:
            body["job_id"] = f"job_conformance_forged_{i:02d}_{nonce}"
            if ed_challenge(identity, enc, ref.jcs(body)) % entry["order"] == 0:
                break
            nonce += 1
        kind = "spki" if i % 2 else "hex"
        canon = "canonical" if entry["canonical"] else "non-canonical"
        c.add(f"ed25519-bad-small-order-key-{i:02d}",
              f"a {canon} small-order key (order {entry['order']}) and a forgery that a lax verifier accepts",
              _with(body, _ed_text(r_sig)), {"public_key": public_key_text(enc, kind)}, "bad", js_lax=OPENSSL_LAX)
    c.add("ed25519-legacy-offer", "signed by a pre-0.3 SDK over the top-level allow-list form",
          _with(OFFER_AGENT, KEY1.sign(ref.jcs(ref.legacy_value(OFFER_AGENT)))), pk, "legacy")
    legacy = _with(OFFER_AGENT, KEY1.sign(ref.jcs(ref.legacy_value(OFFER_AGENT))))
    c.add("ed25519-legacy-tampered-nested", "the legacy form leaves budget.max_usd unsigned: the tampered body still matches it",
          _set(legacy, "budget.max_usd", 5000), pk, "legacy")
    text = signed["signature"]
    b64 = text[8:]
    last = b64[-3]
    bad_pad = b64[:-3] + {"A": "B", "Q": "R", "g": "h", "w": "x"}[last] + "=="
    for name, value, why in [
        ("no-padding", "ed25519:" + b64.rstrip("="), "base64 without its `==` padding"),
        ("pad-bits", "ed25519:" + bad_pad, "non-zero pad bits: not the canonical base64 of the 64 bytes"),
        ("url-alphabet", "ed25519:" + b64.replace("+", "-").replace("/", "_") if ("+" in b64 or "/" in b64) else "ed25519:-" + b64[1:], "the base64url alphabet"),
        ("newline", "ed25519:" + b64[:44] + "\n" + b64[44:], "a line break inside the base64"),
        ("87-chars", "ed25519:" + b64[1:], "87 characters"),
        ("hex-form", "ed25519:" + _raw_sig(signed).hex(), "the 64 bytes as hex"),
        ("upper-scheme", "Ed25519:" + b64, "the scheme name is lower case"),
        ("extra-pad", text + "=", "an extra `=`"),
        ("raw-base64", b64, "base64 without a scheme"),
    ]:
        c.add(f"ed25519-malformed-{name}", f"signature is {why}", _with(signed, value), pk, "malformed")


def _result_cases(c: _Cases) -> None:
    pk = {"public_key": KEY1.form("spki")}
    full = _ed_sign(KEY1, RESULT)
    sdk = _with(RESULT, KEY1.sign(ref.jcs(sdk_subset(RESULT))))
    c.add("result-full-checked-full", "a JobResult signed over the full body, checked over the full body", full, pk, "valid", mode="full")
    c.add("result-full-checked-sdk", "signed over the full body, but checked over the SDK subset", full, pk, "bad", mode="sdk")
    c.add("result-sdk-checked-sdk", "signed as the reference SDK 0.3 does (the subset), checked over the subset", sdk, pk, "valid", mode="sdk")
    c.add("result-sdk-checked-full", "signed over the SDK subset, checked over the full body (the specification)", sdk, pk, "bad", mode="full")
    c.add("result-sdk-usage-changed-sdk", "usage is outside the SDK subset: changing it does not break a subset signature (unauthenticated)",
          _set(sdk, "usage.cost_usd", 0.01), pk, "valid", mode="sdk")
    c.add("result-sdk-model-changed-sdk", "agent.model is outside the SDK subset (unauthenticated)",
          _set(sdk, "agent.model.model_id", "another-model"), pk, "valid", mode="sdk")
    c.add("result-sdk-model-changed-full", "the same change refused under the full-body rule", _set(sdk, "agent.model.model_id", "another-model"), pk, "bad", mode="full")
    c.add("result-sdk-output-changed-sdk", "output is inside the SDK subset", _set(sdk, "output.papers", []), pk, "bad", mode="sdk")
    c.add("result-sdk-constraints-changed-sdk", "constraints_asserted is inside the SDK subset", _set(sdk, "constraints_asserted", []), pk, "bad", mode="sdk")
    c.add("result-sdk-agent-id-changed-sdk", "agent.provenance_id is inside the SDK subset", _set(sdk, "agent.provenance_id", "provenance:github:mallory/x"), pk, "bad", mode="sdk")
    c.add("result-full-usage-changed-full", "usage is covered by a full-body signature", _set(full, "usage.cost_usd", 0.01), pk, "bad", mode="full")
    no_output = {k: v for k, v in RESULT.items() if k != "output"}
    c.add("result-sdk-no-output", "an absent output is left out of the subset (JSON.stringify drops undefined)",
          _with(no_output, KEY1.sign(ref.jcs(sdk_subset(no_output)))), pk, "valid", mode="sdk")
    c.add("result-sdk-null-output-is-not-absent", "a null output is not an absent one",
          _set(_with(no_output, KEY1.sign(ref.jcs(sdk_subset(no_output)))), "output", None), pk, "bad", mode="sdk")
    s = {"secret": SECRET}
    c.add("result-hmac-full", "an HMAC-signed result, full body", _with(RESULT, _hmac(RESULT, SECRET)), s, "valid", mode="full")
    c.add("result-hmac-sdk", "an HMAC-signed result over the SDK subset",
          _with(RESULT, ref.hmac_signature(ref.jcs(sdk_subset(RESULT)), SECRET)), s, "valid", mode="sdk")
    c.add("result-legacy-full", "a result signed in the pre-0.3 form is legacy under the full-body rule",
          _with(RESULT, KEY1.sign(ref.jcs(ref.legacy_value(RESULT)))), pk, "legacy", mode="full")


def build() -> List[Dict[str, Any]]:
    c = _Cases()
    _hmac_cases(c)
    _ed25519_cases(c)
    _result_cases(c)
    return c.cases
