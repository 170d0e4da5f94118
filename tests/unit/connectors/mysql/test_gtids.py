"""GTID sets grown at each commit and the GTID source filter, for both flavours."""

from __future__ import annotations

from airflow_provider_connect.connectors.mysql.gtids import (
    GtidFilter,
    mariadb_added,
    mysql_added,
    source_of,
)

UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


def test_mariadb_sets_keep_the_last_gtid_of_each_domain_in_domain_order() -> None:
    assert mariadb_added(None, "0-1-1") == "0-1-1"
    assert mariadb_added("0-1-1", "0-1-2") == "0-1-2"
    assert mariadb_added("0-1-2", "10-2-7") == "0-1-2,10-2-7"
    assert mariadb_added("0-1-2,10-2-7", "2-1-3") == "0-1-2,2-1-3,10-2-7"


def test_mysql_sets_grow_their_ranges() -> None:
    assert mysql_added(None, f"{UUID}:1") == f"{UUID}:1"
    assert mysql_added(f"{UUID}:1-5", f"{UUID}:6") == f"{UUID}:1-6"


def test_the_source_filter_matches_the_flavours_source() -> None:
    assert source_of("0-12-99", mariadb=True) == "0-12"
    assert source_of(f"{UUID}:7", mariadb=False) == UUID
    included = GtidFilter(["0-1"], [], mariadb=True)
    assert included.captured("0-1-5") and not included.captured("0-2-5")
    assert included.captured(None)  # no GTID: captured
    excluded = GtidFilter([], [UUID.upper()], mariadb=False)
    assert not excluded.captured(f"{UUID}:3") and excluded.captured("aaaa:1")
    assert GtidFilter([], [], mariadb=True).captured("9-9-9")
