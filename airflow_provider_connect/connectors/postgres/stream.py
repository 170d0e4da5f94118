"""The replication connection: creating the slot (with its exported snapshot), streaming
``pgoutput`` (with logical decoding messages) from it with psycopg2's
``LogicalReplicationConnection``, and confirming positions back to the server.

psycopg2, not psycopg 3: psycopg 3 has no replication protocol API. Between reads, psycopg2
answers the server's keepalive requests and sends status every ``status_interval`` with
the last position given to :meth:`ReplicationStream.confirm`, never beyond it.
"""

from __future__ import annotations

import select
import time
from typing import Any

from airflow_provider_connect.connectors.postgres.database import require_psycopg2
from airflow_provider_connect.connectors.postgres.pgoutput import parse_lsn


class ReplicationStream:
    """One replication connection to the captured database. Not thread-safe: one thread
    creates, starts, reads and confirms."""

    def __init__(self, parameters: dict[str, Any], slot: str, status_interval_s: float) -> None:
        psycopg2 = require_psycopg2()
        self.slot = slot
        self.status_interval_s = status_interval_s
        self.connection = psycopg2.connect(
            **parameters, connection_factory=psycopg2.extras.LogicalReplicationConnection
        )
        self.cursor = self.connection.cursor()
        self.streaming = False
        self.confirmed = 0

    def create_slot(self, export_snapshot: bool) -> tuple[int, str | None]:
        """Creates the slot for ``pgoutput``; returns its consistent point and, when asked,
        the name of the snapshot it exported (valid until this connection's next command:
        import it before :meth:`start`)."""
        mode = "EXPORT_SNAPSHOT" if export_snapshot else "NOEXPORT_SNAPSHOT"
        self.cursor.execute(f'CREATE_REPLICATION_SLOT "{self.slot}" LOGICAL pgoutput {mode}')
        _, consistent_point, snapshot, _ = self.cursor.fetchone()
        return parse_lsn(consistent_point), snapshot

    def start(self, publication: str, start_lsn: int) -> None:
        """Streams the slot's changes of ``publication`` from ``start_lsn`` (the server
        starts at the slot's confirmed position when that is later), and, from PostgreSQL
        14 on, the logical decoding messages (pgoutput's ``messages``, as Debezium asks)."""
        quoted = '"' + publication.replace('"', '""') + '"'
        options = {"proto_version": "1", "publication_names": quoted}
        if self.connection.server_version >= 140000:
            options["messages"] = "true"
        self.cursor.start_replication(
            slot_name=self.slot,
            decode=False,
            start_lsn=start_lsn,
            options=options,
            status_interval=max(1.0, self.status_interval_s),  # psycopg2's least
        )
        self.streaming = True

    def read(self, max_messages: int, timeout_s: float) -> list[tuple[int, bytes]]:
        """Up to ``max_messages`` ``(lsn, payload)``: what has arrived, or the first ones to
        arrive within ``timeout_s`` (empty when none did)."""
        messages: list[tuple[int, bytes]] = []
        deadline = time.monotonic() + timeout_s
        read_message = self.cursor.read_message
        while len(messages) < max_messages:
            message = read_message()
            if message is not None:
                messages.append((message.data_start, message.payload))
                continue
            remaining = deadline - time.monotonic()
            if messages or remaining <= 0:
                break
            select.select([self.cursor], [], [], min(remaining, self.status_interval_s))
        return messages

    @property
    def server_position(self) -> int:
        """The position the server says it has sent everything up to (its last keepalive
        or message): every transaction committed before it has been received."""
        return int(self.cursor.wal_end or 0)

    def confirm(self, lsn: int) -> None:
        """Tells the server the changes before ``lsn`` are safely stored: the slot may
        release the log they need (never moves back)."""
        if self.streaming and lsn > self.confirmed:
            self.cursor.send_feedback(write_lsn=lsn, flush_lsn=lsn, force=True)
            self.confirmed = lsn

    def close(self) -> None:
        self.connection.close()
