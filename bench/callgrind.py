"""Instructions per call under callgrind: ajpcore against orjson on the hot paths, and a check against a baseline.

Wall-clock minima on a shared VM move by tens of percent from run to run; the number of
instructions a call executes does not (same binary, same input, same hash seed: the count
repeats to a few instructions).  This driver counts, under ``valgrind --tool=callgrind``,
the instructions of one call of each hot path, for ajpcore's native core and for orjson in
the same process, and compares each ``ajpcore / orjson`` ratio with a committed baseline::

    python bench/callgrind.py                                        # measure, print the table
    python bench/callgrind.py --check bench/callgrind_baseline.json  # ... exit 1 when a ratio is >3 % above
    python bench/callgrind.py --write bench/callgrind_baseline.json  # record a new baseline
    python bench/callgrind.py --only decode: --peers                 # decode against msgspec and pysimdjson too

Updating the baseline is a commit that says why (a faster orjson, a new compiler, a
deliberate trade).  The nox session ``callgrind`` installs the orjson and Cython versions
the baseline names, so only ajpcore's code (and the C compiler) can move a ratio.

How a call is counted: the process runs under callgrind with instrumentation off until
every input is built and every contender has been called a few times (imports, the schema
compile, the HMAC key cache).  A tiny C helper, compiled here from valgrind's
``callgrind.h`` and loaded with ctypes, issues callgrind's client requests: zero the counters,
run the loop ``for a in args: f(a)`` over ``n`` prepared inputs, dump the counters under
a label; again with ``n + k`` inputs.  ``(count(n + k) - count(n)) / k`` is one call plus one
loop step; the loop step (the same loop over the builtin ``id``) is subtracted.  The garbage
collector is off during the loops.  Encoders get fresh strings: each input is the fixture's
bytes decoded anew by ``orjson.loads`` (before the counters start), so no str holds a cached
UTF-8 copy (see bench/README.md "Fresh strings").  The receive path gets distinct signed
offers (new ``job_id`` each) and a fresh ``MemoryReplayGuard`` per loop, so every admission
is a real insertion.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

TOLERANCE = 0.03
"""A ratio more than this fraction above its baseline fails the check."""

HELPER_C = r"""
#include <valgrind/callgrind.h>
void cg_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void cg_zero(void) { CALLGRIND_ZERO_STATS; }
void cg_dump(const char *label) { CALLGRIND_DUMP_STATS_AT(label); }
"""

MALLOC_TUNABLE = "glibc.malloc.mmap_threshold=131072"
"""glibc's malloc serves a block of at least 128 KiB by mmap, and so grows it by mremap,
without copying; but by default it raises that threshold each time such a block is freed, so
whether a growing output buffer is copied (and how many instructions memcpy adds) depended on
the cases measured earlier in the process: ``canonicalize:text-emoji`` counted 1.48M in the
full run and 1.57-1.59M alone (orjson 3.02M and 2.91-2.95M).  Setting the threshold fixes it
(glibc then never adjusts it), so a count depends on the binary and the input only."""

# name -> (small n, extra k): the loops run n and n + k calls.
SMALL = (20, 100)
LARGE = (1, 4)


# ---------------------------------------------------------------- child: runs under valgrind


PEERS = {"msgspec": ("msgspec.json", "decode"), "simdjson": ("simdjson", "loads")}
"""``--peers``: more decoders (docs/benchmarks.md), counted where they import; never in the baseline."""


def _cases(peers: bool = False) -> List[Tuple[str, str, Callable[[int], Tuple[Callable[..., Any], List[Any], Dict[str, Any]]], Tuple[int, int]]]:
    """Every measured ``(case, contender, make(count) -> (f, args, extra), (n, k))``."""
    import base64
    import hmac

    import orjson

    import data
    from ajpcore import Ed25519PrivateKey, _core_c, ajp
    from ajpcore.ajp import MemoryReplayGuard
    from ajpcore.provenance import MemoryKeyPins, sign_declaration
    from ajpcore.signing import sign, verify

    cases: List[Tuple[str, str, Any, Tuple[int, int]]] = []

    def fixed(fn: Callable[..., Any], arg: Any) -> Callable[[int], Any]:
        return lambda count: (fn, [arg] * count, ())

    def fresh(fn: Callable[..., Any], doc: bytes, *extra: Any) -> Callable[[int], Any]:
        # json.loads, not orjson.loads: orjson's process-wide key cache hands out shared
        # name objects whose state depends on every document decoded before, and moved
        # orjson's own count on result64k by 3 % between runs; json's names are new each call.
        return lambda count: (fn, [json.loads(doc) for _ in range(count)], extra)

    decoders: Dict[str, Callable[..., Any]] = {"ajpcore": _core_c.decode, "orjson": orjson.loads}
    encoders: Dict[str, Tuple[Callable[..., Any], Tuple[Any, ...]]] = {
        "ajpcore": (_core_c.canonicalize, ()),
        # orjson.dumps(value, None, OPT_SORT_KEYS): positional, so the loop passes no keyword dict.
        "orjson": (orjson.dumps, (None, orjson.OPT_SORT_KEYS)),
    }
    try:
        import ssrjson

        decoders["ssrjson"] = ssrjson.loads
        encoders["ssrjson"] = (ssrjson.dumps_to_bytes, ())  # unsorted, not RFC 8785: a floor, not a peer
    except ImportError:
        pass
    if peers:
        import importlib

        for who, (module, name) in PEERS.items():
            try:
                decoders[who] = getattr(importlib.import_module(module), name)
            except ImportError:
                print(f"callgrind: {who} is not importable: not counted", flush=True)
    for fixture in _fixtures():
        doc = data.wire(fixture)  # as sent: pretty-printed for catalog-pretty
        for who, fn in decoders.items():
            cases.append((f"decode:{fixture}", who, fixed(fn, doc), SMALL if len(doc) < 4096 else LARGE))
    for fixture in _fixtures():
        doc = data.encoded(fixture)
        for who, (fn, extra) in encoders.items():
            cases.append((f"canonicalize:{fixture}", who, fresh(fn, doc, *extra), SMALL if len(doc) < 4096 else LARGE))

    # The unsafe pipeline a user writes with orjson: no strictness, no schema, not RFC 8785.
    key = data.SECRET

    def unsafe(raw: bytes) -> Any:
        body = orjson.loads(raw)
        signature = body.pop("signature")
        digest = hmac.digest(key, orjson.dumps(body, option=orjson.OPT_SORT_KEYS), "sha256")
        if not hmac.compare_digest("sha256:" + digest.hex(), signature):
            raise ValueError("bad signature")
        return body

    def envelope(raw: bytes) -> Any:
        offer = ajp.JobOffer.from_json(raw)
        offer.verify(secret=key)
        return offer

    base = data.value("offer")
    signed = dict(base)
    signed["signature"] = sign(signed, secret=key)
    raw = orjson.dumps(signed)
    cases.append(("envelope:offer", "ajpcore", fixed(envelope, raw), SMALL))
    cases.append(("envelope:offer", "orjson", fixed(unsafe, raw), SMALL))

    now = "2026-03-05T10:01:00Z"
    me = base["to"]["provenance_id"]
    offers: List[bytes] = []
    for i in range(2 * sum(SMALL)):
        offer = dict(base, job_id=f"{base['job_id']}_{i:04d}")
        offer["signature"] = sign(offer, secret=key)
        offers.append(orjson.dumps(offer))

    def new_guards(make_receive: Callable[[], Tuple[Callable[..., Any], Dict[str, Any]]], signed: List[bytes]) -> Any:
        # A fresh receiver (a fresh guard) per loop, and offers no guard of this process has seen:
        # every admission inserts.  The two halves of `signed` take turns.
        turn = [0]

        def make(count: int) -> Any:
            start = turn[0] % 2 * sum(SMALL)
            turn[0] += 1
            receive, keywords = make_receive()
            return receive, signed[start:start + count], keywords

        return make

    def hmac_receiver() -> Any:
        return ajp.Receiver(recipient=me, secret=key, replay_guard=MemoryReplayGuard()).receive, {"now": now}

    def hmac_receive_offer() -> Any:
        return ajp.receive_offer, {"now": now, "recipient": me, "secret": key, "replay_guard": MemoryReplayGuard()}

    def hmac_floor(raw: bytes) -> Any:
        value = _core_c.decode(raw)
        verify(value, secret=key)
        return value

    # receive:offer: the HMAC receive (a human sender) through the Receiver, against the unsafe pipeline;
    # floor: decode and one signature check, what no receiver can skip.
    cases.append(("receive:offer", "ajpcore", new_guards(hmac_receiver, offers), SMALL))
    cases.append(("receive:offer", "orjson", lambda count: (unsafe, offers[:count], ()), SMALL))
    cases.append(("receive:offer", "floor", lambda count: (hmac_floor, offers[:count], ()), SMALL))
    # receive_offer: the one-call form of the same policy (public, documented), same offers.
    cases.append(("receive_offer:offer", "ajpcore", new_guards(hmac_receive_offer, offers), SMALL))
    cases.append(("receive_offer:offer", "orjson", lambda count: (unsafe, offers[:count], ()), SMALL))

    # receive:agent-offer: an agent's offer (Ed25519) through a Receiver whose identity cache is warm
    # (the URL gate, the resolver, the cached declaration, the capability rule, MemoryKeyPins, one
    # verify, the guard), against the unsafe pipeline (orjson + one verify) and the floor (decode + one
    # ajpcore.verify: canonical signing bytes and one Ed25519 verify).
    agent_key = Ed25519PrivateKey.from_seed(bytes(range(32)))
    agent_id, agent_url = "provenance:domain:agent.ajpcore-bench.net", "https://agent.ajpcore-bench.net/.well-known/provenance.json"
    declaration = _core_c.canonicalize(sign_declaration(
        {"provenance": "0.2", "name": "Bench agent", "description": "Finds papers.", "provenance_id": agent_id,
         "capabilities": ["read:web", "delegate:agents"], "constraints": ["no:pii"]}, agent_key))
    agent_base = dict(base, **{"from": {"type": "agent", "provenance_id": agent_id, "declaration_url": agent_url}})
    agent_offers: List[bytes] = []
    for i in range(2 * sum(SMALL) + 1):
        offer = dict(agent_base, job_id=f"{base['job_id']}_agent_{i:04d}")
        offer["signature"] = sign(offer, private_key=agent_key)
        agent_offers.append(orjson.dumps(offer))
    warm, agent_offers = agent_offers[0], agent_offers[1:]
    public = agent_key.public_key

    def resolver(provenance_id: str, url: str) -> Any:
        return declaration, url

    def agent_receiver() -> Any:
        r = ajp.Receiver(recipient=me, declarations=resolver, pins=MemoryKeyPins(), replay_guard=MemoryReplayGuard())
        r.receive(warm, now=now)  # the identity cache is warm, as on a receiver's second offer
        return r.receive, {"now": now}

    def agent_unsafe(raw: bytes) -> Any:
        body = orjson.loads(raw)
        signature = body.pop("signature")
        public.verify(base64.b64decode(signature[8:]), orjson.dumps(body, option=orjson.OPT_SORT_KEYS))
        return body

    def agent_floor(raw: bytes) -> Any:
        value = _core_c.decode(raw)
        verify(value, public_key=public)
        return value

    cases.append(("receive:agent-offer", "ajpcore", new_guards(agent_receiver, agent_offers), SMALL))
    cases.append(("receive:agent-offer", "orjson", lambda count: (agent_unsafe, agent_offers[:count], ()), SMALL))
    cases.append(("receive:agent-offer", "floor", lambda count: (agent_floor, agent_offers[:count], ()), SMALL))
    return cases


def _fixtures() -> List[str]:
    """Every fixture of bench/data.py the decode and canonicalize benches use, but ``mixed8m`` (8 MB: too long here)."""
    import data

    return [f for f in data.FIXTURES + data.TEXT_FIXTURES + data.SHAPE_FIXTURES if f != "mixed8m"]


def _loop(f: Callable[..., Any], args: List[Any], extra: Any) -> None:
    """``f(a)`` for every ``a``; ``extra``: more positional arguments (a tuple) or keywords (a dict)."""
    if isinstance(extra, dict):
        for a in args:
            f(a, **extra)
    elif len(extra) == 2:
        x, y = extra
        for a in args:
            f(a, x, y)
    else:
        for a in args:
            f(a)


def child(helper: str, only: Optional[str], peers: bool = False) -> None:
    """Run every case (whose name contains ``only``, when given) between client requests (under callgrind)."""
    import ctypes
    import gc

    lib = ctypes.CDLL(helper)
    lib.cg_dump.argtypes = [ctypes.c_char_p]
    from ajpcore import _core_c

    print(f"simd={_core_c.SIMD}", flush=True)  # the level the core runs at under valgrind's CPU
    cases = [c for c in _cases(peers) if only is None or only in c[0]]
    # Warm every contender (lazy imports, compiled schemas, key caches) before anything is counted.
    for _, _, make, _ in cases:
        _loop(*make(3))
    cases.append(("loop", "id", lambda count: (id, [None] * count, ()), SMALL))
    lib.cg_start()
    for case, who, make, (n, k) in cases:
        for count in (n, n + k):
            f, args, kw = make(count)
            gc.collect()
            gc.disable()
            lib.cg_zero()
            _loop(f, args, kw)
            lib.cg_dump(f"{case}|{who}|{count}".encode())
            gc.enable()
            del f, args, kw


# ---------------------------------------------------------------- parent: runs valgrind, reads, checks


def _helper(work: Path) -> Path:
    source = work / "cg_marks.c"
    source.write_text(HELPER_C)
    out = work / "cg_marks.so"
    cc = os.environ.get("CC") or (sysconfig.get_config_var("CC") or "cc").split()[0]
    try:
        subprocess.run([cc, "-O1", "-shared", "-fPIC", "-o", str(out), str(source)], check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        sys.exit(f"callgrind: cannot build the client-request helper with {cc} (valgrind's headers, "
                 f"<valgrind/callgrind.h>, come with the valgrind package): {detail.strip()}")
    return out


def _read_dumps(work: Path) -> Dict[Tuple[str, str, int], int]:
    counts: Dict[Tuple[str, str, int], int] = {}
    for path in sorted(work.glob("cg.out*"), key=lambda p: int(p.suffix[1:]) if p.suffix[1:].isdigit() else 0):
        label = total = None
        for line in path.read_text("utf-8", "replace").splitlines():
            if line.startswith("desc: Trigger: Client Request: "):
                label = line.split(": ", 3)[3].strip()
            elif line.startswith("summary:"):  # the part's cost ("totals:" re-adds listed costs; it can differ)
                total = int(line.split()[1])
        if label and total is not None and label.count("|") == 2:
            case, who, count = label.split("|")
            counts[(case, who, int(count))] = total
    return counts


def measure(only: Optional[str] = None, peers: bool = False) -> Dict[str, Any]:
    """Run the child under callgrind; ``{"cases": {case: {contender: instructions per call}}, ...}``."""
    if shutil.which("valgrind") is None:
        sys.exit("callgrind: valgrind is not installed (apt-get install valgrind)")
    keep = os.environ.get("AJPCORE_CALLGRIND_KEEP")  # a folder: keep the dumps there (callgrind_annotate them)
    with tempfile.TemporaryDirectory(prefix="ajpcore-callgrind-") as tmp:
        work = Path(keep) if keep else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        helper = _helper(work)
        env = dict(os.environ, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
        env["GLIBC_TUNABLES"] = ":".join(filter(None, [env.get("GLIBC_TUNABLES"), MALLOC_TUNABLE]))
        command = [
            "valgrind", "--tool=callgrind", "--instr-atstart=no", "--dump-line=no",
            f"--callgrind-out-file={work / 'cg.out'}", sys.executable, str(Path(__file__).resolve()),
            "--child", str(helper),
        ] + (["--only", only] if only else []) + (["--peers"] if peers else [])
        proc = subprocess.run(command, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"callgrind: the driver failed under valgrind (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
        counts = _read_dumps(work)
    simd = next((line.split("=", 1)[1] for line in proc.stdout.splitlines() if line.startswith("simd=")), "?")
    per_call: Dict[Tuple[str, str], float] = {}
    for (case, who, count), total in counts.items():
        small = min(c for (cs, w, c) in counts if cs == case and w == who)
        if count != small:
            per_call[(case, who)] = (total - counts[(case, who, small)]) / (count - small)
    step = per_call.pop(("loop", "id"))
    table: Dict[str, Dict[str, int]] = {}
    for (case, who), value in per_call.items():
        table.setdefault(case, {})[who] = round(value - step)
    import orjson

    versions = {"python": platform.python_version(), "orjson": orjson.__version__, "simd": simd}
    try:
        import Cython  # noqa: F401  (the build's Cython, when the venv has it)
    except ImportError:
        pass
    try:
        import ssrjson

        versions["ssrjson"] = ssrjson.__version__
    except (ImportError, AttributeError):
        pass
    return {"versions": versions, "loop_step": round(step), "cases": table}


def _fmt(n: float) -> str:
    if n >= 1e6:
        return f"{n / 1e6:.2f}M"
    if n >= 1e3:
        return f"{n / 1e3:.1f}k"
    return str(int(n))


def ratios(result: Dict[str, Any]) -> Dict[str, float]:
    """``ajpcore / orjson`` per case."""
    return {case: row["ajpcore"] / row["orjson"] for case, row in result["cases"].items()}


def table(result: Dict[str, Any], baseline: Optional[Dict[str, Any]] = None) -> str:
    """The Markdown table: instructions per call, the ratios, and the baseline's ratio when given."""
    # orjson: canonicalize is orjson.dumps(OPT_SORT_KEYS); ssrjson: canonicalize is its unsorted dumps (a floor).
    head = "| case | ajpcore | orjson | ssrjson | ajpcore / orjson | ajpcore / ssrjson |"
    # floor: the work no implementation can skip (the receive cases: decode and one signature check).
    floors = any("floor" in row for row in result["cases"].values())
    if floors:
        head += " floor | ajpcore / floor |"
    if baseline:
        head += " baseline | change |"
    extra = [who for who in PEERS if any(who in row for row in result["cases"].values())]
    for who in extra:
        head += f" {who} | ajpcore / {who} |"
    lines = [head, "|---|" + "---:|" * (head.count("|") - 2)]
    base = ratios(baseline) if baseline else {}
    for case, row in result["cases"].items():
        if case == "loop":
            continue
        r = row["ajpcore"] / row["orjson"]
        ssr = row.get("ssrjson")
        cells = [case, _fmt(row["ajpcore"]), _fmt(row["orjson"]), _fmt(ssr) if ssr else "—", f"{r:.3f}",
                 f"{row['ajpcore'] / ssr:.3f}" if ssr else "—"]
        if floors:
            floor = row.get("floor")
            cells += [_fmt(floor), f"{row['ajpcore'] / floor:.3f}"] if floor else ["—", "—"]
        if baseline:
            b = base.get(case)
            cells += [f"{b:.3f}" if b else "new", f"{(r / b - 1) * 100:+.1f} %" if b else "—"]
        for who in extra:
            cells += [_fmt(row[who]), f"{row['ajpcore'] / row[who]:.3f}"] if who in row else ["—", "—"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def check(result: Dict[str, Any], baseline: Dict[str, Any], tolerance: float = TOLERANCE) -> List[str]:
    """The failures: every case whose ratio is more than ``tolerance`` above the baseline's, or missing.

    A ratio only counts as ajpcore's regression when ajpcore's own count rose too (by more than
    ``tolerance``): orjson's count on one fixture moves by a few percent between otherwise identical
    runs (seen on ``canonicalize:text-cjk``: 2.87M and 2.74M instructions, its SIMD paths over buffers
    placed differently), and a peer getting faster is not a regression of ours.
    """
    now, base = ratios(result), ratios(baseline)
    failures = []
    for case, b in base.items():
        r = now.get(case)
        if r is None:
            failures.append(f"{case}: in the baseline but not measured")
            continue
        ours, ours_before = result["cases"][case]["ajpcore"], baseline["cases"][case]["ajpcore"]
        if r > b * (1 + tolerance) and ours > ours_before * (1 + tolerance):
            failures.append(
                f"{case}: ajpcore/orjson {r:.3f} is {(r / b - 1) * 100:.1f} % above the baseline's {b:.3f}"
                f" (ajpcore {ours / ours_before - 1:+.1%} instructions)"
            )
    return failures


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--child", metavar="HELPER", help=argparse.SUPPRESS)
    parser.add_argument("--check", metavar="BASELINE", help="fail when a ratio is more than 3 %% above this file's")
    parser.add_argument("--write", metavar="BASELINE", help="write the measured counts as the new baseline")
    parser.add_argument("--json", metavar="OUT", help="also write the measured counts here")
    parser.add_argument("--only", metavar="TEXT", help="measure only the cases whose name contains TEXT (no check)")
    parser.add_argument("--peers", action="store_true", help="also count msgspec and pysimdjson decoding (not with --write)")
    args = parser.parse_args(argv)
    if args.child:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        child(args.child, args.only, args.peers)
        return 0
    if args.only and args.write:
        parser.error("--only measures a part: it cannot --write a baseline")
    if args.peers and args.write:
        parser.error("--peers counts decoders the baseline does not pin: it cannot --write a baseline")
    result = measure(args.only, args.peers)
    baseline = json.loads(Path(args.check).read_text("utf-8")) if args.check else None
    if baseline is not None and args.only:  # a part: compared with the same part of the baseline
        baseline = dict(baseline, cases={c: v for c, v in baseline["cases"].items() if args.only in c})
    print(f"callgrind: instructions per call (Python {result['versions']['python']}, orjson {result['versions']['orjson']}"
          + (f", ssrjson {result['versions']['ssrjson']}" if "ssrjson" in result["versions"] else "")
          + f"; ajpcore's SIMD level {result['versions'].get('simd', '?')}"
          + f"; loop step {result['loop_step']} subtracted; canonicalize: orjson sorted, ssrjson unsorted)")
    print(table(result, baseline))
    if args.write and Path(args.write).exists():
        # The versions the nox session installs: orjson and ssrjson as measured, Cython as the old file says.
        pins = json.loads(Path(args.write).read_text("utf-8")).get("pins", {})
        result["pins"] = dict(pins, **{k: v for k, v in result["versions"].items() if k not in ("python", "simd")})
    for out in (args.json, args.write):
        if out:
            Path(out).write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", "utf-8")
            print(f"callgrind: wrote {out}")
    if baseline is not None:
        if baseline.get("versions", {}).get("orjson") != result["versions"]["orjson"]:
            print(f"callgrind: warning: the baseline was measured with orjson {baseline['versions'].get('orjson')}")
        if baseline.get("versions", {}).get("simd", "sse2") != result["versions"]["simd"]:
            print(f"callgrind: warning: the baseline was measured at ajpcore's SIMD level "
                  f"{baseline['versions'].get('simd', 'sse2')}, this run is at {result['versions']['simd']}")
        failures = check(result, baseline)
        for failure in failures:
            print(f"callgrind: REGRESSION {failure}")
        if failures:
            print(f"callgrind: {len(failures)} ratio(s) more than {TOLERANCE:.0%} above bench/callgrind_baseline.json")
            return 1
        print(f"callgrind: every ajpcore/orjson ratio within {TOLERANCE:.0%} of the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
