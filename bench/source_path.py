"""Source path: JSON lines from four files into a topic, the project beside its peers.

The same input each time, in one run, on one broker: ``--lines`` JSON lines of about 100
bytes split over four files, written to a new topic of four partitions as Kafka Connect's
JsonConverter writes a string (with ``schemas.enable`` the ``{"schema":…,"payload":…}``
envelope, without it the JSON string).

* project: ``FileStreamSource`` (``files``, ``tasks.max`` 1 and 4) with ``JsonConverter``,
  at-least-once, offsets committed every 250 ms (a run lasts a few seconds: with a commit a
  second, 1,000,000 lines measured 484k records/s where 4,000,000 measured 680k):
  records/s between its first and its last commit before the end (see
  ``bench.common.connector_run``);
* hand-written loop: reads the files, builds the same bytes with orjson, produces with
  confluent-kafka and flushes, timed from the first read to the end of the flush;
* Quix Streams (``bench/quix_peer.py``, in a virtualenv of its own, as its pins conflict
  with Airflow's): a source application reading the same files, timed the same way.

Each figure is the median of ``--runs`` runs with min and max; the variants run in turn,
one run each per round.

    python -m bench.source_path [--lines N] [--runs R] [--json PATH]
"""

from __future__ import annotations

import tempfile
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import orjson
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from bench.common import (
    against_peers,
    broker,
    command_line,
    connector_run,
    files_progress,
    interleaved,
    ratio_table,
    write_json_lines,
)
from bench.quix import quix_records_per_s

FILES = 4
STRING_SCHEMA = b'{"type":"string","optional":false}'


def envelope(line: str, schemas: bool) -> bytes:
    """What JsonConverter writes for a string."""
    payload = orjson.dumps(line)
    return b'{"schema":' + STRING_SCHEMA + b',"payload":' + payload + b"}" if schemas else payload


def new_topic(bootstrap: str, partitions: int = FILES) -> str:
    name = f"bench-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)
    return name


def hand_loop(bootstrap: str, paths: list[Path], schemas: bool, lines: int) -> float:
    """The peer: records/s of a plain read → orjson → produce loop."""
    topic = new_topic(bootstrap)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    started = time.monotonic()
    for path in paths:
        with path.open("rb") as f:
            for line in f:
                value = envelope(line[:-1].decode(), schemas)
                while True:
                    try:
                        producer.produce(topic, value)
                        break
                    except BufferError:
                        producer.poll(0.1)
                producer.poll(0)
    assert producer.flush(120) == 0
    return lines / (time.monotonic() - started)


def project(
    bootstrap: str, folder: Path, paths: list[Path], schemas: bool, tasks: int, lines: int
) -> float:
    config = {
        "connector.class": "FileStreamSource",
        "files": ",".join(map(str, paths)),
        "topic": new_topic(bootstrap),
        "tasks.max": str(tasks),
        "value.converter": "JsonConverter",
        "value.converter.schemas.enable": str(schemas).lower(),
    }
    worker = {"bootstrap.servers": bootstrap, "offset.flush.interval.ms": "250"}
    return connector_run(worker, folder, config, lines, files_progress(paths)).records_per_s


def quix(bootstrap: str, paths: list[Path], schemas: bool) -> float:
    """The Quix Streams peer's records/s (0.0 when it is not installed)."""
    return quix_records_per_s(
        "source", bootstrap, new_topic(bootstrap), str(schemas).lower(), *paths
    )


def measure(lines: int, runs: int, bootstrap: str | None = None) -> dict[str, Any]:
    with broker(bootstrap) as servers, tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        paths = [folder / f"input-{i}.jsonl" for i in range(FILES)]
        for i, path in enumerate(paths):
            write_json_lines(path, i * (lines // FILES), lines // FILES)
        total = FILES * (lines // FILES)
        figures: dict[str, Any] = {}
        for schemas in (True, False):
            label = "schemas" if schemas else "no schemas"
            variants: dict[str, Callable[[], float]] = {
                f"project, {tasks} task(s), {label}": partial(
                    project, servers, folder, paths, schemas, tasks, total
                )
                for tasks in (1, 4)
            }
            variants[f"hand-written loop, {label}"] = partial(
                hand_loop, servers, paths, schemas, total
            )
            variants[f"Quix Streams, {label}"] = partial(quix, servers, paths, schemas)
            figures |= interleaved(variants, runs)
        return {"lines": total, "runs": runs, "records_per_s": figures}


def table(results: dict[str, Any]) -> str:
    figures = results["records_per_s"]
    rows = []
    for label in ("schemas", "no schemas"):
        quix = figures.get(f"Quix Streams, {label}", {}).get("median")
        loop = figures[f"hand-written loop, {label}"]["median"]
        mine = {n: f for n, f in figures.items() if n.endswith(f", {label}")}
        rows += against_peers(mine, loop, quix)
    return ratio_table(
        f"Source path: {results['lines']:,} JSON lines (~100 B) from 4 files, median of "
        f"{results['runs']} runs (min to max)",
        ["variant", "records/s", "vs hand-written loop", "vs Quix Streams"],
        rows,
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    return command_line(argv, __doc__, ("--lines", 1_000_000), measure, table)


if __name__ == "__main__":
    main()
