"""``Filter`` and the predicates of KIP-585: ``TopicNameMatches``, ``HasHeaderKey`` and
``RecordIsTombstone``, as Kafka's."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connect.config import (
    NO_DEFAULT,
    CompositeValidator,
    ConfigDef,
    Importance,
    NonEmptyString,
    Type,
)
from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.connect.transforms import Predicate, Transformation
from airflow_provider_connect.transforms.java_text import java_regex
from airflow_provider_connect.transforms.util import R


class Filter(Transformation[R]):
    """Drops all records, filtering them from subsequent transformations in the chain. This
    is intended to be used conditionally to filter out records matching (or not matching) a
    particular Predicate (Kafka's ``Filter``)."""

    def config(self) -> ConfigDef:
        return ConfigDef()

    def apply(self, record: R) -> None:
        return None


PATTERN = "pattern"
NAME = "name"
TOPIC_NAME_MATCHES_CONFIG_DEF = ConfigDef().define(
    PATTERN,
    Type.STRING,
    NO_DEFAULT,
    CompositeValidator(NonEmptyString()),
    Importance.MEDIUM,
    "A Java regular expression for matching against the name of a record's topic.",
)


class TopicNameMatches(Predicate[R]):
    """A predicate which is true for records with a topic name that matches the configured
    regular expression (the whole name)."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        value = TOPIC_NAME_MATCHES_CONFIG_DEF.parse(configs)[PATTERN]
        try:
            self.pattern = java_regex(value)
        except re.error as e:
            raise ConfigException.invalid(
                PATTERN, value, f"entry must be a Java-compatible regular expression: {e}"
            ) from None

    def config(self) -> ConfigDef:
        return TOPIC_NAME_MATCHES_CONFIG_DEF

    def test(self, record: R) -> bool:
        return record.topic is not None and self.pattern.fullmatch(record.topic) is not None

    def __repr__(self) -> str:
        return f"TopicNameMatches{{pattern={self.pattern.pattern}}}"


HAS_HEADER_KEY_CONFIG_DEF = ConfigDef().define(
    NAME, Type.STRING, NO_DEFAULT, NonEmptyString(), Importance.MEDIUM, "The header name."
)


class HasHeaderKey(Predicate[R]):
    """A predicate which is true for records with at least one header with the configured
    name."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.name: str = HAS_HEADER_KEY_CONFIG_DEF.parse(configs)[NAME]

    def config(self) -> ConfigDef:
        return HAS_HEADER_KEY_CONFIG_DEF

    def test(self, record: R) -> bool:
        return bool(record._headers) and record.headers.last_with_name(self.name) is not None

    def __repr__(self) -> str:
        return f"HasHeaderKey{{name='{self.name}'}}"


class RecordIsTombstone(Predicate[R]):
    """A predicate which is true for records which are tombstones (i.e. have null value)."""

    def config(self) -> ConfigDef:
        return ConfigDef()

    def test(self, record: R) -> bool:
        return record.value is None

    def __repr__(self) -> str:
        return "RecordIsTombstone{}"
