"""``make airflow``'s stack (``demo.airflow``): Airflow's services with the provider, a runtime
deployed by ``connect_runtime`` on a Spark cluster, the test broker; each example DAG,
triggered through Airflow's REST API with no conf, as the trigger form sends its defaults,
succeeds."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from lines_table import TABLE  # dags/, beside the DAGs that use it
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement

from airflow_provider_connect.store import MetadataStore
from tests.browser import chromium, click, log_in, screenshot, text, waiting
from tests_common.airflow_demo import (
    DEMO_LINES,
    DEMO_TOPIC,
    EXAMPLE_DAGS,
    LIFECYCLE_FILE,
    LINES_FILE,
    S3_BUCKET,
    AirflowDemo,
)
from tests_common.local_stack import LocalStack
from tests_common.processes import wait_until

# The stack starts in the first test (pytest-timeout counts a fixture's setup in).
pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AirflowDemo]:
    with AirflowDemo(tmp_path_factory.mktemp("airflow-demo")) as demo:
        yield demo
    assert not demo.examples.exists(), "the example DAGs' files outlived the stack"


def test_the_runtime_is_deployed_by_connect_runtime(demo: AirflowDemo) -> None:
    stack = demo.stack
    (run,) = stack.api("GET", "/dags/connect_runtime/dagRuns")["dag_runs"]
    wait_until(
        lambda: stack.task_states("connect_runtime", run["dag_run_id"])["serving"] == "success",
        120,
        "connect_runtime's serving sensor succeeds",
        0.5,
        state=lambda: stack.task_states("connect_runtime", run["dag_run_id"]),
    )
    assert stack.task_states("connect_runtime", run["dag_run_id"])["runtime"] == "running"


def test_each_example_dag_succeeds_with_its_defaults(demo: AirflowDemo) -> None:
    stack = demo.stack
    replay = demo.examples / LIFECYCLE_FILE  # connector_lifecycle's default sink file
    runs = {}
    for dag_id in EXAMPLE_DAGS:
        stack.api("PATCH", f"/dags/{dag_id}", json={"is_paused": False})
        runs[dag_id] = stack.trigger(dag_id, {})

    def ended() -> dict[str, str] | None:
        states = {dag_id: stack.run_state(dag_id, run) for dag_id, run in runs.items()}
        return states if all(s in ("success", "failed") for s in states.values()) else None

    states = wait_until(
        ended,
        600,
        "the example DAGs' runs end",
        1,
        state=lambda: {d: stack.task_states(d, r) for d, r in runs.items()},
    )
    failed = {d: stack.task_states(d, runs[d]) for d, s in states.items() if s != "success"}
    assert not failed, failed
    assert len(set(replay.read_text().splitlines())) == DEMO_LINES  # connect-demo-lines, replayed


def test_topic_to_s3_lands_the_demo_topic_and_the_report_lists_it(demo: AirflowDemo) -> None:
    """``topic_to_s3``'s sink (started above, with its defaults: the demo's moto server, its
    keys from the stack's environment) lands every line of the demo topic once, in objects of
    100 records with Confluent's names; ``s3_landing_report``, scheduled on the sink's
    commits, ran on them: its runs' commit records add up to the lines and the last one
    lists every object. The objects are waited for: "landed" can pass before the last ones
    are committed, the test broker reporting end offsets too low."""
    name = re.compile(rf"topics/{DEMO_TOPIC}/partition=0/{DEMO_TOPIC}\+0\+\d{{10}}\.json")

    def landed() -> dict[str, bytes] | None:
        objects = demo.s3.objects(S3_BUCKET)
        lines = [line for body in objects.values() for line in body.splitlines()]
        return objects if len(lines) == DEMO_LINES else None

    objects = wait_until(
        landed, 180, f"the {DEMO_LINES} lines land in S3", 1,
        state=lambda: sorted(demo.s3.objects(S3_BUCKET)),
    )  # fmt: skip
    assert len(objects) == DEMO_LINES // 100
    assert all(name.fullmatch(key) for key in objects), sorted(objects)
    landed_lines = [json.loads(line) for body in objects.values() for line in body.splitlines()]
    assert sorted(landed_lines) == [f"demo line {i:04d}" for i in range(DEMO_LINES)]

    def reports() -> list[dict[str, Any]] | None:
        found = reported_by(demo.stack, "s3_landing_report")
        if not found or sum(r["records"] for r in found) != DEMO_LINES:
            return None
        return found if found[-1]["objects"] == sorted(objects) else None

    found = wait_until(
        reports, 180, "s3_landing_report lists the objects of the sink's commits", 1,
        state=lambda: reported_by(demo.stack, "s3_landing_report"),
    )  # fmt: skip
    assert any(r["events"] > 0 and r["records"] > 0 for r in found)


def test_the_connector_tasks_emit_their_lineage(demo: AirflowDemo) -> None:
    """With Airflow's OpenLineage provider on the stack (its file transport), the tasks of
    ``file_to_table`` that create its connectors emit START and COMPLETE events naming
    what each connector reads and writes, from the rendered configs."""
    server = demo.stack.places.bootstrap_servers.split(",")[0]
    expected = {
        "file_to_table.source": (
            [("file", str(demo.examples / LINES_FILE))],
            [(f"kafka://{server}", "lines")],
        ),
        "file_to_table.sink": (
            [(f"kafka://{server}", "lines")],
            [(f"sqlite://{demo.examples / 'connect-lines.db'}", "lines")],
        ),
    }
    emitted = [json.loads(line) for line in demo.lineage.read_text().splitlines()]
    for job, (inputs, outputs) in expected.items():
        events = [e for e in emitted if e["job"]["name"] == job]
        assert {e["eventType"] for e in events} >= {"START", "COMPLETE"}, job
        for event in events:
            assert [(d["namespace"], d["name"]) for d in event["inputs"]] == inputs
            assert [(d["namespace"], d["name"]) for d in event["outputs"]] == outputs


def test_the_asset_graph_joins_file_topic_table_and_lines_report(demo: AirflowDemo) -> None:
    """Airflow's asset graph (its REST API, which the Assets view reads) as the example DAGs
    declare it with their params' defaults: file_to_table's source reads the file and writes
    the topic, its sink reads the topic and writes the table, lines_report is scheduled on
    the table; daily_file_ingestion writes its topic; topic_to_s3's sink reads the demo
    topic and writes its objects in S3, s3_landing_report is scheduled on them."""
    server = demo.stack.places.bootstrap_servers.split(",")[0]
    found = demo.stack.api("GET", "/assets", params={"limit": 100})["assets"]

    def graph(asset: dict[str, Any]) -> tuple[set[str], set[str], set[str]]:
        """What produces the asset, consumes it (tasks), is scheduled on it (DAGs)."""
        return (
            {f"{t['dag_id']}.{t['task_id']}" for t in asset["producing_tasks"]},
            {f"{t['dag_id']}.{t['task_id']}" for t in asset["consuming_tasks"]},
            {d["dag_id"] for d in asset["scheduled_dags"]},
        )

    def named(suffix: str) -> tuple[set[str], set[str], set[str]]:
        (asset,) = [a for a in found if a["uri"].endswith(suffix)]
        return graph(asset)

    assert named(str(demo.examples / LINES_FILE)) == (set(), {"file_to_table.source"}, set())
    assert named(f"{server}/lines") == ({"file_to_table.source"}, {"file_to_table.sink"}, set())
    assert named("connect-lines.db/lines") == ({"file_to_table.sink"}, set(), {"lines_report"})
    assert named(f"{server}/daily-lines") == ({"daily_file_ingestion.ingest"}, set(), set())
    assert "topic_to_s3.sink" in named(f"{server}/{DEMO_TOPIC}")[1]
    assert named(f"s3://{S3_BUCKET}/topics/{DEMO_TOPIC}") == (
        {"topic_to_s3.sink"},
        set(),
        {"s3_landing_report"},
    )


def test_a_dag_runs_on_the_commits_of_a_sink(demo: AirflowDemo) -> None:
    """``lines_report`` is scheduled on the table ``file_to_table``'s sink writes, watched by
    ConnectorCommitTrigger in the triggerer: it ran on the commits of the run above; its
    events report every line once (their records add up to the lines of the file: records,
    not offsets, on a topic whose transactions' commit markers take offsets too), and so do
    its runs' reports, the last of which saw the table's rows; the next lines run it again.

    Nothing here compares committed offsets with end offsets: the topic, created by the
    broker on first use, has partitions the source may never write to, where the sink has
    no committed offset while the consumer sees an end offset of 0 (and the test broker
    reports end offsets too low)."""
    stack = demo.stack
    lines_file = demo.examples / LINES_FILE
    connect = MetadataStore(f"sqlite:///{demo.folder / 'connect.db'}")
    (asset,) = stack.api("GET", "/assets", params={"uri_pattern": "connect-lines.db/lines"})[
        "assets"
    ]

    def payloads() -> list[dict[str, Any]] | None:
        """The commit events' payloads, oldest first (Airflow keeps a trigger's event in
        "payload"; the event of file_to_table's sink task, the table's producer, has none);
        None while Airflow 3.3's API cannot list them: it answers 500 while a run an event
        created is queued (its response model wants the run's start_date)."""
        response = stack.session.get(
            f"{stack.api_url}/api/v2/assets/events",
            params={"asset_id": asset["id"], "limit": 100},
            timeout=30,
        )
        if response.status_code >= 500:
            return None
        response.raise_for_status()
        found = [(e["extra"] or {}).get("payload") for e in response.json()["asset_events"]]
        return sorted((p for p in found if p), key=lambda p: p["committed_at"])

    def reported(lines: int) -> list[dict[str, Any]] | None:
        """The events, once their records add up to ``lines`` (the sink's own count too)."""
        found = payloads()
        if not found or sum(p["records"] for p in found) != lines:
            return None
        progress = connect.offsets.sink_progress("lines-sink")
        return found if sum(p.records for p in progress) == lines else None

    def reports() -> list[dict[str, int]]:
        return reported_by(stack, "lines_report")

    def rows() -> int:
        """The table's rows."""
        engine = sqlalchemy.create_engine(f"sqlite:///{demo.examples / 'connect-lines.db'}")
        try:
            with engine.connect() as connection:
                count = sqlalchemy.text(f"SELECT count(*) FROM {TABLE}")
                return int(connection.execute(count).scalar_one())
        finally:
            engine.dispose()

    def reports_agree(lines: int) -> list[dict[str, int]] | None:
        """The reports, once their records add up to ``lines`` and the last one saw the
        table's rows."""
        found = reports()
        if not found or sum(r["records"] for r in found) != lines:
            return None
        return found if found[-1]["rows"] == rows() else None

    def lines_written() -> int:
        return len(lines_file.read_text().splitlines())

    try:
        lines = lines_written()
        first = wait_until(
            lambda: reported(lines), 180, f"the commit events report the {lines} lines", 0.5,
            state=lambda: (connect.offsets.sink_progress("lines-sink"), payloads()),
        )  # fmt: skip
        assert all(p["records"] > 0 and p["connector"] == "lines-sink" for p in first)
        runs = wait_until(
            lambda: reports_agree(lines), 180, "lines_report reports the lines", 1,
            state=lambda: (reports(), rows()),
        )  # fmt: skip

        with lines_file.open("a") as file:
            file.write("".join(f"line {lines + i}\n" for i in range(10)))
        after = wait_until(
            lambda: reported(lines + 10), 180, "the next commits' events report the new lines",
            0.5, state=lambda: (connect.offsets.sink_progress("lines-sink"), payloads()),
        )  # fmt: skip
        assert len(after) > len(first)
        wait_until(
            lambda: (found := reports_agree(lines + 10)) and len(found) > len(runs),
            180,
            "lines_report runs again and reports the new lines",
            1,
            state=lambda: (reports(), rows()),
        )
    finally:
        connect.close()


def reported_by(stack: LocalStack, dag_id: str) -> list[dict[str, Any]]:
    """What the ``report`` task of ``dag_id``'s successful runs returned, oldest first."""
    runs = stack.api("GET", f"/dags/{dag_id}/dagRuns", params={"limit": 100})["dag_runs"]
    done = sorted((r for r in runs if r["state"] == "success"), key=lambda r: r["run_after"])
    path = f"/dags/{dag_id}/dagRuns/{{}}/taskInstances/report/xcomEntries/return_value"
    values = [stack.api("GET", path.format(r["dag_run_id"]))["value"] for r in done]
    return [json.loads(v) if isinstance(v, str) else v for v in values]


def test_the_connectors_page_shows_the_demo_source(demo: AirflowDemo) -> None:
    def running() -> dict[str, Any] | None:
        page = demo.stack.session.get(f"{demo.stack.api_url}/connect/api/connectors", timeout=30)
        (demo_lines,) = [c for c in page.json()["connectors"] if c["name"] == "demo-lines"]
        return demo_lines if demo_lines["connector"]["state"] == "RUNNING" else None

    demo_lines = wait_until(running, 120, "the page shows demo-lines RUNNING", 0.5)
    assert demo_lines["config"]["topic"] == DEMO_TOPIC


def test_the_tour_of_the_readme_in_chromium(demo: AirflowDemo, tmp_path: Path) -> None:
    """docs/airflow.md's tour: the trigger form of connector_lifecycle with its params
    described, a run triggered from it succeeding, the Connectors page inside Airflow's
    UI, a pause and a resume from it."""
    stack = demo.stack
    before = {r["dag_run_id"] for r in stack.api("GET", RUNS)["dag_runs"]}
    with chromium(1400, 1000) as browser:
        wait = waiting(browser, 60)
        log_in(browser, demo, "admin", "/dags/connector_lifecycle")
        wait.until(lambda b: button(b, "Trigger") is not None)
        button(browser, "Trigger").click()
        wait.until(lambda b: "Trigger Dag - connector_lifecycle" in body(b))
        for described in ("The connector's name", "Leave {} for a sink", "connect-demo-lines"):
            assert described in body(browser)
        screenshot(browser, "tour-trigger-form.png", tmp_path)
        *_, submit = browser.find_elements(By.XPATH, "//button[normalize-space()='Trigger']")
        browser.execute_script("arguments[0].scrollIntoView()", submit)  # the form's own
        submit.click()

        def new_run() -> str | None:
            runs = {r["dag_run_id"] for r in stack.api("GET", RUNS)["dag_runs"]} - before
            return runs.pop() if runs else None

        run_id = wait_until(new_run, 60, "the form's run is created")
        wait_until(
            lambda: stack.run_state("connector_lifecycle", run_id) == "success",
            300,
            "the form's run succeeds",
            1,
            state=lambda: stack.task_states("connector_lifecycle", run_id),
        )

        browser.get(f"{demo.url}/plugin/connectors")
        frame = wait.until(lambda b: b.find_element(By.CSS_SELECTOR, "iframe"))
        browser.switch_to.frame(frame)
        state = 'tr.connector[data-connector="demo-lines"] [data-role=state]'
        wait.until(lambda b: text(b, state) == "RUNNING")
        browser.switch_to.default_content()
        screenshot(browser, "tour-connectors.png", tmp_path)
        browser.switch_to.frame(frame)
        click(browser, 'tr.connector[data-connector="demo-lines"]')
        click(browser, '[data-details="demo-lines"] button[data-action=pause]')
        wait.until(lambda b: text(b, state) == "PAUSED")
        browser.switch_to.default_content()
        screenshot(browser, "tour-paused.png", tmp_path)
        browser.switch_to.frame(frame)
        click(browser, '[data-details="demo-lines"] button[data-action=resume]')
        wait.until(lambda b: text(b, state) == "RUNNING")
    status = stack.session.get(f"{stack.places.runtime_url}/connectors/demo-lines/status")
    assert status.json()["connector"]["state"] == "RUNNING"


RUNS = "/dags/connector_lifecycle/dagRuns"


def button(browser: WebDriver, label: str) -> WebElement | None:
    """The first displayed button that says ``label``."""
    for found in browser.find_elements(By.XPATH, f"//button[normalize-space()='{label}']"):
        if found.is_displayed():
            return found
    return None


def body(browser: WebDriver) -> str:
    return str(browser.execute_script("return document.body.innerText"))


def test_taken_ports_are_named_before_anything_starts() -> None:
    with contextlib.closing(socket.socket()) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [sys.executable, "-m", "demo.airflow", "--api-port", str(port)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert f"api_port {port}" in done.stdout
