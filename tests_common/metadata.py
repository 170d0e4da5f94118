"""A metadata store of many connectors, and the queries a read of it runs: what the
Connectors page's benchmark (``bench.ui_overview``) and its test
(``tests/integration/ui/test_connectors_page.py``) measure and count."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event, insert

from airflow_provider_connect.store import MetadataStore
from airflow_provider_connect.store.models import (
    ConnectorRow,
    ConnectorStatusRow,
    SinkProgressRow,
    SourceOffsetRow,
    TaskStatusRow,
)
from airflow_provider_connect.store.records import partition_key


def populate(store: MetadataStore, connectors: int, tasks: int) -> None:
    """Writes the connectors with bulk inserts (the store's own writes take a transaction
    each: minutes for thousands of tasks)."""
    names = [f"connector-{i:05d}" for i in range(connectors)]
    sources = names[::2]
    rows: dict[type, list[dict[str, Any]]] = {
        ConnectorRow: [
            {
                "name": name,
                "config": {
                    "name": name,
                    "connector.class": "FileStreamSource" if name in sources else "FileStreamSink",
                    "file": f"/data/{name}.txt",
                    "topic" if name in sources else "topics": f"topic-{name}",
                    "tasks.max": str(tasks),
                },
                "target_state": "STARTED",
            }
            for name in names
        ],
        ConnectorStatusRow: [
            {"connector": name, "state": "RUNNING", "worker_id": "driver-1", "generation": 1}
            for name in names
        ],
        TaskStatusRow: [
            {
                "connector": name,
                "task_id": task,
                "state": "RUNNING",
                "worker_id": f"executor-{task % 4}",
                "generation": 1,
                "run_id": f"{name}-{task}",
            }
            for name in names
            for task in range(tasks)
        ],
        SourceOffsetRow: [
            {
                "connector": name,
                "partition_key": partition_key({"filename": f"/data/{name}.txt"}),
                "partition": {"filename": f"/data/{name}.txt"},
                "offset": {"position": 4096},
            }
            for name in sources
        ],
        SinkProgressRow: [
            {
                "connector": name,
                "topic": f"topic-{name}",
                "partition": 0,
                "committed_offset": 900,
                "end_offset": 1000,
            }
            for name in names
            if name not in sources
        ],
    }
    with store.db.tx() as s:
        for model, values in rows.items():
            s.execute(insert(model), values)


@contextmanager
def counting(store: MetadataStore) -> Iterator[list[str]]:
    """The queries (SELECT statements) run on ``store`` while inside."""
    statements: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            statements.append(statement)

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
