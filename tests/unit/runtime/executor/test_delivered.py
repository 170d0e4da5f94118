"""The records a sink task put and has not committed (runtime.executor.delivered): what a
commit passes is counted in records, not offsets."""

from __future__ import annotations

from airflow_provider_connect.runtime.executor.delivered import Delivered, add_offset


def spans_of(*offsets: int) -> list[list[int]]:
    spans: list[list[int]] = []
    for offset in offsets:
        add_offset(spans, offset)
    return spans


def test_offsets_make_spans_of_consecutive_offsets() -> None:
    # two transactions of three records, each followed by its commit marker (3 and 7)
    assert spans_of(0, 1, 2, 4, 5, 6) == [[0, 3], [4, 7]]
    assert spans_of(0, 1, 2, 4, 5, 1, 2) == [[0, 3]]  # from 1 on, read again after a seek


def test_a_commit_counts_the_records_below_its_offset_once() -> None:
    delivered: Delivered[str] = Delivered()
    delivered.put("t/0", spans_of(0, 1, 2, 4, 5))
    delivered.put("t/0", spans_of(6, 8))  # continues the span of 4-5
    assert delivered.commit("t/0", 5) == 3 + 1  # 0-2 and 4, not the marker at 3
    assert delivered.commit("t/0", 5) == 0  # counted once
    assert delivered.commit("t/0", 9) == 3  # 5, 6 and 8
    assert delivered.commit("t/1", 9) == 0  # nothing put there


def test_a_seek_back_forgets_what_is_read_again_and_a_close_everything() -> None:
    delivered: Delivered[str] = Delivered()
    delivered.put("t/0", spans_of(*range(10)))
    delivered.rewind("t/0", 4)  # the records from 4 on are delivered again
    delivered.put("t/0", spans_of(4, 5))
    assert delivered.commit("t/0", 6) == 6
    delivered.put("t/0", spans_of(6, 7))
    delivered.drop("t/0")  # closed: its next owner reads them again
    assert delivered.commit("t/0", 8) == 0
