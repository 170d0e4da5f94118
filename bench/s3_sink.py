"""S3 sink: records of a topic into objects of an S3 bucket, in JSON and in Parquet, the
project beside its peers.

The same topic each time, in one run: ``--records`` records in four partitions, each value
Kafka Connect's JSON envelope of an order struct (five fields: long, two strings, double,
string; ~100 bytes of payload). The bucket is on moto's server (``tests_common.s3``, on
loopback, in memory), a new bucket per run; every variant writes objects of one
partition's records, ten per partition (the sink's ``flush.size``: a fortieth of
``--records``).

* project: ``S3SinkConnector`` (``JsonFormat`` or ``ParquetFormat``, snappy) with
  ``JsonConverter``, one task, offsets committed every
  250 ms: records/s between its first and its last commit before the end
  (``bench.common.connector_run``; an offset is committed only once the objects that hold
  its records are complete);
* hand-written loop: a confluent-kafka consumer (``fetch.queue.backoff.ms=0``) that decodes
  each envelope with orjson and, per partition, every ``flush.size`` records, writes the
  payloads as JSON lines (orjson) or as a Parquet table (pyarrow, snappy) with one
  ``PutObject`` of a boto3 client: timed from its first record to its last object written;
* Quix Streams (``bench/quix_peer.py``): a dataframe application taking the envelope's
  payload into ``S3FileSink`` (``json`` or ``parquet``), committing (one object per
  partition) every four times ``flush.size`` records: timed from its first record to its last.

A figure: the median of ``--runs`` runs, with min and max, the six variants taking turns
(one run each a round).

    python -m bench.s3_sink [--records N] [--runs R] [--json PATH]
"""

from __future__ import annotations

import io
import tempfile
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from bench.common import (
    against_peers,
    broker,
    command_line,
    connector_run,
    interleaved,
    ratio_table,
    struct_envelope,
    struct_schema,
)
from bench.quix import quix_records_per_s
from bench.sink_path import committed, fill, peer_consumer, sink_worker
from tests_common.s3 import S3Endpoint

PARTITIONS = 4
OBJECTS = 10
"""Objects per partition in a run."""
SCHEMA = struct_schema(
    "order",
    {
        "id": "int64",
        "customer": "string",
        "amount": "double",
        "currency": "string",
        "note": "string",
    },
)
ARROW = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("customer", pa.string(), nullable=False),
        pa.field("amount", pa.float64(), nullable=False),
        pa.field("currency", pa.string(), nullable=False),
        pa.field("note", pa.string(), nullable=False),
    ]
)
"""The Parquet columns the sink maps the order struct to (parquet-avro's mapping)."""
FORMATS = {
    "JSON": ("io.confluent.connect.s3.format.json.JsonFormat", ".json", "json"),
    "Parquet": (
        "io.confluent.connect.s3.format.parquet.ParquetFormat",
        ".snappy.parquet",
        "parquet",
    ),
}
"""Per format: the sink's ``format.class``, Confluent's extension, Quix Streams' name."""


def order(i: int) -> bytes:
    """The ``i``-th record: JsonConverter's envelope of an order struct."""
    payload = (
        f'{{"id":{i},"customer":"customer-{i % 997:04d}","amount":{i / 4:.2f},'
        f'"currency":"EUR","note":"order {i:09d}"}}'
    )
    return struct_envelope(SCHEMA, payload)


def project(
    bootstrap: str,
    s3: S3Endpoint,
    folder: Path,
    topic: str,
    ends: dict[int, int],
    flush_size: int,
    form: str,
) -> float:
    config = {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "topics": topic,
        "tasks.max": "1",
        "value.converter": "JsonConverter",
        "s3.bucket.name": s3.new_bucket(),
        "s3.region": s3.region,
        "store.url": s3.url,
        "aws.access.key.id": s3.access_key,
        "aws.secret.access.key": s3.secret_key,
        "format.class": FORMATS[form][0],
        "flush.size": str(flush_size),
    }
    records = sum(ends.values())
    return connector_run(
        sink_worker(bootstrap), folder, config, records, committed(ends)
    ).records_per_s


def hand_loop(
    bootstrap: str, s3: S3Endpoint, topic: str, records: int, flush_size: int, form: str
) -> float:
    """Per partition, ``flush_size`` payloads into one object, named as the sink names it."""
    bucket, client = s3.new_bucket(), s3.client()
    extension = FORMATS[form][1]
    encode = _json_lines if form == "JSON" else _parquet
    consumer = peer_consumer(bootstrap, topic)
    pending: dict[int, list[Any]] = {}
    starts: dict[int, int] = {}
    written, first = 0, None
    while written < records:
        batch = [m for m in consumer.consume(10_000, 0.5) if m.error() is None]
        if not batch:
            continue
        first = first or time.monotonic()
        for message in batch:
            partition = message.partition()
            rows = pending.setdefault(partition, [])
            if not rows:
                starts[partition] = message.offset()
            rows.append(orjson.loads(message.value())["payload"])
            if len(rows) == flush_size:
                name = f"{topic}+{partition}+{starts[partition]:010d}{extension}"
                key = f"topics/{topic}/partition={partition}/{name}"
                client.put_object(Bucket=bucket, Key=key, Body=encode(rows))  # type: ignore[attr-defined]
                written += len(rows)
                rows.clear()
    done = time.monotonic()
    consumer.close()
    return written / (done - (first or done))


def _json_lines(rows: list[Any]) -> bytes:
    return b"".join(orjson.dumps(row) + b"\n" for row in rows)


def _parquet(rows: list[Any]) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=ARROW), out, compression="snappy")
    return out.getvalue()


def quix(
    bootstrap: str,
    s3: S3Endpoint,
    folder: Path,
    topic: str,
    records: int,
    flush_size: int,
    form: str,
) -> float:
    return quix_records_per_s(
        "s3",
        bootstrap,
        topic,
        records,
        folder / f"quix_{uuid.uuid4().hex[:6]}",  # Quix allows no hyphen
        s3.url,
        s3.region,
        s3.access_key,
        s3.secret_key,
        s3.new_bucket(),
        FORMATS[form][2],
        flush_size * PARTITIONS,
    )


def measure(records: int, runs: int, bootstrap: str | None = None) -> dict[str, Any]:
    flush_size = records // (PARTITIONS * OBJECTS)
    records = flush_size * PARTITIONS * OBJECTS  # whole objects only: every loop ends
    with (
        broker(bootstrap) as servers,
        S3Endpoint() as s3,
        tempfile.TemporaryDirectory() as name,
    ):
        folder = Path(name)
        topic, ends = fill(servers, records, order)
        variants: dict[str, Callable[[], float]] = {}
        for form in FORMATS:
            variants[f"{form}: project (S3SinkConnector), 1 task"] = partial(
                project, servers, s3, folder, topic, ends, flush_size, form
            )
            variants[f"{form}: hand-written loop"] = partial(
                hand_loop, servers, s3, topic, records, flush_size, form
            )
            variants[f"{form}: Quix Streams (S3FileSink)"] = partial(
                quix, servers, s3, folder, topic, records, flush_size, form
            )
        figures = interleaved(variants, runs)
    return {"records": records, "flush_size": flush_size, "runs": runs, "records_per_s": figures}


def table(results: dict[str, Any]) -> str:
    figures = results["records_per_s"]
    rows = []
    for form in FORMATS:
        mine = {k: v for k, v in figures.items() if k.startswith(f"{form}: ")}
        loop = mine[f"{form}: hand-written loop"]["median"]
        quix_figure = mine.get(f"{form}: Quix Streams (S3FileSink)", {}).get("median")
        rows += against_peers(mine, loop, quix_figure)
    return ratio_table(
        f"S3 sink: {results['records']:,} records (topic → S3 on moto's server, objects of "
        f"{results['flush_size']:,} records), median of {results['runs']} runs (min to max)",
        ["variant", "records/s", "vs hand-written loop", "vs Quix Streams"],
        rows,
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    return command_line(argv, __doc__, ("--records", 400_000), measure, table)


if __name__ == "__main__":
    main()
