"""``TimestampRouter`` and ``RegexRouter``: change a record's topic (mainly for sinks, where
the topic names the table or index to write to)."""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connect.config import (
    NO_DEFAULT,
    ConfigDef,
    Importance,
    LambdaValidator,
    Type,
)
from airflow_provider_connect.connect.errors import ConfigException, DataException
from airflow_provider_connect.connect.transforms import Transformation
from airflow_provider_connect.transforms.java_text import (
    SimpleDateFormat,
    java_regex,
    java_replacement,
)
from airflow_provider_connect.transforms.util import R, with_topic

log = logging.getLogger(__name__)

TOPIC_FORMAT = "topic.format"
TIMESTAMP_FORMAT = "timestamp.format"
REGEX = "regex"
REPLACEMENT = "replacement"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)

TIMESTAMP_ROUTER_CONFIG_DEF = (
    ConfigDef()
    .define(
        TOPIC_FORMAT,
        Type.STRING,
        "${topic}-${timestamp}",
        None,
        Importance.HIGH,
        "Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> "
        "as placeholders for the topic and timestamp, respectively.",
    )
    .define(
        TIMESTAMP_FORMAT,
        Type.STRING,
        "yyyyMMdd",
        None,
        Importance.HIGH,
        "Format string for the timestamp that is compatible with "
        "<code>java.text.SimpleDateFormat</code>.",
    )
)


class TimestampRouter(Transformation[R]):
    """Update the record's topic field as a function of the original topic value and the
    record timestamp (Kafka's ``TimestampRouter``). Timestamps are formatted in UTC."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = TIMESTAMP_ROUTER_CONFIG_DEF.parse(configs)
        self.topic_format: str = config[TOPIC_FORMAT]
        self.timestamp_format = SimpleDateFormat(config[TIMESTAMP_FORMAT], TIMESTAMP_FORMAT)
        # A pattern of the date alone changes once a day: the new topic, by (topic, day).
        self.daily: dict[tuple[str, int], str] = {}

    def config(self) -> ConfigDef:
        return TIMESTAMP_ROUTER_CONFIG_DEF

    def apply(self, record: R) -> R:
        timestamp = record.timestamp
        if timestamp is None:
            raise DataException(f"Timestamp missing on record: {record}")
        if self.timestamp_format.day_only:
            key = (record.topic, timestamp // 86_400_000)
            topic = self.daily.get(key)
            if topic is None:
                if len(self.daily) > 1000:  # days and topics come and go: keep the recent
                    self.daily.clear()
                topic = self.daily[key] = self._topic(record.topic, timestamp)
        else:
            topic = self._topic(record.topic, timestamp)
        return with_topic(record, topic)

    def _topic(self, topic: str, timestamp: int) -> str:
        text = self.timestamp_format.format(_EPOCH + dt.timedelta(milliseconds=timestamp))
        return self.topic_format.replace("${topic}", topic).replace("${timestamp}", text)


def _valid_regex(name: str, value: Any) -> None:
    try:
        java_regex(value)
    except (re.error, TypeError) as e:
        raise ConfigException.invalid(name, value, f"Invalid regex: {e}") from None


REGEX_ROUTER_CONFIG_DEF = (
    ConfigDef()
    .define(
        REGEX,
        Type.STRING,
        NO_DEFAULT,
        LambdaValidator(_valid_regex, "valid regex"),
        Importance.HIGH,
        "Regular expression to use for matching.",
    )
    .define(REPLACEMENT, Type.STRING, NO_DEFAULT, None, Importance.HIGH, "Replacement string.")
)


class RegexRouter(Transformation[R]):
    """Update the record topic using the configured regular expression and replacement
    string: when the regex matches the whole topic, the topic becomes the replacement
    (Java's syntax: ``$1``, ``${name}``) (Kafka's ``RegexRouter``)."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        config = REGEX_ROUTER_CONFIG_DEF.parse(configs)
        self.regex = java_regex(config[REGEX])
        try:
            self.replacement = java_replacement(config[REPLACEMENT])
        except ValueError as e:
            raise ConfigException.invalid(REPLACEMENT, config[REPLACEMENT], str(e)) from None
        self.routes: dict[str, str] = {}  # topic -> its new topic (itself: not rerouted)

    def config(self) -> ConfigDef:
        return REGEX_ROUTER_CONFIG_DEF

    def apply(self, record: R) -> R:
        topic = self.routes.get(record.topic)
        if topic is None:
            match = self.regex.fullmatch(record.topic)
            topic = match.expand(self.replacement) if match else record.topic
            if len(self.routes) < 10_000:  # topics are few; the bound guards pathological ones
                self.routes[record.topic] = topic
            log.debug("Routing records of topic %r to %r", record.topic, topic)
        if topic == record.topic:
            return record
        return with_topic(record, topic)
