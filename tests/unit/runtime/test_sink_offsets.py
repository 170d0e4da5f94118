"""A sink connector's consumer group offsets as the runtime replaces them (KIP-995): the
group is deleted first only when it holds offsets of partitions the new ones leave out. The
admin client is a fake: the test broker mishandles offset commits of a deleted group."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, ClassVar

import pytest

from airflow_provider_connect.runtime import sink_offsets
from airflow_provider_connect.runtime.worker_config import WorkerConfig


class FakeAdmin:
    """A consumer group's committed offsets, and the calls made."""

    committed: ClassVar[dict[tuple[str, int], int]] = {}
    calls: ClassVar[list[str]] = []

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config

    @staticmethod
    def _done(group: str, value: Any) -> dict[str, Future[Any]]:
        future: Future[Any] = Future()
        future.set_result(value)
        return {group: future}

    def list_consumer_group_offsets(self, requests: list[Any]) -> dict[str, Future[Any]]:
        self.calls.append("list")
        partitions = [
            type("TP", (), {"topic": t, "partition": p, "offset": o})()
            for (t, p), o in self.committed.items()
        ]
        result = type("Result", (), {"topic_partitions": partitions})()
        return self._done(requests[0].group_id, result)

    def delete_consumer_groups(self, groups: list[str]) -> dict[str, Future[Any]]:
        self.calls.append("delete")
        FakeAdmin.committed = {}
        return self._done(groups[0], None)

    def alter_consumer_group_offsets(self, requests: list[Any]) -> dict[str, Future[Any]]:
        self.calls.append("alter")
        for tp in requests[0].topic_partitions:
            FakeAdmin.committed[tp.topic, tp.partition] = tp.offset
        return self._done(requests[0].group_id, None)


@pytest.fixture
def admin(monkeypatch: pytest.MonkeyPatch) -> type[FakeAdmin]:
    monkeypatch.setattr(sink_offsets, "AdminClient", FakeAdmin)
    FakeAdmin.committed, FakeAdmin.calls = {}, []
    return FakeAdmin


WORKER = WorkerConfig({"bootstrap.servers": "127.0.0.1:9092", "metadata.url": "sqlite://"})


def test_offsets_of_other_partitions_are_dropped_with_the_group(admin: type[FakeAdmin]) -> None:
    admin.committed = {("a", 0): 5, ("b", 0): 1}
    group = sink_offsets.ConsumerGroupOffsets(WORKER, "sink", {})
    group.replace([("a", 0, 2)])
    assert admin.calls == ["list", "delete", "alter"]
    assert admin.committed == {("a", 0): 2}
    assert group.group == "connect-sink"


def test_offsets_of_the_same_partitions_are_overwritten_without_deleting(
    admin: type[FakeAdmin],
) -> None:
    admin.committed = {("a", 0): 5}
    group = sink_offsets.ConsumerGroupOffsets(
        WORKER, "sink", {"consumer.override.group.id": "mine", "admin.override.client.id": "x"}
    )
    group.replace([("a", 0, 2), ("a", 1, 0)])
    assert admin.calls == ["list", "alter"]
    assert admin.committed == {("a", 0): 2, ("a", 1): 0}
    assert group.group == "mine" and group.admin.config["client.id"] == "x"
