"""What goes into the objects: Confluent's formats (JSON, ByteArray, Avro, Parquet), their
extensions, and the views of a record each file holds (the value, the key or the headers).

A :class:`FileWriter` writes the records of one object into an :class:`~.storage.Upload`:
:meth:`FileWriter.encode` makes a record's datum (raising DataException, with nothing
written, when it cannot), :meth:`FileWriter.append` adds it; its :meth:`FileWriter.commit`
finishes the format (gzip trailer, Avro blocks, Parquet footer) and makes the object
visible, whole; :meth:`FileWriter.abort` discards it. Every object holds
records of one schema (the writer rotates on a schema change).
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.data import Type as SchemaType
from airflow_provider_connect.connect.errors import ConnectException, DataException
from airflow_provider_connect.connect.json import (
    DECIMAL_FORMAT_CONFIG,
    SCHEMAS_CACHE_SIZE_CONFIG,
    SCHEMAS_ENABLE_CONFIG,
    JsonConverter,
)
from airflow_provider_connect.connect.sink import SinkRecord
from airflow_provider_connect.connectors.s3 import config as c
from airflow_provider_connect.connectors.s3.storage import Upload

HEADER_SCHEMA = SchemaBuilder.array(
    SchemaBuilder.struct()
    .field("key", SchemaBuilder.string().build())
    .field("value", SchemaBuilder.string().optional().build())
    .build()
).build()
"""A record's headers, as Confluent's headers view writes them: one (key, string) per header."""


class FileWriter(Protocol):
    def encode(self, schema: Schema | None, value: Any) -> Any: ...

    def encode_many(self, schema: Schema | None, values: list[Any]) -> list[Any]:
        """The data of ``values`` as :meth:`encode` makes them, one each; raises when any
        cannot be encoded (nothing written then)."""
        ...

    def append(self, datum: Any) -> None: ...

    def extend(self, data: list[Any]) -> None:
        """:meth:`append` of each datum, in order."""
        ...

    def commit(self) -> None: ...

    def abort(self) -> None: ...


class Format(Protocol):
    """A file format: its extension (Confluent's) and how to open a file of it."""

    @property
    def extension(self) -> str: ...

    def open(self, upload: Upload, schema: Schema | None) -> FileWriter: ...


@dataclass(frozen=True)
class View:
    """Which part of a record a file holds: ``""`` the value, ``.keys`` or ``.headers``."""

    suffix: str

    def data(self, record: SinkRecord) -> tuple[Schema | None, Any]:
        if self.suffix == ".keys":
            if record.key is None:
                raise DataException(f"Key cannot be null for SinkRecord: {_describe(record)} ")
            return record.key_schema, record.key
        if self.suffix == ".headers":
            headers = list(record.headers)
            if not headers:
                raise DataException(f"Headers cannot be null for SinkRecord: {_describe(record)} ")
            items = [
                Struct(HEADER_SCHEMA.value_schema).put("key", h.key).put("value", _text(h.value))  # type: ignore[arg-type]
                for h in headers
            ]
            return HEADER_SCHEMA, items
        return record.value_schema, record.value


VALUE, KEYS, HEADERS = View(""), View(".keys"), View(".headers")


def _describe(record: SinkRecord) -> str:
    return (
        f"SinkRecord{{kafkaOffset={record.kafka_offset}, topic='{record.topic}', "
        f"kafkaPartition={record.kafka_partition}}}"
    )


def _text(value: Any) -> str | None:
    """A header value as text (Connect's ``Values.convertToString`` for the usual types)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return orjson.dumps(value, default=str).decode()


class _Compressed:
    """An upload behind gzip (``s3.compression.type=gzip``): one gzip stream per object."""

    def __init__(self, upload: Upload, gzip_level: int | None) -> None:
        self.upload = upload
        self.stream: Any = (
            upload
            if gzip_level is None
            else gzip.GzipFile(fileobj=upload, mode="wb", compresslevel=gzip_level)
        )

    def finish(self) -> None:
        if self.stream is not self.upload:
            self.stream.close()
        self.upload.commit()


_LINES_CHUNK = 1 << 20
"""Encoded lines are handed to the upload (or gzip) about a MiB at a time."""


class _LinesWriter:
    """Records as bytes, each followed by a separator, into a (maybe gzipped) upload.

    ``encode`` makes a record's line (a record that cannot be is refused then), and
    ``encode_many`` the lines of several (each through ``encode`` when not given); the lines
    go to the upload in chunks of about :data:`_LINES_CHUNK` bytes, joined, and the rest at
    :meth:`commit`."""

    def __init__(
        self,
        upload: Upload,
        encode: Callable[[Schema | None, Any], bytes],
        separator: bytes,
        gzip_level: int | None,
        encode_many: Callable[[Schema | None, list[Any]], list[bytes]] | None = None,
    ) -> None:
        self.out = _Compressed(upload, gzip_level)
        self.encode, self.separator = encode, separator
        self.encode_many = encode_many or (
            lambda schema, values: [encode(schema, v) for v in values]
        )
        self.lines: list[bytes] = []
        self.pending = 0  # bytes in self.lines

    def append(self, line: bytes) -> None:
        self.lines.append(line)
        self.pending += len(line)
        if self.pending >= _LINES_CHUNK:
            self._hand_over()

    def extend(self, lines: list[bytes]) -> None:
        self.lines.extend(lines)
        self.pending += sum(map(len, lines))
        if self.pending >= _LINES_CHUNK:
            self._hand_over()

    def _hand_over(self) -> None:
        separator = self.separator
        self.out.stream.write(separator.join(self.lines) + separator)
        self.lines.clear()
        self.pending = 0

    def commit(self) -> None:
        if self.lines:
            self._hand_over()
        self.out.finish()

    def abort(self) -> None:
        self.lines.clear()
        self.out.upload.abort()


def _gzip_level(parsed: Mapping[str, Any]) -> int | None:
    if parsed[c.COMPRESSION_TYPE].strip() != "gzip":
        return None
    level: int = parsed[c.COMPRESSION_LEVEL]
    return 6 if level == -1 else level


def _compression_extension(parsed: Mapping[str, Any]) -> str:
    return ".gz" if _gzip_level(parsed) is not None else ""


class JsonFormat:
    """``io.confluent.connect.s3.format.json.JsonFormat``: one JSON document per line
    (``.json``, ``.json.gz``), Structs through the JsonConverter without envelope, other
    values as plain JSON; headers enveloped as ``{"headers": [{"key", "value"}, …]}``."""

    def __init__(self, parsed: Mapping[str, Any], view: View) -> None:
        self.parsed, self.view = parsed, view
        self.converter = JsonConverter()
        self.converter.configure(
            {
                SCHEMAS_ENABLE_CONFIG: "false",
                SCHEMAS_CACHE_SIZE_CONFIG: str(parsed[c.SCHEMA_CACHE_SIZE]),
                DECIMAL_FORMAT_CONFIG: parsed[c.JSON_DECIMAL_FORMAT].upper(),
            },
            is_key=view is KEYS,
        )

    @property
    def extension(self) -> str:
        return ".json" + _compression_extension(self.parsed)

    def _encode(self, schema: Schema | None, value: Any) -> bytes:
        return self.converter.from_connect_data("", schema, value) or b"null"

    def _encode_many(self, schema: Schema | None, values: list[Any]) -> list[bytes]:
        lines = self.converter.from_connect_values("", schema, values)
        if None in lines:  # a null without a schema: written as null
            return [b or b"null" for b in lines]
        return lines  # type: ignore[return-value]  # no None in it

    def _encode_headers(self, schema: Schema | None, value: Any) -> bytes:
        return b'{"headers":' + self._encode(schema, value) + b"}"

    def open(self, upload: Upload, schema: Schema | None) -> FileWriter:
        gzip_level = _gzip_level(self.parsed)
        if self.view is HEADERS:
            return _LinesWriter(upload, self._encode_headers, b"\n", gzip_level)
        return _LinesWriter(upload, self._encode, b"\n", gzip_level, self._encode_many)


class ByteArrayFormat:
    """``io.confluent.connect.s3.format.bytearray.ByteArrayFormat``: each value's bytes then
    ``format.bytearray.separator`` (a newline unless set), unescaped."""

    def __init__(self, parsed: Mapping[str, Any], view: View) -> None:
        self.parsed = parsed
        separator = parsed[c.BYTEARRAY_SEPARATOR]
        self.separator = ("\n" if separator is None else separator).encode()

    @property
    def extension(self) -> str:
        return str(self.parsed[c.BYTEARRAY_EXTENSION]) + _compression_extension(self.parsed)

    @staticmethod
    def _encode(schema: Schema | None, value: Any) -> bytes:
        if schema is not None and schema.type is not SchemaType.BYTES:
            raise DataException(f"Invalid schema type for ByteArrayFormat: {schema.type}")
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise DataException(f"ByteArrayFormat is not compatible with {type(value).__name__}")
        return bytes(value)

    def open(self, upload: Upload, schema: Schema | None) -> FileWriter:
        return _LinesWriter(upload, self._encode, self.separator, _gzip_level(self.parsed))


def make_format(format_class: str, parsed: Mapping[str, Any], view: View) -> Format:
    """The format named by ``format_class`` (a Confluent class name or its simple name) for
    a view; ConnectException for any other name (the configs' validators refuse them first)."""
    format_id = c.format_id(format_class)
    if format_id == "json":
        return JsonFormat(parsed, view)
    if format_id == "bytearray":
        return ByteArrayFormat(parsed, view)
    if format_id == "avro":
        from airflow_provider_connect.connectors.s3.avro_format import AvroFormat

        return AvroFormat(parsed, view)
    if format_id == "parquet":
        from airflow_provider_connect.connectors.s3.parquet_format import ParquetFormat

        return ParquetFormat(parsed, view)
    raise ConnectException(
        f"Class {format_class} could not be found: the S3 sink's formats are "
        f"{', '.join(c.FORMATS.values())}"
    )
