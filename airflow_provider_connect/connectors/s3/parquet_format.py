"""``io.confluent.connect.s3.format.parquet.ParquetFormat``: Parquet files written with
pyarrow, their columns mapped as Confluent maps them (Connect schema → AvroData's Avro schema
→ Parquet, as parquet-avro does), the Avro schema kept in the footer (``parquet.avro.schema``)
for Avro-aware readers. The value must be a Struct; keys and headers files are enveloped in
``RecordKey{key}`` and ``RecordHeaders{headers}``.

Differences from parquet-avro: lists are written in Parquet's 3-level form (readers accept
both), ``lz4`` is written as LZ4_RAW (pyarrow has no Hadoop LZ4), ``lzo`` is refused, and
unions of two or more non-null types are refused.
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Callable, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.data import Type as SchemaType
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connectors.s3 import config as c
from airflow_provider_connect.connectors.s3.avro_format import avro_data
from airflow_provider_connect.connectors.s3.formats import KEYS, VALUE, FileWriter, View
from airflow_provider_connect.connectors.s3.storage import Upload
from airflow_provider_connect.schema_registry.avro_data import AvroData

EXTENSIONS = {
    "none": "",
    "snappy": ".snappy",
    "gzip": ".gz",
    "zstd": ".zstd",
    "lz4": ".lz4hadoop",
    "lz4_raw": ".lz4raw",
    "brotli": ".br",
}
"""Confluent's extension of each codec pyarrow writes (``lzo`` is refused at validate and start)."""
_PYARROW_CODECS = {"none": "none", "lz4_raw": "lz4"}
_PRIMITIVES = {
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "bytes": pa.binary(),
}
_LOGICAL = {
    "date": pa.date32(),
    "time-millis": pa.time32("ms"),
    "timestamp-millis": pa.timestamp("ms", tz="UTC"),
}
Convert = Callable[[Any], Any]


def arrow_of(avro: Any, named: dict[str, Any]) -> tuple[pa.DataType, bool, Convert | None]:
    """The Arrow type of an Avro schema, whether it is nullable, and the conversion of a
    datum fastavro would take to what Arrow takes (None: unchanged)."""
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        if len(branches) != 1:
            raise DataException(f"Unions of several types cannot be written to Parquet: {avro}")
        t, _, convert = arrow_of(branches[0], named)
        return t, True, convert
    if isinstance(avro, str):
        if avro in named:
            return arrow_of(named[avro], named)
        return _PRIMITIVES[avro], False, None
    kind, logical = avro["type"], avro.get("logicalType")
    if logical == "decimal":
        precision, scale = int(avro.get("precision", 64)), int(avro.get("scale", 0))
        make = pa.decimal128 if precision <= 38 else pa.decimal256
        return make(precision, scale), False, _decimal(scale)
    if logical in _LOGICAL and kind in ("int", "long"):
        return _LOGICAL[logical], False, None
    if kind == "record":
        named[avro["name"]] = avro
        fields, converts = [], {}
        for f in avro["fields"]:
            t, nullable, convert = arrow_of(f["type"], named)
            fields.append(pa.field(f["name"], t, nullable=nullable))
            if convert is not None:
                converts[f["name"]] = convert
        return pa.struct(fields), False, _record(converts) if converts else None
    if kind == "array":
        t, nullable, convert = arrow_of(avro["items"], named)
        return pa.list_(pa.field("element", t, nullable=nullable)), False, _items(convert)
    if kind == "map":
        t, nullable, convert = arrow_of(avro["values"], named)
        return (
            pa.map_(pa.string(), pa.field("value", t, nullable=nullable)),
            False,
            _values(convert),
        )
    if kind == "enum":
        return pa.string(), False, None
    if kind == "fixed":
        named[avro["name"]] = avro
        return pa.binary(int(avro["size"])), False, None
    return arrow_of(kind, named)


def _decimal(scale: int) -> Convert:
    def convert(data: Any) -> decimal.Decimal:
        return decimal.Decimal(int.from_bytes(data, "big", signed=True)).scaleb(-scale)

    return convert


def _record(converts: dict[str, Convert]) -> Convert:
    def convert(data: dict[str, Any]) -> dict[str, Any]:
        return {
            k: (converts[k](v) if k in converts and v is not None else v) for k, v in data.items()
        }

    return convert


def _items(convert: Convert | None) -> Convert | None:
    if convert is None:
        return None
    return lambda data: [None if v is None else convert(v) for v in data]


def _values(convert: Convert | None) -> Convert | None:
    if convert is None:
        return None
    return lambda data: {k: None if v is None else convert(v) for k, v in data.items()}


def _envelope(view: View, schema: Schema | None) -> Schema:
    """The struct a keys or headers file holds per record."""
    assert schema is not None
    name, field = ("RecordKey", "key") if view is KEYS else ("RecordHeaders", "headers")
    return SchemaBuilder.struct().name(name).field(field, schema).build()


class _ParquetFile:
    def __init__(
        self, upload: Upload, data: AvroData, schema: Schema | None, view: View, codec: str
    ) -> None:
        if schema is None:
            raise DataException("ParquetFormat cannot write schemaless data: a schema is required")
        self.view = view
        self.schema = schema if view is VALUE else _envelope(view, schema)
        if self.schema.type is not SchemaType.STRUCT:
            raise DataException(f"ParquetFormat writes Structs, not {self.schema.type.name}")
        writer = data.writer(self.schema)
        arrow, _, self.convert = arrow_of(writer.schema, {})
        self.arrow_schema = pa.schema(
            list(arrow),
            metadata={
                "parquet.avro.schema": json.dumps(writer.schema),
                "writer.model.name": "avro",
            },
        )
        self.to_avro, self.upload, self.codec = writer.encode, upload, codec
        self.rows: list[Any] = []

    def encode(self, schema: Schema | None, value: Any) -> Any:
        if self.view is not VALUE:
            value = Struct(self.schema).put(self.schema.fields[0].name, value)  # type: ignore[index]
        elif not isinstance(value, Struct):
            raise DataException(f"ParquetFormat writes Structs, not {type(value).__name__}")
        datum = value if self.to_avro is None else self.to_avro(value)
        return datum if self.convert is None else self.convert(datum)

    def encode_many(self, schema: Schema | None, values: list[Any]) -> list[Any]:
        encode = self.encode
        return [encode(schema, v) for v in values]

    def append(self, datum: Any) -> None:
        self.rows.append(datum)

    def extend(self, data: list[Any]) -> None:
        self.rows.extend(data)

    def commit(self) -> None:
        table = pa.Table.from_pylist(self.rows, schema=self.arrow_schema)
        pq.write_table(table, self.upload, compression=self.codec)
        self.upload.commit()

    def abort(self) -> None:
        self.rows.clear()
        self.upload.abort()


class ParquetFormat:
    def __init__(self, parsed: Mapping[str, Any], view: View) -> None:
        self.data, self.view = avro_data(parsed), view
        self.codec_name: str = parsed[c.PARQUET_CODEC].strip()

    @property
    def extension(self) -> str:
        return EXTENSIONS[self.codec_name] + ".parquet"

    def open(self, upload: Upload, schema: Schema | None) -> FileWriter:
        codec = _PYARROW_CODECS.get(self.codec_name, self.codec_name)
        return _ParquetFile(upload, self.data, schema, self.view, codec)
