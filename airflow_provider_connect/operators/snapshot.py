"""Backfills as DAG tasks: Debezium's signals sent to a change-capture connector
(``PostgresConnector``, ``MySqlConnector``, ``MariaDbConnector``) as Debezium users send
them, through any signal channel the connector enables (``signal.enabled.channels``): a row
of its signal table (``source``: ``signal.data.collection``), a record of its signal topic
(``kafka``: ``signal.kafka.topic``, keyed by ``topic.prefix``), or a line of its signal file
(``file``: ``signal.file``). The connector snapshots the tables again while it goes on
streaming (``incremental``), or pauses streaming meanwhile (``blocking``), without being
stopped or recreated; ``SnapshotNotificationSensor`` waits for the snapshot's end.

Every operator returns to XCom ``name``, ``signal_id`` (an incremental snapshot's
notifications carry it as their id), ``signal_type``, ``channel`` and ``sent_at`` (ISO
time, just before the signal was sent: a sensor reads notifications from then on), with
the signal's own arguments. The channel is asked of the connector
(``SourceConnector.signal_channels``); a channel that is not enabled, or not configured,
fails the task naming the config to set.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar

from airflow.sdk import BaseHook, Context
from airflow.sdk.exceptions import AirflowException
from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL

from airflow_provider_connect.connect.signals import (
    EXECUTE_SNAPSHOT,
    INCREMENTAL,
    PAUSE_SNAPSHOT,
    RESUME_SNAPSHOT,
    STOP_SNAPSHOT,
    FileSignal,
    KafkaSignal,
    NoSignals,
    Signal,
    SignalChannels,
    SignalDelivery,
    SignalRequest,
    execute_snapshot,
    stop_snapshot,
)
from airflow_provider_connect.connect.source import SourceConnector
from airflow_provider_connect.control.plugins import connector_class
from airflow_provider_connect.operators.connector import ConnectorOperator

KAFKA_SEND_TIMEOUT_S = 30.0
"""How long a signal record may take to be acknowledged by the kafka channel's brokers."""


def collections_list(data_collections: Sequence[str] | str | None) -> list[str]:
    """Data collections given as a list or comma-separated."""
    if isinstance(data_collections, str):
        return [t.strip() for t in data_collections.split(",") if t.strip()]
    return list(data_collections or [])


class SignalOperator(ConnectorOperator):
    """Sends one Debezium signal, ``signal_type`` (``log``, or any type the connector
    knows) with ``data`` (a JSON object; Debezium's ``log`` takes ``{"message": ...}``), to
    connector ``connector_name`` through
    ``channel`` (``source``, ``kafka`` or ``file``; None: the connector's ``source``
    channel when enabled, else its first enabled one).

    The source channel's row is written with ``signal_conn_id`` (an Airflow connection to
    the captured database, whose user may insert into the signal table) when given, else as
    the connector reaches its database; a password held in a config provider (``${...}``)
    is not resolved on the Airflow side, so such a connector needs ``signal_conn_id``. The
    kafka channel's record goes to partition 0 of ``signal.kafka.topic`` on
    ``signal.kafka.bootstrap.servers`` (the topic must exist). The file channel's line is
    appended to ``signal.file`` on the machine the task runs on: the same file as the
    connector's only where Airflow's worker and the runtime share a machine (a local
    deployment) or a file system, and only with an absolute ``signal.file``.
    """

    template_fields: Sequence[str] = (
        "connector_name",
        "signal_type",
        "data",
        "channel",
        "signal_conn_id",
    )
    template_fields_renderers: ClassVar[dict[str, str]] = {"data": "json"}

    def __init__(
        self,
        *,
        signal_type: str,
        data: dict[str, Any] | None = None,
        channel: str | None = None,
        signal_conn_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.signal_type = signal_type
        self.data = data
        self.channel = channel
        self.signal_conn_id = signal_conn_id

    def request(self, signal_id: str) -> SignalRequest:
        """The signal to send, with id ``signal_id``."""
        return SignalRequest(signal_id, self.signal_type, self.data or {})

    def arguments(self) -> dict[str, Any]:
        """What the XCom result says of the signal's own arguments."""
        return {"data": self.data or {}}

    def execute(self, context: Context) -> dict[str, Any]:
        name = self.connector_name
        config = self.with_store(lambda _: self.hook.store.configs.connector(name).config)
        signal_id = f"airflow-{uuid.uuid4().hex}"  # Debezium's id column is VARCHAR(42)
        request = self.request(signal_id)
        channels = self._channels(name, config)
        try:
            channel = self.channel or channels.default_channel()
            delivery = channels.deliver(request, channel)
        except NoSignals as e:
            raise AirflowException(f"Connector {name} cannot be signalled: {e}") from None
        sent_at = dt.datetime.now(dt.timezone.utc)
        self._send(delivery)
        self.log.info(
            "Sent %s %s to %s through its %s channel", request.type, signal_id, name, channel
        )
        return {
            "name": name,
            "signal_id": signal_id,
            "signal_type": request.type,
            "channel": channel,
            "sent_at": sent_at.isoformat(),
            **self.arguments(),
        }

    @staticmethod
    def _channels(name: str, config: dict[str, str]) -> SignalChannels:
        """The connector's signal channels; AirflowException when it reads no signals."""
        try:
            connector = connector_class(config.get("connector.class", ""))()
            if not isinstance(connector, SourceConnector):
                raise NoSignals("a sink connector reads no signals")
            return connector.signal_channels(config)
        except (ImportError, NoSignals) as e:
            raise AirflowException(f"Connector {name} cannot be signalled: {e}") from None

    def _send(self, delivery: SignalDelivery) -> None:
        if isinstance(delivery, Signal):
            self._insert(delivery)
        elif isinstance(delivery, KafkaSignal):
            _produce(delivery)
        else:
            _append(delivery)

    def _insert(self, signal: Signal) -> None:
        schema, _, relation = signal.table.rpartition(".")
        engine = create_engine(self._database_url(signal))
        try:
            with engine.begin() as connection:
                quote = connection.dialect.identifier_preparer.quote
                target = f"{quote(schema)}.{quote(relation)}" if schema else quote(relation)
                columns = ", ".join(quote(c) for c in signal.row)
                values = ", ".join(f":{c}" for c in signal.row)
                connection.execute(
                    text(f"INSERT INTO {target} ({columns}) VALUES ({values})"), signal.row
                )
        except Exception as e:
            raise AirflowException(
                f"The signal could not be written to {signal.table}: {e}"
            ) from None
        finally:
            engine.dispose()

    def _database_url(self, signal: Signal) -> URL:
        """The signal's database, reached with ``signal_conn_id`` when given."""
        database = signal.database
        if self.signal_conn_id:
            connection = BaseHook.get_connection(self.signal_conn_id)
            database = replace(
                database,
                username=connection.login,
                password=connection.password,
                host=connection.host,
                port=connection.port,
                database=connection.schema,
                query={},
            )
        elif database.password and "${" in database.password:
            raise AirflowException(
                "The connector's database password comes from a config provider: give "
                "signal_conn_id, an Airflow connection to the captured database"
            )
        return URL.create(
            database.drivername,
            username=database.username,
            password=database.password,
            host=database.host,
            port=database.port,
            database=database.database,
            query=database.query,
        )


def _produce(signal: KafkaSignal) -> None:
    """Writes the signal record to partition 0 of its topic, waiting for the acknowledgement;
    AirflowException naming the topic and the cause when it is not acknowledged."""
    from confluent_kafka import KafkaError, Message, Producer  # only where a signal is sent

    errors: list[KafkaError] = []

    def delivered(error: KafkaError | None, _: Message) -> None:
        if error is not None:
            errors.append(error)

    producer = Producer(
        {
            "bootstrap.servers": signal.bootstrap_servers,
            "message.timeout.ms": int(KAFKA_SEND_TIMEOUT_S * 1000),
        }
    )
    producer.produce(
        signal.topic, signal.value.encode(), signal.key.encode(), partition=0, on_delivery=delivered
    )
    left = producer.flush(KAFKA_SEND_TIMEOUT_S + 5)
    if errors or left:
        cause = errors[0].str() if errors else "not acknowledged in time"
        raise AirflowException(
            f"The signal could not be written to topic {signal.topic} (signal.kafka.topic, "
            f"which must exist with one partition) on {signal.bootstrap_servers} "
            f"(signal.kafka.bootstrap.servers): {cause}"
        )


def _append(signal: FileSignal) -> None:
    """Appends the signal's line to its file, in one write under an exclusive ``flock``, as
    the connector's file channel holds one while it reads and empties the file."""
    if not os.path.isabs(signal.path):
        raise AirflowException(
            f"signal.file is the relative path {signal.path}, which the runtime resolves "
            "against its own working directory: set signal.file to an absolute path"
        )
    try:
        with open(signal.path, "a", encoding="utf-8") as file:
            fcntl.flock(file, fcntl.LOCK_EX)  # released when the file closes
            file.write(signal.line + "\n")
    except OSError as e:
        raise AirflowException(f"The signal could not be written to {signal.path}: {e}") from None


class IncrementalSnapshotOperator(SignalOperator):
    """Asks the connector for an ad hoc snapshot of ``data_collections`` (``schema.table``
    names or regular expressions, a list or comma-separated): Debezium's
    ``execute-snapshot``, ``snapshot_type`` ``incremental`` (the tables read again in
    chunks while changes stream; the default) or ``blocking`` (streaming paused while they
    are read). ``additional_conditions`` (``{"data-collection": ..., "filter": ...}``
    objects) narrow the rows read, where the connector supports them (the built-in
    change-capture connectors ignore such a signal, with a warning in the task's log). See
    :class:`SignalOperator` for
    ``channel`` and ``signal_conn_id``; the XCom result adds ``data_collections`` and
    ``snapshot_type``.
    """

    template_fields: Sequence[str] = (
        "connector_name",
        "data_collections",
        "snapshot_type",
        "additional_conditions",
        "channel",
        "signal_conn_id",
    )

    def __init__(
        self,
        *,
        data_collections: list[str] | str,
        snapshot_type: str = INCREMENTAL,
        additional_conditions: list[dict[str, str]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(signal_type=EXECUTE_SNAPSHOT, **kwargs)
        self.data_collections = data_collections
        self.snapshot_type = snapshot_type
        self.additional_conditions = additional_conditions

    def request(self, signal_id: str) -> SignalRequest:
        tables = collections_list(self.data_collections)
        if not tables:
            raise AirflowException("data_collections names no table to snapshot")
        try:
            return execute_snapshot(
                signal_id,
                tables,
                str(self.snapshot_type).lower(),
                self.additional_conditions or (),
            )
        except ValueError as e:
            raise AirflowException(str(e)) from None

    def arguments(self) -> dict[str, Any]:
        return {
            "data_collections": collections_list(self.data_collections),
            "snapshot_type": str(self.snapshot_type).lower(),
        }


class StopSnapshotOperator(SignalOperator):
    """Stops the connector's incremental snapshot (Debezium's ``stop-snapshot``): of
    ``data_collections`` only, or (none) all of it. The snapshot's notifications end with
    ABORTED. See :class:`SignalOperator` for ``channel`` and ``signal_conn_id``."""

    template_fields: Sequence[str] = (
        "connector_name",
        "data_collections",
        "channel",
        "signal_conn_id",
    )

    def __init__(self, *, data_collections: list[str] | str | None = None, **kwargs: Any) -> None:
        super().__init__(signal_type=STOP_SNAPSHOT, **kwargs)
        self.data_collections = data_collections

    def request(self, signal_id: str) -> SignalRequest:
        return stop_snapshot(signal_id, collections_list(self.data_collections))

    def arguments(self) -> dict[str, Any]:
        return {"data_collections": collections_list(self.data_collections)}


class _DatalessSignalOperator(SignalOperator):
    """Sends a signal of :attr:`signal_type_sent`, whose data Debezium ignores."""

    signal_type_sent: ClassVar[str]
    template_fields: Sequence[str] = ("connector_name", "channel", "signal_conn_id")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(signal_type=self.signal_type_sent, **kwargs)


class PauseSnapshotOperator(_DatalessSignalOperator):
    """Pauses the connector's incremental snapshot (Debezium's ``pause-snapshot``); see
    :class:`SignalOperator` for ``channel`` and ``signal_conn_id``."""

    signal_type_sent = PAUSE_SNAPSHOT


class ResumeSnapshotOperator(_DatalessSignalOperator):
    """Resumes the connector's paused incremental snapshot (Debezium's
    ``resume-snapshot``); see :class:`SignalOperator` for ``channel`` and
    ``signal_conn_id``."""

    signal_type_sent = RESUME_SNAPSHOT
