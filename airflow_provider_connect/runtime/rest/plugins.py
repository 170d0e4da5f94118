"""Kafka Connect's connector plugin resources: the installed plugins with their versions
(connectors; with ``connectorsOnly=false`` also converters, header converters,
transformations and predicates), a plugin's config definition (``?version=`` checks the
installed version against a KIP-891 requirement), and a connector config validated against
its plugin."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from airflow_provider_connect.connect.config import ConfigDef, ConfigValue, config_infos
from airflow_provider_connect.connect.plugin_versions import (
    LATEST,
    InvalidVersionSpecification,
    VersionedPluginLoadingException,
    ensure_version,
)
from airflow_provider_connect.connect.plugins import class_name
from airflow_provider_connect.control.error_answers import RestError
from airflow_provider_connect.control.plugins import (
    UnknownPlugin,
    all_plugins,
    connector_class,
    connector_plugins,
    plugin_class,
    plugin_config_def,
    plugin_info,
    plugin_version,
)
from airflow_provider_connect.control.validation import validate_connector_config
from airflow_provider_connect.runtime.rest.common import body, config_body, flag, off_loop
from airflow_provider_connect.runtime.rest.schema import CONFIG, json_body
from airflow_provider_connect.runtime.worker_config import WorkerConfig


def plugins_router(worker: WorkerConfig) -> APIRouter:
    """The plugin routes; a config is validated against ``worker``'s client override policy,
    its placeholders as every writer checks them (``control.validation``)."""
    router = APIRouter()

    @router.get("/connector-plugins")
    def plugins(connectorsOnly: str = "true") -> list[dict[str, Any]]:
        if flag(connectorsOnly):
            return [plugin_info(c) for c in connector_plugins()]
        return [plugin_info(c, type_) for c, type_ in all_plugins()]

    def plugin(name: str) -> type:
        try:
            return connector_class(name)
        except ImportError as e:
            raise RestError(404, str(e)) from None

    @router.get("/connector-plugins/{name}/config")
    def plugin_config(name: str, version: str = LATEST) -> list[dict[str, Any]]:
        """Kafka 4's answers: 404 for an unknown plugin, 400 for a class of no plugin type,
        a spec that does not parse, or an installed version outside the requirement."""
        try:
            cls = plugin_class(name)
            ensure_version(class_name(cls), version, plugin_version(cls))
        except UnknownPlugin as e:
            raise RestError(400 if e.found else 404, str(e)) from None
        except InvalidVersionSpecification:
            raise RestError(400, f"Invalid version specification: {version}") from None
        except VersionedPluginLoadingException as e:
            raise RestError(400, str(e)) from None
        return [c["definition"] for c in _definitions(plugin_config_def(cls))]

    @router.put("/connector-plugins/{name}/config/validate", openapi_extra=json_body(CONFIG))
    async def validate(name: str, request: Request) -> dict[str, Any]:
        cls = plugin(name)
        config = config_body(await body(request))
        given = config.get("connector.class")
        if given is not None and _names(given) is not cls:
            raise RestError(
                400, "Must specify connector.class in config matching the plugin in the path"
            )
        return await off_loop(
            request,
            f"validating a config of connector plugin {class_name(cls)}",
            validate_connector_config,
            {**config, "connector.class": given or class_name(cls)},
            worker.override_policy,
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
