"""The worker configuration: Kafka Connect's worker keys where one exists, plus
``metadata.url`` (the metadata database) and ``spark.*`` (passed to the SparkSession).

Keys under ``producer.``/``consumer.``/``admin.`` reach the Kafka clients with the prefix
stripped (confluent-kafka, i.e. librdkafka, names); a connector's ``producer.override.*`` and
``consumer.override.*`` win over them.

The names of the keys the Airflow side uses as well (``METADATA_URL``, ``SPARK_PREFIX``) are
the control layer's (``control/worker_keys.py``), imported here with the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from airflow_provider_connect.connect.config import (
    ConfigDef,
    Importance,
    KafkaTopicName,
    Range,
    Type,
    ValidString,
    originals_with_prefix,
)
from airflow_provider_connect.connect.connector_config import CONVERTER_VERSION_CONFIGS
from airflow_provider_connect.connect.plugin_versions import VERSION_SPEC_VALIDATOR
from airflow_provider_connect.control.overrides import (
    ALL,
    ALLOWLIST_CONFIG,
    POLICIES,
    POLICY_CONFIG,
    OverridePolicy,
)
from airflow_provider_connect.control.worker_keys import METADATA_URL as METADATA_URL
from airflow_provider_connect.control.worker_keys import SPARK_PREFIX as SPARK_PREFIX
from airflow_provider_connect.runtime.logs import DEFAULT_LOG_DIR, FORMATS

BOOTSTRAP_SERVERS = "bootstrap.servers"
GROUP_ID = "group.id"
KEY_CONVERTER = "key.converter"
VALUE_CONVERTER = "value.converter"
HEADER_CONVERTER = "header.converter"
OFFSET_FLUSH_INTERVAL_MS = "offset.flush.interval.ms"
OFFSET_FLUSH_TIMEOUT_MS = "offset.flush.timeout.ms"
LISTENERS = "listeners"
REST_ADVERTISED_LISTENER = "rest.advertised.listener"
REST_ADVERTISED_HOST_NAME = "rest.advertised.host.name"
REST_ADVERTISED_PORT = "rest.advertised.port"
REST_REQUEST_MAX_BYTES = "rest.request.max.bytes"
REST_EXTENSION_CLASSES = "rest.extension.classes"
ADMIN_LISTENERS = "admin.listeners"
METRICS_LISTENERS = "metrics.listeners"
LOG_FORMAT = "log.format"
LOG_DIR = "log.dir"
TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS = "task.shutdown.graceful.timeout.ms"
TASK_HEARTBEAT_INTERVAL_MS = "task.heartbeat.interval.ms"
TASK_HEARTBEAT_TIMEOUT_MS = "task.heartbeat.timeout.ms"
TASK_STORE_UNREACHABLE_GRACE_MS = "task.store.unreachable.grace.ms"
METADATA_REQUEST_TIMEOUT_MS = "metadata.request.timeout.ms"
EXACTLY_ONCE_SOURCE_SUPPORT = "exactly.once.source.support"
TASK_RESTART_BACKOFF_MS = "task.restart.backoff.ms"
TASK_RESTART_BACKOFF_MAX_MS = "task.restart.backoff.max.ms"
TASKS_PER_SLOT = "tasks.per.slot"
TASKS_DEDICATED_SLOT_RECORD_RATE = "tasks.dedicated.slot.record.rate"
METRICS_HISTORY_INTERVAL_MS = "metrics.history.interval.ms"
METRICS_HISTORY_RETENTION_MS = "metrics.history.retention.ms"
OFFSET_STORAGE_TOPIC = "offset.storage.topic"
OFFSET_STORAGE_PARTITIONS = "offset.storage.partitions"
OFFSET_STORAGE_REPLICATION_FACTOR = "offset.storage.replication.factor"
DISABLED, PREPARING, ENABLED = "disabled", "preparing", "enabled"  # exactly.once.source.support

WORKER_CONFIG_DEF = (
    ConfigDef()
    .define(
        BOOTSTRAP_SERVERS,
        Type.LIST,
        "localhost:9092",
        importance=Importance.HIGH,
        documentation="Kafka brokers to connect to, host:port separated by commas.",
    )
    .define(
        GROUP_ID,
        Type.STRING,
        "connect-cluster",
        importance=Importance.HIGH,
        documentation="Names this Connect cluster; prefixes its transactional ids.",
    )
    .define(
        METADATA_URL,
        Type.STRING,
        "sqlite:///connect-metadata.db",
        importance=Importance.HIGH,
        documentation="SQLAlchemy URL of the metadata database (SQLite file or PostgreSQL).",
    )
    .define(
        KEY_CONVERTER,
        Type.CLASS,
        "org.apache.kafka.connect.json.JsonConverter",
        importance=Importance.HIGH,
        documentation="Converter for record keys of connectors that do not set their own.",
    )
    .define(
        VALUE_CONVERTER,
        Type.CLASS,
        "org.apache.kafka.connect.json.JsonConverter",
        importance=Importance.HIGH,
        documentation="Converter for record values of connectors that do not set their own.",
    )
    .define(
        HEADER_CONVERTER,
        Type.CLASS,
        "org.apache.kafka.connect.storage.SimpleHeaderConverter",
        importance=Importance.LOW,
        documentation="Converter for header values of connectors that do not set their own.",
    )
    .define(
        OFFSET_FLUSH_INTERVAL_MS,
        Type.LONG,
        60_000,
        Range.at_least(0),
        Importance.LOW,
        "How often source offsets are committed and sink tasks' pre_commit runs.",
    )
    .define(
        OFFSET_FLUSH_TIMEOUT_MS,
        Type.LONG,
        5_000,
        Range.at_least(0),
        Importance.LOW,
        "Maximum number of milliseconds to wait for records to flush and partition offset "
        "data to be committed to offset storage before cancelling the process and restoring "
        "the offset data to be committed in a future attempt.",
    )
    .define(
        LISTENERS,
        Type.LIST,
        "http://127.0.0.1:8083",
        importance=Importance.LOW,
        documentation="Where the REST API listens (the first entry is used).",
    )
    .define(
        REST_REQUEST_MAX_BYTES,
        Type.INT,
        1_048_576,
        Range.at_least(1024),
        Importance.LOW,
        "The largest request body the REST API reads; a larger one is refused with 413.",
    )
    .define(
        REST_EXTENSION_CLASSES,
        Type.LIST,
        [],
        importance=Importance.LOW,
        documentation="REST extensions guarding every listener; "
        "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension "
        "(HTTP basic auth from the JAAS file java.security.auth.login.config names) is "
        "the one available.",
    )
    .define(
        ADMIN_LISTENERS,
        Type.LIST,
        None,
        importance=Importance.LOW,
        documentation="Where the admin endpoints (/admin/loggers) are served: unset, with "
        "the REST API on listeners; a list of http(s)://host:port, only there; empty, nowhere.",
    )
    .define(
        METRICS_LISTENERS,
        Type.LIST,
        [],
        importance=Importance.LOW,
        documentation="More addresses (http(s)://host:port) that serve /metrics alone; the "
        "REST listeners serve it too.",
    )
    .define(
        LOG_FORMAT,
        Type.STRING,
        "text",
        ValidString(*FORMATS),
        Importance.LOW,
        "How the driver and the task runs print their logs: 'text' (Kafka Connect's "
        "[name|task-0] before the message) or 'json' (one object a line).",
    )
    .define(
        LOG_DIR,
        Type.STRING,
        DEFAULT_LOG_DIR,
        importance=Importance.LOW,
        documentation="Where each task run writes its own log file, on the host that runs it.",
    )
    .define(
        "rest.basic.auth.read.only.users",
        Type.LIST,
        [],
        importance=Importance.LOW,
        documentation="Users of BasicAuthSecurityRestExtension who may only read (GET): "
        "any other request of theirs gets 403. Not in Kafka Connect.",
    )
    .define(
        "java.security.auth.login.config",
        Type.STRING,
        None,
        importance=Importance.LOW,
        documentation="The JAAS file of BasicAuthSecurityRestExtension (in Kafka a Java "
        "system property; -Djava.security.auth.login.config=… in KAFKA_OPTS works too).",
    )
    .define(
        REST_ADVERTISED_LISTENER,
        Type.STRING,
        None,
        importance=Importance.LOW,
        documentation="The protocol of the URL given to others (Airflow's sensors, other "
        "drivers); default: the listener's.",
    )
    .define(
        REST_ADVERTISED_HOST_NAME,
        Type.STRING,
        None,
        importance=Importance.LOW,
        documentation="The host name of the URL given to others; default: the listener's.",
    )
    .define(
        REST_ADVERTISED_PORT,
        Type.INT,
        None,
        importance=Importance.LOW,
        documentation="The port of the URL given to others; default: the listener's.",
    )
    .define(
        TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS,
        Type.LONG,
        5_000,
        Range.at_least(0),
        Importance.LOW,
        "How long a task may take to stop before its Spark job is cancelled.",
    )
    .define(
        TASK_HEARTBEAT_INTERVAL_MS,
        Type.LONG,
        500,
        Range.at_least(50),
        Importance.LOW,
        "How often a task records that it is alive and learns whether to pause or stop.",
    )
    .define(
        TASK_HEARTBEAT_TIMEOUT_MS,
        Type.LONG,
        15_000,
        Range.at_least(100),
        Importance.LOW,
        "A task without a heartbeat for this long is reported UNASSIGNED, and a driver's "
        "herder lease lasts this long past its last renewal.",
    )
    .define(
        TASK_STORE_UNREACHABLE_GRACE_MS,
        Type.LONG,
        300_000,
        Range.at_least(0),
        Importance.MEDIUM,
        "How long a running task goes on moving data while it cannot reach the metadata "
        "database (its offsets are stored once it can); past it the task stops, and the "
        "herder starts it again once the database is back.",
    )
    .define(
        METADATA_REQUEST_TIMEOUT_MS,
        Type.LONG,
        10_000,
        Range.at_least(100),
        Importance.LOW,
        "The deadline of one access of the driver or a task to a PostgreSQL metadata "
        "database (connecting, queries, commit); past it the access fails and is tried "
        "again later. The REST API answers within 2 s whatever this is.",
    )
    .define(
        TASK_RESTART_BACKOFF_MS,
        Type.LONG,
        0,
        Range.at_least(0),
        Importance.LOW,
        "Restart FAILED tasks automatically after this long, doubling with each failure in a "
        "row; 0 (the default, as in Kafka Connect) leaves them FAILED until restarted.",
    )
    .define(
        TASK_RESTART_BACKOFF_MAX_MS,
        Type.LONG,
        60_000,
        Range.at_least(0),
        Importance.LOW,
        "The longest wait between automatic restarts of a failing task.",
    )
    .define(
        TASKS_PER_SLOT,
        Type.INT,
        1,
        Range.at_least(1),
        Importance.MEDIUM,
        "How many tasks one Spark task slot (an executor core) runs, as threads of one "
        "Python worker: 1 (the default) gives every task a slot of its own; above it, tasks "
        "share slots, except those of connectors with tasks.dedicated.slot=true and those "
        "moving more than tasks.dedicated.slot.record.rate records a second.",
    )
    .define(
        TASKS_DEDICATED_SLOT_RECORD_RATE,
        Type.DOUBLE,
        1000.0,
        Range.at_least(0),
        Importance.LOW,
        "With tasks.per.slot above 1: a task sharing a slot that moves more records a "
        "second than this (measured from its counters over 10 s) is started again in a "
        "slot of its own; 0 never moves one.",
    )
    .define(
        METRICS_HISTORY_INTERVAL_MS,
        Type.LONG,
        15_000,
        Range.at_least(1000),
        Importance.LOW,
        "How often the driver that runs the connectors samples each connector's records "
        "moved and sink lag into the metadata database's history (what the Connectors page "
        "charts), from the counters its tasks' heartbeats wrote.",
    )
    .define(
        METRICS_HISTORY_RETENTION_MS,
        Type.LONG,
        3_600_000,
        Range.at_least(60_000),
        Importance.LOW,
        "How long the metadata database keeps the samples of metrics.history.interval.ms; "
        "older ones are deleted as new ones are written.",
    )
    .define(
        EXACTLY_ONCE_SOURCE_SUPPORT,
        Type.STRING,
        "disabled",
        ValidString(DISABLED, PREPARING, ENABLED),
        Importance.HIGH,
        "Exactly-once support for source connectors (KIP-618). 'enabled': source tasks "
        "produce their records and offsets in Kafka transactions, and zombies of earlier "
        "task generations are fenced; 'preparing': fencing and task-count records only, "
        "for a rolling change to 'enabled'; 'disabled': neither.",
    )
    .define(
        OFFSET_STORAGE_TOPIC,
        Type.STRING,
        "connect-offsets",
        KafkaTopicName(),
        importance=Importance.HIGH,
        documentation="The Kafka topic exactly-once source tasks commit their offsets to, "
        "in the transaction of their records (connectors may set offsets.storage.topic).",
    )
    .define(
        OFFSET_STORAGE_PARTITIONS,
        Type.INT,
        25,
        Range.at_least(1),
        Importance.LOW,
        "Partitions of the offsets topic when the runtime creates it.",
    )
    .define(
        OFFSET_STORAGE_REPLICATION_FACTOR,
        Type.SHORT,
        -1,
        importance=Importance.LOW,
        documentation="Replication factor of the offsets topic when the runtime creates it; "
        "-1 takes the broker's default.",
    )
)


WORKER_CONFIG_DEF.define(
    "config.providers",
    Type.LIST,
    [],
    importance=Importance.LOW,
    documentation="Aliases of the config providers that resolve ${alias:path:key} in connector "
    "configs (config.providers.<alias>.class and config.providers.<alias>.param.*).",
).define(
    POLICY_CONFIG,
    Type.STRING,
    ALL,
    ValidString(*POLICIES, case_sensitive=False),
    Importance.MEDIUM,
    "Class name or alias of implementation of ConnectorClientConfigOverridePolicy: which "
    "client configs connectors may override ('None', 'Principal', 'All' or 'Allowlist').",
).define(
    ALLOWLIST_CONFIG,
    Type.LIST,
    [],
    importance=Importance.MEDIUM,
    documentation="The client configs connectors may override under the 'Allowlist' policy.",
)

for _converter, _version in CONVERTER_VERSION_CONFIGS.items():
    WORKER_CONFIG_DEF.define(
        _version,
        Type.STRING,
        None,
        VERSION_SPEC_VALIDATOR,
        Importance.LOW,
        f"Version of the {_converter} of connectors that do not set their own (KIP-891): "
        "a version, or a Maven version range such as [1.0,2.0); checked against the "
        "installed version where a connector starts.",
    )


CLIENT_DEFAULTS = {"socket.timeout.ms": "30000"}
"""What the runtime's Kafka clients take unless the worker config says otherwise: a request
times out after 30 s, the default ``request.timeout.ms`` of Kafka's own producer and
consumer (librdkafka's ``socket.timeout.ms`` is 60 s). librdkafka drops a connection whose
request timed out and makes it again, so a connection that a network partition left
half-open (packets dropped, no reset) is replaced within 30 s, not held for a minute after
the network is back."""


def transactional(config: Mapping[str, Any], transactional_id: str) -> dict[str, Any]:
    """``config`` for a producer of ``transactional_id``, its request timeout within what
    librdkafka allows a transactional producer (``socket.timeout.ms`` at most
    ``transaction.timeout.ms`` + 100, librdkafka's own ceiling for the default it sets)."""
    limit = int(config.get("transaction.timeout.ms", 60_000)) + 100
    timeout = min(int(config.get("socket.timeout.ms", limit)), limit)
    return {**config, "transactional.id": transactional_id, "socket.timeout.ms": str(timeout)}


class WorkerConfig:
    """A parsed worker configuration; ``originals`` keeps every key as given."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        self.originals = {k: str(v) if not isinstance(v, str) else v for k, v in props.items()}
        self.values = WORKER_CONFIG_DEF.parse(self.originals)

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    @property
    def exactly_once_source(self) -> bool:
        """Whether source tasks run transactionally (``exactly.once.source.support=enabled``)."""
        return bool(self.values[EXACTLY_ONCE_SOURCE_SUPPORT] == ENABLED)

    @property
    def fences_zombies(self) -> bool:
        """Whether the herder fences earlier generations and writes task-count records
        (``preparing`` or ``enabled``)."""
        return bool(self.values[EXACTLY_ONCE_SOURCE_SUPPORT] != DISABLED)

    def client_config(self, prefix: str) -> dict[str, str]:
        """Kafka client settings: ``bootstrap.servers``, :data:`CLIENT_DEFAULTS` and the
        keys under ``prefix`` (``producer.``, ``consumer.``, ``admin.``), prefix stripped;
        ``admin.listeners`` (and its ``admin.listeners.https.`` settings) are the REST
        API's, not the admin client's."""
        return {
            BOOTSTRAP_SERVERS: ",".join(self.values[BOOTSTRAP_SERVERS]),
            **CLIENT_DEFAULTS,
            **{
                key: value
                for key, value in originals_with_prefix(self.originals, prefix).items()
                if not f"{prefix}{key}".startswith(ADMIN_LISTENERS)
            },
        }

    @property
    def override_policy(self) -> OverridePolicy:
        """``connector.client.config.override.policy`` (and its allowlist)."""
        return OverridePolicy.of(self.originals)

    def converters(self) -> dict[str, Any]:
        """The worker's converter classes and their version requirements (KIP-891), by key:
        what a connector that sets no converter of its own uses."""
        return {key: self.values[key] for pair in CONVERTER_VERSION_CONFIGS.items() for key in pair}

    def spark_config(self) -> dict[str, str]:
        """The ``spark.*`` keys, for the SparkSession."""
        return {k: v for k, v in self.originals.items() if k.startswith(SPARK_PREFIX)}

    def rest_advertised_url(self) -> str:
        """The REST API's URL as others reach it (Kafka's ``rest.advertised.*``, each
        defaulting to the first of ``listeners``)."""
        listener = urlparse(self.values[LISTENERS][0])
        scheme = self.values[REST_ADVERTISED_LISTENER] or listener.scheme
        host = self.values[REST_ADVERTISED_HOST_NAME] or listener.hostname
        port = self.values[REST_ADVERTISED_PORT] or listener.port or 8083
        return f"{scheme}://{host}:{port}"
