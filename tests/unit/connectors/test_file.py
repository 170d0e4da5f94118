"""The FileStream connectors and their tasks on their own, driven by the connector test
harness (no broker, no runtime)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airflow_provider_connect.connect.sink import TopicPartition
from airflow_provider_connect.connect.testing import (
    ConnectorHarness,
    SinkTaskHarness,
    SourceTaskHarness,
    sink_records,
)
from airflow_provider_connect.connectors.file import (
    FileStreamSinkConnector,
    FileStreamSinkTask,
    FileStreamSourceConnector,
    FileStreamSourceTask,
)


def source(path: Path, batch_size: int, stored: dict[str, Any] | None = None) -> SourceTaskHarness:
    """A started source task reading ``path``, from the ``stored`` offset if one is given."""
    offsets = [] if stored is None else [({"filename": str(path)}, stored)]
    harness = SourceTaskHarness(FileStreamSourceTask, offsets)
    harness.start({"file": str(path), "topic": "t", "batch.size": str(batch_size)})
    return harness


def test_small_batches_read_every_line_once(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("".join(f"line {i}\n" for i in range(1000)))
    with source(path, batch_size=7) as task:
        first = task.poll(polls=1)
        records = first + task.poll()
    assert len(first) == 7
    assert [r.value for r in records] == [f"line {i}" for i in range(1000)]
    assert records[-1].source_offset == {"position": path.stat().st_size}
    assert task.offsets.offset({"filename": str(path)}) == {"position": path.stat().st_size}


def test_resumes_after_the_stored_position_and_waits_for_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("a\nb\nhal")
    with source(path, batch_size=100, stored={"position": 2}) as task:
        assert [r.value for r in task.poll()] == ["b"]
        with path.open("a") as f:
            f.write("f\n")
        assert [r.value for r in task.poll()] == ["half"]
        with path.open("a") as f:
            f.write("next\n")
        task.restart()  # a new task, from the position committed as the last one stopped
        assert [r.value for r in task.poll()] == ["next"]


def test_line_ends_and_byte_positions(tmp_path: Path) -> None:
    """CRLF lines lose their \r; offsets count bytes (UTF-8), invalid bytes are replaced."""
    path = tmp_path / "in.txt"
    path.write_bytes("é\r\nb\n".encode() + b"\xff\n")
    with source(path, batch_size=100) as task:
        records = task.poll()
    assert [r.value for r in records] == ["é", "b", "\ufffd"]
    assert [r.source_offset["position"] for r in records] == [4, 6, 8]


def test_lines_longer_than_a_read(tmp_path: Path) -> None:
    """A read is about 128 bytes per line asked for: longer lines take more reads, and a
    long line still being written is read once its newline arrives."""
    path = tmp_path / "in.txt"
    long = "x" * 1000
    path.write_text(f"{long}\nshort\n{long}")
    with source(path, batch_size=1) as task:
        assert [r.value for r in task.poll()] == [long, "short"]
        with path.open("a") as f:
            f.write("é\n")
        (last,) = task.poll()
    assert last.value == long + "é" and last.source_offset == {"position": path.stat().st_size}


def test_sink_appends_values_and_flushes(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    partition = TopicPartition("t", 0)
    with SinkTaskHarness(FileStreamSinkTask) as sink:
        sink.start({"file": str(path)}, [partition])
        sink.put(sink_records("t", 0, ["x", 1, None]))
        assert sink.commit() == {partition: 3}
        assert path.read_text() == "x\n1\nnull\n"
    assert sink.task.stream.closed  # type: ignore[attr-defined]  # FileStreamSinkTask


def test_sink_tasks_share_the_file_and_keep_each_put_whole(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    connector = ConnectorHarness(FileStreamSinkConnector)
    connector.start({"file": str(path), "topics": "t"})
    configs = connector.task_configs(3)
    assert configs == [{"file": str(path)}] * 3  # as Kafka's: every task the same config
    sinks = [SinkTaskHarness(FileStreamSinkTask) for _ in configs]
    for i, (sink, config) in enumerate(zip(sinks, configs, strict=True)):
        sink.start(config, [TopicPartition("t", i)])
    for n in range(20):
        for i, sink in enumerate(sinks):
            sink.put(sink_records("t", i, [f"{i}-{n}-{k}" for k in range(50)], offset=50 * n))
    lines = path.read_text().splitlines()
    assert sorted(lines) == sorted(
        f"{i}-{n}-{k}" for i in range(3) for n in range(20) for k in range(50)
    )
    for start in range(0, len(lines), 50):  # puts arrive whole, in order
        assert [line.rsplit("-", 1)[1] for line in lines[start : start + 50]] == [
            str(k) for k in range(50)
        ]
    for sink in sinks:
        sink.stop()
    connector.stop()


def test_files_are_spread_over_tasks_and_read_in_turn(tmp_path: Path) -> None:
    paths = [tmp_path / f"in{i}.txt" for i in range(4)]
    for i, path in enumerate(paths):
        path.write_text("".join(f"{i}-{n}\n" for n in range(50)))
    files = ",".join(map(str, paths))
    with ConnectorHarness(FileStreamSourceConnector) as connector:
        connector.start({"files": files, "topic": "t"})
        assert [c["files"] for c in connector.task_configs(4)] == [str(p) for p in paths]
        assert [c["files"] for c in connector.task_configs(3)] == [
            f"{paths[0]},{paths[3]}",
            str(paths[1]),
            str(paths[2]),
        ]
        connector.restart({"files": str(paths[0]), "topic": "t", "tasks.max": "4"})
        assert [c["files"] for c in connector.task_configs(4)] == [str(paths[0])]  # one is a list
    task = SourceTaskHarness(FileStreamSourceTask)
    records = task.run({"files": files, "topic": "t", "batch.size": "30"})
    assert sorted(r.value for r in records) == sorted(
        f"{i}-{n}" for i in range(4) for n in range(50)
    )
    assert {r.source_partition["filename"] for r in records} == set(map(str, paths))


def test_file_or_files() -> None:
    errors = ConnectorHarness(FileStreamSourceConnector).validate
    neither = ["Must configure one of file or files"]
    assert errors({"topic": "t"}) == {"file": neither, "files": neither}
    both = errors({"topic": "t", "file": "a", "files": "b,c"})
    assert both["file"] == both["files"] == ["Only one of file and files may be set."]
    assert errors({"topic": "t", "files": "b,c"}) == {}
