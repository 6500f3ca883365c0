"""Arrays of numbers: the native writer's run loop against the pure twin.

The native core writes a run of exact finite floats and safe ints in an array with one C loop
(native/number_format.h ajp_put_numbers), and a nested list made only of them (a coordinate
pair) whole from its parent's loop (ajp_put_number_list); anything else in the array (a
non-finite float, an int beyond 2**53, a bool, a subclass, a string, too little room in the
buffer) hands the rest back to the general path.  Each test mixes the two and checks the bytes,
the streamed bytes and the refusals (with their location) against the pure twin.
"""

import math
import random
import struct

import pytest

from ajpcore.errors import EncodeError
from conftest import same_canonical


class _Real(float):
    """A float subclass: never part of a run."""


class _Count(int):
    """An int subclass: never part of a run."""


def _random_doubles(rng, count):
    out = []
    while len(out) < count:
        kind = rng.randrange(4)
        if kind == 0:
            x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        elif kind == 1:
            x = round(rng.uniform(-180.0, 180.0), rng.randint(0, 8))
        elif kind == 2:
            x = rng.randint(1, 10 ** rng.randint(1, 17)) / 10 ** rng.randint(0, 20)
        else:
            x = float(rng.randint(-(2**60), 2**60))
        if math.isfinite(x):
            out.append(x)
    return out


def test_random_doubles_in_runs_match_the_pure_twin(twins):
    # 40,000 doubles of every kind (bit patterns, short decimals, integers) through the run
    # loop: as one array, as coordinate pairs, and one by one through _format_double.
    native, pure = twins
    xs = _random_doubles(random.Random(8785), 40_000)
    assert native.canonicalize(xs) == pure.canonicalize(xs)
    pairs = [xs[k : k + 2] for k in range(0, len(xs), 2)]
    assert native.canonicalize({"coordinates": pairs}) == pure.canonicalize({"coordinates": pairs})
    for x in xs[:5000]:
        text = native._format_double(x)
        assert text == pure._format_double(x), repr(x)
        assert float(text) == x


@pytest.mark.parametrize(
    "breaker",
    [None, True, False, "s", 2**53, -(2**53), 2**70, _Real(1.5), _Count(3), {"a": 1}, [], [1.5, "x"], (2, 3)],
    ids=repr,
)
def test_a_run_hands_any_other_item_to_the_general_path(twins, breaker):
    # The item that ends a run may sit first, inside or last; runs resume after it.
    for at in (0, 1, 5):
        items = [0.5, -2, 1e21, 3.25e-7, 7, 2**53 - 1][:at] + [breaker] + [1.25, -(2**53) + 1, 0.1]
        same_canonical(twins, items)
        same_canonical(twins, tuple(items))
        same_canonical(twins, [items, [items], {"v": items}])


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_inside_a_run_is_refused_at_its_index(twins, bad):
    native, pure = twins
    for value, path in (
        ([1.5, 2, 3.0, bad, 4.0], "$[3]"),
        ([[1.0, 2.0], [3.0, bad]], "$[1][1]"),
        ({"c": [[0.5, 0.25], [bad, 1]]}, "$.c[1][0]"),
    ):
        with pytest.raises(EncodeError) as info:
            native.canonicalize(value)
        assert str(info.value).endswith(f"- at `{path}`")
        with pytest.raises(EncodeError) as pure_info:
            pure.canonicalize(value)
        assert str(info.value) == str(pure_info.value)


def test_number_lists_at_the_depth_limit(twins):
    # A nested list of numbers is written whole only where the general path would accept it.
    native, pure = twins
    limit = native.MAX_DEPTH
    for depth in (limit - 1, limit):
        value = [1.5, 2]
        for _ in range(depth - 1):
            value = [value]
        same_canonical(twins, value)
        same_canonical(twins, [0.5, value] if depth < limit else value)


def test_runs_across_the_buffer_edge_and_in_chunks(twins):
    # A run stops where fewer than 64 bytes are free and resumes after the general path grew the
    # buffer: the same bytes whatever the padding, and streamed in small chunks.
    native, pure = twins
    xs = _random_doubles(random.Random(33), 600) + list(range(-300, 300, 7))
    random.Random(1).shuffle(xs)
    for pad in range(3990, 4100, 7):
        doc = {"a": "x" * pad, "b": xs, "c": [xs[:2], xs[2:4]]}
        expected = pure.canonicalize(doc)
        assert native.canonicalize(doc) == expected, pad
        for chunk_size in (1, 7, 64, 65):
            chunks = []
            native.canonicalize_into(doc, chunks.append, chunk_size=chunk_size)
            assert b"".join(chunks) == expected, (pad, chunk_size)


def test_number_arrays_of_every_length(twins):
    for n in range(0, 40):
        same_canonical(twins, [k * 0.5 - 3 for k in range(n)])
        same_canonical(twins, [[k * 1.5, -k] for k in range(n)])
        same_canonical(twins, {"v": [[n / 3] * n]})
