"""Kafka Connect's offsets resources (KIP-875): a connector's offsets read, altered and
reset. A source connector's are its source partitions' offsets in the metadata store; a sink
connector's are its consumer group's committed offsets in Kafka. Altering or resetting them
needs the connector STOPPED (409 otherwise)."""

from __future__ import annotations

from typing import Any, TypeGuard

from confluent_kafka import ConsumerGroupTopicPartitions
from confluent_kafka import TopicPartition as KafkaPartition
from confluent_kafka.admin import AdminClient
from fastapi import APIRouter, Request

from airflow_provider_connect.control.connectors import ConnectorWrites
from airflow_provider_connect.control.plugins import connector_type
from airflow_provider_connect.runtime.kafka_names import consumer_group
from airflow_provider_connect.runtime.rest.common import RestError, body
from airflow_provider_connect.runtime.rest.schema import OFFSETS, json_body
from airflow_provider_connect.runtime.worker_config import WorkerConfig


def offsets_router(writes: ConnectorWrites, worker: WorkerConfig) -> APIRouter:
    """The offsets routes over ``writes.store``, reaching Kafka with ``worker``'s admin
    client config for sink connectors."""
    router = APIRouter()
    store = writes.store

    def admin() -> AdminClient:
        return AdminClient({**worker.client_config("admin.")})

    @router.get("/connectors/{name}/offsets")
    def get_offsets(name: str) -> dict[str, Any]:
        connector = store.configs.connector(name)
        if connector_type(connector.config.get("connector.class", "")) != "sink":
            return {
                "offsets": [
                    {"partition": p, "offset": o} for p, o in store.offsets.source_offsets(name)
                ]
            }
        group = consumer_group(name)
        client = admin()
        result = client.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[
            group
        ].result(timeout=30)
        return {
            "offsets": [
                {
                    "partition": {"kafka_topic": tp.topic, "kafka_partition": tp.partition},
                    "offset": {"kafka_offset": tp.offset},
                }
                for tp in sorted(result.topic_partitions, key=lambda t: (t.topic, t.partition))
                if tp.offset >= 0
            ]
        }

    @router.patch("/connectors/{name}/offsets", openapi_extra=json_body(OFFSETS))
    async def alter_offsets(name: str, request: Request) -> dict[str, str]:
        kind = writes.require_stopped(name)
        payload = await body(request)
        entries = payload.get("offsets") if isinstance(payload, dict) else None
        if not isinstance(entries, list) or not all(
            isinstance(e, dict)
            and isinstance(e.get("partition"), dict)
            and isinstance(e.get("offset"), dict | None)
            for e in entries
        ):
            raise RestError(
                400, 'The request body must be {"offsets": [{"partition": {...}, "offset": {...}}]}'
            )
        if not entries:
            raise RestError(400, "The offsets to alter must not be empty")
        if kind == "sink":
            group = consumer_group(name)
            altered = ConsumerGroupTopicPartitions(group, _sink_offsets(entries))
            admin().alter_consumer_group_offsets([altered])[group].result(timeout=30)
        else:
            writes.alter_source_offsets(name, _source_offsets(entries))
        return {"message": "The offsets for this connector have been altered successfully"}

    @router.delete("/connectors/{name}/offsets")
    def reset_offsets(name: str) -> dict[str, str]:
        kind = writes.require_stopped(name)
        if kind == "sink":
            admin().delete_consumer_groups([consumer_group(name)])[consumer_group(name)].result(
                timeout=30
            )
        else:
            writes.reset_source_offsets(name)
        return {"message": "The offsets for this connector have been reset successfully"}

    return router


def _sink_offsets(entries: list[dict[str, Any]]) -> list[KafkaPartition]:
    """A sink's offsets to alter, as KIP-875 writes them; RestError 400 for anything else."""
    partitions = []
    for entry in entries:
        partition, offset = entry["partition"], entry.get("offset") or {}
        topic, number = partition.get("kafka_topic"), partition.get("kafka_partition")
        position = offset.get("kafka_offset")
        if not (
            isinstance(topic, str)
            and topic
            and _is_int(number)
            and number >= 0
            and _is_int(position)
            and position >= 0
        ):
            raise RestError(
                400,
                "Sink offsets need a kafka_topic (a topic name), a kafka_partition and a "
                "kafka_offset (numbers, 0 or more) in each entry",
            )
        partitions.append(KafkaPartition(topic, number, position))
    return partitions


def _source_offsets(
    entries: list[dict[str, Any]],
) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """A source's partitions and offsets to alter; as Kafka Connect's ``OffsetUtils``
    requires, their values must be primitives (strings, booleans, numbers; integers within
    64 bits). RestError 400 for anything else."""
    found = []
    for entry in entries:
        partition, offset = entry["partition"], entry.get("offset")
        for part in (partition, offset or {}):
            if not all(_primitive(v) for v in part.values()):
                raise RestError(
                    400,
                    "Source partitions and offsets may only contain primitive values: "
                    "strings, booleans, null and numbers (integers within 64 bits)",
                )
        found.append((partition, offset))
    return found


def _primitive(value: Any) -> bool:
    if isinstance(value, int) and not isinstance(value, bool):
        return -(2**63) <= value < 2**63
    return value is None or isinstance(value, str | bool | float)


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
