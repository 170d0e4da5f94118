"""The Iceberg sink's task: records into data files, data files into commits.

Delivery: exactly once into each table, for appends and upserts alike. The tasks cut chunks
of data files on an aligned tick of ``iceberg.control.commit.interval-ms`` and hand them to
the committer in task 0 through the runtime's coordination channel; the committer commits
them with the Kafka offsets in the same Iceberg commit (:mod:`.committer`), and a task
opening a partition seeks it to the committed position, so a crash anywhere replays
exactly the records no table holds. The consumer group ``connect-<name>`` follows the
committed positions (``pre_commit``), for lag monitoring and as Apache's.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from itertools import groupby
from operator import attrgetter

from pyiceberg.exceptions import CommitFailedException
from sqlalchemy.exc import SQLAlchemyError

from airflow_provider_connect import __version__
from airflow_provider_connect.connect.channel import FencedException, TaskChannel
from airflow_provider_connect.connect.errors import ConnectException, RetriableException
from airflow_provider_connect.connect.sink import (
    SinkRecord,
    SinkTask,
    TopicPartition,
)
from airflow_provider_connect.connectors.iceberg import config as c
from airflow_provider_connect.connectors.iceberg.committer import (
    COMMITTED,
    ROUND,
    Committer,
    Positions,
    positions_from_tables,
    read_positions,
)
from airflow_provider_connect.connectors.iceberg.flusher import Flush, Rounds
from airflow_provider_connect.connectors.iceberg.routing import route
from airflow_provider_connect.connectors.iceberg.tables import NoSuchTable, TableHandle
from airflow_provider_connect.connectors.iceberg.writer import (
    FrozenPartition,
    PartitionWriter,
    TableBuffer,
)

log = logging.getLogger(__name__)

_CONSUMED_FROM = attrgetter("original_topic", "original_kafka_partition")
"""The topic and partition a sink record was consumed from."""

OUTAGES: tuple[type[BaseException], ...] = (
    OSError,  # the warehouse's storage (local files, pyarrow's or s3fs's S3)
    SQLAlchemyError,  # a SQL catalog's database
    CommitFailedException,  # another writer of a table kept winning
    RetriableException,  # the metadata database (the coordination channel)
)
"""Failures a later attempt may not meet: ``put`` raises them as ``RetriableException``."""


class IcebergSinkTask(SinkTask):
    """See the module docstring. ``stop`` is safe without a ``start``."""

    def __init__(self) -> None:
        self.writers: dict[TopicPartition, PartitionWriter] = {}
        self.pending: dict[TopicPartition, list[tuple[int, int]]] = {}
        self.committed: Positions = {}
        self.committer: Committer | None = None
        self.rounds: Rounds | None = None
        self.fenced = False  # superseded by another run of the task
        self.work: Flush | None = None  # the last tick's flush, until its outcome is seen
        self.unplaced: set[TopicPartition] = set()
        """Partitions opened whose committed positions could not be read yet."""

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        self.config = c.IcebergSinkConfig(props)
        channel = self.context.channel()
        if channel is None:
            raise ConnectException(
                "The Iceberg sink needs the runtime's coordination channel (its tasks hand "
                "data files to the committer through the metadata database)"
            )
        self.channel: TaskChannel = channel
        self.catalog = c.load_catalog(self.config)
        self.handles: dict[str, TableHandle] = {}
        self.interval_ms = self.config.commit_interval_ms
        self.next_tick = self._tick_after(_now_ms())
        if channel.task_id == 0:
            self.committer = Committer(
                channel,
                self.catalog,
                self.config.connect_group_id,
                self.config.control_topic,
                self.config.tables,
            )
            self.rounds = Rounds(self.committer, self.config.commit_timeout_ms / 1000)
        self.missing: set[str] = set()  # dynamic routes' tables found missing this tick
        self.routed = self.config.dynamic_enabled or bool(self.config.route_field)
        """Whether records go to tables by a field (else each goes to every table)."""

    def _tick_after(self, now_ms: int) -> int:
        return (now_ms // self.interval_ms + 1) * self.interval_ms

    # -- partitions ----------------------------------------------------------------------------
    def _positions(self) -> Positions:
        """The committed positions: the committer's last; the tables' own when the channel
        holds nothing of the committer's (a new connector of an old name); none while the
        first round is under way (some tables may hold it, others not yet)."""
        messages = self.channel.messages([COMMITTED, ROUND])
        positions = read_positions(messages)
        if positions is None and not messages:
            positions = positions_from_tables(
                self.catalog, self.config.tables, self.config.connect_group_id
            )
        self.committed = positions or {}
        return self.committed

    def open(self, partitions: list[TopicPartition]) -> None:
        """Each partition starts at its committed position (the consumer is sought there);
        one never committed starts where the consumer group is. When the positions cannot
        be read (the metadata database or the catalog away), the partitions wait: their
        records are not taken until a later ``put`` reads the positions and seeks."""
        for tp in partitions:
            self.pending[tp] = []
        self.unplaced.update(partitions)
        try:
            self._place()
        except OUTAGES as e:
            log.warning("Partitions %s wait for their committed positions: %s", partitions, e)

    def _place(self) -> None:
        """Sets the waiting partitions' writers at their committed positions."""
        positions = self._positions()
        seek = {}
        for tp in self.unplaced:
            position = positions.get((tp.topic, tp.partition))
            self.writers[tp] = PartitionWriter(tp, position)
            if position is not None:
                seek[tp] = position
        self.unplaced.clear()
        if seek:
            self.context.offset(seek)

    def close(self, partitions: list[TopicPartition]) -> None:
        """Forgets the partitions' buffered records: the next owner reads them again from
        the committed position. Files already written for them are left (orphans)."""
        for tp in partitions:
            self.writers.pop(tp, None)
            self.pending.pop(tp, None)
            self.unplaced.discard(tp)

    # -- records -------------------------------------------------------------------------------
    def put(self, records: list[SinkRecord]) -> None:
        """Buffers the records; on the commit tick, sends the partitions' chunks (and, in
        task 0, commits a round once every partition's chunk is in or the commit timeout
        passed). An unreachable catalog, storage or metadata database raises
        ``RetriableException``: the runtime puts the same records again later, and each is
        taken once (a record below its partition's end is one taken already)."""
        if self.fenced:
            return  # nothing is taken: the committed positions never pass these records
        try:
            self._put(records)
        except FencedException as e:  # superseded: the runtime stops this run shortly
            log.info("%s; this run takes no more records", e)
            self.fenced = True
        except OUTAGES as e:
            raise RetriableException(f"Iceberg sink: {type(e).__name__}: {e}") from e

    def _put(self, records: list[SinkRecord]) -> None:
        self._settle(wait=False)
        if self.unplaced:
            self._place()  # raises while the positions still cannot be read
        # where each was consumed: a transformation may have renamed its topic (routing
        # takes the record as transformed)
        for (topic, partition), consumed in groupby(records, key=_CONSUMED_FROM):
            writer = self.writers[TopicPartition(topic, partition)]
            end = writer.end
            # fetched before a seek to the position, or read again after one: taken already
            run = [r for r in consumed if end is None or r.original_kafka_offset >= end]
            if not self.routed:
                writer.add_all(run, self._buffers(writer, self.config.tables))
                continue
            for record in run:
                writer.add(record, self._buffers(writer, route(record, self.config)))
        now = _now_ms()
        if now >= self.next_tick:
            self._tick()
            self.next_tick = self._tick_after(now)
            self.missing.clear()

    def _buffers(self, writer: PartitionWriter, names: Sequence[str]) -> list[TableBuffer]:
        return [b for b in (self._buffer(writer, name) for name in names) if b is not None]

    def _buffer(self, writer: PartitionWriter, name: str) -> TableBuffer | None:
        """The partition's buffer of table ``name``; None for a table that does not exist
        when dynamic routing names it and auto-create is off (Apache drops its records)."""
        buffer = writer.buffers.get(name)
        if buffer is None:
            handle = self.handles.get(name)
            if handle is None:
                if name in self.missing:
                    return None
                try:
                    handle = self.handles[name] = TableHandle(self.catalog, name, self.config)
                except NoSuchTable:
                    if not self.config.dynamic_enabled:
                        raise
                    self.missing.add(name)
                    return None
            buffer = writer.buffers[name] = TableBuffer(
                handle, self.config.upsert_mode, self.config.cdc_field
            )
        return buffer

    def _tick(self) -> None:
        """Takes a chunk of every partition at its expected start and hands them to a
        :class:`~.flusher.Flush` (after the last tick's has ended); a partition whose start
        is not where the committed position leads (its chunk was passed over: another run's
        was taken) rewinds to the committed position instead."""
        self._settle(wait=True)
        committed = self._positions()
        frozen: list[FrozenPartition] = []
        rewind: dict[TopicPartition, int] = {}
        for tp, writer in self.writers.items():
            position = committed.get((tp.topic, tp.partition))
            pending = [p for p in self.pending[tp] if position is None or p[1] > position]
            if position is not None:
                if pending and pending[0][0] != position:
                    pending = []
                expected = pending[-1][1] if pending else position
                if writer.start is not None and writer.start != expected:
                    rewind[tp] = position
                    continue
            taken = writer.freeze()
            if taken is not None:
                frozen.append(taken)
                pending = [*pending, (taken.start, taken.end)]
            self.pending[tp] = pending
        self._rewind(rewind)
        self.work = Flush(frozen, self.channel)

    def _settle(self, wait: bool) -> None:
        """Sees the outcome of the last tick's flush (waiting for it when ``wait``): sent,
        the round is due; not sent, its partitions rewind to where its chunks started (their
        records are read again), and what stopped it is raised. Raises, too, when the
        committer was fenced."""
        rounds = self.rounds
        if rounds is not None and rounds.error is not None:
            raise rounds.error
        flush = self.work
        if flush is None or not (wait or flush.done()):
            return
        flush.wait()
        self.work = None
        if flush.error is None:
            if rounds is not None:
                rounds.tick()
            return
        self._rewind({f.tp: f.start for f in flush.frozen if f.tp in self.writers})
        raise flush.error

    def _rewind(self, positions: dict[TopicPartition, int]) -> None:
        if positions:
            log.info("Rewinding %s to the committed positions", positions)
            for tp, position in positions.items():
                self.writers[tp].rewind(position)
                self.pending[tp] = []
            self.context.offset(positions)

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """The committed positions of these partitions: the consumer group follows the
        tables."""
        committed = self.committed
        return {
            tp: committed[(tp.topic, tp.partition)]
            for tp in current_offsets
            if (tp.topic, tp.partition) in committed
        }

    def stop(self, connector_deleted: bool = False) -> None:
        """Lets the last tick's work end (within the commit timeout); buffered records are
        read again by the next run."""
        timeout_s = self.config.commit_timeout_ms / 1000 if hasattr(self, "config") else 0
        if self.work is not None:
            self.work.wait(timeout_s)
        if self.rounds is not None:
            self.rounds.stop(timeout_s)
        self.writers.clear()


def _now_ms() -> int:
    return int(time.time() * 1000)
