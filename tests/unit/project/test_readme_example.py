"""The README's connector example and its test with the harness run as written, together, in
an empty folder (the test's block uses the task the first block defines)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[3] / "README.md"
MARK = "<!-- exercised by tests/unit/project/test_readme_example.py::test_readme_source_task -->"


def test_readme_source_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = re.findall(re.escape(MARK) + r"\n```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) == 2 and "class LinesTask" in blocks[0] and "Harness" in blocks[1]
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    harness = namespace["harness"]
    assert harness.offsets.offset({"file": "in.txt"}) == {"position": 16}
    assert (tmp_path / "in.txt").read_text() == "one\ntwo\npartial\n"
