"""The TopicPartitionWriter and every format against a real S3 REST endpoint (no broker, no
Spark): Confluent's names, rotation by size and by schema, offsets committed only past
completed objects, every format read back (pyarrow, fastavro) and compared, a failed endpoint
retried without losing or doubling a record."""

from __future__ import annotations

import datetime as dt
import gzip
import io
import json
from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo

import fastavro
import pyarrow.parquet as pq
import pytest

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connect.sink import SimpleSinkTaskContext, SinkRecord, TopicPartition
from airflow_provider_connect.connectors.s3 import config as c
from airflow_provider_connect.connectors.s3.formats import HEADERS, KEYS, VALUE, View, make_format
from airflow_provider_connect.connectors.s3.partitioners import partitioner_from_config
from airflow_provider_connect.connectors.s3.sink import parse
from airflow_provider_connect.connectors.s3.storage import S3Storage
from airflow_provider_connect.connectors.s3.writer import TopicPartitionWriter, now_ms
from tests.integration.connectors.s3.conftest import sink_config
from tests_common.s3 import S3Endpoint
from tests_common.s3_faults import FaultyEndpoint

pytestmark = pytest.mark.integration

TP = TopicPartition("orders", 0)
V1 = (
    SchemaBuilder.struct()
    .name("record")
    .version(1)
    .field("id", SchemaBuilder.int64().build())
    .field("name", SchemaBuilder.string().optional().build())
    .build()
)
V2 = (
    SchemaBuilder.struct()
    .name("record")
    .version(2)
    .field("id", SchemaBuilder.int64().build())
    .field("name", SchemaBuilder.string().optional().build())
    .field("amount", SchemaBuilder.float64().optional().build())
    .build()
)


def record(offset: int, schema: Schema = V1, **extra: Any) -> SinkRecord:
    value = Struct(schema).put("id", offset).put("name", f"n{offset}")
    for k, v in extra.items():
        value.put(k, v)
    return SinkRecord(
        TP.topic,
        TP.partition,
        None,
        f"k{offset}",
        schema,
        value,
        offset,
        headers=[("h", f"v{offset}")],
    )


def writer(
    s3: S3Endpoint,
    bucket: str,
    views: tuple[View, ...] = (VALUE,),
    clock: Callable[[], int] = now_ms,
    **extra: str,
) -> TopicPartitionWriter:
    parsed = parse(sink_config(s3, bucket, **extra))
    formats = {
        v: make_format(parsed[c.FORMAT_CLASS] if v is VALUE else "JsonFormat", parsed, v)
        for v in views
    }
    return TopicPartitionWriter(
        TP,
        S3Storage(parsed),
        partitioner_from_config(parsed, parsed[c.DIRECTORY_DELIM]),
        formats,
        parsed,
        SimpleSinkTaskContext({}),
        clock,
    )


def put(w: TopicPartitionWriter, *records: SinkRecord) -> None:
    w.buffer.extend(records)
    w.write()


def name(offset: int, ext: str) -> str:
    return f"topics/orders/partition=0/orders+0+{offset:010d}{ext}"


def test_json_files_of_flush_size_and_commit_offsets(s3: S3Endpoint, bucket: str) -> None:
    w = writer(s3, bucket)
    put(w, *(record(i) for i in range(7)))
    objects = s3.objects(bucket)
    assert sorted(objects) == [name(0, ".json"), name(3, ".json")]  # offset 6 stays open
    assert [json.loads(line) for line in objects[name(3, ".json")].splitlines()] == [
        {"id": i, "name": f"n{i}"} for i in (3, 4, 5)
    ]
    assert w.offset_to_commit == 6
    put(w, record(7), record(8))
    assert name(6, ".json") in s3.objects(bucket) and w.offset_to_commit == 9


def test_schema_change_rotates_all_files(s3: S3Endpoint, bucket: str) -> None:
    w = writer(s3, bucket, **{"flush.size": "10"})
    put(w, record(0), record(1), record(2, V2, amount=1.5), record(3, V2, amount=2.0))
    assert sorted(s3.objects(bucket)) == [name(0, ".json")]
    assert w.offset_to_commit == 2


def test_backward_compatibility_projects_older_records(s3: S3Endpoint, bucket: str) -> None:
    w = writer(s3, bucket, **{"flush.size": "10", "schema.compatibility": "BACKWARD"})
    put(w, record(0, V2, amount=1.0), record(1), record(2, V2, amount=3.0))
    w.commit()
    lines = s3.objects(bucket)[name(0, ".json")].splitlines()
    assert [json.loads(x)["amount"] for x in lines] == [1.0, None, 3.0]


def test_gzip_json_with_keys_and_headers(s3: S3Endpoint, bucket: str) -> None:
    w = writer(s3, bucket, (VALUE, KEYS, HEADERS), **{"s3.compression.type": "gzip"})
    put(w, *(record(i) for i in range(3)))
    objects = s3.objects(bucket)
    assert sorted(objects) == [
        name(0, ".headers.json.gz"),
        name(0, ".json.gz"),
        name(0, ".keys.json.gz"),
    ]
    assert gzip.decompress(objects[name(0, ".keys.json.gz")]).splitlines() == [
        b'"k0"',
        b'"k1"',
        b'"k2"',
    ]
    headers = [
        json.loads(x) for x in gzip.decompress(objects[name(0, ".headers.json.gz")]).splitlines()
    ]
    assert headers[1] == {"headers": [{"key": "h", "value": "v1"}]}


@pytest.mark.parametrize("separator", ["|", "\r\n", " ", "\t"])
def test_bytearray_with_separator(s3: S3Endpoint, bucket: str, separator: str) -> None:
    """The separator is taken as given, white space included (Confluent reads it untrimmed)."""
    w = writer(
        s3,
        bucket,
        **{
            "format.class": "ByteArrayFormat",
            "format.bytearray.separator": separator,
            "format.bytearray.extension": ".txt",
        },
    )
    put(w, *(SinkRecord("orders", 0, None, None, None, f"r{i}".encode(), i) for i in range(3)))
    assert s3.objects(bucket) == {
        name(0, ".txt"): f"r0{separator}r1{separator}r2{separator}".encode()
    }


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy"])
def test_avro_container_files_read_back(s3: S3Endpoint, bucket: str, codec: str) -> None:
    w = writer(s3, bucket, **{"format.class": "AvroFormat", "avro.codec": codec})
    put(w, *(record(i) for i in range(3)))
    reader = fastavro.reader(io.BytesIO(s3.objects(bucket)[name(0, ".avro")]))
    assert reader.codec == codec
    assert reader.writer_schema["name"] == "record"  # type: ignore[index]
    assert list(reader) == [{"id": i, "name": f"n{i}"} for i in range(3)]


@pytest.mark.parametrize(
    ("codec", "ext"),
    [
        ("snappy", ".snappy.parquet"),
        ("none", ".parquet"),
        ("gzip", ".gz.parquet"),
        ("zstd", ".zstd.parquet"),
    ],
)
def test_parquet_files_read_back(s3: S3Endpoint, bucket: str, codec: str, ext: str) -> None:
    w = writer(s3, bucket, **{"format.class": "ParquetFormat", "parquet.codec": codec})
    put(w, *(record(i, V2, amount=i / 2) for i in range(3)))
    table = pq.read_table(io.BytesIO(s3.objects(bucket)[name(0, ext)]))
    assert table.to_pylist() == [{"id": i, "name": f"n{i}", "amount": i / 2} for i in range(3)]
    assert table.schema.field("id").nullable is False
    assert b"parquet.avro.schema" in table.schema.metadata


def test_failed_endpoint_is_retried_without_loss_or_duplicates(s3: S3Endpoint, bucket: str) -> None:
    w = writer(s3, bucket, **{"retry.backoff.ms": "0", "s3.part.retries": "1"})
    good = w.storage.client
    w.storage.client = writer(s3, bucket, **{"store.url": "http://127.0.0.1:9"}).storage.client
    put(w, *(record(i) for i in range(4)))  # the commit of 0-2 fails: records kept
    assert s3.objects(bucket) == {} and w.offset_to_commit is None
    assert w.failure_time is not None and len(w.buffer) == 4
    w.storage.client = good
    w.write()
    lines = s3.objects(bucket)[name(0, ".json")].splitlines()
    assert [json.loads(x)["id"] for x in lines] == [0, 1, 2] and w.offset_to_commit == 3


def test_field_partitioner_commits_every_file_of_the_partition(s3: S3Endpoint, bucket: str) -> None:
    """Confluent's testWriteRecordFieldPartitioner: flush.size counts over the whole topic
    partition, so 3 interleaved values make files starting at 0, 1, 2 then 9, 10, 11."""
    w = writer(
        s3,
        bucket,
        **{
            "flush.size": "9",
            "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
            "partition.field.name": "name",
        },
    )
    put(w, *(record(i, name=f"v{i % 3}") for i in range(18)))
    assert sorted(s3.objects(bucket)) == sorted(
        f"topics/orders/name=v{i % 3}/orders+0+{i:010d}.json" for i in (0, 1, 2, 9, 10, 11)
    )
    assert w.offset_to_commit == 18


HOUR = 3_600_000
TIME_BASED = {
    "partitioner.class": "TimeBasedPartitioner",
    "partition.duration.ms": str(HOUR),
    "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
    "locale": "en",
    "timezone": "UTC",
    "timestamp.extractor": "Record",
    "flush.size": "100",
}


def timed(offset: int, timestamp: int) -> SinkRecord:
    plain = record(offset)
    return SinkRecord(TP.topic, TP.partition, None, None, V1, plain.value, offset, timestamp)


def test_rotation_by_record_time(s3: S3Endpoint, bucket: str) -> None:
    """A record every 20 s with rotate.interval.ms one minute: files of 3 records in the
    first hour; the records of two hours later in their own hour's directory. The last file
    waits for a later record."""
    w = writer(s3, bucket, **{**TIME_BASED, "rotate.interval.ms": "60000"})
    start = 1_700_000_000_000 - 1_700_000_000_000 % HOUR
    put(w, *(timed(i, start + i * 20_000) for i in range(9)))
    put(w, *(timed(9 + i, start + 2 * HOUR + i * 20_000) for i in range(4)))
    day = "topics/orders/year=2023/month=11"
    assert sorted(s3.objects(bucket)) == [
        f"{day}/day=14/hour=22/orders+0+{o:010d}.json" for o in (0, 3, 6)
    ] + [f"{day}/day=15/hour=00/orders+0+0000000009.json"]
    assert w.offset_to_commit == 12


def test_rotation_by_wall_clock_schedule(s3: S3Endpoint, bucket: str) -> None:
    """rotate.schedule.interval.ms: an open file is committed once the wall clock passes the
    next boundary, even with no new record (what the runtime's empty puts drive)."""
    now = [1_700_000_000_000]
    w = writer(
        s3,
        bucket,
        clock=lambda: now[0],
        **{"rotate.schedule.interval.ms": "60000", "timezone": "UTC", "flush.size": "100"},
    )
    put(w, record(0), record(1))
    assert s3.objects(bucket) == {} and w.offset_to_commit is None
    now[0] += 60_000
    w.write()
    assert sorted(s3.objects(bucket)) == [name(0, ".json")] and w.offset_to_commit == 2


def test_a_partition_failing_past_the_retry_timeout_fails_the_task(
    s3: S3Endpoint, bucket: str
) -> None:
    w = writer(
        s3,
        bucket,
        **{"store.url": "http://127.0.0.1:9", "s3.part.retries": "1", "s3.retry.timeout.ms": "0"},
    )
    with pytest.raises(ConnectException, match="still failing after s3.retry.timeout.ms=0") as e:
        put(w, *(record(i) for i in range(3)))
    assert f"bucket {bucket} at http://127.0.0.1:9" in str(e.value)
    assert s3.secret_key not in str(e.value)


def failing(w: TopicPartitionWriter, s3: S3Endpoint, bucket: str) -> Any:
    """Points ``w`` at an endpoint that refuses connections; returns its good client."""
    good = w.storage.client
    w.storage.client = writer(s3, bucket, **{"store.url": "http://127.0.0.1:9"}).storage.client
    return good


def test_the_retry_timeout_counts_from_a_failure_at_time_zero(s3: S3Endpoint, bucket: str) -> None:
    now = [0]
    retries = {"retry.backoff.ms": "0", "s3.part.retries": "1", "s3.retry.timeout.ms": "1000"}
    w = writer(s3, bucket, clock=lambda: now[0], **retries)
    failing(w, s3, bucket)
    put(w, *(record(i) for i in range(4)))  # fails at 0
    now[0] = 1000
    with pytest.raises(ConnectException, match="still failing after s3.retry.timeout.ms=1000"):
        w.write()


def test_the_retry_timeout_counts_from_the_first_failure_since_a_pass_without_one(
    s3: S3Endpoint, bucket: str
) -> None:
    """A scheduled rotation fails at 60 s; the next pass writes its records again without a
    commit (the next boundary is later) and raises nothing; a failure at 120 s is the first
    of a new run of failures, not 60 s into the old one."""
    now = [60_000]
    w = writer(
        s3,
        bucket,
        clock=lambda: now[0],
        **{
            "rotate.schedule.interval.ms": "60000",
            "timezone": "UTC",
            "flush.size": "100",
            "retry.backoff.ms": "0",
            "s3.part.retries": "1",
            "s3.retry.timeout.ms": "60000",
        },
    )
    put(w, record(0), record(1))
    now[0] = 120_000
    good = failing(w, s3, bucket)
    w.write()  # the rotation at 120 s fails
    assert len(w.buffer) == 2
    w.storage.client = good
    now[0] = 150_000
    w.write()  # written again into new files; the next boundary is at 180 s
    assert not w.buffer and w.offset_to_commit is None
    failing(w, s3, bucket)
    now[0] = 180_000
    w.write()  # fails: the first failure since the pass at 150 s
    assert len(w.buffer) == 2
    w.storage.client = good
    now[0] = 181_000
    put(w, record(2))  # a pass without a commit; the boundary of 240 s is later
    now[0] = 240_000
    w.write()
    assert sorted(s3.objects(bucket)) == [name(0, ".json")] and w.offset_to_commit == 3


def test_tombstones_between_values_go_to_their_own_directory(s3: S3Endpoint, bucket: str) -> None:
    w = writer(
        s3,
        bucket,
        (VALUE, KEYS),
        **{"behavior.on.null.values": "write", "store.kafka.keys": "true", "flush.size": "10"},
    )
    tombstone = SinkRecord(TP.topic, TP.partition, None, "k2", None, None, 2)
    put(w, record(0), record(1), tombstone, record(3))
    w.commit()
    objects = s3.objects(bucket)  # no value file for the tombstone, and no rotation
    assert sorted(objects) == [
        "topics/orders/partition=0/orders+0+0000000000.json",
        "topics/orders/partition=0/orders+0+0000000000.keys.json",
        "topics/orders/tombstone/orders+0+0000000002.keys.json",
    ]
    assert (
        objects["topics/orders/partition=0/orders+0+0000000000.keys.json"] == b'"k0"\n"k1"\n"k3"\n'
    )


def test_a_tombstone_without_a_timestamp_rotates_nothing_by_time(
    s3: S3Endpoint, bucket: str
) -> None:
    """behavior.on.null.values=write with time-based rotation: a tombstone has no timestamp
    to compare (Confluent's: no rotation by time then); the records around it share a file."""
    w = writer(
        s3,
        bucket,
        **{**TIME_BASED, "rotate.interval.ms": "60000", "behavior.on.null.values": "write"},
    )
    start = 1_700_000_000_000 - 1_700_000_000_000 % HOUR
    tombstone = SinkRecord(TP.topic, TP.partition, None, "k1", None, None, 1, None)
    put(w, timed(0, start), tombstone, timed(2, start + 1000))
    w.commit()
    hour = "topics/orders/year=2023/month=11/day=14/hour=22"
    objects = s3.objects(bucket)
    assert list(objects) == [f"{hour}/orders+0+0000000000.json"]
    assert [
        json.loads(x)["id"] for x in objects[f"{hour}/orders+0+0000000000.json"].splitlines()
    ] == [0, 2]
    assert w.offset_to_commit == 3


def test_a_part_failing_past_its_retries_aborts_the_upload(
    s3: S3Endpoint, bucket: str, proxy: FaultyEndpoint
) -> None:
    """UploadPart answered 500 every time: the multipart upload is aborted (nothing visible,
    no upload left), the records wait in the buffer, and are written whole once it heals."""
    big = "x" * (1 << 20)
    w = writer(
        s3,
        bucket,
        **{
            "store.url": proxy.url,
            "s3.part.size": str(5 << 20),
            "s3.part.retries": "2",
            "s3.retry.backoff.ms": "1",
            "retry.backoff.ms": "0",
            "flush.size": "100",
        },
    )
    proxy.inject("internal_error", matching="partNumber=")
    put(w, *(record(i, name=big) for i in range(6)))
    assert proxy.faults == 2
    assert s3.objects(bucket) == {} and w.offset_to_commit is None and len(w.buffer) == 6
    assert s3.client().list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []  # type: ignore[attr-defined]
    proxy.heal()
    w.write()
    w.commit()
    lines = s3.objects(bucket)[name(0, ".json")].splitlines()
    assert [json.loads(x)["id"] for x in lines] == list(range(6)) and w.offset_to_commit == 6


LOS_ANGELES = ZoneInfo("America/Los_Angeles")


def millis(*fields: int, zone: dt.tzinfo = LOS_ANGELES) -> int:
    """The instant of a local date-time of ``zone`` in milliseconds (the test's own clock
    arithmetic: zoneinfo, not the sink's zones)."""
    return int(dt.datetime(*fields, tzinfo=zone).timestamp() * 1000)  # type: ignore[misc]


def ids_by_key(objects: dict[str, bytes]) -> dict[str, list[int]]:
    return {k: [json.loads(line)["id"] for line in v.splitlines()] for k, v in objects.items()}


@pytest.mark.parametrize(
    ("partitioner", "first_dir", "later_dir"),
    [
        (
            "io.confluent.connect.storage.partitioner.HourlyPartitioner",
            "year=2017/month=03/day=02/hour=10",
            "year=2017/month=03/day=02/hour=12",
        ),
        ("DailyPartitioner", "year=2017/month=03/day=02", "year=2017/month=03/day=02"),
    ],
)
def test_daily_and_hourly_partitioners_by_record_time(
    s3: S3Endpoint, bucket: str, partitioner: str, first_dir: str, later_dir: str
) -> None:
    """Confluent's testWriteRecordTimeBasedPartitionRecordTimestampHours and ...Days: from
    2017-03-02 10:00 in Los Angeles a record every 20 s, nine, then nine more two hours
    later; rotate.interval.ms one minute makes files of three; the last three wait for a
    later record. Daily and Hourly paths in the zone's local time, Confluent's file names."""
    w = writer(
        s3,
        bucket,
        **{
            "partitioner.class": partitioner,
            "timezone": "America/Los_Angeles",
            "locale": "en_US",
            "timestamp.extractor": "Record",
            "rotate.interval.ms": "60000",
            "flush.size": "1000",
        },
    )
    first = millis(2017, 3, 2, 10, 0)
    later = first + 2 * HOUR
    put(
        w,
        *(timed(i, first + i * 20_000) for i in range(9)),
        *(timed(9 + i, later + i * 20_000) for i in range(9)),
    )
    assert ids_by_key(s3.objects(bucket)) == {
        f"topics/orders/{first_dir}/orders+0+{o:010d}.json": [o, o + 1, o + 2] for o in (0, 3, 6)
    } | {f"topics/orders/{later_dir}/orders+0+{o:010d}.json": [o, o + 1, o + 2] for o in (9, 12)}
    assert w.offset_to_commit == 15


def test_hourly_partitioner_across_daylight_saving_in_santiago(s3: S3Endpoint, bucket: str) -> None:
    """Confluent's testHourlyPartionerWithDaylightSavings end to end (locale es_CL): 2024-05-09
    03:17:33 UTC is 23:17 of the 8th (UTC-4), 2024-01-28 03:17:33 UTC 00:17 of the 28th
    (UTC-3)."""
    w = writer(
        s3,
        bucket,
        **{
            "partitioner.class": "HourlyPartitioner",
            "timezone": "America/Santiago",
            "locale": "es_CL",
            "timestamp.extractor": "Record",
            "flush.size": "2",
        },
    )
    put(w, timed(0, 1_715_224_653_000), timed(1, 1_706_411_853_000))
    assert ids_by_key(s3.objects(bucket)) == {
        "topics/orders/year=2024/month=05/day=08/hour=23/orders+0+0000000000.json": [0],
        "topics/orders/year=2024/month=01/day=28/hour=00/orders+0+0000000001.json": [1],
    }
    assert w.offset_to_commit == 2


WALLCLOCK = {
    "partitioner.class": "TimeBasedPartitioner",
    "partition.duration.ms": str(24 * HOUR),
    "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
    "locale": "en",
    "timezone": "America/Los_Angeles",
    "timestamp.extractor": "Wallclock",
    "flush.size": "1000",
}


def test_wallclock_rotation_follows_the_clock_of_the_writes(s3: S3Endpoint, bucket: str) -> None:
    """Confluent's testWriteRecordTimeBasedPartitionWallclockMocked (rotate.interval.ms one
    hour, daily buckets): the time of a record is the clock of the pass that writes it, so

    * records whose Kafka timestamps lie a week apart share a file (by Record time each
      would rotate);
    * an idle partition is not rotated when the clock passes the interval: the rotation
      compares the time of the last record written with the first's, so it waits for a
      record (rotate.schedule.interval.ms is Confluent's rotation on the clock alone);
    * records written two hours later rotate the file and go to their day's directory;
      one written an hour and 1 ms after those rotates again."""
    now = [millis(2017, 3, 2, 23, 0)]
    w = writer(s3, bucket, clock=lambda: now[0], **{**WALLCLOCK, "rotate.interval.ms": str(HOUR)})
    week = 7 * 24 * HOUR
    put(w, *(timed(i, millis(2000, 1, 1, 0, 0) + i * week) for i in range(9)))
    assert s3.objects(bucket) == {} and w.offset_to_commit is None
    now[0] += 2 * HOUR
    w.write()
    assert s3.objects(bucket) == {} and w.offset_to_commit is None
    put(w, *(timed(i, millis(2000, 1, 1, 0, 0)) for i in range(9, 18)))
    day = "topics/orders/year=2017/month=03"
    assert ids_by_key(s3.objects(bucket)) == {
        f"{day}/day=02/hour=00/orders+0+0000000000.json": list(range(9))
    }
    assert w.offset_to_commit == 9
    now[0] += HOUR + 1
    put(w, timed(18, millis(2000, 1, 1, 0, 0)))
    assert ids_by_key(s3.objects(bucket)) == {
        f"{day}/day=02/hour=00/orders+0+0000000000.json": list(range(9)),
        f"{day}/day=03/hour=00/orders+0+0000000009.json": list(range(9, 18)),
    }
    assert w.offset_to_commit == 18


def test_wallclock_takes_one_time_per_pass(s3: S3Endpoint, bucket: str) -> None:
    """Confluent's testWallclockUsesBatchTimePartitionBoundary: every record of a pass gets
    the pass's time, though the clock moves on (here a day at every reading): nine records,
    flush.size 6, in two files of one directory, a bucket of a time the clock gave."""
    readings: list[int] = []

    def clock() -> int:
        readings.append(millis(2017, 3, 2, 12, 0) + len(readings) * 24 * HOUR)
        return readings[-1]

    w = writer(s3, bucket, clock=clock, **{**WALLCLOCK, "flush.size": "6"})
    put(w, *(record(i) for i in range(9)))
    w.commit()
    days = {f"day={dt.datetime.fromtimestamp(t / 1000, LOS_ANGELES):%d}" for t in readings}
    found = ids_by_key(s3.objects(bucket))
    assert sorted(found.values()) == [[0, 1, 2, 3, 4, 5], [6, 7, 8]]
    (directory,) = {k.rsplit("/", 1)[0] for k in found}
    assert directory.split("/")[4] in days and directory.endswith("/hour=00")


def altering(offset: int) -> SinkRecord:
    """Confluent's createRecordsWithAlteringSchemas: even offsets of V1, odd ones of V2."""
    return record(offset) if offset % 2 == 0 else record(offset, V2, amount=offset / 2)


def projected(offset: int, version: int) -> dict[str, Any]:
    """The record at ``offset`` as a file of schema ``version`` holds it."""
    row: dict[str, Any] = {"id": offset, "name": f"n{offset}"}
    if version == 2:
        row["amount"] = offset / 2 if offset % 2 else None
    return row


@pytest.mark.parametrize(
    ("compatibility", "offsets", "files"),
    [
        # Confluent's testProjectNone, testProjectBackward and testProjectForward (flush 2)
        ("NONE", range(7), {o: (2 - (o + 1) % 2, [o]) for o in range(7)}),
        ("BACKWARD", range(7), {0: (1, [0]), 1: (2, [1, 2]), 3: (2, [3, 4]), 5: (2, [5, 6])}),
        ("FULL", range(7), {0: (1, [0]), 1: (2, [1, 2]), 3: (2, [3, 4]), 5: (2, [5, 6])}),
        ("FORWARD", range(1, 8), {1: (2, [1]), 2: (1, [2, 3]), 4: (1, [4, 5]), 6: (1, [6, 7])}),
        # versions 1, 2, 1, ...: each newer record projected onto the older file
        ("FORWARD", range(6), {0: (1, [0, 1]), 2: (1, [2, 3]), 4: (1, [4, 5])}),
    ],
)
def test_schema_compatibility_rotates_or_projects(
    s3: S3Endpoint,
    bucket: str,
    compatibility: str,
    offsets: range,
    files: dict[int, tuple[int, list[int]]],
) -> None:
    """schema.compatibility as Confluent's StorageSchemaCompatibility: NONE starts a file at
    every other schema; BACKWARD and FULL (the same rules) project an older record onto a
    newer file and rotate on a newer schema; FORWARD the other way round. Avro files read
    back: each file's schema is its first record's, every record projected onto it."""
    w = writer(
        s3,
        bucket,
        **{"format.class": "AvroFormat", "flush.size": "2", "schema.compatibility": compatibility},
    )
    put(w, *(altering(o) for o in offsets))
    w.commit()
    found = {}
    for k, data in s3.objects(bucket).items():
        reader = fastavro.reader(io.BytesIO(data))
        fields = [f["name"] for f in reader.writer_schema["fields"]]  # type: ignore[index]
        found[k] = (fields, list(reader))
    assert found == {
        name(start, ".avro"): (
            ["id", "name", "amount"][: version + 1],
            [projected(o, version) for o in rows],
        )
        for start, (version, rows) in files.items()
    }
    assert w.offset_to_commit == offsets[-1] + 1
