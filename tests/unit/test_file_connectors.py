"""The FileStream connectors' tasks on their own (no broker, no runtime)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airflow_provider_connect.connect.sink import SinkRecord, TopicPartition
from airflow_provider_connect.connect.source import OffsetStorageReader, SourceTaskContext
from airflow_provider_connect.connectors.file import FileStreamSinkTask, FileStreamSourceTask


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


def test_sink_appends_values_and_flushes(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    task = FileStreamSinkTask()
    task.start({"file": str(path)})
    task.put([SinkRecord("t", 0, None, None, None, v, i) for i, v in enumerate(["x", 1, None])])
    task.flush({TopicPartition("t", 0): 3})
    assert path.read_text() == "x\n1\nnull\n"
    task.stop(False)
