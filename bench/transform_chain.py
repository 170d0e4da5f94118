"""What a chain of transformations costs on the source path: generated orders (dicts, ~100
bytes as JSON, with timestamps) into a topic, with and without a chain of ``InsertField``
(the topic and a static field), ``ReplaceField`` (one field dropped, one renamed) and
``TimestampRouter`` (the topic by day), beside hand-written loops doing the same with plain
dicts.

* project: ``bench.generator.GeneratorSourceConnector`` with schemaless ``JsonConverter``,
  at-least-once, offsets committed every 250 ms, records/s between its first and last
  commit before the end (``bench.common.connector_run``), with and without the chain;
* hand-written loops: the same generation, the same dict work (or none), orjson and a
  confluent-kafka producer, timed from the first record to the end of the flush.

The chain's cost is the ratio of the project's throughput with the chain to without it (the
target: at least 0.75); each figure is the median of ``--runs`` runs with min and max.

    python -m bench.transform_chain [--records N] [--runs R] [--json PATH]
"""

from __future__ import annotations

import datetime as dt
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import orjson
from confluent_kafka import Producer

from airflow_provider_connect.store import MetadataStore
from bench.common import (
    broker,
    command_line,
    connector_run,
    interleaved,
    new_topic,
    rate,
    ratio_table,
)
from bench.generator import FIRST_TIMESTAMP, RECORDS, order

T = "org.apache.kafka.connect.transforms."
CHAIN = {
    "transforms": "insert,replace,route",
    "transforms.insert.type": T + "InsertField$Value",
    "transforms.insert.topic.field": "source_topic",
    "transforms.insert.static.field": "origin",
    "transforms.insert.static.value": "bench",
    "transforms.replace.type": T + "ReplaceField$Value",
    "transforms.replace.exclude": "note",
    "transforms.replace.renames": "amount:amt",
    "transforms.route.type": T + "TimestampRouter",
}


def by_hand(value: dict[str, Any], topic: str, timestamp: int) -> tuple[str, dict[str, Any]]:
    """The chain's work with plain dicts: the same fields, the same topic."""
    value = {**value, "source_topic": topic, "origin": "bench"}
    value = {("amt" if k == "amount" else k): v for k, v in value.items() if k != "note"}
    day = dt.datetime.fromtimestamp(timestamp / 1000, dt.timezone.utc).strftime("%Y%m%d")
    return f"{topic}-{day}", value


def hand_loop(bootstrap: str, records: int, transform: bool) -> float:
    topic = new_topic(bootstrap)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    started = time.monotonic()
    for i in range(records):
        value, target, timestamp = order(i), topic, FIRST_TIMESTAMP + i
        if transform:
            target, value = by_hand(value, topic, timestamp)
        while True:
            try:
                producer.produce(target, orjson.dumps(value), timestamp=timestamp)
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
    assert producer.flush(120) == 0
    return records / (time.monotonic() - started)


def project(bootstrap: str, folder: Path, records: int, chain: bool) -> float:
    topic = new_topic(bootstrap)
    config = {
        "connector.class": "bench.generator.GeneratorSourceConnector",
        RECORDS: str(records),
        "topic": topic,
        "value.converter": "JsonConverter",
        "value.converter.schemas.enable": "false",
        **(CHAIN if chain else {}),
    }
    worker = {"bootstrap.servers": bootstrap, "offset.flush.interval.ms": "250"}

    def progress(store: MetadataStore, name: str) -> float:
        offsets = store.offsets.source_offsets(name)
        return sum(o["next"] for _, o in offsets if o) / records

    return connector_run(worker, folder, config, records, progress).records_per_s


def measure(records: int, runs: int, bootstrap: str | None = None) -> dict[str, Any]:
    with broker(bootstrap) as servers, tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        figures = interleaved(
            {
                "project, no transformations": partial(project, servers, folder, records, False),
                "project, the chain": partial(project, servers, folder, records, True),
                "hand-written loop, no transformations": partial(
                    hand_loop, servers, records, False
                ),
                "hand-written loop, the same work on dicts": partial(
                    hand_loop, servers, records, True
                ),
            },
            runs,
        )
        return {"records": records, "runs": runs, "records_per_s": figures}


def table(results: dict[str, Any]) -> str:
    figures = results["records_per_s"]
    plain, chained = figures["project, no transformations"], figures["project, the chain"]
    loop_plain = figures["hand-written loop, no transformations"]
    loop_work = figures["hand-written loop, the same work on dicts"]
    rows = [
        [
            name,
            rate(figure),
            f"{figure['median'] / (plain if name.startswith('project') else loop_plain)['median']:.2f}x",
        ]
        for name, figure in figures.items()
    ]
    rows.append(
        [
            "project with the chain vs the loop with the same work",
            "",
            f"{chained['median'] / loop_work['median']:.2f}x",
        ]
    )
    return ratio_table(
        f"Transformation chain on the source path: {results['records']:,} generated orders, "
        f"median of {results['runs']} runs (min to max); the ratio is each to its own "
        "variant without transformations",
        ["variant", "records/s", "vs without"],
        rows,
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    return command_line(argv, __doc__, ("--records", 1_000_000), measure, table)


if __name__ == "__main__":
    main()
