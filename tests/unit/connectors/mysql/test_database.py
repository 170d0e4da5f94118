"""The pure parts of connectors/mysql/database.py: SHOW GRANTS lines (as MySQL 8 and MariaDB
10.11 print them) to missing privileges, binlog settings to problems, key bounds in SQL,
the lock each snapshot.locking.mode takes, version strings."""

from __future__ import annotations

import pytest

from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connectors.mysql import database
from airflow_provider_connect.connectors.mysql.database import (
    _global_lock,
    _version,
    binlog_problems,
    key_above,
    missing_privileges,
    quote,
)

GOOD = {
    "server_id": "1",
    "log_bin": "ON",
    "binlog_format": "ROW",
    "binlog_row_image": "FULL",
    "binlog_row_metadata": "FULL",
}


@pytest.mark.parametrize(
    "grants",
    [
        # MariaDB 10.11's root, and MySQL 8's.
        [
            "GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION",
            "GRANT PROXY ON ``@`%` TO `root`@`localhost` WITH GRANT OPTION",
        ],
        ["GRANT ALL ON *.* TO `root`@`%` WITH GRANT OPTION"],
        # MariaDB 10.5+ prints REPLICATION CLIENT as BINLOG MONITOR.
        [
            "GRANT RELOAD, BINLOG MONITOR, REPLICATION SLAVE ON *.* TO `cdc`@`%` "
            "IDENTIFIED BY PASSWORD '*7B9EBEED26AA52ED10C0F549FA863F13C39E0209'",
            "GRANT SELECT ON `shop`.* TO `cdc`@`%`",
        ],
        # MySQL 8: dynamic privileges on a line of their own, SELECT on some columns only.
        [
            "GRANT RELOAD, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO `cdc`@`%`",
            "GRANT BACKUP_ADMIN ON *.* TO `cdc`@`%`",
            "GRANT SELECT (`id`, `name`), INSERT ON `shop`.`orders` TO `cdc`@`%`",
        ],
        # The aliases, lower case, odd spacing; ALL on one database gives SELECT.
        [
            "grant reload,  replication   replica, replication client on *.* to 'cdc'@'%'",
            "GRANT ALL PRIVILEGES ON `shop`.* TO `cdc`@`%`",
        ],
    ],
    ids=["mariadb-root", "mysql-all", "mariadb-user", "mysql-user", "aliases"],
)
def test_grants_that_give_every_privilege(grants: list[str]) -> None:
    assert missing_privileges(grants) == []


@pytest.mark.parametrize(
    ("grants", "missing"),
    [
        ([], ["SELECT", "RELOAD", "REPLICATION SLAVE", "REPLICATION CLIENT"]),
        (
            ["GRANT SELECT, RELOAD, BINLOG MONITOR ON *.* TO `cdc`@`%`"],
            ["REPLICATION SLAVE"],
        ),
        # Global privileges granted on a database count for nothing (SELECT does).
        (
            ["GRANT SELECT, RELOAD ON `shop`.* TO `cdc`@`%`", "GRANT USAGE ON *.* TO `cdc`@`%`"],
            ["RELOAD", "REPLICATION SLAVE", "REPLICATION CLIENT"],
        ),
        # A role's name is no privilege (MariaDB lists the current role's grants apart).
        (
            [
                "GRANT `replicator` TO `cdc`@`%`",
                "GRANT SELECT, RELOAD ON *.* TO `cdc`@`%`",
                "SET DEFAULT ROLE `replicator` FOR `cdc`@`%`",
            ],
            ["REPLICATION SLAVE", "REPLICATION CLIENT"],
        ),
        # SUPER gives none of them.
        (["GRANT SUPER ON *.* TO `cdc`@`%`"], list(database.REQUIRED_PRIVILEGES)),
    ],
    ids=["none", "no-replication-slave", "database-level", "role-line", "super"],
)
def test_missing_privileges_in_required_order(grants: list[str], missing: list[str]) -> None:
    assert missing_privileges(grants) == missing


def test_a_server_set_up_for_change_capture_has_no_binlog_problem() -> None:
    assert binlog_problems(GOOD) == []
    # Values as servers print them: lower case, and 1 for ON.
    assert binlog_problems({**GOOD, "log_bin": "1", "binlog_format": "row"}) == []


@pytest.mark.parametrize(
    ("changed", "named"),
    [
        ({"log_bin": "OFF"}, "log_bin=OFF"),
        ({"binlog_format": "STATEMENT"}, "use a binlog_format=ROW"),
        ({"binlog_format": "MIXED"}, "use a binlog_format=ROW"),
        ({"binlog_row_image": "NOBLOB"}, "use a binlog_row_image=FULL"),
        ({"binlog_row_image": "MINIMAL"}, "use a binlog_row_image=FULL"),
        ({"binlog_row_metadata": "MINIMAL"}, "use a binlog_row_metadata=FULL"),
        ({"binlog_row_metadata": None}, "no binlog_row_metadata setting"),
        ({"binlog_transaction_compression": "ON"}, "binlog_transaction_compression=OFF"),
        ({"log_bin_compress": "ON"}, "log_bin_compress=OFF"),
        ({"binlog_row_value_options": "PARTIAL_JSON"}, "binlog_row_value_options=''"),
    ],
)
def test_each_binlog_problem_names_its_setting(changed: dict[str, str | None], named: str) -> None:
    variables = {k: v for k, v in {**GOOD, **changed}.items() if v is not None}
    [message] = binlog_problems(variables)
    assert named in message


def test_binlog_format_message_is_debeziums() -> None:
    assert binlog_problems({**GOOD, "binlog_format": "STATEMENT"}) == [
        "The database server is not configured to use a ROW binlog_format, which is required "
        "for this connector to work properly. Change the database configuration to use a "
        "binlog_format=ROW and restart the connector."
    ]


def test_every_problem_at_once() -> None:
    assert len(binlog_problems({"log_bin": "OFF", "binlog_format": "MIXED"})) == 3


def test_key_bounds_use_the_leading_column() -> None:
    assert key_above(["id"], (5,)) == ("`id` > %s", [5])
    sql, args = key_above(["a", "b`c", "d"], ("x", 2, 3))
    assert sql == (
        "`a` >= %s AND (`a` > %s OR `a` = %s AND `b``c` > %s OR "
        "`a` = %s AND `b``c` = %s AND `d` > %s)"
    )
    assert args == ["x", "x", "x", 2, "x", 2, 3]


def test_quoting() -> None:
    assert quote("odd`name") == "`odd``name`"
    assert database.qualified("d", "t") == "`d`.`t`"
    assert database.column_list(["a", "b"]) == "`a`, `b`"


@pytest.mark.parametrize(
    ("mode", "mariadb", "lock"),
    [
        ("minimal", True, None),
        ("none", True, None),
        ("extended", True, "FLUSH TABLES WITH READ LOCK"),
        ("minimal", False, "FLUSH TABLES WITH READ LOCK"),
        ("extended", False, "FLUSH TABLES WITH READ LOCK"),
        ("minimal_percona", False, "LOCK TABLES FOR BACKUP"),
        ("minimal_percona_no_table_locks", False, "LOCK TABLES FOR BACKUP"),
        ("none", False, None),
    ],
)
def test_the_global_lock_of_each_locking_mode(mode: str, mariadb: bool, lock: str | None) -> None:
    assert _global_lock(mode, mariadb) == lock


@pytest.mark.parametrize(("mode", "mariadb"), [("minimal_percona", True), ("custom", False)])
def test_unsupported_locking_modes(mode: str, mariadb: bool) -> None:
    with pytest.raises(ConnectException, match="Unsupported snapshot.locking.mode"):
        _global_lock(mode, mariadb)


def test_versions() -> None:
    assert _version("10.11.19-MariaDB-0+deb12u1-log") == (10, 11, 19)
    assert _version("8.4.2") == (8, 4, 2)
    assert _version("8.0") == (8, 0, 0)
    assert _version("8.0.36-0ubuntu0.22.04.1") >= (8, 0, 22)
    assert _version("odd") == (0,)


def test_missing_pymysql_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(database, "pymysql", None)
    with pytest.raises(ConnectException, match=r"airflow-provider-connect\[mysql\]"):
        database.require_pymysql()
