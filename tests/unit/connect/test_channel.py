"""The in-memory coordination channel of the test harness, fenced as the runtime's."""

from __future__ import annotations

import pytest

from airflow_provider_connect.connect.channel import ChannelMessage, FencedException
from airflow_provider_connect.connect.sink import SinkRecord, SinkTask, TopicPartition
from airflow_provider_connect.connect.testing import InMemoryChannels, SinkTaskHarness


def test_messages_of_every_task_in_id_order_filtered_by_kind() -> None:
    channels = InMemoryChannels()
    writer, committer = channels.open(1), channels.open(0)
    first = writer.send("data", b"a")
    second = committer.send("commit", b"b")
    third = writer.send("data", b"c")
    assert first < second < third
    assert committer.messages() == [
        ChannelMessage(first, 1, 1, "data", b"a"),
        ChannelMessage(second, 0, 1, "commit", b"b"),
        ChannelMessage(third, 1, 1, "data", b"c"),
    ]
    assert [m.id for m in writer.messages(["data"])] == [first, third]
    committer.remove([first, third, 999])
    assert [m.id for m in writer.messages()] == [second]


def test_a_superseded_run_is_fenced_and_changes_nothing() -> None:
    channels = InMemoryChannels()
    old = channels.open(0)
    sent = old.send("data", b"a")
    new = channels.open(0)  # a restart of task 0
    with pytest.raises(FencedException):
        old.send("data", b"b")
    with pytest.raises(FencedException):
        old.remove([sent])
    with pytest.raises(FencedException):
        old.check_current()
    new.check_current()
    assert [m.payload for m in old.messages()] == [b"a"]  # reads are not fenced


def test_a_new_generation_fences_every_run_of_the_earlier_one() -> None:
    channels = InMemoryChannels()
    runs = [channels.open(0), channels.open(1)]
    runs[0].send("data", b"a")
    assert channels.new_generation() == 2
    for run in runs:
        with pytest.raises(FencedException):
            run.send("data", b"b")
    current = channels.open(1)
    assert current.generation == 2
    current.send("data", b"c")
    assert [(m.generation, m.payload) for m in current.messages()] == [(1, b"a"), (2, b"c")]


class _Sending(SinkTask):
    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        pass

    def put(self, records: list[SinkRecord]) -> None:
        channel = self.context.channel()
        assert channel is not None
        for r in records:
            channel.send("value", bytes(r.value))

    def stop(self) -> None:
        pass


def test_the_sink_harness_gives_each_start_and_restart_a_new_run() -> None:
    channels = InMemoryChannels()
    with SinkTaskHarness(_Sending, channels=channels, task_id=3) as harness:
        harness.start({}, [TopicPartition("t", 0)])
        first = harness.context.channel()
        harness.put([SinkRecord("t", 0, None, None, None, b"x", 0)])
        harness.restart()
        second = harness.context.channel()
        assert first is not None and second is not None and second.task_id == 3
        with pytest.raises(FencedException):
            first.check_current()
        second.check_current()
    assert [(m.task_id, m.payload) for m in channels.open(0).messages()] == [(3, b"x")]


def test_a_sink_harness_without_channels_offers_none() -> None:
    with SinkTaskHarness(_Sending) as harness:
        harness.start({})
        assert harness.context.channel() is None
