"""mariadb_replication: MariaDB tables replicated into PostgreSQL through Kafka, from the
binlog, with a backfill task.

``capture`` (Debezium's ``MariaDbConnector``) snapshots the tables in a consistent snapshot
transaction, then streams their changes from the server's binlog, read as a replica reads
it, into ``<name>.<database>.<table>`` topics in Debezium's envelope; ``replica``
(``JdbcSinkConnector``) unwraps each event with Debezium's ``ExtractNewRecordState``, routes
it to the table of the same name in ``replica_url`` (PostgreSQL by default) and upserts it
by primary key, deleting the row on a delete. ``backfill`` asks ``capture`` for an
incremental snapshot of ``backfill_tables`` through its signal table, which must exist:
``CREATE TABLE shop.debezium_signal (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL,
data VARCHAR(2048))``; the tables are read again while changes keep streaming.
``caught_up`` waits until the replica has consumed what the topics held (the tasks are
those of ``cdc_replication.py``, shared with ``postgres_replication``).

The server needs the binlog in ``ROW`` format with ``binlog_row_image=FULL`` and
``binlog_row_metadata=FULL``; the user ``SELECT``, ``RELOAD``, ``REPLICATION SLAVE``,
``REPLICATION CLIENT``, ``INSERT`` and ``DELETE`` on the signal table (docs/mysql-cdc.md). The
connectors keep running after the run. The connector creates nothing on the server but the
window rows of incremental snapshots in the signal table, which deleting it deletes
(KIP-901); pausing or stopping it keeps its position, so no change is missed while the
server keeps the binlog.
"""

from __future__ import annotations

from airflow.sdk import Param
from cdc_replication import replication_dag  # beside this file

dag = replication_dag(
    dag_id="mariadb_replication",
    description="Replicate MariaDB tables into PostgreSQL through Kafka from the binlog",
    doc_md=__doc__,
    name="mariadb-orders",
    connector_class="io.debezium.connector.mariadb.MariaDbConnector",
    port=3306,
    user="root",
    user_title="Source user (with REPLICATION SLAVE)",
    source={
        "password": Param(
            "",
            type="string",
            title="Source password",
            description="The user's password (empty: none), kept in the capture's config",
        ),
        "server_id": Param(
            5400,
            type="integer",
            title="Server id",
            description="The binlog reader's server id (database.server.id): unique among "
            "the server's replicas",
        ),
    },
    capture={
        "database.password": "{{ params.password }}",
        "database.server.id": "{{ params.server_id }}",
    },
    tables="shop.orders",
    table_form="database.table",
    signal_table="shop.debezium_signal",
    replica_url="postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
)
