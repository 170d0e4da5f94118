"""iceberg_replica_report: runs when ``postgres_to_iceberg``'s sink has committed to its
Iceberg table.

The DAG is scheduled on the table (``iceberg_replica.py``), an asset watched by
``ConnectorCommitTrigger``: when the sink ``orders-lake-replica`` has committed new offsets,
the triggerer records an asset event whose ``extra`` says what was committed, and the
scheduler starts a run (the commits of half a minute make one). The sink task of
``postgres_to_iceberg`` has the table as its outlet, so its success runs the DAG too, with
an event that is no commit.

Its one task reports the records the triggering commit events say were committed and the
table's current snapshot: its id, the sink's commit id and the totals of its summary (rows
in data files, and deletes: an upserted table's rows are the former less the latter), read
from the catalog with pyiceberg, imported by the task only. It is unpaused when it appears,
so that the watcher runs from the start.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from airflow.sdk import DAG, task
from iceberg_replica import CATALOG, TABLE, replica_orders  # beside this file

TOTALS = ("total-records", "total-equality-deletes", "total-position-deletes")

with DAG(
    dag_id="iceberg_replica_report",
    description="Report each commit of postgres_to_iceberg's sink to its Iceberg table",
    schedule=[replica_orders],
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    catchup=False,
    is_paused_upon_creation=False,
    tags=["kafka-connect", "iceberg"],
    doc_md=__doc__,
) as dag:

    @task
    def report(triggering_asset_events: Any = None) -> dict[str, Any]:
        """The records the triggering commit events report, and the table's current
        snapshot (None before the sink's first commit)."""
        from pyiceberg.catalog import load_catalog
        from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

        events = [e for found in (triggering_asset_events or {}).values() for e in found]
        # Airflow keeps a trigger's event under "payload" in the asset event's extra; the
        # sink task's event has none.
        commits = [e.extra["payload"] for e in events if "payload" in (e.extra or {})]
        records = sum(int(c["records"]) for c in commits)
        try:
            snapshot = load_catalog("iceberg", **CATALOG).load_table(TABLE).current_snapshot()
        except (NoSuchNamespaceError, NoSuchTableError):
            snapshot = None
        summary = snapshot.summary if snapshot is not None and snapshot.summary else None
        found = {
            "snapshot_id": snapshot.snapshot_id if snapshot is not None else None,
            "commit_id": summary.get("kafka.connect.commit-id") if summary else None,
            **{k: int(summary.get(k) or 0) if summary else 0 for k in TOTALS},
        }
        print(f"{len(commits)} commit events: {records} records committed; {found}")
        return {"events": len(commits), "records": records, **found}

    report()
