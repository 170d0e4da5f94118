"""What a sink task records as its progress: the consumer's position past the markers of
transactions only when everything it returned was put and committed, never at a closing
commit (whose batch may be empty because records were dropped); what closing partitions
forgets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import TopicPartition as KafkaPartition

from airflow_provider_connect.connect.sink import SimpleSinkTaskContext, TopicPartition
from airflow_provider_connect.runtime.executor.delivered import Delivered
from airflow_provider_connect.runtime.executor.sink_task import WorkerSinkTask

TP = TopicPartition("t", 0)


@dataclass
class Consumer:
    """The one call progress makes: the position the consumer would fetch from next."""

    position_of: int
    asked: list[Any] = field(default_factory=list)

    def position(self, partitions: list[KafkaPartition]) -> list[KafkaPartition]:
        self.asked.append(partitions)
        return [KafkaPartition(p.topic, p.partition, self.position_of) for p in partitions]


def sink(current: int, position: int, batch: list[Any]) -> WorkerSinkTask:
    task = object.__new__(WorkerSinkTask)  # only the state _progress reads
    task.current = {TP: current}
    task.batch = batch
    task.consumer = Consumer(position)  # type: ignore[assignment]
    return task


def test_everything_put_and_committed_is_progress_up_to_the_position() -> None:
    # offsets 0-2 put and committed (3), the commit marker at 3: the position is 4
    assert sink(3, 4, [])._progress(TP, {TP: 3}, closing=False) == 4


def test_records_waiting_in_the_batch_keep_progress_at_the_commit() -> None:
    assert sink(3, 8, ["a record of offsets 3-7"])._progress(TP, {TP: 3}, closing=False) == 3


def test_records_put_but_not_committed_keep_progress_at_the_commit() -> None:
    assert sink(5, 5, [])._progress(TP, {TP: 3}, closing=False) == 3


def test_a_closing_commit_records_what_it_committed() -> None:
    # a put to retry held offsets 5-9; closing dropped them from the batch
    task = sink(5, 10, [])
    assert task._progress(TP, {TP: 5}, closing=True) == 5
    assert task.consumer.asked == []  # type: ignore[attr-defined]


def test_nothing_committed_records_nothing() -> None:
    assert sink(5, 10, [])._progress(TP, {}, closing=False) is None


def test_a_group_resumed_at_its_end_is_at_its_position_before_consuming_anything() -> None:
    task = sink(0, 1001, [])
    task.current = {}  # nothing consumed since the partition was assigned
    assert task._progress(TP, {}, closing=False) == 1001
    task.consumer = Consumer(-1001)  # type: ignore[assignment]  # not fetched from yet
    assert task._progress(TP, {}, closing=False) is None


class ClosedTask:
    def __init__(self) -> None:
        self.closed: list[TopicPartition] = []

    def close(self, partitions: list[TopicPartition]) -> None:
        self.closed.extend(partitions)


def test_closing_partitions_forgets_the_task_pausing_them() -> None:
    other = TopicPartition("t", 1)
    task = sink(3, 4, [])
    task.commit = lambda tps, closing: None  # type: ignore[method-assign,assignment,misc]
    task.task = ClosedTask()  # type: ignore[assignment]
    task.delivered = Delivered()
    task.metrics = type("Metrics", (), {"values": {}})()
    task.context = SimpleSinkTaskContext({})
    task.context.assigned.update({TP, other})
    task.context.pause(TP, other)
    task._close_partitions([TP])
    assert task.task.closed == [TP]  # type: ignore[attr-defined]
    assert task.context.assigned == {other} and task.context.paused == {other}
