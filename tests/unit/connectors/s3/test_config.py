"""The S3 sink's configs: Confluent's names, defaults and messages (S3SinkConnectorConfigTest,
S3SinkConnectorValidatorTest), and where this sink is stricter."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_provider_connect.connect.config import Password
from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connectors.s3 import config as c
from airflow_provider_connect.connectors.s3.formats import VALUE, make_format
from airflow_provider_connect.connectors.s3.parquet_format import EXTENSIONS
from airflow_provider_connect.connectors.s3.sink import S3SinkConnector, parse
from airflow_provider_connect.control.secrets import masked_config

BASE = {"s3.bucket.name": "kafka.bucket", "format.class": c.FORMATS["json"], "flush.size": "3"}


def errors(**props: str) -> dict[str, list[str]]:
    """Per-key errors of the connector's validate: its ConfigDef's and its own checks."""
    config = S3SinkConnector().validate({**BASE, **props})
    return {v.name: v.error_messages for v in config.config_values if v.error_messages}


def test_defaults_are_confluents() -> None:
    parsed = c.S3_CONFIG_DEF.parse(BASE)
    expected: dict[str, Any] = {
        "s3.region": "us-west-2",
        "s3.part.size": 26214400,
        "s3.part.retries": 3,
        "s3.retry.backoff.ms": 200,
        "s3.path.style.access.enabled": True,
        "topics.dir": "topics",
        "directory.delim": "/",
        "file.delim": "+",
        "filename.offset.zero.pad.width": 10,
        "rotate.interval.ms": -1,
        "rotate.schedule.interval.ms": -1,
        "schema.compatibility": "NONE",
        "avro.codec": "null",
        "parquet.codec": "snappy",
        "s3.compression.type": "none",
        "behavior.on.null.values": "fail",
        "store.kafka.keys": False,
        "keys.format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
        "headers.format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
        "format.bytearray.extension": ".bin",
        "retry.backoff.ms": 5000,
        "storage.class": "io.confluent.connect.s3.storage.S3Storage",
    }
    assert {k: parsed[k] for k in expected} == expected


def test_required_configs() -> None:
    values = {v.name: v for v in c.S3_CONFIG_DEF.validate({})}
    for name in ("s3.bucket.name", "format.class", "flush.size"):
        assert values[name].error_messages == [
            f'Missing required configuration "{name}" which has no default value.'
        ]


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("s3.part.size", "1024", "Part size must be at least: 5242880 bytes (5MB)"),
        ("s3.part.retries", "-1", "Value must be at least 0"),
        ("s3.retry.backoff.ms", "-1", "Value must be at least 0"),
        ("s3.compression.level", "10", "Value must be no more than 9"),
        ("s3.compression.type", "zip", "Value must be one of: [none, gzip]"),
        ("parquet.codec", "uncompressed", "Value must be one of: [none, snappy"),
        ("avro.codec", "SNAPPY", "Value must be one of: [null, deflate, snappy, bzip2]"),
        (
            "format.class",
            "com.example.CsvFormat",
            "Class com.example.CsvFormat could not be found.",
        ),
        (
            "keys.format.class",
            "com.example.CsvFormat",
            "Class com.example.CsvFormat could not be found.",
        ),
        ("schema.compatibility", "backward", "Value must be one of: [NONE, BACKWARD"),
    ],
)
def test_invalid_values(key: str, value: str, message: str) -> None:
    found = errors(**{key: value})[key]
    assert found[0].startswith(f"Invalid value {value} for configuration {key}: {message}")


def test_an_unknown_format_is_refused_not_taken_for_parquet() -> None:
    with pytest.raises(
        ConnectException, match=r"^Class com\.example\.CsvFormat could not be found"
    ):
        make_format("com.example.CsvFormat", parse(BASE), VALUE)


def test_every_parquet_codec_start_accepts_has_an_extension_and_no_other() -> None:
    accepted = {
        codec
        for codec in c.PARQUET_CODECS
        if not list(c.refused_at_start(parse_lenient(**{"parquet.codec": codec})))
    }
    assert set(EXTENSIONS) == accepted and "lzo" not in accepted


def parse_lenient(**props: str) -> dict[str, Any]:
    """The typed config, without the checks of a task's start."""
    return c.S3_CONFIG_DEF.parse({**BASE, **props})


def test_simple_format_names_and_case_insensitive_values() -> None:
    assert (
        errors(
            **{
                "format.class": "ParquetFormat",
                "behavior.on.null.values": "IGNORE",
                "json.decimal.format": "numeric",
            }
        )
        == {}
    )


def test_secret_is_a_password_and_masked() -> None:
    parsed = c.S3_CONFIG_DEF.parse({**BASE, "aws.secret.access.key": "s3cr3t"})
    assert isinstance(parsed["aws.secret.access.key"], Password)
    assert "s3cr3t" not in repr(parsed["aws.secret.access.key"])
    masked = c.S3_CONFIG_DEF.masked({**BASE, "aws.secret.access.key": "s3cr3t"})
    assert masked["aws.secret.access.key"] != "s3cr3t"


@pytest.mark.parametrize(
    ("props", "what", "keys"),
    [
        ({"format.class": c.FORMATS["avro"]}, "data", {"format.class"}),
        ({"format.class": c.FORMATS["parquet"]}, "data", {"format.class"}),
        ({"store.kafka.keys": "true"}, "keys", {"keys.format.class", "store.kafka.keys"}),
        (
            {"store.kafka.headers": "true", "headers.format.class": c.FORMATS["parquet"]},
            "headers",
            {"headers.format.class", "store.kafka.headers"},
        ),
    ],
)
def test_gzip_only_with_json_or_bytearray(props: dict[str, str], what: str, keys: set[str]) -> None:
    found = errors(**{"s3.compression.type": "gzip", **props})
    format_key = next(k for k in keys if k.endswith("format.class"))
    full = c.FORMATS[c.format_id({**BASE, **props}.get(format_key, c.FORMATS["avro"])) or ""]
    message = f"Compression Type gzip not valid for {what} format class: ( {full} )."
    assert set(found) == keys | {"s3.compression.type"}
    assert all(found[k] == [message] for k in found)


def test_gzip_with_json_keys_and_bytearray_values_is_fine() -> None:
    assert (
        errors(
            **{
                "s3.compression.type": "gzip",
                "format.class": "ByteArrayFormat",
                "store.kafka.keys": "true",
                "keys.format.class": "JsonFormat",
            }
        )
        == {}
    )


def test_tombstones_need_keys() -> None:
    message = "Writing Kafka record keys to storage is mandatory when tombstone writing is enabled."
    found = errors(**{"behavior.on.null.values": "write"})
    assert found == {"store.kafka.keys": [message], "behavior.on.null.values": [message]}
    assert errors(**{"behavior.on.null.values": "write", "store.kafka.keys": "true"}) == {}


def test_scheduled_rotation_needs_a_timezone() -> None:
    found = errors(**{"rotate.schedule.interval.ms": "60000"})
    assert found == {
        "rotate.schedule.interval.ms": [
            "timezone configuration must be set when using rotate.schedule.interval.ms"
        ]
    }
    assert errors(**{"rotate.schedule.interval.ms": "60000", "timezone": "UTC"}) == {}


LZO_REFUSED = (
    "Invalid value lzo for configuration parquet.codec: LZO is not supported: pyarrow "
    "cannot write it"
)


def test_lzo_is_refused_with_one_message_at_validate_and_at_start() -> None:
    assert errors(**{"parquet.codec": "lzo"})["parquet.codec"] == [LZO_REFUSED]
    with pytest.raises(ConnectException) as refused:
        parse({**BASE, "parquet.codec": "lzo"})
    assert str(refused.value) == LZO_REFUSED


def test_only_the_default_credentials_chain() -> None:
    found = errors(**{"s3.credentials.provider.class": "com.example.MyProvider"})
    assert "Only DefaultCredentialsProvider" in found["s3.credentials.provider.class"][0]


def test_rest_status_and_xcom_hide_the_secret() -> None:
    config = {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        **BASE,
        "aws.access.key.id": "AKIDEXAMPLE",
        "aws.secret.access.key": "s3cr3t",
    }
    masked = masked_config(config)
    assert masked["aws.secret.access.key"] == "[hidden]"
    assert masked["aws.access.key.id"] == "AKIDEXAMPLE"
