"""S3SinkConnector and S3SinkTask as the runtime drives them (the connector API's harnesses),
against a real S3 REST endpoint: Confluent's names and commit sequence, exactly once across
a restart, null values, the connector's checks at validate and at start."""

from __future__ import annotations

import io
import json

import fastavro
import pyarrow.parquet as pq
import pytest

from airflow_provider_connect.connect.config import HIDDEN
from airflow_provider_connect.connect.data import SchemaBuilder, Struct
from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connect.sink import SimpleSinkTaskContext, SinkRecord, TopicPartition
from airflow_provider_connect.connect.testing import ConnectorHarness, SinkTaskHarness
from airflow_provider_connect.connectors.s3.sink import CONFIG_DEF, S3SinkConnector, S3SinkTask
from tests.integration.connectors.s3.conftest import sink_config
from tests_common.s3 import S3Endpoint

pytestmark = pytest.mark.integration

TOPIC = "test-topic"
P12, P13 = TopicPartition(TOPIC, 12), TopicPartition(TOPIC, 13)
STRING = SchemaBuilder.string().build()
SCHEMA = SchemaBuilder.struct().name("record").field("int", SchemaBuilder.int32().build()).build()


def record(tp: TopicPartition, offset: int, value: object = "value") -> SinkRecord:
    data = Struct(SCHEMA).put("int", offset) if value == "value" else value
    return SinkRecord(
        tp.topic,
        tp.partition,
        None,
        f"k{offset}",
        SCHEMA if data is not None else None,
        data,
        offset,
    )


def key(tp: TopicPartition, offset: int, ext: str = ".json") -> str:
    return f"topics/{TOPIC}/partition={tp.partition}/{TOPIC}+{tp.partition}+{offset:010d}{ext}"


def ids(data: bytes) -> list[int]:
    return [json.loads(line)["int"] for line in data.splitlines()]


def test_pre_commit_only_past_completed_objects(s3: S3Endpoint, bucket: str) -> None:
    """Confluent's testPreCommitOnSizeRotation (flush 3, two partitions interleaved), except
    that the last completed offset is given at every ``pre_commit``, not only once: a commit
    the runtime failed is made again at the next one."""
    with SinkTaskHarness(S3SinkTask) as harness:
        harness.start(sink_config(s3, bucket), [P12, P13])
        harness.put([record(tp, o) for o in range(3) for tp in (P12, P13)])
        assert harness.commit() == {P12: 3, P13: 3}
        harness.put([record(tp, o) for o in (3, 4) for tp in (P12, P13)])
        assert harness.commit() == {P12: 3, P13: 3}
        harness.put([record(tp, 5) for tp in (P12, P13)])
        assert harness.commit() == {P12: 6, P13: 6}
        harness.put([record(P12, o) for o in (6, 7, 8)] + [record(P13, o) for o in (6, 7)])
        assert harness.commit() == {P12: 9, P13: 6}
    objects = s3.objects(bucket)
    assert sorted(objects) == sorted(
        [key(P12, o) for o in (0, 3, 6)] + [key(P13, o) for o in (0, 3)]
    )
    assert ids(objects[key(P12, 6)]) == [6, 7, 8]


def test_the_completed_offset_is_offered_again_to_a_later_commit(
    s3: S3Endpoint, bucket: str
) -> None:
    """An idle partition whose commit failed still gets its offset committed: ``pre_commit``
    gives it every time, for the partitions asked about only."""
    with SinkTaskHarness(S3SinkTask) as harness:
        task = harness.start(sink_config(s3, bucket), [P12, P13])
        harness.put([record(P12, o) for o in range(3)])
        assert task.pre_commit({P12: 3}) == {P12: 3}  # the runtime's commit then fails
        assert task.pre_commit({P12: 3}) == {P12: 3}
        assert task.pre_commit({P13: 0}) == {}


def test_records_read_again_land_in_the_same_objects(s3: S3Endpoint, bucket: str) -> None:
    config = sink_config(s3, bucket)
    with SinkTaskHarness(S3SinkTask) as harness:
        harness.start(config, [P12])
        harness.put([record(P12, o) for o in range(5)])
        harness.commit()
    committed = harness.committed
    assert committed == {P12: 3}
    with SinkTaskHarness(S3SinkTask, committed=committed) as again:  # a crash: 3, 4 unwritten
        again.start(config, [P12])
        start = again.position(P12)
        again.put([record(P12, o) for o in range(start, 9)])
        assert again.commit() == {P12: 9}
    objects = s3.objects(bucket)
    assert sorted(objects) == [key(P12, 0), key(P12, 3), key(P12, 6)]
    assert [i for k in sorted(objects) for i in ids(objects[k])] == list(range(9))


P14 = TopicPartition(TOPIC, 14)


def interleaved(start: dict[TopicPartition, int], end: int) -> list[SinkRecord]:
    """The records of each partition from its ``start`` offset up to ``end`` (excluded),
    interleaved as Confluent's ``createRecordsInterleaved``."""
    return [
        record(tp, o) for o in range(min(start.values()), end) for tp in start if o >= start[tp]
    ]


@pytest.mark.parametrize("revoked", [(P13,), (P12, P13)], ids=["cooperative", "eager"])
def test_rebalance(s3: S3Endpoint, bucket: str, revoked: tuple[TopicPartition, ...]) -> None:
    """Confluent's testRebalance (flush 3): P12 and P13 write offsets 0-6; P13 is revoked
    (with P12 too in an eager rebalance, as Confluent's test does) and P14, committed at 6,
    is opened. A revoked partition's open file (offset 6) is discarded: no object, no upload
    left, its offset committed at 6 only. P12 and P14 go on to their objects and offsets;
    P13 assigned again and its records put again from 6 give the objects, byte for byte,
    of a run without a rebalance."""
    config = sink_config(s3, bucket)
    with SinkTaskHarness(S3SinkTask, committed={P14: 6}) as harness:
        task = harness.start(config, [P12, P13])
        harness.put(interleaved({P12: 0, P13: 0}, 7))
        assert sorted(s3.objects(bucket)) == sorted(key(tp, o) for tp in (P12, P13) for o in (0, 3))
        harness.close(*revoked)
        assert harness.committed == {P14: 6} | {tp: 6 for tp in revoked}  # final pre_commit
        assert key(P13, 6) not in s3.objects(bucket)
        assert s3.client().list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []  # type: ignore[attr-defined]
        assert task.pre_commit({P13: 7}) == {}  # not the task's any more
        harness.open(P12, P14)
        assert harness.position(P12) == (6 if P12 in revoked else 7)
        harness.put(interleaved({P12: harness.position(P12), P14: harness.position(P14)}, 13))
        assert harness.commit() == {P12: 12, P14: 12}
        objects = s3.objects(bucket)
        assert sorted(objects) == sorted(
            [key(P12, o) for o in (0, 3, 6, 9)]
            + [key(P13, o) for o in (0, 3)]
            + [key(P14, o) for o in (6, 9)]
        )
        assert [ids(objects[key(P12, o)]) for o in (6, 9)] == [[6, 7, 8], [9, 10, 11]]
        assert [ids(objects[key(P14, o)]) for o in (6, 9)] == [[6, 7, 8], [9, 10, 11]]
        harness.open(P13)
        assert harness.position(P13) == 6
        harness.put(interleaved({P13: 6}, 13))
        assert harness.commit() == {P12: 12, P13: 12, P14: 12}
    reference = s3.new_bucket()
    with SinkTaskHarness(S3SinkTask) as harness:
        harness.start(sink_config(s3, reference), [P12, P13, P14])
        harness.put(interleaved({P12: 0, P13: 0, P14: 6}, 13))
    assert s3.objects(bucket) == s3.objects(reference)


def test_null_values(s3: S3Endpoint, bucket: str) -> None:
    ignore = sink_config(s3, bucket, **{"behavior.on.null.values": "ignore"})
    with SinkTaskHarness(S3SinkTask, errors_tolerance="all") as harness:
        harness.start(ignore, [P12])
        harness.put([record(P12, 0), record(P12, 1, None), record(P12, 2), record(P12, 3)])
        assert len(harness.reporter.reported) == 1
    assert ids(s3.objects(bucket)[key(P12, 0)]) == [0, 2, 3]
    with SinkTaskHarness(S3SinkTask) as harness:
        harness.start(sink_config(s3, bucket), [P12])
        with pytest.raises(ConnectException, match="Null valued records are not writeable"):
            harness.put([record(P12, 0, None)])


def test_tombstones_written_as_keys(s3: S3Endpoint, bucket: str) -> None:
    config = sink_config(
        s3,
        bucket,
        **{
            "behavior.on.null.values": "write",
            "store.kafka.keys": "true",
            "keys.format.class": "JsonFormat",
            "flush.size": "2",
        },
    )
    with SinkTaskHarness(S3SinkTask) as harness:
        harness.start(config, [P12])
        harness.put([record(P12, 0, None), record(P12, 1, None)])
    tombstones = f"topics/{TOPIC}/tombstone/{TOPIC}+12+0000000000.keys.json"
    assert s3.objects(bucket) == {tombstones: b'"k0"\n"k1"\n'}


def test_a_record_refused_by_a_later_view_is_written_nowhere(s3: S3Endpoint, bucket: str) -> None:
    """A null key with keys stored goes to the dead letter queue only: the value and keys
    files stay aligned, and the objects are named after the first record written."""
    config = sink_config(
        s3, bucket, **{"store.kafka.keys": "true", "keys.format.class": "JsonFormat"}
    )
    keyless = SinkRecord(TOPIC, 12, None, None, SCHEMA, Struct(SCHEMA).put("int", 0), 0)
    with SinkTaskHarness(S3SinkTask, errors_tolerance="all") as harness:
        harness.start(config, [P12])
        harness.put([keyless, record(P12, 1), record(P12, 2), record(P12, 3)])
        assert [r.kafka_offset for r, _ in harness.reporter.reported] == [0]
        assert harness.commit() == {P12: 4}
    objects = s3.objects(bucket)
    assert sorted(objects) == [key(P12, 1), key(P12, 1, ".keys.json")]
    assert ids(objects[key(P12, 1)]) == [1, 2, 3]
    assert objects[key(P12, 1, ".keys.json")] == b'"k1"\n"k2"\n"k3"\n'


def test_a_partition_paused_by_failing_uploads_is_resumed_when_closed(
    s3: S3Endpoint, bucket: str
) -> None:
    """The writer pauses a partition while ``flush.size`` records wait for a retry; closing
    the partition resumes it, so that it is not left paused for its next assignment."""
    config = sink_config(
        s3,
        bucket,
        **{"store.url": "http://127.0.0.1:9", "s3.part.retries": "1", "retry.backoff.ms": "60000"},
    )
    context = SimpleSinkTaskContext({})
    task = S3SinkTask()
    task.initialize(context)
    task.start(config)
    context.assigned.add(P12)
    task.open([P12])
    task.put([record(P12, o) for o in range(4)])  # the commit of 0-2 fails: 4 records wait
    assert context.paused == {P12}
    task.close([P12])
    assert context.paused == set()
    task.stop()


def test_a_record_of_an_unassigned_partition(s3: S3Endpoint, bucket: str) -> None:
    with SinkTaskHarness(S3SinkTask) as harness:
        task = harness.start(sink_config(s3, bucket), [P12])
        with pytest.raises(
            ConnectException, match="No writer found for topic partition KAFKA_MAIN.test-topic-12"
        ):
            task.put([record(TopicPartition("KAFKA_MAIN.test-topic", 12), 0)])


def test_connector_checks(s3: S3Endpoint, bucket: str) -> None:
    with ConnectorHarness(S3SinkConnector) as harness:
        found = harness.validate(
            {
                **sink_config(
                    s3, bucket, **{"s3.compression.type": "gzip", "format.class": "AvroFormat"}
                ),
                "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
            }
        )
        assert found["partition.field.name"] == [
            "Partition field name cannot be null or empty when using FieldPartitioner."
        ]
        assert harness.validate(sink_config(s3, bucket)) == {}
        gzip_avro = harness.validate(
            sink_config(s3, bucket, **{"s3.compression.type": "gzip", "format.class": "AvroFormat"})
        )
        assert gzip_avro["s3.compression.type"] == [
            "Compression Type gzip not valid for data format class: "
            "( io.confluent.connect.s3.format.avro.AvroFormat )."
        ]
        with pytest.raises(ConnectException, match="Non-existent S3 bucket: missing-bucket"):
            harness.start(sink_config(s3, "missing-bucket"))
        harness.start(sink_config(s3, bucket))
        assert harness.task_configs(2) == [sink_config(s3, bucket)] * 2


def test_datasets_and_hidden_secret(s3: S3Endpoint, bucket: str) -> None:
    config = {**sink_config(s3, bucket), "topics": "orders,refunds"}
    data = S3SinkConnector().datasets(config, "127.0.0.1:9092")
    assert [d.uri for d in data.writes] == [
        f"s3://{bucket}/topics/orders",
        f"s3://{bucket}/topics/refunds",
    ]
    assert data.writes[0].namespace == f"s3://{bucket}" and data.writes[0].name == "topics/orders"
    assert CONFIG_DEF.masked(config)["aws.secret.access.key"] == HIDDEN


@pytest.mark.parametrize(
    ("fmt", "ext"), [("AvroFormat", ".avro"), ("ParquetFormat", ".snappy.parquet")]
)
def test_keys_and_headers_files(s3: S3Endpoint, bucket: str, fmt: str, ext: str) -> None:
    config = sink_config(
        s3,
        bucket,
        **{
            "format.class": fmt,
            "store.kafka.keys": "true",
            "store.kafka.headers": "true",
            "keys.format.class": fmt,
            "headers.format.class": fmt,
        },
    )
    with SinkTaskHarness(S3SinkTask) as harness:
        harness.start(config, [P12])
        harness.put(
            [
                SinkRecord(
                    TOPIC,
                    12,
                    STRING,
                    f"k{o}",
                    SCHEMA,
                    Struct(SCHEMA).put("int", o),
                    o,
                    headers=[("h", f"v{o}")],
                )
                for o in range(3)
            ]
        )
    objects = s3.objects(bucket)
    assert sorted(objects) == sorted(
        key(P12, 0, f"{view}{ext}") for view in ("", ".keys", ".headers")
    )
    keys, headers = objects[key(P12, 0, f".keys{ext}")], objects[key(P12, 0, f".headers{ext}")]
    if fmt == "AvroFormat":
        assert list(fastavro.reader(io.BytesIO(keys))) == ["k0", "k1", "k2"]
        assert list(fastavro.reader(io.BytesIO(headers)))[2] == [{"key": "h", "value": "v2"}]
    else:
        assert pq.read_table(io.BytesIO(keys)).to_pylist()[1] == {"key": "k1"}
        assert pq.read_table(io.BytesIO(headers)).to_pylist()[2] == {
            "headers": [{"key": "h", "value": "v2"}]
        }


def test_a_task_stopped_without_a_start_stops() -> None:
    """The runtime stops a task whose start failed: there is nothing to discard."""
    task = S3SinkTask()
    task.initialize(SimpleSinkTaskContext({}))
    task.stop()
    assert task.writers == {}
