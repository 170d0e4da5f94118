"""The FileStream connectors' tasks on their own (no broker, no runtime)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airflow_provider_connect.connect.sink import SinkRecord, TopicPartition
from airflow_provider_connect.connect.source import OffsetStorageReader, SourceTaskContext
from airflow_provider_connect.connectors.file import (
    FileStreamSinkConnector,
    FileStreamSinkTask,
    FileStreamSourceConnector,
    FileStreamSourceTask,
)


class Offsets(OffsetStorageReader):
    def __init__(self, stored: dict[str, Any] | None = None) -> None:
        self.stored = stored

    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        return self.stored


class Context(SourceTaskContext):
    def __init__(self, stored: dict[str, Any] | None = None) -> None:
        self.reader = Offsets(stored)

    def configs(self) -> dict[str, str]:
        return {}

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self.reader


def drain(task: FileStreamSourceTask) -> list[Any]:
    records = []
    while batch := task.poll():
        records.extend(batch)
    return records


def source(
    path: Path, batch_size: int, stored: dict[str, Any] | None = None
) -> FileStreamSourceTask:
    task = FileStreamSourceTask()
    task.initialize(Context(stored))
    task.start({"file": str(path), "topic": "t", "batch.size": str(batch_size)})
    return task


def test_small_batches_read_every_line_once(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("".join(f"line {i}\n" for i in range(1000)))
    task = source(path, batch_size=7)
    records = drain(task)
    assert [r.value for r in records] == [f"line {i}" for i in range(1000)]
    assert all(len(b) <= 7 for b in [records[i : i + 7] for i in range(0, 1000, 7)])
    assert records[-1].source_offset == {"position": path.stat().st_size}
    task.stopped()


def test_resumes_after_the_stored_position_and_waits_for_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("a\nb\nhal")
    task = source(path, batch_size=100, stored={"position": 2})
    assert [r.value for r in drain(task)] == ["b"]
    with path.open("a") as f:
        f.write("f\n")
    assert [r.value for r in drain(task)] == ["half"]
    task.stopped()


def test_line_ends_and_byte_positions(tmp_path: Path) -> None:
    """CRLF lines lose their \r; offsets count bytes (UTF-8), invalid bytes are replaced."""
    path = tmp_path / "in.txt"
    path.write_bytes("é\r\nb\n".encode() + b"\xff\n")
    records = drain(source(path, batch_size=100))
    assert [r.value for r in records] == ["é", "b", "\ufffd"]
    assert [r.source_offset["position"] for r in records] == [4, 6, 8]


def test_lines_longer_than_a_read(tmp_path: Path) -> None:
    """A read is about 128 bytes per line asked for: longer lines take more reads, and a
    long line still being written is read once its newline arrives."""
    path = tmp_path / "in.txt"
    long = "x" * 1000
    path.write_text(f"{long}\nshort\n{long}")
    task = source(path, batch_size=1)
    assert [r.value for r in drain(task)] == [long, "short"]
    with path.open("a") as f:
        f.write("é\n")
    (last,) = drain(task)
    assert last.value == long + "é" and last.source_offset == {"position": path.stat().st_size}
    task.stopped()


def test_sink_appends_values_and_flushes(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    task = FileStreamSinkTask()
    task.start({"file": str(path)})
    task.put([SinkRecord("t", 0, None, None, None, v, i) for i, v in enumerate(["x", 1, None])])
    task.flush({TopicPartition("t", 0): 3})
    assert path.read_text() == "x\n1\nnull\n"
    task.stop(False)


def test_sink_tasks_share_the_file_and_keep_each_put_whole(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    connector = FileStreamSinkConnector()
    connector.start({"file": str(path), "topics": "t"})
    configs = connector.task_configs(3)
    assert configs == [{"file": str(path)}] * 3  # as Kafka's: every task the same config
    tasks = [FileStreamSinkTask() for _ in configs]
    for task, config in zip(tasks, configs, strict=True):
        task.start(config)
    for n in range(20):
        for i, task in enumerate(tasks):
            task.put([SinkRecord("t", i, None, None, None, f"{i}-{n}-{k}", k) for k in range(50)])
    lines = path.read_text().splitlines()
    assert sorted(lines) == sorted(
        f"{i}-{n}-{k}" for i in range(3) for n in range(20) for k in range(50)
    )
    for start in range(0, len(lines), 50):  # puts arrive whole, in order
        assert [line.rsplit("-", 1)[1] for line in lines[start : start + 50]] == [
            str(k) for k in range(50)
        ]
    for task in tasks:
        task.stop(False)


def test_files_are_spread_over_tasks_and_read_in_turn(tmp_path: Path) -> None:
    paths = [tmp_path / f"in{i}.txt" for i in range(4)]
    for i, path in enumerate(paths):
        path.write_text("".join(f"{i}-{n}\n" for n in range(50)))
    connector = FileStreamSourceConnector()
    files = ",".join(map(str, paths))
    connector.start({"files": files, "topic": "t"})
    assert [c["files"] for c in connector.task_configs(4)] == [str(p) for p in paths]
    assert [c["files"] for c in connector.task_configs(3)] == [
        f"{paths[0]},{paths[3]}",
        str(paths[1]),
        str(paths[2]),
    ]
    connector.start({"files": str(paths[0]), "topic": "t", "tasks.max": "4"})
    assert [c["files"] for c in connector.task_configs(4)] == [str(paths[0])]  # one is a list
    task = FileStreamSourceTask()
    task.initialize(Context())
    task.start({"files": files, "topic": "t", "batch.size": "30"})
    records = drain(task)
    assert sorted(r.value for r in records) == sorted(
        f"{i}-{n}" for i in range(4) for n in range(50)
    )
    assert {r.source_partition["filename"] for r in records} == set(map(str, paths))
    task.stopped()


def test_file_or_files() -> None:
    def errors(config: dict[str, str]) -> dict[str, list[str]]:
        values = FileStreamSourceConnector().validate(config).config_values
        return {v.name: v.error_messages for v in values}

    missing = errors({"topic": "t"})
    assert missing["file"] == ['Missing required configuration "file" which has no default value.']
    both = errors({"topic": "t", "file": "a", "files": "b,c"})
    assert both["file"] == both["files"] == ["Only one of file and files may be set."]
    assert errors({"topic": "t", "files": "b,c"})["file"] == []
