"""Binlog change capture from MySQL and MariaDB, compatible with Debezium's MySqlConnector and
MariaDbConnector, over the change-capture core (``connectors/change_capture/``):
``database.py`` (the ordinary connection: server checks, catalog, binlog position, snapshot
transaction, chunks), ``types.py`` (column types and their values), ``tables.py`` (a captured
table's schemas and rows)."""
