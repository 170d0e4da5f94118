"""The connector operators against real metadata stores (SQLite and PostgreSQL), and with a
live runtime where they wait; and with the metadata database away (a port nothing listens
on, a private PostgreSQL cluster crashed under a running operator). A raised exception is
how an operator fails its task."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from airflow.sdk.exceptions import AirflowException

from airflow_provider_connect.connect.errors import AlreadyExistsException, NotFoundException
from airflow_provider_connect.control.validation import ConfigValidationError
from airflow_provider_connect.hooks.connect import ConnectorFailedError
from airflow_provider_connect.links.connector import ConnectorStatusLink
from airflow_provider_connect.operators.connector import (
    CreateConnectorOperator,
    DeleteConnectorOperator,
    PauseConnectorOperator,
    RestartConnectorOperator,
    ResumeConnectorOperator,
    StopConnectorOperator,
    UpdateConnectorOperator,
)
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.store import DeletionState, MetadataStore, TargetState
from tests.connectors import recording_source
from tests.integration.triggers.test_triggers import Output, outage_connection
from tests_common.broker import free_port
from tests_common.kafka import new_topic, wait_until
from tests_common.postgres_cluster import PostgresCluster

# On both stores: the operators write through the hook to either kind.
pytestmark = [pytest.mark.integration, pytest.mark.both_stores]

FAST = {"poll_interval": 0.2, "timeout": 60, "deferrable": False}


def run(operator: Any) -> Any:
    return operator.execute(context={})


def file_source(**extra: str) -> dict[str, str]:
    return {"connector.class": "FileStreamSource", "file": "/tmp/in.txt", "topic": "t", **extra}


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ({"connector.class": "no.such.Connector"}, ["no.such.Connector"]),
        ({"connector.class": "FileStreamSource", "file": "/tmp/in.txt"}, ['"topic"']),
        (file_source(**{"tasks.max": "many"}), ["tasks.max", "many"]),
        (
            {"connector.class": "FileStreamSink", "file": "/tmp/out.txt"},
            [
                "1 error(s)",
                "\ntopics, topics.regex: Must configure one of topics or topics.regex\n",
            ],
        ),
    ],
    ids=["unknown plugin", "missing required field", "bad value type", "one error, two keys"],
)
def test_invalid_configs_fail_the_task_and_write_nothing(
    connection: str, store: MetadataStore, config: dict[str, str], named: list[str]
) -> None:
    with pytest.raises(ConfigValidationError) as error:
        run(CreateConnectorOperator(task_id="c", connector_name="bad", config=config, **FAST))
    for text in named:
        assert text in str(error.value)
    assert store.configs.connectors(include_deleted=True) == []


def test_unknown_connectors_fail_update_and_delete(
    connection: str, store: MetadataStore, tmp_path: Path
) -> None:
    with pytest.raises(NotFoundException, match="Connector ghost not found"):
        run(UpdateConnectorOperator(task_id="u", connector_name="ghost", config=file_source()))
    with pytest.raises(AirflowException, match="Connector ghost not found"):
        run(DeleteConnectorOperator(task_id="d", connector_name="ghost"))
    assert run(DeleteConnectorOperator(task_id="d", connector_name="ghost", missing_ok=True)) == {
        "name": "ghost",
        "deletion": "ABSENT",
    }
    with pytest.raises(AirflowException, match="does not exist"):
        run(CreateConnectorOperator(task_id="c", connector_name="x", config_file="nope.json"))
    with pytest.raises(ValueError, match="if_exists"):
        CreateConnectorOperator(task_id="c", connector_name="x", config={}, if_exists="maybe")
    assert store.configs.connectors(include_deleted=True) == []


def test_config_from_json_and_properties_files(
    connection: str, store: MetadataStore, tmp_path: Path
) -> None:
    (tmp_path / "rest.json").write_text(json.dumps({"name": "a", "config": file_source()}))
    (tmp_path / "src.properties").write_text(
        "connector.class=FileStreamSource\nfile=/tmp/in.txt\ntopic=t\n"
    )
    run(
        CreateConnectorOperator(
            task_id="a",
            connector_name="a",
            config_file=str(tmp_path / "rest.json"),
            config={"tasks.max": 1, "errors.log.enable": True},
            wait_for_running=False,
        )
    )
    assert store.configs.connector("a").config == {
        **file_source(),
        "tasks.max": "1",
        "errors.log.enable": "true",
        "name": "a",
    }
    run(
        CreateConnectorOperator(
            task_id="b",
            connector_name="b",
            config_file=str(tmp_path / "src.properties"),
            wait_for_running=False,
        )
    )
    assert store.configs.connector("b").config == {**file_source(), "name": "b"}


def test_results_and_logs_never_hold_passwords(
    connection: str, store: MetadataStore, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = recording_source(tmp_path / "e.jsonl", "t", {"secret": "hunter2"})
    caplog.set_level(logging.DEBUG)
    result = run(
        CreateConnectorOperator(
            task_id="c", connector_name="rec", config=config, wait_for_running=False
        )
    )
    assert result["created"] is True and result["config"]["secret"] == "[hidden]"
    assert "hunter2" not in json.dumps(result) and "hunter2" not in caplog.text
    assert store.configs.connector("rec").config["secret"] == "hunter2"


def test_pause_resume_restart(connection: str, store: MetadataStore) -> None:
    store.configs.create_connector("f", file_source())
    run(PauseConnectorOperator(task_id="p", connector_name="f", wait=False))
    assert store.configs.connector("f").target_state is TargetState.PAUSED
    run(StopConnectorOperator(task_id="s", connector_name="f", wait=False))
    assert store.configs.connector("f").target_state is TargetState.STOPPED
    run(ResumeConnectorOperator(task_id="r", connector_name="f", wait=False))
    assert store.configs.connector("f").target_state is TargetState.STARTED
    run(RestartConnectorOperator(task_id="r", connector_name="f", include_tasks=True))
    run(RestartConnectorOperator(task_id="r", connector_name="f", connector_task_id=0))
    requests = store.configs.take_restart_requests()
    assert [(r.task_id, r.include_tasks) for r in requests] == [(None, True), (0, False)]


def test_status_link_opens_the_connectors_page(
    connection: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    operator = CreateConnectorOperator(task_id="c", connector_name="a b/c", config={})
    monkeypatch.setenv("AIRFLOW__API__BASE_URL", "https://airflow.example.com/team/")
    link = ConnectorStatusLink().get_link(operator, ti_key=None)
    # Airflow 3.3 frames the page inside its UI: /plugin/<view>/<the page's path>
    assert (
        link
        == "https://airflow.example.com/team/plugin/connectors/team/connect/?connector=a%20b%2Fc"
    )


def test_create_update_delete_with_a_runtime(
    connection: str, connect: Connect, store: MetadataStore, bootstrap: str, tmp_path: Path
) -> None:
    config = recording_source(tmp_path / "e.jsonl", new_topic(bootstrap), {"secret": "s3"})
    result = run(CreateConnectorOperator(task_id="c", connector_name="rec", config=config, **FAST))
    assert [t["state"] for t in result["status"]["tasks"]] == ["RUNNING"]

    update = UpdateConnectorOperator(
        task_id="u",
        connector_name="rec",
        config={"tasks.max": "2", "secret": "[hidden]"},
        partial=True,
        **FAST,
    )
    result = run(update)
    assert result["config_version"] == 2 and len(result["status"]["tasks"]) == 2
    generation, _ = store.configs.task_configs("rec")
    assert {s.generation for s in store.statuses.task_statuses("rec")} == {generation}
    assert store.statuses.connector_status("rec").config_version == 2  # type: ignore[union-attr]  # present: the test created it
    assert store.configs.connector("rec").config["secret"] == "s3"

    paused = run(PauseConnectorOperator(task_id="p", connector_name="rec", **FAST))
    assert [t["state"] for t in paused["status"]["tasks"]] == ["PAUSED", "PAUSED"]
    stopped = run(StopConnectorOperator(task_id="s", connector_name="rec", **FAST))
    assert stopped["status"]["connector"]["state"] == "STOPPED" and stopped["status"]["tasks"] == []
    resumed = run(ResumeConnectorOperator(task_id="r", connector_name="rec", **FAST))
    assert [t["state"] for t in resumed["status"]["tasks"]] == ["RUNNING", "RUNNING"]

    deleted = run(DeleteConnectorOperator(task_id="d", connector_name="rec", **FAST))
    assert deleted == {"name": "rec", "deletion": "DONE"}
    again = run(DeleteConnectorOperator(task_id="d", connector_name="rec", **FAST))
    assert again == {"name": "rec", "deletion": "ABSENT"}  # already gone


def test_failures_carry_the_trace(
    connection: str, connect: Connect, store: MetadataStore, bootstrap: str, tmp_path: Path
) -> None:
    failing = recording_source(
        tmp_path / "e.jsonl", new_topic(bootstrap), {"fail.on.start": "true"}
    )
    with pytest.raises(ConnectorFailedError, match="failed on purpose"):
        run(CreateConnectorOperator(task_id="c", connector_name="bad", config=failing, **FAST))

    stuck = recording_source(tmp_path / "s.jsonl", new_topic(bootstrap), {"fail.on.stop": "true"})
    run(CreateConnectorOperator(task_id="c", connector_name="stuck", config=stuck, **FAST))
    with pytest.raises(ConnectorFailedError, match="could not drop the audit table"):
        run(DeleteConnectorOperator(task_id="d", connector_name="stuck", **FAST))
    assert store.configs.deletion("stuck").state is DeletionState.FAILED  # type: ignore[union-attr]  # present: the test created it


# -- the metadata database away ---------------------------------------------------------------
RETRIES = "; the task fails, and Airflow retries it as its retries allow"


def test_an_unreachable_database_fails_the_task_naming_it_and_the_cause(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"postgresql+psycopg://connect:s3cret@127.0.0.1:{free_port()}/meta"
    conn_id = outage_connection(monkeypatch, url, 0.5)
    named = "The metadata database postgresql+psycopg://connect:***@127.0.0.1:"
    at_once = {"connect_conn_id": conn_id, "store_retry_timeout": 0}
    operators = [
        CreateConnectorOperator(task_id="c", connector_name="c", config=file_source(), **at_once),
        UpdateConnectorOperator(task_id="u", connector_name="c", config=file_source(), **at_once),
        PauseConnectorOperator(task_id="p", connector_name="c", **at_once),
        RestartConnectorOperator(task_id="r", connector_name="c", **at_once),
        DeleteConnectorOperator(task_id="d", connector_name="c", **at_once),
    ]
    for operator in operators:
        with pytest.raises(AirflowException) as failed:
            run(operator)
        message = str(failed.value)
        assert message.startswith(named) and message.endswith(f"Connection refused{RETRIES}")
        assert "is unreachable: connection failed: " in message and "s3cret" not in message

    output = Output(capsys)
    patient = PauseConnectorOperator(
        task_id="p", connector_name="c", connect_conn_id=conn_id, store_retry_timeout=2
    )
    with pytest.raises(AirflowException, match=r"Connection refused \(tried 2 times in \d+ s\)"):
        run(patient)
    (warned,) = output.lines("; trying again for up to 2 s")
    assert "[warning" in warned and named in warned


def in_a_thread(operator: Any) -> tuple[threading.Thread, list[Any]]:
    """Runs the operator on a thread; its result or exception lands in the list."""
    outcome: list[Any] = []

    def execute() -> None:
        try:
            outcome.append(run(operator))
        except Exception as e:
            outcome.append(e)

    thread = threading.Thread(target=execute)
    thread.start()
    return thread, outcome


@pytest.mark.parametrize(
    ("name", "before", "created"),
    [
        ("fresh", None, True),  # nothing written: the retry creates it
        ("committed", file_source(), True),  # the first try's write: no AlreadyExists
        ("taken", file_source(topic="other"), AlreadyExistsException),  # another config
    ],
)
def test_a_create_tried_again_after_an_outage_stays_exactly_once(
    pg_cluster: PostgresCluster,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    before: dict[str, str] | None,
    created: bool | type[Exception],
) -> None:
    """The connector written before the outage stands for what a first try committed
    without hearing so (the connection broke during the commit)."""
    store = MetadataStore(pg_cluster.url)
    if before is not None:
        store.configs.create_connector(name, {**before, "name": name})
    output = Output(capsys)
    operator = CreateConnectorOperator(
        task_id="c",
        connector_name=name,
        config=file_source(),
        connect_conn_id=outage_connection(monkeypatch, pg_cluster.url, 1),
        wait_for_running=False,
    )
    try:
        with pg_cluster.crashed():  # restarted when the block ends
            thread, outcome = in_a_thread(operator)
            wait_until(lambda: output.lines("trying again for up to 30 s"), 30, "a retry")
        thread.join(60)
        assert not thread.is_alive()
        if created is True:
            (result,) = outcome
            assert result["created"] is True and result["config"] == {**file_source(), "name": name}
            connector = store.configs.connector(name)
            assert connector.config_version == 1 and connector.config["topic"] == "t"
            (back,) = output.lines("The metadata database is reachable again")
            assert "[info" in back
        else:
            assert isinstance(outcome[0], AlreadyExistsException)
    finally:
        store.configs.delete_connector(name)
        store.close()
