"""Loading plugin classes by name.

Configs name classes the way Kafka Connect users know them: a full dotted path
(``my_package.module.MyConverter``, or ``my_package.module:MyConverter``), Kafka's Java
class name of a built-in (``org.apache.kafka.connect.json.JsonConverter``), or the short
alias (``JsonConverter``).
"""

from __future__ import annotations

import importlib

_CONNECT = "airflow_provider_connect.connect"

# Kafka's Java names and short aliases of the built-in plugins, to their Python paths.
ALIASES: dict[str, str] = {
    "org.apache.kafka.connect.json.JsonConverter": f"{_CONNECT}.json.JsonConverter",
    "org.apache.kafka.connect.storage.StringConverter": f"{_CONNECT}.storage.StringConverter",
    "org.apache.kafka.connect.converters.ByteArrayConverter": f"{_CONNECT}.storage.ByteArrayConverter",
    "org.apache.kafka.connect.storage.SimpleHeaderConverter": f"{_CONNECT}.storage.SimpleHeaderConverter",
}
_FILE = "airflow_provider_connect.connectors.file"
ALIASES.update(
    {
        "org.apache.kafka.connect.file.FileStreamSourceConnector": f"{_FILE}.FileStreamSourceConnector",
        "org.apache.kafka.connect.file.FileStreamSinkConnector": f"{_FILE}.FileStreamSinkConnector",
    }
)
_JDBC = "airflow_provider_connect.connectors.jdbc"
ALIASES.update(
    {
        "io.confluent.connect.jdbc.JdbcSourceConnector": f"{_JDBC}.source.JdbcSourceConnector",
        "io.confluent.connect.jdbc.JdbcSinkConnector": f"{_JDBC}.sink.JdbcSinkConnector",
        "org.apache.kafka.connect.mirror.MirrorSourceConnector": (
            "airflow_provider_connect.connectors.mirror.MirrorSourceConnector"
        ),
    }
)
ALIASES.update({java.rsplit(".", 1)[1]: path for java, path in list(ALIASES.items())})
ALIASES["AuditSourceConnector"] = "airflow_provider_connect.connectors.audit.AuditSourceConnector"
ALIASES["ParquetSinkConnector"] = "airflow_provider_connect.connectors.parquet.ParquetSinkConnector"
# Kafka Connect also accepts a connector's name without the "Connector" suffix.
ALIASES.update(
    {
        a.removesuffix("Connector"): p
        for a, p in list(ALIASES.items())
        if a.endswith("Connector") and "." not in a
    }
)


def load_class(name: str) -> type:
    """The class called ``name``; raises ``ImportError`` naming it when there is none."""
    path = ALIASES.get(name, name)
    module_name, sep, attr = path.partition(":")
    if not sep:
        module_name, _, attr = path.rpartition(".")
    if not module_name or not attr:
        raise ImportError(f"Class {name} could not be found.")
    try:
        module = importlib.import_module(module_name)
        cls = getattr(module, attr)
    except (ImportError, AttributeError) as e:
        raise ImportError(f"Class {name} could not be found.") from e
    if not isinstance(cls, type):
        raise ImportError(f"{name} is not a class.")
    return cls


def class_name(cls: type) -> str:
    """The dotted path that :func:`load_class` resolves back to ``cls``."""
    return f"{cls.__module__}.{cls.__qualname__}"
