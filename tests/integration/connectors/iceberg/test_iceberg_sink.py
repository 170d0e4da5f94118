"""The Iceberg sink end to end through the real runtime (broker, Spark, metadata database)
into pyiceberg's SQL catalog, on SQLite with local files and on PostgreSQL with S3: rows
read back by scanning the tables, the Kafka offsets in the snapshot summary, each record
once across a kill -9 of the runtime, upserts and deletes by id, and a schema that grows
mid-stream."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.runtime import Connect
from tests.integration.connectors.iceberg.conftest import IcebergCatalog, sqlite_local
from tests.records import VALUE, order, send
from tests_common.broker import free_port
from tests_common.kafka import new_topic, wait_until
from tests_common.processes import kill_tree, rest_get, start_runtime, write_properties

pytestmark = pytest.mark.integration

CLASS = "org.apache.iceberg.connect.IcebergSinkConnector"


def sink(catalog: IcebergCatalog, topic: str, table: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": CLASS,
        "topics": topic,
        "iceberg.tables": table,
        "iceberg.tables.auto-create-enabled": "true",
        "iceberg.control.commit.interval-ms": "1000",
        **catalog.config(),
        **extra,
    }


def ids(catalog: IcebergCatalog, table: str) -> list[int]:
    return sorted(r["id"] for r in catalog.rows(table))


def summary(catalog: IcebergCatalog, table: str) -> dict[str, str]:
    snapshot = catalog.catalog().load_table(table).current_snapshot()
    assert snapshot is not None and snapshot.summary is not None
    return dict(snapshot.summary.additional_properties)


@pytest.mark.parametrize("where", ["sqlite-local", "postgres-s3"])
def test_records_land_once_with_their_offsets_in_the_snapshot(
    connect: Connect, bootstrap: str, request: pytest.FixtureRequest, where: str
) -> None:
    catalog: IcebergCatalog = request.getfixturevalue(
        "local_catalog" if where == "sqlite-local" else "postgres_s3_catalog"
    )
    topic = new_topic(bootstrap, partitions=2)
    send(bootstrap, topic, [order(i) for i in range(40)])
    name = f"iceberg-{topic}"
    connect.add_connector(
        name,
        sink(catalog, topic, "db.orders", **{"iceberg.tables.default-partition-by": "day(at)"}),
    )
    wait_until(lambda: len(catalog.rows("db.orders")) >= 40, 90, "40 rows in the table")
    rows = catalog.rows("db.orders")
    assert sorted(r["id"] for r in rows) == list(range(40))
    assert {r["name"] for r in rows} == {f"order {i}" for i in range(40)}
    props = summary(catalog, "db.orders")
    assert props["kafka.connect.commit-id"]
    offsets = json.loads(props[f"kafka.connect.topic-offsets.connect-{name}"])
    assert sum(offsets[topic].values()) == 40  # next offsets of both partitions
    apache = json.loads(props[f"kafka.connect.offsets.control-iceberg.connect-{name}"])
    assert apache == offsets[topic]
    table = catalog.catalog().load_table("db.orders")
    assert [str(f.transform) for f in table.spec().fields] == ["day"]


def test_upserts_and_deletes_by_id_make_the_table_equal_the_stream(
    connect: Connect, bootstrap: str, local_catalog: IcebergCatalog
) -> None:
    """Keyed rows, new versions and tombstones (ExtractNewRecordState's shape): the table
    holds each key's last version, deleted keys none."""
    topic = new_topic(bootstrap)
    values: list[Any] = [order(i) for i in range(20)]
    values += [order(i, name=f"changed {i}") for i in range(0, 20, 2)]
    values += [None for _ in range(0, 20, 5)]
    keys = list(range(20)) + list(range(0, 20, 2)) + list(range(0, 20, 5))
    send(bootstrap, topic, values, keys)
    connect.add_connector(
        f"iceberg-{topic}",
        sink(
            local_catalog,
            topic,
            "db.replica",
            **{
                "iceberg.tables.default-id-columns": "id",
                "iceberg.tables.upsert-mode-enabled": "true",
            },
        ),
    )
    expected = {i: (f"changed {i}" if i % 2 == 0 else f"order {i}") for i in range(20) if i % 5}
    wait_until(
        lambda: {r["id"]: r["name"] for r in local_catalog.rows("db.replica")} == expected,
        90,
        "the replica equal to the stream's last state",
    )


def test_a_new_field_mid_stream_becomes_a_column(
    connect: Connect, bootstrap: str, local_catalog: IcebergCatalog
) -> None:
    topic = new_topic(bootstrap)
    send(bootstrap, topic, [order(i) for i in range(5)])
    connect.add_connector(
        f"iceberg-{topic}",
        sink(
            local_catalog, topic, "db.evolving", **{"iceberg.tables.evolve-schema-enabled": "true"}
        ),
    )
    wait_until(lambda: len(local_catalog.rows("db.evolving")) == 5, 90, "the first 5 rows")
    wider = SchemaBuilder.struct().name(VALUE.name)
    for f in VALUE.fields:
        wider.field(f.name, f.schema)
    wider_schema = wider.field("note", Schema.OPTIONAL_STRING_SCHEMA).build()
    later = []
    for i in range(5, 8):
        value = Struct(wider_schema).put("note", f"note {i}")
        for f in VALUE.fields:
            value.put(f.name, order(i).get(f.name))
        later.append(value)
    send(bootstrap, topic, later)
    wait_until(lambda: len(local_catalog.rows("db.evolving")) == 8, 90, "8 rows")
    notes = {r["id"]: r.get("note") for r in local_catalog.rows("db.evolving")}
    assert notes == {**{i: None for i in range(5)}, **{i: f"note {i}" for i in range(5, 8)}}


def test_kill_9_of_the_runtime_loses_and_doubles_nothing(bootstrap: str, tmp_path: Path) -> None:
    (tmp_path / "warehouse").mkdir()
    catalog = sqlite_local(tmp_path)
    topic, total = new_topic(bootstrap, partitions=2), 3000
    port = free_port()
    worker = write_properties(
        tmp_path / "worker.properties",
        {
            "bootstrap.servers": bootstrap,
            "offset.storage.file.filename": str(tmp_path / "offsets.db"),
            "listeners": f"http://127.0.0.1:{port}",
            "offset.flush.interval.ms": "300",
            "task.heartbeat.interval.ms": "200",
            "consumer.session.timeout.ms": "6000",
            "spark.master": "local[2]",
        },
    )
    config = write_properties(
        tmp_path / "sink.properties",
        {"name": f"iceberg-{topic}", "tasks.max": "2", **sink(catalog, topic, "db.killed")},
    )
    args, log = ["standalone", str(worker), str(config)], tmp_path / "runtime.log"
    done = threading.Event()

    def produce() -> None:
        for first in range(0, total, 100):
            send(bootstrap, topic, [order(i) for i in range(first, first + 100)])
            if done.wait(0.1):
                return

    feeding = threading.Thread(target=produce)
    runtime = start_runtime(args, log)
    try:
        feeding.start()
        wait_until(lambda: len(catalog.rows("db.killed")) >= 300, 120, "rows before the kill")
        kill_tree(runtime)
        runtime = start_runtime(args, log)
        wait_until(lambda: rest_get(f"http://127.0.0.1:{port}/connectors"), 120, "REST is back")
        wait_until(
            lambda: len(catalog.rows("db.killed")) >= total, 180, "every record in the table"
        )
    finally:
        done.set()
        feeding.join()
        kill_tree(runtime)
    assert ids(catalog, "db.killed") == list(range(total))  # each exactly once
