"""The S3 sink's own configs, with Confluent's names, defaults, validators and messages
(``S3SinkConnectorConfig``, ``StorageSinkConnectorConfig``, ``StorageCommonConfig``), and
the connector-level checks of ``S3SinkConnectorValidator``. The partitioner's configs are
:data:`~.partitioners.PARTITIONER_CONFIG_DEF`, composed with these by the connector.

Deliberate differences from Confluent's, each stated where it is defined: ``storage.class``
defaults to S3Storage (Confluent requires it), ``schema.compatibility`` is validated
(Confluent silently takes an unknown value as NONE), ``parquet.codec=lzo`` is refused (pyarrow
cannot write it), the timezone that ``rotate.schedule.interval.ms`` needs is reported by
``validate()`` too, and three configs of this sink bound what Confluent leaves unbounded:
``s3.connect.timeout.ms``, ``s3.read.timeout.ms`` and ``s3.retry.timeout.ms``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connect.config import (
    ConfigDef,
    ConfigValue,
    Importance,
    Range,
    Type,
    Validator,
)
from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.connectors.s3.partitioners import TIMEZONE

FORMAT_PACKAGE = "io.confluent.connect.s3.format"
FORMATS = {
    "json": f"{FORMAT_PACKAGE}.json.JsonFormat",
    "avro": f"{FORMAT_PACKAGE}.avro.AvroFormat",
    "parquet": f"{FORMAT_PACKAGE}.parquet.ParquetFormat",
    "bytearray": f"{FORMAT_PACKAGE}.bytearray.ByteArrayFormat",
}
"""Each format's short id to its Confluent class name."""
S3_STORAGE = "io.confluent.connect.s3.storage.S3Storage"
DEFAULT_CREDENTIALS_PROVIDER = "software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider"

FORMAT_CLASS = "format.class"
FLUSH_SIZE = "flush.size"
ROTATE_INTERVAL_MS = "rotate.interval.ms"
ROTATE_SCHEDULE_INTERVAL_MS = "rotate.schedule.interval.ms"
SCHEMA_COMPATIBILITY = "schema.compatibility"
RETRY_BACKOFF_MS = "retry.backoff.ms"
PAD_WIDTH = "filename.offset.zero.pad.width"
SCHEMA_CACHE_SIZE = "schema.cache.size"
ENHANCED_AVRO = "enhanced.avro.schema.support"
CONNECT_META_DATA = "connect.meta.data"
ALLOW_OPTIONAL_MAP_KEYS = "allow.optional.map.keys"
AVRO_CODEC = "avro.codec"
PARQUET_CODEC = "parquet.codec"
STORAGE_CLASS = "storage.class"
TOPICS_DIR = "topics.dir"
STORE_URL = "store.url"
DIRECTORY_DELIM = "directory.delim"
FILE_DELIM = "file.delim"
BUCKET = "s3.bucket.name"
REGION = "s3.region"
PART_SIZE = "s3.part.size"
PART_RETRIES = "s3.part.retries"
S3_RETRY_BACKOFF_MS = "s3.retry.backoff.ms"
PATH_STYLE = "s3.path.style.access.enabled"
ACCESS_KEY_ID = "aws.access.key.id"
SECRET_ACCESS_KEY = "aws.secret.access.key"
CREDENTIALS_PROVIDER = "s3.credentials.provider.class"
COMPRESSION_TYPE = "s3.compression.type"
COMPRESSION_LEVEL = "s3.compression.level"
JSON_DECIMAL_FORMAT = "json.decimal.format"
BYTEARRAY_EXTENSION = "format.bytearray.extension"
BYTEARRAY_SEPARATOR = "format.bytearray.separator"
BEHAVIOR_ON_NULL_VALUES = "behavior.on.null.values"
REPORT_NULLS_TO_DLQ = "report.null.values.to.dlq"
TOMBSTONE_PARTITION = "tombstone.encoded.partition"
STORE_KEYS = "store.kafka.keys"
STORE_HEADERS = "store.kafka.headers"
KEYS_FORMAT_CLASS = "keys.format.class"
HEADERS_FORMAT_CLASS = "headers.format.class"
ROTATE_ON_PARTITION_CHANGE = "rotate.file.on.partition.change"
CONNECT_TIMEOUT_MS = "s3.connect.timeout.ms"
READ_TIMEOUT_MS = "s3.read.timeout.ms"
RETRY_TIMEOUT_MS = "s3.retry.timeout.ms"

MIN_PART_SIZE = 5 * 1024 * 1024
PARQUET_CODECS = ("none", "snappy", "gzip", "lzo", "brotli", "lz4", "zstd", "lz4_raw")
COMPATIBILITIES = ("NONE", "BACKWARD", "FORWARD", "FULL")


class FormatClass(Validator):
    """A format named by Confluent's class name or its simple name (``JsonFormat``)."""

    def __init__(self, *formats: str) -> None:
        self.formats = formats

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is not None and format_id(value) not in self.formats:
            raise ConfigException.invalid(name, value, f"Class {value} could not be found.")

    def __str__(self) -> str:
        return ", ".join(FORMATS[f] for f in self.formats)


def format_id(name: str) -> str | None:
    """``json``, ``avro``, ``parquet`` or ``bytearray`` for a format's class name or simple
    name; None for any other name."""
    simple = name.strip().rpartition(".")[2]
    for fid, full in FORMATS.items():
        if simple == full.rpartition(".")[2]:
            return fid
    return None


class OneOf(Validator):
    """One of ``valid`` after trimming (and lowercasing unless ``case_sensitive``), with
    Confluent's "Value must be one of: [...]" message."""

    def __init__(self, *valid: str, case_sensitive: bool = True) -> None:
        self.valid, self.case_sensitive = valid, case_sensitive

    def ensure_valid(self, name: str, value: Any) -> None:
        text = str(value).strip() if value is not None else None
        if text is not None and not self.case_sensitive:
            text = text.lower()
        if text not in self.valid:
            raise ConfigException.invalid(
                name, value, f"Value must be one of: [{', '.join(self.valid)}]"
            )

    def __str__(self) -> str:
        return f"[{', '.join(self.valid)}]"


class PartSize(Validator):
    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigException.invalid(name, value, "Part size must be non-null")
        if value < MIN_PART_SIZE:
            raise ConfigException.invalid(
                name, value, f"Part size must be at least: {MIN_PART_SIZE} bytes (5MB)"
            )

    def __str__(self) -> str:
        return f"[{MIN_PART_SIZE},...]"


class StorageClass(Validator):
    def ensure_valid(self, name: str, value: Any) -> None:
        if value.strip().rpartition(".")[2] != "S3Storage":
            raise ConfigException.invalid(name, value, f"Class {value} could not be found.")

    def __str__(self) -> str:
        return S3_STORAGE


class CredentialsProvider(Validator):
    """Only the AWS default chain (environment, profile, container, instance role) is
    supported: a custom Java provider class cannot run here."""

    def ensure_valid(self, name: str, value: Any) -> None:
        if value.strip().rpartition(".")[2] != "DefaultCredentialsProvider":
            raise ConfigException.invalid(
                name,
                value,
                "Only DefaultCredentialsProvider (the AWS default chain) is supported; "
                "set aws.access.key.id and aws.secret.access.key for static keys",
            )

    def __str__(self) -> str:
        return DEFAULT_CREDENTIALS_PROVIDER


def _define(config: ConfigDef, group: str, *keys: tuple[Any, ...]) -> ConfigDef:
    for order, (name, type_, default, validator, importance, doc) in enumerate(keys):
        config.define(
            name, type_, default, validator, importance, doc, group=group, order_in_group=order
        )
    return config


S3_CONFIG_DEF = _define(
    ConfigDef(),
    "Connector",
    (
        FORMAT_CLASS,
        Type.STRING,
        ConfigDef.NO_DEFAULT,
        FormatClass(*FORMATS),
        Importance.HIGH,
        "The format class to use when writing data to the store.",
    ),
    (
        FLUSH_SIZE,
        Type.INT,
        ConfigDef.NO_DEFAULT,
        None,
        Importance.HIGH,
        "Number of records written to store before invoking file commits (per topic partition, "
        "over all the files it has open).",
    ),
    (
        ROTATE_INTERVAL_MS,
        Type.LONG,
        -1,
        None,
        Importance.HIGH,
        "The time interval in milliseconds to invoke file commits, by the timestamps the "
        "partitioner extracts (time-based partitioners only).",
    ),
    (
        ROTATE_SCHEDULE_INTERVAL_MS,
        Type.LONG,
        -1,
        None,
        Importance.MEDIUM,
        "The time interval in milliseconds to periodically invoke file commits, by the wall "
        "clock in 'timezone' (not exactly-once).",
    ),
    (
        SCHEMA_COMPATIBILITY,
        Type.STRING,
        "NONE",
        OneOf(*COMPATIBILITIES),
        Importance.HIGH,
        "The schema compatibility rule to use when the connector is observing schema changes.",
    ),
    (
        RETRY_BACKOFF_MS,
        Type.LONG,
        5000,
        Range.at_least(0),
        Importance.LOW,
        "The retry backoff in milliseconds after a retriable storage failure.",
    ),
    (
        RETRY_TIMEOUT_MS,
        Type.LONG,
        300000,
        Range.at_least(0),
        Importance.MEDIUM,
        "How long a topic partition may keep failing with retriable storage errors before the "
        "task fails (Confluent's connector retries forever).",
    ),
    (
        PAD_WIDTH,
        Type.INT,
        10,
        Range.at_least(0),
        Importance.LOW,
        "Width to zero-pad offsets in the file names to (0: no padding).",
    ),
    (
        SCHEMA_CACHE_SIZE,
        Type.INT,
        1000,
        None,
        Importance.LOW,
        "The size of the schema cache used in the Avro converter.",
    ),
    (
        ENHANCED_AVRO,
        Type.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "Enable enhanced Avro schema support in AvroConverter: Enum symbol preservation and "
        "Package Name awareness.",
    ),
    (
        CONNECT_META_DATA,
        Type.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "Allow connect converter to add its meta data to the output schema.",
    ),
    (
        ALLOW_OPTIONAL_MAP_KEYS,
        Type.BOOLEAN,
        False,
        None,
        Importance.LOW,
        "Allow optional string map key when converting from Connect Schema to Avro Schema.",
    ),
    (
        AVRO_CODEC,
        Type.STRING,
        "null",
        OneOf("null", "deflate", "snappy", "bzip2"),
        Importance.LOW,
        "The Avro compression codec to be used for output files.",
    ),
    (
        PARQUET_CODEC,
        Type.STRING,
        "snappy",
        OneOf(*PARQUET_CODECS),
        Importance.LOW,
        "The Parquet compression codec to be used for output files (lzo is refused: pyarrow "
        "cannot write it).",
    ),
    (
        ROTATE_ON_PARTITION_CHANGE,
        Type.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "Rotate all open files when a record's encoded partition differs from the previous "
        "record's (time-based rotation only).",
    ),
)
_define(
    S3_CONFIG_DEF,
    "Storage",
    (
        STORAGE_CLASS,
        Type.STRING,
        S3_STORAGE,
        StorageClass(),
        Importance.HIGH,
        "The underlying storage layer (only S3Storage; required in Confluent's connector, "
        "defaulted here).",
    ),
    (
        TOPICS_DIR,
        Type.STRING,
        "topics",
        None,
        Importance.HIGH,
        "Top level directory to store the data ingested from Kafka (blank: none).",
    ),
    (
        STORE_URL,
        Type.STRING,
        None,
        None,
        Importance.HIGH,
        "The S3 endpoint URL (any S3-compatible endpoint); https:// when it has no scheme. "
        "Unset: AWS's endpoint of s3.region.",
    ),
    (DIRECTORY_DELIM, Type.STRING, "/", None, Importance.MEDIUM, "Directory delimiter pattern"),
    (FILE_DELIM, Type.STRING, "+", None, Importance.MEDIUM, "File delimiter pattern"),
)
_define(
    S3_CONFIG_DEF,
    "S3",
    (BUCKET, Type.STRING, ConfigDef.NO_DEFAULT, None, Importance.HIGH, "The S3 Bucket."),
    (
        REGION,
        Type.STRING,
        "us-west-2",
        None,
        Importance.MEDIUM,
        "The AWS region to be used the connector.",
    ),
    (
        PART_SIZE,
        Type.INT,
        26214400,
        PartSize(),
        Importance.HIGH,
        "The Part Size in S3 Multi-part Uploads (an object of one part is written with one "
        "PutObject).",
    ),
    (
        PART_RETRIES,
        Type.INT,
        3,
        Range.at_least(0),
        Importance.MEDIUM,
        "Maximum number of attempts of every S3 request (0 and 1: one attempt).",
    ),
    (
        S3_RETRY_BACKOFF_MS,
        Type.LONG,
        200,
        Range.at_least(0),
        Importance.LOW,
        "Base of the full-jitter exponential backoff between attempts of an S3 request.",
    ),
    (
        CONNECT_TIMEOUT_MS,
        Type.INT,
        2000,
        Range.at_least(1),
        Importance.LOW,
        "How long to wait for a connection to the S3 endpoint.",
    ),
    (
        READ_TIMEOUT_MS,
        Type.INT,
        30000,
        Range.at_least(1),
        Importance.LOW,
        "How long to wait for an answer of the S3 endpoint.",
    ),
    (
        PATH_STYLE,
        Type.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "Path-style access (bucket in the path) instead of virtual-hosted-style.",
    ),
    (
        ACCESS_KEY_ID,
        Type.STRING,
        "",
        None,
        Importance.HIGH,
        "The AWS access key ID (with aws.secret.access.key; unset: the AWS default chain).",
    ),
    (
        SECRET_ACCESS_KEY,
        Type.PASSWORD,
        None,
        None,
        Importance.HIGH,
        "The secret access key used to authenticate with AWS.",
    ),
    (
        CREDENTIALS_PROVIDER,
        Type.STRING,
        DEFAULT_CREDENTIALS_PROVIDER,
        CredentialsProvider(),
        Importance.LOW,
        "Credentials provider: only the AWS default chain.",
    ),
    (
        COMPRESSION_TYPE,
        Type.STRING,
        "none",
        OneOf("none", "gzip"),
        Importance.LOW,
        "Compression type for files written to S3 (JSON and ByteArray formats).",
    ),
    (
        COMPRESSION_LEVEL,
        Type.INT,
        -1,
        Range.between(-1, 9),
        Importance.LOW,
        "Compression level for gzip (-1: zlib's default).",
    ),
    (
        JSON_DECIMAL_FORMAT,
        Type.STRING,
        "BASE64",
        OneOf("base64", "numeric", case_sensitive=False),
        Importance.MEDIUM,
        "How decimals are written in JSON: BASE64 or NUMERIC.",
    ),
    (
        BYTEARRAY_EXTENSION,
        Type.STRING,
        ".bin",
        None,
        Importance.LOW,
        "Output file extension for ByteArrayFormat.",
    ),
    (
        BYTEARRAY_SEPARATOR,
        Type.STRING,
        None,
        None,
        Importance.LOW,
        "String inserted between records for ByteArrayFormat (unset: a newline).",
    ),
    (
        BEHAVIOR_ON_NULL_VALUES,
        Type.STRING,
        "fail",
        OneOf("ignore", "fail", "write", case_sensitive=False),
        Importance.LOW,
        "How to handle records with a null value (tombstones): ignore, fail or write (keys "
        "and headers only, under tombstone.encoded.partition).",
    ),
    (
        REPORT_NULLS_TO_DLQ,
        Type.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "With behavior.on.null.values=ignore, report the skipped records to the dead letter queue.",
    ),
    (
        TOMBSTONE_PARTITION,
        Type.STRING,
        "tombstone",
        None,
        Importance.LOW,
        "The encoded partition of tombstones written with behavior.on.null.values=write.",
    ),
    (
        STORE_KEYS,
        Type.BOOLEAN,
        False,
        None,
        Importance.LOW,
        "Write record keys to files next to the values' (.keys.<ext>).",
    ),
    (
        STORE_HEADERS,
        Type.BOOLEAN,
        False,
        None,
        Importance.LOW,
        "Write record headers to files next to the values' (.headers.<ext>).",
    ),
    (
        KEYS_FORMAT_CLASS,
        Type.STRING,
        FORMATS["avro"],
        FormatClass(*FORMATS),
        Importance.LOW,
        "The format of the keys files.",
    ),
    (
        HEADERS_FORMAT_CLASS,
        Type.STRING,
        FORMATS["avro"],
        FormatClass("json", "avro", "parquet"),
        Importance.LOW,
        "The format of the headers files.",
    ),
)


LZO_REFUSED = (
    f"Invalid value lzo for configuration {PARQUET_CODEC}: LZO is not supported: "
    "pyarrow cannot write it"
)
"""Why ``parquet.codec=lzo`` is refused, at validate and at start."""


SCHEDULE_NEEDS_TIMEZONE = (
    "timezone configuration must be set when using rotate.schedule.interval.ms"
)


def refused_at_start(parsed: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The rules a task's start refuses too (Confluent's config constructor throws the
    timezone one; pyarrow cannot write lzo): each as its message and the key it names."""
    refused = []
    if parsed[PARQUET_CODEC].strip() == "lzo":
        refused.append((LZO_REFUSED, PARQUET_CODEC))
    if parsed[ROTATE_SCHEDULE_INTERVAL_MS] > 0 and not (parsed[TIMEZONE] or "").strip():
        refused.append((SCHEDULE_NEEDS_TIMEZONE, ROTATE_SCHEDULE_INTERVAL_MS))
    return refused


def _gzip_message(what: str, format_class: str) -> str:
    return f"Compression Type gzip not valid for {what} format class: ( {format_class} )."


def check_connector_config(parsed: Mapping[str, Any], values: dict[str, ConfigValue]) -> None:
    """Adds the errors of Confluent's ``S3SinkConnectorValidator`` (and this sink's own:
    lzo, the scheduled rotation's timezone) to ``values``, on every key each names."""

    def error(message: str, *keys: str) -> None:
        for key in keys:
            if key in values:
                values[key].add_error_message(message)

    if parsed[COMPRESSION_TYPE].strip() == "gzip":
        views: list[tuple[str, str, str | None]] = [("data", FORMAT_CLASS, None)]
        if parsed[STORE_KEYS]:
            views.append(("keys", KEYS_FORMAT_CLASS, STORE_KEYS))
        if parsed[STORE_HEADERS]:
            views.append(("headers", HEADERS_FORMAT_CLASS, STORE_HEADERS))
        for what, key, flag in views:
            if format_id(parsed[key]) not in ("json", "bytearray"):
                keys = [key, COMPRESSION_TYPE] + ([flag] if flag else [])
                error(_gzip_message(what, FORMATS[format_id(parsed[key]) or "avro"]), *keys)
    if parsed[BEHAVIOR_ON_NULL_VALUES].lower() == "write" and not parsed[STORE_KEYS]:
        error(
            "Writing Kafka record keys to storage is mandatory when tombstone writing is enabled.",
            STORE_KEYS,
            BEHAVIOR_ON_NULL_VALUES,
        )
    for message, key in refused_at_start(parsed):
        error(message, key)
