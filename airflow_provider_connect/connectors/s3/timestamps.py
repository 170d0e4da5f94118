"""The timestamp extractors of Confluent's time-based partitioner (``timestamp.extractor``).

``Wallclock`` answers the time the caller gives (the batch time of ``put``), ``Record`` the
record's Kafka timestamp, and ``RecordField`` the value of ``timestamp.field`` (a dotted path)
in a Struct or map value. An extractor answers None when it finds no timestamp; the
partitioner turns that into its "Unable to determine timestamp" error. Other extractors are
classes deriving from :class:`TimestampExtractor`, named by their dotted path.
"""

from __future__ import annotations

import datetime as dt
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connect.data import Schema, Struct, Timestamp, Type
from airflow_provider_connect.connect.errors import ConfigException, ConnectException
from airflow_provider_connect.connect.plugins import load_class
from airflow_provider_connect.connect.sink import SinkRecord

JAVA_PREFIX = "io.confluent.connect.storage.partitioner.TimeBasedPartitioner$"
"""Where Confluent's built-in extractors are: ``…TimeBasedPartitioner$RecordTimestampExtractor``."""

_LONG = re.compile(r"-?[0-9]{1,19}")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


class PartitionException(ConnectException):
    """A record cannot be given a partition: Confluent's ``PartitionException``, whose messages
    are ``Error encoding partition.`` and ``Error extracting timestamp from record field: f``.
    The S3 task reports the record to the errant-record reporter when there is one."""


class TimestampExtractor(ABC):
    """Finds the time a record belongs to, in milliseconds since the epoch."""

    def configure(self, config: Mapping[str, Any]) -> None:
        """Takes the parsed partitioner configuration; the default reads nothing."""

    @abstractmethod
    def extract(self, record: SinkRecord, now_ms: int) -> int | None:
        """The record's time, None when it has none; ``now_ms`` is the batch's wall clock."""


class WallclockTimestampExtractor(TimestampExtractor):
    """The caller's ``now_ms``: every record of a batch gets the same time."""

    def extract(self, record: SinkRecord, now_ms: int) -> int | None:
        return now_ms


class RecordTimestampExtractor(TimestampExtractor):
    """The record's Kafka timestamp (None for a record without one)."""

    def extract(self, record: SinkRecord, now_ms: int) -> int | None:
        return record.timestamp


class RecordFieldTimestampExtractor(TimestampExtractor):
    """The value of ``timestamp.field`` (``a.b.c`` for a nested field) in the record's value.

    In a Struct: a Timestamp field gives its instant, an INT32/INT64 field its number, a
    STRING field a number when it is one (``-?[0-9]{1,19}``), else an ISO-8601 date-time
    parsed as Joda's ``ISODateTimeFormat.dateTimeParser`` (UTC when it has no offset; Joda
    would take the JVM's zone). In a map: a number, such a string, or a datetime. Any other
    type raises ``PartitionException("Error extracting timestamp from record field: f")``; a
    value neither Struct nor map raises ``PartitionException("Error encoding partition.")``.
    A missing or null field gives None. A string that is no date-time raises ValueError
    ``Invalid format: "…"``, as Joda's parser raises IllegalArgumentException.
    """

    def __init__(self, field_name: str = "timestamp") -> None:
        self.field_name = field_name

    def configure(self, config: Mapping[str, Any]) -> None:
        self.field_name = config["timestamp.field"]

    def extract(self, record: SinkRecord, now_ms: int) -> int | None:
        value = record.value
        if not isinstance(value, (Struct, Mapping)):
            raise PartitionException("Error encoding partition.")
        schema, found = _nested(value, self.field_name.split("."))
        if found is None:
            return None
        if schema is not None:  # a Struct's field: its schema's type decides
            if schema.name == Timestamp.LOGICAL_NAME and isinstance(found, dt.datetime):
                return Timestamp.from_logical(schema, found)
            if schema.type in (Type.INT32, Type.INT64):
                return int(found)
            if schema.type is Type.STRING:
                return parse_timestamp(found)
        elif isinstance(found, (int, float)) and not isinstance(found, bool):
            return int(found)  # Java's Number.longValue() truncates
        elif isinstance(found, str):
            return parse_timestamp(found)
        elif isinstance(found, dt.datetime):
            return _millis(found)
        raise PartitionException(f"Error extracting timestamp from record field: {self.field_name}")


def _nested(value: Any, path: list[str]) -> tuple[Schema | None, Any]:
    """The value at ``path`` in nested Structs and maps, with its field's schema when the
    last step is a Struct's field (else None); None as the value when a step is missing or
    null."""
    schema = None
    for name in path:
        if isinstance(value, Struct):
            field = value.schema.field(name)
            if field is None:
                return None, None
            schema, value = field.schema, value.get(field)
        elif isinstance(value, Mapping):
            schema, value = None, value.get(name)
        else:
            return None, None
    return schema, value


def parse_timestamp(text: str) -> int:
    """A string's instant: a long when it is one, else an ISO-8601 date-time as Joda's
    ``dateTimeParser`` reads it: ``yyyy[-MM[-dd]]`` then optionally ``T``, a time
    ``HH[:mm[:ss[.SSS…]]]`` and an offset ``Z`` or ``±HH[:mm]`` (UTC without one; digits
    beyond milliseconds are dropped). Raises ValueError ``Invalid format: "text"`` for any
    other string, as Joda does."""
    if _LONG.fullmatch(text):
        return int(text)
    match = _ISO_DATE_TIME.fullmatch(text)
    if match is None:
        raise ValueError(f'Invalid format: "{text}"')
    part = match.groupdict()
    try:
        moment = dt.datetime(
            int(part["year"]),
            int(part["month"] or 1),
            int(part["day"] or 1),
            int(part["hour"] or 0),
            int(part["minute"] or 0),
            int(part["second"] or 0),
            int((part["fraction"] or "0")[:3].ljust(3, "0")) * 1000,
            tzinfo=_offset(part["offset"]),
        )
    except ValueError as e:  # a field out of range: 2015-13-01, 25:00
        raise ValueError(f'Invalid format: "{text}": {e}') from None
    return _millis(moment)


_ISO_DATE_TIME = re.compile(
    r"(?P<year>\d{4})(?:-(?P<month>\d{2})(?:-(?P<day>\d{2}))?)?"
    r"(?:T(?P<hour>\d{2})(?::(?P<minute>\d{2})(?::(?P<second>\d{2})"
    r"(?:[.,](?P<fraction>\d{1,9}))?)?)?(?P<offset>Z|[+-]\d{2}(?::?\d{2})?)?)?"
)


def _offset(text: str | None) -> dt.timezone:
    if not text or text == "Z":
        return dt.timezone.utc
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return dt.timezone(sign * dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0)))


def _millis(moment: dt.datetime) -> int:
    """An instant in milliseconds; a naive datetime is taken as UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return (moment - _EPOCH) // dt.timedelta(milliseconds=1)


_BUILT_IN: dict[str, type[TimestampExtractor]] = {
    "Wallclock": WallclockTimestampExtractor,
    "Record": RecordTimestampExtractor,
    "RecordField": RecordFieldTimestampExtractor,
}
_BUILT_IN |= {f"{JAVA_PREFIX}{name}TimestampExtractor": cls for name, cls in _BUILT_IN.items()}


def timestamp_extractor(name: str, config: Mapping[str, Any]) -> TimestampExtractor:
    """The configured extractor named ``name``: ``Wallclock``, ``Record``, ``RecordField``,
    their Confluent class names (``…TimeBasedPartitioner$WallclockTimestampExtractor``), or the
    dotted path of a :class:`TimestampExtractor` subclass; ``configure(config)`` has been
    called. Raises ``ConfigException("Invalid timestamp extractor: name")`` when no class has
    the name, ``ConfigException("Class name does not implement TimestampExtractor")`` when the
    class is no TimestampExtractor (both naming ``timestamp.extractor``)."""
    cls: type = _BUILT_IN.get(name) or _load(name)
    if not issubclass(cls, TimestampExtractor):
        raise ConfigException(
            f"Class {name} does not implement TimestampExtractor", name="timestamp.extractor"
        )
    extractor = cls()
    extractor.configure(config)
    return extractor


def extractor_class_name(extractor: TimestampExtractor) -> str:
    """The class name of ``extractor`` in messages: Confluent's for the built-in ones."""
    cls = type(extractor)
    if _BUILT_IN.get(cls.__name__.removesuffix("TimestampExtractor")) is cls:
        return f"{JAVA_PREFIX}{cls.__name__}"
    return f"{cls.__module__}.{cls.__qualname__}"


def _load(name: str) -> type:
    try:
        return load_class(name)
    except ImportError:
        raise ConfigException(
            f"Invalid timestamp extractor: {name}", name="timestamp.extractor"
        ) from None
