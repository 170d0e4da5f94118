"""The soak's schedule and report (``tests_common/soak.py``): pure logic over samples and
faults."""

from __future__ import annotations

import pytest

from tests_common.soak import FAULT_KINDS, Fault, Sample, SoakSettings, fault_table, growth


def test_faults_start_every_period_and_none_late_enough_to_run_into_the_last_minutes() -> None:
    assert SoakSettings(minutes=60).fault_times() == [300 * k for k in range(1, 12)]
    assert SoakSettings(minutes=12, fault_every_s=75).fault_times() == [75 * k for k in range(1, 8)]
    assert SoakSettings(minutes=4).fault_times() == []


def test_the_table_has_a_row_per_kind_in_the_order_faults_are_drawn() -> None:
    faults = [
        Fault("broker freeze", 0, 30, recovered_s=10, moved=0, doubled=3),
        Fault("kill -9 driver", 40, 50, recovered_s=8, moved=5, doubled=80, lost=0),
        Fault("broker freeze", 60, 90, recovered_s=12, moved=0, doubled=1),
        Fault("broker freeze", 100, 130, recovered_s=None),
    ]
    rows = fault_table(faults).splitlines()
    assert rows[0].startswith("| fault | count | recovery p50 (s) | recovery max (s) |")
    assert rows[2:] == [
        "| kill -9 driver | 1 | 8.0 | 8.0 | 5 | 0 | 80 |",
        "| broker freeze | 3 | 11.0 | 12.0 (1 never) | 0 | 0 | 4 |",
    ]
    assert FAULT_KINDS.index("kill -9 driver") < FAULT_KINDS.index("broker freeze")


def sample(at: float, rss: int) -> Sample:
    return Sample(at, 0, 0, 0, 0, rss, 10, 10)


def test_growth_compares_the_medians_of_the_10th_minute_of_an_hour_and_of_the_last() -> None:
    samples = [sample(t, 100) for t in range(0, 540, 10)]
    samples += [sample(t, 100 + (t == 570) * 900) for t in range(540, 600, 10)]  # one outlier
    samples += [sample(t, 105) for t in range(600, 3540, 10)]
    samples += [sample(t, 110) for t in range(3540, 3600, 10)]
    assert growth(samples, 60, lambda s: s.rss_bytes) == pytest.approx(0.10)
    with pytest.raises(ValueError, match="no samples"):
        growth(samples[:10], 60, lambda s: s.rss_bytes)
