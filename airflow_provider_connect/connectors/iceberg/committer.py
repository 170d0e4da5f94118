"""The connector's committer (it runs in task 0): chunks of data files to Iceberg commits,
each holding the Kafka offsets it brings the table to, exactly once.

**Channel.** The tasks and the committer talk through the runtime's coordination channel
(rows in its metadata database): a task sends its chunks (``chunks``), the committer writes
its intent before committing (``round``) and the positions once a round is in every table
(``committed``). Every write is fenced by the runtime: a run that is no longer its task's
current run of the connector's current generation writes nothing (``FencedException``).

**Positions.** The committed position of a topic partition is the offset of the next
record no table holds. A chunk ``[start, end)`` is accepted only when ``start`` is the
position (a partition never seen: its lowest chunk), and moves it to ``end``; one chunk per
partition per round. A chunk whose end is not past the position is a replay and is dropped;
one that overlaps waits until it is passed (its task rewinds to the position meanwhile).

**A round** (every ``iceberg.control.commit.interval-ms``, once every known partition has a
chunk at its position or ``iceberg.control.commit.timeout-ms`` passed): the accepted
chunks' files and deletes, per table, with the positions after the round, are written as
the ``round`` intent; then each table touched gets one Iceberg commit (a truncate, the
deletes of the touched keys, then the files) whose snapshot summary holds
``kafka.connect.commit-id`` and the positions; then ``committed`` replaces the last
positions and the round's chunks are removed. A committer that starts finds any intent
left by a crash and finishes it first.

**Exactly once.** A table commit is skipped when the table already holds the round (its
latest snapshot written by this connector has offsets at or past the round's for every
partition the round moved), so a round finished again after a crash adds nothing twice.
The commit is made without pyiceberg's retry, which would rebase it onto a concurrent
commit: it asserts the snapshot it checked, so a stale committer (a zombie of an older
run) fails on the catalog's compare-and-swap, and its channel writes are fenced.
"""

from __future__ import annotations

import json
import logging
import pickle
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import reduce
from typing import Any, cast

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.expressions import AlwaysTrue, And, BooleanExpression, EqualTo, In, Or
from pyiceberg.table import Table
from pyiceberg.table.snapshots import ancestors_of
from pyiceberg.table.update import AssertTableUUID

from airflow_provider_connect.connect.channel import ChannelMessage, TaskChannel
from airflow_provider_connect.connect.errors import ConnectException
from airflow_provider_connect.connectors.iceberg.chunks import PartitionChunk, TableChunk

log = logging.getLogger(__name__)

CHUNKS = "chunks"
ROUND = "round"
COMMITTED = "committed"

COMMIT_ID_PROP = "kafka.connect.commit-id"
"""Apache's: the id of the commit round that wrote a snapshot."""
COMMIT_ATTEMPTS = 5
"""Attempts of one table's commit, each after reloading the table, when a concurrent
commit (another writer of the table) wins the compare-and-swap."""

Positions = dict[tuple[str, int], int]


def offsets_prop(control_topic: str, group: str) -> str:
    """Apache's summary property: ``kafka.connect.offsets.<control topic>.<group>``."""
    return f"kafka.connect.offsets.{control_topic}.{group}"


def topic_offsets_prop(group: str) -> str:
    """The positions of every topic partition: ``kafka.connect.topic-offsets.<group>``."""
    return f"kafka.connect.topic-offsets.{group}"


@dataclass
class Round:
    """A round's intent: enough to finish it after a crash."""

    commit_id: str
    positions: Positions
    tables: dict[str, list[TableChunk]]
    fed: dict[str, list[tuple[str, int]]]
    """The partitions whose records each table gets in the round."""
    message_ids: list[int] = field(default_factory=list)


def read_positions(messages: Iterable[ChannelMessage]) -> Positions | None:
    """The positions of the last ``committed`` message; None when there is none."""
    last = None
    for message in messages:
        if message.kind == COMMITTED:
            last = message
    return pickle.loads(last.payload) if last is not None else None


def table_positions(table: Table, group: str) -> Positions | None:
    """The positions in the table's latest snapshot written by this connector (group)."""
    key = topic_offsets_prop(group)
    snapshot = table.current_snapshot()
    if snapshot is None:
        return None
    for ancestor in ancestors_of(snapshot, table.metadata):
        props = ancestor.summary.additional_properties if ancestor.summary else {}
        if key in props:
            return {
                (topic, int(p)): int(o)
                for topic, partitions in json.loads(props[key]).items()
                for p, o in partitions.items()
            }
    return None


def key_filter(columns: list[str], keys: list[tuple[Any, ...]]) -> BooleanExpression:
    """Rows whose id columns equal one of ``keys``."""
    # pyiceberg's expressions take (term, literal...) positionally; their pydantic models
    # type the constructors otherwise.
    in_: Any = In
    equal: Any = EqualTo
    if len(columns) == 1:
        return cast(BooleanExpression, in_(columns[0], {k[0] for k in keys}))
    rows = (reduce(And, (equal(c, v) for c, v in zip(columns, key, strict=True))) for key in keys)
    return cast(BooleanExpression, reduce(Or, rows))


class Committer:
    """See the module docstring. Runs on task 0's thread, between its ``put`` calls."""

    def __init__(
        self,
        channel: TaskChannel,
        catalog: Catalog,
        group: str,
        control_topic: str,
        tables: Iterable[str],
    ) -> None:
        self.channel = channel
        self.catalog = catalog
        self.group = group
        self.control_topic = control_topic
        self.known_tables = set(tables)
        self.positions: Positions | None = None  # loaded at the first round

    # -- positions ---------------------------------------------------------------------------
    def _load(self, messages: list[ChannelMessage]) -> Positions:
        """Finishes a round a crash left, then the positions: the channel's, else the
        tables' own (the highest of each partition over the connector's tables)."""
        for message in messages:
            if message.kind == ROUND:
                self._finish(pickle.loads(message.payload), message.id)
                return self.positions or {}
        positions = read_positions(messages)
        if positions is not None:
            return positions
        return positions_from_tables(self.catalog, self.known_tables, self.group)

    # -- rounds --------------------------------------------------------------------------------
    def ready(self) -> bool:
        """Whether every known partition has a chunk at its position."""
        messages = self.channel.messages([CHUNKS])
        positions = self.positions or {}
        waiting = set(positions)
        for _, chunk in _chunks(messages):
            if positions.get(chunk.tp) == chunk.start:
                waiting.discard(chunk.tp)
        return not waiting

    def commit(self) -> Round | None:
        """One round; None when there was nothing to commit. After a failure, the next call
        starts again from what the channel and the tables hold."""
        try:
            return self._commit()
        except BaseException:
            self.positions = None
            raise

    def _commit(self) -> Round | None:
        messages = self.channel.messages([CHUNKS, ROUND, COMMITTED])
        if self.positions is None:
            self.positions = self._load(messages)
            messages = self.channel.messages([CHUNKS])
        positions = dict(self.positions)
        chunks = _chunks(m for m in messages if m.kind == CHUNKS)
        for _, chunk in chunks:  # a partition never committed starts at its lowest chunk
            if chunk.tp not in self.positions:
                positions[chunk.tp] = min(positions.get(chunk.tp, chunk.start), chunk.start)
        accepted: dict[tuple[str, int], PartitionChunk] = {}
        for _, chunk in chunks:
            if chunk.tp not in accepted and chunk.start == positions[chunk.tp]:
                accepted[chunk.tp] = chunk
        for tp, chunk in accepted.items():
            positions[tp] = chunk.end
        accepted_ids = {id(c) for c in accepted.values()}
        waiting = {  # messages with a chunk that may be accepted later
            i for i, c in chunks if id(c) not in accepted_ids and c.end > positions[c.tp]
        }
        used = sorted({i for i, _ in chunks} - waiting)
        if not used:
            return None
        tables: dict[str, list[TableChunk]] = {}
        fed: dict[str, list[tuple[str, int]]] = {}
        for tp, chunk in accepted.items():
            for name, table_chunk in chunk.tables.items():
                if table_chunk.files or table_chunk.deleted or table_chunk.truncate:
                    tables.setdefault(name, []).append(table_chunk)
                    fed.setdefault(name, []).append(tp)
        work = Round(uuid.uuid4().hex, positions, tables, fed, used)
        round_id = self.channel.send(ROUND, pickle.dumps(work)) if tables else None
        self._finish(work, round_id)
        return work

    def _finish(self, work: Round, round_id: int | None) -> None:
        """Commits the round to each table that does not hold it yet, then records it."""
        for name in sorted(work.tables):
            self._commit_table(name, work.tables[name], work)
            self.known_tables.add(name)
        earlier = [m.id for m in self.channel.messages([COMMITTED])]
        self.channel.send(COMMITTED, pickle.dumps(work.positions))
        done = [*earlier, *work.message_ids]
        self.channel.remove(done if round_id is None else [*done, round_id])
        self.positions = work.positions

    def _commit_table(self, name: str, chunks: list[TableChunk], work: Round) -> None:
        props = self._summary(work)
        for attempt in range(COMMIT_ATTEMPTS):
            self.channel.check_current()
            table = self.catalog.load_table(name)
            if self._holds(table, work.positions, work.fed[name]):
                return
            tx = table.transaction()
            if any(c.truncate for c in chunks):
                tx.delete(AlwaysTrue(), snapshot_properties=props)
            keyed = [c for c in chunks if c.deleted]
            if keyed:
                keys = [k for c in keyed for k in c.deleted]
                tx.delete(key_filter(keyed[0].id_columns, keys), snapshot_properties=props)
            files = [f for c in chunks for f in c.files]
            if files:
                with tx.update_snapshot(snapshot_properties=props).fast_append() as append:
                    for data_file in files:
                        append.append_data_file(data_file)
            if not tx._updates:  # deletes of rows that were not there: nothing to commit
                return
            try:
                # pyiceberg's commit_transaction would rebase onto a concurrent commit and
                # retry; this commit must hold only against the snapshot checked above.
                self.catalog.commit_table(
                    table,
                    (*tx._requirements, AssertTableUUID(uuid=table.metadata.table_uuid)),
                    tx._updates,
                )
                return
            except CommitFailedException:
                log.info(
                    "Commit of %s to %s lost a race (attempt %d)", work.commit_id, name, attempt + 1
                )
                time.sleep(0.1 * (attempt + 1))
        raise ConnectException(f"Could not commit to table {name}: concurrent commits kept winning")

    def _holds(self, table: Table, positions: Positions, fed: list[tuple[str, int]]) -> bool:
        """Whether ``table`` has the round already: its positions of the partitions that
        fed it are at or past the round's (every commit of a round holds all its
        positions, and rounds are committed in order)."""
        held = table_positions(table, self.group)
        if held is None:
            return False
        return all(held.get(tp, -1) >= positions[tp] for tp in fed)

    def _summary(self, work: Round) -> dict[str, str]:
        by_topic: dict[str, dict[str, int]] = {}
        for (topic, partition), offset in sorted(work.positions.items()):
            by_topic.setdefault(topic, {})[str(partition)] = offset
        props = {
            COMMIT_ID_PROP: work.commit_id,
            topic_offsets_prop(self.group): json.dumps(by_topic, separators=(",", ":")),
        }
        if len(by_topic) == 1:
            props[offsets_prop(self.control_topic, self.group)] = json.dumps(
                next(iter(by_topic.values())), separators=(",", ":")
            )
        return props


def positions_from_tables(catalog: Catalog, tables: Iterable[str], group: str) -> Positions:
    """The highest position of each partition over ``tables`` that exist."""
    from pyiceberg.exceptions import NoSuchTableError

    positions: Positions = {}
    for name in tables:
        try:
            held = table_positions(catalog.load_table(name), group)
        except NoSuchTableError:
            continue
        for tp, offset in (held or {}).items():
            positions[tp] = max(offset, positions.get(tp, offset))
    return positions


def _chunks(messages: Iterable[ChannelMessage]) -> list[tuple[int, PartitionChunk]]:
    return [(m.id, c) for m in messages for c in pickle.loads(m.payload)]
