"""Sink path: records of a topic into a file, the project beside its peers.

The same topic each time, in one run: ``--records`` records in four partitions, each value
Kafka Connect's JSON envelope of a ~100-byte string (``{"schema":…,"payload":…}``).

* project: ``FileStreamSink`` with ``JsonConverter``, ``tasks.max`` 1 and 2 (the machine's
  cores, here), offsets committed every 250 ms (after an fsync; a run lasts a few
  seconds, and a rate between two of a handful of commits varied by a third): records/s
  between its first and its last commit before the end;
* hand-written loop: a confluent-kafka consumer (``fetch.queue.backoff.ms=0``) that decodes
  each envelope with orjson and appends the payloads to a file, fsynced at the end, timed
  from its first record to the end of the fsync;
* Quix Streams (``bench/quix_peer.py``): a dataframe application with ``LocalFileSink``,
  timed from its first record to its last.

Each figure is the median of ``--runs`` runs with min and max; the variants run in turn,
one run each per round.

    python -m bench.sink_path [--records N] [--runs R] [--json PATH]
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import orjson
from confluent_kafka import Consumer, Producer

from bench.common import (
    against_peers,
    broker,
    command_line,
    connector_run,
    interleaved,
    ratio_table,
)
from bench.quix import quix_records_per_s
from bench.source_path import envelope, new_topic

TASKS = (1, 2)


def string_envelope(i: int) -> bytes:
    """The ``i``-th record: JsonConverter's envelope of a ~100-byte string."""
    line = f'{{"id":{i},"customer":"customer-{i % 997:04d}","amount":{i / 4:.2f},"note":"x"}}'
    return envelope(line, True)


def fill(
    bootstrap: str,
    records: int,
    value: Callable[[int], bytes] = string_envelope,
    partitions: int = 4,
) -> tuple[str, dict[int, int]]:
    """A new topic of ``partitions`` partitions with ``value(i)`` for ``i`` below
    ``records``, spread in turn; returns it with each partition's end (from the delivery
    reports: the test broker's end offsets are too low)."""
    topic = new_topic(bootstrap, partitions)
    ends: dict[int, int] = {}

    def delivered(error: Any, message: Any) -> None:
        assert error is None, error
        ends[message.partition()] = max(ends.get(message.partition(), 0), message.offset() + 1)

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "on_delivery": delivered})
    for i in range(records):
        while True:
            try:
                producer.produce(topic, value(i), partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.1)
    assert producer.flush(120) == 0
    return topic, ends


def project(
    bootstrap: str, folder: Path, topic: str, ends: dict[int, int], records: int, tasks: int
) -> float:
    config = {
        "connector.class": "FileStreamSink",
        "file": str(folder / f"project-{uuid.uuid4().hex[:6]}.txt"),
        "topics": topic,
        "tasks.max": str(tasks),
        "value.converter": "JsonConverter",
    }
    return connector_run(
        sink_worker(bootstrap), folder, config, records, committed(ends)
    ).records_per_s


def committed(ends: dict[int, int]) -> Callable[[Any, str], float]:
    """The share of the partitions' records (up to ``ends``) a sink has committed."""
    total = sum(ends.values())

    def progress(store: Any, name: str) -> float:
        return sum(p.committed_offset or 0 for p in store.offsets.sink_progress(name)) / total

    return progress


def sink_worker(bootstrap: str) -> dict[str, str]:
    """The runtime's config: offsets committed every 250 ms, a short group join."""
    return {
        "bootstrap.servers": bootstrap,
        "offset.flush.interval.ms": "250",
        "consumer.session.timeout.ms": "6000",
    }


def peer_consumer(bootstrap: str, topic: str) -> Consumer:
    """The hand-written loops' consumer, subscribed to ``topic`` in a group of its own."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"peer-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
            "fetch.queue.backoff.ms": 0,
        }
    )
    consumer.subscribe([topic])
    return consumer


def hand_loop(bootstrap: str, folder: Path, topic: str, records: int) -> float:
    consumer = peer_consumer(bootstrap, topic)
    written, first = 0, None
    with (folder / f"peer-{uuid.uuid4().hex[:6]}.txt").open("w") as out:
        while written < records:
            batch = [m for m in consumer.consume(10_000, 0.5) if m.error() is None]
            if not batch:
                continue
            first = first or time.monotonic()
            out.write("".join(f"{orjson.loads(m.value())['payload']}\n" for m in batch))
            written += len(batch)
        out.flush()
        os.fsync(out.fileno())
    consumer.close()
    return records / (time.monotonic() - (first or time.monotonic()))


def measure(records: int, runs: int, bootstrap: str | None = None) -> dict[str, Any]:
    with broker(bootstrap) as servers, tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        topic, ends = fill(servers, records)
        variants: dict[str, Callable[[], float]] = {
            f"project (FileStreamSink), {tasks} task(s)": partial(
                project, servers, folder, topic, ends, records, tasks
            )
            for tasks in TASKS
        }
        variants["hand-written loop"] = partial(hand_loop, servers, folder, topic, records)
        variants["Quix Streams (LocalFileSink)"] = lambda: quix_records_per_s(
            "sink",
            servers,
            topic,
            records,
            folder / f"quix_{uuid.uuid4().hex[:6]}",  # Quix allows no hyphen
        )
        figures = interleaved(variants, runs)
        return {"records": records, "runs": runs, "records_per_s": figures}


def table(results: dict[str, Any]) -> str:
    figures = results["records_per_s"]
    quix = figures.get("Quix Streams (LocalFileSink)", {}).get("median")
    return ratio_table(
        f"Sink path: {results['records']:,} JSON records (topic → file), median of "
        f"{results['runs']} runs (min to max)",
        ["variant", "records/s", "vs hand-written loop", "vs Quix Streams"],
        against_peers(figures, figures["hand-written loop"]["median"], quix),
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    return command_line(argv, __doc__, ("--records", 1_000_000), measure, table)


if __name__ == "__main__":
    main()
