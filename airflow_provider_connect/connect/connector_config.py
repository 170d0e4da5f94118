"""The configuration every connector shares, as Kafka Connect's ``ConnectorConfig`` and
``SinkConnectorConfig``: ``name``, ``connector.class``, ``tasks.max`` and
``tasks.max.enforce`` (KIP-1004), the converters, the ``*.plugin.version`` keys of KIP-891
(see :mod:`.plugin_versions`), ``transforms`` and ``predicates`` (see
:mod:`.transform_config`), the error handling keys, for sinks ``topics``/``topics.regex`` and
the dead-letter queue, and for sources the exactly-once keys of KIP-618."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connect.config import (
    CompositeValidator,
    ConfigDef,
    ConfigValue,
    Importance,
    InstalledPlugins,
    KafkaTopicName,
    LambdaValidator,
    NonEmptyStringWithoutControlChars,
    Range,
    Type,
    ValidRegex,
    ValidString,
    Width,
)
from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.connect.plugin_versions import (
    PLUGIN_VERSION_SUFFIX,
    VERSION_SPEC_VALIDATOR,
)
from airflow_provider_connect.connect.plugins import CONVERTERS_GROUP
from airflow_provider_connect.connect.transform_config import ALIASES_CONFIG_DEF

COMMON_GROUP = "Common"

NAME_CONFIG = "name"
CONNECTOR_CLASS_CONFIG = "connector.class"
CONNECTOR_VERSION_CONFIG = f"connector.{PLUGIN_VERSION_SUFFIX}"
TASKS_MAX_CONFIG = "tasks.max"
TASKS_MAX_ENFORCE_CONFIG = "tasks.max.enforce"
TASKS_DEDICATED_SLOT_CONFIG = "tasks.dedicated.slot"
KEY_CONVERTER_CLASS_CONFIG = "key.converter"
VALUE_CONVERTER_CLASS_CONFIG = "value.converter"
HEADER_CONVERTER_CLASS_CONFIG = "header.converter"
CONVERTER_CLASS_CONFIGS = (
    KEY_CONVERTER_CLASS_CONFIG,
    VALUE_CONVERTER_CLASS_CONFIG,
    HEADER_CONVERTER_CLASS_CONFIG,
)
"""The keys naming a connector's converters; each converter's own keys go under its key
and a dot (``value.converter.schemas.enable``)."""
CONVERTER_VERSION_CONFIGS = {
    name: f"{name}.{PLUGIN_VERSION_SUFFIX}" for name in CONVERTER_CLASS_CONFIGS
}
"""Each converter's class key to its version key (KIP-891): connector and worker keys alike."""
TOPICS_CONFIG = "topics"
TOPICS_REGEX_CONFIG = "topics.regex"

MAX_NAME_LENGTH = 255
"""The longest connector name: what the metadata database's name columns hold."""
MAX_TASKS = 1000
"""The largest ``tasks.max``: each task takes a Spark task slot of its own."""


def _addressable(name: str, value: Any) -> None:
    """A name the REST API can put in a path and the store can hold."""
    if "/" in value:
        raise ConfigException.invalid(name, value, "Connector name may not contain '/'")
    if len(value) > MAX_NAME_LENGTH:
        raise ConfigException.invalid(
            name, f"{value[:40]}…", f"Connector name may be at most {MAX_NAME_LENGTH} characters"
        )


def _implements(base_path: str, what: str) -> LambdaValidator:
    def check(name: str, value: Any) -> None:
        from airflow_provider_connect.connect.plugins import load_class

        base = load_class(base_path)
        if value is not None and not (isinstance(value, type) and issubclass(value, base)):
            raise ConfigException.invalid(
                name, getattr(value, "__name__", value), f"Class must implement {what}"
            )

    return LambdaValidator(check, f"a {what} class")


_CONVERTER_DOC = (
    "Converter class used to convert between Kafka Connect format and the serialized form "
    "that is written to Kafka. This controls the format of the {part} in messages written to "
    "or read from Kafka, and since this is independent of connectors it allows any connector "
    "to work with any serialization format. Overrides the worker's setting when set."
)

CONNECTOR_CONFIG_DEF = (
    ConfigDef()
    .define(
        NAME_CONFIG,
        Type.STRING,
        validator=CompositeValidator(
            NonEmptyStringWithoutControlChars(),
            LambdaValidator(_addressable, f"without '/', at most {MAX_NAME_LENGTH} characters"),
        ),
        importance=Importance.HIGH,
        documentation="Globally unique name to use for this connector.",
        group=COMMON_GROUP,
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Connector name",
    )
    .define(
        CONNECTOR_CLASS_CONFIG,
        Type.STRING,
        importance=Importance.HIGH,
        documentation=(
            "Name or alias of the class for this connector: a dotted Python path to a "
            "Connector subclass, or the alias of a built-in connector."
        ),
        group=COMMON_GROUP,
        order_in_group=2,
        width=Width.LONG,
        display_name="Connector class",
    )
    .define(
        CONNECTOR_VERSION_CONFIG,
        Type.STRING,
        None,
        VERSION_SPEC_VALIDATOR,
        Importance.MEDIUM,
        "Version of the connector.",
        group=COMMON_GROUP,
        order_in_group=3,
        width=Width.MEDIUM,
        display_name="Connector version",
    )
    .define(
        TASKS_MAX_CONFIG,
        Type.INT,
        1,
        Range.between(1, MAX_TASKS),
        Importance.HIGH,
        "Maximum number of tasks to use for this connector.",
        group=COMMON_GROUP,
        order_in_group=4,
        width=Width.SHORT,
        display_name="Tasks max",
    )
    .define(
        TASKS_MAX_ENFORCE_CONFIG,
        Type.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="(Deprecated) Whether to enforce that the tasks.max property is "
        "respected by the connector. By default, connectors that generate too many tasks "
        "will fail, and existing sets of tasks that exceed the tasks.max property will also "
        "be failed. If this property is set to false, then connectors will be allowed to "
        "generate more than the maximum number of tasks, and existing sets of tasks that "
        "exceed the tasks.max property will be allowed to run. This property is deprecated "
        "and will be removed in an upcoming major release.",
        group=COMMON_GROUP,
        order_in_group=5,
        width=Width.SHORT,
        display_name="Enforce tasks max",
    )
    .define(
        TASKS_DEDICATED_SLOT_CONFIG,
        Type.BOOLEAN,
        False,
        importance=Importance.LOW,
        documentation="Whether each task of this connector runs in a Spark task slot (an "
        "executor core) of its own even where the worker's tasks.per.slot lets tasks share "
        "slots: for tasks that keep a core busy.",
        group=COMMON_GROUP,
        order_in_group=20,
        width=Width.SHORT,
        display_name="Tasks in dedicated slots",
    )
)
for _order, (_name, _base, _part, _display) in enumerate(
    [
        (KEY_CONVERTER_CLASS_CONFIG, "Converter", "keys", "Key"),
        (VALUE_CONVERTER_CLASS_CONFIG, "Converter", "values", "Value"),
        (HEADER_CONVERTER_CLASS_CONFIG, "HeaderConverter", "header values", "Header"),
    ]
):
    CONNECTOR_CONFIG_DEF.define(
        _name,
        Type.CLASS,
        None,
        _implements(f"{__package__}.storage.{_base}", _base),
        Importance.LOW,
        _CONVERTER_DOC.format(part=_part),
        group=COMMON_GROUP,
        order_in_group=6 + 2 * _order,
        width=Width.SHORT,
        display_name=f"{_display} converter class",
        recommender=InstalledPlugins(CONVERTERS_GROUP, f"{__package__}.storage.{_base}"),
    ).define(
        CONVERTER_VERSION_CONFIGS[_name],
        Type.STRING,
        None,
        VERSION_SPEC_VALIDATOR,
        Importance.LOW,
        f"Version of the {_display.lower()} converter.",
        group=COMMON_GROUP,
        order_in_group=7 + 2 * _order,
        width=Width.SHORT,
        display_name=f"{_display} converter version",
    )

ERROR_GROUP = "Error Handling"
ERRORS_TOLERANCE_CONFIG = "errors.tolerance"
ERRORS_RETRY_TIMEOUT_CONFIG = "errors.retry.timeout"
ERRORS_RETRY_MAX_DELAY_CONFIG = "errors.retry.delay.max.ms"
ERRORS_LOG_ENABLE_CONFIG = "errors.log.enable"
ERRORS_LOG_INCLUDE_MESSAGES_CONFIG = "errors.log.include.messages"
DLQ_TOPIC_NAME_CONFIG = "errors.deadletterqueue.topic.name"
DLQ_TOPIC_REPLICATION_FACTOR_CONFIG = "errors.deadletterqueue.topic.replication.factor"
DLQ_CONTEXT_HEADERS_ENABLE_CONFIG = "errors.deadletterqueue.context.headers.enable"

CONNECTOR_CONFIG_DEF = CONNECTOR_CONFIG_DEF.merged(
    ConfigDef()
    .define(
        ERRORS_RETRY_TIMEOUT_CONFIG,
        Type.LONG,
        0,
        importance=Importance.MEDIUM,
        documentation="The maximum duration in milliseconds that a failed operation will be "
        "reattempted. The default is 0, which means no retries will be attempted. Use -1 for "
        "infinite retries.",
        group=ERROR_GROUP,
        order_in_group=1,
        display_name="Retry Timeout for Errors",
    )
    .define(
        ERRORS_RETRY_MAX_DELAY_CONFIG,
        Type.LONG,
        60_000,
        Range.at_least(1),
        Importance.MEDIUM,
        "The maximum duration in milliseconds between consecutive retry attempts. Jitter "
        "will be added to the delay once this limit is reached to prevent thundering herd "
        "issues.",
        group=ERROR_GROUP,
        order_in_group=2,
        display_name="Maximum Delay Between Retries for Errors",
    )
    .define(
        ERRORS_TOLERANCE_CONFIG,
        Type.STRING,
        "none",
        ValidString("none", "all"),
        Importance.MEDIUM,
        "Behavior for tolerating errors during connector operation. 'none' is the default "
        "value and signals that any error will result in an immediate connector task failure; "
        "'all' changes the behavior to skip over problematic records.",
        group=ERROR_GROUP,
        order_in_group=3,
        display_name="Error Tolerance",
    )
    .define(
        ERRORS_LOG_ENABLE_CONFIG,
        Type.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        documentation="If true, write each error and the details of the failed operation "
        "and problematic record to the Connect application log.",
        group=ERROR_GROUP,
        order_in_group=4,
        display_name="Log Errors",
    )
    .define(
        ERRORS_LOG_INCLUDE_MESSAGES_CONFIG,
        Type.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        documentation="Whether to include in the log the Connect record that resulted in a "
        "failure. By default only the topic, partition and offset are logged.",
        group=ERROR_GROUP,
        order_in_group=5,
        display_name="Log Error Details",
    )
).merged(ALIASES_CONFIG_DEF)

SINK_CONNECTOR_CONFIG_DEF = CONNECTOR_CONFIG_DEF.merged(
    ConfigDef()
    .define(
        TOPICS_CONFIG,
        Type.LIST,
        "",
        importance=Importance.HIGH,
        documentation="List of topics to consume, separated by commas.",
        group=COMMON_GROUP,
        order_in_group=12,
        width=Width.LONG,
        display_name="Topics",
    )
    .define(
        TOPICS_REGEX_CONFIG,
        Type.STRING,
        "",
        ValidRegex(),
        Importance.HIGH,
        "Regular expression giving topics to consume. Only one of topics or topics.regex "
        "should be specified.",
        group=COMMON_GROUP,
        order_in_group=13,
        width=Width.LONG,
        display_name="Topics regex",
    )
    .define(
        DLQ_TOPIC_NAME_CONFIG,
        Type.STRING,
        "",
        KafkaTopicName(blank_ok=True),
        importance=Importance.MEDIUM,
        documentation="The name of the topic to be used as the dead letter queue (DLQ) for "
        "messages that result in an error when processed by this sink connector, or its "
        "transformations or converters. The topic name is blank by default, which means that "
        "no messages are to be recorded in the DLQ.",
        group=ERROR_GROUP,
        order_in_group=6,
        display_name="Dead Letter Queue Topic Name",
    )
    .define(
        DLQ_TOPIC_REPLICATION_FACTOR_CONFIG,
        Type.SHORT,
        3,
        importance=Importance.MEDIUM,
        documentation="Replication factor used to create the dead letter queue topic when it "
        "doesn't already exist.",
        group=ERROR_GROUP,
        order_in_group=7,
        display_name="Dead Letter Queue Topic Replication Factor",
    )
    .define(
        DLQ_CONTEXT_HEADERS_ENABLE_CONFIG,
        Type.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        documentation="If true, add headers containing error context to the messages written "
        "to the dead letter queue. To avoid clashing with headers from the original record, "
        "all error context header keys will start with "
        "__connect.errors.",
        group=ERROR_GROUP,
        order_in_group=8,
        display_name="Enable Error Context Headers",
    )
)


def validate_sink_topics(props: Mapping[str, Any], results: Mapping[str, ConfigValue]) -> None:
    """Adds Kafka Connect's cross-key errors for ``topics``/``topics.regex`` to ``results``:
    exactly one of the two must be set."""
    has_topics = bool(str(props.get(TOPICS_CONFIG, "") or "").strip())
    has_regex = bool(str(props.get(TOPICS_REGEX_CONFIG, "") or "").strip())
    if has_topics and has_regex:
        message = f"{TOPICS_CONFIG} and {TOPICS_REGEX_CONFIG} are mutually exclusive options, but both are set."
    elif not has_topics and not has_regex:
        message = f"Must configure one of {TOPICS_CONFIG} or {TOPICS_REGEX_CONFIG}"
    else:
        return
    results[TOPICS_CONFIG].add_error_message(message)
    results[TOPICS_REGEX_CONFIG].add_error_message(message)


EXACTLY_ONCE_GROUP = "Exactly Once Support"
EXACTLY_ONCE_SUPPORT_CONFIG = "exactly.once.support"
TRANSACTION_BOUNDARY_CONFIG = "transaction.boundary"
TRANSACTION_BOUNDARY_INTERVAL_CONFIG = "transaction.boundary.interval.ms"
OFFSETS_TOPIC_CONFIG = "offsets.storage.topic"
REQUESTED, REQUIRED = "requested", "required"
POLL_BOUNDARY, INTERVAL_BOUNDARY, CONNECTOR_BOUNDARY = "poll", "interval", "connector"


def _null_or_at_least_zero(name: str, value: Any) -> None:
    if value is not None:
        Range.at_least(0).ensure_valid(name, value)


SOURCE_CONNECTOR_CONFIG_DEF = CONNECTOR_CONFIG_DEF.merged(
    ConfigDef()
    .define(
        EXACTLY_ONCE_SUPPORT_CONFIG,
        Type.STRING,
        REQUESTED,
        ValidString(REQUESTED, REQUIRED),
        Importance.MEDIUM,
        "Permitted values are requested, required. If set to required, forces a preflight "
        "check for the connector to ensure that it can provide exactly-once semantics with "
        "the given configuration. Used only when the worker's exactly.once.source.support "
        "is enabled.",
        group=EXACTLY_ONCE_GROUP,
        order_in_group=1,
        display_name="Exactly once support",
    )
    .define(
        TRANSACTION_BOUNDARY_CONFIG,
        Type.STRING,
        POLL_BOUNDARY,
        ValidString(POLL_BOUNDARY, INTERVAL_BOUNDARY, CONNECTOR_BOUNDARY),
        Importance.MEDIUM,
        "Permitted values are: poll, interval, connector. If set to 'poll', a new producer "
        "transaction will be started and committed for every batch of records that each "
        "task from this connector provides to Connect. If set to 'connector', relies on "
        "connector-defined transaction boundaries. If set to 'interval', commits "
        "transactions only after a user-defined time interval has passed.",
        group=EXACTLY_ONCE_GROUP,
        order_in_group=2,
        display_name="Transaction Boundary",
    )
    .define(
        TRANSACTION_BOUNDARY_INTERVAL_CONFIG,
        Type.LONG,
        None,
        LambdaValidator(_null_or_at_least_zero, "[0,...]"),
        Importance.LOW,
        "If 'transaction.boundary' is set to 'interval', determines the interval for "
        "producer transaction commits by connector tasks. If unset, defaults to the value "
        "of the worker-level 'offset.flush.interval.ms' property.",
        group=EXACTLY_ONCE_GROUP,
        order_in_group=3,
        display_name="Transaction boundary interval",
    )
    .define(
        OFFSETS_TOPIC_CONFIG,
        Type.STRING,
        None,
        KafkaTopicName(blank_ok=True),
        importance=Importance.LOW,
        documentation="The name of a separate offsets topic to use for this connector. If "
        "empty or not specified, the worker's global offsets topic name will be used.",
        group=EXACTLY_ONCE_GROUP,
        order_in_group=4,
        display_name="Offsets topic",
    )
)
