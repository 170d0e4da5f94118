"""Metrics that plugins register themselves (KIP-877), as ``org.apache.kafka.common.metrics``'s
``PluginMetrics``, ``Monitorable``, ``Sensor`` and stats.

Connectors and tasks get their :class:`PluginMetrics` from their context
(``self.context.plugin_metrics()``); converters, header converters, transformations and
predicates that are :class:`Monitorable` get theirs through :meth:`Monitorable.with_plugin_metrics`.
Every metric is in the group ``plugins`` and carries the tags that tell its plugin apart, then
its own:

* a connector: ``connector``
* a task: ``connector``, ``task``
* a task's converter: ``connector``, ``task``, ``converter`` (``key``, ``value`` or ``header``)
* a task's transformation: ``connector``, ``task``, ``transformation`` (its alias)
* a task's predicate: ``connector``, ``task``, ``predicate`` (its alias)

The runtime exports them at ``/metrics`` as ``kafka_connect_plugins_<name>`` with the tags as
labels, and removes them when their plugin's run ends (the task run, the connector instance).

Values are read when the runtime samples them (a task run's at each heartbeat and once more
at its end, a connector's at each scrape of ``/metrics``), never on the record path: a gauge's
callable runs on another thread than the plugin's, and should be cheap and never block.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

log = logging.getLogger(__name__)

GROUP = "plugins"
"""The metric group of every plugin metric."""

DEFAULT_WINDOW_S = 30.0
DEFAULT_SAMPLES = 2
"""Kafka's defaults (``metrics.sample.window.ms``, ``metrics.num.samples``): the windowed
stats see the last one to two windows of 30 s."""


@dataclass(frozen=True)
class MetricName:
    """A metric's identity, as Kafka's ``MetricName``: ``name``, ``group`` and ``tags``
    (compared as a mapping); the ``description`` goes along but is not part of it. Made by
    :meth:`PluginMetrics.metric_name`."""

    name: str
    group: str
    description: str = field(default="", compare=False)
    tags: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:  # a read-only copy: the name is a dict key
        object.__setattr__(self, "tags", MappingProxyType(dict(self.tags)))

    def __hash__(self) -> int:
        return hash((self.name, self.group, frozenset(self.tags.items())))

    def __repr__(self) -> str:
        return f"MetricName(name={self.name!r}, group={self.group!r}, tags={dict(self.tags)!r})"

    def encode(self) -> str:
        """A text form that :meth:`decode` turns back into this name, description included,
        for carrying names between processes (a task run's metrics reach ``/metrics``
        through the metadata database this way). It starts with ``[``."""
        return json.dumps(
            [self.group, self.name, self.description, dict(self.tags)], separators=(",", ":")
        )

    @classmethod
    def decode(cls, text: str) -> MetricName | None:
        """The name ``text`` is the :meth:`encode` form of; None when it is not one (so the
        keys of a dict that holds other keys too can be told apart)."""
        if not text.startswith("["):
            return None
        try:
            group, name, description, tags = json.loads(text)
            return cls(name, group, description, tags)
        except (ValueError, TypeError):
            return None


@runtime_checkable
class Measurable(Protocol):
    """A metric value computed when it is read, as Kafka's ``Measurable``."""

    def measure(self, now: float) -> float:
        """The value at ``now`` (seconds of ``time.monotonic``)."""
        ...


MetricValue = Callable[[], float] | Measurable
"""What :meth:`PluginMetrics.add_metric` takes: a gauge (a callable returning the value now)
or a :class:`Measurable`."""


class Stat(ABC):
    """What a :class:`Sensor` records values into and a metric reads (Kafka's
    ``MeasurableStat``). A sensor calls both under its lock: implementations need none."""

    @abstractmethod
    def record(self, value: float, now: float) -> None:
        """Takes one recorded ``value`` at ``now`` (seconds of ``time.monotonic``)."""

    @abstractmethod
    def measure(self, now: float) -> float:
        """The value at ``now``; NaN when there is none yet (an average of nothing)."""


class CumulativeCount(Stat):
    """How many values were recorded, ever (Kafka's ``CumulativeCount``)."""

    def __init__(self) -> None:
        self.count = 0

    def record(self, value: float, now: float) -> None:
        self.count += 1

    def measure(self, now: float) -> float:
        return float(self.count)


class CumulativeSum(Stat):
    """The sum of every value recorded, ever (Kafka's ``CumulativeSum``)."""

    def __init__(self) -> None:
        self.total = 0.0

    def record(self, value: float, now: float) -> None:
        self.total += value

    def measure(self, now: float) -> float:
        return self.total


class _Sample:
    __slots__ = ("count", "start", "value")

    def __init__(self, start: float, value: float) -> None:
        self.start, self.value, self.count = start, value, 0


class _SampledStat(Stat):
    """A stat over the last ``samples`` windows of ``window_s`` seconds (Kafka's
    ``SampledStat``): a window begins with the first value recorded after the previous one
    ended, and windows older than ``samples * window_s`` no longer count."""

    initial = 0.0

    def __init__(self, window_s: float = DEFAULT_WINDOW_S, samples: int = DEFAULT_SAMPLES) -> None:
        if window_s <= 0 or samples < 1:
            raise ValueError("a stat needs a positive window and at least one sample")
        self.window_s = window_s
        self.size = samples
        self.samples: list[_Sample] = []
        self.current = 0

    def record(self, value: float, now: float) -> None:
        if not self.samples:
            self.samples.append(_Sample(now, self.initial))
        sample = self.samples[self.current]
        if now - sample.start >= self.window_s:
            self.current = (self.current + 1) % self.size
            if self.current == len(self.samples):
                self.samples.append(_Sample(now, self.initial))
            sample = self.samples[self.current]
            sample.start, sample.value, sample.count = now, self.initial, 0
        sample.value = self._update(sample.value, value)
        sample.count += 1

    def measure(self, now: float) -> float:
        for sample in self.samples:  # Kafka's purge: an expired window counts for nothing
            if now - sample.start >= self.size * self.window_s:
                sample.start, sample.value, sample.count = now, self.initial, 0
        return self._combine([s for s in self.samples if s.count], now)

    @abstractmethod
    def _update(self, current: float, value: float) -> float: ...

    @abstractmethod
    def _combine(self, samples: list[_Sample], now: float) -> float: ...


class Avg(_SampledStat):
    """The average of the values recorded in the last windows (Kafka's ``Avg``)."""

    def _update(self, current: float, value: float) -> float:
        return current + value

    def _combine(self, samples: list[_Sample], now: float) -> float:
        count = sum(s.count for s in samples)
        return sum(s.value for s in samples) / count if count else math.nan


class Max(_SampledStat):
    """The largest value recorded in the last windows (Kafka's ``Max``)."""

    initial = -math.inf

    def _update(self, current: float, value: float) -> float:
        return max(current, value)

    def _combine(self, samples: list[_Sample], now: float) -> float:
        return max((s.value for s in samples), default=math.nan)


class Rate(_SampledStat):
    """The sum of the values recorded per second over the last windows (Kafka's ``Rate``):
    with ``sensor.record()`` (a value of 1), events per second. The time it divides by is at
    least ``samples - 1`` whole windows, as in Kafka, so a fresh rate does not spike."""

    def _update(self, current: float, value: float) -> float:
        return current + value

    def _combine(self, samples: list[_Sample], now: float) -> float:
        oldest = min((s.start for s in self.samples), default=now)
        elapsed = now - oldest
        whole = int(elapsed // self.window_s)
        if whole < self.size - 1:
            elapsed += (self.size - 1 - whole) * self.window_s
        return sum(s.value for s in samples) / max(elapsed, 0.001)


Reader = Callable[[float], float]


class Sensor:
    """Records values into the stats added to it, each read as a metric (Kafka's
    ``Sensor``); made by :meth:`PluginMetrics.add_sensor`. Any thread may record."""

    def __init__(
        self, name: str, register: Callable[[MetricName, Reader], None], clock: Callable[[], float]
    ) -> None:
        self.name = name
        self._register = register
        self._clock = clock
        self._lock = threading.Lock()
        self._stats: list[Stat] = []
        self.metric_names: list[MetricName] = []
        """The metrics of this sensor's stats, removed with it."""

    def add(self, metric_name: MetricName, stat: Stat) -> None:
        """Registers ``stat`` as the metric ``metric_name`` and records into it from now on;
        ValueError when the plugin has a metric of that name already."""
        self._register(metric_name, lambda now: self._measure(stat, now))
        with self._lock:
            self._stats.append(stat)
            self.metric_names.append(metric_name)

    def record(self, value: float = 1.0) -> None:
        """Records ``value`` (1 by default: an event) into every stat of the sensor."""
        now = self._clock()
        with self._lock:
            for stat in self._stats:
                stat.record(value, now)

    def _measure(self, stat: Stat, now: float) -> float:
        with self._lock:
            return stat.measure(now)


class PluginMetrics(ABC):
    """Registers a plugin's metrics (Kafka's ``PluginMetrics``). Safe to use from any
    thread. Every method raises RuntimeError once the plugin's run has ended and its
    metrics were removed."""

    @abstractmethod
    def metric_name(
        self, name: str, description: str, tags: Mapping[str, str] | None = None
    ) -> MetricName:
        """The name of a metric of this plugin: group ``plugins``, the tags that tell the
        plugin apart, then ``tags``. ValueError when one of ``tags`` is one of the plugin's
        own (``connector``, ``task``, …)."""

    @abstractmethod
    def add_metric(self, metric_name: MetricName, value: MetricValue) -> None:
        """Adds a metric read from ``value``: a callable returning the value now (a gauge), or
        a :class:`Measurable`; TypeError for anything else. ValueError when the plugin has a
        metric of that name. A read that raises or gives no finite number leaves the metric
        out of that sample."""

    @abstractmethod
    def remove_metric(self, metric_name: MetricName) -> None:
        """Removes a metric added with :meth:`add_metric`; ValueError when there is none."""

    @abstractmethod
    def add_sensor(self, name: str) -> Sensor:
        """A new sensor, its name unique within this plugin (other plugins may use it);
        ValueError when the plugin has one of that name."""

    @abstractmethod
    def remove_sensor(self, name: str) -> None:
        """Removes a sensor and the metrics of its stats; ValueError when there is none."""


class SimplePluginMetrics(PluginMetrics):
    """The :class:`PluginMetrics` the runtime gives each plugin, and the test harness too:
    the metrics of one plugin, their names tagged with ``tags`` (the plugin's own) first.

    The runtime reads :meth:`values` to export them and calls :meth:`close` when the
    plugin's run ends. ``clock`` (seconds) times sensors' records and reads."""

    def __init__(
        self, tags: Mapping[str, str] | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.tags: Mapping[str, str] = MappingProxyType(dict(tags or {}))
        self._clock = clock
        self._lock = threading.Lock()
        self._readers: dict[MetricName, Reader] = {}  # every metric, the sensors' included
        self._added: set[MetricName] = set()  # those of add_metric
        self._sensors: dict[str, Sensor] = {}
        self._failed: set[MetricName] = set()  # reads that raised, logged once each
        self._closed = False

    def metric_name(
        self, name: str, description: str, tags: Mapping[str, str] | None = None
    ) -> MetricName:
        self._check_open()
        own = dict(tags or {})
        for tag in own:
            if tag in self.tags:
                raise ValueError(f"Cannot use {tag} as a tag name")
        return MetricName(name, GROUP, description, {**self.tags, **own})

    def add_metric(self, metric_name: MetricName, value: MetricValue) -> None:
        if not isinstance(value, Measurable) and not callable(value):
            raise TypeError(f"A metric value must be callable or a Measurable, not {value!r}")
        read: Reader = value.measure if isinstance(value, Measurable) else lambda now: value()
        with self._lock:
            self._register_locked(metric_name, read)
            self._added.add(metric_name)

    def remove_metric(self, metric_name: MetricName) -> None:
        with self._lock:
            self._check_open()
            if metric_name not in self._added:
                raise ValueError(f"Unknown metric {metric_name}")
            self._added.discard(metric_name)
            del self._readers[metric_name]

    def add_sensor(self, name: str) -> Sensor:
        with self._lock:
            self._check_open()
            if name in self._sensors:
                raise ValueError(f"Sensor {name} already exists")
            sensor = self._sensors[name] = Sensor(name, self._register, self._clock)
            return sensor

    def remove_sensor(self, name: str) -> None:
        with self._lock:
            self._check_open()
            sensor = self._sensors.pop(name, None)
            if sensor is None:
                raise ValueError(f"Unknown sensor {name}")
            for metric_name in sensor.metric_names:
                self._readers.pop(metric_name, None)

    def values(self) -> dict[MetricName, float]:
        """Every metric's value now; a metric whose read raises (logged once) or gives no
        finite number (an average of nothing yet) is left out. Empty once closed."""
        with self._lock:
            readers = list(self._readers.items())
        now = self._clock()
        found: dict[MetricName, float] = {}
        for name, read in readers:
            try:
                value = float(read(now))
            except Exception:
                if name not in self._failed:
                    self._failed.add(name)
                    log.warning("reading the plugin metric %s failed", name, exc_info=True)
                continue
            if math.isfinite(value):
                found[name] = value
        return found

    def close(self) -> None:
        """Removes every metric and sensor; the methods of :class:`PluginMetrics` raise from
        now on. Called by the runtime once, when the plugin's run ends."""
        with self._lock:
            self._closed = True
            self._readers.clear()
            self._added.clear()
            self._sensors.clear()

    def _register(self, metric_name: MetricName, read: Reader) -> None:
        with self._lock:
            self._register_locked(metric_name, read)

    def _register_locked(self, metric_name: MetricName, read: Reader) -> None:
        self._check_open()
        if metric_name in self._readers:
            raise ValueError(f"Metric {metric_name} already exists")
        self._readers[metric_name] = read

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("This PluginMetrics instance is closed")


@runtime_checkable
class Monitorable(Protocol):
    """A converter, header converter, transformation or predicate that registers metrics
    (Kafka's ``Monitorable``): subclass it, or just define :meth:`with_plugin_metrics`.
    Connectors and tasks get theirs from their context instead."""

    def with_plugin_metrics(self, metrics: PluginMetrics) -> None:
        """Called exactly once per instance, right after ``configure`` and before any record
        reaches the plugin, on the task's thread. ``metrics`` may be used (and kept) until
        the plugin's ``close``: the runtime removes its metrics when the task run ends."""
        ...


_OWN_LOCK = threading.Lock()


def own_plugin_metrics(owner: Any) -> SimplePluginMetrics:
    """The untagged :class:`SimplePluginMetrics` of ``owner``, made on the first call: what
    the connector API's contexts answer for ``plugin_metrics()`` unless the runtime gives
    them their plugin's (contexts made elsewhere, for tests)."""
    with _OWN_LOCK:
        metrics: SimplePluginMetrics | None = owner.__dict__.get("_own_plugin_metrics")
        if metrics is None:
            metrics = owner.__dict__["_own_plugin_metrics"] = SimplePluginMetrics()
        return metrics
