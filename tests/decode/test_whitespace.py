"""Whitespace between tokens, as the native decoder's window reads it, gives exactly what the pure twin reads.

The native parse loop (native/decoder_scan.h ``ajpcore_skip_ws_at``) takes one byte of
whitespace with one test and a line break's indentation through a window (32 bytes at the
sse2 and avx2 levels, 8 at the scalar level) looking for the first byte that is not a space;
a run the window does not end (wider, or holding a tab, a carriage return, a blank line) goes
on byte by byte.  What is driven, on both twins, at every place whitespace may stand (before
and after a value, a name, a colon, a comma, a bracket):

- runs of every width 0..70 of each kind of whitespace and their mixtures, so that each
  window size ends inside the run, at its end, and past it;
- every run at every distance from the document's end (the window is only read where the
  document is long enough);
- a byte that is not whitespace (a control character, DEL, a non-ASCII byte, a letter) at
  every offset of a run: the same refusal at the same byte;
- a large document decoded while the collector is off: its containers tracked as the pure
  twin's are, and the collector left off.
"""

import gc
import json

import pytest

from decode.test_fast_paths_agree_with_the_reference import agree
from decode.test_number_windows import _containers

RUNS = ["", " ", "\n", "\t", "\r\n", "\n\n"] + [
    lead + " " * width + tail
    for lead in ("\n", "\r\n", " ")
    for width in (1, 2, 4, 7, 8, 9, 15, 16, 17, 23, 24, 30, 31, 32, 33, 40, 63, 64, 65, 70)
    for tail in ("", "\t", "\n  ", "\r")
]


def places(ws):
    """A document with ``ws`` at every place whitespace may stand."""
    return (
        ws + "{" + ws + '"a"' + ws + ":" + ws + "[" + ws + "1" + ws + "," + ws + '"x"' + ws + "," + ws + "{}" + ws + ","
        + ws + "[]" + ws + "," + ws + "null" + ws + "]" + ws + "," + ws + '"bb"' + ws + ":" + ws + "{" + ws + '"c"' + ws
        + ":" + ws + "2.5" + ws + "}" + ws + "}" + ws
    ).encode()


@pytest.mark.parametrize("ws", RUNS, ids=repr)
def test_every_run_at_every_place(twins, ws):
    value = {"a": [1, "x", {}, [], None], "bb": {"c": 2.5}}
    assert agree(twins, places(ws)) == ("ok", repr(value))


@pytest.mark.parametrize("width", [0, 1, 5, 8, 16, 31, 32, 33, 40])
def test_runs_at_every_distance_from_the_end(twins, width):
    run = "\n" + " " * width
    for pad in range(0, 48):
        doc = ('{"k":' + run + '"' + "v" * pad + '"' + run + "}" + run).encode()
        assert agree(twins, doc) == ("ok", repr({"k": "v" * pad}))
        # ... and cut short anywhere in the run after the value: the end of data, at that byte.
        value_end = len('{"k":' + run) + pad + 2
        for cut in range(value_end, value_end + len(run) + 1):
            assert agree(twins, doc[:cut])[:2] == ("error", f"JSON is malformed: unexpected end of data (byte {cut})")


@pytest.mark.parametrize("intruder", [b"\x00", b"\x0b", b"\x0c", b"\x1f", b"\x7f", b"\xc3\xa9", b"\xff", b"x", b"/"])
def test_a_stray_byte_in_a_run_is_refused_at_its_byte(twins, intruder):
    for lead in (b"\n", b" ", b"\r\n"):
        for offset in range(0, 40):
            run = lead + b" " * offset + intruder + b" " * 3
            for doc in (b'{"a":' + run + b"1}", b"[1," + run + b"2]", b'{"a":1,' + run + b'"b":2}', b"[" + run + b"]"):
                at = doc.index(intruder)
                got = agree(twins, doc + b" " * 40)
                assert (got[0], got[2]) == ("error", at), doc


def test_large_document_while_the_collector_is_off(twins):
    native, pure = twins
    records = [{"id": i, "tags": ["a", str(i)], "point": {"x": i / 3}, "empty": {}, "nothing": []} for i in range(400)]
    doc = json.dumps({"records": records, "pad": "x" * 20000}, indent=4).encode()
    assert len(doc) >= 16384  # a document the native twin settles while the collector runs (_GC_QUIET_BYTES)
    was = gc.isenabled()
    gc.disable()
    try:
        got = native.decode(doc)
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()
    want = pure.decode(doc)
    assert got == want
    assert [gc.is_tracked(c) for c in _containers(got)] == [gc.is_tracked(c) for c in _containers(want)]
