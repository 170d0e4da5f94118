"""The topics of change capture, as Debezium's default topic naming names them
(``AbstractTopicNamingStrategy``, ``SchemaTopicNamingStrategy``): a table's data topic, the
transaction metadata topic and the heartbeat topic."""

from __future__ import annotations

from collections.abc import Mapping

# AbstractTopicNamingStrategy's defaults.
DEFAULT_DELIMITER = "."
DEFAULT_TRANSACTION_TOPIC = "transaction"
DEFAULT_HEARTBEAT_PREFIX = "__debezium-heartbeat"
_MAX_TOPIC_LENGTH = 249  # TopicNamingStrategy.MAX_NAME_LENGTH


def _valid_topic_char(c: str) -> bool:
    return c in "._-" or ("A" <= c <= "Z") or ("a" <= c <= "z") or ("0" <= c <= "9")


def _replacement(c: str) -> str:
    """``_`` for each UTF-16 unit of ``c`` (Java ``char``), as Debezium replaces them: two
    for a character outside the Basic Multilingual Plane."""
    return "__" if ord(c) > 0xFFFF else "_"


def _sanitized_topic_name(topic: str) -> str:
    """``AbstractTopicNamingStrategy.sanitizedTopicName``: every UTF-16 unit outside
    ``[a-zA-Z0-9._-]`` becomes ``_`` (so ``😀``, a surrogate pair, becomes ``__``), names are
    cut at 249 characters (of the sanitized name, which is ASCII: 249 UTF-16 units, as Java
    counts), ``.`` and ``..`` become ``_`` and ``__``."""
    if all(map(_valid_topic_char, topic)):
        sanitized = topic
    else:
        sanitized = "".join(c if _valid_topic_char(c) else _replacement(c) for c in topic)
    if len(sanitized) > _MAX_TOPIC_LENGTH:
        return sanitized[:_MAX_TOPIC_LENGTH]
    if sanitized in (".", ".."):
        return "_" * len(sanitized)
    return sanitized


def data_topic(topic_prefix: str, schema: str, table: str, *, delimiter: str = ".") -> str:
    """The topic of a table's change events, ``<prefix>.<schema>.<table>``, as Debezium's
    default ``SchemaTopicNamingStrategy`` names it: blank parts are left out, then
    characters Kafka does not allow become ``_`` and the name is cut at 249 characters. It
    is also the ``name`` of :func:`~.envelope.envelope_schema`."""
    parts = [part for part in (topic_prefix, schema, table) if part and not part.isspace()]
    return _sanitized_topic_name(delimiter.join(parts))


def transaction_topic(topic_prefix: str, config: Mapping[str, str]) -> str:
    """The transaction metadata topic: ``<topic.prefix><topic.delimiter><topic.transaction>``
    (``AbstractTopicNamingStrategy.transactionTopic``), by default ``<prefix>.transaction``;
    an empty setting counts as unset."""
    delimiter = config.get("topic.delimiter") or DEFAULT_DELIMITER
    name = config.get("topic.transaction") or DEFAULT_TRANSACTION_TOPIC
    return f"{topic_prefix}{delimiter}{name}"


def heartbeat_topic(
    topic_prefix: str,
    heartbeat_topics_prefix: str = DEFAULT_HEARTBEAT_PREFIX,
    *,
    delimiter: str = DEFAULT_DELIMITER,
    heartbeat_topic_name: str | None = None,
) -> str:
    """The heartbeat topic (``AbstractTopicNamingStrategy.heartbeatTopic``):
    ``<topic.heartbeat.prefix>.<topic.prefix>``, by default ``__debezium-heartbeat.<prefix>``,
    unless ``topic.heartbeat.name`` (``heartbeat_topic_name``) names it outright."""
    if heartbeat_topic_name:
        return heartbeat_topic_name
    return f"{heartbeat_topics_prefix}{delimiter}{topic_prefix}"
