"""Move the flat tests/test_*.py into tests/<concept>/ folders, named for the behaviour (issue 34 item 5).

Run once, from the repository root, on a clean tree, after the other open branches have merged:

    python tools/tests_by_concept.py            # git mv every file of MOVES, then rewrite the references
    python tools/tests_by_concept.py --check    # only say what it would do; fail on an unmapped file

It fails loudly, before moving anything, when tests/ holds a ``test_*.py`` that MOVES does not name
(a file added by another branch: add it to MOVES), or when a target already exists.

What stays at the top of tests/: conftest.py (the ``impl`` fixture, ``run_python``: pytest
applies it to every folder below), the helper modules the tests import by name (a2a_proto.py,
state_servers.py, state_worker.py, vector_files.py: importable through pyproject's
``pythonpath = ["tests", "bench"]``), vectors/, interop/, interop-a2a/ and fuzz/.  No
``__init__.py`` is added: the suite runs with ``--import-mode=importlib``, under which two
folders may hold files of the same name (decode/test_properties.py, canonical/test_properties.py).

What it rewrites after the moves:
- in each moved file, paths computed from ``__file__`` one folder deeper (``Path(__file__).parent``
  gains a ``.parent``, ``.parents[N]`` becomes ``.parents[N+1]``), and imports of another moved
  test module (``from test_decode_fastpaths import`` -> ``from decode.test_fast_paths import``:
  ``decode`` is a namespace package under tests/);
- every ``tests/<old>.py`` in the tracked text files (noxfile.py, .ci/, pyproject.toml, docs/,
  CONTRIBUTING.md, README.md, bench/, tests/, tools/, examples/), except CHANGELOG.md (history
  names the files as they were);
- .ci/coverage.md: regenerate it afterwards (``python .ci/coverage.py > .ci/coverage.md``).

Then: ``pytest --collect-only -q | tail -1`` before and after must give the same count, and the
commit message says both.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"

MOVES = {
    # canonical: RFC 8785 canonical bytes and ECMAScript number text
    "test_canonicalize.py": "canonical/test_canonicalize.py",
    "test_canonical_fastpaths.py": "canonical/test_fast_paths_agree_with_the_reference.py",
    "test_canonical_properties.py": "canonical/test_properties.py",
    "test_number_format.py": "canonical/test_number_to_string.py",
    "test_canonical_number_runs.py": "canonical/test_number_runs_in_arrays.py",
    # decode: the strict I-JSON decoder, both twins, every SIMD level
    "test_decode.py": "decode/test_decode.py",
    "test_decode_ascii_escapes.py": "decode/test_ascii_escapes.py",
    "test_decode_exponents.py": "decode/test_exponents.py",
    "test_decode_fastpaths.py": "decode/test_fast_paths_agree_with_the_reference.py",
    "test_decode_leaks.py": "decode/test_no_reference_leaks.py",
    "test_decode_long_fractions.py": "decode/test_long_fractions.py",
    "test_decode_properties.py": "decode/test_properties.py",
    "test_decode_small_paths.py": "decode/test_small_documents.py",
    "test_decode_str_header.py": "decode/test_string_header.py",
    "test_decode_text_names.py": "decode/test_non_ascii_member_names.py",
    "test_decode_utf8_simd.py": "decode/test_utf8_strings.py",
    "test_decode_windows.py": "decode/test_number_windows.py",
    "test_decode_whitespace.py": "decode/test_whitespace.py",
    "test_jsontestsuite.py": "decode/test_jsontestsuite.py",
    # signing: keys, signatures, HMAC tags
    "test_signing.py": "signing/test_sign_and_verify.py",
    "test_signing_hot_path.py": "signing/test_hot_path.py",
    "test_signing_properties.py": "signing/test_properties.py",
    "test_signing_tag.py": "signing/test_hmac_tag_of_a_body.py",
    "test_hmac.py": "signing/test_hmac_sink.py",
    "test_keys.py": "signing/test_keys.py",
    "test_ed25519_vectors.py": "signing/test_ed25519_vectors.py",
    "test_ajp_signature_vectors.py": "signing/test_ajp_signature_vectors.py",
    # envelopes: the typed messages, their schemas, their types, their times
    "test_ajp.py": "envelopes/test_ajp_envelopes.py",
    "test_schema_engine.py": "envelopes/test_schema_engine.py",
    "test_schema_formats.py": "envelopes/test_schema_formats.py",
    "test_schema_linear.py": "envelopes/test_schema_cost_is_linear.py",
    "test_spoofed_class.py": "envelopes/test_spoofed_class.py",
    "test_typing.py": "envelopes/test_typing.py",
    "test_typing_api.py": "envelopes/test_typing_api.py",
    "test_timestamps.py": "envelopes/test_timestamps.py",
    "test_js_date.py": "envelopes/test_js_date.py",
    # receive: receive_offer, Receiver, its answers, adapters and servers
    "test_ajp_receive.py": "receive/test_receive_offer.py",
    "test_receive_fast_paths.py": "receive/test_fast_paths.py",
    "test_offer_shape.py": "receive/test_offer_shape_proof.py",
    "test_receiver.py": "receive/test_receiver.py",
    "test_receiver_adapters.py": "receive/test_adapters.py",
    "test_receiver_defaults.py": "receive/test_defaults.py",
    "test_receiver_examples.py": "receive/test_examples_behind_servers.py",
    "test_receiver_typing.py": "receive/test_receiver_typing.py",
    "test_refusal_cost.py": "receive/test_refusal_cost.py",
    "test_hostile_callers.py": "receive/test_hostile_callers.py",
    # state: replay guards and key pins over memory, SQLite, Redis
    "test_state_exactly_once.py": "state/test_exactly_once.py",
    "test_state_file.py": "state/test_state_file_is_trusted.py",
    "test_state_guards.py": "state/test_replay_guards.py",
    "test_state_pins.py": "state/test_key_pins.py",
    # identity: who sent it (sender identity, declaration gate, provenance ids)
    "test_ajp_sender.py": "identity/test_sender_identity.py",
    "test_declaration_gate_paths.py": "identity/test_declaration_gate_paths.py",
    "test_provenance_identity.py": "identity/test_provenance_identity.py",
    # provenance: the payloads and their pins
    "test_provenance.py": "provenance/test_provenance.py",
    "test_provenance_payloads.py": "provenance/test_payloads.py",
    "test_provenance_pins.py": "provenance/test_pins.py",
    # iatp
    "test_iatp_attestation.py": "iatp/test_attestation.py",
    "test_iatp_compensation.py": "iatp/test_compensation.py",
    "test_iatp_manifest.py": "iatp/test_manifest.py",
    "test_iatp_rules.py": "iatp/test_rules.py",
    "test_iatp_signature.py": "iatp/test_manifest_signature.py",
    # a2a: Agent Card signatures
    "test_a2a.py": "a2a/test_card_signatures.py",
    "test_a2a_bounds.py": "a2a/test_bounds.py",
    "test_a2a_docs.py": "a2a/test_docs_page.py",
    "test_a2a_interop.py": "a2a/test_sdk_interop.py",
    "test_a2a_proto.py": "a2a/test_proto_fields.py",
    # cli
    "test_cli.py": "cli/test_cli.py",
    "test_ajp_cli.py": "cli/test_ajp_commands.py",
    "test_iatp_cli.py": "cli/test_iatp_commands.py",
    "test_provenance_cli.py": "cli/test_provenance_commands.py",
    "test_a2a_cli.py": "cli/test_a2a_commands.py",
    # conformance: the pack, hostile inputs, the Node reference
    "test_conformance.py": "conformance/test_pack.py",
    "test_conformance_hostile.py": "conformance/test_hostile.py",
    "test_interop_node.py": "conformance/test_node_reference.py",
    # docs: the site, its examples, the frictions a reader meets
    "test_docs_frictions.py": "docs/test_frictions.py",
    "test_docs_site.py": "docs/test_site.py",
    "test_docs_snippets.py": "docs/test_snippets.py",
    # native: the backend switch and the native core's own coverage
    "test_backend.py": "native/test_backend.py",
    "test_native_coverage.py": "native/test_coverage.py",
    "test_threads.py": "native/test_threads_release_the_gil.py",
    # project: the layout, the package contents, the bench report
    "test_layout.py": "project/test_layout.py",
    "test_packaging.py": "project/test_packaging.py",
    "test_bench_report.py": "project/test_bench_report.py",
}
"""tests/<old> -> tests/<concept>/<new>; every flat ``test_*.py`` must be here."""

KEEP = {"conftest.py", "a2a_proto.py", "state_servers.py", "state_worker.py", "vector_files.py"}
"""Modules that stay at the top of tests/ (conftest and the helpers imported by name)."""

TEXT_SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".cfg", ".ini", ".txt", ".sh", ".json", ".mjs", ""}
SKIP = {"CHANGELOG.md"}


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def plan() -> list[tuple[str, str]]:
    """The moves, after checking every flat test file is mapped and no target exists."""
    flat = sorted(p.name for p in TESTS.glob("*.py"))
    unmapped = [n for n in flat if n not in MOVES and n not in KEEP]
    if unmapped:
        raise SystemExit("tests_by_concept.py: no mapping for " + ", ".join(unmapped)
                         + ": add each to MOVES (or KEEP, for a helper module) first")
    missing = sorted(n for n in MOVES if not (TESTS / n).exists())
    if missing:
        raise SystemExit("tests_by_concept.py: MOVES names files tests/ does not hold: " + ", ".join(missing))
    targets = list(MOVES.values())
    clash = sorted({t for t in targets if targets.count(t) > 1} | {t for t in targets if (TESTS / t).exists()})
    if clash:
        raise SystemExit("tests_by_concept.py: targets taken twice or existing: " + ", ".join(clash))
    return sorted(MOVES.items())


def _deeper(text: str) -> str:
    """Paths from ``__file__`` one folder deeper; imports of moved test modules by their new name."""
    text = re.sub(r"(Path\(__file__\)(?:\.resolve\(\))?)\.parents\[(\d)\]",
                  lambda m: f"{m.group(1)}.parents[{int(m.group(2)) + 1}]", text)
    text = re.sub(r"(Path\(__file__\)(?:\.resolve\(\))?)\.parent\b", r"\1.parent.parent", text)
    text = re.sub(r"os\.path\.dirname\(os\.path\.abspath\(__file__\)\)",
                  "os.path.dirname(os.path.dirname(os.path.abspath(__file__)))", text)
    for old, new in MOVES.items():
        module = new[:-3].replace("/", ".")
        text = re.sub(rf"^(\s*)from {old[:-3]} import", rf"\1from {module} import", text, flags=re.M)
        text = re.sub(rf"^(\s*)import {old[:-3]}\b", rf"\1import {module} as {old[:-3]}", text, flags=re.M)
    return text


def _references(text: str) -> str:
    for old, new in MOVES.items():
        text = re.sub(rf"\btests/{re.escape(old)}", f"tests/{new}", text)
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="say what would move; change nothing")
    args = parser.parse_args()
    moves = plan()
    if args.check:
        for old, new in moves:
            print(f"tests/{old} -> tests/{new}")
        print(f"{len(moves)} files to move")
        return 0
    for old, new in moves:
        (TESTS / new).parent.mkdir(parents=True, exist_ok=True)
        _git("mv", f"tests/{old}", f"tests/{new}")
        path = TESTS / new
        path.write_text(_deeper(path.read_text("utf-8")), "utf-8")
    changed = []
    for name in _git("ls-files").splitlines():
        path = ROOT / name
        if path.name in SKIP or path.suffix not in TEXT_SUFFIXES or not path.is_file() or "/vectors/" in name \
                or "node_modules" in name or "/corpus/" in name or "/regressions/" in name:
            continue
        try:
            text = path.read_text("utf-8")
        except UnicodeDecodeError:
            continue
        new_text = _references(text)
        if new_text != text:
            path.write_text(new_text, "utf-8")
            changed.append(name)
    print(f"moved {len(moves)} test files; references rewritten in: {', '.join(changed)}")
    print("now: python .ci/coverage.py > .ci/coverage.md; pytest --collect-only -q | tail -1 (same count as before)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
