"""The classification of QUERY events' statements (connectors/mysql/ddl.py) against Debezium's
handling (debezium-connector-binlog/.../BinlogStreamingChangeEventSource.handleQueryEvent,
BinlogDatabaseSchema.parseDdl, SchemaHistory.DDL_FILTER), with statements from Debezium's
BinlogSchemaHistoryIT, BinlogAntlrDdlParserTest and MySqlAntlrDdlParserTest.
"""

from __future__ import annotations

import pytest

from airflow_provider_connect.connectors.mysql.ddl import DDL_FILTER, Statement, classify, filtered

DB = "inventory"


def kind(sql: str) -> str:
    return classify(sql, DB).kind


# -- tables --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("sql", "tables"),
    [
        ("CREATE TABLE t (id INT PRIMARY KEY)", [(DB, "t")]),
        (
            "CREATE TABLE IF NOT EXISTS `database1`.`table1` (\n  `id` int NOT NULL\n)",
            [("database1", "table1")],
        ),
        ("create table `db1`.`table1` ( `id` int not null, `other` int );", [("db1", "table1")]),
        ("create table if not exists tbl_without_pk(\n id int)", [(DB, "tbl_without_pk")]),
        ("create table žluťoučký (kůň int);", [(DB, "žluťoučký")]),
        ("CREATE TABLE `t-1` (id INT)", [(DB, "t-1")]),
        ("CREATE TABLE `t.2` (id INT)", [(DB, "t.2")]),
        ("CREATE TABLE `we``ird` (id INT)", [(DB, "we`ird")]),
        ("CREATE TABLE db . t (id INT)", [("db", "t")]),
        ("CREATE TABLE t2 LIKE t1", [(DB, "t2")]),
        ("CREATE TABLE t2 AS SELECT * FROM t1", [(DB, "t2")]),
        ("CREATE OR REPLACE TABLE t (a INT)", [(DB, "t")]),  # MariaDB
        ('CREATE TABLE "ansi"."quoted" (a INT)', [("ansi", "quoted")]),  # ANSI_QUOTES names
        ("CREATE TABLE MixedCase (a INT)", [(DB, "MixedCase")]),  # names as written
    ],
)
def test_create_table(sql: str, tables: list[tuple[str, str]]) -> None:
    assert classify(sql, DB) == Statement("create-table", tuple(tables), DB, (sql,))


@pytest.mark.parametrize(
    ("sql", "table"),
    [
        ("ALTER TABLE b ADD c INT", (DB, "b")),
        (
            "ALTER TABLE `s`.`test` CHANGE COLUMN `a` `d` BIGINT(20) NOT NULL AUTO_INCREMENT",
            ("s", "test"),
        ),
        ("ALTER TABLE `CUSTOMERS_HISTORY` DROP COLUMN ID", (DB, "CUSTOMERS_HISTORY")),
        ("ALTER TABLE foo ADD COLUMN c2 INT, ALGORITHM=INSTANT;", (DB, "foo")),
        ("ALTER TABLE foo RENAME COLUMN old to new ", (DB, "foo")),
        ("ALTER TABLE db.t1 RENAME INDEX myidx to myidx2;", ("db", "t1")),
        ("ALTER TABLE t RENAME KEY k1 TO k2", (DB, "t")),
        ("ALTER TABLE `s`.`test` DROP INDEX i1", ("s", "test")),
        ("ALTER TABLE t1 ADD CONSTRAINT c2 CHECK (c1 IN (1, 2, 3, 4))", (DB, "t1")),
        (
            "ALTER TABLE flat_view_request_log REORGANIZE PARTITION p_max INTO ( PARTITION p_2018_01_17 "
            "VALUES LESS THAN ('2018-01-17'), PARTITION p_max VALUES LESS THAN (MAXVALUE));",
            (DB, "flat_view_request_log"),
        ),
        ("ALTER TABLE table2 COMMENT='alter table comment'", (DB, "table2")),
        ("ALTER ONLINE IGNORE TABLE t ADD x INT", (DB, "t")),
        ("ALTER TABLE IF EXISTS t WAIT 5 ADD x INT", (DB, "t")),  # MariaDB
        ("ALTER TABLE t ADD INDEX rename_idx (a)", (DB, "t")),
        (
            "CREATE INDEX `idx` ON `db`.`table` (created_at) COMMENT '' ALGORITHM DEFAULT LOCK DEFAULT",
            ("db", "table"),
        ),
        ("CREATE UNIQUE INDEX u ON t (a, b)", (DB, "t")),
        ("CREATE OR REPLACE UNIQUE INDEX IF NOT EXISTS u ON t (a)", (DB, "t")),
        ("DROP INDEX `idx` ON `db`.`table` LOCK DEFAULT ALGORITHM DEFAULT", ("db", "table")),
    ],
)
def test_alter_table(sql: str, table: tuple[str, str]) -> None:
    assert classify(sql, DB) == Statement("alter-table", (table,), DB, (sql,))


def test_alter_table_rename() -> None:
    # BinlogSchemaHistoryIT.shouldStoreAlterRename; MySqlAntlrDdlParserTest renames.
    sql = "ALTER TABLE `t-1` RENAME TO `new-t-1`"
    assert classify(sql, DB) == Statement(
        "rename-table", ((DB, "t-1"), (DB, "new-t-1")), DB, (sql,)
    )
    assert classify("ALTER TABLE `db`.`t2` RENAME TO `db`.`t3`;", DB).tables == (
        ("db", "t2"),
        ("db", "t3"),
    )
    assert classify("ALTER TABLE mytable DROP COLUMN val1, RENAME TO newtable", DB).tables == (
        (DB, "mytable"),
        (DB, "newtable"),
    )
    assert classify("ALTER TABLE a RENAME AS b", DB).tables == ((DB, "a"), (DB, "b"))
    assert classify("ALTER TABLE a RENAME b", DB).tables == ((DB, "a"), (DB, "b"))


def test_rename_tables() -> None:
    # BinlogSchemaHistoryIT.shouldStoreSingleRename / shouldStoreMultipleRenames: one event per pair.
    single = classify("RENAME TABLE `t-1` TO `new-t-1`", DB)
    assert single == Statement(
        "rename-table", ((DB, "t-1"), (DB, "new-t-1")), DB, ("RENAME TABLE `t-1` TO `new-t-1`",)
    )
    multiple = classify("RENAME TABLE `t-1` TO `new-t-1`, `t.2` TO `new.t.2`", DB)
    assert multiple.tables == ((DB, "t-1"), (DB, "new-t-1"), (DB, "t.2"), (DB, "new.t.2"))
    assert multiple.ddls == ("RENAME TABLE `t-1` TO `new-t-1`", "RENAME TABLE `t.2` TO `new.t.2`")
    swap = classify("RENAME TABLE a TO b, c TO d", DB)
    assert swap.tables == ((DB, "a"), (DB, "b"), (DB, "c"), (DB, "d"))
    assert swap.ddls == ("RENAME TABLE a TO b", "RENAME TABLE c TO d")
    across = classify("RENAME TABLE db1.a TO db2.a", None)
    assert across.tables == (("db1", "a"), ("db2", "a"))
    # MariaDB: IF EXISTS, WAIT/NOWAIT.
    assert classify("RENAME TABLE IF EXISTS a WAIT 3 TO b", DB).tables == ((DB, "a"), (DB, "b"))
    assert classify("RENAME TABLE a NOWAIT TO b", DB).tables == ((DB, "a"), (DB, "b"))


def test_drop_tables_one_event_per_table() -> None:
    # DropTableParserListener: prefix + `db`.`table` (+ RESTRICT|CASCADE); BinlogSchemaHistoryIT
    # .shouldUseQuotedNameInDrop.
    assert classify("DROP TABLE a, b", DB) == Statement(
        "drop-table",
        ((DB, "a"), (DB, "b")),
        DB,
        ("DROP TABLE `inventory`.`a`", "DROP TABLE `inventory`.`b`"),
    )
    drop = classify("DROP TABLE IF EXISTS `t-1`, `other`.`t.2` CASCADE;", DB)
    assert drop.tables == ((DB, "t-1"), ("other", "t.2"))
    assert drop.ddls == (
        "DROP TABLE IF EXISTS `inventory`.`t-1` CASCADE",
        "DROP TABLE IF EXISTS `other`.`t.2` CASCADE",
    )
    assert classify("DROP TABLE my.foo", DB).ddls == ("DROP TABLE `my`.`foo`",)
    assert classify("DROP TABLE `we``ird`", DB).ddls == ("DROP TABLE `inventory`.`we``ird`",)
    assert classify("DROP TABLE foo", None).ddls == ("DROP TABLE `foo`",)
    assert classify("DROP TABLE foo", None).tables == (("", "foo"),)
    # MySQL's rewrite of a multi-table drop.
    rewritten = classify("DROP TABLE `a`,`b` /* generated by server */", DB)
    assert rewritten.tables == ((DB, "a"), (DB, "b"))
    assert classify("DROP TABLES a WAIT 2 RESTRICT", DB).ddls == (
        "DROP TABLES `inventory`.`a` RESTRICT",
    )


@pytest.mark.parametrize(
    ("sql", "table"),
    [
        ("TRUNCATE TABLE foo", (DB, "foo")),
        (
            "truncate table `t-1`",
            (DB, "t-1"),
        ),  # BinlogSchemaHistoryIT.shouldNotStoreTruncateIfSkipped
        ("TRUNCATE db.x", ("db", "x")),
        ("SET STATEMENT max_statement_time=60 FOR TRUNCATE TABLE x", (DB, "x")),
    ],
)
def test_truncate_is_never_filtered(sql: str, table: tuple[str, str]) -> None:
    # TRUNCATE TABLE is in the ddl.filter list but exempted: it becomes an op=t event.
    assert filtered("TRUNCATE TABLE foo")
    assert classify(sql, DB) == Statement("truncate", (table,), DB, ())


# -- databases -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("sql", "kind", "database"),
    [
        ("CREATE DATABASE db1 CHARACTER SET utf8mb4;", "create-database", "db1"),
        (
            "CREATE DATABASE `mydb` character set UTF8mb4 collate utf8mb4_unicode_ci;",
            "create-database",
            "mydb",
        ),
        (
            "CREATE SCHEMA IF NOT EXISTS `database1` CHARACTER SET='windows-1250'",
            "create-database",
            "database1",
        ),
        ("DROP DATABASE IF EXISTS `history-dbz`", "drop-database", "history-dbz"),
        ("DROP SCHEMA db2", "drop-database", "db2"),
        ("ALTER DATABASE `db3` CHARACTER SET latin2", "alter-database", "db3"),
        ("ALTER SCHEMA db4 COLLATE utf8_bin", "alter-database", "db4"),
        ("ALTER DATABASE CHARACTER SET utf8", "alter-database", DB),  # the default database
        ("ALTER DATABASE DEFAULT CHARSET latin1", "alter-database", DB),
    ],
)
def test_database_statements(sql: str, kind: str, database: str) -> None:
    assert classify(sql, DB) == Statement(kind, (), database, (sql,))


# -- filtered (ddl.filter), XA, transaction control ----------------------------------------------
@pytest.mark.parametrize(
    "sql",
    [
        # BinlogSchemaHistoryIT.shouldNotStoreView / Function / Trigger / Procedure
        "CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW `employee_summary` "
        "AS SELECT CONCAT(first_name, ' ', last_name) AS full_name, department_id FROM employees",
        "ALTER ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW `employee_summary` "
        "AS SELECT CONCAT(first_name, ' ', last_name) AS full_name FROM employees",
        "DROP VIEW employee_summary",
        "CREATE OR REPLACE VIEW v AS SELECT 1",
        "CREATE DEFINER=`root`@`localhost` FUNCTION `square`(x INT) RETURNS int\n    DETERMINISTIC\nRETURN x * x",
        "DROP FUNCTION square",
        "CREATE DEFINER=`root`@`localhost` TRIGGER trg_before_insert_employees\nBEFORE INSERT ON employees\n"
        "FOR EACH ROW\nBEGIN\n    IF NEW.department_id IS NULL THEN\n        SET NEW.department_id = 999;\n"
        "    END IF;\nEND",
        "DROP TRIGGER trg_before_insert_employees",
        "CREATE DEFINER=`root`@`localhost` PROCEDURE `promote_employee`(IN emp_id INT)\nBEGIN\n"
        "    UPDATE employees SET department_id = department_id + 1 WHERE id = emp_id;\nEND",
        "DROP PROCEDURE promote_employee",
        "CREATE DEFINER='mysqluser'@'%' PROCEDURE p() BEGIN END",
        # shouldNotStoreAnalyzeOrOptimize
        "ANALYZE TABLE employees",
        "OPTIMIZE TABLE employees",
        "OPTIMIZE NO_WRITE_TO_BINLOG TABLE employees",
        "REPAIR LOCAL TABLE employees",
        # shouldNotStoreUserStatements / shouldNotStoreRoleStatements
        "CREATE USER 'test_user'@'localhost' IDENTIFIED BY 'password';",
        "DROP USER 'test_user'@'localhost';",
        "ALTER USER IF EXISTS 'u'@'%' IDENTIFIED BY 'x'",
        "DROP ROLE IF EXISTS app_role;",
        "CREATE ROLE app_role;",
        "CREATE OR REPLACE USER u",
        "GRANT ALL PRIVILEGES ON `mysql`.* TO 'mysqluser'@'%'",
        "REVOKE SELECT ON db.* FROM u",
        "SET STATEMENT max_statement_time=1 FOR GRANT SELECT ON db.* TO u",
        # server-written and RDS statements
        "DROP TEMPORARY TABLE IF EXISTS `tmp` /* generated by server */",
        "INSERT INTO mysql.rds_heartbeat2(id, value) values (1,1692866524004) ON DUPLICATE KEY UPDATE value = 1692866524004",
        "DELETE FROM mysql.rds_sysinfo where name = 'innodb_txn_key'",
        "INSERT INTO rds_monitor(id, value) values (1,2)",
        "FLUSH RELAY LOGS",
        "flush relay logs FOR CHANNEL 'x'",
        "SAVEPOINT sp1",
        "# Dummy event replacing event type 160 that slave cannot handle.",
        "REPLACE INTO t VALUES (1)",
    ],
)
def test_ddl_filter_ignores(sql: str) -> None:
    assert classify(sql, DB) == Statement("ignored", (), DB, ())


@pytest.mark.parametrize(
    "sql",
    [
        # comments before the statement, and mysqldump's executable comments
        "/* app=x */ GRANT SELECT ON db.* TO u",
        "-- note\nDROP VIEW v",
        "/*!50001 CREATE ALGORITHM=UNDEFINED */\n/*!50013 DEFINER=`root`@`localhost` SQL SECURITY DEFINER */\n"
        "/*!50001 VIEW `v` AS select 1 AS `1` */",
        "/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER trg BEFORE INSERT ON t "
        "FOR EACH ROW SET NEW.a = 1 */",
    ],
)
def test_ddl_filter_applies_after_comments(sql: str) -> None:
    assert kind(sql) == "ignored"


def test_ddl_filter_is_debeziums_default() -> None:
    assert len(DDL_FILTER) == 17
    assert not filtered("CREATE TABLE t (a INT)")
    assert not filtered("ALTER TABLE t ADD v INT")  # "VIEW" must be the object, not a column
    assert filtered("  grant select on a.* to b  ")  # case-insensitive, trimmed


@pytest.mark.parametrize(
    "sql",
    [
        "XA START 'xatest'",
        "XA END 'xatest'",
        "XA PREPARE 'xatest'",
        "XA COMMIT 'xatest'",
        "SET STATEMENT max_statement_time=60 FOR XA ROLLBACK 'x'",
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "ROLLBACK TO SAVEPOINT sp1",
        "RELEASE SAVEPOINT sp1",
        "FLUSH PRIVILEGES",
        "SET PASSWORD FOR 'u'@'%' = 'hash'",
        "/* only a comment */",
        "",
        "   ",
    ],
)
def test_ignored(sql: str) -> None:
    assert classify(sql, DB) == Statement("ignored", (), DB, ())


def test_temporary_tables_are_ignored() -> None:
    assert kind("CREATE TEMPORARY TABLE tmp (a INT)") == "ignored"
    assert kind("CREATE OR REPLACE TEMPORARY TABLE tmp (a INT)") == "ignored"
    assert kind("DROP TEMPORARY TABLE tmp") == "ignored"


# -- DML -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO t VALUES (1)",
        "insert into t values (1)",
        "UPDATE t SET a = 1",
        "DELETE FROM t WHERE a = 1",
        "SET STATEMENT sql_mode='' FOR INSERT INTO t VALUES (2)",
        "/* client */ INSERT INTO t VALUES (1)",
        "LOAD DATA INFILE 'x' INTO TABLE t",
        "WITH c AS (SELECT 1) DELETE FROM t WHERE a IN (SELECT * FROM c)",
    ],
)
def test_dml(sql: str) -> None:
    assert classify(sql, DB) == Statement("dml", (), DB, ())


# -- other statements: database-level events without table changes -------------------------------
@pytest.mark.parametrize(
    "sql",
    [
        "CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO DELETE FROM t",
        "ALTER EVENT e DISABLE",
        "CREATE SEQUENCE s START WITH 1",
        "FLUSH TABLES",
        "RENAME USER 'jeffrey'@'localhost' TO 'jeff'@'127.0.0.1';",
        "CREATE AGGREGATE FUNCTION f(x INT) RETURNS INT BEGIN RETURN 1; END",  # not in the filter
        "INSTALL PLUGIN p SONAME 'p.so'",
        "SET STATEMENT max_statement_time=1",  # no FOR
    ],
)
def test_other(sql: str) -> None:
    assert classify(sql, DB) == Statement("other", (), DB, (sql,))


# -- lexical rules -------------------------------------------------------------------------------
def test_set_statement_is_stripped() -> None:
    sql = "SET STATEMENT max_statement_time=60, sql_mode=CONCAT('a', 'FOR') FOR ALTER TABLE t ADD x INT"
    assert classify(sql, DB) == Statement("alter-table", ((DB, "t"),), DB, (sql,))
    # Not fooled by FOR in a later part of the statement (FOREIGN is a word of its own).
    sql = "SET STATEMENT lock_wait_timeout=5 FOR CREATE TABLE c (p INT, FOREIGN KEY (p) REFERENCES t(id))"
    assert classify(sql, DB).tables == ((DB, "c"),)


def test_comments_and_quoting() -> None:
    assert classify("/* x */ CREATE /* y */ TABLE -- z\n `a`.`b` (c INT)", DB).tables == (
        ("a", "b"),
    )
    assert classify("# note\nALTER TABLE t ADD c INT", DB).tables == ((DB, "t"),)
    # "--" without a space is an operator, not a comment.
    assert classify("ALTER TABLE t ALTER c SET DEFAULT 1--1", DB).tables == ((DB, "t"),)
    # RENAME inside a string or a comment is not a rename.
    assert kind("ALTER TABLE t COMMENT 'RENAME TO x'") == "alter-table"
    assert kind("ALTER TABLE t ADD c INT /* RENAME TO x */") == "alter-table"
    assert kind("ALTER TABLE t COMMENT 'it\\'s RENAME TO x'") == "alter-table"
    # An executable comment's text counts.
    assert classify("/*!40000 ALTER TABLE `t` DISABLE KEYS */", DB).tables == ((DB, "t"),)
    assert (
        classify("CREATE TABLE t (a INT) /*!50100 PARTITION BY HASH (a) */", DB).kind
        == "create-table"
    )
    assert classify("/*M!100100 DROP TABLE x */", DB).tables == ((DB, "x"),)


def test_default_database_missing() -> None:
    assert classify("CREATE TABLE t (a INT)", None) == Statement(
        "create-table", (("", "t"),), None, ("CREATE TABLE t (a INT)",)
    )
    assert classify("CREATE TABLE d.t (a INT)", None).tables == (("d", "t"),)
