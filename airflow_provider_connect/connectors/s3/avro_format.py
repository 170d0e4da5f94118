"""``io.confluent.connect.s3.format.avro.AvroFormat``: Avro container files (``.avro``),
written with fastavro in the Avro schema Confluent's AvroData makes of the Connect schema
(:mod:`airflow_provider_connect.schema_registry.avro_data`, the Avro converter's mapping),
compressed by ``avro.codec`` (snappy through cramjam)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any, cast

from fastavro import parse_schema
from fastavro.write import Writer

from airflow_provider_connect.connect.data import Schema
from airflow_provider_connect.connect.errors import DataException
from airflow_provider_connect.connectors.s3 import config as c
from airflow_provider_connect.connectors.s3.formats import FileWriter, View
from airflow_provider_connect.connectors.s3.storage import Upload
from airflow_provider_connect.schema_registry.avro_data import AvroData, AvroDataConfig


def avro_data(parsed: Mapping[str, Any]) -> AvroData:
    """AvroData configured as the sink's ``connect.meta.data``,
    ``enhanced.avro.schema.support`` and ``allow.optional.map.keys`` say."""
    return AvroData(
        AvroDataConfig(
            connect_meta_data=parsed[c.CONNECT_META_DATA],
            enhanced_schema_support=parsed[c.ENHANCED_AVRO],
            allow_optional_map_keys=parsed[c.ALLOW_OPTIONAL_MAP_KEYS],
        )
    )


class _AvroFile:
    def __init__(self, upload: Upload, data: AvroData, schema: Schema | None, codec: str) -> None:
        if schema is None:
            raise DataException("AvroFormat cannot write schemaless data: a schema is required")
        writer = data.writer(schema)
        self.upload, self.to_avro = upload, writer.encode
        self.writer = Writer(cast(IO[bytes], upload), parse_schema(writer.schema), codec=codec)

    def encode(self, schema: Schema | None, value: Any) -> Any:
        return value if self.to_avro is None else self.to_avro(value)

    def encode_many(self, schema: Schema | None, values: list[Any]) -> list[Any]:
        return values if self.to_avro is None else list(map(self.to_avro, values))

    def append(self, datum: Any) -> None:
        self.writer.write(datum)

    def extend(self, data: list[Any]) -> None:
        write = self.writer.write
        for datum in data:
            write(datum)

    def commit(self) -> None:
        self.writer.flush()
        self.upload.commit()

    def abort(self) -> None:
        self.upload.abort()


class AvroFormat:
    def __init__(self, parsed: Mapping[str, Any], view: View) -> None:
        self.data = avro_data(parsed)
        self.codec: str = parsed[c.AVRO_CODEC]

    @property
    def extension(self) -> str:
        return ".avro"

    def open(self, upload: Upload, schema: Schema | None) -> FileWriter:
        return _AvroFile(upload, self.data, schema, self.codec)
