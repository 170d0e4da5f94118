"""A task's transformation chain: the connector's ``transforms``, each applied when its
predicate (if any) says so, in order, under the connector's error handling.

Built once per task run from the connector config: every transformation and predicate is
instantiated and configured once (a ``Monitorable`` one then gets its metrics, KIP-877), and
closed once when the run ends (:meth:`close`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar, cast

from airflow_provider_connect.connect.config import Type as ConfigType
from airflow_provider_connect.connect.config import originals_with_prefix, parse_value
from airflow_provider_connect.connect.connector import ConnectRecord
from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connect.metrics import Monitorable, PluginMetrics
from airflow_provider_connect.connect.plugins import load_class
from airflow_provider_connect.connect.transform_config import (
    NEGATE_CONFIG,
    PREDICATE_CONFIG,
    PREDICATES_CONFIG,
    TRANSFORMS_CONFIG,
    TYPE_CONFIG,
    aliases,
)
from airflow_provider_connect.connect.transforms import Predicate, Transformation
from airflow_provider_connect.runtime.executor.task_metrics import PluginMetricsFactory

R = TypeVar("R", bound=ConnectRecord)
Origin = TypeVar("Origin")


@dataclass(frozen=True)
class TransformationStage(Generic[R]):
    """One transformation, applied to the records its predicate matches (all without one;
    with ``negate``, those it does not match)."""

    transformation: Transformation[R]
    predicate: Predicate[R] | None = None
    negate: bool = False

    def apply(self, record: R) -> R | None:
        if self.predicate is not None and self.predicate.test(record) == self.negate:
            return record
        return self.transformation.apply(record)

    def close(self) -> None:
        self.transformation.close()
        if self.predicate is not None:
            self.predicate.close()


class TransformationChain(Generic[R]):
    """The stages of a task, in the order of ``transforms``."""

    def __init__(self, stages: list[TransformationStage[R]]) -> None:
        self.stages = stages
        # Each stage with what applies it: the transformation's own ``apply`` when there is
        # no predicate (one call a record less).
        self.steps = [
            (stage, stage.transformation.apply if stage.predicate is None else stage.apply)
            for stage in stages
        ]

    def apply(
        self,
        record: R,
        on_error: Callable[[TransformationStage[R], R, Any], R | None],
        origin: Any,
    ) -> R | None:
        """The record through every stage; None once a stage drops it. A stage that raises
        is run again as ``on_error(stage, record, origin)`` (the error handler: retries,
        tolerance; ``origin`` is what the loop reports the failure against), whose answer
        stands for the stage's."""
        current: R | None = record
        for stage, step in self.steps:
            if current is None:
                break
            given = current
            try:
                current = step(given)
            except Exception:
                current = on_error(stage, given, origin)
        return current

    def apply_all(
        self,
        records: list[R],
        on_error: Callable[[TransformationStage[R], R, Any], R | None],
        origins: Sequence[Origin],
    ) -> tuple[list[R], Sequence[Origin], list[Origin]]:
        """Each of ``records`` through every stage, as :meth:`apply` with ``origins[i]`` for
        ``records[i]``; returns the records kept, the origin of each, and the origins of the
        records dropped. The stages run one at a time over the whole list (one pass a stage,
        not a loop over the stages a record). If a stage raises, the passes are abandoned and
        every record goes again through :meth:`apply`, one at a time, so the error handler
        sees each failure as it would there: transformations are pure functions of the
        record, so running them again is safe."""
        current: Sequence[R | None] = records
        try:
            for _, step in self.steps:
                current = [None if record is None else step(record) for record in current]
        except Exception:
            current = [
                self.apply(record, on_error, origin)
                for record, origin in zip(records, origins, strict=True)
            ]
        if not any(record is None for record in current):
            return cast("list[R]", current), origins, []
        kept: list[R] = []
        kept_origins: list[Origin] = []
        dropped: list[Origin] = []
        for record, origin in zip(current, origins, strict=True):
            if record is None:
                dropped.append(origin)
            else:
                kept.append(record)
                kept_origins.append(origin)
        return kept, kept_origins, dropped

    def close(self) -> None:
        """Closes every transformation and predicate once; the first failure is raised after
        all were closed."""
        failure: Exception | None = None
        for stage in self.stages:
            try:
                stage.close()
            except Exception as e:
                failure = failure or e
        if failure is not None:
            raise failure


def transformation_chain(
    config: Mapping[str, str], metrics: PluginMetricsFactory | None = None
) -> TransformationChain[Any]:
    """The chain ``config`` defines (already validated); raises ConnectException naming the
    alias whose plugin cannot be made. With ``metrics``, each ``Monitorable`` plugin gets its
    own once configured (tagged ``transformation=<alias>`` or ``predicate=<alias>``)."""
    predicates: dict[str, Predicate[Any]] = {}
    for alias in aliases(config, PREDICATES_CONFIG):
        prefix = f"{PREDICATES_CONFIG}.{alias}."
        plugin_metrics = None if metrics is None else partial(metrics, predicate=alias)
        predicates[alias] = _configured(config, prefix, Predicate, plugin_metrics)
    stages: list[TransformationStage[Any]] = []
    for alias in aliases(config, TRANSFORMS_CONFIG):
        prefix = f"{TRANSFORMS_CONFIG}.{alias}."
        plugin_metrics = None if metrics is None else partial(metrics, transformation=alias)
        transformation = _configured(
            config,
            prefix,
            Transformation,
            plugin_metrics,
            exclude=(PREDICATE_CONFIG, NEGATE_CONFIG),
        )
        predicate_alias = config.get(prefix + PREDICATE_CONFIG)
        negate = parse_value(
            prefix + NEGATE_CONFIG, config.get(prefix + NEGATE_CONFIG, "false"), ConfigType.BOOLEAN
        )
        stages.append(
            TransformationStage(
                transformation, predicates[predicate_alias] if predicate_alias else None, negate
            )
        )
    return TransformationChain(stages)


def _configured(
    config: Mapping[str, str],
    prefix: str,
    base: type,
    metrics: Callable[[], PluginMetrics] | None,
    exclude: tuple[str, ...] = (),
) -> Any:
    """The plugin ``prefix + "type"`` names (a ``base``), configured with its keys, then, when
    it is ``Monitorable`` and ``metrics`` is given, with the metrics ``metrics`` makes."""
    try:
        cls = load_class(config[prefix + TYPE_CONFIG])
        if not issubclass(cls, base):
            raise TypeError(f"{cls.__name__} is not a {base.__name__}")
        plugin: Any = cls()
        plugin.configure(
            {
                k: v
                for k, v in originals_with_prefix(config, prefix).items()
                if k != TYPE_CONFIG and k not in exclude
            }
        )
        if metrics is not None and isinstance(plugin, Monitorable):
            plugin.with_plugin_metrics(metrics())
    except Exception as e:
        raise ConnectException(f"Could not make the {prefix}{TYPE_CONFIG} plugin: {e}") from e
    return plugin
