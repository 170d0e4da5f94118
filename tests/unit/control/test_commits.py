"""What a connector committed since the last asset event (control.commits, pure logic)."""

from __future__ import annotations

from airflow_provider_connect.control.commits import Committed, advance, state_of


def sink(**committed: tuple[int, int]) -> Committed:
    """A sink's committed (offset, records so far) by ``topic_partition``."""
    positions = {k.replace("_", "/"): offset for k, (offset, _) in committed.items()}
    records = {k.replace("_", "/"): float(n) for k, (_, n) in committed.items()}
    return Committed("sink", positions, records)


def test_a_sink_reports_the_records_it_committed_not_the_offsets() -> None:
    # t/0 is written transactionally: a commit marker follows each transaction's records
    state = state_of(sink(t_0=(10, 9), t_1=(5, 5)), 100.0)
    assert advance(state, sink(t_0=(10, 9), t_1=(5, 5))) is None  # nothing moved: no event
    moved = advance(state, sink(t_0=(25, 23), t_1=(5, 5), u_0=(3, 3)))
    assert moved == {"positions": {"t/0": 25, "t/1": 5, "u/0": 3}, "records": 14 + 3,
                     "changed": ["t/0", "u/0"]}  # fmt: skip


def test_a_sink_that_committed_only_a_transaction_marker_has_no_event() -> None:
    state = state_of(sink(t_0=(10, 9)), 0)
    assert advance(state, sink(t_0=(11, 9))) is None


def test_a_sink_created_again_counts_from_zero() -> None:
    state = state_of(sink(t_0=(40, 40)), 0)
    moved = advance(state, sink(t_0=(6, 6)))
    assert moved is not None and moved["records"] == 6


def test_a_source_reports_what_its_tasks_wrote() -> None:
    before = Committed("source", {'{"file":"a"}': {"position": 10}}, {"0": 40.0, "1": 7.0})
    after = Committed("source", {'{"file":"a"}': {"position": 90}}, {"0": 55.0, "1": 2.0})
    moved = advance(state_of(before, 0), after)
    assert moved is not None
    assert moved["changed"] == ['{"file":"a"}']
    assert moved["records"] == 15 + 2  # task 1's counter went back: it restarted, from zero
    assert advance(state_of(after, 0), after) is None


def test_the_state_is_json_and_remembers_when_it_fired() -> None:
    state = state_of(sink(t_0=(2, 1)), 123.5)
    assert state == {"positions": {"t/0": 2}, "written": {"t/0": 1.0}, "fired_at": 123.5}
    assert advance({}, sink(t_0=(2, 1))) == {
        "positions": {"t/0": 2},
        "records": 1,
        "changed": ["t/0"],
    }
