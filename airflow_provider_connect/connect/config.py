"""Configuration definitions, as Kafka's ``ConfigDef``.

A :class:`ConfigDef` declares each key's type, default, validator, importance,
documentation and place in a group. It parses string values (as submitted through REST,
properties files or Airflow) into typed ones, and validates a whole configuration into
per-key :class:`ConfigValue` results that :func:`config_infos` renders in Kafka Connect's
REST ``ConfigInfos`` shape.

Password-typed values are wrapped in :class:`Password`, whose ``repr``/``str`` is
``[hidden]``; they are hidden in error messages and validation output too. Keys a
definition does not define but passes through under a prefix (``iceberg.catalog.*``) are
passwords where they match one of its password patterns (:meth:`ConfigDef.define_password_pattern`).
"""

from __future__ import annotations

import functools
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.connect.plugins import class_name, load_class, plugin_classes

HIDDEN = "[hidden]"


class Password:
    """A secret config value. Its ``repr`` and ``str`` are ``[hidden]``; read ``value``."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return HIDDEN

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Password) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)


class Type(Enum):
    """Config value types, as Kafka's ``ConfigDef.Type``."""

    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    INT = "INT"
    SHORT = "SHORT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"
    CLASS = "CLASS"
    PASSWORD = "PASSWORD"


class Importance(Enum):
    HIGH = "HIGH"
    MEDIUM = "MEDIUM"
    LOW = "LOW"


class Width(Enum):
    """How wide a UI should render the value."""

    NONE = "NONE"
    SHORT = "SHORT"
    MEDIUM = "MEDIUM"
    LONG = "LONG"


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()
"""The default of a required key."""

_COMMA = re.compile(r"\s*,\s*")


def parse_value(name: str, value: Any, type_: Type) -> Any:
    """``value`` (a string or an already typed value) as ``type_``.

    Raises :class:`ConfigException` naming ``name``, in Kafka's words.
    """
    if value is None:
        return None
    return _PARSERS[type_](name, value)


# One parser per type: ``(name, value)`` to the typed value, ``value`` not None. Strings are
# trimmed; errors show ``value`` as given (a password hidden).
_Parser = Callable[[str, Any], Any]


def _parse_boolean(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().lower()
        if word in ("true", "false"):
            return word == "true"
    raise ConfigException.invalid(name, value, "Expected value to be either true or false")


def _parse_password(name: str, value: Any) -> Password:
    if isinstance(value, Password):
        return value
    if isinstance(value, str):
        return Password(value)
    raise ConfigException.invalid(
        name, HIDDEN, f"Expected value to be a string, but it was a {type(value).__name__}"
    )


def _parse_string(name: str, value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    raise ConfigException.invalid(
        name, value, f"Expected value to be a string, but it was a {type(value).__name__}"
    )


def _integer_parser(type_: Type, bits: int) -> _Parser:
    """The parser of a ``bits``-bit integer type (SHORT, INT, LONG)."""
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1)
    not_a_number = f"Not a number of type {type_.value}"

    def parse(name: str, value: Any) -> int:
        if isinstance(value, str):
            try:
                number = int(value.strip())
            except ValueError:
                raise ConfigException.invalid(name, value, not_a_number) from None
        elif isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            raise ConfigException.invalid(
                name,
                value,
                f"Expected value to be a {bits}-bit integer, but it was a {type(value).__name__}",
            )
        if not low <= number < high:
            raise ConfigException.invalid(name, value, not_a_number)
        return number

    return parse


def _parse_double(name: str, value: Any) -> float:
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            raise ConfigException.invalid(name, value, "Not a number of type DOUBLE") from None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise ConfigException.invalid(
        name, value, f"Expected value to be a double, but it was a {type(value).__name__}"
    )


def _parse_list(name: str, value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, str):
        trimmed = value.strip()
        return _COMMA.split(trimmed) if trimmed else []
    raise ConfigException.invalid(name, value, "Expected a comma separated list.")


def _parse_class(name: str, value: Any) -> type:
    if isinstance(value, type):
        return value
    if isinstance(value, str):
        trimmed = value.strip()
        try:
            return load_class(trimmed)
        except ImportError:
            raise ConfigException.invalid(
                name, value, f"Class {trimmed} could not be found."
            ) from None
    raise ConfigException.invalid(name, value, "Expected a Class instance or class name.")


_PARSERS: dict[Type, _Parser] = {
    Type.BOOLEAN: _parse_boolean,
    Type.STRING: _parse_string,
    Type.SHORT: _integer_parser(Type.SHORT, 16),
    Type.INT: _integer_parser(Type.INT, 32),
    Type.LONG: _integer_parser(Type.LONG, 64),
    Type.DOUBLE: _parse_double,
    Type.LIST: _parse_list,
    Type.CLASS: _parse_class,
    Type.PASSWORD: _parse_password,
}


def format_value(value: Any, type_: Type | None) -> str | None:
    """A parsed value as text, as Kafka's ``ConfigDef.convertToString``; passwords are hidden."""
    if value is None:
        return None
    if type_ is Type.PASSWORD or isinstance(value, Password):
        return HIDDEN
    if isinstance(value, bool):
        return "true" if value else "false"
    if type_ is Type.LIST or isinstance(value, (list, tuple)):
        return ",".join(str(format_value(v, None)) for v in value)
    if type_ is Type.CLASS or isinstance(value, type):
        return class_name(value) if isinstance(value, type) else str(value)
    return str(value)


# -- validators ------------------------------------------------------------------------------
class Validator(ABC):
    """Checks a parsed value; ``str()`` describes the valid values for documentation."""

    @abstractmethod
    def ensure_valid(self, name: str, value: Any) -> None:
        """Raises :class:`ConfigException` naming ``name`` when ``value`` is not valid."""


class Range(Validator):
    """A number within [min, max]; either bound may be None."""

    def __init__(self, min: float | None = None, max: float | None = None) -> None:
        self.min = min
        self.max = max

    @classmethod
    def at_least(cls, min: float) -> Range:
        return cls(min=min)

    @classmethod
    def between(cls, min: float, max: float) -> Range:
        return cls(min=min, max=max)

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigException.invalid(name, None, "Value must be non-null")
        if self.min is not None and value < self.min:
            raise ConfigException.invalid(name, value, f"Value must be at least {self.min}")
        if self.max is not None and value > self.max:
            raise ConfigException.invalid(name, value, f"Value must be no more than {self.max}")

    def __str__(self) -> str:
        low = "" if self.min is None else f"{self.min},"
        high = "" if self.max is None else f",{self.max}"
        return f"[{low}...{high}]"


class ValidString(Validator):
    """One of the given strings (optionally ignoring case)."""

    def __init__(self, *valid: str, case_sensitive: bool = True) -> None:
        self.valid = list(valid)
        self.case_sensitive = case_sensitive

    def _matches(self, value: str) -> bool:
        if self.case_sensitive:
            return value in self.valid
        return value.upper() in (v.upper() for v in self.valid)

    def ensure_valid(self, name: str, value: Any) -> None:
        if not isinstance(value, str) or not self._matches(value):
            how = "" if self.case_sensitive else " (case insensitive)"
            raise ConfigException.invalid(
                name, value, f"String must be one of{how}: {', '.join(self.valid)}"
            )

    def __str__(self) -> str:
        return "[" + ", ".join(self.valid) + "]"


class ValidList(Validator):
    """A list whose items are each one of the given strings."""

    def __init__(self, *valid: str) -> None:
        self.valid = list(valid)

    def ensure_valid(self, name: str, value: Any) -> None:
        for item in value or ():
            if item not in self.valid:
                raise ConfigException.invalid(
                    name,
                    item,
                    f"Invalid value {item}; list values must be one of: {', '.join(self.valid)}",
                )

    def __str__(self) -> str:
        return "[" + ", ".join(self.valid) + "]"


class NonEmptyString(Validator):
    """A string with at least one non-blank character."""

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None or (isinstance(value, str) and not value.strip()):
            raise ConfigException.invalid(name, value, "String must be non-empty")

    def __str__(self) -> str:
        return "non-empty string"


class NonEmptyStringWithoutControlChars(NonEmptyString):
    """A non-empty string without ISO control characters (connector names)."""

    def ensure_valid(self, name: str, value: Any) -> None:
        super().ensure_valid(name, value)
        if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in value):
            raise ConfigException.invalid(
                name, value, "String may not contain control sequences but had 1 or more"
            )

    def __str__(self) -> str:
        return "non-empty string without ISO control characters"


class KafkaTopicName(Validator):
    """A name Kafka accepts for a topic (Kafka's ``Topic.validate``): ASCII letters, digits,
    ``.``, ``_`` and ``-``, at most 249 characters, not ``.`` or ``..``. None passes (the key
    is optional), and so does "" where ``blank_ok`` (blank means none, as for a DLQ)."""

    MAX_LENGTH = 249
    LEGAL = re.compile(r"[a-zA-Z0-9._-]+")

    def __init__(self, blank_ok: bool = False) -> None:
        self.blank_ok = blank_ok

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None or (self.blank_ok and value == ""):
            return
        if not value:
            raise ConfigException.invalid(name, value, "Topic name is illegal, it can't be empty")
        if value in (".", ".."):
            raise ConfigException.invalid(name, value, 'Topic name cannot be "." or ".."')
        if len(value) > self.MAX_LENGTH:
            raise ConfigException.invalid(
                name,
                f"{value[:40]}…",
                f"Topic name is illegal, it can't be longer than {self.MAX_LENGTH} characters",
            )
        if not self.LEGAL.fullmatch(value):
            raise ConfigException.invalid(
                name,
                value,
                "Topic name is illegal, it contains a character other than ASCII "
                "alphanumerics, '.', '_' and '-'",
            )

    def __str__(self) -> str:
        return f"a Kafka topic name (ASCII alphanumerics, '.', '_', '-'; at most {self.MAX_LENGTH})"


class ValidRegex(Validator):
    """A regular expression Python's ``re`` compiles; None and "" pass (the key is unset)."""

    def ensure_valid(self, name: str, value: Any) -> None:
        if value:
            try:
                re.compile(value)
            except re.error as e:
                raise ConfigException.invalid(
                    name, value, f"Not a valid regular expression: {e}"
                ) from None

    def __str__(self) -> str:
        return "valid regex"


class LambdaValidator(Validator):
    """A custom check: ``check(name, value)`` raises ConfigException; ``description`` documents it."""

    def __init__(self, check: Callable[[str, Any], None], description: str) -> None:
        self.check = check
        self.description = description

    def ensure_valid(self, name: str, value: Any) -> None:
        self.check(name, value)

    def __str__(self) -> str:
        return self.description


class CompositeValidator(Validator):
    """All of the given validators, in order."""

    def __init__(self, *validators: Validator) -> None:
        self.validators = validators

    def ensure_valid(self, name: str, value: Any) -> None:
        for validator in self.validators:
            validator.ensure_valid(name, value)

    def __str__(self) -> str:
        return ", ".join(str(v) for v in self.validators)


class Recommender(ABC):
    """Suggests values for a key, and whether it applies, given the other parsed values."""

    @abstractmethod
    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]: ...

    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool:
        return True


class InstalledPlugins(Recommender):
    """Kafka's plugin recommenders (``ConverterPluginRecommender``, the transformation and
    predicate aliases' ``ClassRecommender``): the installed plugins of the registry group
    ``group`` that implement ``base`` (a class, or its dotted path), by class name; the
    config/validate answer names each as :func:`format_value` does, by the name it is
    known by. Found once per process, as Kafka scans its plugins once."""

    def __init__(self, group: str, base: type | str) -> None:
        self.group = group
        self.base = base

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]:
        return list(_installed_plugins(self.group, self.base))


@functools.cache
def _installed_plugins(group: str, base: type | str) -> tuple[type, ...]:
    cls = load_class(base) if isinstance(base, str) else base
    return tuple(c for c in plugin_classes(group) if issubclass(c, cls))


# -- definitions -----------------------------------------------------------------------------
@dataclass
class ConfigKey:
    """One key's definition."""

    name: str
    type: Type
    default: Any = NO_DEFAULT
    validator: Validator | None = None
    importance: Importance = Importance.MEDIUM
    documentation: str = ""
    group: str | None = None
    order_in_group: int = -1
    width: Width = Width.NONE
    display_name: str = ""
    dependents: list[str] = field(default_factory=list)
    recommender: Recommender | None = None

    @property
    def required(self) -> bool:
        return self.default is NO_DEFAULT


@dataclass
class ConfigValue:
    """The validation result of one key: its parsed value, errors and recommendations."""

    name: str
    value: Any = None
    recommended_values: list[Any] = field(default_factory=list)
    error_messages: list[str] = field(default_factory=list)
    visible: bool = True

    def add_error_message(self, message: str) -> None:
        self.error_messages.append(message)


@dataclass
class Config:
    """The validation results of a whole configuration, as returned by ``Connector.validate``."""

    config_values: list[ConfigValue]

    @property
    def error_count(self) -> int:
        return sum(len(v.error_messages) for v in self.config_values)


class ConfigDef:
    """The definition of a configuration: an ordered set of :class:`ConfigKey`."""

    NO_DEFAULT = NO_DEFAULT

    def __init__(
        self, keys: Iterable[ConfigKey] = (), password_patterns: Iterable[re.Pattern[str]] = ()
    ) -> None:
        self.config_keys: dict[str, ConfigKey] = {}
        self.password_patterns = list(password_patterns)
        for key in keys:
            self._add(key)

    def _add(self, key: ConfigKey) -> None:
        if key.name in self.config_keys:
            raise ConfigException(f"Configuration {key.name} is defined twice.", name=key.name)
        if key.default is not NO_DEFAULT and key.default is not None:
            key.default = parse_value(key.name, key.default, key.type)
            if key.validator is not None:
                key.validator.ensure_valid(key.name, key.default)
        self.config_keys[key.name] = key

    def define(
        self,
        name: str,
        type: Type,
        default: Any = NO_DEFAULT,
        validator: Validator | None = None,
        importance: Importance = Importance.MEDIUM,
        documentation: str = "",
        *,
        group: str | None = None,
        order_in_group: int = -1,
        width: Width = Width.NONE,
        display_name: str | None = None,
        dependents: Iterable[str] = (),
        recommender: Recommender | None = None,
    ) -> ConfigDef:
        """Adds a key; returns self so definitions chain. A default is parsed and validated now."""
        self._add(
            ConfigKey(
                name,
                type,
                default,
                validator,
                importance,
                documentation,
                group,
                order_in_group,
                width,
                display_name or name,
                list(dependents),
                recommender,
            )
        )
        return self

    def define_password_pattern(self, pattern: str) -> ConfigDef:
        """Makes every key this definition does not define whose whole name matches
        ``pattern`` (a regular expression, case-insensitive) a password: the prefix-keyed
        configs a connector passes through (``iceberg.catalog.s3.secret-access-key``) are
        then masked wherever password-typed keys are. Returns self."""
        self.password_patterns.append(re.compile(pattern, re.IGNORECASE))
        return self

    def is_password(self, name: str) -> bool:
        """Whether ``name`` is typed PASSWORD here, or is undefined and matches a password
        pattern."""
        key = self.config_keys.get(name)
        if key is not None:
            return key.type is Type.PASSWORD
        return any(p.fullmatch(name) for p in self.password_patterns)

    def merged(self, other: ConfigDef) -> ConfigDef:
        """A new definition with this one's keys, then ``other``'s (and both's password
        patterns)."""
        return ConfigDef(
            [*self.config_keys.values(), *other.config_keys.values()],
            [*self.password_patterns, *other.password_patterns],
        )

    def embed(self, prefix: str, group: str, start_order: int, child: ConfigDef) -> ConfigDef:
        """Adds every key of ``child`` as ``prefix`` + its name, in ``group`` from
        ``start_order`` on (Kafka's ``ConfigDef.embed``, as a connector's definition takes in
        each transformation's keys); returns self."""
        for order, key in enumerate(child.config_keys.values(), start=start_order):
            self._add(
                replace(
                    key,
                    name=prefix + key.name,
                    group=group,
                    order_in_group=order,
                    display_name=key.display_name or key.name,
                    dependents=[prefix + d for d in key.dependents],
                )
            )
        self.password_patterns += [
            re.compile(re.escape(prefix) + p.pattern, p.flags) for p in child.password_patterns
        ]
        return self

    def names(self) -> list[str]:
        return list(self.config_keys)

    def groups(self) -> list[str]:
        """The groups in order of first appearance."""
        return list(dict.fromkeys(k.group for k in self.config_keys.values() if k.group))

    def parse(self, props: Mapping[str, Any]) -> dict[str, Any]:
        """Typed values of every defined key (defaults filled in).

        Raises :class:`ConfigException` naming the first missing or invalid key.
        """
        parsed: dict[str, Any] = {}
        for key in self.config_keys.values():
            value = _value_of(key, props)
            if key.validator is not None:
                key.validator.ensure_valid(key.name, value)
            parsed[key.name] = value
        return parsed

    def validate(self, props: Mapping[str, Any]) -> list[ConfigValue]:
        """One :class:`ConfigValue` per defined key, with every error found (never raises)."""
        return list(self.validate_all(props).values())

    def validate_all(self, props: Mapping[str, Any]) -> dict[str, ConfigValue]:
        """As :meth:`validate`, keyed by name."""
        results = {name: ConfigValue(name) for name in self.config_keys}
        parsed: dict[str, Any] = {}
        for key in self.config_keys.values():
            result = results[key.name]
            try:
                value = _value_of(key, props)
            except ConfigException as e:
                result.add_error_message(str(e))
                value = None
            else:  # a value its validator rejects is still reported, with the error
                try:
                    if key.validator is not None:
                        key.validator.ensure_valid(key.name, value)
                except ConfigException as e:
                    result.add_error_message(str(e))
            result.value = value
            parsed[key.name] = value
        for key in self.config_keys.values():
            if key.recommender is not None:
                result = results[key.name]
                try:
                    result.recommended_values = list(key.recommender.valid_values(key.name, parsed))
                    result.visible = key.recommender.visible(key.name, parsed)
                except ConfigException as e:
                    result.add_error_message(str(e))
        return results

    def masked(self, props: Mapping[str, Any]) -> dict[str, Any]:
        """``props`` with every password value (:meth:`is_password`) replaced by
        ``[hidden]``: the form to log, show in status or push to XCom."""
        return {
            k: HIDDEN if isinstance(v, Password) or self.is_password(k) else v
            for k, v in props.items()
        }


def _value_of(key: ConfigKey, props: Mapping[str, Any]) -> Any:
    """The key's typed value in ``props``, else its default; raises when it is required."""
    if key.name in props:
        return parse_value(key.name, props[key.name], key.type)
    if key.required:
        raise ConfigException(
            f'Missing required configuration "{key.name}" which has no default value.',
            name=key.name,
        )
    return key.default


def config_infos(name: str, definition: ConfigDef, values: Iterable[ConfigValue]) -> dict[str, Any]:
    """Validation results in Kafka Connect's REST ``ConfigInfos`` JSON shape::

        {"name": ..., "error_count": N, "groups": [...],
         "configs": [{"definition": {...}, "value": {"name", "value",
                      "recommended_values", "errors", "visible"}}]}

    Values of keys that ``definition`` does not know are listed with a null definition type.
    Passwords (those keys' too, by the definition's password patterns) are rendered
    ``[hidden]``.
    """
    configs = []
    error_count = 0
    for value in values:
        key = definition.config_keys.get(value.name)
        type_ = key.type if key else Type.PASSWORD if definition.is_password(value.name) else None
        error_count += len(value.error_messages)
        configs.append(
            {
                "definition": _key_info(key) if key else None,
                "value": {
                    "name": value.name,
                    "value": format_value(value.value, type_),
                    "recommended_values": [
                        format_value(v, Type.STRING if type_ is Type.LIST else type_)
                        for v in value.recommended_values
                    ],
                    "errors": list(value.error_messages),
                    "visible": value.visible,
                },
            }
        )
    return {
        "name": name,
        "error_count": error_count,
        "groups": definition.groups(),
        "configs": configs,
    }


def _key_info(key: ConfigKey) -> dict[str, Any]:
    return {
        "name": key.name,
        "type": key.type.value,
        "required": key.required,
        "default_value": None if key.required else format_value(key.default, key.type),
        "importance": key.importance.value,
        "documentation": key.documentation,
        "group": key.group,
        "order": key.order_in_group,
        "width": key.width.value,
        "display_name": key.display_name,
        "dependents": list(key.dependents),
    }


def originals_with_prefix(props: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """The entries of ``props`` whose keys start with ``prefix``, with the prefix stripped:
    how ``key.converter.schemas.enable`` reaches the key converter as ``schemas.enable``."""
    return {
        k[len(prefix) :]: v
        for k, v in props.items()
        if k.startswith(prefix) and len(k) > len(prefix)
    }
