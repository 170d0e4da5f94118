"""Log-based change capture from PostgreSQL, compatible with Debezium's PostgreSQL connector:
``source.py`` (the connector and its task), ``config.py`` (Debezium's configs),
``pgoutput.py`` (the replication messages), ``stream.py`` (the replication connection),
``database.py`` (catalog, publication, slot, snapshots), ``types.py`` (column types),
``tables.py`` (a captured table's schemas and rows), ``envelope.py`` (Debezium's shapes)."""
