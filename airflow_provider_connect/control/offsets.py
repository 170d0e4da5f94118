"""Offsets as KIP-875's request bodies give them (``[{"partition": {...}, "offset": {...}}]``),
checked the way Kafka Connect checks them, for every writer: REST's
``PATCH /connectors/{name}/offsets`` and the initial offsets of a new connector (KIP-995),
whether REST, the Airflow hook or the embedded API creates it. Each check raises
:class:`~airflow_provider_connect.control.errors.BadRequestError` (REST 400) naming what
is wrong; none reaches Kafka or the store."""

from __future__ import annotations

import math
from typing import Any, TypeGuard

from airflow_provider_connect.control.errors import BadRequestError

OFFSETS_ALTERED = "The offsets for this connector have been altered successfully"
"""Kafka Connect's answer once offsets are altered (KIP-875), and for a connector created
with initial offsets (KIP-995's ``offsets_status``)."""
OFFSETS_RESET = "The offsets for this connector have been reset successfully"
"""Kafka Connect's answer once offsets are reset (KIP-875)."""
SourceOffsets = list[tuple[dict[str, Any], dict[str, Any] | None]]
"""A source connector's partitions and their offsets (None removes a partition's)."""
SinkOffsets = list[tuple[str, int, int]]
"""A sink connector's (topic, partition, offset) positions in its consumer group."""


InitialOffsets = list[dict[str, Any]] | dict[str, list[dict[str, Any]]]
"""KIP-995's ``initial_offsets``: the body of ``PATCH /connectors/{name}/offsets``
(``{"offsets": [{"partition": {...}, "offset": {...}}]}``, the format the KIP names) or the
list it holds (the KIP's example); both mean the same."""


def offset_entries(entries: Any, field: str | None = None) -> list[dict[str, Any]]:
    """``entries`` when it is a non-empty list of ``partition`` objects with an ``offset``
    object or null each; BadRequestError otherwise, naming ``field`` (the create body's
    ``initial_offsets``, which may also be the ``PATCH`` body that holds the list: see
    :data:`InitialOffsets`), or else the ``PATCH`` body's shape."""
    if field and isinstance(entries, dict) and entries.keys() == {"offsets"}:
        entries = entries["offsets"]
    if not isinstance(entries, list) or not all(
        isinstance(e, dict)
        and isinstance(e.get("partition"), dict)
        and isinstance(e.get("offset"), dict | None)
        for e in entries
    ):
        raise BadRequestError(
            f'{field} must be {{"offsets": [{{"partition": {{...}}, "offset": {{...}}}}]}}, '
            "as PATCH /connectors/{name}/offsets takes them, or the list alone"
            if field
            else 'The request body must be {"offsets": [{"partition": {...}, "offset": {...}}]}'
        )
    if not entries:
        raise BadRequestError(f"{field or 'The offsets to alter'} must not be empty")
    return entries


def sink_offsets(entries: list[dict[str, Any]]) -> SinkOffsets:
    """A sink's offsets, as KIP-875 writes them: a ``kafka_topic``, a ``kafka_partition`` (a
    32-bit number) and a ``kafka_offset`` (a 64-bit one) per entry; of two entries for one
    partition, the last counts."""
    positions: dict[tuple[str, int], int] = {}
    for entry in entries:
        partition, offset = entry["partition"], entry.get("offset") or {}
        topic, number = partition.get("kafka_topic"), partition.get("kafka_partition")
        position = offset.get("kafka_offset")
        if not (
            isinstance(topic, str)
            and topic
            and _is_int(number)
            and 0 <= number < 2**31
            and _is_int(position)
            and 0 <= position < 2**63
        ):
            raise BadRequestError(
                "Sink offsets need a kafka_topic (a topic name), a kafka_partition and a "
                "kafka_offset (numbers, 0 or more) in each entry"
            )
        positions[topic, number] = position
    return [(topic, number, position) for (topic, number), position in positions.items()]


def sink_entry(topic: str, partition: int, offset: int) -> dict[str, Any]:
    """A sink's position as KIP-875's bodies give it."""
    return {
        "partition": {"kafka_topic": topic, "kafka_partition": partition},
        "offset": {"kafka_offset": offset},
    }


def source_offsets(entries: list[dict[str, Any]]) -> SourceOffsets:
    """A source's partitions and offsets; as Kafka Connect's ``OffsetUtils`` requires, their
    values must be primitives (strings, booleans, numbers; integers within 64 bits)."""
    found = []
    for entry in entries:
        partition, offset = entry["partition"], entry.get("offset")
        for part in (partition, offset or {}):
            if not all(_primitive(v) for v in part.values()):
                raise BadRequestError(
                    "Source partitions and offsets may only contain primitive values: "
                    "strings, booleans, null and finite numbers (integers within 64 bits)"
                )
        found.append((partition, offset))
    return found


def _primitive(value: Any) -> bool:
    if isinstance(value, int) and not isinstance(value, bool):
        return -(2**63) <= value < 2**63
    if isinstance(value, float):
        return math.isfinite(value)  # JSON has no NaN or infinity
    return value is None or isinstance(value, str | bool)


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
