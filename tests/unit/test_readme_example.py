"""The README's source task example runs as written and resumes from its offset."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from airflow_provider_connect.connect.connector import call_stop
from airflow_provider_connect.connect.source import OffsetStorageReader, SourceTaskContext

README = Path(__file__).resolve().parents[2] / "README.md"


class Offsets(OffsetStorageReader):
    def __init__(self, stored: dict[str, Any]) -> None:
        self.stored = stored

    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        return self.stored.get(partition["file"])


class Context(SourceTaskContext):
    def __init__(self, stored: dict[str, Any]) -> None:
        self.reader = Offsets(stored)

    def configs(self) -> dict[str, str]:
        return {}

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self.reader


def test_readme_source_task(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    (code,) = [b for b in blocks if "class LinesTask" in b]
    namespace: dict[str, Any] = {}
    exec(compile(code, str(README), "exec"), namespace)
    path = tmp_path / "in.txt"
    path.write_text("one\ntwo\npart")

    task = namespace["LinesTask"]()
    task.initialize(Context({}))
    task.start({"file": str(path)})
    records = task.poll()
    assert [r.value for r in records] == ["one", "two"]
    assert [r.source_offset for r in records] == [{"position": 4}, {"position": 8}]
    call_stop(task, False)
    task.stopped()

    with path.open("a") as f:
        f.write("ial\nthree\n")
    resumed = namespace["LinesTask"]()
    resumed.initialize(Context({str(path): records[-1].source_offset}))
    resumed.start({"file": str(path)})
    assert [r.value for r in resumed.poll()] == ["partial", "three"]
