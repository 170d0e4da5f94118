"""Kafka Connect's task resources: a connector's task configs, each task's status and its
restart."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response

from airflow_provider_connect.control.connectors import ConnectorWrites
from airflow_provider_connect.control.error_answers import RestError
from airflow_provider_connect.control.secrets import masked_config
from airflow_provider_connect.control.status import connector_status


def tasks_router(writes: ConnectorWrites) -> APIRouter:
    """The task routes over ``writes.store``."""
    router = APIRouter()
    store = writes.store

    @router.get("/connectors/{name}/tasks")
    def tasks(name: str) -> list[dict[str, Any]]:
        store.configs.connector(name)
        _, configs = store.configs.task_configs(name)
        return [
            {"id": {"connector": name, "task": i}, "config": masked_config(c)}
            for i, c in enumerate(configs)
        ]

    def task_entry(name: str, task_id: int) -> dict[str, Any]:
        tasks: list[dict[str, Any]] = connector_status(store, name)["tasks"]
        for task in tasks:
            if task["id"] == task_id:
                return task
        raise RestError(404, f"Task {name}-{task_id} not found")

    @router.get("/connectors/{name}/tasks/{task_id}/status")
    def task_status(name: str, task_id: int) -> dict[str, Any]:
        return task_entry(name, task_id)

    @router.post("/connectors/{name}/tasks/{task_id}/restart", status_code=204)
    def restart_task(name: str, task_id: int) -> Response:
        task_entry(name, task_id)
        writes.restart_task(name, task_id)
        return Response(status_code=204)

    return router
