"""Joda patterns and zone arithmetic (``path_format``), checked against values Joda-Time prints
and the boundaries Confluent's partitioner tests rely on."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from airflow_provider_connect.connectors.s3.path_format import (
    PathFormat,
    next_scheduled_rotation,
    zone_for_id,
)

LA = zone_for_id("America/Los_Angeles")
SANTIAGO = zone_for_id("America/Santiago")
HOUR = 3_600_000


def at(zone_id: str, *fields: int) -> int:
    """The instant of a local date and time (which exists once) in ``zone_id``, in ms."""
    moment = dt.datetime(*fields, tzinfo=zone_for_id(zone_id).tzinfo)  # type: ignore[misc]
    return int(moment.timestamp() * 1000)


def test_numeric_fields_are_padded_to_the_letter_count() -> None:
    instant = at("America/Los_Angeles", 2015, 4, 2, 1, 5, 9) + 234
    text = PathFormat(
        "'year'=YYYY/'month'=M/MM/'day'=d/dd/H/HH/m/mm/s/ss/D/DDD/S/SSS/SSSSS"
    ).format(instant, LA)
    assert text == "year=2015/month=4/04/day=2/02/1/01/5/05/9/09/92/092/2/234/23400"


def test_hour_fields_of_the_day_and_the_half_day() -> None:
    midnight, afternoon = at("UTC", 2024, 5, 8, 0, 0), at("UTC", 2024, 5, 8, 13, 0)
    pattern, utc = PathFormat("H k K h a"), zone_for_id("UTC")
    assert pattern.format(midnight, utc) == "0 24 0 12 AM"
    assert pattern.format(afternoon, utc) == "13 13 1 1 PM"


def test_years_weeks_and_texts() -> None:
    instant = at("UTC", 2021, 1, 1, 12, 0)  # a Friday in ISO week 53 of 2020
    text = PathFormat("yy YY yyyy xxxx-ww x w e E EEEE MMM MMMM G C").format(
        instant, zone_for_id("UTC")
    )
    assert text == "21 21 2021 2020-53 2020 53 5 Fri Friday Jan January AD 20"


def test_zone_fields() -> None:
    summer = at("America/Los_Angeles", 2015, 4, 2, 1, 0)
    assert PathFormat("Z ZZ ZZZ z").format(summer, LA) == "-0700 -07:00 America/Los_Angeles PDT"
    kolkata = zone_for_id("+05:30")
    assert PathFormat("Z|ZZ|ZZZ").format(summer, kolkata) == "+0530|+05:30|+05:30"
    assert PathFormat("Z ZZ ZZZ").format(summer, zone_for_id("UTC")) == "+0000 +00:00 UTC"


def test_quotes_and_literals() -> None:
    utc = zone_for_id("UTC")
    pattern = PathFormat("'year'=yyyy/''/'it''s'/_-.")
    assert pattern.format(at("UTC", 2024, 1, 2, 0, 0), utc) == "year=2024/'/it's/_-."
    assert PathFormat("'unclosed yyyy").format(0, utc) == "unclosed yyyy"


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("year='YYYY'/month='MM'", "Illegal pattern component: r"),
        ("'x'=bb", "Illegal pattern component: bb"),
        ("zzzz", "Unsupported pattern component: zzzz (long zone names)"),
    ],
)
def test_refused_patterns(pattern: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        PathFormat(pattern)


def test_uses_text_only_for_names_and_markers() -> None:
    assert not PathFormat("'year'=YYYY/MM/dd/HH Z z").uses_text
    assert all(PathFormat(p).uses_text for p in ("MMM", "E", "a", "G"))


def test_zone_ids() -> None:
    assert zone_for_id("UTC").id == "UTC"
    assert zone_for_id("+00:00").id == "UTC"
    assert zone_for_id("-08:00").offset_ms(0) == -8 * HOUR
    assert zone_for_id("+0530").id == "+05:30"
    for bad in ("LLL", "localtime", "+25:00", "america/los_angeles", ""):
        with pytest.raises(
            ValueError, match=re.escape(f"The datetime zone id '{bad}' is not recognised")
        ):
            zone_for_id(bad)


def test_local_to_utc_in_a_spring_gap_moves_forward_as_joda() -> None:
    gap = dt.datetime(2015, 3, 8, 2, 30, tzinfo=dt.timezone.utc)  # 02:30 does not exist in LA
    local = int(gap.timestamp() * 1000)
    assert LA.convert_local_to_utc(local) == at("America/Los_Angeles", 2015, 3, 8, 3, 30)


def test_local_to_utc_in_an_autumn_overlap_takes_the_earlier_instant_in_the_west() -> None:
    overlap = dt.datetime(2015, 11, 1, 1, 30, tzinfo=dt.timezone.utc)
    instant = LA.convert_local_to_utc(int(overlap.timestamp() * 1000))
    assert LA.offset_ms(instant) == -7 * HOUR  # 01:30 PDT, the first of the two
    assert LA.convert_utc_to_local(instant) == int(overlap.timestamp() * 1000)


def test_start_of_a_day_that_begins_in_a_gap_is_the_first_instant_of_the_day() -> None:
    # Santiago skips 00:00-01:00 on 2024-09-08: the day starts at 01:00 (-03), 04:00 UTC
    noon = at("America/Santiago", 2024, 9, 8, 12, 0)
    assert SANTIAGO.start_of_day(noon) == at("UTC", 2024, 9, 8, 4, 0)


def test_next_scheduled_rotation_counts_intervals_from_local_midnight() -> None:
    now = at("America/Los_Angeles", 2015, 4, 2, 1, 30)
    assert next_scheduled_rotation(now, HOUR, LA) == at("America/Los_Angeles", 2015, 4, 2, 2, 0)
    assert next_scheduled_rotation(now, 5 * HOUR, LA) == at("America/Los_Angeles", 2015, 4, 2, 5, 0)
    exact = at("America/Los_Angeles", 2015, 4, 2, 2, 0)
    assert next_scheduled_rotation(exact, HOUR, LA) == at("America/Los_Angeles", 2015, 4, 2, 3, 0)


def test_next_scheduled_rotation_never_passes_the_next_local_midnight() -> None:
    late = at("America/Los_Angeles", 2015, 4, 2, 22, 0)
    assert next_scheduled_rotation(late, 10 * HOUR, LA) == at(
        "America/Los_Angeles", 2015, 4, 3, 0, 0
    )


def test_next_scheduled_rotation_on_dst_days_counts_real_hours() -> None:
    # 2015-03-08 has 23 hours in LA: two hours after midnight PST is 03:00 PDT
    now = at("America/Los_Angeles", 2015, 3, 8, 1, 30)
    assert next_scheduled_rotation(now, HOUR, LA) == at("America/Los_Angeles", 2015, 3, 8, 3, 0)
    evening = at("America/Los_Angeles", 2015, 3, 8, 23, 30)
    assert next_scheduled_rotation(evening, 24 * HOUR, LA) == at(
        "America/Los_Angeles", 2015, 3, 9, 0, 0
    )
    # Santiago's 2024-09-08 starts at 01:00: intervals count from there
    morning = at("America/Santiago", 2024, 9, 8, 2, 30)
    assert next_scheduled_rotation(morning, HOUR, SANTIAGO) == at(
        "America/Santiago", 2024, 9, 8, 3, 0
    )
