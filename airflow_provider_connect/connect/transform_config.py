"""The transformation and predicate keys of a connector config (KIP-66, KIP-585), and the
definition Kafka calls *enriched*: the connector's, plus for each alias its ``type``, its
``plugin.version`` (KIP-891) and the keys its plugin defines, under ``transforms.<alias>.``
or ``predicates.<alias>.``.

REST's ``config/validate`` shows these keys with their errors, and a config whose alias has
no ``type``, names a class that is not a plugin of the kind, or refers to an unknown predicate
alias is rejected naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_provider_connect.connect import plugins
from airflow_provider_connect.connect.config import (
    ConfigDef,
    ConfigValue,
    Importance,
    InstalledPlugins,
    LambdaValidator,
    Type,
    Width,
    originals_with_prefix,
    parse_value,
)
from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.connect.plugin_versions import (
    PLUGIN_VERSION_SUFFIX,
    VERSION_SPEC_VALIDATOR,
)
from airflow_provider_connect.connect.transforms import Predicate, Transformation

TRANSFORMS_CONFIG = "transforms"
PREDICATES_CONFIG = "predicates"
TYPE_CONFIG = "type"
PREDICATE_CONFIG = "predicate"
NEGATE_CONFIG = "negate"
TRANSFORMS_GROUP = "Transforms"
PREDICATES_GROUP = "Predicates"


def _unique_aliases(kind: str) -> LambdaValidator:
    def check(name: str, value: Any) -> None:
        if value is not None and len(value) > len(set(value)):
            raise ConfigException.invalid(name, ",".join(value), "Duplicate alias provided.")

    return LambdaValidator(check, f"unique {kind} aliases")


ALIASES_CONFIG_DEF = (
    ConfigDef()
    .define(
        TRANSFORMS_CONFIG,
        Type.LIST,
        [],
        _unique_aliases("transformation"),
        Importance.LOW,
        "Aliases for the transformations to be applied to records.",
        group=TRANSFORMS_GROUP,
        order_in_group=1,
        width=Width.LONG,
        display_name="Transforms",
    )
    .define(
        PREDICATES_CONFIG,
        Type.LIST,
        [],
        _unique_aliases("predicate"),
        Importance.LOW,
        "Aliases for the predicates used by transformations.",
        group=PREDICATES_GROUP,
        order_in_group=1,
        width=Width.LONG,
        display_name="Predicates",
    )
)


def aliases(props: Mapping[str, Any], key: str) -> list[str]:
    """The aliases listed under ``key`` (``transforms`` or ``predicates``), each once, in
    order; none when the list cannot be parsed (validation reports that)."""
    try:
        listed = parse_value(key, props.get(key, ""), Type.LIST)
    except ConfigException:
        return []
    return list(dict.fromkeys(listed))


def enriched(props: Mapping[str, Any]) -> ConfigDef:
    """The keys ``props``'s aliases add to a connector's definition (Kafka's
    ``ConnectorConfig.enrich``): per transformation alias its ``type`` (a
    :class:`Transformation` class), ``predicate``, ``negate`` and its own keys; per predicate
    alias its ``type`` (a :class:`Predicate` class) and its own keys."""
    definition = ConfigDef()
    predicates = aliases(props, PREDICATES_CONFIG)
    for alias in aliases(props, TRANSFORMS_CONFIG):
        prefix = f"{TRANSFORMS_CONFIG}.{alias}."
        own = _plugin_definition(props, prefix, Transformation)
        implicit = (
            ConfigDef()
            .define(
                PREDICATE_CONFIG,
                Type.STRING,
                None,
                LambdaValidator(_known_predicate(predicates), "an alias listed in 'predicates'"),
                Importance.MEDIUM,
                "The alias of a predicate used to determine whether to apply this transformation.",
            )
            .define(
                NEGATE_CONFIG,
                Type.BOOLEAN,
                False,
                importance=Importance.MEDIUM,
                documentation="Whether the configured predicate should be negated.",
            )
        )
        if own is not None:  # the implicit keys mask any of the plugin's with those names
            implicit = implicit.merged(
                ConfigDef(
                    k
                    for k in own.config_keys.values()
                    if k.name not in (PREDICATE_CONFIG, NEGATE_CONFIG)
                )
            )
        _define_alias(definition, prefix, f"{TRANSFORMS_GROUP}: {alias}", Transformation, implicit)
    for alias in predicates:
        prefix = f"{PREDICATES_CONFIG}.{alias}."
        own = _plugin_definition(props, prefix, Predicate) or ConfigDef()
        _define_alias(definition, prefix, f"{PREDICATES_GROUP}: {alias}", Predicate, own)
    return definition


def _define_alias(
    definition: ConfigDef, prefix: str, group: str, base: _Plugin, own: ConfigDef
) -> None:
    definition.define(
        prefix + TYPE_CONFIG,
        Type.CLASS,
        validator=LambdaValidator(_is_a(base), f"a {base.__name__} class"),
        importance=Importance.HIGH,
        documentation=f"Class for the '{prefix.split('.')[1]}' {base.__name__.lower()}.",
        group=group,
        order_in_group=0,
        width=Width.LONG,
        display_name=f"{base.__name__} type for {prefix.split('.')[1]}",
        recommender=InstalledPlugins(
            plugins.TRANSFORMS_GROUP if base is Transformation else plugins.PREDICATES_GROUP, base
        ),
    )
    definition.define(
        prefix + PLUGIN_VERSION_SUFFIX,
        Type.STRING,
        None,
        VERSION_SPEC_VALIDATOR,
        Importance.LOW,
        f"Version of the '{prefix.split('.')[1]}' {base.__name__.lower()}.",
        group=group,
        order_in_group=1,
        width=Width.SHORT,
        display_name=f"{base.__name__} version for {prefix.split('.')[1]}",
    )
    # the version key masks any of the plugin's with that name, as the implicit keys do
    own = ConfigDef(k for k in own.config_keys.values() if k.name != PLUGIN_VERSION_SUFFIX)
    definition.embed(prefix, group, 2, own)


_Plugin = type[Transformation[Any]] | type[Predicate[Any]]


def _plugin_definition(props: Mapping[str, Any], prefix: str, base: _Plugin) -> ConfigDef | None:
    """The ConfigDef of the plugin ``prefix + "type"`` names; None when it names none."""
    try:
        cls = parse_value(prefix + TYPE_CONFIG, props.get(prefix + TYPE_CONFIG), Type.CLASS)
    except ConfigException:
        return None
    if not isinstance(cls, type) or not issubclass(cls, base):
        return None
    definition = cls().config()
    if not isinstance(definition, ConfigDef):
        raise ConfigException(f"{cls.__name__}.config() must return a ConfigDef")
    return definition


def _is_a(base: type) -> Any:
    def check(name: str, value: Any) -> None:
        if value is not None and not (isinstance(value, type) and issubclass(value, base)):
            raise ConfigException.invalid(
                name, getattr(value, "__name__", value), f"Not a {base.__name__}"
            )

    return check


def _known_predicate(predicates: list[str]) -> Any:
    def check(name: str, value: Any) -> None:
        if value is not None and value not in predicates:
            raise ConfigException.invalid(
                name, value, f"No predicate with that alias is listed in '{PREDICATES_CONFIG}'"
            )

    return check


def validate_aliases(props: Mapping[str, Any], results: Mapping[str, ConfigValue]) -> None:
    """Adds what no single key's validator can see: a ``negate`` without a ``predicate``, and
    what each plugin's own ``configure`` refuses (a transformation checks its keys together
    there: a ``static.field`` without a ``static.value``), reported on the key it names."""
    for alias in aliases(props, TRANSFORMS_CONFIG):
        prefix = f"{TRANSFORMS_CONFIG}.{alias}."
        negate = prefix + NEGATE_CONFIG
        if negate in props and prefix + PREDICATE_CONFIG not in props and negate in results:
            results[negate].add_error_message(
                f"Config '{negate}' was provided but there is no config "
                f"'{prefix}{PREDICATE_CONFIG}' defining a predicate to be negated."
            )
        _check_configure(props, prefix, results, (PREDICATE_CONFIG, NEGATE_CONFIG))
    for alias in aliases(props, PREDICATES_CONFIG):
        _check_configure(props, f"{PREDICATES_CONFIG}.{alias}.", results, ())


def _check_configure(
    props: Mapping[str, Any],
    prefix: str,
    results: Mapping[str, ConfigValue],
    implicit: tuple[str, ...],
) -> None:
    """Configures the alias's plugin once, as a task would, when its keys are valid."""
    own = {k: r for k, r in results.items() if k.startswith(prefix)}
    type_result = own.get(prefix + TYPE_CONFIG)
    if type_result is None or any(r.error_messages for r in own.values()):
        return
    configs = {
        k: v
        for k, v in originals_with_prefix(props, prefix).items()
        if k != TYPE_CONFIG and k not in implicit
    }
    try:
        plugin = type_result.value()
        plugin.configure(configs)
        plugin.close()
    except ConfigException as e:
        named = own.get(prefix + e.name) if e.name else None
        (named or type_result).add_error_message(str(e))
    except Exception as e:
        type_result.add_error_message(f"Could not configure {type_result.value.__name__}: {e}")
