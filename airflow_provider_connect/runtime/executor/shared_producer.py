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
thread. Transactional (exactly-once) tasks never share: a transaction is one task's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, Producer

ANY_PARTITION = -1
POLL_S = 0.05
Callback = Callable[[KafkaError | None, Any], None]


class SharedProducers:
    """The producers of one slot host, one per distinct producer config; they live as long
    as the host's process."""

    def __init__(self) -> None:
        self._producers: dict[tuple[tuple[str, str], ...], _Shared] = {}
        self._lock = threading.Lock()

    def client(self, config: dict[str, Any]) -> TaskProducer:
        """A task's view of the producer of ``config`` (its ``on_delivery`` is the task's
        callback for failed deliveries; ``delivery.report.only.error`` is the task's)."""
        settings = {k: v for k, v in config.items() if k not in TASK_KEYS}
        key = tuple(sorted((k, str(v)) for k, v in settings.items()))
        with self._lock:
            shared = self._producers.get(key)
            if shared is None:
                shared = self._producers[key] = _Shared(settings)
        return TaskProducer(shared.producer, config.get("on_delivery"))


TASK_KEYS = ("on_delivery", "delivery.report.only.error")
"""Producer settings that are each task's own, not the shared producer's."""


class _Shared:
    def __init__(self, settings: dict[str, Any]) -> None:
        self.producer = Producer({**settings, "delivery.report.only.error": False})
        threading.Thread(target=self._poll, name="shared-producer", daemon=True).start()

    def _poll(self) -> None:
        while True:  # serves every task's deliveries for the host's life
            self.producer.poll(POLL_S)


class TaskProducer:
    """What one task's loop uses of the shared producer: ``produce``, ``poll``, ``flush``
    and ``len``, with confluent-kafka's signatures, over the task's own records."""

    def __init__(self, producer: Producer, on_error: Callback | None) -> None:
        self._producer = producer
        self._on_error = on_error
        self._produced = 0  # written by the task's thread only
        self._acknowledged = 0  # written by the poller thread only
        self._acked = threading.Condition()

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
        callback = self._delivered if on_delivery is None else self._delivered_to(on_delivery)
        self._producer.produce(
            topic,
            value,
            key,
            partition,
            on_delivery=callback,
            timestamp=timestamp,
            headers=headers,
        )
        self._produced += 1

    def _delivered(self, error: KafkaError | None, message: Any) -> None:
        if error is not None and self._on_error is not None:
            self._on_error(error, message)
        self._count()

    def _delivered_to(self, on_delivery: Callback) -> Callback:
        def delivered(error: KafkaError | None, message: Any) -> None:
            on_delivery(error, message)
            self._count()

        return delivered

    def _count(self) -> None:
        """One more of the task's records acknowledged, after its callback returned."""
        with self._acked:
            self._acknowledged += 1
            self._acked.notify_all()

    def poll(self, timeout: float = 0) -> int:
        """Deliveries are served by the shared producer's thread: waits ``timeout`` for one
        of this task's (a full queue's backoff) and returns 0."""
        if timeout > 0:
            with self._acked:
                self._acked.wait(timeout)
        return 0

    def flush(self, timeout: float) -> int:
        """Waits up to ``timeout`` until every record this task produced is acknowledged;
        returns how many are not."""
        with self._acked:
            self._acked.wait_for(lambda: self._acknowledged >= self._produced, timeout)
            return len(self)

    def __len__(self) -> int:
        return max(self._produced - self._acknowledged, 0)
