"""Confluent's storage partitioners: where in the bucket each record's file goes.

A partitioner maps a record to an *encoded partition* (``partition=3``, ``int=16/boolean=true``,
``year=2024/month=05/day=08/hour=23``); the object key of a file is then
``[topics.dir D] partitioned_path(topic, encoded) D topic F partition F offset ext``.
``partitioner.class`` names one of Confluent's partitioners, by its class name
(``io.confluent.connect.storage.partitioner.HourlyPartitioner``) or its simple name:

* DefaultPartitioner: ``partition=<kafka partition>``.
* FieldPartitioner: ``name=value`` for each of ``partition.field.name`` (dotted paths into the
  Struct value), joined by ``directory.delim``.
* TimeBasedPartitioner: the start of the record's ``partition.duration.ms`` bucket, counted in
  ``timezone``'s local time, printed with the Joda pattern ``path.format``; the record's time
  comes from ``timestamp.extractor``.
* DailyPartitioner, HourlyPartitioner: TimeBasedPartitioner with a fixed duration and pattern.

Confluent checks the time-based settings when a task starts; :func:`validate_partitioner`
reports the same errors, with the same messages, when a configuration is validated.
Differences: other partitioner classes are refused (Confluent loads any class), and text in
``path.format`` (month or day names, AM/PM, era) needs an English ``locale``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from airflow_provider_connect.connect.config import (
    ConfigDef,
    ConfigKey,
    Importance,
    LambdaValidator,
    Recommender,
    Type,
    Width,
)
from airflow_provider_connect.connect.data import Schema, Struct
from airflow_provider_connect.connect.data import Type as SchemaType
from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.connect.sink import SinkRecord
from airflow_provider_connect.connectors.s3.path_format import PathFormat, Zone, zone_for_id
from airflow_provider_connect.connectors.s3.timestamps import (
    PartitionException,
    RecordFieldTimestampExtractor,
    TimestampExtractor,
    extractor_class_name,
    timestamp_extractor,
)

__all__ = [
    "PARTITIONER_CONFIG_DEF",
    "PartitionException",
    "Partitioner",
    "partitioner_from_config",
    "validate_partitioner",
]

PACKAGE = "io.confluent.connect.storage.partitioner."
DEFAULT, FIELD, TIME_BASED, DAILY, HOURLY = (
    "DefaultPartitioner",
    "FieldPartitioner",
    "TimeBasedPartitioner",
    "DailyPartitioner",
    "HourlyPartitioner",
)
PARTITIONER_NAMES = (DEFAULT, HOURLY, DAILY, TIME_BASED, FIELD)


class Partitioner(Protocol):
    """What the S3 sink asks of a partitioner. ``now_ms`` is the batch's wall clock."""

    def encode_partition(self, record: SinkRecord, now_ms: int) -> str:
        """The record's encoded partition; raises PartitionException (or DataException for a
        field missing from the schema) when it has none."""
        ...

    def partitioned_path(self, topic: str, encoded_partition: str) -> str:
        """``topic`` + ``directory.delim`` + ``encoded_partition``."""
        ...

    @property
    def time_based(self) -> bool:
        """Whether partitions are time buckets (``rotate.interval.ms`` applies only then)."""
        ...

    @property
    def fixed_per_topic_partition(self) -> bool:
        """Whether every record of a topic partition has the same encoded partition."""
        ...

    def timestamp(self, record: SinkRecord, now_ms: int) -> int | None:
        """The record's extracted time for a time-based partitioner (PartitionException when it
        has none), None for the others."""
        ...


class DefaultPartitioner:
    """``partition=<kafka partition>``."""

    time_based = False
    fixed_per_topic_partition = True

    def __init__(self, directory_delim: str) -> None:
        self.directory_delim = directory_delim

    def encode_partition(self, record: SinkRecord, now_ms: int) -> str:
        return f"partition={record.kafka_partition}"

    def partitioned_path(self, topic: str, encoded_partition: str) -> str:
        return f"{topic}{self.directory_delim}{encoded_partition}"

    def timestamp(self, record: SinkRecord, now_ms: int) -> int | None:
        return None


class FieldPartitioner(DefaultPartitioner):
    """``name=value`` per field of the Struct value, joined by ``directory.delim``.

    A name is a dotted path (``user.address.city``) and is written as configured. Integers and
    booleans (``true``/``false``) are printed, strings written as they are (a ``/`` in one makes
    directories); a null value, or a null struct on the way, gives ``name=null``. A value that
    is not a Struct, or a field of another type, raises PartitionException("Error encoding
    partition."); a field the schema lacks raises DataException.
    """

    fixed_per_topic_partition = False

    def __init__(self, directory_delim: str, field_names: list[str]) -> None:
        super().__init__(directory_delim)
        self.field_names = field_names

    def encode_partition(self, record: SinkRecord, now_ms: int) -> str:
        if not isinstance(record.value, Struct):
            raise PartitionException("Error encoding partition.")
        return self.directory_delim.join(
            f"{name}={_field_text(record.value, name)}" for name in self.field_names
        )


def _field_text(struct: Struct, name: str) -> str:
    """The partition text of the field at the dotted path ``name`` of ``struct``."""
    schema: Schema = struct.schema
    value: Any = struct
    for segment in name.split("."):
        field = schema.field(segment) if schema.type is SchemaType.STRUCT else None
        if field is None:
            raise DataException(f"Field '{name}' is not present in the schema.")
        schema = field.schema
        value = None if value is None else value.get(field)
    if schema.type not in _PRINTABLE:
        raise PartitionException("Error encoding partition.")
    if value is None:
        return "null"
    if schema.type is SchemaType.BOOLEAN:
        return "true" if value else "false"
    return str(value)


_PRINTABLE = frozenset(
    (
        SchemaType.INT8,
        SchemaType.INT16,
        SchemaType.INT32,
        SchemaType.INT64,
        SchemaType.STRING,
        SchemaType.BOOLEAN,
    )
)


class TimeBasedPartitioner(DefaultPartitioner):
    """The start of the record's time bucket, printed in ``zone`` with ``path_format``.

    Buckets are ``duration_ms`` long in the zone's local time (so daily buckets follow local
    midnight across DST changes), as Confluent's ``TimeBasedPartitioner.getPartition``.
    """

    time_based = True
    fixed_per_topic_partition = False

    def __init__(
        self,
        directory_delim: str,
        duration_ms: int,
        path_format: PathFormat,
        zone: Zone,
        extractor: TimestampExtractor,
    ) -> None:
        super().__init__(directory_delim)
        self.duration_ms = duration_ms
        self.path_format = path_format
        self.zone = zone
        self.extractor = extractor

    def timestamp(self, record: SinkRecord, now_ms: int) -> int:
        """The record's time; PartitionException when it has none, naming the extractor,
        its field and the record's topic, partition and offset (not its data)."""
        found = self.extractor.extract(record, now_ms)
        if found is None:
            extractor = self.extractor
            field = (
                f" (timestamp.field {extractor.field_name})"
                if isinstance(extractor, RecordFieldTimestampExtractor)
                else ""
            )
            raise PartitionException(
                "Unable to determine timestamp using timestamp.extractor "
                f"{extractor_class_name(extractor)}{field} "
                f"for record: topic={record.topic}, partition={record.kafka_partition}, "
                f"offset={record.kafka_offset}"
            )
        return found

    def encode_partition(self, record: SinkRecord, now_ms: int) -> str:
        instant = self.timestamp(record, now_ms)
        try:
            return self.path_format.format(
                time_bucket(self.duration_ms, instant, self.zone), self.zone
            )
        except ValueError as e:
            raise PartitionException(f"Error encoding partition: {e}") from e


def time_bucket(duration_ms: int, instant_ms: int, zone: Zone) -> int:
    """Confluent's ``TimeBasedPartitioner.getPartition``: the instant that starts the
    ``duration_ms`` bucket of ``instant_ms`` in ``zone``'s local time (Java's division,
    truncating toward zero, for local times before 1970 too)."""
    local = zone.convert_utc_to_local(instant_ms)
    buckets = abs(local) // duration_ms
    return zone.convert_local_to_utc((buckets if local >= 0 else -buckets) * duration_ms)


# -- configuration ---------------------------------------------------------------------------
PARTITIONER_CLASS = "partitioner.class"
PARTITION_FIELD_NAME = "partition.field.name"
PARTITION_DURATION_MS = "partition.duration.ms"
PATH_FORMAT = "path.format"
LOCALE = "locale"
TIMEZONE = "timezone"
TIMESTAMP_EXTRACTOR = "timestamp.extractor"
TIMESTAMP_FIELD = "timestamp.field"
GROUP = "Partitioner"


def partitioner_kind(name: str) -> str | None:
    """The simple name of the partitioner ``name`` names (``HourlyPartitioner``), or None."""
    simple = name.removeprefix(PACKAGE)
    return simple if simple in PARTITIONER_NAMES else None


def _check_class(name: str, value: Any) -> None:
    if value is not None and partitioner_kind(value) is None:
        raise ConfigException.invalid(name, value, f"Class {value} could not be found.")


def _check_field_names(name: str, value: Any) -> None:
    shown = "[" + ", ".join(value or ()) + "]"  # as Java prints a list
    for entry in value or ():
        if not entry.strip():
            raise ConfigException.invalid(name, shown, "Field name cannot be null or empty")
        if any(not segment.strip() for segment in entry.split(".")):
            raise ConfigException.invalid(
                name, shown, "Field name cannot contain an empty or whitespace-only path segment"
            )


def _check_timezone(name: str, value: Any) -> None:
    if value and value.strip():
        try:
            zone_for_id(value)
        except ValueError as e:
            raise ConfigException.invalid(name, value, str(e)) from None


class _Partitioners(Recommender):
    """Recommends the partitioners; shown for every partitioner."""

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]:
        return [PACKAGE + simple for simple in PARTITIONER_NAMES]


class _UsedBy(Recommender):
    """No values to recommend; the key is shown only when the partitioner uses it."""

    def __init__(self, *kinds: str) -> None:
        self.kinds = kinds

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]:
        return []

    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool:
        return partitioner_kind(parsed.get(PARTITIONER_CLASS) or "") in self.kinds


def _key(
    order: int, name: str, type_: Type, default: Any, display: str, doc: str, **more: Any
) -> ConfigKey:
    """A key of the Partitioner group, at ``order`` in it: of MEDIUM importance and LONG
    width unless ``more`` (other ConfigKey fields) says otherwise."""
    fields = {"importance": Importance.MEDIUM, "width": Width.LONG, **more}
    return ConfigKey(
        name, type_, default, documentation=doc, group=GROUP, order_in_group=order,
        display_name=display, **fields,
    )  # fmt: skip


_TIME_KEYS = (PARTITION_DURATION_MS, PATH_FORMAT, LOCALE, TIMEZONE)
_TIME_BASED_KINDS = (TIME_BASED, DAILY, HOURLY)
PARTITIONER_CONFIG_DEF = ConfigDef(
    [
        _key(1, PARTITIONER_CLASS, Type.STRING, PACKAGE + DEFAULT, "Partitioner Class",
             "The partitioner: where each record's file goes in the bucket. Confluent's "
             "io.confluent.connect.storage.partitioner.{Default,Field,TimeBased,Daily,Hourly}"
             "Partitioner, or their simple names.",
             importance=Importance.HIGH, recommender=_Partitioners(),
             validator=LambdaValidator(_check_class, "one of Confluent's partitioners"),
             dependents=[PARTITION_FIELD_NAME, *_TIME_KEYS]),
        _key(2, PARTITION_FIELD_NAME, Type.LIST, "", "Partition Field Name",
             "The fields of the record value FieldPartitioner partitions by, in order; a.b.c "
             "names a nested field.",
             validator=LambdaValidator(_check_field_names, "non-blank dotted field names"),
             recommender=_UsedBy(FIELD), width=Width.NONE),
        _key(3, PARTITION_DURATION_MS, Type.LONG, -1, "Partition Duration (ms)",
             "The length of a TimeBasedPartitioner bucket in milliseconds, counted in the "
             "timezone's local time.", recommender=_UsedBy(TIME_BASED)),
        _key(4, PATH_FORMAT, Type.STRING, "", "Path Format",
             "The Joda-Time pattern TimeBasedPartitioner prints a bucket with, for example "
             "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH; a trailing directory.delim is dropped.",
             recommender=_UsedBy(TIME_BASED)),
        _key(5, LOCALE, Type.STRING, "", "Locale",
             "The locale of text in path.format (month and day names), required by the "
             "time-based partitioners; only English locales print text.",
             recommender=_UsedBy(*_TIME_BASED_KINDS)),
        _key(6, TIMEZONE, Type.STRING, "", "Timezone",
             "The time zone whose local time the time-based partitioners bucket and print in "
             "(an IANA name such as America/Los_Angeles, UTC, or an offset such as +05:30).",
             validator=LambdaValidator(_check_timezone, "an IANA zone name, UTC or +hh:mm"),
             recommender=_UsedBy(*_TIME_BASED_KINDS)),
        _key(7, TIMESTAMP_EXTRACTOR, Type.STRING, "Wallclock", "Timestamp Extractor Class",
             "Where a time-based partitioner takes a record's time: Wallclock (when it is "
             "written), Record (its Kafka timestamp), RecordField (timestamp.field of its value)."),
        _key(8, TIMESTAMP_FIELD, Type.STRING, "timestamp", "Record Field for Timestamp Extractor",
             "The field of the record value (a.b.c when nested) RecordField reads: a Timestamp, "
             "a number of milliseconds, or an ISO-8601 string."),
    ]
)  # fmt: skip
"""The partitioner's keys, as Confluent's ``PartitionerConfig``; the S3 sink's definition
includes them."""


def partitioner_from_config(props: Mapping[str, Any], directory_delim: str) -> Partitioner:
    """The partitioner ``props`` (raw or parsed values) configure, with Confluent's checks:
    raises ConfigException naming the key at fault, with Confluent's message."""
    config = PARTITIONER_CONFIG_DEF.parse(props)
    kind = partitioner_kind(config[PARTITIONER_CLASS])
    if kind == FIELD:
        if not config[PARTITION_FIELD_NAME]:
            raise ConfigException(
                "Partition field name cannot be null or empty when using FieldPartitioner.",
                name=PARTITION_FIELD_NAME,
            )
        return FieldPartitioner(directory_delim, config[PARTITION_FIELD_NAME])
    if kind == DAILY:
        pattern = directory_delim.join(["'year'=YYYY", "'month'=MM", "'day'=dd"])
        return _time_based(config, directory_delim, 86_400_000, pattern)
    if kind == HOURLY:
        pattern = directory_delim.join(["'year'=YYYY", "'month'=MM", "'day'=dd", "'hour'=HH"])
        return _time_based(config, directory_delim, 3_600_000, pattern)
    if kind == TIME_BASED:
        duration = config[PARTITION_DURATION_MS]
        if duration <= 0:  # Confluent lets 0 through, then divides by it
            raise ConfigException.invalid(
                PARTITION_DURATION_MS, duration, "Partition duration needs to be a positive."
            )
        pattern = config[PATH_FORMAT]
        if not pattern.strip() or pattern == directory_delim:
            raise ConfigException.invalid(PATH_FORMAT, pattern, "Path format cannot be empty.")
        if directory_delim.strip():
            pattern = pattern.removesuffix(directory_delim)
        return _time_based(config, directory_delim, duration, pattern)
    return DefaultPartitioner(directory_delim)


def _time_based(
    config: Mapping[str, Any], directory_delim: str, duration_ms: int, pattern: str
) -> TimeBasedPartitioner:
    locale, timezone = config[LOCALE], config[TIMEZONE]
    if not locale.strip():
        raise ConfigException.invalid(LOCALE, locale, "Locale cannot be empty.")
    if not timezone.strip():
        raise ConfigException.invalid(TIMEZONE, timezone, "Timezone cannot be empty.")
    try:
        path_format = PathFormat(pattern)
    except ValueError as e:
        raise ConfigException.invalid(PATH_FORMAT, pattern, str(e)) from None
    if path_format.uses_text and locale.replace("-", "_").split("_")[0].lower() != "en":
        raise ConfigException.invalid(
            LOCALE, locale, "Only English locales can print the text fields of path.format"
        )
    extractor = timestamp_extractor(config[TIMESTAMP_EXTRACTOR], config)
    return TimeBasedPartitioner(
        directory_delim, duration_ms, path_format, zone_for_id(timezone), extractor
    )


def validate_partitioner(props: Mapping[str, Any]) -> dict[str, list[str]]:
    """The errors Confluent finds when it configures the partitioner, by key: the
    FieldPartitioner's missing field names; the time-based partitioners' duration, pattern,
    locale, timezone and extractor. Nothing when a value is one the definition itself
    refuses: its own validation reports that. ``directory.delim`` is read from ``props``
    (``/`` by default)."""
    try:
        config = PARTITIONER_CONFIG_DEF.parse(props)
    except ConfigException:
        return {}
    try:
        partitioner_from_config(config, str(props.get("directory.delim", "/")))
    except ConfigException as e:
        return {e.name or PARTITIONER_CLASS: [str(e)]}
    return {}
