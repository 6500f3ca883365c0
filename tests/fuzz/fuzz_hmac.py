"""``hmac_sha256_signature`` and ``HmacSigner`` of the twin under test (atheris / libFuzzer).

An input stands for a secret, a chunk size and a body (``_common.value``, a dict most of
the time, with or without a top-level ``signature`` member).  The first byte picks the
secret's type: bytes, str (from the bytes as UTF-8 with surrogates kept, so a secret
that cannot be encoded occurs), bytearray, memoryview, a bytes subclass, or something
that is no secret (int, None, list).  The twin must agree with the pure twin on the
signature text or the error (class, message, path), and an accepted signature must be
``"sha256:" + hmac.new(secret, canonicalize(body minus "signature"), sha256).hexdigest()``
computed with the standard library; ``hmac_sha256_verified_tag`` must return that tag exactly for
a body carrying that signature (twins agreeing on every other outcome).  ``HmacSigner`` is then fed the canonical bytes in
fuzz-chosen pieces (``copy()`` half way): same hexdigest, ``verify`` accepts the tag and
refuses a flipped or truncated one.
"""

import ast
import hashlib
import hmac
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import Bytes, errors, fuzz_main, outcome, pure, same, value  # noqa: E402

_CHUNKS = (1, 5, 64, 65536, 0, -1, 3, 1 << 20)


class _BytesSub(bytes):
    pass


def make_secret(kind: int, raw: bytes):
    if kind == 1:
        return raw.decode("utf-8", "surrogateescape")
    return (raw, raw, None, bytearray(raw), memoryview(raw), _BytesSub(raw), len(raw), [raw])[kind]


def secret_bytes(secret) -> bytes:
    if isinstance(secret, str):
        return secret.encode("utf-8")
    return bytes(secret)


def check_signer(twin, secret, message: bytes, src: Bytes) -> None:
    key = secret_bytes(secret)
    want = hmac.new(key, message, hashlib.sha256)
    signer = twin.HmacSigner(secret)
    i = 0
    half = None
    while i < len(message):
        n = 1 + src.byte() * 17
        signer.update(memoryview(message)[i : i + n] if n & 1 else message[i : i + n])
        i += n
        if half is None and i >= len(message) // 2:
            half = (signer.copy(), i)
    if half is not None:
        half[0].update(message[half[1] :])
        same("HmacSigner.copy", message, half[0].hexdigest(), want.hexdigest())
    tag = signer.copy().finalize()
    same("HmacSigner", message, tag, want.digest())
    spare = [signer.copy(), signer.copy()]
    signer.verify(want.digest())  # verify finalizes: the refusals below use copies taken before
    for bad in (bytes([tag[0] ^ 1]) + tag[1:], tag[:16]):
        try:
            spare.pop().verify(bad)
        except errors.BadSignature:
            continue
        raise AssertionError(f"HmacSigner.verify accepted a wrong tag {bad.hex()}")


def check_verified_tag(twin, body, secret, chunk, expected) -> None:
    """``hmac_sha256_verified_tag`` (native/hmac_check.pxi): the twins agree on the tag, None or the error;
    the tag is returned exactly when the signature is ``expected`` (None: the body cannot be signed),
    for the body as drawn and with its signature set to ``expected`` and to a near miss of it."""
    bodies = [body]
    if expected is not None and isinstance(body, dict):
        bodies += [dict(body, signature=expected), dict(body, signature=expected[:-1] + "0123456789abcdef"[(int(expected[-1], 16) + 1) % 16])]
    for b in bodies:
        got = outcome(twin.hmac_sha256_verified_tag, b, secret, chunk)
        same("hmac_sha256_verified_tag", b, got, outcome(pure.hmac_sha256_verified_tag, b, secret, chunk))
        plain = type(b) is dict and type(secret) in (str, bytes) and len(secret) > 0
        sig = b.get("signature") if type(b) is dict else None
        if got[0] == "ok" and ast.literal_eval(got[1]) is not None:
            assert plain and sig == expected, "a tag returned for a signature that is not the body's"
            same("hmac_sha256_verified_tag against the hmac module", b, ast.literal_eval(got[1]).hex(), expected[7:])
        elif plain and sig == expected and expected is not None and type(sig) is str:
            raise AssertionError(f"the body's own signature was refused: {got}")


def check(raw: bytes, twin) -> None:
    if len(raw) < 2:
        return
    src = Bytes(raw)
    kind, secret_len = src.byte() & 7, src.byte() % 80
    secret = make_secret(kind, src.take(secret_len))
    chunk = _CHUNKS[src.byte() & 7]
    body = value(src)
    if src.byte() & 1 and isinstance(body, dict):
        body["signature"] = value(src)
    got = outcome(twin.hmac_sha256_signature, body, secret, chunk_size=chunk)
    same("hmac_sha256_signature", raw, got, outcome(pure.hmac_sha256_signature, body, secret, chunk_size=chunk))
    if got[0] != "ok":
        check_verified_tag(twin, body, secret, chunk, None)
        return
    unsigned = {k: v for k, v in body.items() if k != "signature"}
    message = pure.canonicalize(unsigned)
    expected = "sha256:" + hmac.new(secret_bytes(secret), message, hashlib.sha256).hexdigest()
    same("hmac_sha256_signature against the hmac module", raw, ast.literal_eval(got[1]), expected)
    check_verified_tag(twin, body, secret, chunk, expected)
    check_signer(twin, secret, message, src)


if __name__ == "__main__":
    fuzz_main(check)
