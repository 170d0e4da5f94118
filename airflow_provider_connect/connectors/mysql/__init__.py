"""Binlog change capture from MySQL and MariaDB, compatible with Debezium's ``MySqlConnector``
and ``MariaDbConnector``, over the change-capture core (``connectors/change_capture/``):
``envelope.py`` (the ``source`` block, transaction ids, schema-change events), ``ddl.py``
(what a QUERY event's statement does)."""
