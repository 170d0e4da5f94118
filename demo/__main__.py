"""``make demo``: the runtime's main job on the embedded defaults.

Starts a local broker and the runtime (SQLite metadata database, local Spark, REST API on
loopback), creates a file source and a file sink through the REST API, shows lines
travelling from an input file through Kafka to an output file with a live count, runs the
``connector_lifecycle`` example DAG (Airflow in a temporary home) to replay the topic into
a second file, deletes the connectors and waits for their cleanup, stops everything it
started, and prints a summary with the times it measured. While it waits it says for what.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.store import DeletionState
from demo.progress import Progress
from tests_common.broker import EmbeddedBroker, free_port
from tests_common.processes import rest

DAGS = Path(__file__).resolve().parents[1] / "dags"
LINES = 200_000
TOPIC = "demo-lines"
END_MARKER = (
    b'{"schema":{"type":"string","optional":false},"payload":"-- end of the demo input --"}'
)


def wait_for(condition: Any, timeout_s: float = 120) -> float:
    """Seconds until ``condition()`` held."""
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout_s:
            raise TimeoutError("the demo did not reach the expected state in time")
        time.sleep(0.05)
    return time.monotonic() - start


def count_lines(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


def run_lifecycle_dag(work: Path, metadata_url: str, api: str) -> tuple[Path, float]:
    """Runs ``dags/connector_lifecycle.py`` once with ``dag.test()``: a FileStreamSink
    replays the topic into a file; prints each task's state and duration."""
    os.environ["AIRFLOW_HOME"] = str(work / "airflow")
    os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
    os.environ["AIRFLOW__CORE__DAGS_FOLDER"] = str(DAGS)  # dag.test() serializes from here
    os.environ["AIRFLOW__LOGGING__LOGGING_LEVEL"] = "ERROR"  # dag.test() warns while it waits
    os.environ["AIRFLOW_CONN_CONNECT_DEFAULT"] = json.dumps(
        {"conn_type": "connect", "extra": {"metadata_url": metadata_url, "rest_url": api}}
    )
    from airflow.dag_processing.dagbag import DagBag
    from airflow.utils import db

    with Progress("Airflow's database"), contextlib.redirect_stdout(io.StringIO()):
        db.initdb()  # (its setup chatter hidden)
        dag = DagBag(dag_folder=str(DAGS)).dags["connector_lifecycle"]
    replay = work / "replay.txt"
    config = {"connector.class": "FileStreamSink", "topics": TOPIC, "file": str(replay)}
    started = time.monotonic()
    with Progress("the connector_lifecycle DAG's run"), contextlib.redirect_stdout(io.StringIO()):
        dag_run = dag.test(run_conf={"connector_name": "lines-replay", "config": config})
    took = time.monotonic() - started
    print(f"5. Ran the connector_lifecycle DAG: {dag_run.state} in {took:.1f}s")
    for ti in sorted(dag_run.get_task_instances(), key=lambda t: t.start_date):
        print(f"   {ti.task_id:<10} {ti.state!s:<8} {ti.duration or 0:5.1f}s")
    return replay, took


SHOWN_METRICS = (
    "kafka_connect_source_task_source_record_poll_total",
    "kafka_connect_source_task_source_record_write_total",
    "kafka_connect_sink_task_sink_record_read_total",
    "kafka_connect_sink_task_sink_record_send_total",
    "kafka_connect_sink_task_partition_committed_offset",
    "kafka_connect_connector_task_offset_commit_success_total",
    "kafka_connect_worker_task_running_count",
    "kafka_connect_worker_spark_task_slots",
)


def metrics_excerpt(api: str) -> list[str]:
    """The lines of ``GET /metrics`` the demo shows."""
    with urllib.request.urlopen(f"{api}/metrics", timeout=10) as response:
        text = response.read().decode()
    return [line for line in text.splitlines() if line.split("{")[0].split(" ")[0] in SHOWN_METRICS]


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="connect-demo-") as tmp, EmbeddedBroker() as broker:
        work = Path(tmp)
        source, sink = work / "input.txt", work / "output.txt"
        source.write_text("".join(f"line {i:06d} of the demo input\n" for i in range(LINES)))
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(timeout=30)
        del admin  # its connection must not outlive the broker
        print(f"1. Broker on {broker.bootstrap_servers}; {LINES:,} lines in {source.name}")

        port = free_port()
        worker = {
            "bootstrap.servers": broker.bootstrap_servers,
            "metadata.url": f"sqlite:///{work / 'metadata.db'}",
            "listeners": f"http://127.0.0.1:{port}",
            "offset.flush.interval.ms": "1000",
            "consumer.session.timeout.ms": "6000",  # the local broker assigns groups after half of it
            "spark.master": "local[4]",
        }
        started = time.monotonic()
        connect = Connect("demo", worker)
        with Progress("Spark and the runtime to start"):
            connect.start(rest=True)
        connect.spark.sparkContext.setLogLevel("ERROR")
        api = f"http://127.0.0.1:{port}"
        print(
            f"2. Runtime up in {time.monotonic() - started:.1f}s (Spark {connect.spark.version}); REST API on {api}"
        )

        try:
            created = time.monotonic()
            rest(
                "POST",
                f"{api}/connectors",
                {
                    "name": "lines-in",
                    "config": {
                        "connector.class": "FileStreamSource",
                        "file": str(source),
                        "topic": TOPIC,
                    },
                },
            )
            rest(
                "POST",
                f"{api}/connectors",
                {
                    "name": "lines-out",
                    "config": {
                        "connector.class": "FileStreamSink",
                        "file": str(sink),
                        "topics": TOPIC,
                    },
                },
            )

            def running() -> bool:
                statuses = [
                    rest("GET", f"{api}/connectors/{n}/status") for n in ("lines-in", "lines-out")
                ]
                return all(
                    s["connector"]["state"] == "RUNNING"
                    and [t["state"] for t in s["tasks"]] == ["RUNNING"]
                    for s in statuses
                )

            with Progress("lines-in and lines-out to be RUNNING"):
                to_running = wait_for(running)
            print(
                f"3. Created lines-in and lines-out through REST; all RUNNING after {to_running:.1f}s"
            )
            print(f"   GET /connectors -> {rest('GET', f'{api}/connectors')}")

            flow_start = time.monotonic()
            first_at = None
            done = 0
            while done < LINES:
                done = count_lines(sink)
                if done and first_at is None:
                    first_at = time.monotonic()
                sys.stdout.write(
                    f"\r4. Lines through Kafka into {sink.name}: {done:>9,} / {LINES:,}"
                )
                sys.stdout.flush()
                if time.monotonic() - flow_start > 300:
                    raise TimeoutError("the lines did not all arrive")
                time.sleep(0.25)
            finished = time.monotonic()
            assert first_at is not None
            rate = LINES / max(finished - first_at, 0.25)  # the count is sampled every 0.25s
            same = sink.read_bytes() == source.read_bytes()
            print(
                f"\n   first line out after {first_at - flow_start:.1f}s (the sink's consumer group join), "
                f"all {LINES:,} after {finished - flow_start:.1f}s: ~{rate:,.0f} lines/s once flowing; "
                f"output identical to input: {same}"
            )
            print("   GET /metrics (an excerpt; the counters as of each task's last heartbeat):")
            for line in metrics_excerpt(api):
                print(f"     {line}")

            # The embedded broker reports a partition's end offset as its last batch's first
            # offset + 1 (a real cluster reports the true end); a final one-record batch
            # makes it exact for the DAG's "caught up" sensor.
            producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
            producer.produce(TOPIC, END_MARKER)
            producer.flush(30)
            del producer
            replay, dag_took = run_lifecycle_dag(work, worker["metadata.url"], api)
            replayed = count_lines(replay)
            print(
                f"   records moved by the DAG's connector (topic -> {replay.name}): "
                f"{replayed:,} of {LINES + 1:,} (the lines and an end marker)"
            )

            deleted = time.monotonic()
            for name in ("lines-in", "lines-out"):
                rest("DELETE", f"{api}/connectors/{name}")
            cleanup = wait_for(
                lambda: all(
                    (d := connect.store.configs.deletion(n)) is not None
                    and d.state is not DeletionState.PENDING
                    for n in ("lines-in", "lines-out")
                )
            )
            outcomes = {
                n: connect.store.configs.deletion(n).state.value for n in ("lines-in", "lines-out")
            }
            print(
                f"6. Deleted both through REST; connectorDeleted cleanup finished after {cleanup:.1f}s: {outcomes}"
            )
            print(f"   GET /connectors -> {rest('GET', f'{api}/connectors')}")
        finally:
            with Progress("the runtime and Spark to stop"):
                connect.stop()
                connect.spark.stop()
        print("7. Stopped the runtime, Spark and the broker.")
        print(
            f"\nSummary: create -> RUNNING {to_running:.1f}s (created {created - started:.1f}s after start); "
            f"{LINES:,} lines file -> Kafka -> file at ~{rate:,.0f} lines/s once flowing; "
            f"connector_lifecycle DAG run {dag_took:.1f}s ({replayed:,} records); "
            f"delete -> cleaned up {cleanup:.1f}s (deleted {deleted - flow_start:.1f}s after the flow began)."
        )


if __name__ == "__main__":
    main()
