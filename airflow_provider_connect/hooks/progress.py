"""When has a connector made the progress a DAG waits for? Pure logic over what the store
holds, shared by ``ConnectorOffsetSensor`` and its trigger."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from numbers import Real
from typing import Any

from airflow_provider_connect.store import SinkProgress


class SinkCatchUp:
    """Tracks whether a sink connector's consumer group has caught up to the end offsets its
    topics had when the watch started.

    The target of each partition is the end offset in the first progress row written at or
    after ``started_at`` (the sink tasks write one at every offset commit), so it is never
    below the end offset at ``started_at``. A partition is caught up once its committed offset
    reaches its target, or, when nothing was ever committed, when its target is 0 (empty).
    """

    def __init__(self, started_at: dt.datetime) -> None:
        self.started_at = started_at
        self.targets: dict[tuple[str, int], int] = {}

    def caught_up(self, progress: Iterable[SinkProgress]) -> bool:
        """Whether every partition with progress has reached its target (False when there
        is no progress yet)."""
        rows = list(progress)
        for row in rows:
            key = (row.topic, row.partition)
            fresh = row.updated_at >= self.started_at
            if fresh and row.end_offset is not None and key not in self.targets:
                self.targets[key] = row.end_offset
        return bool(rows) and all(self._reached(row) for row in rows)

    def _reached(self, row: SinkProgress) -> bool:
        target = self.targets.get((row.topic, row.partition))
        if target is None:
            return False
        return (row.committed_offset or 0) >= target

    def lag(self, progress: Iterable[SinkProgress]) -> int | None:
        """Records still to commit to reach the targets known so far (None before any)."""
        lags = [
            max(self.targets[(r.topic, r.partition)] - (r.committed_offset or 0), 0)
            for r in progress
            if (r.topic, r.partition) in self.targets
        ]
        return sum(lags) if lags else None


def offset_reached(stored: dict[str, Any] | None, target: dict[str, Any]) -> bool:
    """Whether a source offset has reached ``target``: every key of the target is present,
    numbers at or past the target's, anything else equal."""
    if stored is None:
        return False
    for key, wanted in target.items():
        if key not in stored:
            return False
        value = stored[key]
        if _is_number(wanted) and _is_number(value):
            if value < wanted:
                return False
        elif value != wanted or type(value) is not type(wanted):
            return False
    return True


def _is_number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def source_offsets_reached(
    offsets: Iterable[tuple[dict[str, Any], dict[str, Any] | None]],
    target: dict[str, Any],
    partition: dict[str, Any] | None = None,
) -> bool:
    """Whether the committed offset of ``partition`` (or, when None, of every committed
    partition, at least one) has reached ``target``."""
    stored = [(p, o) for p, o in offsets if partition is None or p == partition]
    return bool(stored) and all(offset_reached(o, target) for _, o in stored)
