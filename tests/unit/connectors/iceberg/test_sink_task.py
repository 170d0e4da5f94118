"""The Iceberg sink task as the runtime drives it, through the test harness (task 0, the
committer, with the in-memory coordination channel) into a real pyiceberg SQL catalog on
SQLite with local files: each partition transform, static, regex and dynamic routing,
schema evolution, upserts from every change-stream shape, every Connect type, and
schemaless maps. Each test puts records, then drives the put/commit loop until the
committed position reaches the last offset, and judges the table by scanning it."""

from __future__ import annotations

import datetime as dt
import decimal
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema as IcebergSchema
from pyiceberg.table import Table
from pyiceberg.transforms import BucketTransform
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
    TimeType,
)

from airflow_provider_connect.connect.data import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from airflow_provider_connect.connect.errors import RetriableException
from airflow_provider_connect.connect.sink import SinkRecord, TopicPartition
from airflow_provider_connect.connect.testing import InMemoryChannels, SinkTaskHarness
from airflow_provider_connect.connectors.change_capture.envelope import (
    envelope_schema,
    envelope_value,
    source_schema_builder,
    source_values,
)
from airflow_provider_connect.connectors.iceberg import writer
from airflow_provider_connect.connectors.iceberg.task import IcebergSinkTask

TOPIC = "events"
TP = TopicPartition(TOPIC, 0)
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
DRIVE_TIMEOUT_S = 30.0

ROW = (
    SchemaBuilder.struct()
    .name("row")
    .field("id", Schema.INT64_SCHEMA)
    .field("name", Schema.STRING_SCHEMA)
    .field("ts", Timestamp.SCHEMA)
    .build()
)
KEY = SchemaBuilder.struct().name(f"{TOPIC}.Key").field("id", Schema.INT64_SCHEMA).build()


def row(i: int, name: str | None = None, schema: Schema = ROW) -> Struct:
    at = dt.datetime(2024 + i % 3, 1 + i % 12, 1 + i % 28, i % 24, tzinfo=dt.timezone.utc)
    return Struct(schema).put("id", i).put("name", name or f"name {i:03}").put("ts", at)


def key(i: int) -> Struct:
    return Struct(KEY).put("id", i)


class Sink:
    """Task 0 of a connector in a harness, writing to ``catalog``; records put at
    consecutive offsets of :data:`TP`."""

    def __init__(self, catalog_props: Mapping[str, str], props: Mapping[str, str]) -> None:
        self.harness = SinkTaskHarness(IcebergSinkTask, channels=InMemoryChannels(), task_id=0)
        self.props = {
            "name": "lake",
            "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
            "topics": TOPIC,
            "iceberg.control.commit.interval-ms": "50",
            **{f"iceberg.catalog.{k}": v for k, v in catalog_props.items()},
            **props,
        }
        self.harness.start(self.props, [TP])
        self.offset = 0

    def put(
        self,
        values: list[Any],
        *,
        schema: Schema | None = None,
        keys: list[Any] | None = None,
        key_schema: Schema | None = None,
    ) -> None:
        """Puts records of ``values`` (of ``schema``; a Struct's own schema when None),
        keyed by ``keys``, then drives the task until their last offset is committed."""
        records = []
        for i, value in enumerate(values):
            value_schema = schema or (value.schema if isinstance(value, Struct) else None)
            record_key = keys[i] if keys else None
            records.append(
                SinkRecord(TOPIC, 0, key_schema, record_key, value_schema, value, self.offset + i)
            )
        self.offset += len(records)
        self.harness.put(records)
        self.drive(lambda: self.harness.commit().get(TP) == self.offset)

    def drive(self, done: Callable[[], bool]) -> None:
        """Puts no records (the commit tick passes in ``put``) until ``done``."""
        deadline = time.monotonic() + DRIVE_TIMEOUT_S
        while not done():
            assert time.monotonic() < deadline, f"not done in {DRIVE_TIMEOUT_S} s"
            self.harness.put([])

    def stop(self) -> None:
        self.harness.stop()


@pytest.fixture
def catalog_props(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "warehouse").mkdir()
    return {
        "type": "sql",
        "uri": f"sqlite:///{tmp_path / 'catalog.db'}",
        "warehouse": f"file://{tmp_path / 'warehouse'}",
    }


@pytest.fixture
def catalog(catalog_props: dict[str, str]) -> Catalog:
    props = dict(catalog_props)
    del props["type"]
    return SqlCatalog("iceberg", **props)


@pytest.fixture
def sink(catalog_props: dict[str, str]) -> Iterator[Callable[..., Sink]]:
    made: list[Sink] = []

    def make(**props: str) -> Sink:
        made.append(Sink(catalog_props, props))
        return made[-1]

    yield make
    for one in made:
        one.stop()


def auto(**props: str) -> dict[str, str]:
    return {"iceberg.tables.auto-create-enabled": "true", **props}


def rows(catalog: Catalog, table: str) -> list[dict[str, Any]]:
    return sorted(catalog.load_table(table).scan().to_arrow().to_pylist(), key=lambda r: r["id"])


def by_id(catalog: Catalog, table: str, column: str = "name") -> dict[int, Any]:
    return {r["id"]: r[column] for r in rows(catalog, table)}


# -- partition transforms ----------------------------------------------------------------------
def _hours(at: dt.datetime) -> int:
    return int((at - EPOCH).total_seconds()) // 3600


PARTITIONED: dict[str, tuple[str, str, str, Callable[[dict[str, Any]], Any]]] = {
    # term: (field name, transform, source column, partition value of a row)
    "name": ("name", "identity", "name", lambda r: r["name"]),
    "year(ts)": ("ts_year", "year", "ts", lambda r: r["ts"].year - 1970),
    "month(ts)": (
        "ts_month",
        "month",
        "ts",
        lambda r: (r["ts"].year - 1970) * 12 + r["ts"].month - 1,
    ),
    "day(ts)": ("ts_day", "day", "ts", lambda r: (r["ts"].date() - EPOCH.date()).days),
    "hour(ts)": ("ts_hour", "hour", "ts", lambda r: _hours(r["ts"])),
    "bucket(id, 4)": ("id_bucket", "bucket[4]", "id", lambda r: BUCKET_4(r["id"])),
    "truncate(name, 3)": ("name_trunc", "truncate[3]", "name", lambda r: r["name"][:3]),
}


BUCKET_4: Callable[[Any], Any] = BucketTransform(4).transform(
    LongType()
)  # Iceberg's murmur3 hash, mod 4


def file_partitions(table: Table) -> list[tuple[Any, list[dict[str, Any]]]]:
    """Each data file's partition value (of the spec's one field) and its rows."""
    found = []
    for task in table.scan().plan_files():
        path = task.file.file_path.removeprefix("file://")
        found.append((task.file.partition[0], pq.read_table(path).to_pylist()))
    return found


@pytest.mark.parametrize("term", list(PARTITIONED))
def test_each_partition_transform_partitions_the_table_and_its_files(
    term: str, sink: Callable[..., Sink], catalog: Catalog
) -> None:
    name, transform, column, partition_of = PARTITIONED[term]
    values = [row(i, f"{'abcd'[i % 4] * 4}-{i}") for i in range(24)]
    task = sink(
        **auto(**{"iceberg.tables": "db.parts", "iceberg.tables.default-partition-by": term})
    )
    task.put(values)
    table = catalog.load_table("db.parts")
    assert [(r["id"], r["name"], r["ts"]) for r in rows(catalog, "db.parts")] == [
        (v.get("id"), v.get("name"), v.get("ts")) for v in values
    ]
    (field,) = table.spec().fields
    assert (field.name, str(field.transform)) == (name, transform)
    assert table.schema().find_column_name(field.source_id) == column
    files = file_partitions(table)
    assert sum(len(file_rows) for _, file_rows in files) == len(values)
    expected_values = {partition_of(r) for r in rows(catalog, "db.parts")}
    assert len(expected_values) > 1  # the rows span several partitions
    assert {value for value, _ in files} == expected_values
    for value, file_rows in files:  # each file holds the rows of its partition only
        assert {partition_of(r) for r in file_rows} == {value}


# -- routing -----------------------------------------------------------------------------------
ROUTED = (
    SchemaBuilder.struct()
    .name("routed")
    .field("id", Schema.INT64_SCHEMA)
    .field("kind", Schema.OPTIONAL_STRING_SCHEMA)
    .build()
)


def routed(i: int, kind: str | None) -> Struct:
    return Struct(ROUTED).put("id", i).put("kind", kind)


def test_static_routing_gives_every_table_every_record(
    sink: Callable[..., Sink], catalog: Catalog
) -> None:
    sink(**auto(**{"iceberg.tables": "db.a, db.b"})).put([routed(i, None) for i in range(6)])
    assert [r["id"] for r in rows(catalog, "db.a")] == list(range(6))
    assert [r["id"] for r in rows(catalog, "db.b")] == list(range(6))


def test_a_route_regex_per_table_sends_each_record_to_the_tables_it_matches(
    sink: Callable[..., Sink], catalog: Catalog
) -> None:
    kinds = ["apple", "banana", "avocado", "cherry", None, "blueberry", "Apple"]
    task = sink(
        **auto(
            **{
                "iceberg.tables": "db.a,db.b,db.ab",
                "iceberg.tables.route-field": "kind",
                "iceberg.table.db.a.route-regex": "a.*",
                "iceberg.table.db.b.route-regex": "b.*",
                "iceberg.table.db.ab.route-regex": "(a|b).*",
            }
        )
    )
    task.put([routed(i, kind) for i, kind in enumerate(kinds)])
    assert [r["kind"] for r in rows(catalog, "db.a")] == ["apple", "avocado"]  # whole value, case
    assert [r["kind"] for r in rows(catalog, "db.b")] == ["banana", "blueberry"]
    assert [r["kind"] for r in rows(catalog, "db.ab")] == [
        "apple",
        "banana",
        "avocado",
        "blueberry",
    ]


def test_dynamic_routing_auto_creates_the_tables_the_field_names(
    sink: Callable[..., Sink], catalog: Catalog
) -> None:
    kinds = ["db.red", "db.Green", "db.red", None, "db.green"]
    task = sink(
        **auto(**{"iceberg.tables.dynamic-enabled": "true", "iceberg.tables.route-field": "kind"})
    )
    task.put([routed(i, kind) for i, kind in enumerate(kinds)])
    assert sorted(catalog.list_tables("db")) == [("db", "green"), ("db", "red")]  # lowercased
    assert [r["id"] for r in rows(catalog, "db.red")] == [0, 2]
    assert [r["id"] for r in rows(catalog, "db.green")] == [1, 4]


def test_dynamic_routing_to_a_missing_table_without_auto_create_drops_its_records(
    sink: Callable[..., Sink], catalog: Catalog
) -> None:
    catalog.create_namespace("db")
    catalog.create_table(
        "db.present",
        IcebergSchema(
            NestedField(1, "id", LongType(), required=False),
            NestedField(2, "kind", StringType(), required=False),
        ),
    )
    task = sink(**{"iceberg.tables.dynamic-enabled": "true", "iceberg.tables.route-field": "kind"})
    kinds = ["db.present", "db.missing", "db.present", "db.missing"]
    task.put([routed(i, kind) for i, kind in enumerate(kinds)])  # committed past them all
    assert [r["id"] for r in rows(catalog, "db.present")] == [0, 2]
    assert not catalog.table_exists("db.missing")


# -- schema evolution --------------------------------------------------------------------------
def struct_of(*fields: tuple[str, Schema]) -> Schema:
    builder = SchemaBuilder.struct().name("evolving")
    for name, schema in fields:
        builder.field(name, schema)
    return builder.build()


V1 = struct_of(("id", Schema.INT32_SCHEMA), ("name", Schema.STRING_SCHEMA))
WITH_NOTE = struct_of(
    ("id", Schema.INT32_SCHEMA),
    ("name", Schema.STRING_SCHEMA),
    ("note", Schema.OPTIONAL_STRING_SCHEMA),
)
WIDER_ID = struct_of(("id", Schema.INT64_SCHEMA), ("name", Schema.STRING_SCHEMA))
OPTIONAL_NAME = struct_of(("id", Schema.INT32_SCHEMA), ("name", Schema.OPTIONAL_STRING_SCHEMA))


def values_of(schema: Schema, *rows_: dict[str, Any]) -> list[Struct]:
    made = []
    for fields in rows_:
        value = Struct(schema)
        for name, field_value in fields.items():
            value.put(name, field_value)
        made.append(value)
    return made


def evolving(sink: Callable[..., Sink], evolve: bool) -> Sink:
    task = sink(
        **auto(
            **{
                "iceberg.tables": "db.evolving",
                "iceberg.tables.evolve-schema-enabled": str(evolve).lower(),
            }
        )
    )
    task.put(values_of(V1, {"id": 1, "name": "one"}, {"id": 2, "name": "two"}))
    return task


@pytest.fixture
def small_rolls(monkeypatch: pytest.MonkeyPatch) -> int:
    """Append tables roll their rows to a file every 10 rows."""
    monkeypatch.setattr(writer, "ROLL_ROWS", 10)
    return 10


def test_rows_rolled_to_files_while_a_chunk_fills_are_committed_with_it_once(
    sink: Callable[..., Sink], catalog: Catalog, small_rolls: int
) -> None:
    """Rows past the roll size are written as files on the side while the chunk fills (a
    schema change between two rolls included) and committed with the chunk's last rows."""
    task = evolving(sink, True)  # ids 1 and 2, of V1
    task.put(values_of(V1, *({"id": i, "name": f"n{i}"} for i in range(3, 28))))
    task.put(
        values_of(WITH_NOTE, *({"id": i, "name": f"n{i}", "note": "x"} for i in range(28, 40)))
    )
    table = catalog.load_table("db.evolving")
    assert sorted(r["id"] for r in rows(catalog, "db.evolving")) == list(range(1, 40))
    assert by_id(catalog, "db.evolving", "note") == {
        i: "x" if i >= 28 else None for i in range(1, 40)
    }
    assert len(list(table.scan().plan_files())) >= 5  # 2 + 25 rows: 2 rolls; 12 rows: 1 roll


def test_rows_are_written_with_the_table_as_they_were_fitted_to_it(
    sink: Callable[..., Sink], catalog: Catalog
) -> None:
    """What a roll or a chunk writes with is the table as its rows were fitted to it: the
    evolution a later record brings (which replaces the table's metadata in place, on the
    poll thread) does not reach it."""
    task = evolving(sink, True)
    handle = task.harness.task.handles["db.evolving"]
    before = writer.fitted(handle)
    assert before is not None
    task.put(values_of(WITH_NOTE, {"id": 3, "name": "three", "note": "new"}))
    assert handle.table.schema().find_field("note")
    assert [f.name for f in before.metadata.schema().fields] == ["id", "name"]
    assert before.converter is not handle.converter


def test_a_roll_that_could_not_be_written_is_read_again_and_committed_once(
    sink: Callable[..., Sink], catalog: Catalog, small_rolls: int
) -> None:
    """Rolls whose files cannot be written (the table's data folder replaced by a file)
    fail the chunk that holds them: the partition rewinds to where the chunk started, and
    its records, read again once the storage is back, are in the table once."""
    task = evolving(sink, True)  # ids 1 and 2 committed
    data = Path(catalog.load_table("db.evolving").location().removeprefix("file://")) / "data"
    data.rename(data.with_name("data.saved"))
    data.write_text("not a folder")
    harness, start = task.harness, task.offset
    records = [
        SinkRecord(TOPIC, 0, None, None, V1, value, start + i)
        for i, value in enumerate(
            values_of(V1, *({"id": i, "name": f"n{i}"} for i in range(3, 28)))
        )
    ]
    harness.put(records)  # rolls on the side: the put itself takes every record
    with pytest.raises(RetriableException, match="Iceberg sink: FileExistsError"):
        task.drive(lambda: False)
    data.unlink()
    data.with_name("data.saved").rename(data)
    harness.put([])  # the task's request to read from the chunk's start applied
    assert harness.position(TP) == start
    task.offset = start + len(records)
    harness.put(records)
    task.drive(lambda: harness.commit().get(TP) == task.offset)
    assert sorted(r["id"] for r in rows(catalog, "db.evolving")) == list(range(1, 28))


def test_a_new_optional_field_becomes_a_column(sink: Callable[..., Sink], catalog: Catalog) -> None:
    evolving(sink, True).put(values_of(WITH_NOTE, {"id": 3, "name": "three", "note": "new"}))
    field = catalog.load_table("db.evolving").schema().find_field("note")
    assert (field.field_type, field.required) == (StringType(), False)
    assert by_id(catalog, "db.evolving", "note") == {1: None, 2: None, 3: "new"}


def test_an_int_column_widens_to_long(sink: Callable[..., Sink], catalog: Catalog) -> None:
    big = 2**40
    evolving(sink, True).put(values_of(WIDER_ID, {"id": big, "name": "big"}))
    assert catalog.load_table("db.evolving").schema().find_field("id").field_type == LongType()
    assert by_id(catalog, "db.evolving") == {1: "one", 2: "two", big: "big"}


def test_a_required_column_becomes_optional(sink: Callable[..., Sink], catalog: Catalog) -> None:
    task = evolving(sink, True)  # the column starts required, as the first records have it
    assert catalog.load_table("db.evolving").schema().find_field("name").required
    task.put(values_of(OPTIONAL_NAME, {"id": 3, "name": None}))
    assert not catalog.load_table("db.evolving").schema().find_field("name").required
    assert by_id(catalog, "db.evolving") == {1: "one", 2: "two", 3: None}


def test_without_evolution_a_new_field_is_left_out(
    sink: Callable[..., Sink], catalog: Catalog
) -> None:
    """As Apache's ``RecordConverter`` without a schema update consumer: the table's
    columns are filled from the record, the record's other fields ignored."""
    evolving(sink, False).put(values_of(WITH_NOTE, {"id": 3, "name": "three", "note": "new"}))
    assert [f.name for f in catalog.load_table("db.evolving").schema().fields] == ["id", "name"]
    assert by_id(catalog, "db.evolving") == {1: "one", 2: "two", 3: "three"}


# -- upserts -----------------------------------------------------------------------------------
SOURCE = source_schema_builder("io.debezium.connector.postgresql.Source").build()
ENVELOPE = envelope_schema(f"{TOPIC}.public.items", V1, SOURCE, False)
ENVELOPE_ROW = ENVELOPE.field("after").schema  # type: ignore[union-attr]
KEY32 = SchemaBuilder.struct().name(f"{TOPIC}.Key").field("id", Schema.INT32_SCHEMA).build()


def source_block() -> Struct:
    values = source_values(
        version="2.7.0.Final",
        connector="postgresql",
        name=TOPIC,
        ts_ms=1_700_000_000_000,
        snapshot="false",
        db="shop",
        sequence=None,
        ts_us=None,
        ts_ns=None,
    )
    block = Struct(SOURCE)
    for name, value in values.items():
        block.put(name, value)
    return block


def event(
    op: str, before: tuple[int, str] | None = None, after: tuple[int, str] | None = None
) -> Struct:
    def part(values: tuple[int, str] | None) -> Struct | None:
        return (
            None
            if values is None
            else Struct(ENVELOPE_ROW).put("id", values[0]).put("name", values[1])
        )

    return envelope_value(
        ENVELOPE,
        op=op,
        source=source_block(),
        ts_ms=1_700_000_000_000,
        before=part(before),
        after=part(after),
    )


def upserting(sink: Callable[..., Sink], **props: str) -> Sink:
    return sink(
        **auto(
            **{"iceberg.tables": "db.items", "iceberg.tables.upsert-mode-enabled": "true", **props}
        )
    )


def key32(i: int) -> Struct:
    return Struct(KEY32).put("id", i)


def test_debezium_envelopes_and_tombstones_make_the_table_equal_the_source(
    sink: Callable[..., Sink], catalog: Catalog
) -> None:
    task = upserting(sink, **{"iceberg.tables.default-id-columns": "id"})
    first = [
        event("r", after=(1, "one")),
        event("c", after=(2, "two")),
        event("c", after=(3, "three")),
        event("u", before=(2, "two"), after=(2, "TWO")),
        event("d", before=(1, "one")),
        None,  # the tombstone after the delete
        event("m"),  # a logical decoding message: no row
    ]
    task.put(
        first, schema=ENVELOPE, keys=[key32(i) for i in (1, 2, 3, 2, 1, 1, 9)], key_schema=KEY32
    )
    assert by_id(catalog, "db.items") == {2: "TWO", 3: "three"}
    # later rounds change rows committed earlier
    task.put(
        [
            event("u", before=None, after=(3, "THREE")),
            event("d", before=(2, "TWO")),
            None,
            event("c", after=(1, "back")),
        ],
        schema=ENVELOPE,
        keys=[key32(i) for i in (3, 2, 2, 1)],
        key_schema=KEY32,
    )
    assert by_id(catalog, "db.items") == {1: "back", 3: "THREE"}


def test_a_truncate_empties_the_table_before_the_rows_after_it(
    sink: Callable[..., Sink], catalog: Catalog
) -> None:
    task = upserting(sink, **{"iceberg.tables.default-id-columns": "id"})
    task.put(
        [event("c", after=(i, f"n{i}")) for i in range(1, 4)],
        schema=ENVELOPE,
        keys=[key32(i) for i in range(1, 4)],
        key_schema=KEY32,
    )
    assert by_id(catalog, "db.items") == {1: "n1", 2: "n2", 3: "n3"}
    task.put(
        [
            event("c", after=(4, "n4")),
            event("t"),
            event("c", after=(5, "n5")),
            event("u", after=(2, "again")),
        ],
        schema=ENVELOPE,
        keys=[key32(4), None, key32(5), key32(2)],
        key_schema=KEY32,
    )
    assert by_id(catalog, "db.items") == {2: "again", 5: "n5"}


DELETED = struct_of(
    ("id", Schema.INT32_SCHEMA), ("name", Schema.STRING_SCHEMA), ("__deleted", Schema.STRING_SCHEMA)
)


def test_extract_new_record_states_deleted_marker_and_tombstones_delete_rows(
    sink: Callable[..., Sink], catalog: Catalog
) -> None:
    task = upserting(sink)  # id columns from the record key
    values: list[Any] = values_of(
        DELETED,
        {"id": 1, "name": "one", "__deleted": "false"},
        {"id": 2, "name": "two", "__deleted": "false"},
        {"id": 3, "name": "three", "__deleted": "false"},
        {"id": 1, "name": "one", "__deleted": "true"},
        {"id": 2, "name": "TWO", "__deleted": "false"},
    )
    values.append(None)  # tombstone of 3
    task.put(values, keys=[key32(i) for i in (1, 2, 3, 1, 2, 3)], key_schema=KEY32)
    assert catalog.load_table("db.items").schema().identifier_field_names() == {"id"}
    assert by_id(catalog, "db.items") == {2: "TWO"}


@pytest.mark.parametrize("cdc_field", ["_cdc_op", "__op"])
def test_tabulars_cdc_field_inserts_updates_and_deletes(
    cdc_field: str, sink: Callable[..., Sink], catalog: Catalog
) -> None:
    schema = struct_of(
        ("id", Schema.INT32_SCHEMA),
        ("name", Schema.STRING_SCHEMA),
        (cdc_field, Schema.STRING_SCHEMA),
    )
    task = upserting(
        sink, **{"iceberg.tables.default-id-columns": "id", "iceberg.tables.cdc-field": cdc_field}
    )
    changes = [
        (1, "one", "I"),
        (2, "two", "I"),
        (3, "three", "I"),
        (2, "TWO", "U"),
        (3, "three", "D"),
    ]
    task.put(values_of(schema, *({"id": i, "name": n, cdc_field: op} for i, n, op in changes)))
    assert by_id(catalog, "db.items") == {1: "one", 2: "TWO"}
    task.put(
        values_of(
            schema,
            {"id": 1, "name": "one", cdc_field: "D"},
            {"id": 3, "name": "back", cdc_field: "I"},
        )
    )
    assert by_id(catalog, "db.items") == {2: "TWO", 3: "back"}


def test_id_columns_come_from_the_record_key_when_none_are_configured(
    sink: Callable[..., Sink], catalog: Catalog
) -> None:
    task = upserting(sink)
    task.put(
        [event("c", after=(1, "one")), event("c", after=(2, "two")), event("u", after=(1, "ONE"))],
        schema=ENVELOPE,
        keys=[key32(i) for i in (1, 2, 1)],
        key_schema=KEY32,
    )
    assert catalog.load_table("db.items").schema().identifier_field_names() == {"id"}
    assert by_id(catalog, "db.items") == {1: "ONE", 2: "two"}


# -- types -------------------------------------------------------------------------------------
NESTED = (
    SchemaBuilder.struct()
    .name("nested")
    .field("label", Schema.STRING_SCHEMA)
    .field("scores", SchemaBuilder.array(Schema.INT32_SCHEMA).build())
    .optional()
    .build()
)
TYPES: list[tuple[str, Schema, Any, Any]] = [
    # column, Connect schema, value put, Iceberg type (Apache's SchemaUtils.toIcebergType)
    ("id", Schema.INT64_SCHEMA, 7, LongType()),
    ("i8", Schema.INT8_SCHEMA, -8, IntegerType()),
    ("i16", Schema.INT16_SCHEMA, 1600, IntegerType()),
    ("i32", Schema.INT32_SCHEMA, -(2**31), IntegerType()),
    ("i64", Schema.INT64_SCHEMA, 2**62, LongType()),
    ("f32", Schema.FLOAT32_SCHEMA, 1.5, FloatType()),
    ("f64", Schema.FLOAT64_SCHEMA, 2.25e300, DoubleType()),
    ("flag", Schema.BOOLEAN_SCHEMA, True, BooleanType()),
    ("text", Schema.STRING_SCHEMA, "żółw 🐢", StringType()),
    ("raw", Schema.BYTES_SCHEMA, b"\x00\xffbytes", BinaryType()),
    ("amount", Decimal.schema(3), decimal.Decimal("-12345.678"), DecimalType(38, 3)),
    ("day", Date.SCHEMA, dt.date(2024, 2, 29), DateType()),
    ("at", Time.SCHEMA, dt.time(23, 59, 58, 123000), TimeType()),
    (
        "ts",
        Timestamp.SCHEMA,
        dt.datetime(2024, 2, 29, 12, 0, 1, 5000, tzinfo=dt.timezone.utc),
        TimestamptzType(),
    ),
    ("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build(), ["a", "b"], ListType),
    (
        "attrs",
        SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build(),
        {"x": 1, "y": 2},
        MapType,
    ),
    ("inner", NESTED, "nested", StructType),
    ("maybe", Schema.OPTIONAL_FLOAT64_SCHEMA, None, DoubleType()),
]


def test_every_connect_type_round_trips_into_the_table(
    sink: Callable[..., Sink], catalog: Catalog
) -> None:
    schema = struct_of(*((name, connect) for name, connect, _, _ in TYPES))
    value = Struct(schema)
    for name, _, put, _ in TYPES:
        value.put(
            name,
            Struct(NESTED).put("label", "in").put("scores", [1, 2]) if put == "nested" else put,
        )
    sink(**auto(**{"iceberg.tables": "db.types"})).put([value])
    table_schema = catalog.load_table("db.types").schema()
    for name, _, _, iceberg in TYPES:
        found = table_schema.find_field(name).field_type
        assert (
            (found == iceberg) if not isinstance(iceberg, type) else isinstance(found, iceberg)
        ), name
    (got,) = rows(catalog, "db.types")
    expected = {name: put for name, _, put, _ in TYPES}
    expected["attrs"] = [("x", 1), ("y", 2)]  # Arrow's map: key-value pairs
    expected["inner"] = {"label": "in", "scores": [1, 2]}
    assert got == expected


def test_schemaless_maps_create_a_table_of_inferred_columns(
    sink: Callable[..., Sink], catalog: Catalog
) -> None:
    values = [
        {"id": 1, "name": "one", "score": 1.5, "ok": True, "tags": ["a"], "meta": {"k": "v"}},
        {"id": 2, "name": "two", "score": 2.5, "ok": False, "tags": [], "meta": {"k": "w"}},
    ]
    sink(**auto(**{"iceberg.tables": "db.loose"})).put(values)
    schema = catalog.load_table("db.loose").schema()
    types = {f.name: f.field_type for f in schema.fields}
    assert types["id"] == LongType() and types["name"] == StringType()
    assert types["score"] == DoubleType() and types["ok"] == BooleanType()
    assert isinstance(types["tags"], ListType) and types["tags"].element_type == StringType()
    assert isinstance(types["meta"], StructType)
    assert all(not f.required for f in schema.fields)  # inferred columns are optional
    assert rows(catalog, "db.loose") == values
