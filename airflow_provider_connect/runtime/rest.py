"""Kafka Connect's REST API over the metadata store: the same paths, bodies and status codes.

Writes go to the store; the herder applies them within a second. Errors are
``{"error_code": <HTTP status>, "message": ...}``: 400 for invalid input (bad JSON, invalid
config, unknown connector class), 404 for unknown connectors or tasks, 409 for a taken
name or offsets of a connector that is not STOPPED. Password-typed config values are
returned as ``[hidden]``; a ``[hidden]`` sent back in a PUT or PATCH keeps the stored value.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Annotated, Any, TypeGuard

from confluent_kafka import ConsumerGroupTopicPartitions
from confluent_kafka import TopicPartition as KafkaPartition
from confluent_kafka.admin import AdminClient
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.config import (
    ConfigDef,
    ConfigValue,
    config_infos,
)
from airflow_provider_connect.connect.errors import AlreadyExistsException, NotFoundException
from airflow_provider_connect.connect.plugins import class_name
from airflow_provider_connect.control.plugins import (
    connector_class,
    connector_plugins,
    connector_type,
    converter_plugins,
    plugin_info,
)
from airflow_provider_connect.control.secrets import masked_config, restore_hidden
from airflow_provider_connect.control.status import connector_status
from airflow_provider_connect.control.validation import (
    ConfigValidationError,
    ensure_valid,
    validate_connector_config,
)
from airflow_provider_connect.runtime.config_transformer import ConfigTransformer
from airflow_provider_connect.runtime.rest_admin import admin_router
from airflow_provider_connect.runtime.rest_limits import RequestBodyLimit
from airflow_provider_connect.runtime.rest_schema import CONFIG, CREATE, OFFSETS, PATCH, json_body
from airflow_provider_connect.runtime.sink_task import consumer_group
from airflow_provider_connect.runtime.worker_config import REST_REQUEST_MAX_BYTES, WorkerConfig
from airflow_provider_connect.store import MetadataStore, State, TargetState

log = logging.getLogger(__name__)


class RestError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _flag(value: str | None) -> bool:
    """Query booleans, read as Kafka Connect reads them: case-insensitively."""
    return value is not None and value.strip().lower() == "true"


def create_app(store: MetadataStore, worker: WorkerConfig, *, with_admin: bool = True) -> FastAPI:
    """The REST API of a runtime whose connectors live in ``store``; ``with_admin``, the
    admin endpoints too (``/admin/loggers``)."""
    app = FastAPI(title="airflow-provider-connect", version=__version__, redirect_slashes=False)
    app.add_middleware(RequestBodyLimit, max_bytes=worker[REST_REQUEST_MAX_BYTES])
    if with_admin:
        app.include_router(admin_router())
    # Configs are validated as the connector will get them: placeholders resolved (the
    # store keeps them as written).
    secrets = ConfigTransformer(worker.originals)

    @app.middleware("http")
    async def accept_trailing_slash(request: Request, call_next: Any) -> Response:
        path = request.scope["path"]
        if len(path) > 1 and path.endswith("/"):
            request.scope["path"] = path.rstrip("/")
        response: Response = await call_next(request)
        return response

    def error(status: int, message: str) -> JSONResponse:
        return JSONResponse({"error_code": status, "message": message}, status_code=status)

    @app.exception_handler(RestError)
    async def rest_error(_: Request, e: RestError) -> JSONResponse:
        return error(e.status, str(e))

    @app.exception_handler(NotFoundException)
    async def not_found(_: Request, e: NotFoundException) -> JSONResponse:
        return error(404, str(e))

    @app.exception_handler(AlreadyExistsException)
    async def conflict(_: Request, e: AlreadyExistsException) -> JSONResponse:
        return error(409, str(e))

    @app.exception_handler(ConfigValidationError)
    async def invalid_config(_: Request, e: ConfigValidationError) -> JSONResponse:
        return error(400, str(e))

    @app.exception_handler(RequestValidationError)
    async def bad_request(_: Request, e: RequestValidationError) -> JSONResponse:
        return error(400, f"Invalid request: {e.errors()[0].get('msg', 'malformed body')}")

    async def body(request: Request) -> Any:
        try:
            return await request.json()
        except ValueError as e:
            raise RestError(400, f"Request body is not valid JSON: {e}") from None

    def config_body(value: Any) -> dict[str, str]:
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise RestError(400, "Connector configuration must be a JSON object")
        return {
            k: v if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)
            for k, v in value.items()
            if v is not None
        }

    def info(name: str) -> dict[str, Any]:
        connector = store.configs.connector(name)
        _, task_configs = store.configs.task_configs(name)
        return {
            "name": name,
            "config": masked_config(connector.config),
            "tasks": [{"connector": name, "task": i} for i in range(len(task_configs))],
            "type": connector_type(connector.config.get("connector.class", "")),
        }

    def status(name: str) -> dict[str, Any]:
        return connector_status(store, name)

    def write_config(name: str, config: dict[str, str]) -> tuple[dict[str, Any], bool]:
        if config.get("name", name) != name:
            raise RestError(
                400,
                f"Connector name configuration ({config['name']}) doesn't match connector name in the URL ({name})",
            )
        config = {**config, "name": name}
        with contextlib.suppress(NotFoundException):  # a new connector: nothing to restore
            config = restore_hidden(config, store.configs.connector(name).config)
        ensure_valid(secrets.transform(config), worker.override_policy)
        _, created = store.configs.put_connector_config(name, config)
        return info(name), created

    # -- cluster -------------------------------------------------------------------------------
    @app.get("/")
    def root() -> dict[str, Any]:
        return {"version": __version__, "commit": "", "kafka_cluster_id": None}

    @app.get("/health")
    def health() -> dict[str, str]:
        return {
            "status": "healthy",
            "message": "Worker has completed startup and is ready to handle requests.",
        }

    # -- connectors ----------------------------------------------------------------------------
    @app.get("/connectors")
    def list_connectors(expand: Annotated[list[str] | None, Query()] = None) -> Any:
        names = [c.name for c in store.configs.connectors()]
        if not expand:
            return names
        result: dict[str, dict[str, Any]] = {}
        for name in names:
            entry: dict[str, Any] = {}
            if "status" in expand:
                entry["status"] = status(name)
            if "info" in expand:
                entry["info"] = info(name)
            result[name] = entry
        return result

    @app.post("/connectors", status_code=201, openapi_extra=json_body(CREATE))
    async def create(request: Request) -> Any:
        payload = await body(request)
        if (
            not isinstance(payload, dict)
            or not isinstance(payload.get("name"), str)
            or not payload["name"].strip()
        ):
            raise RestError(400, 'Connector name must be provided in the request body as "name"')
        name = payload["name"]
        config = {**config_body(payload.get("config", {})), "name": name}
        if config.get("name") != name:
            raise RestError(400, "Connector name configuration doesn't match the name in the body")
        ensure_valid(secrets.transform(config), worker.override_policy)
        store.configs.create_connector(name, config)
        return JSONResponse(info(name), status_code=201)

    @app.get("/connectors/{name}")
    def get_connector(name: str) -> dict[str, Any]:
        return info(name)

    @app.delete("/connectors/{name}", status_code=204)
    def delete(name: str) -> Response:
        store.configs.delete_connector(name)
        return Response(status_code=204)

    @app.get("/connectors/{name}/config")
    def get_config(name: str) -> dict[str, str]:
        return masked_config(store.configs.connector(name).config)

    @app.put("/connectors/{name}/config", openapi_extra=json_body(CONFIG))
    async def put_config(name: str, request: Request) -> JSONResponse:
        connector, created = write_config(name, config_body(await body(request)))
        return JSONResponse(connector, status_code=201 if created else 200)

    @app.patch("/connectors/{name}/config", openapi_extra=json_body(PATCH))
    async def patch_config(name: str, request: Request) -> dict[str, Any]:
        patch = await body(request)
        if not isinstance(patch, dict):
            raise RestError(400, "Connector configuration patch must be a JSON object")
        config = dict(store.configs.connector(name).config)
        for key, value in patch.items():  # null removes a key
            if value is None:
                config.pop(key, None)
        config.update(config_body(patch))
        connector, _ = write_config(name, config)
        return connector

    @app.get("/connectors/{name}/status")
    def get_status(name: str) -> dict[str, Any]:
        return status(name)

    @app.post("/connectors/{name}/restart")
    def restart(
        name: str, includeTasks: str | None = None, onlyFailed: str | None = None
    ) -> Response:
        include_tasks, only_failed = _flag(includeTasks), _flag(onlyFailed)
        store.configs.request_restart(name, include_tasks=include_tasks, only_failed=only_failed)
        if not include_tasks and not only_failed:
            return Response(status_code=204)
        return JSONResponse(status(name), status_code=202)

    @app.put("/connectors/{name}/pause", status_code=202)
    def pause(name: str) -> Response:
        store.configs.set_target_state(name, TargetState.PAUSED)
        return Response(status_code=202)

    @app.put("/connectors/{name}/resume", status_code=202)
    def resume(name: str) -> Response:
        store.configs.set_target_state(name, TargetState.STARTED)
        return Response(status_code=202)

    @app.put("/connectors/{name}/stop", status_code=204)
    def stop(name: str) -> Response:
        store.configs.set_target_state(name, TargetState.STOPPED)
        return Response(status_code=204)

    # -- tasks -----------------------------------------------------------------------------------
    @app.get("/connectors/{name}/tasks")
    def tasks(name: str) -> list[dict[str, Any]]:
        store.configs.connector(name)
        _, configs = store.configs.task_configs(name)
        return [
            {"id": {"connector": name, "task": i}, "config": masked_config(c)}
            for i, c in enumerate(configs)
        ]

    def task_entry(name: str, task_id: int) -> dict[str, Any]:
        tasks: list[dict[str, Any]] = status(name)["tasks"]
        for task in tasks:
            if task["id"] == task_id:
                return task
        raise RestError(404, f"Task {name}-{task_id} not found")

    @app.get("/connectors/{name}/tasks/{task_id}/status")
    def task_status(name: str, task_id: int) -> dict[str, Any]:
        return task_entry(name, task_id)

    @app.post("/connectors/{name}/tasks/{task_id}/restart", status_code=204)
    def restart_task(name: str, task_id: int) -> Response:
        task_entry(name, task_id)
        store.configs.request_restart(name, task_id)
        return Response(status_code=204)

    # -- topics ----------------------------------------------------------------------------------
    @app.get("/connectors/{name}/topics")
    def topics(name: str) -> dict[str, Any]:
        store.configs.connector(name)
        return {name: {"topics": store.statuses.active_topics(name)}}

    @app.put("/connectors/{name}/topics/reset", status_code=202)
    def reset_topics(name: str) -> Response:
        store.configs.connector(name)
        store.statuses.reset_active_topics(name)
        return Response(status_code=202)

    # -- offsets (KIP-875) -------------------------------------------------------------------
    def admin() -> AdminClient:
        return AdminClient({**worker.client_config("admin.")})

    def require_stopped(name: str) -> str:
        connector = store.configs.connector(name)
        kind = connector_type(connector.config.get("connector.class", ""))
        current = store.statuses.connector_status(name)
        if (
            connector.target_state is not TargetState.STOPPED
            or current is None
            or current.state is not State.STOPPED
        ):
            raise RestError(
                409,
                f"Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint",
            )
        return kind

    @app.get("/connectors/{name}/offsets")
    def get_offsets(name: str) -> dict[str, Any]:
        connector = store.configs.connector(name)
        if connector_type(connector.config.get("connector.class", "")) != "sink":
            return {
                "offsets": [
                    {"partition": p, "offset": o} for p, o in store.offsets.source_offsets(name)
                ]
            }
        group = consumer_group(name)
        client = admin()
        result = client.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[
            group
        ].result(timeout=30)
        return {
            "offsets": [
                {
                    "partition": {"kafka_topic": tp.topic, "kafka_partition": tp.partition},
                    "offset": {"kafka_offset": tp.offset},
                }
                for tp in sorted(result.topic_partitions, key=lambda t: (t.topic, t.partition))
                if tp.offset >= 0
            ]
        }

    @app.patch("/connectors/{name}/offsets", openapi_extra=json_body(OFFSETS))
    async def alter_offsets(name: str, request: Request) -> dict[str, str]:
        kind = require_stopped(name)
        payload = await body(request)
        entries = payload.get("offsets") if isinstance(payload, dict) else None
        if not isinstance(entries, list) or not all(
            isinstance(e, dict)
            and isinstance(e.get("partition"), dict)
            and isinstance(e.get("offset"), dict | None)
            for e in entries
        ):
            raise RestError(
                400, 'The request body must be {"offsets": [{"partition": {...}, "offset": {...}}]}'
            )
        if not entries:
            raise RestError(400, "The offsets to alter must not be empty")
        if kind == "sink":
            group = consumer_group(name)
            altered = ConsumerGroupTopicPartitions(group, _sink_offsets(entries))
            admin().alter_consumer_group_offsets([altered])[group].result(timeout=30)
        else:
            store.offsets.commit_source_offsets(name, _source_offsets(entries))
        return {"message": "The offsets for this connector have been altered successfully"}

    @app.delete("/connectors/{name}/offsets")
    def reset_offsets(name: str) -> dict[str, str]:
        kind = require_stopped(name)
        if kind == "sink":
            admin().delete_consumer_groups([consumer_group(name)])[consumer_group(name)].result(
                timeout=30
            )
        else:
            store.offsets.delete_source_offsets(name)
        return {"message": "The offsets for this connector have been reset successfully"}

    # -- plugins -----------------------------------------------------------------------------
    @app.get("/connector-plugins")
    def plugins(connectorsOnly: str = "true") -> list[dict[str, Any]]:
        found = [plugin_info(c) for c in connector_plugins()]
        if not _flag(connectorsOnly):
            found += [plugin_info(c) for c in converter_plugins()]
        return found

    def plugin(name: str) -> type:
        try:
            return connector_class(name)
        except ImportError as e:
            raise RestError(404, str(e)) from None

    @app.get("/connector-plugins/{name}/config")
    def plugin_config(name: str) -> list[dict[str, Any]]:
        definition = plugin(name)().config()
        return [c["definition"] for c in _definitions(definition)]

    @app.put("/connector-plugins/{name}/config/validate", openapi_extra=json_body(CONFIG))
    async def validate(name: str, request: Request) -> dict[str, Any]:
        cls = plugin(name)
        config = config_body(await body(request))
        given = config.get("connector.class")
        if given is not None and _names(given) is not cls:
            raise RestError(
                400, "Must specify connector.class in config matching the plugin in the path"
            )
        return validate_connector_config(
            secrets.transform({**config, "connector.class": given or class_name(cls)}),
            worker.override_policy,
        )

    @app.exception_handler(Exception)
    async def unexpected(_: Request, e: Exception) -> JSONResponse:
        log.exception("REST request failed")
        return error(500, f"Internal error: {type(e).__name__}")

    return app


def _sink_offsets(entries: list[dict[str, Any]]) -> list[KafkaPartition]:
    """A sink's offsets to alter, as KIP-875 writes them; RestError 400 for anything else."""
    partitions = []
    for entry in entries:
        partition, offset = entry["partition"], entry.get("offset") or {}
        topic, number = partition.get("kafka_topic"), partition.get("kafka_partition")
        position = offset.get("kafka_offset")
        if not (
            isinstance(topic, str)
            and topic
            and _is_int(number)
            and number >= 0
            and _is_int(position)
            and position >= 0
        ):
            raise RestError(
                400,
                "Sink offsets need a kafka_topic (a topic name), a kafka_partition and a "
                "kafka_offset (numbers, 0 or more) in each entry",
            )
        partitions.append(KafkaPartition(topic, number, position))
    return partitions


def _source_offsets(
    entries: list[dict[str, Any]],
) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """A source's partitions and offsets to alter; as Kafka Connect's ``OffsetUtils``
    requires, their values must be primitives (strings, booleans, numbers; integers within
    64 bits). RestError 400 for anything else."""
    found = []
    for entry in entries:
        partition, offset = entry["partition"], entry.get("offset")
        for part in (partition, offset or {}):
            if not all(_primitive(v) for v in part.values()):
                raise RestError(
                    400,
                    "Source partitions and offsets may only contain primitive values: "
                    "strings, booleans, null and numbers (integers within 64 bits)",
                )
        found.append((partition, offset))
    return found


def _primitive(value: Any) -> bool:
    if isinstance(value, int) and not isinstance(value, bool):
        return -(2**63) <= value < 2**63
    return value is None or isinstance(value, str | bool | float)


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _names(connector_class_name: str) -> type | None:
    """The connector class ``connector_class_name`` names, or None."""
    try:
        return connector_class(connector_class_name)
    except ImportError:
        return None


def _definitions(definition: ConfigDef) -> list[dict[str, Any]]:
    configs: list[dict[str, Any]] = config_infos(
        "", definition, [ConfigValue(name) for name in definition.names()]
    )["configs"]
    return configs
