"""One topic partition's files: Confluent's ``TopicPartitionWriter``.

Records of a topic partition (TP) are buffered, then written to one open file set per
encoded partition (a value file, and keys and headers files when stored). Every open file of
the TP is committed together (uploads completed) when:

* ``flush.size`` records were written since the last commit (counted over the whole TP);
* a record's schema starts new files (``schema.compatibility``), or flips between null and
  non-null within an encoded partition;
* ``rotate.interval.ms`` passed between the first record's timestamp and a later record's
  (time-based partitioners only), or a record's encoded partition differs from the
  previous one (``rotate.file.on.partition.change``);
* the wall clock reached ``rotate.schedule.interval.ms``'s next boundary.

Only then does the offset to commit (:attr:`TopicPartitionWriter.offset_to_commit`) advance,
to the last written record + 1: Kafka offsets never pass a record that is not inside a
completed object. An object's name is fixed by its first record's offset, so records read
again after a crash land in objects of the same names with the same content (for
deterministic partitioners and rotations: not the wall clock).

Records that join an open file as they are (the same schema object, no tombstone, no time to
watch, one encoded partition) are written a run at a time
(:meth:`TopicPartitionWriter._write_run`): the same files and offsets as one at a time, in
fewer steps; a run the format refuses in part is written again one record at a time, so
that only the refused record is reported.

A retriable storage failure aborts the open uploads and puts their records back at the head
of the buffer, to be written again after ``retry.backoff.ms``; when failures went on for
``s3.retry.timeout.ms`` (no write pass or commit succeeding in between) the task fails.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from airflow_provider_connect.connect.data import Schema
from airflow_provider_connect.connect.errors import (
    ConnectException,
    DataException,
    RetriableException,
)
from airflow_provider_connect.connect.sink import SinkRecord, SinkTaskContext, TopicPartition
from airflow_provider_connect.connectors.s3 import config as c
from airflow_provider_connect.connectors.s3.compatibility import Compatibility
from airflow_provider_connect.connectors.s3.formats import VALUE, FileWriter, Format, View
from airflow_provider_connect.connectors.s3.partitioners import TIMEZONE, Partitioner
from airflow_provider_connect.connectors.s3.path_format import (
    next_scheduled_rotation,
    zone_for_id,
)
from airflow_provider_connect.connectors.s3.storage import S3Storage
from airflow_provider_connect.connectors.s3.timestamps import PartitionException

log = logging.getLogger(__name__)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass
class FileSet:
    """The open files of one encoded partition: one per view, all starting at ``start``."""

    start: int
    schema: Schema | None
    writers: dict[View, FileWriter] = field(default_factory=dict)


class TopicPartitionWriter:
    """See the module. ``formats`` maps each stored view to its format, the value's first;
    ``clock`` is the wall clock in milliseconds."""

    def __init__(
        self,
        tp: TopicPartition,
        storage: S3Storage,
        partitioner: Partitioner,
        formats: dict[View, Format],
        parsed: dict[str, Any],
        context: SinkTaskContext,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.tp, self.storage, self.partitioner = tp, storage, partitioner
        self.formats, self.context, self.clock = formats, context, clock
        self.views = list(formats)
        self.flush_size: int = parsed[c.FLUSH_SIZE]
        self.rotate_interval: int = parsed[c.ROTATE_INTERVAL_MS]
        if self.rotate_interval > 0 and not partitioner.time_based:
            log.warning(
                "rotate.interval.ms is ignored: the partitioner %s is not time based",
                type(partitioner).__name__,
            )
            self.rotate_interval = -1
        self.schedule_interval: int = parsed[c.ROTATE_SCHEDULE_INTERVAL_MS]
        self.zone = zone_for_id(parsed[TIMEZONE]) if self.schedule_interval > 0 else None
        self.rotate_on_partition_change: bool = parsed[c.ROTATE_ON_PARTITION_CHANGE]
        self.compatibility = Compatibility(parsed[c.SCHEMA_COMPATIBILITY])
        self.backoff_ms: int = parsed[c.RETRY_BACKOFF_MS]
        self.retry_timeout_ms: int = parsed[c.RETRY_TIMEOUT_MS]
        self.pad: int = parsed[c.PAD_WIDTH]
        self.dir_delim: str = parsed[c.DIRECTORY_DELIM]
        self.file_delim: str = parsed[c.FILE_DELIM]
        self.topics_dir: str = parsed[c.TOPICS_DIR].strip()
        self.tombstone: str = parsed[c.TOMBSTONE_PARTITION]
        self.buffer: deque[SinkRecord] = deque()
        self.files: dict[str, FileSet] = {}
        self.written: list[SinkRecord] = []  # since the last commit: written again on a retry
        self.current_offset = -1
        self.current_encoded: str | None = None
        self.current_timestamp: int | None = None
        self.base_timestamp: int | None = None
        self.offset_to_commit: int | None = None  # past the last completed object
        self.failure_time: int | None = None
        self.failing_since: int | None = None
        self.paused = False
        self.next_rotation = self._next_rotation(self.clock())
        self.runs = not partitioner.time_based and self.zone is None and self.views == [VALUE]
        """Whether records may be written a run at a time (see the module): nothing depends on
        their time, and the value is the only view."""

    def _next_rotation(self, now: int) -> int | None:
        """The next scheduled rotation after ``now`` (``rotate.schedule.interval.ms`` in
        ``timezone``), None when there is none."""
        if self.zone is None:
            return None
        return next_scheduled_rotation(now, self.schedule_interval, self.zone)

    # -- names ---------------------------------------------------------------------------
    def key(self, encoded: str, start: int, view: View) -> str:
        """``[topics.dir D] partitioned path D topic F partition F padded start ext``."""
        path = self.partitioner.partitioned_path(self.tp.topic, encoded)
        prefix = f"{self.topics_dir}{self.dir_delim}" if self.topics_dir else ""
        offset = f"{start:0{self.pad}d}" if self.pad > 0 else str(start)
        name = self.file_delim.join([self.tp.topic, str(self.tp.partition), offset])
        return f"{prefix}{path}{self.dir_delim}{name}{view.suffix}{self.formats[view].extension}"

    # -- writing -------------------------------------------------------------------------
    def write(self) -> None:
        """Writes what is buffered (:attr:`buffer`, which the task appends records to), rotating as the module says; then commits on time when
        nothing is buffered. Pauses the TP while ``flush.size`` records wait."""
        now = self.clock()
        if self.failure_time is not None and now - self.failure_time < self.backoff_ms:
            return
        try:
            self._write(now)
        except RetriableException as e:
            self._retry_later(now, e)
        else:
            self.failing_since = None
        if len(self.buffer) >= max(self.flush_size, 1):
            if not self.paused:
                self.context.pause(self.tp)
                self.paused = True
        elif self.paused:
            self.context.resume(self.tp)
            self.paused = False

    def _write(self, now: int) -> None:
        if not self.written and self.next_rotation is not None and now >= self.next_rotation:
            self.next_rotation = self._next_rotation(now)
        while self.buffer:
            if not (self.runs and self._write_run(now)):
                self._write_next(now)
        if self.written and self._rotate_on_time(self.current_encoded, now):
            self.next_rotation = self._next_rotation(now)
            self.commit()

    def _write_next(self, now: int) -> None:
        """Writes the buffer's first record (or reports it, or first commits the files it
        must not join)."""
        partitioner, time_based = self.partitioner, self.partitioner.time_based
        record = self.buffer[0]
        try:
            if record.value is None:  # a tombstone: the record's own time (Confluent's)
                timestamp, encoded = record.timestamp, self.tombstone
            else:  # only time-based partitioners have a timestamp
                timestamp = partitioner.timestamp(record, now) if time_based else None
                encoded = partitioner.encode_partition(record, now)
        except (DataException, PartitionException) as e:
            self._report(record, e)
            return
        if time_based:
            self.current_timestamp = timestamp
            if self.base_timestamp is None:
                self.base_timestamp = timestamp
        if self._must_rotate(record, encoded, now):
            self.commit()
            if time_based:
                self.base_timestamp = timestamp
            return
        try:
            self._write_record(record, encoded)
        except (DataException, PartitionException) as e:
            self._report(record, e)
            return
        self.buffer.popleft()
        if len(self.written) >= self.flush_size:
            self.commit()

    def _write_run(self, now: int) -> bool:
        """Writes the longest run at the buffer's head of records that join the open value
        file of the current encoded partition as they are (its schema object, not null, the
        same encoded partition), up to ``flush.size``; False when the head starts no run.
        A run the format refuses is written one record at a time instead."""
        encoded = self.current_encoded
        files = self.files.get(encoded) if encoded is not None else None
        writer = files.writers.get(VALUE) if files is not None else None
        room = self.flush_size - len(self.written)
        if files is None or writer is None or room <= 0:
            return False
        schema, encode = files.schema, self.partitioner.encode_partition
        same_path = self.partitioner.fixed_per_topic_partition
        run = []
        for record in islice(self.buffer, room):
            if record.value is None or record.value_schema is not schema:
                break
            if not same_path:
                try:
                    if encode(record, now) != encoded:
                        break
                except (DataException, PartitionException):
                    break  # reported by the one-at-a-time path
            run.append(record)
        if not run:
            return False
        try:
            data = writer.encode_many(schema, [r.value for r in run])
        except (DataException, PartitionException):
            for _ in run:
                self._write_next(now)
            return True
        writer.extend(data)
        if len(run) == len(self.buffer):
            self.buffer.clear()
        else:
            popleft = self.buffer.popleft
            for _ in run:
                popleft()
        self.written.extend(run)
        self.current_offset = run[-1].kafka_offset
        if len(self.written) >= self.flush_size:
            self.commit()
        return True

    def _report(self, record: SinkRecord, error: ConnectException) -> None:
        """Hands a record that cannot be written to the errant record reporter (and drops
        it), or fails the task when there is none."""
        reporter = self.context.errant_record_reporter()
        if reporter is None:
            raise error
        self.buffer.popleft()
        reporter.report(record, error)

    def _must_rotate(self, record: SinkRecord, encoded: str, now: int) -> bool:
        if not self.written:
            return False
        files = self.files.get(encoded)
        if files is not None and (files.schema is None) != (record.value_schema is None):
            return True
        if self._rotate_on_time(encoded, now):
            self.next_rotation = self._next_rotation(now)
            return True
        return files is not None and self.compatibility.incompatible(
            record.value_schema, files.schema
        )

    def _rotate_on_time(self, encoded: str | None, now: int) -> bool:
        if not self.written:
            return False
        if self.next_rotation is not None and now >= self.next_rotation:
            return True
        if self.rotate_interval <= 0:
            return False
        current, base = self.current_timestamp, self.base_timestamp
        # a tombstone written (behavior.on.null.values=write) may have no timestamp: no
        # rotation by time then, as Confluent's (a change of partition still rotates)
        if current is not None and base is not None and current - base >= self.rotate_interval:
            return True
        return (
            self.rotate_on_partition_change
            and encoded != self.current_encoded
            and self.tombstone not in (encoded, self.current_encoded)
        )

    def _write_record(self, record: SinkRecord, encoded: str) -> None:
        """Encodes the record for every view first, then appends it to every file: a record
        refused by any view (DataException) is written to none, and files opened for it are
        discarded (a new file set is kept only once a record is in it)."""
        files = self.files.get(encoded) or FileSet(record.kafka_offset, record.value_schema)
        # a tombstone has keys and headers only
        views = [v for v in self.views if v.suffix != "" or record.value is not None]
        opened: list[View] = []
        try:
            data = [self._view_data(record, files, v) for v in views]
            encoded_data = []
            for view, (schema, value) in zip(views, data, strict=True):
                writer = files.writers.get(view)
                if writer is None:
                    upload = self.storage.upload(self.key(encoded, files.start, view))
                    writer = files.writers[view] = self.formats[view].open(upload, schema)
                    opened.append(view)
                encoded_data.append((writer, writer.encode(schema, value)))
        except (DataException, PartitionException):
            for view in opened:
                files.writers.pop(view).abort()
            raise
        for writer, datum in encoded_data:
            writer.append(datum)
        self.files[encoded] = files
        self.written.append(record)
        self.current_offset = record.kafka_offset
        self.current_encoded = encoded

    def _view_data(
        self, record: SinkRecord, files: FileSet, view: View
    ) -> tuple[Schema | None, Any]:
        if view.suffix != "":
            return view.data(record)
        return files.schema, self.compatibility.project(
            record.value_schema, record.value, files.schema
        )

    def commit(self) -> None:
        """Completes every open file of the TP, then advances the offset to commit."""
        for files in self.files.values():
            for writer in files.writers.values():
                writer.commit()
        self.offset_to_commit = self.current_offset + 1
        self.files.clear()
        self.written.clear()
        self.base_timestamp = None
        self.failure_time = self.failing_since = None

    def _retry_later(self, now: int, error: RetriableException) -> None:
        """Aborts the open files; their records go back to the head of the buffer."""
        if self.failing_since is None:
            self.failing_since = now
        if now - self.failing_since >= self.retry_timeout_ms:
            self.abort()
            raise ConnectException(
                f"{error} (still failing after s3.retry.timeout.ms={self.retry_timeout_ms})"
            ) from error
        log.warning("%s: %s; retrying in %d ms", self.tp, error, self.backoff_ms)
        self.buffer.extendleft(reversed(self.written))
        self.abort()
        self.failure_time = now

    def abort(self) -> None:
        """Discards the open files (their uploads aborted) and what was written to them."""
        for files in self.files.values():
            for writer in files.writers.values():
                writer.abort()
        self.files.clear()
        self.written.clear()
        self.base_timestamp = None

    def close(self) -> None:
        """Discards the open files (:meth:`abort`) and resumes the TP if this writer paused
        it: a revoked TP is not left paused for its next assignment."""
        self.abort()
        if self.paused:
            self.context.resume(self.tp)
            self.paused = False
