"""The states of connectors and tasks, with Kafka Connect's names."""

from __future__ import annotations

from enum import Enum


class TargetState(str, Enum):
    """What a connector should be doing, as set through REST or Airflow."""

    STARTED = "STARTED"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"


class State(str, Enum):
    """The observed state of a connector or task, as Kafka Connect reports it."""

    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"
    FAILED = "FAILED"
    RESTARTING = "RESTARTING"


class DeletionState(str, Enum):
    """The progress of a deletion's connectorDeleted cleanup."""

    PENDING = "PENDING"
    DONE = "DONE"
    FAILED = "FAILED"
