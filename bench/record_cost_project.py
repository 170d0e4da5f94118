"""The project's side of ``bench.record_cost``: one task of a connector run by the runtime's
own ``WorkerSourceTask``/``WorkerSinkTask`` in this process, its CPU time per stage.

The run does what ``WorkerTask._run`` does before its loop (the task class, the
transformation chain, ``_setup``, ``task.start``), then the loop's turns (``_step`` of
``WorkerSourceTask`` or ``WorkerSinkTask``, with its commits every
``offset.flush.interval.ms``) until the expected number of records has been dispatched (put),
then one commit, as a run that stops commits. No heartbeat thread runs (it does nothing per
record). Stages are timed with the task thread's CPU clock, per
call of the runtime's own methods (per poll or batch, never per record):

* source: ``poll/build`` inside ``task.poll()``; ``transform`` inside the chain's
  ``apply_all``; ``convert`` inside the key and value converters' ``from_connect_values``
  and ``from_connect_data``; ``produce``: the rest of the loop (the rest of ``_dispatch``,
  ``producer.poll(0)``, the final commit and its flush);
* sink: ``consume`` inside ``consumer.consume``; ``convert`` inside the converters'
  ``to_connect_values`` and ``to_connect_data``; ``transform`` as above; ``put``: the rest
  (building the records, ``task.put``, the offsets' bookkeeping, the final commit).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from airflow_provider_connect.connect.plugins import class_name, load_class
from airflow_provider_connect.runtime.executor.sink_task import WorkerSinkTask
from airflow_provider_connect.runtime.executor.source_task import WorkerSourceTask
from airflow_provider_connect.runtime.executor.task_base import TaskStores, WorkerTask
from airflow_provider_connect.runtime.executor.task_spec import TASK_CLASS_CONFIG, TaskSpec
from airflow_provider_connect.runtime.executor.transformations import transformation_chain
from airflow_provider_connect.store import MetadataStore

SOURCE_STAGES = ("poll/build", "transform", "convert", "produce")
SINK_STAGES = ("consume", "convert", "transform", "put")


class StageClock:
    """Seconds of the calling thread's CPU clock spent in each stage. A call timed while
    another timed call runs (a converter's ``from_connect_values`` calling its own
    ``from_connect_data``) counts once, in the outer stage."""

    def __init__(self, stages: tuple[str, ...]) -> None:
        self.seconds = dict.fromkeys(stages, 0.0)
        self.depth = 0

    def timed(self, stage: str, call: Callable[..., Any]) -> Callable[..., Any]:
        """``call``, its CPU time added to ``stage``."""
        seconds = self.seconds

        def clocked(*args: Any, **kwargs: Any) -> Any:
            if self.depth:
                return call(*args, **kwargs)
            self.depth += 1
            started = time.thread_time()
            try:
                return call(*args, **kwargs)
            finally:
                seconds[stage] += time.thread_time() - started
                self.depth -= 1

        return clocked

    def wrap(self, target: object, stage: str, *methods: str) -> None:
        """Times ``target``'s ``methods`` (those it has) under ``stage``, on the instance."""
        for method in methods:
            if hasattr(target, method):
                setattr(target, method, self.timed(stage, getattr(target, method)))


def task_spec(
    store: MetadataStore, name: str, connector_config: dict[str, str], worker: dict[str, str]
) -> TaskSpec:
    """What the herder does for task 0 of a new connector: its config, its first task
    config (with ``task.class``, and ``topics`` for a sink), a run id."""
    connector = load_class(connector_config["connector.class"])()
    connector.start(dict(connector_config))
    task_config = {
        **connector.task_configs(1)[0],
        TASK_CLASS_CONFIG: class_name(connector.task_class()),
    }
    if "topics" in connector_config:
        task_config["topics"] = connector_config["topics"]
    connector.stop()
    store.configs.create_connector(name, connector_config)
    generation = store.configs.write_task_configs(name, [task_config])
    run_id = store.statuses.assign_task(name, 0, generation, "record-cost")
    return TaskSpec(name, 0, generation, run_id, connector_config, task_config, worker)


def started(loop: type[WorkerTask], spec: TaskSpec, store: MetadataStore) -> Any:
    """The run of ``spec`` as ``WorkerTask._run`` starts it, up to its loop."""
    run: Any = loop(spec, TaskStores.of(store.db), "record-cost")
    run.task = load_class(spec.task_class)()
    run.chain = transformation_chain(spec.connector_config, run.plugin_metrics)
    run._setup()
    run.task.start(spec.task_config)
    return run


def figures(clock: StageClock, records: int, thread_s: float, process_s: float) -> dict[str, Any]:
    """µs per record of each stage, of the task thread and of the process."""
    return {
        "records": records,
        "us_per_record": {
            **{stage: s / records * 1e6 for stage, s in clock.seconds.items()},
            "task thread": thread_s / records * 1e6,
            "process": process_s / records * 1e6,
        },
    }


def source(spec: TaskSpec, store: MetadataStore, records: int) -> dict[str, Any]:
    """CPU per record of a source task's loop until ``records`` are dispatched."""
    run: WorkerSourceTask = started(WorkerSourceTask, spec, store)
    clock = StageClock(SOURCE_STAGES)
    run.chain.apply_all = clock.timed("transform", run.chain.apply_all)  # type: ignore[method-assign]
    for converter in (run.converters.key, run.converters.value):
        clock.wrap(converter, "convert", "from_connect_values", "from_connect_data")
    run.task.poll = clock.timed("poll/build", run.task.poll)  # type: ignore[method-assign]
    seconds = clock.seconds
    process_started, thread_started = time.process_time(), time.thread_time()
    next_commit = time.monotonic() + run.flush_interval_s
    while run.produced + run.dropped < records:  # WorkerSourceTask._loop, without pauses
        run._step()
        if time.monotonic() >= next_commit:
            run._on_commit_interval()
            next_commit = time.monotonic() + run.flush_interval_s
    run.commit_offsets(run.flush_timeout_s, store_wait_s=run.flush_timeout_s)
    thread_s = time.thread_time() - thread_started
    process_s = time.process_time() - process_started
    seconds["produce"] = thread_s - sum(seconds.values())
    done = run.produced + run.dropped
    _end(run)
    return figures(clock, done, thread_s, process_s)


def sink(spec: TaskSpec, store: MetadataStore, records: int) -> dict[str, Any]:
    """CPU per record of a sink task's loop until ``records`` are put and committed."""
    run: WorkerSinkTask = started(WorkerSinkTask, spec, store)
    clock = StageClock(SINK_STAGES)
    run.chain.apply_all = clock.timed("transform", run.chain.apply_all)  # type: ignore[method-assign]
    for converter in (run.converters.key, run.converters.value):
        clock.wrap(converter, "convert", "to_connect_values", "to_connect_data")
    run.consumer = TimedConsumer(run.consumer, clock.timed("consume", run.consumer.consume))
    seconds = clock.seconds
    process_started, thread_started = time.process_time(), time.thread_time()
    run._subscribe()
    next_commit = time.monotonic() + run.flush_interval_s
    read = 0
    while read < records:  # WorkerSinkTask._loop
        read += run._step()
        if run.context.commit_requested or time.monotonic() >= next_commit:
            run.context.commit_requested = False
            run.commit(sorted(run.context.assigned))
            next_commit = time.monotonic() + run.flush_interval_s
    run.commit(sorted(run.context.assigned))
    thread_s = time.thread_time() - thread_started
    process_s = time.process_time() - process_started
    seconds["put"] = thread_s - sum(seconds.values())
    _end(run)
    return figures(clock, read, thread_s, process_s)


class TimedConsumer:
    """A sink run's consumer, its ``consume`` timed (a librdkafka consumer takes no
    attribute of ours)."""

    def __init__(self, consumer: Any, consume: Callable[..., Any]) -> None:
        self._consumer = consumer
        self.consume = consume

    def __getattr__(self, name: str) -> Any:
        return getattr(self._consumer, name)


def _end(run: Any) -> None:
    """Ends the run as ``WorkerTask._run`` does after its loop (not timed)."""
    run.heartbeat.close()
    try:
        run._finish(False)
    finally:
        run._close_clients()
        run._close_converters()
        run._close_chain()
        run._close_writes()
