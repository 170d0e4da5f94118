"""Kafka Connect's connector plugin resources: the installed connector (and converter)
plugins, a connector plugin's config definition, and a connector config validated against
its plugin."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from airflow_provider_connect.connect.config import ConfigDef, ConfigValue, config_infos
from airflow_provider_connect.connect.plugins import class_name
from airflow_provider_connect.control.plugins import (
    connector_class,
    connector_plugins,
    converter_plugins,
    plugin_info,
)
from airflow_provider_connect.control.validation import validate_connector_config
from airflow_provider_connect.runtime.rest.common import RestError, body, config_body, flag
from airflow_provider_connect.runtime.rest.schema import CONFIG, json_body
from airflow_provider_connect.runtime.worker_config import WorkerConfig


def plugins_router(worker: WorkerConfig) -> APIRouter:
    """The plugin routes; a config is validated against ``worker``'s client override policy,
    its placeholders as every writer checks them (``control.validation``)."""
    router = APIRouter()

    @router.get("/connector-plugins")
    def plugins(connectorsOnly: str = "true") -> list[dict[str, Any]]:
        found = [plugin_info(c) for c in connector_plugins()]
        if not flag(connectorsOnly):
            found += [plugin_info(c) for c in converter_plugins()]
        return found

    def plugin(name: str) -> type:
        try:
            return connector_class(name)
        except ImportError as e:
            raise RestError(404, str(e)) from None

    @router.get("/connector-plugins/{name}/config")
    def plugin_config(name: str) -> list[dict[str, Any]]:
        definition = plugin(name)().config()
        return [c["definition"] for c in _definitions(definition)]

    @router.put("/connector-plugins/{name}/config/validate", openapi_extra=json_body(CONFIG))
    async def validate(name: str, request: Request) -> dict[str, Any]:
        cls = plugin(name)
        config = config_body(await body(request))
        given = config.get("connector.class")
        if given is not None and _names(given) is not cls:
            raise RestError(
                400, "Must specify connector.class in config matching the plugin in the path"
            )
        return validate_connector_config(
            {**config, "connector.class": given or class_name(cls)}, worker.override_policy
        )

    return router


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
