"""The TopicPartitionWriter's runs (records joining an open file as they are, written a run at
a time) against a real S3 REST endpoint: the same objects, contents and offsets as one record
at a time, and a record the format refuses in the middle of a run reported alone."""

from __future__ import annotations

import io
from typing import Any

import fastavro
import pyarrow.parquet as pq
import pytest

from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connect.sink import SimpleSinkTaskContext, SinkRecord
from airflow_provider_connect.connectors.s3.writer import TopicPartitionWriter
from tests.integration.connectors.s3.test_writer import V2, name, put, record, writer
from tests_common.s3 import S3Endpoint

pytestmark = pytest.mark.integration


class Reports:
    """An errant record reporter that keeps what it was given."""

    def __init__(self) -> None:
        self.reported: list[tuple[SinkRecord, Exception]] = []

    def report(self, record: SinkRecord, error: Exception) -> Any:
        self.reported.append((record, error))


def mixed() -> list[SinkRecord]:
    """25 records whose schema changes twice (each change starts new files)."""
    return [
        *(record(i) for i in range(12)),
        *(record(i, V2, amount=i / 2) for i in range(12, 17)),
        *(record(i) for i in range(17, 25)),
    ]


EXTENSIONS = {"JsonFormat": ".json", "AvroFormat": ".avro", "ParquetFormat": ".snappy.parquet"}


def read_back(objects: dict[str, bytes]) -> dict[str, Any]:
    """Each object's records as read back (an Avro file's sync marker is random)."""
    read: dict[str, Any] = {}
    for key, data in objects.items():
        if key.endswith(".avro"):
            read[key] = list(fastavro.reader(io.BytesIO(data)))
        elif key.endswith(".parquet"):
            read[key] = pq.read_table(io.BytesIO(data)).to_pylist()
        else:
            read[key] = data
    return read


@pytest.mark.parametrize("form", list(EXTENSIONS))
def test_runs_write_what_one_record_at_a_time_writes(s3: S3Endpoint, form: str) -> None:
    written = {}
    for runs in (True, False):
        target = s3.new_bucket()
        w = writer(s3, target, **{"flush.size": "5", "format.class": form})
        assert w.runs  # the default partitioner, no time rotation, the value alone
        w.runs = runs
        records = mixed()
        put(w, *records[:9])  # two puts: a run may start in a file opened by the one before
        put(w, *records[9:])
        written[runs] = (read_back(s3.objects(target)), w.offset_to_commit)
    assert written[True] == written[False]
    objects, offset = written[True]
    # files of 5 records, and new files at each schema change; 22-24 still open
    assert sorted(objects) == [name(start, EXTENSIONS[form]) for start in (0, 5, 10, 12, 17)]
    assert offset == 22


def test_a_record_the_format_refuses_in_a_run_is_reported_alone(
    s3: S3Endpoint, bucket: str
) -> None:
    reports = Reports()
    w: TopicPartitionWriter = writer(
        s3,
        bucket,
        **{
            "format.class": "ByteArrayFormat",
            "format.bytearray.extension": ".txt",
            "flush.size": "5",
        },
    )
    w.context = SimpleSinkTaskContext({}, reporter=reports)  # type: ignore[arg-type]
    values: list[Any] = [b"r0", b"r1", "not bytes", b"r3", b"r4", b"r5"]
    put(w, *(SinkRecord("orders", 0, None, None, None, v, i) for i, v in enumerate(values)))
    assert [(r.kafka_offset, type(e)) for r, e in reports.reported] == [(2, DataException)]
    assert s3.objects(bucket) == {name(0, ".txt"): b"r0\nr1\nr3\nr4\nr5\n"}
    assert w.offset_to_commit == 6
