"""Validating a connector config as Kafka Connect's herder does: the shared connector
definition, the sink topic rules, the installed versions of its plugins against their
``*.plugin.version`` requirements (KIP-891), and the connector's own ``validate``, into one
``ConfigInfos`` result (the REST ``…/config/validate`` body and the REST 400 details).

Placeholders (``${provider:path:key}``, KIP-297) are never resolved here: whoever writes a
config (REST, the Airflow hook, the Connectors page, the embedded API) may not be able to
read the secret, and the resolved value must not reach them. A key whose value holds a
placeholder counts as set, and its value checks wait until the runtime resolves it where
the connector starts (the herder validates the resolved config then, and fails the
connector with the same per-field messages). A config that holds any placeholder has its
connector's own ``validate`` (which may need the secret, e.g. to reach a database) run at
start too; its connector's ConfigDef checks the keys without placeholders at once."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from airflow_provider_connect.connect.config import (
    ConfigDef,
    ConfigValue,
    config_infos,
    originals_with_prefix,
)
from airflow_provider_connect.connect.config_provider import placeholder_keys
from airflow_provider_connect.connect.connector import Connector
from airflow_provider_connect.connect.connector_config import (
    CONNECTOR_BOUNDARY,
    CONNECTOR_CLASS_CONFIG,
    CONNECTOR_CONFIG_DEF,
    CONNECTOR_VERSION_CONFIG,
    CONVERTER_CLASS_CONFIGS,
    CONVERTER_VERSION_CONFIGS,
    EXACTLY_ONCE_SUPPORT_CONFIG,
    REQUESTED,
    REQUIRED,
    SINK_CONNECTOR_CONFIG_DEF,
    SOURCE_CONNECTOR_CONFIG_DEF,
    TRANSACTION_BOUNDARY_CONFIG,
    validate_sink_topics,
)
from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connect.plugin_versions import (
    VersionedPluginLoadingException,
    ensure_version,
)
from airflow_provider_connect.connect.plugins import class_name
from airflow_provider_connect.connect.sink import SinkConnector
from airflow_provider_connect.connect.source import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    SourceConnector,
)
from airflow_provider_connect.connect.storage import CONVERTER_TYPE_CONFIG
from airflow_provider_connect.connect.transform_config import enriched, validate_aliases
from airflow_provider_connect.control.overrides import OverridePolicy, validate_overrides
from airflow_provider_connect.control.plugins import (
    connector_class,
    plugin_version,
    versioned_plugins,
)

ALL_OVERRIDES = OverridePolicy()

UNSUPPORTED_MESSAGE = (
    "The connector does not support exactly-once semantics with the provided configuration."
)
UNKNOWN_MESSAGE = (
    "The connector does not implement the API required for preflight validation of "
    "exactly-once source support. Please consult the documentation for the connector to "
    "determine whether it supports exactly-once semantics, and then consider reconfiguring "
    f"the connector to use the value '{REQUESTED}' for this property (which will disable "
    "this preflight check and allow the connector to be created)."
)
BOUNDARIES_MESSAGE = (
    "The connector does not support connector-defined transaction boundaries with the given "
    "configuration. Please reconfigure it to use a different transaction boundary definition."
)


def error_lines(infos: Mapping[str, Any]) -> list[str]:
    """One line per distinct error of a ``ConfigInfos``, naming the keys it was reported
    for (``"topics, topics.regex: Must configure one of topics or topics.regex"``), in
    the order the keys were validated."""
    keys_by_error: dict[str, list[str]] = {}
    for config in infos["configs"]:
        value = config["value"]
        for error in value["errors"]:
            keys = keys_by_error.setdefault(error, [])
            if value["name"] not in keys:
                keys.append(value["name"])
    return [f"{', '.join(keys)}: {error}" for error, keys in keys_by_error.items()]


def invalid_config_message(lines: list[str], *, when: str = "") -> str:
    """Kafka Connect's message for an invalid config, one :func:`error_lines` line each;
    ``when`` qualifies it (e.g. " once its placeholders are resolved")."""
    return (
        f"Connector configuration is invalid{when} and contains the following "
        f"{len(lines)} error(s):\n" + "\n".join(lines)
    )


class ConfigValidationError(ConnectException):
    """A connector config with errors; ``infos`` holds every error per field, and the
    message one line per distinct error naming its keys."""

    def __init__(self, infos: dict[str, Any]) -> None:
        super().__init__(
            invalid_config_message(error_lines(infos))
            + "\nYou can also find the above list of errors at the endpoint "
            f"`/connector-plugins/{infos['name']}/config/validate`"
        )
        self.infos = infos


def validate_exactly_once(
    connector: SourceConnector, config: Mapping[str, str], results: Mapping[str, ConfigValue]
) -> None:
    """Adds KIP-618's preflight errors: ``exactly.once.support=required`` for a connector
    that does not declare support, ``transaction.boundary=connector`` for one that cannot
    define boundaries."""
    support = results[EXACTLY_ONCE_SUPPORT_CONFIG]
    if not support.error_messages and str(support.value).lower() == REQUIRED:
        answer = connector.exactly_once_support(dict(config))
        if answer is not ExactlyOnceSupport.SUPPORTED:
            support.add_error_message(UNKNOWN_MESSAGE if answer is None else UNSUPPORTED_MESSAGE)
    boundary = results[TRANSACTION_BOUNDARY_CONFIG]
    if (
        not boundary.error_messages
        and str(boundary.value).lower() == CONNECTOR_BOUNDARY
        and connector.can_define_transaction_boundaries(dict(config))
        is not ConnectorTransactionBoundaries.SUPPORTED
    ):
        boundary.add_error_message(BOUNDARIES_MESSAGE)


def validate_connector_config(
    config: dict[str, str],
    policy: OverridePolicy = ALL_OVERRIDES,
    *,
    defer_placeholders: bool = True,
) -> dict[str, Any]:
    """Every error of ``config`` per field, in the ``ConfigInfos`` shape (never raises);
    client overrides are checked against ``policy`` (the runtime's). With
    ``defer_placeholders`` (a writer's check) the values of keys holding a placeholder are
    not checked (see the module's docstring); without it (the runtime's check of a resolved
    config) a placeholder left unresolved is a value like any other, and is checked. The
    answer's ``name`` is ``connector.class`` as the config gives it, as Kafka's
    ``AbstractHerder.validateConnectorConfig`` answers."""
    name = config.get(CONNECTOR_CLASS_CONFIG, "")
    try:
        cls: type[Connector] | None = connector_class(name)
    except ImportError as e:
        cls, class_error = None, str(e)
    is_sink = cls is not None and issubclass(cls, SinkConnector)
    is_source = cls is not None and issubclass(cls, SourceConnector)
    common = (
        SINK_CONNECTOR_CONFIG_DEF
        if is_sink
        else SOURCE_CONNECTOR_CONFIG_DEF
        if is_source
        else CONNECTOR_CONFIG_DEF
    )
    plugins = enriched(config)  # each transformation and predicate alias's keys
    deferred = placeholder_keys(config) if defer_placeholders else frozenset()
    results = {**common.validate_all(config), **plugins.validate_all(config)}
    _defer(results.values(), deferred)
    validate_aliases(config, results)
    validate_overrides(config, policy, results)
    if cls is None:
        results[CONNECTOR_CLASS_CONFIG].add_error_message(class_error)
        return config_infos(name or "unknown", common.merged(plugins), results.values())
    validate_plugin_versions(config, cls, results, deferred)
    if results[CONNECTOR_VERSION_CONFIG].error_messages:  # as Kafka: not this connector
        return config_infos(name, common.merged(plugins), results.values())
    converters, converter_values = validate_converter_configs(config, results, deferred)
    if is_sink:
        validate_sink_topics(config, results)
    connector = cls()
    if deferred:  # the connector's own checks need the resolved config: at start
        own = list(connector.config().validate_all(config).values())
        _defer(own, deferred)
    else:
        if isinstance(connector, SourceConnector):
            validate_exactly_once(connector, config, results)
        own = connector.validate(dict(config)).config_values
    definition = common.merged(connector.config()).merged(plugins).merged(converters)
    for value in own:  # the connector may add errors to shared keys (e.g. converters)
        if value.name in results:
            shared = results[value.name].error_messages
            shared.extend(e for e in value.error_messages if e not in shared)
    values = [*results.values(), *(v for v in own if v.name not in results), *converter_values]
    return config_infos(name, definition, values)


def validate_converter_configs(
    config: Mapping[str, str], results: Mapping[str, ConfigValue], deferred: frozenset[str]
) -> tuple[ConfigDef, list[ConfigValue]]:
    """Kafka Connect's check of the converters a connector config names itself (3.7+):
    each one's keys (``value.converter.schema.registry.url``) validated against its
    ``config()``, with ``converter.type`` set as the runtime sets it, reported under their
    prefixed names. A converter whose class key has errors is left out (its key says what
    is wrong), and so are the value errors of keys holding placeholders (``deferred``)."""
    definition = ConfigDef()
    values: list[ConfigValue] = []
    for key in CONVERTER_CLASS_CONFIGS:
        result = results.get(key)
        version = results.get(CONVERTER_VERSION_CONFIGS[key])
        if (
            not config.get(key)
            or result is None
            or result.error_messages
            or (version is not None and version.error_messages)
            or not isinstance(result.value, type)
        ):
            continue
        kind = key.partition(".")[0]
        try:
            own_definition: ConfigDef = result.value().config()
        except Exception as e:  # a third-party converter's failure, reported on its key
            result.add_error_message(f"Failed to load ConfigDef from {kind} converter: {e}")
            continue
        prefix = key + "."
        own = {CONVERTER_TYPE_CONFIG: kind, **originals_with_prefix(config, prefix)}
        checked = own_definition.validate_all(own).values()
        prefixed = [replace(v, name=prefix + v.name) for v in checked]
        _defer(prefixed, deferred)
        values += prefixed
        definition = definition.merged(
            ConfigDef(replace(k, name=prefix + k.name) for k in own_definition.config_keys.values())
        )
    return definition, values


def validate_plugin_versions(
    config: Mapping[str, str],
    cls: type[Connector],
    results: Mapping[str, ConfigValue],
    deferred: frozenset[str],
) -> None:
    """Adds KIP-891's errors: for each plugin the config names (the connector ``cls``, the
    converters it sets, each alias's type) whose installed version misses the requirement
    of its ``*.plugin.version`` key, Kafka's message on both its class key and its version
    key. A plugin whose keys have errors already, or hold placeholders (``deferred``), is
    left out: its keys' own errors say what is wrong, or the runtime checks it at start."""
    for versioned in versioned_plugins(config):
        keys = (versioned.class_key, versioned.version_key)
        if any(k in deferred or k not in results or results[k].error_messages for k in keys):
            continue
        plugin = cls if versioned.class_key == CONNECTOR_CLASS_CONFIG else results[keys[0]].value
        if not isinstance(plugin, type):
            continue
        try:
            ensure_version(class_name(plugin), versioned.spec, plugin_version(plugin))
        except VersionedPluginLoadingException as e:
            for key in keys:
                results[key].add_error_message(str(e))


def _defer(values: Iterable[ConfigValue], keys: frozenset[str]) -> None:
    """Drops the value errors of ``keys``: their values are placeholders, checked once resolved."""
    for value in values:
        if value.name in keys:
            value.error_messages.clear()


def ensure_valid(config: dict[str, str], policy: OverridePolicy = ALL_OVERRIDES) -> None:
    """Raises :class:`ConfigValidationError` when ``config`` has any error."""
    infos = validate_connector_config(config, policy)
    if infos["error_count"]:
        raise ConfigValidationError(infos)
