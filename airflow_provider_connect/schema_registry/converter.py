"""The base of the Schema Registry converters.

The classes load without confluent-kafka's Schema Registry packages (or any Kafka client):
the Airflow side and REST read their configuration definitions to validate and mask
connector configs. ``configure`` loads the rest; without the ``schema-registry`` extra it
fails naming it.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from airflow_provider_connect.connect.config import ConfigDef
from airflow_provider_connect.connect.data.schema import (
    NULL_SCHEMA_AND_VALUE,
    Schema,
    SchemaAndValue,
)
from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.connect.header import Headers
from airflow_provider_connect.connect.storage import Converter
from airflow_provider_connect.schema_registry.config import RegistrySettings, serde_config_def

if TYPE_CHECKING:
    from airflow_provider_connect.schema_registry.registry import Registry
    from airflow_provider_connect.schema_registry.serde import Codec, Serde

EXTRA = "schema-registry"
INSTALL_HINT = f"pip install 'airflow-provider-connect[{EXTRA}]'"


class SchemaRegistryConverter(Converter):
    """A converter of Confluent's wire format through a Schema Registry; a subclass names
    its format's keys and codec. Conversion errors are ``DataException`` (the record's
    fault: ``errors.tolerance`` applies); a registry that cannot serve raises
    ``RetriableException`` (retried within ``errors.retry.timeout``, then the task fails)."""

    reads_headers: ClassVar[bool] = True
    """Reads the schema id from a ``__key_schema_id``/``__value_schema_id`` header when
    the record has one (the header form of the id)."""

    def __init__(self) -> None:
        self._serde: Serde | None = None

    def config(self) -> ConfigDef:
        return serde_config_def().merged(self.format_config_def())

    @abstractmethod
    def format_config_def(self) -> ConfigDef:
        """The format's own keys (Confluent's ``*DataConfig``)."""

    @abstractmethod
    def codec(self, parsed: Mapping[str, Any], registry: Registry) -> Codec:
        """The format's codec, for the parsed configuration."""

    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None:
        parsed = self.config().parse(configs)
        try:  # loaded here: see the module's docstring
            from airflow_provider_connect.schema_registry.registry import Registry
            from airflow_provider_connect.schema_registry.serde import Serde
        except ImportError as e:
            raise self._missing_extra(e) from e
        registry = Registry(parsed)
        try:
            codec = self.codec(parsed, registry)
        except ImportError as e:
            registry.close()
            raise self._missing_extra(e) from e
        except BaseException:
            registry.close()
            raise
        self._serde = Serde(codec, registry, RegistrySettings.of(parsed), is_key)

    def _missing_extra(self, error: ImportError) -> ConfigException:
        return ConfigException(
            f"{type(self).__name__} needs the {EXTRA} extra, which is not installed "
            f"({error}): {INSTALL_HINT}"
        )

    def _ready(self) -> Serde:
        if self._serde is None:
            raise ConfigException(f"{type(self).__name__} is not configured (or closed)")
        return self._serde

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if value is None:
            return None
        return self._ready().write(topic, schema, [value])[0]

    def from_connect_values(
        self, topic: str, schema: Schema | None, values: list[Any]
    ) -> list[bytes | None]:
        return self._ready().write(topic, schema, values)

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if data is None:
            return NULL_SCHEMA_AND_VALUE
        raw = [(h.key, h.value) for h in headers] if headers else None
        return self._ready().read(topic, data, raw)

    def close(self) -> None:
        if self._serde is not None:
            self._serde.registry.close()
            self._serde = None
