"""What a connector has committed, and what it committed since the last asset event: the
pure logic of ``ConnectorCommitTrigger``, over what ``ConnectHook`` reads from the store.

A connector's committed progress is its positions and its record counts:

* a sink's positions are its committed Kafka offsets, ``"<topic>/<partition>"`` to the
  offset of the next record to read; the records since the last event are the growth of
  the records its tasks counted at their commits, per partition (records, not offsets: on
  a topic written transactionally the commit markers take offsets and are not counted;
  the records a transform dropped or the error tolerance skipped are);
* a source's positions are its committed source offsets, by source partition (the
  partition's canonical JSON), which say nothing of how many records they passed: the
  records since the last event are the growth of its tasks' ``source_record_write_total``
  counters as of their last heartbeats, the records written to Kafka, which is not quite
  what was committed (records written after a task's last committed offsets count, and
  count again when its next run sends them again).

A count that went back counts from zero: its task restarted (a source), or the connector
was deleted and created again (a sink).

A state (:func:`state_of`) is what the trigger keeps between two events: JSON, in Airflow's
asset state store, so that a restarted triggerer goes on from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from airflow_provider_connect.store import MetadataStore, partition_key

WRITTEN = "source_record_write_total"


@dataclass(frozen=True)
class Committed:
    """A connector's committed progress (see the module docstring)."""

    kind: str
    """``source`` or ``sink``."""
    positions: dict[str, Any]
    written: dict[str, float]
    """A source's records written per task id (as text); a sink's records committed per
    position."""


def committed(store: MetadataStore, name: str, kind: str) -> Committed:
    """Connector ``name``'s committed progress, in one query per table; ``kind`` is
    ``source``, ``sink`` or ``unknown`` (a class this process cannot import: a sink once it
    has sink progress)."""
    progress = store.offsets.sink_progress(name) if kind != "source" else []
    if kind == "sink" or progress:
        known = [p for p in progress if p.committed_offset is not None]
        positions: dict[str, Any] = {f"{p.topic}/{p.partition}": p.committed_offset for p in known}
        records = {f"{p.topic}/{p.partition}": float(p.records) for p in known}
        return Committed("sink", positions, records)
    positions = {partition_key(p): o for p, o in store.offsets.source_offsets(name)}
    written = {
        str(s.task_id): float((s.metrics or {}).get(WRITTEN, 0))
        for s in store.statuses.task_statuses(name)
        if s.task_id is not None
    }
    return Committed("source", positions, written)


def state_of(now: Committed, at: float) -> dict[str, Any]:
    """The state after an event for ``now`` fired at ``at`` (epoch seconds)."""
    return {"positions": now.positions, "written": now.written, "fired_at": at}


def advance(state: dict[str, Any], now: Committed) -> dict[str, Any] | None:
    """What was committed since ``state`` as an event's payload (``positions``, ``records``,
    ``changed``: the positions that moved), or None when no position moved, or when a
    sink's positions moved past no record (only past transaction markers)."""
    before: dict[str, Any] = state.get("positions") or {}
    changed = sorted(k for k, v in now.positions.items() if before.get(k) != v)
    if not changed:
        return None
    written: dict[str, float] = state.get("written") or {}
    records = sum(
        total - written.get(key, 0) if total >= written.get(key, 0) else total
        for key, total in now.written.items()
    )
    if now.kind == "sink" and not records:
        return None
    return {"positions": now.positions, "records": int(records), "changed": changed}
