"""No leaks: decoding the same ~1 MB document 10,000 times keeps the resident set flat."""

import gc
import os
import resource

import pytest

PAGE = resource.getpagesize()


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def document() -> bytes:
    """~1 MB through every decoder path: long ASCII and non-ASCII strings, escapes, ints, floats, nesting."""
    ascii_text = b"signed agent message payload " * 250
    utf8_text = "r\u00e9sum\u00e9 \u6771\u4eac \u0434\u0430\u043d\u043d\u044b\u0435 \U0001f680 ".encode() * 30
    record = (
        b'{"id":%d,"text":"' + ascii_text + b'","utf8":"' + utf8_text + b'",'
        b'"escaped":"tab\\there \\"quoted\\" \\u00e9\\u20ac\\/","big":[9007199254740992,-%d123456789012],'
        b'"score":%d.125e-3,"ok":true,"none":null,"tags":["a","b",[],{}],"nested":{"k%d":[1,2.5,-0,"x"]}}'
    )
    records = [record % (i, i % 9 + 1, i, i % 97) for i in range(130)]
    records[7] = records[7].replace(b"9007199254740992", b"18446744073709552000")  # the ES-spelling int path
    return b"[" + b",".join(records) + b"]"


def refused_documents(doc: bytes):
    head = doc[:10_000]
    cut = head.rfind(b",{")
    return [
        head[:cut] + b',"\\ud83d\\ude80 \\ud800"]',  # lone surrogate after a valid pair
        head[:cut] + b',{"id":1,"id":2}]',  # duplicate member name
        head[:cut] + b",9007199254740993]",  # int the rule refuses
        head,  # truncated
    ]


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc to read the resident set")
@pytest.mark.slow
def test_repeated_decoding_keeps_rss_flat(impl):
    doc = document()
    assert 900_000 < len(doc) < 1_300_000
    refused = refused_documents(doc)
    rounds = 10_000 if impl.__name__.endswith("_c") else 300  # the pure twin is slower, not leakier
    for _ in range(20):  # warm up allocator pools and the key cache
        impl.decode(doc)
    gc.collect()
    before = rss_bytes()
    for i in range(rounds):
        value = impl.decode(doc)
        if i % 20 == 0:
            for bad in refused:
                with pytest.raises(ValueError):
                    impl.decode(bad)
    del value
    gc.collect()
    grown = rss_bytes() - before
    # Leaking even one small object per decode would add > 10 MB over these rounds.
    assert grown < 4 * 1024 * 1024, f"RSS grew by {grown} bytes"
