"""REST extensions (Kafka's ``rest.extension.classes``): the one Kafka ships,
``BasicAuthSecurityRestExtension``, configured as in Kafka Connect.

Kafka reads the credentials through JAAS: the file named by the Java system property
``java.security.auth.login.config`` has a ``KafkaConnect`` entry whose
``PropertyFileLoginModule`` names a properties file of ``user: password`` lines. Here the
property comes from the worker config key of the same name, or from ``-D…`` in ``KAFKA_OPTS``
as a Kafka deployment sets it; the JAAS and credentials files are Kafka's, unchanged."""

from __future__ import annotations

import base64
import binascii
import hmac
import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jproperties import Properties
from starlette.types import ASGIApp, Receive, Scope, Send

from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.control.error_answers import ErrorAnswer

BASIC_AUTH_EXTENSION = (
    "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
)
EXTENSIONS = {BASIC_AUTH_EXTENSION, "BasicAuthSecurityRestExtension"}
JAAS_CONFIG = "java.security.auth.login.config"
JAAS_ENTRY = "KafkaConnect"
READ_ONLY_USERS = "rest.basic.auth.read.only.users"
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_JAAS_FILE = re.compile(r'\bfile\s*=\s*"([^"]*)"')


def jaas_path(worker_originals: Mapping[str, str], environ: Mapping[str, str]) -> str | None:
    """Where the JAAS file is: the worker config key, else ``-Djava.security...`` in
    ``KAFKA_OPTS``."""
    if worker_originals.get(JAAS_CONFIG):
        return worker_originals[JAAS_CONFIG]
    for option in shlex.split(environ.get("KAFKA_OPTS", "")):
        if option.startswith(f"-D{JAAS_CONFIG}="):
            return option.split("=", 1)[1]
    return None


def credentials(jaas_file: str) -> dict[str, str]:
    """User → password, from the properties file the ``KafkaConnect`` JAAS entry names."""
    text = Path(jaas_file).read_text()
    entry = re.search(rf"\b{JAAS_ENTRY}\s*\{{(.*?)\}}\s*;", text, re.DOTALL)
    found = _JAAS_FILE.search(entry.group(1)) if entry else None
    if found is None:
        raise ConfigException(
            f'{jaas_file} has no {JAAS_ENTRY} entry with a PropertyFileLoginModule file="…"'
        )
    properties = Properties()
    with open(found.group(1), "rb") as f:
        properties.load(f, "utf-8")
    return {user: value.data for user, value in properties.items()}


class BasicAuth:
    """ASGI middleware: every request needs HTTP basic credentials that match the file;
    otherwise 401 with a ``WWW-Authenticate`` challenge (Kafka's ``JaasBasicAuthFilter``).
    Beyond Kafka, users listed in ``rest.basic.auth.read.only.users`` may only read: any
    other method gets 403. Error bodies never repeat what the client sent."""

    def __init__(
        self, app: ASGIApp, users: Mapping[str, str], read_only: frozenset[str] = frozenset()
    ) -> None:
        self.app = app
        self.users = dict(users)
        self.read_only = read_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        user = self._authenticated(dict(scope["headers"]))
        if user is None:
            challenge = [(b"www-authenticate", b'Basic realm="connect"')]
            await ErrorAnswer(401, "User cannot access the resource.").send(send, challenge)
            return
        if user in self.read_only and scope["method"] not in READ_METHODS:
            message = f"User {user} may only read (rest.basic.auth.read.only.users)"
            await ErrorAnswer(403, message).send(send)
            return
        await self.app(scope, receive, send)

    def _authenticated(self, headers: Mapping[bytes, bytes]) -> str | None:
        """The user the credentials prove, or None."""
        scheme, _, encoded = headers.get(b"authorization", b"").partition(b" ")
        if scheme.lower() != b"basic":
            return None
        try:
            user, _, password = base64.b64decode(encoded, validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
        expected = self.users.get(user)
        return user if expected is not None and hmac.compare_digest(expected, password) else None


def rest_extensions(
    classes: list[str], worker_originals: Mapping[str, str], environ: Mapping[str, str] = os.environ
) -> list[tuple[Any, dict[str, Any]]]:
    """The middlewares (class and arguments) of ``rest.extension.classes``; ConfigException
    for an unknown class or missing credentials, at startup."""
    found: list[tuple[Any, dict[str, Any]]] = []
    for name in classes:
        if name not in EXTENSIONS:
            raise ConfigException(
                f"Unknown REST extension {name!r} in rest.extension.classes: only "
                f"{BASIC_AUTH_EXTENSION} is available"
            )
        path = jaas_path(worker_originals, environ)
        if path is None:
            raise ConfigException(
                f"{BASIC_AUTH_EXTENSION} needs a JAAS file: set {JAAS_CONFIG} in the worker "
                f"config, or -D{JAAS_CONFIG}=… in KAFKA_OPTS"
            )
        read_only = {u.strip() for u in worker_originals.get(READ_ONLY_USERS, "").split(",")}
        found.append(
            (BasicAuth, {"users": credentials(path), "read_only": frozenset(read_only - {""})})
        )
    return found
