"""KIP-1161 (Kafka 4.2) on the transformations' lists of field and header names
(DropHeaders, MaskField, ReplaceField, ValueToKey): no name twice, no empty name, and at
least one where a list is required, refused with Kafka's messages."""

from __future__ import annotations

import re
from typing import Any

import pytest

from airflow_provider_connect.connect.data import Schema, SchemaBuilder, Struct
from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.connect.sink import SinkRecord
from airflow_provider_connect.connect.testing import TransformationHarness
from airflow_provider_connect.transforms.headers import DropHeaders
from airflow_provider_connect.transforms.mask_field import MaskFieldValue
from airflow_provider_connect.transforms.replace_field import ReplaceFieldValue
from airflow_provider_connect.transforms.value_to_key import ValueToKey


@pytest.mark.parametrize(
    ("transformation", "config", "error"),
    [
        (ValueToKey, {"fields": "a,a"}, "Configuration 'fields' values must not be duplicated."),
        (
            ValueToKey,
            {"fields": ""},
            "Configuration 'fields' must not be empty. Valid values include: any non-empty value",
        ),
        (ValueToKey, {"fields": "a,,b"}, "Configuration 'fields' values must not be empty."),
        (MaskFieldValue, {"fields": "a,b,a"}, "'fields' values must not be duplicated."),
        (DropHeaders, {"headers": "h,h"}, "Configuration 'headers' values must not be duplicated."),
        (ReplaceFieldValue, {"include": "a,a"}, "'include' values must not be duplicated."),
        (ReplaceFieldValue, {"exclude": "b,b"}, "'exclude' values must not be duplicated."),
    ],
)
def test_duplicated_or_empty_names_are_refused(
    transformation: type[Any], config: dict[str, str], error: str
) -> None:
    with pytest.raises(ConfigException, match=re.escape(error)) as raised:
        TransformationHarness(transformation, config)
    found = transformation().config().validate_all(config)  # one error, on its key
    assert [m for v in found.values() for m in v.error_messages] == [str(raised.value)]


def test_replace_field_takes_empty_lists() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    record = SinkRecord("t", 0, None, None, schema, Struct(schema).put("a", 1), 0)
    out = TransformationHarness(ReplaceFieldValue, {"include": "", "exclude": ""}).apply(record)
    assert out is not None and out.value == Struct(schema).put("a", 1)
