"""The S3 sink end to end through the real runtime (broker, Spark) against a real S3 REST
endpoint (moto's server, or S3_ENDPOINT_URL): every format read back and compared, the
default partitioner's names, rotation by size, each record exactly once across a kill -9 of
the runtime, and a missing bucket or refused credentials failing the connector with a clear
reason (the endpoint's faults: test_s3_faults)."""

from __future__ import annotations

import decimal
import io
import json
import threading
from pathlib import Path
from typing import Any

import fastavro
import pyarrow.parquet as pq
import pytest

from airflow_provider_connect.runtime import Connect
from tests.integration.connectors.s3.conftest import sink_config
from tests.records import AT, order, send
from tests_common.broker import free_port
from tests_common.kafka import new_topic, wait_until
from tests_common.processes import kill_tree, rest_get, start_runtime, write_properties
from tests_common.s3 import S3Endpoint

pytestmark = pytest.mark.integration

FORMATS = {
    "json": ("JsonFormat", ".json"),
    "avro": ("io.confluent.connect.s3.format.avro.AvroFormat", ".avro"),
    "parquet": ("io.confluent.connect.s3.format.parquet.ParquetFormat", ".snappy.parquet"),
}


def config(s3: S3Endpoint, bucket: str, topic: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "topics": topic,
        **sink_config(s3, bucket, **extra),
    }


def rows(kind: str, data: bytes) -> list[dict[str, Any]]:
    if kind == "json":
        return [json.loads(line) for line in data.splitlines()]
    if kind == "avro":
        return list(fastavro.reader(io.BytesIO(data)))  # type: ignore[arg-type]
    return pq.read_table(io.BytesIO(data)).to_pylist()


def ids_in(s3: S3Endpoint, bucket: str, kind: str = "json") -> list[int]:
    return [r["id"] for data in s3.objects(bucket).values() for r in rows(kind, data)]


def task_state(connect: Connect, name: str) -> str | None:
    tasks = connect.status(name).get("tasks") or []
    return tasks[0]["state"] if tasks else None


@pytest.mark.parametrize("kind", list(FORMATS))
def test_every_format_read_back_with_default_names(
    connect: Connect, bootstrap: str, s3: S3Endpoint, bucket: str, kind: str
) -> None:
    topic = new_topic(bootstrap)
    send(bootstrap, topic, [order(i) for i in range(10)])
    format_class, ext = FORMATS[kind]
    connect.add_connector(
        f"s3-{kind}", config(s3, bucket, topic, **{"format.class": format_class, "flush.size": "4"})
    )
    expected_keys = [f"topics/{topic}/partition=0/{topic}+0+{o:010d}{ext}" for o in (0, 4)]
    wait_until(lambda: sorted(s3.objects(bucket)) == expected_keys, 60, "two objects of 4 records")
    objects = s3.objects(bucket)
    got = [r for k in expected_keys for r in rows(kind, objects[k])]  # records 8, 9 stay open
    amount = [None if i % 5 == 0 else decimal.Decimal(i) / 4 for i in range(8)]
    if kind == "json":  # JsonConverter without envelope: decimals base64, timestamps millis
        assert [(r["id"], r["name"]) for r in got] == [(i, f"order {i}") for i in range(8)]
        assert {r["at"] for r in got} == {int(AT.timestamp() * 1000)}
        assert [r["amount"] is None for r in got] == [a is None for a in amount]
    else:
        assert got == [
            {"id": i, "name": f"order {i}", "amount": amount[i], "at": AT} for i in range(8)
        ]
    if kind == "parquet":
        schema = pq.read_schema(io.BytesIO(objects[expected_keys[0]]))
        assert str(schema.field("at").type) == "timestamp[ms, tz=UTC]"
        assert schema.field("id").nullable is False and schema.field("amount").nullable


def test_kill_9_of_the_runtime_loses_and_doubles_nothing(
    bootstrap: str, s3: S3Endpoint, bucket: str, tmp_path: Path
) -> None:
    topic, total, flush = new_topic(bootstrap), 2000, 100  # total: a multiple of flush
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
    sink = write_properties(
        tmp_path / "sink.properties",
        {"name": f"s3-{topic}", **config(s3, bucket, topic, **{"flush.size": str(flush)})},
    )
    args, log = ["standalone", str(worker), str(sink)], tmp_path / "runtime.log"
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
        wait_until(lambda: len(s3.objects(bucket)) >= 3, 120, "a few objects before the kill")
        kill_tree(runtime)
        runtime = start_runtime(args, log)
        wait_until(lambda: rest_get(f"http://127.0.0.1:{port}/connectors"), 120, "REST is back")
        wait_until(lambda: len(ids_in(s3, bucket)) >= total, 180, "every record in objects")
    finally:
        done.set()
        feeding.join()
        kill_tree(runtime)
    ids = sorted(ids_in(s3, bucket))
    assert ids == list(range(total))  # each exactly once across the objects
    assert all(k.endswith(".json") and "/partition=" in k for k in s3.objects(bucket))


def test_a_missing_bucket_fails_the_connector(
    connect: Connect, bootstrap: str, s3: S3Endpoint
) -> None:
    connect.add_connector("s3-missing", config(s3, "no-such-bucket", new_topic(bootstrap)))
    wait_until(
        lambda: connect.status("s3-missing")["connector"]["state"] == "FAILED",
        60,
        "connector FAILED",
    )
    assert (
        "Non-existent S3 bucket: no-such-bucket"
        in connect.status("s3-missing")["connector"]["trace"]
    )


def test_refused_credentials_fail_the_connector(connect: Connect, bootstrap: str) -> None:
    with S3Endpoint(check_credentials=True) as s3:
        bad = config(
            s3, s3.new_bucket(), new_topic(bootstrap), **{"aws.secret.access.key": "not-the-secret"}
        )
        connect.add_connector("s3-refused", bad)
        wait_until(
            lambda: connect.status("s3-refused")["connector"]["state"] == "FAILED",
            60,
            "connector FAILED",
        )
        trace = connect.status("s3-refused")["connector"]["trace"]
        assert "credentials were refused" in trace and "not-the-secret" not in trace
