"""The Iceberg sink's configs: Apache's names, defaults and messages (TestIcebergSinkConfig),
Tabular's upsert configs, the catalog by pyiceberg's rules, and secret masking."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from airflow_provider_connect.connect.config import HIDDEN, config_infos
from airflow_provider_connect.connect.errors import ConfigException, ConnectException
from airflow_provider_connect.connect.sink import SinkConnector
from airflow_provider_connect.connectors.iceberg import config as c
from airflow_provider_connect.connectors.iceberg.config import (
    COMMA_NO_PARENS_REGEX,
    CONFIG_DEF,
    IcebergSinkConfig,
    TableConfig,
    load_catalog,
    string_to_list,
    validate,
)
from airflow_provider_connect.control.secrets import masked_config, restore_hidden

BASE = {"name": "sink", "iceberg.catalog.type": "rest", "iceberg.catalog.uri": "http://127.0.0.1:1"}


def errors(**props: str) -> dict[str, list[str]]:
    config = validate({**BASE, **{k.replace("__", "."): v for k, v in props.items()}})
    return {v.name: v.error_messages for v in config.config_values if v.error_messages}


def test_invalid_static_and_dynamic() -> None:
    """TestIcebergSinkConfig.testInvalid."""
    props = {**BASE, "topics": "source-topic", "iceberg.tables": "db.landing"}
    props["iceberg.tables.dynamic-enabled"] = "true"
    with pytest.raises(
        ConfigException, match="^Cannot specify both static and dynamic table names$"
    ):
        IcebergSinkConfig(props)
    message = "Cannot specify both static and dynamic table names"
    assert errors(
        **{"iceberg__tables": "db.landing", "iceberg__tables__dynamic-enabled": "true"}
    ) == {
        "iceberg.tables": [message],
        "iceberg.tables.dynamic-enabled": [message],
    }


def test_defaults_are_apaches() -> None:
    """TestIcebergSinkConfig.testGetDefault, and every other default."""
    config = IcebergSinkConfig({**BASE, "topics": "t", "iceberg.tables": "db.landing"})
    assert config.commit_interval_ms == 300_000
    assert config.commit_timeout_ms == 30_000
    assert config.control_topic == "control-iceberg"
    assert config.catalog_name == "iceberg"
    assert config.tables == ["db.landing"]
    assert (config.dynamic_enabled, config.route_field) == (False, None)
    assert not any(
        (config.auto_create, config.evolve_schema, config.force_optional, config.case_insensitive)
    )
    assert (config.upsert_mode, config.cdc_field) == (False, None)
    assert config.commit_max_consecutive_failures == 1
    assert config.connect_group_id == "connect-sink"
    assert config.catalog_props == {"type": "rest", "uri": "http://127.0.0.1:1"}
    assert config.table_config("db.landing") == TableConfig(None, [], [], None)
    parsed = CONFIG_DEF.parse(BASE)
    assert parsed["iceberg.control.group-id-prefix"] == "cg-control-"
    assert parsed["iceberg.coordinator-executor-keep-alive-timeout-ms"] == 120000


def test_string_to_list() -> None:
    """TestIcebergSinkConfig.testStringToList."""
    comma = re.compile(",")
    assert string_to_list(None, comma) == []
    assert string_to_list("", comma) == []
    assert string_to_list("one ", comma) == ["one"]
    assert string_to_list("one, two", comma) == ["one", "two"]
    assert string_to_list("bucket(id, 4)", comma) == ["bucket(id", "4)"]
    assert string_to_list("bucket(id, 4)", COMMA_NO_PARENS_REGEX) == ["bucket(id, 4)"]
    assert string_to_list("bucket(id, 4), type", COMMA_NO_PARENS_REGEX) == ["bucket(id, 4)", "type"]
    assert string_to_list("a,,b,", comma) == ["a", "", "b"]  # Java's split drops the trailing one


def test_every_value_read() -> None:
    props = {
        **BASE,
        "iceberg.tables.dynamic-enabled": "true",
        "iceberg.tables.route-field": "meta.table",
        "iceberg.tables.auto-create-enabled": "true",
        "iceberg.tables.evolve-schema-enabled": "true",
        "iceberg.tables.schema-force-optional": "true",
        "iceberg.tables.schema-case-insensitive": "true",
        "iceberg.tables.upsert-mode-enabled": "true",
        "iceberg.tables.cdc-field": "_cdc.op",
        "iceberg.tables.auto-create-props.format-version": "2",
        "iceberg.tables.write-props.write.parquet.compression-codec": "zstd",
        "iceberg.control.topic": "control-x",
        "iceberg.control.commit.interval-ms": "1000",
        "iceberg.control.commit.timeout-ms": "500",
        "iceberg.catalog": "lake",
        "iceberg.connect.group-id": "cg",
    }
    config = IcebergSinkConfig(props)
    assert (config.tables, config.dynamic_enabled, config.route_field) == ([], True, "meta.table")
    assert all(
        (config.auto_create, config.evolve_schema, config.force_optional, config.case_insensitive)
    )
    assert (config.upsert_mode, config.cdc_field) == (True, "_cdc.op")
    assert config.auto_create_props == {"format-version": "2"}
    assert config.write_props == {"write.parquet.compression-codec": "zstd"}
    assert (config.control_topic, config.commit_interval_ms, config.commit_timeout_ms) == (
        "control-x",
        1000,
        500,
    )
    assert (config.catalog_name, config.connect_group_id) == ("lake", "cg")


def test_table_configs_over_the_defaults() -> None:
    props = {
        **BASE,
        "iceberg.tables": "db.a, db.b",
        "iceberg.tables.route-field": "kind",
        "iceberg.tables.default-id-columns": "id",
        "iceberg.tables.default-partition-by": "day(ts), bucket(id, 4)",
        "iceberg.tables.default-commit-branch": "staging",
        "iceberg.table.db.a.route-regex": "a|aa",
        "iceberg.table.db.a.id-columns": "k1, k2",
        "iceberg.table.db.a.partition-by": "",
        "iceberg.table.db.a.commit-branch": "main",
    }
    config = IcebergSinkConfig(props)
    a, b = config.table_config("db.a"), config.table_config("db.b")
    assert a.route_regex is not None and a.route_regex.pattern == "a|aa"
    assert (a.id_columns, a.partition_by, a.commit_branch) == (["k1", "k2"], [], "main")
    assert b == TableConfig(None, ["id"], ["day(ts)", "bucket(id, 4)"], "staging")
    assert config.table_config("db.unlisted") == b


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        ({}, {"iceberg.tables": ["Must specify table name(s)"]}),
        (
            {"iceberg.tables.dynamic-enabled": "true"},
            {
                "iceberg.tables.route-field": [
                    "Must specify a route field if using dynamic table names"
                ]
            },
        ),
        ({"iceberg.tables.dynamic-enabled": "true", "iceberg.tables.route-field": "t"}, {}),
        ({"iceberg.tables": ""}, {}),  # an empty list is a static route to no table, as Apache's
    ],
)
def test_tables_or_dynamic_routing(props: dict[str, str], expected: dict[str, list[str]]) -> None:
    config = validate({**BASE, **props})
    assert {v.name: v.error_messages for v in config.config_values if v.error_messages} == expected


def test_partition_by_and_route_regex_checked_per_key() -> None:
    found = errors(
        iceberg__tables="db.a",
        **{
            "iceberg__tables__default-partition-by": "day(ts), nope(x)",
            "iceberg__table__db__a__partition-by": "bucket(id, 0)",
            "iceberg__table__db__a__route-regex": "(unclosed",
        },
    )
    assert found == {
        "iceberg.tables.default-partition-by": [
            "Invalid value day(ts), nope(x) for configuration iceberg.tables.default-partition-by: "
            "Unsupported transform: nope"
        ],
    }  # a defined key's own error first, as the S3 sink: the rest once that is fixed
    found = errors(
        iceberg__tables="db.a",
        **{
            "iceberg__table__db__a__partition-by": "bucket(id, 0)",
            "iceberg__table__db__a__route-regex": "(unclosed",
        },
    )
    assert found["iceberg.table.db.a.partition-by"] == [
        "Invalid value bucket(id, 0) for configuration iceberg.table.db.a.partition-by: "
        "Invalid number of buckets: 0 (must be > 0)"
    ]
    assert found["iceberg.table.db.a.route-regex"][0].startswith(
        "Invalid value (unclosed for configuration iceberg.table.db.a.route-regex: "
        "Not a valid regular expression"
    )
    with pytest.raises(ConfigException, match="Invalid number of buckets"):
        IcebergSinkConfig(
            {**BASE, "iceberg.tables": "db.a", "iceberg.table.db.a.partition-by": "bucket(id, 0)"}
        )


@pytest.mark.parametrize(
    "key", ["interval-ms", "timeout-ms", "threads", "max-consecutive-failures"]
)
def test_commit_settings_at_least_one(key: str) -> None:
    name = f"iceberg.control.commit.{key}"
    assert errors(iceberg__tables="t", **{name.replace(".", "__"): "0"}) == {
        name: [f"Invalid value 0 for configuration {name}: Value must be at least 1"]
    }


def test_connect_group_id_needs_a_name() -> None:
    unnamed = {k: v for k, v in BASE.items() if k != "name"}
    config = IcebergSinkConfig({**unnamed, "iceberg.tables": "t"})
    with pytest.raises(ConfigException, match="Connector name cannot be null"):
        _ = config.connect_group_id


@pytest.mark.parametrize(
    ("catalog", "expected"),
    [
        ({}, {"iceberg.catalog.type": ["Must specify Iceberg catalog properties"]}),
        ({"type": "rest", "uri": "http://x"}, {}),
        ({"type": "REST", "uri": "http://x"}, {}),
        ({"type": "in-memory"}, {}),
        ({"type": "glue"}, {}),
        ({"uri": "http://catalog"}, {}),
        ({"uri": "thrift://hive:9083"}, {}),
        ({"uri": "sqlite:///x.db"}, {}),
        ({"uri": "postgresql://u@h/db"}, {}),
        ({"py-catalog-impl": "my.module.Catalog"}, {}),
        ({"type": "sql"}, {"iceberg.catalog.uri": ["A sql catalog needs a URI"]}),
        (
            {"warehouse": "s3://b/w"},
            {
                "iceberg.catalog.type": [
                    "Must specify iceberg.catalog.type, or iceberg.catalog.uri to infer it from"
                ]
            },
        ),
        (
            {"uri": "jdbc:postgresql://h/db"},
            {
                "iceberg.catalog.uri": [
                    "Could not infer the catalog type from the uri (http…: rest, thrift…: hive, sqlite… or postgresql…: sql): set iceberg.catalog.type"
                ]
            },
        ),
        (
            {"py-catalog-impl": "Catalog"},
            {
                "iceberg.catalog.py-catalog-impl": [
                    "py-catalog-impl should be full path (module.CustomCatalog), got: Catalog"
                ]
            },
        ),
    ],
)
def test_catalog_by_pyicebergs_rules(
    catalog: dict[str, str], expected: dict[str, list[str]]
) -> None:
    props = {"iceberg.tables": "t", **{f"iceberg.catalog.{k}": v for k, v in catalog.items()}}
    config = validate(props)
    assert {v.name: v.error_messages for v in config.config_values if v.error_messages} == expected


def test_catalog_types_and_impls_refused() -> None:
    found = errors(iceberg__tables="t", iceberg__catalog__type="hadoop")
    assert found["iceberg.catalog.type"] == [
        "Invalid value hadoop for configuration iceberg.catalog.type: Value must be one of: "
        "[rest, hive, glue, dynamodb, sql, in-memory, bigquery] (pyiceberg's catalogs)"
    ]
    both = validate(
        {
            "iceberg.tables": "t",
            "iceberg.catalog.type": "rest",
            "iceberg.catalog.py-catalog-impl": "a.B",
        }
    )
    assert {v.name for v in both.config_values if v.error_messages} == {
        "iceberg.catalog.type",
        "iceberg.catalog.py-catalog-impl",
    }
    java = validate(
        {
            "iceberg.tables": "t",
            "iceberg.catalog.catalog-impl": "org.apache.iceberg.aws.glue.GlueCatalog",
        }
    )
    [message] = [m for v in java.config_values for m in v.error_messages]
    assert message.startswith(
        "Java catalog classes cannot be loaded here (org.apache.iceberg.aws.glue.GlueCatalog)"
    )


SECRETS = {
    "iceberg.catalog.s3.secret-access-key": "s3-secret",
    "iceberg.catalog.credential": "client:secret-cred",
    "iceberg.catalog.token": "tok-123",
    "iceberg.catalog.jdbc.password": "pw-1",
    "iceberg.catalog.header.Authorization": "Bearer abc",
    "iceberg.kafka.sasl.jaas.config": "jaas-1",
}
PLAIN = {"iceberg.catalog.s3.access-key-id": "AKIA", "iceberg.catalog.warehouse": "s3://b/w"}


def test_password_like_catalog_props_are_passwords() -> None:
    assert all(CONFIG_DEF.is_password(k) for k in SECRETS)
    assert not any(CONFIG_DEF.is_password(k) for k in (*PLAIN, "iceberg.tables", "iceberg.catalog"))
    assert CONFIG_DEF.masked({**SECRETS, **PLAIN}) == {**dict.fromkeys(SECRETS, HIDDEN), **PLAIN}


class IcebergLikeSink(SinkConnector):
    """A connector with the Iceberg sink's definition: how control/secrets finds its
    passwords (the sink itself is registered elsewhere)."""

    def version(self) -> str:
        return "0"

    def config(self) -> c.ConfigDef:
        return CONFIG_DEF

    def start(self, props: dict[str, str]) -> None: ...

    def stop(self) -> None: ...

    def task_class(self) -> type:
        raise NotImplementedError

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return []


def test_status_and_rest_mask_them_and_restore_them() -> None:
    config = {
        "connector.class": f"{__name__}.IcebergLikeSink",
        "iceberg.tables": "t",
        **BASE,
        **SECRETS,
        **PLAIN,
    }
    masked = masked_config(config)
    assert {k for k, v in masked.items() if v == HIDDEN} == set(SECRETS)
    assert restore_hidden(masked, config) == config


def test_validation_answer_hides_secret_pass_through_values() -> None:
    answer = validate(
        {
            "iceberg.tables": "t",
            "iceberg.catalog.type": "sql",
            "iceberg.catalog.jdbc.password": "pw-1",
        }
    )
    answer.config_values.append(c.ConfigValue("iceberg.catalog.jdbc.password", "pw-1"))
    rendered = config_infos("x", CONFIG_DEF, answer.config_values)
    assert "pw-1" not in str(rendered)


def test_repr_hides_catalog_secrets() -> None:
    config = IcebergSinkConfig({**BASE, "iceberg.tables": "t", **SECRETS})
    assert not any(secret in repr(config) for secret in SECRETS.values())


def test_load_catalog_makes_a_real_sql_catalog(tmp_path: Path) -> None:
    config = IcebergSinkConfig(
        {
            "name": "sink",
            "iceberg.tables": "db.t",
            "iceberg.catalog": "lake",
            "iceberg.catalog.type": "sql",
            "iceberg.catalog.uri": f"sqlite:///{tmp_path}/catalog.db",
            "iceberg.catalog.warehouse": f"file://{tmp_path}/warehouse",
        }
    )
    catalog = load_catalog(config)
    catalog.create_namespace("db")
    assert catalog.name == "lake"
    assert catalog.list_namespaces() == [("db",)]


def test_load_catalog_failure_names_the_catalog_without_secrets() -> None:
    config = IcebergSinkConfig(
        {
            "iceberg.tables": "db.t",
            "iceberg.catalog": "lake",
            "iceberg.catalog.type": "rest",
            "iceberg.catalog.uri": "http://user:url-pass@127.0.0.1:1",
            "iceberg.catalog.credential": "client:secret-cred",
            "iceberg.catalog.token": "tok-123",
        }
    )
    with pytest.raises(ConnectException) as raised:
        load_catalog(config)
    message = str(raised.value)
    assert message.startswith("Failed to load Iceberg catalog 'lake': ")
    assert not any(s in message for s in ("secret-cred", "tok-123", "url-pass"))
    assert raised.value.__cause__ is None and raised.value.__suppress_context__
