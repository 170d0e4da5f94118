"""How ``bench/record_cost.py`` tells that a project run and its hand loop wrote the same
bytes: the first difference named, masks applied to both sides alike."""

from __future__ import annotations

import importlib

_same = importlib.import_module("bench.record_cost_same")  # tests import no benchmark
ENDS, Mask, first_difference = _same.ENDS, _same.Mask, _same.first_difference


def part(index: int) -> str:
    return ("topic", "key", "value")[index]


def test_equal_samples_have_no_difference() -> None:
    sample = [(b"t", b"k", b"v1"), (b"t", b"k", b"v2")]
    assert first_difference(sample, list(sample), 2, part) is None


def test_the_first_difference_names_its_record_part_and_byte() -> None:
    mine = [(b"t", b"k", b'{"a":1}'), (b"t", b"k", b'{"a":2}')]
    hand = [(b"t", b"k", b'{"a":1}'), (b"t", b"k", b'{"a":3}')]
    assert first_difference(mine, hand, 2, part) == (
        "record 1, value, byte 5: project b'{\"a\":2}' vs hand b'{\"a\":3}'"
    )


def test_a_difference_among_the_last_records_is_numbered_as_in_the_output() -> None:
    same = [(b"t", b"k", b"v")] * ENDS
    mine, hand = [*same, (b"t", b"k", b"x")], [*same, (b"t", b"k", b"y")]
    assert first_difference(mine, hand, 1000, part).startswith(f"record {1000 - ENDS},")


def test_a_shorter_value_differs_where_it_ends() -> None:
    assert "byte 2" in first_difference([(b"t", b"k", b"ab")], [(b"t", b"k", b"abc")], 1, part)


def test_a_mask_replaces_the_span_on_both_sides() -> None:
    clock = Mask(rb'"ts_ms":\d+', b'"ts_ms":<t>', "read from the clock")
    mine = _same._masked(b'{"op":"c","ts_ms":17966}', (clock,))
    hand = _same._masked(b'{"op":"c","ts_ms":17967}', (clock,))
    assert mine == hand == b'{"op":"c","ts_ms":<t>}'
