"""The MySQL / MariaDB side of change capture over an ordinary connection (PyMySQL): the
server's checks, the catalog (databases, tables, columns, keys), the binlog's position, the
snapshot transaction and the rows read in it, incremental snapshots' chunks and the statements
the connector writes (heartbeat action query, signal rows).

Every connection uses the session settings :data:`SESSION_SETTINGS` (UTC time zone, utf8mb4),
so TIMESTAMP values come in UTC as the binlog carries them. Values come as PyMySQL's default
converters give them. PyMySQL is imported here, with an error that names the extra to install
when it is missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from airflow_provider_connect.connect.errors import ConnectException

try:
    import pymysql
    import pymysql.cursors
except ImportError:  # pragma: no cover - the extra is installed with the project's tests
    pymysql = None  # type: ignore[assignment]

SESSION_SETTINGS = "SET time_zone = '+00:00'"
"""Run on every connection after it opens (its character set is utf8mb4 from the handshake)."""

BUILTIN_DATABASES = ("information_schema", "mysql", "performance_schema", "sys")
"""The server's own databases, left out while ``table.ignore.builtin`` is true."""

REQUIRED_PRIVILEGES = ("SELECT", "RELOAD", "REPLICATION SLAVE", "REPLICATION CLIENT")
"""What the connector's user needs (SELECT on the captured tables, the others global)."""

_ALIASES = {
    "ALL": "ALL PRIVILEGES",
    # MariaDB 10.5 renamed REPLICATION CLIENT (SHOW GRANTS shows the new name); MySQL 8.0.22 and
    # MariaDB 10.5.1 accept REPLICATION REPLICA for REPLICATION SLAVE.
    "BINLOG MONITOR": "REPLICATION CLIENT",
    "REPLICATION REPLICA": "REPLICATION SLAVE",
}

_BINLOG_MESSAGE = (
    "The database server is not configured to use a {value} {name}, which is required for this "
    "connector to work properly. Change the database configuration to use a {name}={value} and "
    "restart the connector."
)
"""Debezium's text for binlog_format and binlog_row_image (NOBLOB, which it accepts too, is
not: every column's value is needed)."""

_ACCESS_DENIED = (1227, 1142, 1045)
"""Errors of a statement the user may not run (specific and global privilege denied)."""

_NOT_LOGGING = 1381
"""ER_NO_BINARY_LOGGING: ``SHOW BINARY LOGS`` on a server without binlog."""


def require_pymysql() -> Any:
    """The PyMySQL module; a ConnectException naming the extra when it is not installed."""
    if pymysql is None:
        raise ConnectException(
            "The MySQL and MariaDB change-capture connectors need PyMySQL and "
            "mysql-replication: pip install 'airflow-provider-connect[mysql]'"
        )
    return pymysql


@dataclass(frozen=True)
class BinlogPosition:
    """A position in the server's binlog: the next event is read from ``pos`` of ``file``.
    ``gtids`` is the GTID set of every transaction before it (MySQL ``uuid:1-5,...``, MariaDB
    ``domain-server-seq,...``; ``""`` when none yet), None when the server has no GTIDs (MySQL
    with ``gtid_mode`` off)."""

    file: str
    pos: int
    gtids: str | None


class Database:
    """An ordinary connection to the server, in autocommit (except inside the snapshot
    transaction), with :data:`SESSION_SETTINGS`. Not thread-safe: one user at a time, and
    nothing else runs on it while :meth:`rows` is being iterated."""

    def __init__(self, parameters: dict[str, Any]) -> None:
        """``parameters`` are PyMySQL's ``connect`` arguments (host, port, user, password,
        ssl, connect_timeout, init_command, ...); charset and autocommit are set here."""
        self.parameters = parameters
        self.connection = require_pymysql().connect(
            **{**parameters, "charset": "utf8mb4", "autocommit": True}
        )
        self._locked = False
        try:
            self.execute(SESSION_SETTINGS)
            self.version = str(self.query("SELECT VERSION()")[0][0])
        except BaseException:
            self.connection.close()
            raise

    @property
    def mariadb(self) -> bool:
        """The server is MariaDB (else MySQL)."""
        return "mariadb" in self.version.lower()

    def close(self) -> None:
        self.connection.close()

    def query(self, statement: str, args: Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        """The rows ``statement`` returns (``%s`` placeholders take ``args``)."""
        with self.connection.cursor() as cursor:
            cursor.execute(statement, args)
            return list(cursor.fetchall())

    def execute(self, statement: str, args: Sequence[Any] | None = None) -> None:
        """Runs ``statement`` (``%s`` placeholders take ``args``); in autocommit, committed
        when it returns (the heartbeat action query, signal rows)."""
        with self.connection.cursor() as cursor:
            cursor.execute(statement, args)

    def variables(self, *names: str) -> dict[str, str]:
        """``SHOW GLOBAL VARIABLES`` of ``names`` (lower-case): the server's values, as
        strings; a name the server does not have is left out."""
        if not names:
            return {}
        rows = self.query(
            "SHOW GLOBAL VARIABLES WHERE Variable_name IN (" + ", ".join(["%s"] * len(names)) + ")",
            names,
        )
        return {str(name).lower(): str(value) for name, value in rows}

    # -- checks ---------------------------------------------------------------------------

    def server_problems(self, flavor_name: str, server_id: int) -> list[tuple[str, str]]:
        """What keeps change capture from working on this server, as ``(config key the fix
        belongs to, message)``; empty when nothing does. ``flavor_name`` is ``mysql`` or
        ``mariadb``, ``server_id`` the config's ``database.server.id``.

        Checked: the binlog (on, ROW format, FULL row image, FULL row metadata, no compressed
        transactions or partial JSON, :func:`binlog_problems`); the user's privileges
        (:func:`missing_privileges`); the server id (not the server's own, nor a replica's
        that ``SHOW SLAVE HOSTS`` lists: replicas that do not register are not seen, nor are
        any when the user may not list them); a MariaDB connector on a MySQL server."""
        problems: list[tuple[str, str]] = []
        if flavor_name == "mariadb" and not self.mariadb:
            problems.append(
                (
                    "connector.class",
                    f"The database server is MySQL ({self.version}), not MariaDB: use "
                    "io.debezium.connector.mysql.MySqlConnector",
                )
            )
        found = self.variables(*_CHECKED_VARIABLES)
        problems += [("database.hostname", message) for message in binlog_problems(found)]
        missing = missing_privileges(self.grants())
        if missing:
            problems.append(("database.user", self._privileges_message(missing)))
        problems += [
            ("database.server.id", message)
            for message in self._server_id_problems(server_id, int(found["server_id"]))
        ]
        return problems

    def grants(self) -> list[str]:
        """``SHOW GRANTS`` of the session's user: its own grants and, on MariaDB, those of
        its current role."""
        return [str(row[0]) for row in self.query("SHOW GRANTS")]

    def _privileges_message(self, missing: list[str]) -> str:
        user = str(self.query("SELECT CURRENT_USER()")[0][0])
        account = "'{}'@'{}'".format(*user.rsplit("@", 1)) if "@" in user else user
        return (
            f"The user {account} lacks the privileges {', '.join(missing)} that change capture "
            f"needs ({', '.join(REQUIRED_PRIVILEGES)}): "
            f"GRANT {', '.join(missing)} ON *.* TO {account}"
        )

    def _server_id_problems(self, server_id: int, own: int) -> list[str]:
        if server_id == own:
            return [
                f"database.server.id {server_id} is the database server's own server_id: "
                "choose an id no server or replica of the replication topology uses"
            ]
        statement = (
            "SHOW SLAVE HOSTS"
            if self.mariadb or _version(self.version) < (8, 0, 22)
            else "SHOW REPLICAS"
        )
        try:
            replicas = self.query(statement)
        except pymysql.MySQLError as e:
            if e.args and e.args[0] in _ACCESS_DENIED:
                return []
            raise
        return [
            f"database.server.id {server_id} is the server_id of a replica of the database "
            f"server (host {host!r}, port {port}, in {statement}): choose an id no server or "
            "replica of the replication topology uses"
            for replica_id, host, port, *_ in replicas
            if int(replica_id) == server_id
        ]

    # -- the catalog ----------------------------------------------------------------------

    def tables(self, builtin: bool = False) -> list[tuple[str, str]]:
        """``(database, table)`` of every base table (system-versioned ones too; no views or
        sequences), sorted; those of the server's own databases only when ``builtin``."""
        rows = self.query(
            "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
            "WHERE TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED') "
            "ORDER BY TABLE_SCHEMA, TABLE_NAME"
        )
        return [
            (str(db), str(table))
            for db, table in rows
            if builtin or str(db).lower() not in BUILTIN_DATABASES
        ]

    def columns(self, db: str, table: str) -> list[dict[str, Any]]:
        """The columns of ``db.table`` from ``information_schema.COLUMNS`` in their order,
        keys lower-case (:data:`COLUMN_KEYS`), plus ``json``: the column holds JSON (MySQL's
        JSON type; on MariaDB, where JSON is LONGTEXT, a ``json_valid(column)`` CHECK on it,
        as its JSON type declares)."""
        rows = self.query(
            f"SELECT {', '.join(COLUMN_KEYS)} FROM information_schema.COLUMNS "
            "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION",
            (db, table),
        )
        checked = self._json_checked(db, table) if self.mariadb else set()
        columns = []
        for row in rows:
            column = dict(zip(COLUMN_KEYS, row, strict=True))
            column["json"] = (
                column["column_name"] in checked
                if self.mariadb
                else str(column["data_type"]).lower() == "json"
            )
            columns.append(column)
        return columns

    def _json_checked(self, db: str, table: str) -> set[str]:
        rows = self.query(
            "SELECT CONSTRAINT_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS "
            "WHERE CONSTRAINT_SCHEMA = %s AND TABLE_NAME = %s AND LEVEL = 'Column'",
            (db, table),
        )
        return {
            str(name) for name, clause in rows if str(clause) == f"json_valid({quote(str(name))})"
        }

    def primary_key(self, db: str, table: str) -> list[str]:
        """The primary key's columns in key order; empty when the table has none."""
        rows = self.query(
            "SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE "
            "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s AND CONSTRAINT_NAME = 'PRIMARY' "
            "ORDER BY ORDINAL_POSITION",
            (db, table),
        )
        return [str(name) for (name,) in rows]

    def create_table(self, db: str, table: str) -> str:
        """``SHOW CREATE TABLE``'s text."""
        return str(self.query(f"SHOW CREATE TABLE {qualified(db, table)}")[0][1])

    # -- the binlog -----------------------------------------------------------------------

    def binlog_files(self) -> list[str]:
        """The server's binlog files, oldest first (``SHOW BINARY LOGS``); empty when the
        binlog is off."""
        try:
            return [str(row[0]) for row in self.query("SHOW BINARY LOGS")]
        except pymysql.MySQLError as e:
            if e.args and e.args[0] == _NOT_LOGGING:
                return []
            raise

    def position(self) -> BinlogPosition:
        """The binlog's current end: where the next event will be written, with the GTID set
        of every transaction before it (MariaDB: ``BINLOG_GTID_POS`` of that file and
        position, so the two agree however busy the server is; MySQL: the status'
        ``Executed_Gtid_Set`` when ``gtid_mode`` is ON)."""
        statement = self._status_statement()
        rows = self.query(statement)
        if not rows or not rows[0][0]:
            raise ConnectException(
                f"Cannot read the binlog filename and position via '{statement}'. "
                "Make sure your server is correctly configured"
            )
        file, pos = str(rows[0][0]), int(rows[0][1])
        if self.mariadb:
            return BinlogPosition(file, pos, self._gtids_at(file, pos))
        gtid_mode = self.variables("gtid_mode").get("gtid_mode", "OFF").upper()
        gtids = str(rows[0][4] or "").replace("\n", "") if gtid_mode == "ON" else None
        return BinlogPosition(file, pos, gtids)

    def _status_statement(self) -> str:
        if self.mariadb or _version(self.version) < (8, 4):
            return "SHOW MASTER STATUS"
        return "SHOW BINARY LOG STATUS"

    def _gtids_at(self, file: str, pos: int) -> str:
        """MariaDB's GTID position at ``file``/``pos`` (the state a replica connects with to
        read from there). It reads the binlog file up to ``pos``, as mariadb-dump does."""
        found = self.query("SELECT BINLOG_GTID_POS(%s, %s)", (file, pos))[0][0]
        if found is None:
            raise ConnectException(
                f"MariaDB has no GTID position for binlog file {file} at {pos} "
                "(BINLOG_GTID_POS is NULL: the file was purged, or the position is not an "
                "event's start)"
            )
        return str(found)

    # -- snapshots ------------------------------------------------------------------------

    def consistent_snapshot(
        self, locking_mode: str, mariadb: bool, lock_timeout_ms: int | None = None
    ) -> BinlogPosition:
        """Opens the snapshot transaction (REPEATABLE READ, ``WITH CONSISTENT SNAPSHOT``) and
        returns the binlog position it sees: every transaction committed before it is in what
        the transaction reads, every later one in the binlog from there. Until
        :meth:`end_snapshot`, reads on this connection (:meth:`rows`) see that state.

        ``snapshot.locking.mode``: on MariaDB (``mariadb``), which tells the position of a
        consistent snapshot (status ``binlog_snapshot_file``/``_position``), ``minimal`` and
        ``none`` take no lock; ``extended`` holds ``FLUSH TABLES WITH READ LOCK`` (writes
        wait) until :meth:`end_snapshot`. On MySQL, ``minimal`` takes the global read lock
        for the time it takes to start the transaction and read the position,
        ``minimal_percona`` and ``minimal_percona_no_table_locks`` take Percona's ``LOCK
        TABLES FOR BACKUP`` for that time instead, ``extended`` holds the global read lock
        until :meth:`end_snapshot`, and ``none`` takes no lock (the position is then read
        after the transaction starts: writes committed in between are both in the snapshot
        and in the binlog from it). ``lock_timeout_ms`` (``snapshot.lock.timeout.ms``) bounds
        the wait for locks (``lock_wait_timeout``, ``innodb_lock_wait_timeout``)."""
        if lock_timeout_ms is not None:
            seconds = max(1, -(-lock_timeout_ms // 1000))
            self.execute(
                f"SET SESSION lock_wait_timeout = {seconds}, innodb_lock_wait_timeout = {seconds}"
            )
        lock = _global_lock(locking_mode, mariadb)
        try:
            if lock is not None:
                self.execute(lock)
                self._locked = True
            self.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            self.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            if mariadb:
                status = dict(self.query("SHOW STATUS LIKE 'binlog_snapshot_%'"))
                file = str(status["Binlog_snapshot_file"])
                if not file:
                    raise ConnectException(
                        "Cannot read the binlog filename and position via "
                        "'SHOW STATUS LIKE 'binlog_snapshot_%''. Make sure your server is "
                        "correctly configured"
                    )
                pos = int(status["Binlog_snapshot_position"])
                position = BinlogPosition(file, pos, self._gtids_at(file, pos))
            else:
                position = self.position()
            if self._locked and locking_mode != "extended":
                self._unlock()
            return position
        except BaseException:
            self.end_snapshot()
            raise

    def end_snapshot(self) -> None:
        """Ends the snapshot transaction (COMMIT) and releases every lock it holds; the
        connection is back in autocommit. Safe to call when none is open."""
        try:
            self.execute("COMMIT")
        finally:
            if self._locked:
                self._unlock()

    def _unlock(self) -> None:
        self._locked = False
        self.execute("UNLOCK TABLES")

    def rows(
        self, db: str, table: str, columns: Sequence[str], fetch_size: int
    ) -> Iterator[tuple[Any, ...]]:
        """The rows of ``db.table``, values in ``columns``' order, read unbuffered (fetched
        ``fetch_size`` at a time: memory holds no more), in the snapshot transaction when one
        is open. Closing the iterator early reads the rest of the result away."""
        with self.connection.cursor(pymysql.cursors.SSCursor) as cursor:
            cursor.execute(f"SELECT {column_list(columns)} FROM {qualified(db, table)}")
            while batch := cursor.fetchmany(max(1, fetch_size)):
                yield from batch

    # -- incremental snapshots -------------------------------------------------------------

    def chunk(
        self,
        db: str,
        table: str,
        columns: Sequence[str],
        key_columns: Sequence[str],
        after: tuple[Any, ...] | None,
        through: tuple[Any, ...] | None,
        limit: int,
        condition: str | None = None,
    ) -> list[tuple[Any, ...]]:
        """At most ``limit`` rows of ``db.table`` in key order whose key is above ``after``
        (from the first when None) and at most ``through`` (no bound when None), values in
        ``columns``' order; ``condition`` (an incremental snapshot's additional condition,
        SQL) narrows them."""
        conditions, args = [], []
        if after is not None:
            sql, values = key_above(key_columns, after)
            conditions.append(sql)
            args += values
        if through is not None:
            sql, values = key_above(key_columns, through)
            conditions.append(f"NOT ({sql})")
            args += values
        if condition:
            conditions.append(f"({condition})")
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        return self.query(
            f"SELECT {column_list(columns)} FROM {qualified(db, table)}{where} "
            f"ORDER BY {column_list(key_columns)} LIMIT {int(limit)}",
            args,
        )

    def max_key(
        self, db: str, table: str, key_columns: Sequence[str], condition: str | None = None
    ) -> tuple[Any, ...] | None:
        """The greatest key of ``db.table`` (of its rows that meet ``condition``), None when
        it has no rows."""
        where = f" WHERE {condition}" if condition else ""
        descending = ", ".join(f"{quote(c)} DESC" for c in key_columns)
        rows = self.query(
            f"SELECT {column_list(key_columns)} FROM {qualified(db, table)}{where} "
            f"ORDER BY {descending} LIMIT 1"
        )
        return rows[0] if rows else None


COLUMN_KEYS = (
    "column_name",
    "data_type",
    "column_type",
    "is_nullable",
    "column_default",
    "column_key",
    "extra",
    "character_set_name",
    "numeric_precision",
    "numeric_scale",
    "datetime_precision",
    "character_maximum_length",
    "column_comment",
)
"""The ``information_schema.COLUMNS`` columns :meth:`Database.columns` gives, lower-case."""

_CHECKED_VARIABLES = (
    "server_id",
    "log_bin",
    "binlog_format",
    "binlog_row_image",
    "binlog_row_metadata",
    "binlog_transaction_compression",
    "binlog_row_value_options",
    "log_bin_compress",
)


def binlog_problems(variables: dict[str, str]) -> list[str]:
    """What in the server's binlog settings (``SHOW GLOBAL VARIABLES``, names lower-case)
    keeps change capture from working: each message names the setting and its needed value."""
    problems = []
    if variables.get("log_bin", "OFF").upper() not in ("ON", "1"):
        problems.append(
            "The database server does not write a binlog (log_bin=OFF), which this connector "
            "reads. Start the server with the binlog on (option log-bin), binlog_format=ROW, "
            "binlog_row_image=FULL and binlog_row_metadata=FULL, and restart the connector."
        )
    for name in ("binlog_format", "binlog_row_image"):
        expected = "ROW" if name == "binlog_format" else "FULL"
        if variables.get(name, expected).upper() != expected:
            problems.append(_BINLOG_MESSAGE.format(name=name, value=expected))
    metadata = variables.get("binlog_row_metadata")
    if metadata is None:
        problems.append(
            "The database server has no binlog_row_metadata setting (MySQL 8.0.1 and MariaDB "
            "10.5 brought it), which this connector needs set to FULL: the binlog then "
            "carries each table's column names and types. Upgrade the server, set "
            "binlog_row_metadata=FULL and restart the connector."
        )
    elif metadata.upper() != "FULL":
        problems.append(_BINLOG_MESSAGE.format(name="binlog_row_metadata", value="FULL"))
    for name in ("binlog_transaction_compression", "log_bin_compress"):
        if variables.get(name, "OFF").upper() in ("ON", "1"):
            problems.append(
                f"The database server compresses the binlog ({name}=ON), which this connector "
                f"cannot read. Change the database configuration to use {name}=OFF and "
                "restart the connector."
            )
    if "PARTIAL_JSON" in variables.get("binlog_row_value_options", "").upper():
        problems.append(
            "The database server writes partial JSON updates to the binlog "
            "(binlog_row_value_options=PARTIAL_JSON), which this connector cannot read. Change "
            "the database configuration to use binlog_row_value_options='' and restart the "
            "connector."
        )
    return problems


_GRANT = re.compile(r"^GRANT\s+(?P<privileges>.+?)\s+ON\s+(?P<object>.+?)\s+TO\s", re.I | re.S)


def missing_privileges(grants: Sequence[str]) -> list[str]:
    """Which of :data:`REQUIRED_PRIVILEGES` ``SHOW GRANTS``' lines do not give, in that
    order. ALL PRIVILEGES gives every one; SELECT counts on any object (the captured tables
    are not known here), the others only on ``*.*`` (they are global). Lines that grant a
    role give nothing: on MariaDB, SHOW GRANTS lists the current role's own grants."""
    granted: set[str] = set()
    for line in grants:
        match = _GRANT.match(line.strip())
        if match is None:
            continue
        scope = match["object"].replace("`", "").strip()
        for privilege in _split_privileges(match["privileges"]):
            if privilege in ("ALL PRIVILEGES", "SELECT") or scope == "*.*":
                granted.add(privilege)
    if "ALL PRIVILEGES" in granted:
        return []
    return [p for p in REQUIRED_PRIVILEGES if p not in granted]


def _split_privileges(text: str) -> list[str]:
    """``SELECT (a, b), RELOAD`` -> ``["SELECT", "RELOAD"]``: names upper-case with single
    spaces, column lists dropped, aliases (:data:`_ALIASES`) resolved."""
    names = re.sub(r"\([^)]*\)", "", text).split(",")
    normal = (" ".join(name.upper().split()) for name in names)
    return [_ALIASES.get(name, name) for name in normal if name]


def key_above(key_columns: Sequence[str], key: Sequence[Any]) -> tuple[str, list[Any]]:
    """SQL (``%s`` placeholders) and its arguments for "the row's key is above ``key``" in
    the order of ``key_columns``, written so the server can use the key's index: ``a > %s``,
    or ``a >= %s AND (a > %s OR a = %s AND b > %s)``."""
    quoted = [quote(c) for c in key_columns]
    alternatives, args = [], []
    for i, column in enumerate(quoted):
        equal = [f"{c} = %s" for c in quoted[:i]]
        alternatives.append(" AND ".join([*equal, f"{column} > %s"]))
        args += [*key[:i], key[i]]
    if len(quoted) == 1:
        return alternatives[0], args
    return f"{quoted[0]} >= %s AND ({' OR '.join(alternatives)})", [key[0], *args]


def quote(identifier: str) -> str:
    """``identifier`` quoted for MySQL (backticks, doubled inside)."""
    return "`" + identifier.replace("`", "``") + "`"


def qualified(db: str, table: str) -> str:
    return f"{quote(db)}.{quote(table)}"


def column_list(columns: Sequence[str]) -> str:
    return ", ".join(quote(c) for c in columns)


def _global_lock(locking_mode: str, mariadb: bool) -> str | None:
    """The statement of the global lock ``snapshot.locking.mode`` takes, None for none."""
    if locking_mode == "extended" or (locking_mode == "minimal" and not mariadb):
        return "FLUSH TABLES WITH READ LOCK"
    if locking_mode in ("minimal_percona", "minimal_percona_no_table_locks") and not mariadb:
        return "LOCK TABLES FOR BACKUP"
    if locking_mode in ("minimal", "none"):
        return None
    raise ConnectException(f"Unsupported snapshot.locking.mode {locking_mode!r}")


def _version(version: str) -> tuple[int, ...]:
    """``8.0.36-log`` -> ``(8, 0, 36)``."""
    match = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    return tuple(int(part) for part in match.groups("0")) if match else (0,)
