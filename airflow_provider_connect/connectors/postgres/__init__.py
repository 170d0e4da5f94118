"""Log-based change capture from PostgreSQL, compatible with Debezium's PostgreSQL connector,
over the change-capture core (``connectors/change_capture/``): ``source.py`` (the connector,
and its task that wires the parts), ``config.py`` (Debezium's configs, the typed config),
``connections.py`` (the task's connections), ``sources.py`` (the slot's handling under the
core's coordinator), ``snapshot_source.py`` and ``streaming_source.py`` (the change-event
sources),
``events.py`` (the records of change events), ``offsets.py`` (the offset context),
``incremental.py`` (incremental snapshots' chunks), ``signals.py`` (the signal table),
``pgoutput.py`` (the replication messages), ``stream.py`` (the replication connection),
``database.py`` (catalog, publication, slot, snapshots), ``types.py`` (column types),
``tables.py`` (a captured table's schemas and rows), ``envelope.py`` (PostgreSQL's
``source`` block), ``datasets.py`` (what a config reads and writes)."""
