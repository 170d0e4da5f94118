"""One converter's Schema Registry: confluent-kafka's ``SchemaRegistryClient`` (its auth,
TLS, retries and caches) and its failures as Connect's exceptions.

* A schema or subject the registry does not have (404), a schema it refuses (409
  incompatible, 422 invalid) and other answers about the data are ``DataException``: the
  record is at fault, and ``errors.tolerance`` decides.
* A registry that cannot be reached, answers too slowly or not with its JSON, is
  unavailable (408, 429, 5xx) or refuses the credentials (401, 403) is
  ``RetriableException``, naming the registry: the
  task retries within ``errors.retry.timeout``, then fails whatever ``errors.tolerance``
  says, since no record is at fault.

Messages name the registry by its URL without user info.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import httpx2
from confluent_kafka.schema_registry import (
    RegisteredSchema,
    SchemaRegistryClient,
    SchemaRegistryError,
)
from confluent_kafka.schema_registry import Schema as RegistrySchema
from confluent_kafka.schema_registry.error import OAuthTokenError

from airflow_provider_connect.connect.errors import (
    ConfigException,
    DataException,
    RetriableException,
)
from airflow_provider_connect.schema_registry.config import client_config, timeouts_s

RETRIABLE_STATUSES = frozenset({401, 403, 408, 429})
"""Statuses below 500 that say the registry, not the record, is the trouble."""


def registry_name(urls: str) -> str:
    """``urls`` without user info, for messages and logs."""
    shown = []
    for url in urls.split(","):
        parts = urllib.parse.urlsplit(url.strip())
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        shown.append(urllib.parse.urlunsplit(parts._replace(netloc=netloc)))
    return ",".join(shown)


class Registry:
    """The registry calls a converter makes, each under the error translation of the
    module's docstring. Thread-safe as the client is; closed once, with the converter."""

    def __init__(self, parsed: Mapping[str, Any]) -> None:
        conf = client_config(parsed)
        connect_s, read_s = timeouts_s(parsed)
        self.name = "the Schema Registry at " + registry_name(conf["url"])
        try:
            self.client = SchemaRegistryClient.new_client(
                {**conf, "timeout": httpx2.Timeout(read_s, connect=connect_s)}
            )
        except (ValueError, TypeError, OSError) as e:
            raise ConfigException(f"Invalid configuration of {self.name}: {e}") from e

    @contextmanager
    def calls(self, doing: str) -> Iterator[None]:
        """Translates the failures of the calls made in its block (module docstring);
        ``doing`` says what for, as in "registering the schema of subject orders-value"."""
        try:
            yield
        except SchemaRegistryError as e:
            status = e.http_status_code
            text = f"{self.name} answered {status} while {doing}: {e.error_message}"
            if status in RETRIABLE_STATUSES or status >= 500:
                raise RetriableException(text) from e
            raise DataException(f"{text} (error code {e.error_code})") from e
        except (httpx2.HTTPError, OAuthTokenError, json.JSONDecodeError) as e:
            # unreachable, too slow, redirecting in circles, or answering what is not the
            # registry's JSON (a proxy's page): the registry, not the record, is at fault
            raise RetriableException(
                f"{self.name} could not be reached while {doing}: {type(e).__name__}: {e}"
            ) from e

    def register(self, subject: str, schema: RegistrySchema, normalize: bool) -> RegisteredSchema:
        """``schema`` registered under ``subject`` (its id when it is there already)."""
        with self.calls(f"registering a schema under subject {subject}"):
            return self.client.register_schema_full_response(subject, schema, normalize)

    def lookup(self, subject: str, schema: RegistrySchema, normalize: bool) -> RegisteredSchema:
        """``schema`` as registered under ``subject``; DataException when it is not."""
        with self.calls(f"looking up a schema under subject {subject}"):
            return self.client.lookup_schema(subject, schema, normalize)

    def latest(self, subject: str) -> RegisteredSchema:
        """The latest version of ``subject`` (cached for ``latest.cache.ttl.sec``)."""
        with self.calls(f"reading the latest version of subject {subject}"):
            return self.client.get_latest_version(subject)

    def schema(self, schema_id: int | None, guid: str | None, fmt: str | None) -> RegistrySchema:
        """The schema of id ``schema_id`` (or of ``guid``), in ``fmt`` (e.g. protobuf's
        ``serialized``); cached by the client."""
        with self.calls(f"reading schema {schema_id if schema_id is not None else guid}"):
            if schema_id is not None:
                return self.client.get_schema(schema_id, fmt=fmt)
            assert guid is not None
            return self.client.get_schema_by_guid(guid, fmt=fmt)

    def version(self, subject: str, schema: RegistrySchema) -> int | None:
        """The version of ``schema`` under ``subject``, as Confluent's converters give it to
        Connect schemas: the ``confluent:version`` metadata property, else the subject's
        version of it; None when the subject does not hold it (Confluent's fails then)."""
        metadata = schema.metadata
        if metadata is not None and metadata.properties is not None:
            found = metadata.properties.properties.get("confluent:version")
            if found is not None:
                return int(found)
        try:
            with self.calls(f"looking up the version of a schema under subject {subject}"):
                return self.client.lookup_schema(subject, schema).version
        except DataException:
            return None

    def close(self) -> None:
        self.client.close()
