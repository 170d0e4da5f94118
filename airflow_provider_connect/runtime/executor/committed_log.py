"""Reads a partition as a ``read_committed`` consumer must see it, deciding itself which
transactions committed.

A read-committed consumer relies on the broker's aborted-transactions index in fetch
responses; some Kafka-protocol brokers leave it empty, so their clients deliver aborted
records. This reader fetches the raw record batches (Fetch v4, ``read_uncommitted``) and
follows the control markers in the log: a transactional batch is kept once its producer's
COMMIT marker follows it, dropped at an ABORT marker, and left out while its transaction is
still open. Non-transactional records are kept as they are. Producer epochs are checked as
a Kafka broker checks them, so that a fenced producer's late batches, which some brokers
accept, are not committed by the next transaction of the same transactional id (see
:func:`committed_records`).

The exactly-once source reads its offsets topic with it at task start, and tests use it to
verify what a transactional producer committed. The client settings it understands are
``bootstrap.servers``, ``security.protocol`` (PLAINTEXT or SSL) and the ``ssl.*`` file
locations; it refuses SASL rather than read without authenticating.
"""

from __future__ import annotations

import logging
import socket
import ssl
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import count
from typing import Any

from confluent_kafka.admin import AdminClient
from kafka.record import MemoryRecords

from airflow_provider_connect.connect.errors import ConnectException

log = logging.getLogger(__name__)

FETCH_API_KEY = 1
FETCH_VERSION = 4  # the oldest Fetch with isolation levels and record batches (v2 format)
FETCH_MAX_BYTES = 16 * 1024 * 1024
FETCH_MAX_WAIT_MS = 100  # how long the end of the log is waited on
SUPPORTED_PROTOCOLS = ("PLAINTEXT", "SSL")


@dataclass(frozen=True)
class CommittedRecord:
    """A record that is committed (or was written outside any transaction)."""

    offset: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]
    timestamp: int


class CommittedLogReader:
    """Reads whole partitions, keeping what a read-committed consumer must see.

    One reader holds at most one connection per partition leader; :meth:`close` releases
    them. Not thread-safe.
    """

    def __init__(self, client_config: dict[str, str]) -> None:
        protocol = client_config.get("security.protocol", "PLAINTEXT").upper()
        if protocol not in SUPPORTED_PROTOCOLS:
            raise ConnectException(
                f"Reading committed records needs security.protocol PLAINTEXT or SSL, "
                f"not {protocol}"
            )
        self.ssl_context = _ssl_context(client_config) if protocol == "SSL" else None
        admin_keys = ["bootstrap.servers", "security.protocol"]
        admin_keys += [k for k in client_config if k.startswith("ssl.")]
        self.admin = AdminClient({k: client_config[k] for k in admin_keys if k in client_config})
        self.connections: dict[tuple[str, int], _Connection] = {}

    def close(self) -> None:
        for connection in self.connections.values():
            connection.close()
        self.connections.clear()

    def partitions(self, topic: str, timeout_s: float = 10) -> list[int]:
        """The partition ids of ``topic``; empty when it does not exist."""
        metadata = self.admin.list_topics(topic, timeout=timeout_s).topics.get(topic)
        if metadata is None or metadata.error is not None:
            return []
        return sorted(metadata.partitions)

    def read(self, topic: str, partition: int, start: int = 0) -> list[CommittedRecord]:
        """The committed records of ``topic``-``partition`` from ``start`` up to the end of
        the log as it is now, in offset order. Records of transactions that are still open
        at the end are left out."""
        return committed_records(self.batches(topic, partition, start), start)

    def committed_transactions(self, topic: str, partition: int) -> list[int]:
        """The size in records of each transaction committed into ``topic``-``partition``,
        in log order, read from the COMMIT markers in the log (not from the broker's last
        stable offset); for a partition that one transactional producer writes."""
        sizes: list[int] = []
        records = 0
        for batch in self.batches(topic, partition):
            if not batch.is_control_batch:
                records += sum(1 for _ in batch)
            else:  # a marker ends the open transaction: committed, or aborted
                if next(iter(batch)).commit:
                    sizes.append(records)
                records = 0
        return sizes

    def batches(self, topic: str, partition: int, start: int = 0) -> Iterator[Any]:
        """The raw record batches of ``topic``-``partition`` from ``start`` up to the end of
        the log when the first fetch answered (its high watermark), control batches
        (transaction markers) included: a log that producers keep writing is read to an end,
        not chased. A fetch that brings nothing new ends the read. Each fetch is logged at
        debug level (its offset, the high watermark it reports, the batches it brought)."""
        connection = self._leader(topic, partition)
        offset, end = start, None
        while end is None or offset < end:
            high_watermark, fetched = connection.fetch(topic, partition, offset)
            log.debug(
                "Fetched %d batches of %s-%d from offset %d (high watermark %d)",
                len(fetched),
                topic,
                partition,
                offset,
                high_watermark,
            )
            end = high_watermark if end is None else end
            before = offset
            for batch in fetched:
                if batch.base_offset >= end:
                    return  # written after the first fetch
                if batch.next_offset > offset:
                    offset = batch.next_offset
                    yield batch
            if offset == before:  # the end of the log
                return

    def _leader(self, topic: str, partition: int) -> _Connection:
        metadata = self.admin.list_topics(topic, timeout=10)
        topic_metadata = metadata.topics.get(topic)
        if topic_metadata is None or partition not in topic_metadata.partitions:
            raise ConnectException(f"Partition {topic}-{partition} does not exist")
        broker = metadata.brokers[topic_metadata.partitions[partition].leader]
        assert broker.host is not None  # a broker in the metadata has an address
        address = (broker.host, broker.port)
        if address not in self.connections:
            self.connections[address] = _Connection(address, self.ssl_context)
        return self.connections[address]


def committed_records(batches: Iterable[Any], start: int = 0) -> list[CommittedRecord]:
    """The committed records of one partition's record ``batches`` (in log order), from
    offset ``start`` on, in offset order.

    A producer id's transactional batches stay open until its next control marker, which
    commits or aborts them. Producer epochs decide what a marker ends, as a Kafka broker
    enforces them: a batch of an epoch below one already seen for its producer id is the
    late write of a fenced producer (left out); batches still open when a higher epoch of
    their producer id writes belong to a transaction that was fenced and never ended
    (aborted); a marker ends an open transaction only when that transaction's epoch is not
    above the marker's (a fenced producer's late marker leaves its successor's open). On
    Kafka these cases never arise; the test broker (tansu 0.6) accepts a zombie's
    in-flight write while the fencing InitProducerId of its transactional id runs, and
    its successor, which has the same producer id, would otherwise seem to commit it.
    """
    pending: dict[int, tuple[int, list[CommittedRecord]]] = {}  # open, by producer id: epoch
    epochs: dict[int, int] = {}  # the highest epoch seen per producer id
    committed: list[CommittedRecord] = []
    for batch in batches:
        producer, epoch = batch.producer_id, batch.producer_epoch
        if batch.is_control_batch:
            epochs[producer] = max(epoch, epochs.get(producer, epoch))
            if producer in pending and pending[producer][0] <= epoch:
                _, records = pending.pop(producer)
                if next(iter(batch)).commit:
                    committed.extend(records)
            continue
        records = [_record(r) for r in batch if r.offset >= start]
        if not batch.is_transactional:
            committed.extend(records)
            continue
        latest = epochs.get(producer, epoch)
        if epoch < latest:
            continue  # written by a producer whose epoch was fenced
        epochs[producer] = epoch
        if epoch > latest:
            pending.pop(producer, None)  # fenced before its transaction ended
        pending.setdefault(producer, (epoch, []))[1].extend(records)
    return sorted(committed, key=lambda r: r.offset)


def _record(record: Any) -> CommittedRecord:
    return CommittedRecord(
        record.offset, record.key, record.value, list(record.headers), record.timestamp
    )


def _ssl_context(config: dict[str, str]) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=config.get("ssl.ca.location"))
    if "ssl.certificate.location" in config:
        context.load_cert_chain(
            config["ssl.certificate.location"],
            config.get("ssl.key.location"),
            config.get("ssl.key.password"),
        )
    if config.get("ssl.endpoint.identification.algorithm", "https") == "none":
        context.check_hostname = False
    return context


class _Connection:
    """One broker connection speaking just enough of the protocol to fetch raw batches."""

    def __init__(self, address: tuple[str, int], context: ssl.SSLContext | None) -> None:
        sock = socket.create_connection(address, timeout=30)
        self.sock = context.wrap_socket(sock, server_hostname=address[0]) if context else sock
        self.correlation = count(1)

    def close(self) -> None:
        self.sock.close()

    def fetch(self, topic: str, partition: int, offset: int) -> tuple[int, list[Any]]:
        """The partition's high watermark and its record batches from ``offset`` on (none
        once the log ends there)."""
        name = topic.encode()
        body = struct.pack(
            f">iiiibih{len(name)}siiqi",
            -1,  # replica id: a consumer
            FETCH_MAX_WAIT_MS,
            1,  # min bytes: some brokers answer an empty response to min bytes 0
            FETCH_MAX_BYTES,
            0,  # read_uncommitted: the markers decide
            1,
            len(name),
            name,
            1,
            partition,
            offset,
            FETCH_MAX_BYTES,
        )
        response = self._call(FETCH_API_KEY, FETCH_VERSION, body)
        return _fetched_batches(response, topic, partition)

    def _call(self, api_key: int, version: int, body: bytes) -> memoryview:
        correlation = next(self.correlation)
        client = b"connect-committed-reader"
        header = struct.pack(
            f">hhih{len(client)}s", api_key, version, correlation, len(client), client
        )
        self.sock.sendall(struct.pack(">i", len(header) + len(body)) + header + body)
        (size,) = struct.unpack(">i", self._receive(4))
        response = memoryview(self._receive(size))
        (got,) = struct.unpack_from(">i", response)
        if got != correlation:
            raise ConnectException(f"Broker answered request {got}, expected {correlation}")
        return response[4:]

    def _receive(self, size: int) -> bytes:
        chunks, remaining = [], size
        while remaining:
            chunk = self.sock.recv(min(remaining, 1 << 20))
            if not chunk:
                raise ConnectException("Broker closed the connection")
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)


def _fetched_batches(response: memoryview, topic: str, partition: int) -> tuple[int, list[Any]]:
    """Parses a Fetch v4 response for one partition into its high watermark and record
    batches."""
    position = 4  # throttle time
    (topics,) = struct.unpack_from(">i", response, position)
    position += 4
    batches: list[Any] = []
    high_watermark = 0
    for _ in range(topics):
        (length,) = struct.unpack_from(">h", response, position)
        position += 2 + length
        (partitions,) = struct.unpack_from(">i", response, position)
        position += 4
        for _ in range(partitions):
            _id, error, high_watermark = struct.unpack_from(">ihq", response, position)
            position += 6 + 8 + 8  # and the last stable offset
            (aborted,) = struct.unpack_from(">i", response, position)
            position += 4 + max(aborted, 0) * 16
            (size,) = struct.unpack_from(">i", response, position)
            position += 4
            if error:
                raise ConnectException(f"Fetching {topic}-{partition} failed: error code {error}")
            if size > 0:
                records = MemoryRecords(bytes(response[position : position + size]))
                position += size
                while (batch := records.next_batch()) is not None:
                    batches.append(batch)
    return high_watermark, batches
