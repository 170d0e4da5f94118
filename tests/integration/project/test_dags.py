"""The example DAGs run end to end with ``dag.test()`` against a live runtime, the test
broker and Spark, non-deferrable and deferrable (triggers run in line)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import psycopg
import pytest
from airflow.dag_processing.dagbag import DagBag
from airflow.models.renderedtifields import RenderedTaskInstanceFields

from airflow_provider_connect.operators.connector import DeleteConnectorOperator
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.store import DeletionState, MetadataStore
from tests.connectors import EVENTS, PLAIN, read_events, recording_source
from tests_common.broker import free_port
from tests_common.kafka import new_topic, produce, read_values, wait_until
from tests_common.mariadb import mariadb_server_or_skip
from tests_common.postgres_cluster import PostgresCluster

pytestmark = pytest.mark.integration

DAGS = Path(__file__).resolve().parents[3] / "dags"


@pytest.fixture(scope="session")
def airflow_db() -> None:
    """Airflow's own database (in the test session's AIRFLOW_HOME), which dag.test() uses."""
    from airflow.utils import db

    db.initdb()


@pytest.fixture
def stack(airflow_db: None, connection: str, connect: Connect) -> None:
    """Airflow, its connection to the metadata store, and a runtime on that store."""


@pytest.fixture(params=[False, True], ids=["poke", "deferrable"])
def deferrable(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Operators and sensors read ``[operators] default_deferrable`` when the DAG is parsed."""
    monkeypatch.setenv("AIRFLOW__OPERATORS__DEFAULT_DEFERRABLE", str(request.param))
    return request.param


def load_dag(dag_id: str) -> Any:
    bag = DagBag(dag_folder=str(DAGS))
    assert bag.import_errors == {}
    return bag.dags[dag_id]


def task_states(dag_run: Any) -> dict[str, str]:
    return {ti.task_id: str(ti.state) for ti in dag_run.get_task_instances()}


def assert_cleaned_up(store: MetadataStore, name: str) -> None:
    """The connector is gone and its connectorDeleted cleanup ran."""
    deletion = store.configs.deletion(name)
    assert deletion is not None and deletion.state is DeletionState.DONE
    assert name not in [c.name for c in store.configs.connectors(include_deleted=True)]


def recording_sink(events: Path, topic: str) -> dict[str, str]:
    return {
        "connector.class": "tests.connectors.RecordingSinkConnector",
        EVENTS: str(events),
        "topics": topic,
        **PLAIN,
    }


def test_connector_lifecycle(
    stack: None,
    deferrable: bool,
    store: MetadataStore,
    bootstrap: str,
    tmp_path: Path,
) -> None:
    topic = new_topic(bootstrap)
    values = [f"v{i}".encode() for i in range(300)]
    produce(bootstrap, topic, values, one_per_batch=True)
    events = tmp_path / "events.jsonl"
    dag = load_dag("connector_lifecycle")
    assert dag.get_task("caught_up").deferrable is deferrable
    dag_run = dag.test(
        run_conf={"connector_name": "lifecycle", "config": recording_sink(events, topic)}
    )
    assert task_states(dag_run) == {
        "create": "success",
        "healthy": "success",
        "caught_up": "success",
        "delete": "success",
    }
    assert str(dag_run.state) == "success"
    seen = [e for e in read_events(events) if e["event"] == "put"]
    assert sorted({v for e in seen for v in e["values"]}) == sorted(v.decode() for v in values)
    stops = [e for e in read_events(events) if e["event"] in ("task.stop", "connector.stop")]
    assert stops and all(e["deleted"] for e in stops)
    assert_cleaned_up(store, "lifecycle")


def test_teardown_cleans_up_when_a_task_between_fails(
    stack: None,
    store: MetadataStore,
    bootstrap: str,
    tmp_path: Path,
) -> None:
    events = tmp_path / "events.jsonl"
    config = recording_source(
        events, new_topic(bootstrap), {"fail.after": "0", "sasl.jaas.config": "hunter2"}
    )
    dag_run = load_dag("connector_lifecycle").test(
        run_conf={"connector_name": "failing", "config": config, "source_offset": {"next": 10}}
    )
    states = task_states(dag_run)
    assert str(dag_run.state) == "failed"
    assert states["create"] == "success" and states["delete"] == "success"
    assert "failed" in (states["healthy"], states["caught_up"])
    stops = [e for e in read_events(events) if e["event"] == "task.stop"]
    assert stops and stops[-1]["deleted"] is True  # the cleanup run stopped it as deleted
    assert_cleaned_up(store, "failing")
    create = next(ti for ti in dag_run.get_task_instances() if ti.task_id == "create")
    rendered = RenderedTaskInstanceFields.get_templated_fields(create)
    assert rendered["config"]["sasl.jaas.config"] == "***"
    assert "hunter2" not in json.dumps(rendered)
    assert create.xcom_pull(task_ids="create")["config"]["sasl.jaas.config"] == "[hidden]"


def test_daily_file_ingestion(
    stack: None,
    deferrable: bool,
    store: MetadataStore,
    bootstrap: str,
    tmp_path: Path,
) -> None:
    topic = new_topic(bootstrap)
    day = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)
    lines = [f"line {i}" for i in range(2_000)]
    (tmp_path / "2026-11-20.txt").write_text("".join(f"{line}\n" for line in lines))
    dag = load_dag("daily_file_ingestion")
    assert dag.get_task("all_read").deferrable is deferrable
    dag_run = dag.test(logical_date=day, run_conf={"input_dir": str(tmp_path), "topic": topic})
    assert str(dag_run.state) == "success", task_states(dag_run)
    arrived = read_values(bootstrap, topic, len(lines))
    assert {v.decode() for v in arrived if v is not None} == set(lines)  # at least once
    assert_cleaned_up(store, "daily-file-ingestion")


def replica_equal_then_capture_deleted(
    store: MetadataStore, replica: str, expected: list[tuple[Any, ...]], name: str
) -> None:
    """Waits until the replica's ``orders`` (``id``, ``item``), in the PostgreSQL database
    ``replica``, equal ``expected``; then deletes the replication DAG's capture connector as a
    teardown task would, and checks its cleanup ran."""

    def replicated() -> list[tuple[Any, ...]]:
        with psycopg.connect(replica, autocommit=True) as conn:
            return conn.execute("SELECT id, item FROM orders ORDER BY id").fetchall()

    wait_until(lambda: replicated() == expected, 120, "the replica equal to the source")
    DeleteConnectorOperator(
        task_id="teardown", connector_name=f"{name}-capture", poll_interval=0.2, timeout=60
    ).execute(context={})
    assert_cleaned_up(store, f"{name}-capture")


def test_postgres_replication(
    stack: None, store: MetadataStore, connection: str, pg_cluster: PostgresCluster
) -> None:
    """The DAG snapshots a table, streams its changes into a replica and backfills it; a
    teardown's delete of the capture connector then drops its slot (KIP-901)."""
    source, replica = (f"dagrep{free_port()}", f"dagreplica{free_port()}")
    admin = psycopg.connect(pg_cluster.dsn, autocommit=True)
    for database in (source, replica):
        admin.execute(f"CREATE DATABASE {database}")
    admin.close()
    base = pg_cluster.dsn.rsplit("/", 1)[0]
    with psycopg.connect(f"{base}/{source}", autocommit=True) as conn:
        conn.execute("CREATE TABLE orders (id INT PRIMARY KEY, item TEXT NOT NULL)")
        conn.execute(
            "CREATE TABLE debezium_signal (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, "
            "data TEXT)"
        )
        conn.execute("INSERT INTO orders SELECT g, 'item ' || g FROM generate_series(1, 100) g")
    name = f"rep{free_port()}"
    dag_run = load_dag("postgres_replication").test(
        run_conf={
            "name": name,
            "port": pg_cluster.port,
            "dbname": source,
            "replica_url": f"postgresql+psycopg://postgres@127.0.0.1:{pg_cluster.port}/{replica}",
        }
    )
    assert str(dag_run.state) == "success", task_states(dag_run)
    with psycopg.connect(f"{base}/{source}", autocommit=True) as conn:
        conn.execute("UPDATE orders SET item = 'changed' WHERE id <= 10")
        conn.execute("DELETE FROM orders WHERE id > 90")
        expected = conn.execute("SELECT id, item FROM orders ORDER BY id").fetchall()

    replica_equal_then_capture_deleted(store, f"{base}/{replica}", expected, name)
    with psycopg.connect(f"{base}/{source}", autocommit=True) as conn:
        slots = conn.execute("SELECT count(*) FROM pg_replication_slots").fetchone()
    assert slots == (0,)


def test_mariadb_replication(
    stack: None, store: MetadataStore, connection: str, pg_cluster: PostgresCluster
) -> None:
    """The DAG snapshots a table of a private MariaDB server, streams its changes from the
    binlog into a PostgreSQL replica and backfills it (IncrementalSnapshotOperator writes the
    signal row, on the connector's own connection); a teardown's delete of the capture
    connector then removes the backfill's window rows from the signal table, and nothing
    else (KIP-901)."""
    replica = f"dagmariadb{free_port()}"
    with psycopg.connect(pg_cluster.dsn, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {replica}")
    base = pg_cluster.dsn.rsplit("/", 1)[0]
    with mariadb_server_or_skip() as mariadb:
        mariadb.execute(
            "CREATE DATABASE shop",
            "CREATE TABLE shop.orders (id INT PRIMARY KEY, item VARCHAR(40) NOT NULL)",
            "CREATE TABLE shop.debezium_signal (id VARCHAR(42) PRIMARY KEY, "
            "type VARCHAR(32) NOT NULL, data VARCHAR(2048))",
            "INSERT INTO shop.orders SELECT seq, concat('item ', seq) FROM shop.seq_1_to_100",
        )
        name = f"maria{free_port()}"
        server = mariadb.connector_config()
        dag_run = load_dag("mariadb_replication").test(
            run_conf={
                "name": name,
                "port": mariadb.port,
                "server_id": int(server["database.server.id"]),
                "replica_url": f"postgresql+psycopg://postgres@127.0.0.1:{pg_cluster.port}/"
                f"{replica}",
            }
        )
        assert str(dag_run.state) == "success", task_states(dag_run)
        backfill = next(ti for ti in dag_run.get_task_instances() if ti.task_id == "backfill")
        signal_id = backfill.xcom_pull(task_ids="backfill")["signal_id"]
        signals = "SELECT id, type FROM shop.debezium_signal ORDER BY type"
        windows = "SELECT count(*) FROM shop.debezium_signal WHERE type LIKE 'snapshot-window-%'"
        wait_until(lambda: mariadb.query(windows) == [(2,)], 60, "the backfill's window rows")
        assert (signal_id, "execute-snapshot") in mariadb.query(signals)
        mariadb.execute(
            "UPDATE shop.orders SET item = 'changed' WHERE id <= 10",
            "DELETE FROM shop.orders WHERE id > 90",
            "INSERT INTO shop.orders VALUES (101, 'streamed')",
        )
        expected = mariadb.query("SELECT id, item FROM shop.orders ORDER BY id")
        replica_equal_then_capture_deleted(store, f"{base}/{replica}", expected, name)
        assert mariadb.query(signals) == [(signal_id, "execute-snapshot")]
        assert mariadb.query("SELECT count(*) FROM shop.orders") == [(91,)]
