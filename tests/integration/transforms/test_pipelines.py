"""Transformations and predicates end to end: connectors created through the REST API on the
runtime (real broker, Spark, SQLite and PostgreSQL), with Kafka Connect configs as they are
written for a Kafka Connect deployment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, inspect, select, table, text

from airflow_provider_connect.runtime import Connect
from tests.connectors import EVENTS, read_events
from tests.databases import postgres_database
from tests.integration.conftest import create
from tests.kafka import new_topic, new_topic_named, produce, read_messages, wait_until

pytestmark = pytest.mark.integration
T = "org.apache.kafka.connect.transforms."
SCHEMALESS = {"value.converter": "JsonConverter", "value.converter.schemas.enable": "false"}


def running(rest: TestClient, name: str) -> bool:
    status = rest.get(f"/connectors/{name}/status").json()
    return status["connector"]["state"] == "RUNNING" and [t["state"] for t in status["tasks"]] == [
        "RUNNING"
    ]


def test_a_source_chain_of_three_transformations_and_a_predicate(
    rest: TestClient, bootstrap: str, tmp_path: Path
) -> None:
    topic = new_topic(bootstrap)
    source = tmp_path / "in.txt"
    source.write_text("".join(f"line {i}\n" for i in range(100)))
    create(
        rest,
        "chained-source",
        {
            "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
            "file": str(source),
            "topic": topic,
            **SCHEMALESS,
            "transforms": "hoist,insert,route",
            "transforms.hoist.type": T + "HoistField$Value",
            "transforms.hoist.field": "line",
            "transforms.insert.type": T + "InsertField$Value",
            "transforms.insert.static.field": "origin",
            "transforms.insert.static.value": "file",
            "transforms.insert.topic.field": "source_topic",
            "transforms.route.type": T + "RegexRouter",
            "transforms.route.regex": "(.*)",
            "transforms.route.replacement": "$1-routed",
            "transforms.route.predicate": "fromSource",
            "predicates": "fromSource",
            "predicates.fromSource.type": T + "predicates.TopicNameMatches",
            "predicates.fromSource.pattern": topic,
        },
    )
    values = [json.loads(m.value()) for m in read_messages(bootstrap, f"{topic}-routed", 100)]
    values.sort(key=lambda v: int(v["line"].split()[1]))  # the new topic may have partitions
    assert values == [
        {"line": f"line {i}", "origin": "file", "source_topic": topic} for i in range(100)
    ]
    assert rest.get("/connectors/chained-source/topics").json()["chained-source"]["topics"] == [
        f"{topic}-routed"
    ]


def test_a_sink_routed_and_trimmed_into_postgresql(rest: TestClient, bootstrap: str) -> None:
    raw = new_topic_named(bootstrap, f"orders_raw_{new_topic(bootstrap)[-8:]}")
    schema = {
        "type": "struct",
        "optional": False,
        "fields": [
            {"field": "id", "type": "int32", "optional": False},
            {"field": "amt", "type": "int64", "optional": False},
            {"field": "secret", "type": "string", "optional": False},
        ],
    }
    produce(
        bootstrap,
        raw,
        [
            json.dumps(
                {"schema": schema, "payload": {"id": i, "amt": i * 100, "secret": "pii"}}
            ).encode()
            for i in range(20)
        ],
    )
    table_name = raw.replace("_raw_", "_")
    with postgres_database() as url:
        create(
            rest,
            "routed-sink",
            {
                "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
                "connection.url": url,
                "topics": raw,
                "auto.create": "true",
                "insert.mode": "insert",
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "transforms": "route,trim",
                "transforms.route.type": T + "RegexRouter",
                "transforms.route.regex": "(.*)_raw_(.*)",
                "transforms.route.replacement": "$1_$2",
                "transforms.trim.type": T + "ReplaceField$Value",
                "transforms.trim.exclude": "secret",
                "transforms.trim.renames": "amt:amount",
            },
        )
        engine = create_engine(url)
        try:
            wait_until(
                lambda: inspect(engine).has_table(table_name) and _count(engine, table_name) == 20,
                90,
                "every row in the routed table",
            )
            columns = {c["name"] for c in inspect(engine).get_columns(table_name)}
            assert columns == {"id", "amount"}
            with engine.connect() as c:
                rows = sorted(
                    c.execute(select(text("id, amount")).select_from(table(table_name))).all()
                )
            assert rows == [(i, i * 100) for i in range(20)]
        finally:
            rest.delete("/connectors/routed-sink")
            engine.dispose()


def _count(engine: Any, name: str) -> int:
    with engine.connect() as c:
        return int(c.execute(text(f'SELECT count(*) FROM "{name}"')).scalar_one())


def test_a_failing_transformation_on_the_source_is_skipped(
    rest: TestClient, connect: Connect, bootstrap: str, tmp_path: Path
) -> None:
    """Skipped, and logged by the executor (tests/unit/runtime/executor/test_errors.py checks the
    log line of a source record)."""
    topic = new_topic(bootstrap)
    source = tmp_path / "in.txt"
    lines = [str(i) if i % 10 != 5 else f"bad {i}" for i in range(50)]
    source.write_text("".join(f"{line}\n" for line in lines))
    create(
        rest,
        "tolerant-source",
        {
            "connector.class": "FileStreamSource",
            "file": str(source),
            "topic": topic,
            **SCHEMALESS,
            "transforms": "number",
            "transforms.number.type": T + "Cast$Value",
            "transforms.number.spec": "int32",
            "errors.tolerance": "all",
            "errors.log.enable": "true",
        },
    )
    values = [json.loads(m.value()) for m in read_messages(bootstrap, topic, 45)]
    assert values == [i for i in range(50) if i % 10 != 5]  # the five bad lines skipped
    wait_until(
        lambda: (
            rest.get("/connectors/tolerant-source/offsets").json()["offsets"]
            == [
                {
                    "partition": {"filename": str(source)},
                    "offset": {"position": source.stat().st_size},
                }
            ]
        ),
        30,
        "the offsets of skipped lines committed too",
    )
    assert running(rest, "tolerant-source")

    def counted() -> dict[str, float] | None:  # the task's counters, as of a heartbeat
        (task,) = connect.store.statuses.task_statuses("tolerant-source")
        metrics = task.metrics or {}
        return metrics if metrics.get("source_record_write_total") == 45 else None

    metrics = wait_until(counted, 30, "the written count")
    assert metrics["source_record_poll_total"] == 50
    assert metrics["total_records_skipped"] == metrics["total_record_errors"] == 5


def test_a_failing_transformation_on_the_sink_goes_to_the_dead_letter_queue(
    rest: TestClient, bootstrap: str, tmp_path: Path
) -> None:
    topic, dlq = new_topic(bootstrap), new_topic(bootstrap)
    values = [json.dumps(str(i) if i % 4 else f"x{i}").encode() for i in range(20)]
    produce(bootstrap, topic, values)
    events = tmp_path / "events.jsonl"
    create(
        rest,
        "tolerant-sink",
        {
            "connector.class": "tests.connectors.RecordingSinkConnector",
            EVENTS: str(events),
            "topics": topic,
            **SCHEMALESS,
            "transforms": "number",
            "transforms.number.type": T + "Cast$Value",
            "transforms.number.spec": "int64",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        },
    )
    good = [i for i in range(20) if i % 4]
    wait_until(
        lambda: (
            [v for e in read_events(events) if e["event"] == "put" for v in e["values"]] == good
        ),
        60,
        "every good record put, once",
    )
    dead = read_messages(bootstrap, dlq, 5)
    assert [m.value() for m in dead] == [values[i] for i in range(0, 20, 4)]
    headers = dict(dead[0].headers())
    assert headers["__connect.errors.stage"] == b"TRANSFORMATION"
    assert (
        headers["__connect.errors.class.name"] == b"org.apache.kafka.connect.transforms.Cast$Value"
    )
    assert running(rest, "tolerant-sink")


def test_unknown_types_and_aliases_are_a_400_naming_the_key(
    rest: TestClient, tmp_path: Path
) -> None:
    base = {"connector.class": "FileStreamSource", "file": str(tmp_path / "x"), "topic": "t"}
    for extra, key in [
        ({"transforms": "t", "transforms.t.type": "com.example.Nope"}, "transforms.t.type"),
        ({"transforms": "t"}, "transforms.t.type"),
        (
            {"transforms": "t", "transforms.t.type": T + "Filter", "transforms.t.predicate": "p"},
            "transforms.t.predicate",
        ),
        ({"predicates": "p", "predicates.p.type": T + "Filter"}, "predicates.p.type"),
    ]:
        response = rest.post("/connectors", json={"name": "bad", "config": {**base, **extra}})
        assert response.status_code == 400 and key in response.json()["message"], response.text
    validated = rest.put(
        "/connector-plugins/FileStreamSource/config/validate",
        json={
            **base,
            "connector.class": "FileStreamSource",
            "transforms": "m",
            "transforms.m.type": T + "MaskField$Value",
        },
    ).json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in validated["configs"]}
    assert errors["transforms.m.fields"] == [
        'Missing required configuration "transforms.m.fields" which has no default value.'
    ]
    assert "transforms.m.replacement" in errors and "transforms.m.predicate" in errors
