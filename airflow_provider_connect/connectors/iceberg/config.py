"""The Iceberg sink's configs, with Apache Iceberg's names, defaults and messages
(``IcebergSinkConfig``, ``TableSinkConfig``), Tabular's upsert configs
(``iceberg.tables.upsert-mode-enabled``, ``iceberg.tables.cdc-field``), and the catalog
loaded with pyiceberg.

Prefix-keyed configs pass through: ``iceberg.catalog.*`` to pyiceberg's ``load_catalog``,
``iceberg.tables.auto-create-props.*`` and ``iceberg.tables.write-props.*`` to the tables,
``iceberg.table.<table>.{commit-branch,id-columns,partition-by,route-regex}`` per table.
Those whose names say secret (:data:`SECRET_PATTERN`) are passwords: masked wherever
password-typed configs are.

Deliberate differences from Apache's, each stated where it is defined: the catalog is
checked by pyiceberg's rules (its catalog types; no Java ``catalog-impl``) from the config
alone; ``partition-by`` terms and ``route-regex`` patterns are checked at validation;
``iceberg.control.commit.interval-ms``, ``timeout-ms`` and ``threads`` must be at least 1;
``iceberg.kafka.*``, ``iceberg.hadoop.*``, ``iceberg.hadoop-conf-dir``,
``iceberg.control.group-id-prefix``, ``iceberg.coordinator.transactional.prefix`` and
``iceberg.coordinator-executor-keep-alive-timeout-ms`` are accepted and unused (this
runtime's tasks coordinate through its metadata database, not a control topic, and have no
Hadoop configuration); the Kafka Connect worker's properties file is not read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow_provider_connect.connect.config import (
    HIDDEN,
    Config,
    ConfigDef,
    ConfigValue,
    Importance,
    Range,
    Type,
    Validator,
    ValidRegex,
    originals_with_prefix,
)
from airflow_provider_connect.connect.errors import ConfigException, ConnectException
from airflow_provider_connect.connectors.iceberg.partitions import (
    PartitionFieldError,
    parse_partition_field,
)

if TYPE_CHECKING:  # pyiceberg is imported where a catalog is made: not to validate a config
    from pyiceberg.catalog import Catalog

TABLES = "iceberg.tables"
DYNAMIC_ENABLED = "iceberg.tables.dynamic-enabled"
ROUTE_FIELD = "iceberg.tables.route-field"
DEFAULT_COMMIT_BRANCH = "iceberg.tables.default-commit-branch"
DEFAULT_ID_COLUMNS = "iceberg.tables.default-id-columns"
DEFAULT_PARTITION_BY = "iceberg.tables.default-partition-by"
AUTO_CREATE_ENABLED = "iceberg.tables.auto-create-enabled"
EVOLVE_SCHEMA_ENABLED = "iceberg.tables.evolve-schema-enabled"
SCHEMA_FORCE_OPTIONAL = "iceberg.tables.schema-force-optional"
SCHEMA_CASE_INSENSITIVE = "iceberg.tables.schema-case-insensitive"
UPSERT_MODE_ENABLED = "iceberg.tables.upsert-mode-enabled"
CDC_FIELD = "iceberg.tables.cdc-field"
CONTROL_TOPIC = "iceberg.control.topic"
CONTROL_GROUP_ID_PREFIX = "iceberg.control.group-id-prefix"
COMMIT_INTERVAL_MS = "iceberg.control.commit.interval-ms"
COMMIT_TIMEOUT_MS = "iceberg.control.commit.timeout-ms"
COMMIT_THREADS = "iceberg.control.commit.threads"
COMMIT_MAX_CONSECUTIVE_FAILURES = "iceberg.control.commit.max-consecutive-failures"
TRANSACTIONAL_PREFIX = "iceberg.coordinator.transactional.prefix"
KEEP_ALIVE_TIMEOUT_MS = "iceberg.coordinator-executor-keep-alive-timeout-ms"
CATALOG_NAME = "iceberg.catalog"
CONNECT_GROUP_ID = "iceberg.connect.group-id"
HADOOP_CONF_DIR = "iceberg.hadoop-conf-dir"

CATALOG_PREFIX = "iceberg.catalog."
TABLE_PREFIX = "iceberg.table."
AUTO_CREATE_PROPS_PREFIX = "iceberg.tables.auto-create-props."
WRITE_PROPS_PREFIX = "iceberg.tables.write-props."
KAFKA_PREFIX = "iceberg.kafka."
HADOOP_PREFIX = "iceberg.hadoop."

ROUTE_REGEX = "route-regex"
ID_COLUMNS = "id-columns"
PARTITION_BY = "partition-by"
COMMIT_BRANCH = "commit-branch"
TABLE_KEYS = (ROUTE_REGEX, ID_COLUMNS, PARTITION_BY, COMMIT_BRANCH)
"""The per-table configs, ``iceberg.table.<table>.<key>``."""

DEFAULT_CATALOG_NAME = "iceberg"
DEFAULT_CONTROL_TOPIC = "control-iceberg"
DEFAULT_CONTROL_GROUP_PREFIX = "cg-control-"

COMMA_NO_PARENS_REGEX = re.compile(r",(?![^()]*+\))")
"""Apache's: a comma outside parentheses, so ``bucket(id, 4), type`` is two terms."""

SECRET_PATTERN = (
    r"iceberg\.(catalog|kafka|hadoop)\..*"
    r"(password|passwd|secret|token|credential|jaas|user\.info|authorization"
    r"|account[-.]key|private[-.]key).*"
)
"""The pass-through configs taken for passwords: ``iceberg.catalog.s3.secret-access-key``,
``iceberg.catalog.credential``, ``iceberg.catalog.token``,
``iceberg.catalog.header.Authorization``, ``iceberg.catalog.adls.account-key``,
``iceberg.kafka.sasl.jaas.config``, ``iceberg.hadoop.fs.s3a.secret.key``, any ``*password*``."""

CATALOG_TYPE = "type"
CATALOG_URI = "uri"
PY_CATALOG_IMPL = "py-catalog-impl"
JAVA_CATALOG_IMPL = "catalog-impl"
CATALOG_TYPES = ("rest", "hive", "glue", "dynamodb", "sql", "in-memory", "bigquery")
"""pyiceberg 0.12's ``CatalogType`` values (a unit test keeps them equal)."""
"""pyiceberg's catalog types (``rest``, ``hive``, ``glue``, ``dynamodb``, ``sql``,
``in-memory``, ``bigquery``): what ``iceberg.catalog.type`` may name. Apache's ``hadoop``,
``nessie`` and ``jdbc`` have no pyiceberg catalog."""
_URI_TYPES = (("http", "rest"), ("thrift", "hive"), ("sqlite", "sql"), ("postgresql", "sql"))
"""pyiceberg's ``infer_catalog_type``: a URI's scheme prefix to the catalog type it means."""


def string_to_list(value: str | None, regex: re.Pattern[str]) -> list[str]:
    """Apache's ``IcebergSinkConfig.stringToList``: ``value`` split by ``regex``, each part
    trimmed, trailing empty parts dropped (as Java's ``String.split``); none for None or
    ""."""
    if not value:
        return []
    parts = regex.split(value)
    while parts and not parts[-1]:
        parts.pop()
    return [p.strip() for p in parts]


class PartitionBy(Validator):
    """Comma-separated partition-by terms (commas inside parentheses kept), each one
    :func:`~.partitions.parse_partition_field` accepts."""

    def ensure_valid(self, name: str, value: Any) -> None:
        for term in string_to_list(value, COMMA_NO_PARENS_REGEX):
            try:
                parse_partition_field(term)
            except PartitionFieldError as e:
                raise ConfigException.invalid(name, value, str(e)) from None

    def __str__(self) -> str:
        return "col, year(col), month(col), day(col), hour(col), bucket(col, n), truncate(col, w)"


def _define(config: ConfigDef, *keys: tuple[Any, ...]) -> ConfigDef:
    for order, (name, type_, default, validator, importance, doc) in enumerate(keys):
        config.define(
            name, type_, default, validator, importance, doc, group="Iceberg", order_in_group=order
        )
    return config


CONFIG_DEF = _define(
    ConfigDef(),
    (TABLES, Type.LIST, None, None, Importance.HIGH, "Comma-delimited list of destination tables"),
    (
        DYNAMIC_ENABLED,
        Type.BOOLEAN,
        False,
        None,
        Importance.MEDIUM,
        "Enable dynamic routing to tables based on a record value",
    ),
    (
        ROUTE_FIELD,
        Type.STRING,
        None,
        None,
        Importance.MEDIUM,
        "Source record field for routing records to tables",
    ),
    (
        DEFAULT_COMMIT_BRANCH,
        Type.STRING,
        None,
        None,
        Importance.MEDIUM,
        "Default branch for commits",
    ),
    (
        DEFAULT_ID_COLUMNS,
        Type.STRING,
        None,
        None,
        Importance.MEDIUM,
        "Default ID columns for tables, comma-separated",
    ),
    (
        DEFAULT_PARTITION_BY,
        Type.STRING,
        None,
        PartitionBy(),
        Importance.MEDIUM,
        "Default partition spec to use when creating tables, comma-separated",
    ),
    (
        UPSERT_MODE_ENABLED,
        Type.BOOLEAN,
        False,
        None,
        Importance.MEDIUM,
        "Set to true to treat all appends as upserts, false otherwise (Tabular's)",
    ),
    (
        CDC_FIELD,
        Type.STRING,
        None,
        None,
        Importance.MEDIUM,
        "Source record field that identifies the type of operation (insert, update, or "
        "delete) (Tabular's)",
    ),
    (
        AUTO_CREATE_ENABLED,
        Type.BOOLEAN,
        False,
        None,
        Importance.MEDIUM,
        "Set to true to automatically create destination tables, false otherwise",
    ),
    (
        SCHEMA_FORCE_OPTIONAL,
        Type.BOOLEAN,
        False,
        None,
        Importance.MEDIUM,
        "Set to true to set columns as optional during table create and evolution, false to "
        "respect schema",
    ),
    (
        SCHEMA_CASE_INSENSITIVE,
        Type.BOOLEAN,
        False,
        None,
        Importance.MEDIUM,
        "Set to true to look up table columns by case-insensitive name, false for case-sensitive",
    ),
    (
        EVOLVE_SCHEMA_ENABLED,
        Type.BOOLEAN,
        False,
        None,
        Importance.MEDIUM,
        "Set to true to add any missing record fields to the table schema, false otherwise",
    ),
    (
        CATALOG_NAME,
        Type.STRING,
        DEFAULT_CATALOG_NAME,
        None,
        Importance.MEDIUM,
        "Iceberg catalog name",
    ),
    (
        CONTROL_TOPIC,
        Type.STRING,
        DEFAULT_CONTROL_TOPIC,
        None,
        Importance.MEDIUM,
        "Name of the control topic (here: the name in the snapshots' offsets property; the "
        "tasks coordinate through the runtime's metadata database)",
    ),
    (
        CONTROL_GROUP_ID_PREFIX,
        Type.STRING,
        DEFAULT_CONTROL_GROUP_PREFIX,
        None,
        Importance.LOW,
        "Prefix of the control consumer group (accepted, unused: no control topic here)",
    ),
    (
        CONNECT_GROUP_ID,
        Type.STRING,
        None,
        None,
        Importance.LOW,
        "Name of the Connect consumer group, should not be set under normal conditions",
    ),
    (
        COMMIT_INTERVAL_MS,
        Type.INT,
        300_000,
        Range.at_least(1),
        Importance.MEDIUM,
        "Coordinator interval for performing Iceberg table commits, in millis",
    ),
    (
        COMMIT_TIMEOUT_MS,
        Type.INT,
        30_000,
        Range.at_least(1),
        Importance.MEDIUM,
        "Coordinator time to wait for worker responses before committing, in millis",
    ),
    (
        COMMIT_THREADS,
        Type.INT,
        (os.cpu_count() or 1) * 2,
        Range.at_least(1),
        Importance.MEDIUM,
        "Coordinator threads to use for table commits, default is (cores * 2)",
    ),
    (
        TRANSACTIONAL_PREFIX,
        Type.STRING,
        None,
        None,
        Importance.LOW,
        "Optional prefix of the transactional id for the coordinator (accepted, unused)",
    ),
    (
        HADOOP_CONF_DIR,
        Type.STRING,
        None,
        None,
        Importance.MEDIUM,
        "If specified, Hadoop config files in this directory will be loaded (accepted, unused)",
    ),
    (
        KEEP_ALIVE_TIMEOUT_MS,
        Type.LONG,
        120000,
        None,
        Importance.LOW,
        "config to control coordinator executor keep alive time (accepted, unused)",
    ),
    (
        COMMIT_MAX_CONSECUTIVE_FAILURES,
        Type.INT,
        1,
        Range.at_least(1),
        Importance.MEDIUM,
        "Maximum number of consecutive commit failures before the coordinator terminates",
    ),
).define_password_pattern(SECRET_PATTERN)


@dataclass(frozen=True)
class TableConfig:
    """Apache's ``TableSinkConfig``: one table's routing pattern, identifier columns,
    partition-by terms and commit branch (None: the main branch)."""

    route_regex: re.Pattern[str] | None
    id_columns: list[str]
    partition_by: list[str]
    commit_branch: str | None


@dataclass(frozen=True, init=False)
class IcebergSinkConfig:
    """A connector's typed config, built from its props; never changed after."""

    name: str | None
    tables: list[str]
    """``iceberg.tables``; empty when unset (Apache's is null then: dynamic routing)."""
    dynamic_enabled: bool
    route_field: str | None
    auto_create: bool
    evolve_schema: bool
    force_optional: bool
    case_insensitive: bool
    upsert_mode: bool
    cdc_field: str | None
    control_topic: str
    commit_interval_ms: int
    commit_timeout_ms: int
    commit_threads: int
    commit_max_consecutive_failures: int
    catalog_name: str
    catalog_props: dict[str, str]
    auto_create_props: dict[str, str]
    write_props: dict[str, str]
    group_id: str | None
    default_table: TableConfig
    table_overrides: dict[str, TableConfig]

    def __init__(self, props: Mapping[str, str]) -> None:
        """The config of ``props``, the connector's name from ``name``. Raises
        :class:`ConfigException` naming the first key in error, as Apache's constructor
        throws (with this sink's own checks: :func:`problems`)."""
        parsed = CONFIG_DEF.parse(props)
        for key, message in problems(props, parsed):
            raise ConfigException(message, name=key)
        defaults = TableConfig(
            None,
            string_to_list(parsed[DEFAULT_ID_COLUMNS], _COMMA),
            string_to_list(parsed[DEFAULT_PARTITION_BY], COMMA_NO_PARENS_REGEX),
            parsed[DEFAULT_COMMIT_BRANCH],
        )
        overrides = {
            table: _table_config(own, defaults) for table, own in table_props(props).items()
        }
        values = dict(
            name=props.get("name"),
            tables=parsed[TABLES] or [],
            dynamic_enabled=parsed[DYNAMIC_ENABLED],
            route_field=parsed[ROUTE_FIELD],
            auto_create=parsed[AUTO_CREATE_ENABLED],
            evolve_schema=parsed[EVOLVE_SCHEMA_ENABLED],
            force_optional=parsed[SCHEMA_FORCE_OPTIONAL],
            case_insensitive=parsed[SCHEMA_CASE_INSENSITIVE],
            upsert_mode=parsed[UPSERT_MODE_ENABLED],
            cdc_field=parsed[CDC_FIELD],
            control_topic=parsed[CONTROL_TOPIC],
            commit_interval_ms=parsed[COMMIT_INTERVAL_MS],
            commit_timeout_ms=parsed[COMMIT_TIMEOUT_MS],
            commit_threads=parsed[COMMIT_THREADS],
            commit_max_consecutive_failures=parsed[COMMIT_MAX_CONSECUTIVE_FAILURES],
            catalog_name=parsed[CATALOG_NAME],
            catalog_props=originals_with_prefix(props, CATALOG_PREFIX),
            auto_create_props=originals_with_prefix(props, AUTO_CREATE_PROPS_PREFIX),
            write_props=originals_with_prefix(props, WRITE_PROPS_PREFIX),
            group_id=parsed[CONNECT_GROUP_ID],
            default_table=defaults,
            table_overrides=overrides,
        )
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @property
    def connect_group_id(self) -> str:
        """``iceberg.connect.group-id``, else ``connect-<name>``; raises ConfigException
        when neither is set (Apache: "Connector name cannot be null")."""
        if self.group_id is not None:
            return self.group_id
        if self.name is None:
            raise ConfigException("Connector name cannot be null", name="name")
        return f"connect-{self.name}"

    def table_config(self, table: str) -> TableConfig:
        """The table's ``iceberg.table.<table>.*`` configs over the ``iceberg.tables.default-*``
        ones; built once, with the config."""
        return self.table_overrides.get(table, self.default_table)

    def __repr__(self) -> str:
        """Without the catalog's password values."""
        catalog = {
            k: HIDDEN if CONFIG_DEF.is_password(CATALOG_PREFIX + k) else v
            for k, v in self.catalog_props.items()
        }
        return f"IcebergSinkConfig(name={self.name!r}, tables={self.tables!r}, catalog={catalog!r})"


_URL_PASSWORD = re.compile(r"(://[^/@\s:]*:)[^/@\s]*@")
"""The password in a URL's user info (``postgresql://user:password@host/db``)."""
_COMMA = re.compile(",")
"""How Apache splits id columns (partition-by terms: :data:`COMMA_NO_PARENS_REGEX`)."""


def table_props(props: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """The per-table configs of ``props``, by table then key (``route-regex`` …): the
    table's name is what lies between ``iceberg.table.`` and the key, dots and all."""
    tables: dict[str, dict[str, str]] = {}
    for full, value in props.items():
        if not full.startswith(TABLE_PREFIX):
            continue
        rest = full[len(TABLE_PREFIX) :]
        for key in TABLE_KEYS:
            if rest.endswith("." + key) and len(rest) > len(key) + 1:
                tables.setdefault(rest[: -len(key) - 1], {})[key] = value
    return tables


def _table_config(own: Mapping[str, str], defaults: TableConfig) -> TableConfig:
    regex = own.get(ROUTE_REGEX)
    return TableConfig(
        re.compile(regex) if regex is not None else None,
        string_to_list(own[ID_COLUMNS], _COMMA) if ID_COLUMNS in own else defaults.id_columns,
        string_to_list(own[PARTITION_BY], COMMA_NO_PARENS_REGEX)
        if PARTITION_BY in own
        else defaults.partition_by,
        own.get(COMMIT_BRANCH, defaults.commit_branch),
    )


def problems(props: Mapping[str, str], parsed: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """The errors beyond each defined key's own, as (key, message), for ``props`` whose
    defined keys parsed into ``parsed``: Apache's constructor's (tables or dynamic routing,
    a route field for it), each table's ``partition-by`` and ``route-regex``, and the
    catalog's (:func:`catalog_problems`)."""
    if parsed[TABLES] is not None:
        if parsed[DYNAMIC_ENABLED]:
            message = "Cannot specify both static and dynamic table names"
            yield TABLES, message
            yield DYNAMIC_ENABLED, message
    elif parsed[DYNAMIC_ENABLED]:
        if parsed[ROUTE_FIELD] is None:
            yield ROUTE_FIELD, "Must specify a route field if using dynamic table names"
    else:
        yield TABLES, "Must specify table name(s)"
    for table, own in table_props(props).items():
        checks: tuple[tuple[str, Validator], ...] = (
            (PARTITION_BY, PartitionBy()),
            (ROUTE_REGEX, ValidRegex()),
        )
        for key, validator in checks:
            if key in own:
                full = f"{TABLE_PREFIX}{table}.{key}"
                try:
                    validator.ensure_valid(full, own[key])
                except ConfigException as e:
                    yield full, str(e)
    yield from catalog_problems(originals_with_prefix(props, CATALOG_PREFIX))


def catalog_problems(catalog: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    """What keeps pyiceberg's ``load_catalog`` from choosing a catalog by ``catalog``
    (``iceberg.catalog.*`` without the prefix), as (key, message): ``type`` or
    ``py-catalog-impl``, not both; a ``type`` pyiceberg has, with a ``uri`` where pyiceberg
    requires one (rest, hive, sql); without either, a ``uri`` pyiceberg infers the type
    from (http…, thrift…, sqlite…, postgresql…). Unlike pyiceberg, the catalogs of
    ``~/.pyiceberg.yaml`` and ``PYICEBERG_CATALOG__*`` are not consulted: the connector's
    config alone must name its catalog, the same wherever it is validated or run. A Java
    ``catalog-impl`` is refused (pyiceberg ignores it)."""
    if not catalog:
        yield CATALOG_PREFIX + CATALOG_TYPE, "Must specify Iceberg catalog properties"
        return
    type_, impl = catalog.get(CATALOG_TYPE), catalog.get(PY_CATALOG_IMPL)
    uri = catalog.get(CATALOG_URI)
    if type_ and impl:
        message = (
            "Must not set both catalog type and py-catalog-impl configurations, "
            f"but found type {type_} and py-catalog-impl {impl}"
        )
        yield CATALOG_PREFIX + CATALOG_TYPE, message
        yield CATALOG_PREFIX + PY_CATALOG_IMPL, message
    elif impl:
        if len(impl.split(".")) < 2:
            yield (
                CATALOG_PREFIX + PY_CATALOG_IMPL,
                f"py-catalog-impl should be full path (module.CustomCatalog), got: {impl}",
            )
    elif type_:
        if type_.lower() not in CATALOG_TYPES:
            yield (
                CATALOG_PREFIX + CATALOG_TYPE,
                f"Invalid value {type_} for configuration {CATALOG_PREFIX}{CATALOG_TYPE}: "
                f"Value must be one of: [{', '.join(CATALOG_TYPES)}] (pyiceberg's catalogs)",
            )
        elif type_.lower() in ("rest", "hive", "sql") and not uri:
            yield CATALOG_PREFIX + CATALOG_URI, f"A {type_.lower()} catalog needs a URI"
    elif JAVA_CATALOG_IMPL in catalog:
        yield (
            CATALOG_PREFIX + JAVA_CATALOG_IMPL,
            f"Java catalog classes cannot be loaded here ({catalog[JAVA_CATALOG_IMPL]}): set "
            f"{CATALOG_PREFIX}{CATALOG_TYPE} (one of {', '.join(CATALOG_TYPES)}) or "
            f"{CATALOG_PREFIX}{PY_CATALOG_IMPL}",
        )
    elif not uri:
        yield (
            CATALOG_PREFIX + CATALOG_TYPE,
            f"Must specify {CATALOG_PREFIX}{CATALOG_TYPE}, or {CATALOG_PREFIX}{CATALOG_URI} "
            "to infer it from",
        )
    elif not any(uri.startswith(prefix) for prefix, _ in _URI_TYPES):
        yield (
            CATALOG_PREFIX + CATALOG_URI,
            "Could not infer the catalog type from the uri (http…: rest, thrift…: hive, "
            f"sqlite… or postgresql…: sql): set {CATALOG_PREFIX}{CATALOG_TYPE}",
        )


def validate(props: Mapping[str, str]) -> Config:
    """Kafka Connect's per-key answer: the ConfigDef's checks, then (when they pass)
    :func:`problems`, each on the key it names (a pass-through key is added, its value
    ``[hidden]`` when it is a password)."""
    values = CONFIG_DEF.validate_all(props)
    if not any(v.error_messages for v in values.values()):
        for key, message in problems(props, CONFIG_DEF.parse(props)):
            if key not in values:
                shown = HIDDEN if CONFIG_DEF.is_password(key) else props.get(key)
                values[key] = ConfigValue(key, shown)
            values[key].add_error_message(message)
    return Config(list(values.values()))


def load_catalog(config: IcebergSinkConfig) -> Catalog:
    """The catalog ``config`` names, by pyiceberg's ``load_catalog(name, **props)``.
    Raises :class:`ConnectException` naming the catalog when pyiceberg cannot make it; its
    reason is given with every password value of the catalog's props, and any URL's
    password, replaced by ``[hidden]``; and the original exception is not chained (its message may hold them)."""
    from pyiceberg.catalog import load_catalog as pyiceberg_load_catalog

    try:
        return pyiceberg_load_catalog(config.catalog_name, **config.catalog_props)
    except Exception as e:
        reason = f"{type(e).__name__}: {e}"
        for key, value in config.catalog_props.items():
            if value and CONFIG_DEF.is_password(CATALOG_PREFIX + key):
                reason = reason.replace(value, HIDDEN)
        reason = _URL_PASSWORD.sub(rf"\1{HIDDEN}@", reason)
    raise ConnectException(
        f"Failed to load Iceberg catalog {config.catalog_name!r}: {reason}"
    ) from None
