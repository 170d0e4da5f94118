"""postgres_replication: PostgreSQL tables replicated into another database through Kafka,
from the write-ahead log, with a backfill task.

``capture`` (Debezium's ``PostgresConnector``) snapshots the tables, then streams their
changes from a logical replication slot into ``<prefix>.<schema>.<table>`` topics in
Debezium's envelope; ``replica`` (``JdbcSinkConnector``) unwraps each event with Debezium's
``ExtractNewRecordState``, routes it to the table of the same name and upserts it by
primary key, deleting the row on a delete. ``backfill`` asks ``capture`` for an
incremental snapshot of ``backfill_tables`` (through its signal table, which must exist:
``CREATE TABLE debezium_signal (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL,
data TEXT)``), read again while changes keep streaming. ``caught_up`` waits until the
replica has consumed what the topics held (the tasks are those of ``cdc_replication.py``,
shared with ``mariadb_replication``).

The connectors keep running after the run. Deleting ``capture`` (REST, or a
``DeleteConnectorOperator`` as a teardown) drops its replication slot and the publication
it created, and the delete waits for that (KIP-901); pausing or stopping it keeps them, so
no change is missed.
"""

from __future__ import annotations

from airflow.sdk import Param
from cdc_replication import replication_dag  # beside this file

SLOT = "{{ params.name | replace('-', '_') }}"

dag = replication_dag(
    dag_id="postgres_replication",
    description="Replicate PostgreSQL tables through Kafka from the write-ahead log",
    doc_md=__doc__,
    name_also=" and the replication slot's name",
    connector_class="io.debezium.connector.postgresql.PostgresConnector",
    port=5432,
    user="postgres",
    user_title="Source user (with REPLICATION)",
    source={"dbname": Param("postgres", type="string", title="Source database")},
    capture={
        "database.dbname": "{{ params.dbname }}",
        "slot.name": SLOT,  # the name, as the slot's name may have no '-'
        "publication.name": f"{SLOT}_publication",
        "publication.autocreate.mode": "filtered",
    },
    tables="public.orders",
    table_form="schema.table",
    signal_table="public.debezium_signal",
    replica_url="sqlite:////tmp/connect-replica.db",
)
