"""One Kafka producer for the at-least-once source tasks of a slot host that have the same
producer config.

A thousand tasks moving a few records a second each make a thousand producers, each sending
a request of one record every few milliseconds: the broker's work grows with the tasks, not
with the data. A slot host's tasks share one producer instead (``SharedProducers``), whose
batches carry the records of all of them, as they would with one task moving all their
records. Each task still sees a producer of its own (``TaskProducer``): what it produced and
what was acknowledged are counted per task, so its ``flush`` waits for its own records only
(not its neighbours'), its delivery failures are its own, and ``len`` is its own records in
flight. Deliveries are served by the shared producer's poller thread, so a task's
``commit_record`` is called from that thread, as Kafka's are from its producer's network
thread; none after the task's ``stopped()``. Transactional (exactly-once) tasks never
share: a transaction is one task's.

A task's records in flight are bounded by its share of the producer's local queue
(``queue.buffering.max.messages`` and ``queue.buffering.max.kbytes``, librdkafka's bounds
of every record not yet acknowledged or failed): the queue divided by the most tasks that
can use the producer at once (the host's ``tasks.per.slot``). A task at its bound gets
``BufferError`` from ``produce``, as from a full queue, and waits for its own deliveries.
The shares add up to at most the queue, so records that cannot be delivered (a partition
with no leader, a topic that does not exist, held by librdkafka until
``message.timeout.ms`` or ``topic.metadata.propagation.max.ms``) stall their own task only:
they never fill the queue its neighbours produce into. In Kafka Connect, each task has a
producer, and so a buffer (``buffer.memory``), of its own.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from confluent_kafka import KafkaError, Producer

log = logging.getLogger(__name__)

ANY_PARTITION = -1
"""produce's partition for "the partitioner's choice" (librdkafka's RD_KAFKA_PARTITION_UA)."""
POLL_S = 0.05
PURGED_REPORTS_S = 5.0
"""How long a closing producer serves the reports of its purged records (they come at once)."""
Callback = Callable[[KafkaError | None, Any], None]


class SharedProducers:
    """The producers of one slot host, one per distinct producer config, each while a task
    uses it: the last task to release it drops it (with its poller, and the records no task
    waits for any more: ``_Shared.close``). A producer
    that hit a fatal error (librdkafka's: it can produce nothing more) is given to no task
    after it: the next task of its config gets a new one, while the tasks that hold the
    broken one fail on their own records and release it as they end."""

    def __init__(self) -> None:
        self._producers: dict[tuple[tuple[str, str], ...], _Shared] = {}
        self._lock = threading.Lock()

    def client(self, config: dict[str, Any], tasks: int = 1) -> TaskProducer:
        """A task's view of the producer of ``config`` (its ``on_delivery`` is the task's
        callback for failed deliveries; ``delivery.report.only.error`` is the task's),
        whose records in flight are bounded by a ``tasks``-th of the producer's queue:
        ``tasks`` is the most tasks that use the producer at once."""
        settings = {k: v for k, v in config.items() if k not in TASK_KEYS}
        key = tuple(sorted((k, str(v)) for k, v in settings.items()))
        with self._lock:
            shared = self._producers.get(key)
            if shared is None or shared.fatal is not None:
                shared = self._producers[key] = _Shared(settings)
            shared.users += 1
        return TaskProducer(
            shared,
            config.get("on_delivery"),
            lambda: self._release(key, shared),
            shared.queue.share(tasks),
        )

    def _release(self, key: tuple[tuple[str, str], ...], shared: _Shared) -> None:
        with self._lock:
            shared.users -= 1
            if shared.users:
                return
            if self._producers.get(key) is shared:  # not yet replaced after a fatal error
                del self._producers[key]
        shared.close()


TASK_KEYS = ("on_delivery", "delivery.report.only.error")
"""Producer settings that are each task's own, not the shared producer's."""
MAX_MESSAGES, MAX_KBYTES = "queue.buffering.max.messages", "queue.buffering.max.kbytes"
DEFAULT_MAX_MESSAGES, DEFAULT_MAX_KBYTES = 100_000, 1_048_576
"""librdkafka's defaults of the producer's queue bounds."""


@dataclass(frozen=True)
class QueueBound:
    """A bound on records in flight: how many, and their bytes (keys and values)."""

    messages: int
    bytes: int

    @classmethod
    def of(cls, settings: dict[str, Any]) -> QueueBound:
        """The local queue of a producer of ``settings``."""
        messages = int(settings.get(MAX_MESSAGES, DEFAULT_MAX_MESSAGES))
        return cls(messages, int(settings.get(MAX_KBYTES, DEFAULT_MAX_KBYTES)) * 1024)

    def share(self, tasks: int) -> QueueBound:
        """A ``tasks``-th of this bound: ``tasks`` shares add up to no more than the bound
        (but a share is at least one record and one byte)."""
        tasks = max(tasks, 1)
        return QueueBound(max(self.messages // tasks, 1), max(self.bytes // tasks, 1))


class _Shared:
    """A producer and the thread that serves its deliveries."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.errors = _Errors()
        self.producer = Producer(
            {**settings, "delivery.report.only.error": False, "error_cb": self.errors.on_error}
        )
        self.queue = QueueBound.of(settings)
        self.users = 0
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="shared-producer", daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._closed.is_set():
            try:
                self.producer.poll(POLL_S)
            except Exception:  # a callback's own failure is its task's (TaskProducer)
                log.exception("a shared producer's delivery report failed")

    @property
    def fatal(self) -> KafkaError | None:
        """The fatal error the producer hit, if it did (then no task is given it again)."""
        return self.errors.fatal

    def close(self) -> None:
        """Once no task uses it: its thread ends, and the producer with it. Records still
        in it, which no task waits for any more (each gave up on its own at its flush
        timeout), are purged and their reports served: a record's report holds its task's
        view, which holds the producer, so an undelivered record would keep the producer,
        its threads and its connections for the life of the process."""
        self._closed.set()
        self._thread.join()
        self.producer.purge()
        self.producer.flush(PURGED_REPORTS_S)


class _Errors:
    """A shared producer's error callback (librdkafka's ``error_cb``), in an object of its
    own so that the producer holding it makes no reference cycle (a producer in a cycle
    keeps its threads and sockets until the garbage collector runs)."""

    def __init__(self) -> None:
        self.fatal: KafkaError | None = None

    def on_error(self, error: KafkaError) -> None:
        """A fatal error is kept and logged at ERROR; the others are transient (librdkafka
        retries, and failed deliveries reach their tasks) and logged at WARNING, as
        librdkafka logs them for a producer without this callback."""
        if not error.fatal():
            log.warning("a shared producer: %s", error)
        elif self.fatal is None:
            self.fatal = error
            log.error(
                "a shared producer hit a fatal error (%s): tasks that start from now on get a "
                "new one; those using it fail on their records",
                error,
            )


class TaskProducer:
    """What one task's loop uses of the shared producer: ``produce``, ``poll``, ``flush``
    and ``len``, with confluent-kafka's signatures, over the task's own records. A callback
    of the task that raises fails the task, from its next ``poll`` or ``flush``, as it would
    from its own producer's; after :meth:`detach` its records are counted but none of its
    callbacks is called (nothing reaches a task after its ``stopped()``). Its records in
    flight stay within ``bound`` (its share of the queue): ``produce`` raises
    ``BufferError`` where one more would pass it (a record larger than the bytes' bound
    alone goes when the task has none in flight)."""

    def __init__(
        self,
        shared: _Shared,
        on_error: Callback | None,
        release: Callable[[], None],
        bound: QueueBound,
    ) -> None:
        self._producer = shared.producer
        self._on_error = on_error
        self._release = release
        self.bound = bound
        self._produced = 0  # written by the task's thread only
        self._produced_bytes = 0
        self._acknowledged = 0  # written by the poller thread only
        self._acknowledged_bytes = 0
        self._acked = threading.Condition()
        self._detached = False
        self._failure: BaseException | None = None  # a callback's, raised on the task thread

    def produce(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int = ANY_PARTITION,
        on_delivery: Callback | None = None,
        timestamp: int = 0,
        headers: Any = None,
    ) -> None:
        size = (len(value) if value else 0) + (len(key) if key else 0)
        in_flight = self._produced - self._acknowledged
        if in_flight >= self.bound.messages or (
            in_flight and self._produced_bytes - self._acknowledged_bytes + size > self.bound.bytes
        ):
            raise BufferError("this task's share of the shared producer's queue is full")
        callback = self._on_error if on_delivery is None else on_delivery
        self._producer.produce(
            topic,
            value,
            key,
            partition,
            on_delivery=self._delivered_to(callback, size, errors_only=on_delivery is None),
            timestamp=timestamp,
            headers=headers,
        )
        self._produced += 1
        self._produced_bytes += size

    def _delivered_to(self, callback: Callback | None, size: int, *, errors_only: bool) -> Callback:
        def delivered(error: KafkaError | None, message: Any) -> None:
            try:
                if callback is not None and (error is not None or not errors_only):
                    with self._acked:
                        detached = self._detached
                    if not detached:
                        callback(error, message)
            except BaseException as e:
                self._failure = self._failure or e
            finally:
                with self._acked:
                    self._acknowledged += 1
                    self._acknowledged_bytes += size
                    self._acked.notify_all()

        return delivered

    def poll(self, timeout: float = 0) -> int:
        """Deliveries are served by the shared producer's thread: waits ``timeout`` for one
        of this task's (a full queue's backoff); raises a callback's failure."""
        if timeout > 0:
            with self._acked:
                self._acked.wait(timeout)
        self._raise_failure()
        return 0

    def flush(self, timeout: float) -> int:
        """Waits up to ``timeout`` until every record this task produced is acknowledged;
        returns how many are not; raises a callback's failure."""
        with self._acked:
            self._acked.wait_for(lambda: self._acknowledged >= self._produced, timeout)
        self._raise_failure()
        return len(self)

    def detach(self) -> None:
        """No callback of the task is called from now on (called before its ``stopped()``)."""
        with self._acked:
            self._detached = True

    def release(self) -> None:
        """The task is done with the producer (once, after :meth:`detach`)."""
        self.detach()
        self._release()

    def _raise_failure(self) -> None:
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    def __len__(self) -> int:
        return max(self._produced - self._acknowledged, 0)
