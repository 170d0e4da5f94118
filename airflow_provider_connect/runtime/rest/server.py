"""Serves the REST API with uvicorn on background threads of the driver: one server per
entry of ``listeners`` (``http://`` or ``https://``), the admin endpoints on
``admin.listeners`` and the metrics on ``metrics.listeners`` when those are set.

TLS takes Kafka's ``ssl.*`` keys, ``listeners.https.ssl.*`` winning over them, with PEM files:
``ssl.keystore.location`` (the certificate chain and its private key),
``ssl.key.password``, ``ssl.truststore.location`` (CA certificates, for client
certificates) and ``ssl.client.auth`` (``none``, ``requested``, ``required``)."""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

import uvicorn
from fastapi import FastAPI

from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.runtime.rest.admin import admin_router
from airflow_provider_connect.runtime.rest.app import create_app
from airflow_provider_connect.runtime.rest.health import HealthCheck
from airflow_provider_connect.runtime.rest.metrics import (
    AppInfo,
    ConnectorPluginMetrics,
    SlotUsage,
    metrics_router,
)
from airflow_provider_connect.runtime.rest.security import rest_extensions
from airflow_provider_connect.runtime.worker_config import (
    ADMIN_LISTENERS,
    LISTENERS,
    METRICS_LISTENERS,
    REST_EXTENSION_CLASSES,
    WorkerConfig,
)
from airflow_provider_connect.store import MetadataStore

DEFAULT_LISTENER = "http://127.0.0.1:8083"
REST_STORE_TIMEOUT_S = 1.5
"""The deadline of the REST API's transactions, so that it answers within two seconds
while the metadata database hangs (its store fails fast once it knows)."""
CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


def tls_settings(originals: Mapping[str, str], scheme: str = "https") -> dict[str, Any]:
    """uvicorn's TLS arguments for a listener of ``scheme``; ConfigException when the
    keystore is missing or not PEM."""

    def get(key: str) -> str | None:
        return originals.get(f"listeners.{scheme}.{key}") or originals.get(key)

    kind = (get("ssl.keystore.type") or "PEM").upper()
    if kind != "PEM":
        raise ConfigException(f"ssl.keystore.type {kind} is not supported: use PEM files")
    keystore = get("ssl.keystore.location")
    if not keystore:
        raise ConfigException(
            f"An {scheme} listener needs ssl.keystore.location (or listeners.{scheme}."
            "ssl.keystore.location): a PEM file with the certificate chain and private key"
        )
    client_auth = (get("ssl.client.auth") or "none").lower()
    if client_auth not in CLIENT_AUTH:
        raise ConfigException(
            f"ssl.client.auth must be none, requested or required, not {client_auth}"
        )
    settings: dict[str, Any] = {
        "ssl_certfile": keystore,
        "ssl_keyfile_password": get("ssl.key.password"),
        "ssl_cert_reqs": CLIENT_AUTH[client_auth],
    }
    if get("ssl.truststore.location"):
        settings["ssl_ca_certs"] = get("ssl.truststore.location")
    return settings


class RestServer:
    """One app on one ``listener`` (``http://host:port`` or ``https://host:port``)."""

    def __init__(
        self, app: FastAPI, listener: str = DEFAULT_LISTENER, tls: Mapping[str, Any] | None = None
    ) -> None:
        url = urlparse(listener)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"Unsupported listener {listener!r}: expected http(s)://host:port")
        if url.scheme == "https" and tls is None:
            raise ValueError(f"The listener {listener!r} needs TLS settings")
        self.scheme = url.scheme
        self.host = url.hostname
        self.port = url.port or 8083
        config = uvicorn.Config(
            app,
            host=self.host,
            port=self.port,
            log_level="warning",
            lifespan="off",
            **(dict(tls or {}) if url.scheme == "https" else {}),
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="rest", daemon=True)

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    def start(self, timeout_s: float = 30) -> None:
        """Starts serving; returns once the port accepts connections."""
        self.thread.start()
        deadline = time.monotonic() + timeout_s
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"The REST API could not listen on {self.url}")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


class RestListeners:
    """Every listener of a runtime. ``admin.listeners`` unset: the admin endpoints are part
    of the REST API; set to addresses: only there; set empty: nowhere. ``/metrics`` is part
    of the REST API, and also served on ``metrics.listeners`` when set. The REST extensions
    (``rest.extension.classes``) guard every listener."""

    def __init__(
        self,
        store: MetadataStore,
        worker: WorkerConfig,
        slot_usage: SlotUsage | None = None,
        health_check: HealthCheck | None = None,
        connector_metrics: ConnectorPluginMetrics | None = None,
        app_info: AppInfo | None = None,
    ) -> None:
        self.store = store
        admin = worker[ADMIN_LISTENERS]
        extensions = rest_extensions(worker[REST_EXTENSION_CLASSES], worker.originals)
        metrics = metrics_router(store, slot_usage, connector_metrics, app_info)
        api = create_app(store, worker, with_admin=admin is None, health_check=health_check)
        api.include_router(metrics)
        served = [(api, worker[LISTENERS])]
        if admin:
            admin_app = FastAPI(title="airflow-provider-connect admin")
            admin_app.include_router(admin_router(store))
            served.append((admin_app, admin))
        if worker[METRICS_LISTENERS]:
            metrics_app = FastAPI(title="airflow-provider-connect metrics")
            metrics_app.include_router(metrics)
            served.append((metrics_app, worker[METRICS_LISTENERS]))
        for app, _ in served:
            for middleware, options in extensions:
                app.add_middleware(middleware, **options)
        self.servers = [
            RestServer(app, listener, self._tls(worker, listener))
            for app, listeners in served
            for listener in listeners
        ]

    @staticmethod
    def _tls(worker: WorkerConfig, listener: str) -> dict[str, Any] | None:
        scheme = urlparse(listener).scheme
        return tls_settings(worker.originals, scheme) if scheme == "https" else None

    @property
    def url(self) -> str:
        """The first listener's URL."""
        return self.servers[0].url

    def start(self) -> None:
        started = []
        try:
            for server in self.servers:
                server.start()
                started.append(server)
        except BaseException:
            for server in started:
                server.stop()
            raise

    def stop(self) -> None:
        for server in self.servers:
            server.stop()
