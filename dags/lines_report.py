"""lines_report: runs when ``file_to_table``'s sink has committed new lines to its table.

The DAG is scheduled on the table, an asset watched by ``ConnectorCommitTrigger``: when
the sink ``lines-sink`` has committed new offsets, the triggerer records an asset event
whose ``extra`` says what was committed (``records``, ``positions``, ``changed``), and the
scheduler starts a run. With ``min_interval=30`` the commits of half a minute make one
event, and one run, not one each. ``file_to_table``'s sink task has the table as its
outlet (the asset graph shows it writing the table), so its success runs the DAG too, with
an event that is no commit.

Its one task reports the records the triggering commit events say were committed, and the
rows the table holds now: where a real pipeline would run its models on the new batch. It
is unpaused when it appears, so that the watcher runs from the start: every line
``file_to_table`` writes (with its defaults) is reported, once.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from airflow.sdk import DAG, task
from lines_table import DATABASE_URL, TABLE, committed_lines  # beside this file
from sqlalchemy import create_engine, text

with DAG(
    dag_id="lines_report",
    description="Report each batch of lines file_to_table's sink commits",
    schedule=[committed_lines],
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    catchup=False,
    is_paused_upon_creation=False,
    tags=["kafka-connect"],
    doc_md=__doc__,
) as dag:

    @task
    def report(triggering_asset_events: Any = None) -> dict[str, int]:
        """The records the triggering commit events report, and the table's rows now."""
        events = [e for found in (triggering_asset_events or {}).values() for e in found]
        # Airflow keeps a trigger's event under "payload" in the asset event's extra; the
        # sink task's event has none.
        commits = [e.extra["payload"] for e in events if "payload" in (e.extra or {})]
        records = sum(int(c["records"]) for c in commits)
        engine = create_engine(DATABASE_URL)
        try:
            with engine.connect() as connection:
                rows = connection.execute(text(f"SELECT count(*) FROM {TABLE}")).scalar_one()
        finally:
            engine.dispose()
        print(f"{len(commits)} commit events: {records} records committed; {rows} rows")
        return {"events": len(commits), "records": records, "rows": int(rows)}

    report()
