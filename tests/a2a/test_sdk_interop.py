"""ajpcore.a2a against the two official A2A SDKs: a2a-python (PyPI ``a2a-sdk[signing]``) and
@a2a-js/sdk (npm), both pinned.

- The ``sdk`` payload of every card in ``conformance/a2a.json`` is byte for byte what each
  SDK canonicalizes.
- Cards signed by each SDK (every algorithm) verify in ajpcore, which names the profile and
  the members the signature does not cover; cards signed by ajpcore verify in each SDK.
- Every verify case of the pack goes through both SDKs; each verdict that differs from
  ajpcore's is in ``DISAGREEMENTS`` with its reason, and the table must be exact.

These run in the ``a2a_interop`` nox job (its own venv with ``a2a-sdk[signing]``;
``.ci/run`` installs tests/interop-a2a with ``npm ci`` and names it in
``AJPCORE_A2A_NODE_MODULES``); that job sets ``AJPCORE_A2A_INTEROP=1``, under which a
missing SDK fails instead of skipping.  Elsewhere they skip, saying why.
"""

import json
import logging
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

import ajpcore
from ajpcore import a2a
from ajpcore.keys import Ed25519PrivateKey

HERE = Path(__file__).resolve().parent.parent
INTEROP = HERE / "interop-a2a"
PACK = HERE.parent / "conformance" / "a2a.json"
NODE = shutil.which("node")
IN_JOB = os.environ.get("AJPCORE_A2A_INTEROP", "").strip() == "1"
IN_CI = os.environ.get("CI", "").strip().lower() == "true"
A2A_SDK_VERSION = "1.3.0"

sys.path.insert(0, str(INTEROP))
import a2a_py  # noqa: E402  (imports the SDK lazily)


def _unavailable(why):
    if IN_JOB:
        pytest.fail("AJPCORE_A2A_INTEROP=1 (the a2a_interop job), so this must run: " + why)
    if IN_CI:
        pytest.skip("runs in the a2a_interop job (nox -s a2a_interop): " + why)
    pytest.skip(why)


@pytest.fixture(scope="module")
def py_sdk():
    """a2a-python, imported in this process (the a2a_interop job's venv has it)."""
    if IN_CI and not IN_JOB:
        _unavailable("a2a-sdk is kept out of the main test venvs")
    try:
        a2a_py._sdk()
    except ImportError as exc:
        _unavailable(f"a2a-sdk[signing] is not installed ({exc}): pip install 'a2a-sdk[signing]=={A2A_SDK_VERSION}'")
    assert a2a_py.version() == A2A_SDK_VERSION, f"a2a-sdk {a2a_py.version()} is not the pinned {A2A_SDK_VERSION}"
    warnings.simplefilter("ignore")  # the SDK warns about every card missing REQUIRED fields
    logging.getLogger("a2a").setLevel(logging.ERROR)
    return a2a_py


@pytest.fixture(scope="module")
def js_sdk():
    """A function running a batch of tasks through @a2a-js/sdk in Node."""
    if IN_CI and not IN_JOB:
        _unavailable("the Node SDK check runs once, not in every test venv")
    if NODE is None:
        _unavailable("node is not installed: the @a2a-js/sdk check needs Node.js 20 or later")
    folder = os.environ.get("AJPCORE_A2A_NODE_MODULES")
    if not folder:
        _unavailable("AJPCORE_A2A_NODE_MODULES is not set: copy tests/interop-a2a/package*.json to a folder, "
                     "run `npm ci --prefix FOLDER` and point the variable at it (.ci/run does)")
    locked = json.loads((INTEROP / "package-lock.json").read_text())["packages"]["node_modules/@a2a-js/sdk"]["version"]
    installed = Path(folder) / "node_modules" / "@a2a-js" / "sdk" / "package.json"
    assert installed.exists(), f"{installed} is missing: AJPCORE_A2A_NODE_MODULES must be an `npm ci` of tests/interop-a2a"
    assert json.loads(installed.read_text())["version"] == locked

    def run(tasks):
        proc = subprocess.run([NODE, str(INTEROP / "a2a_js.mjs"), "--modules", folder], input=json.dumps({"tasks": tasks}),
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert out["sdk"] == locked
        return out["results"]

    return run


def _pack():
    return json.loads(PACK.read_bytes())["cases"]


# -- keys: one of each algorithm's kind, as private JWKs for the SDKs --------------------------


def _b64u(n, size=None):
    raw = n if isinstance(n, bytes) else n.to_bytes(size or (n.bit_length() + 7) // 8, "big")
    return a2a._jws.b64url_encode(raw)


@pytest.fixture(scope="module")
def keys():
    """kid -> (alg, ajpcore-usable private key, private JWK for the SDKs); and the public JWKS (with `alg`)."""
    ed = Ed25519PrivateKey.generate()
    ec_key = ec.generate_private_key(ec.SECP256R1())
    rsa_key = rsa.generate_private_key(65537, 2048)
    out = {}
    for kid, alg, key in (("ed", "EdDSA", ed), ("ec", "ES256", ec_key), ("rs", "RS256", rsa_key), ("ps", "PS256", rsa_key)):
        public = a2a.jwk_from_key(key, kid=kid, alg=alg)
        private = dict(public)
        if alg == "EdDSA":
            private["d"] = _b64u(key.seed())
        elif alg == "ES256":
            private["d"] = _b64u(key.private_numbers().private_value, 32)
        else:
            n = key.private_numbers()
            private.update(d=_b64u(n.d), p=_b64u(n.p), q=_b64u(n.q), dp=_b64u(n.dmp1), dq=_b64u(n.dmq1), qi=_b64u(n.iqmp))
        out[kid] = (alg, key, private, public)
    jwks = {"keys": [v[3] for v in out.values()]}
    return out, jwks


def _card(case_id):
    return next(c["card"] for c in _pack() if c["id"] == case_id)


CLEAN = "payload-rich"  # no empty value, no default, no unknown member: one payload under every profile
MESSY = "payload-nested-defaults"


def test_clean_card_has_one_payload():
    card = _card(CLEAN)
    assert a2a.payload(card, "served") == a2a.payload(card, "spec") == a2a.payload(card, "sdk")


# -- canonical bytes ---------------------------------------------------------------------------


def test_js_sdk_canonicalizes_every_pack_card_as_the_sdk_profile(js_sdk):
    cards = [c for c in _pack() if "payloads" in c]
    results = js_sdk([{"op": "canonicalize", "card": c["card"]} for c in cards])
    for case, result in zip(cards, results):
        assert result == {"ok": True, "value": case["payloads"]["sdk"]}, case["id"]
        assert result["value"].encode() == a2a.payload(case["card"], "sdk")


def test_py_sdk_canonicalizes_every_pack_card_as_the_sdk_profile(py_sdk):
    for case in (c for c in _pack() if "payloads" in c):
        assert py_sdk.canonicalize(case["card"]) == case["payloads"]["sdk"], case["id"]


# -- SDK-signed cards verified by ajpcore --------------------------------------------------------


@pytest.mark.parametrize("kid", ["ed", "ec", "rs", "ps"])
def test_js_signed_cards_verify_in_ajpcore(js_sdk, keys, kid, core):
    by_kid, jwks = keys
    alg, _, private, _ = by_kid[kid]
    header = {"alg": alg, "kid": kid, "typ": "JOSE"}
    signed = js_sdk([{"op": "sign", "card": _card(CLEAN), "jwk": private, "protected": header},
                     {"op": "sign", "card": _card(MESSY), "jwk": private, "protected": header}])
    clean, messy = (r["value"] for r in signed)
    result = a2a.verify_card(ajpcore.canonicalize(clean), jwks)
    assert (result.kid, result.alg, result.profile, result.unsigned_members) == (kid, alg, "served", ())
    # The JS signer covers the card after dropping its empty values: only `sdk` verifies, and says what it left out.
    result = a2a.verify_card(messy, jwks)
    assert (result.kid, result.profile) == (kid, "sdk")
    assert result.unsigned_members == a2a._profiles.project(_card(MESSY), "sdk")[1]
    with pytest.raises(ajpcore.BadSignature):
        a2a.verify_card(messy, jwks, profile="served")


@pytest.mark.parametrize("kid", ["ed", "ec", "rs", "ps"])
def test_py_signed_cards_verify_in_ajpcore(py_sdk, keys, kid, core):
    by_kid, jwks = keys
    alg, _, private, _ = by_kid[kid]
    header = {"alg": alg, "kid": kid, "typ": "JOSE", "jku": None}
    served = py_sdk.sign(_card(CLEAN), private, header)
    assert json.loads(a2a._jws.b64url_decode(served["signatures"][0]["protected"], "p"))["jku"] is None  # a2a-python writes null
    result = a2a.verify_card(json.dumps(served), jwks)
    assert (result.kid, result.alg, result.profile, result.unsigned_members) == (kid, alg, "served", ())
    # The messy card as a2a-python serves it (MessageToDict): its empty values went through the model, and
    # only `sdk` verifies; the members left out are exactly those the served card still carries empty.
    served = py_sdk.sign(_card(MESSY), private, header)
    result = a2a.verify_card(served, jwks)
    assert (result.kid, result.profile) == (kid, "sdk")
    assert result.unsigned_members == a2a._profiles.project(served, "sdk")[1] != ()
    assert "securityRequirements" not in result and "securityRequirements" in result.to_dict(include_unsigned=True)


# -- ajpcore-signed cards verified by the SDKs -------------------------------------------------


def _ajpcore_signed(keys, kid, card_id, profile):
    by_kid, _ = keys
    alg, key, _, _ = by_kid[kid]
    return a2a.sign_card(_card(card_id), key, kid=kid, alg=alg, profile=profile)


CROSS = [("clean-served", CLEAN, "served", True), ("messy-sdk", MESSY, "sdk", True),
         # Signed over every member, empty ones included: the SDKs drop those before checking.
         ("messy-served", MESSY, "served", False)]


@pytest.mark.parametrize("kid", ["ed", "ec", "rs", "ps"])
def test_ajpcore_signed_cards_verify_in_js(js_sdk, keys, kid):
    tasks = [{"op": "verify", "card": _ajpcore_signed(keys, kid, card, profile), "jwks": keys[1]} for _, card, profile, _ in CROSS]
    for (name, _, _, expected), result in zip(CROSS, js_sdk(tasks)):
        assert result["ok"] is expected, (name, result)


@pytest.mark.parametrize("kid", ["ed", "ec", "rs", "ps"])
def test_ajpcore_signed_cards_verify_in_py(py_sdk, keys, kid):
    from a2a.utils.signing import InvalidSignaturesError

    for name, card, profile, expected in CROSS:
        signed = _ajpcore_signed(keys, kid, card, profile)
        if expected:
            py_sdk.verify(signed, keys[1])
        else:
            with pytest.raises(InvalidSignaturesError):
                py_sdk.verify(signed, keys[1])


# -- every verify case of the pack through both SDKs --------------------------------------------

_OPTION = "an ajpcore verifier option the SDK does not have"
DISAGREEMENTS = {
    # case id: (@a2a-js/sdk verdict, a2a-python verdict, why they differ from ajpcore's)
    "valid-ps256": ("valid", "refused", "a2a-python: PyJWK of an RSA JWK without `alg` is RS256 only, so PS256 never verifies"),
    "profile-served": ("refused", "refused", "signed over every member (`served`): the SDKs drop empty values before checking"),
    "profile-served-spec-example": ("refused", "refused", "the same, on the §8.4.1 example card"),
    "profile-spec": ("refused", "refused", "signed under §8.4.1's own rules (REQUIRED empties kept): the SDKs drop every empty value"),
    "profile-spec-spec-example": ("refused", "refused", "the SDKs do not reproduce the section's worked example (`description: \"\"`, `skills: []`)"),
    "unknown-member-signed-served": ("refused", "refused", "the SDKs drop members outside their model before checking"),
    "profile-forced-served-refuses-sdk": ("valid", "valid", _OPTION + " (profile `served`)"),
    "unknown-member-added-served-only": ("valid", "valid", _OPTION + " (profile `served`): both accept a member added after signing, silently"),
    "alg-not-allowed": ("valid", "refused", "@a2a-js/sdk has no algorithm allow-list (a2a-python's `algorithms` does refuse)"),
    "jku-foreign": ("valid", "valid", _OPTION + " (`allowed_jku`); the SDKs hand `jku` to the key provider"),
    "crit-b64-false": ("valid", "refused", "@a2a-js/sdk (jose) implements RFC 7797 `b64: false`; ajpcore refuses it"),
    "header-duplicate-name": ("valid", "valid", "JSON.parse and json.loads keep the last `alg`; ajpcore's strict decoder refuses duplicates"),
    "header-lone-surrogate": ("valid", "valid", "JSON.parse and json.loads admit lone surrogate escapes (not I-JSON)"),
    "header-typ-jwt": ("valid", "valid", "the SDKs accept any `typ`; ajpcore requires `JOSE` when present"),
    "header-unprotected-overlap": ("refused", "valid", "a2a-python ignores the unprotected `header`; jose and ajpcore require it disjoint (RFC 7515 §7.2.1)"),
    "b64-signature-pad-bits": ("valid", "refused", "jose decodes base64url with non-zero pad bits; ajpcore wants one spelling per signature"),
    "b64-signature-whitespace": ("valid", "refused", "jose skips whitespace inside base64url"),
}


def _pack_verify_cases():
    return [c for c in _pack() if "card" in c and "expect" in c]


def _ajpcore_verdict(case):
    return "valid" if case["expect"] == "valid" else "refused"


def _py_verdict(py_sdk, case):
    from a2a.utils.signing import SignatureVerificationError

    try:
        py_sdk.verify(case["card"], case["jwks"], case.get("algorithms", a2a.ALGORITHMS))
    except SignatureVerificationError:
        return "refused"
    return "valid"


def test_every_pack_case_through_both_sdks_disagrees_only_as_listed(js_sdk, py_sdk):
    cases = _pack_verify_cases()
    js = js_sdk([{"op": "verify", "card": c["card"], "jwks": c["jwks"]} for c in cases])
    found = {}
    for case, result in zip(cases, js):
        verdicts = ("valid" if result["ok"] else "refused", _py_verdict(py_sdk, case))
        if verdicts != (_ajpcore_verdict(case),) * 2:
            found[case["id"]] = verdicts
    assert found == {cid: entry[:2] for cid, entry in DISAGREEMENTS.items()}


def test_disagreement_table_names_pack_cases():
    ids = {c["id"] for c in _pack_verify_cases()}
    assert set(DISAGREEMENTS) <= ids
    assert all(len(entry) == 3 and entry[2] for entry in DISAGREEMENTS.values())


# -- where the two SDKs disagree with each other (ajpcore's `sdk` follows @a2a-js/sdk) -----------

_BASE = {"name": "P", "description": "d", "version": "1", "capabilities": {}, "defaultInputModes": ["t"], "defaultOutputModes": ["t"],
         "supportedInterfaces": [{"url": "https://s.example", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}], "skills": []}
SDK_SPLITS = {
    # name: (card changes, why)
    "both-spellings": ({"supportedInterfaces": [{"url": "https://s.example", "protocolBinding": "A", "protocol_binding": "B", "protocolVersion": "1.0"}]},
                       "both the JSON and the proto name: @a2a-js/sdk reads `protocolBinding`, a2a-python `protocol_binding`; one signature, two contents"),
    "name-not-a-string": ({"name": 5}, "@a2a-js/sdk coerces 5 to \"5\", a2a-python refuses the card; ajpcore keeps the number"),
    "bool-as-string": ({"capabilities": {"streaming": "yes"}}, "@a2a-js/sdk coerces \"yes\" to true, a2a-python refuses the card; ajpcore keeps the string"),
}


@pytest.mark.parametrize("name", sorted(SDK_SPLITS))
def test_sdks_split_on(js_sdk, py_sdk, name):
    card = dict(_BASE, **SDK_SPLITS[name][0])
    (js,) = js_sdk([{"op": "canonicalize", "card": card}])
    try:
        py = py_sdk.canonicalize(card)
    except Exception as exc:  # ParseError: the card is refused whole
        py = f"refused: {type(exc).__name__}"
    ours = a2a.payload(card, "sdk").decode()
    assert js["ok"] and js["value"] != py
    if name == "both-spellings":
        assert ours == js["value"] and '"protocolBinding":"B"' in py
    else:
        assert py.startswith("refused") and ours != js["value"]


# -- sign_card's default (A2A §8.4.1 as the SDKs read it): every card verifies in both SDKs (issue 31) --

DEFAULT_SIGNED = {
    "default-valued": dict(_BASE, capabilities={"streaming": False, "pushNotifications": False, "extendedAgentCard": False,
                                                "extensions": [{"uri": "https://e.example", "required": False, "description": ""}]}),
    "empty-members": dict(_BASE, description="", iconUrl="", documentationUrl="", securitySchemes={}, securityRequirements=[],
                          provider={}, skills=[{"id": "s", "name": "S", "description": "", "tags": [], "examples": []}]),
    "non-ascii": dict(_BASE, name="Agent \u00e9t\u00e9 \u65e5\u672c \U0001f326", description="\u00fcber \u20ac \u2028 \\ \"q\"",
                      skills=[{"id": "\u00df", "name": "\ufb01 \U0001f600", "description": "\u00e9", "tags": ["\u00e9t\u00e9"]}]),
    "numbers": dict(_BASE, capabilities={"extensions": [{"uri": "https://e.example", "params": {
        "n": [0, -0.0, 1, -5, 1.5, 0.1, 1e21, 1e-7, 2 ** 53, 123456789012, 1e300, 5e-324], "\u00e9": {"x": 1e21, "e": ""}}}]}),
}


def _default_signed(keys, kid):
    by_kid, _ = keys
    alg, key, _, _ = by_kid[kid]
    return {name: a2a.sign_card(card, key, kid=kid, alg=alg) for name, card in DEFAULT_SIGNED.items()}


@pytest.mark.parametrize("kid", ["ed", "ec", "rs", "ps"])
def test_default_signed_cards_verify_in_js(js_sdk, keys, kid):
    signed = _default_signed(keys, kid)
    results = js_sdk([{"op": "verify", "card": card, "jwks": keys[1]} for card in signed.values()])
    assert {name: result["ok"] for name, result in zip(signed, results)} == dict.fromkeys(signed, True), results


@pytest.mark.parametrize("kid", ["ed", "ec", "rs", "ps"])
def test_default_signed_cards_verify_in_py(py_sdk, keys, kid):
    for name, card in _default_signed(keys, kid).items():
        py_sdk.verify(card, keys[1])
        assert a2a.verify_card(ajpcore.canonicalize(card), keys[1]).kid == kid, name


def test_main_default_served_was_refused_by_the_sdks(js_sdk, py_sdk, keys):
    # What issue 31 found: signed over every member (`served`, the old default), the SDKs refuse.
    from a2a.utils.signing import InvalidSignaturesError

    alg, key, _, _ = keys[0]["ed"]
    card = a2a.sign_card(DEFAULT_SIGNED["default-valued"], key, kid="ed", alg=alg, profile="served")
    assert js_sdk([{"op": "verify", "card": card, "jwks": keys[1]}])[0]["ok"] is False
    with pytest.raises(InvalidSignaturesError):
        py_sdk.verify(card, keys[1])


# -- ajpcore.a2a.sdk: the signer and verifier in a2a-sdk's own server and client (issue 31) ---------


def _free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


RAW_CARDS = {}  # path -> the exact bytes the raw route serves


@pytest.fixture(scope="module")
def sdk_server(py_sdk, keys):
    """a2a-sdk's card routes (Starlette, under uvicorn on 127.0.0.1) serving one card per key, signed
    by ``CardSigner`` through ``card_modifier``; plus ``/raw/<name>/...`` routes serving fixed bytes."""
    import asyncio
    import threading

    try:
        import starlette  # noqa: F401  (a2a-sdk[http-server])
        import uvicorn
    except ImportError as exc:
        _unavailable(f"the server half needs a2a-sdk[signing,http-server] and uvicorn ({exc})")
    from a2a.client.card_resolver import parse_agent_card
    from a2a.server.routes.agent_card_routes import create_agent_card_routes
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    from ajpcore.a2a.sdk import CardSigner

    card = parse_agent_card(json.loads(json.dumps(DEFAULT_SIGNED["non-ascii"])))
    routes = []
    for kid, (alg, key, _, _) in keys[0].items():
        routes += create_agent_card_routes(card, card_modifier=CardSigner(key, kid=kid, alg=alg).card_modifier,
                                           card_url=f"/{kid}/.well-known/agent-card.json")

    async def raw(request):
        return Response(RAW_CARDS[request.url.path], media_type="application/json")

    routes.append(Route("/raw/{name}/.well-known/agent-card.json", raw))
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=routes), host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(500):
        if server.started:
            break
        threading.Event().wait(0.01)
    assert server.started, "uvicorn did not start"
    yield f"http://127.0.0.1:{port}", asyncio
    server.should_exit = True
    thread.join(10)


def _resolve(url, verifier, *, hooked=True):
    """The card as a2a-sdk's A2ACardResolver fetches it, ``verifier`` as its signature_verifier."""
    import asyncio

    import httpx
    from a2a.client.card_resolver import A2ACardResolver

    async def go():
        async with (verifier.httpx_client() if hooked else httpx.AsyncClient()) as client:
            return await A2ACardResolver(client, url).get_agent_card(signature_verifier=verifier)

    return asyncio.run(go())


@pytest.mark.parametrize("kid", ["ed", "ec", "rs", "ps"])
def test_sdk_adapter_signed_card_verifies_in_sdk_client_and_both_sdks(sdk_server, keys, js_sdk, kid):
    import httpx
    from a2a.utils.signing import create_signature_verifier
    from jwt import PyJWK

    from ajpcore.a2a.sdk import CardVerifier

    base, _ = sdk_server
    url = f"{base}/{kid}"
    verifier = CardVerifier(keys[1])
    card = _resolve(url, verifier)
    assert card.name == DEFAULT_SIGNED["non-ascii"]["name"] and len(card.signatures) == 1
    served = httpx.get(url + "/.well-known/agent-card.json").content
    result = a2a.verify_card(served, keys[1])
    assert (result.kid, result.profile) == (kid, "sdk")  # what the server serves empty is not covered
    assert result.unsigned_members == ("/capabilities",) and json.loads(served)["capabilities"] == {}
    # The SDK's own verifier and @a2a-js/sdk take the same card.
    create_signature_verifier(lambda k, j: PyJWK(next(x for x in keys[1]["keys"] if x["kid"] == k)), list(a2a.ALGORITHMS))(card)
    assert js_sdk([{"op": "verify", "card": json.loads(served), "jwks": keys[1]}])[0]["ok"] is True


def test_sdk_adapter_in_client_factory(sdk_server, keys):
    import asyncio

    from a2a.client import ClientConfig, ClientFactory

    from ajpcore.a2a.sdk import CardVerifier

    base, _ = sdk_server
    verifier = CardVerifier(keys[1], algorithms=["EdDSA"])

    async def go():
        async with verifier.httpx_client() as http:
            client = await ClientFactory(ClientConfig(httpx_client=http)).create_from_url(f"{base}/ed", signature_verifier=verifier)
            return verifier.verified, client

    verified, _ = asyncio.run(go())
    assert (verified.kid, verified.alg) == ("ed", "EdDSA")


def _raw(name, body):
    RAW_CARDS[f"/raw/{name}/.well-known/agent-card.json"] = body
    return f"/raw/{name}"


def _signed_bytes(keys, card, **kw):
    alg, key, _, _ = keys[0]["ed"]
    return ajpcore.canonicalize(a2a.sign_card(card, key, kid="ed", alg=alg, **kw))


def test_sdk_adapter_refusals_are_a2a_exceptions(sdk_server, keys):
    from a2a.utils.signing import InvalidSignaturesError, NoSignatureError, SignatureVerificationError

    from ajpcore.a2a.sdk import CardVerifier

    base, _ = sdk_server
    verifier = CardVerifier(keys[1])
    good = _signed_bytes(keys, DEFAULT_SIGNED["numbers"])
    tampered = good.replace(b'"version":"1"', b'"version":"2"')
    duplicate = good.replace(b'{"capabilities"', b'{"name":"Evil","capabilities"', 1)  # json.loads keeps the last `name`
    no_interfaces = {k: v for k, v in _BASE.items() if k != "supportedInterfaces"}  # a2a-sdk then reads the v0.3 `url`, unsigned
    injected = json.loads(_signed_bytes(keys, no_interfaces))
    injected["url"] = "https://evil.example/a2a"
    cases = {
        "bad": (tampered, InvalidSignaturesError, ajpcore.BadSignature),
        "dup": (duplicate, InvalidSignaturesError, ajpcore.DecodeError),
        "unsigned": (ajpcore.canonicalize(DEFAULT_SIGNED["numbers"]), NoSignatureError, ajpcore.UnsignedCard),
        "injected": (json.dumps(injected).encode(), InvalidSignaturesError, None),
    }
    assert _resolve(base + _raw("good", good), verifier).version == "1"
    for name, (body, raised, cause) in cases.items():
        with pytest.raises(raised) as caught:
            _resolve(base + _raw(name, body), verifier)
        assert isinstance(caught.value, SignatureVerificationError)
        if cause is not None:
            assert isinstance(caught.value.__cause__, cause), (name, caught.value.__cause__)
    assert "differs from what the signature covers" in str(caught.value) and "/url" in str(caught.value)
    others = CardVerifier({"keys": [k for k in keys[1]["keys"] if k["kid"] != "ed"]})
    with pytest.raises(InvalidSignaturesError) as caught:
        _resolve(base + _raw("good", good), others)
    assert isinstance(caught.value.__cause__, ajpcore.UntrustedKey)
    # a2a-sdk's own verifier passes the duplicate-name card: it checks what json.loads kept (the last `name`).
    a2a_py.verify(json.loads(duplicate), keys[1])
    # Without the capture hook there are no bytes as received: refused, saying what to add.
    with pytest.raises(InvalidSignaturesError, match="CardVerifier.capture"):
        _resolve(base + _raw("good", good), verifier, hooked=False)
