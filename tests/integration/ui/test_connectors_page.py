"""The Connectors page of the Airflow UI: a real ``airflow api-server`` with the provider's
plugin, on the metadata database of a running runtime, read and driven through its API
(admin, viewer and anonymous) and in headless Chromium; and a second one on a metadata
database no runtime serves, where the tests write the states a runtime would write, so that
they hold still (a task waiting for a Spark slot, a cleanup not done yet); and a third on a
private PostgreSQL cluster that hangs and crashes under it."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from fastapi.testclient import TestClient
from selenium.common.exceptions import (
    StaleElementReferenceException,
)
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select, WebDriverWait

from airflow_provider_connect.control.overview import connectors_overview
from airflow_provider_connect.control.validation import ConfigValidationError
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.runtime.rest.app import create_app
from airflow_provider_connect.store import DeletionState, MetadataStore, State, TargetState
from tests.airflow_api_server import AirflowApiServer
from tests.browser import chromium, click, log_in, screenshot, text, waiting
from tests.connectors import EVENTS, METERED_SOURCE, PLAIN, read_events, recording_source
from tests_common.kafka import new_topic, produce
from tests_common.metadata import counting, populate
from tests_common.postgres_cluster import PostgresCluster
from tests_common.processes import wait_until

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]


# -- the runtime, its connectors, and the API server ---------------------------------------
@contextlib.contextmanager
def sqlite_store(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[MetadataStore]:
    folder = tmp_path_factory.mktemp(name)
    store = MetadataStore(f"sqlite:///{folder / 'metadata.db'}", migrate=True)
    try:
        yield store
    finally:
        store.close()


@contextlib.contextmanager
def serving(server: AirflowApiServer) -> Iterator[AirflowApiServer]:
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def ui_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MetadataStore]:
    with sqlite_store(tmp_path_factory, "ui") as store:
        yield store


@pytest.fixture(scope="module")
def secrets_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A properties file only the runtime reads, through its ``file`` config provider."""
    path = tmp_path_factory.mktemp("secrets") / "connect.properties"
    path.write_text("tolerance=all\nbad.tolerance=some\nsecret=s3cret-in-a-file\n")
    return path


@pytest.fixture(scope="module")
def runtime(
    ui_store: MetadataStore, bootstrap: str, spark: Any, secrets_file: Path
) -> Iterator[Connect]:
    connect = Connect(
        "ui-runtime",
        {
            "bootstrap.servers": bootstrap,
            "metadata.url": ui_store.url,
            "config.providers": "file",
            "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
            "offset.flush.interval.ms": "200",
            "task.heartbeat.interval.ms": "100",
            "consumer.session.timeout.ms": "6000",
            "metrics.history.interval.ms": "1000",
        },
    )
    connect.start()
    yield connect
    connect.stop()


@pytest.fixture(scope="module")
def rest(runtime: Connect) -> Iterator[TestClient]:
    """The runtime's Kafka Connect REST API."""
    with TestClient(create_app(runtime.store, runtime.worker)) as client:
        yield client


def rest_state(rest: TestClient, name: str) -> str:
    return str(rest.get(f"/connectors/{name}/status").json()["connector"]["state"])


def task_states(rest: TestClient, name: str) -> list[str]:
    return [t["state"] for t in rest.get(f"/connectors/{name}/status").json()["tasks"]]


@pytest.fixture(scope="module")
def connectors(
    rest: TestClient, bootstrap: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """A source (with a password) feeding a sink, a source whose task fails at start, and a
    connector deleted (its cleanup done); returns the source's topic by name."""
    folder = tmp_path_factory.mktemp("connectors")
    topic = new_topic(bootstrap)
    configs = {
        "orders-source": recording_source(folder / "s.jsonl", topic, {"secret": "hunter2"}),
        "orders-sink": {
            "connector.class": "tests.connectors.RecordingSinkConnector",
            EVENTS: str(folder / "k.jsonl"),
            "topics": topic,
            **PLAIN,
        },
        "broken-source": recording_source(
            folder / "b.jsonl", new_topic(bootstrap), {"fail.on.start": "true"}
        ),
        "retired": recording_source(folder / "r.jsonl", new_topic(bootstrap), {"count": "1"}),
        "metered-source": {
            "connector.class": METERED_SOURCE,
            "topic": new_topic(bootstrap),
            "poll.delay.ms": "1000",
            **PLAIN,
        },
    }
    for name, config in configs.items():
        assert rest.post("/connectors", json={"name": name, "config": config}).status_code == 201
    for name in ("orders-source", "orders-sink", "retired", "metered-source"):
        wait_until(lambda n=name: task_states(rest, n) == ["RUNNING"], 60, f"{name} RUNNING")
    wait_until(lambda: task_states(rest, "broken-source") == ["FAILED"], 60, "a FAILED task")
    assert rest.delete("/connectors/retired").status_code == 204
    wait_until(lambda: rest.get("/connectors/retired").status_code == 404, 60, "cleanup done")
    return {"orders-source": topic}


@pytest.fixture(scope="module")
def api_server(
    ui_store: MetadataStore, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AirflowApiServer]:
    home = tmp_path_factory.mktemp("airflow")
    # The API server loads the test connectors' classes (their ConfigDefs say which keys
    # are passwords) from a folder that holds the tests package alone.
    path = home / "pythonpath"
    path.mkdir()
    (path / "tests").symlink_to(ROOT / "tests")
    with serving(AirflowApiServer(home, ui_store.url, pythonpath=path)) as server:
        yield server


def overview(server: AirflowApiServer, user: str = "viewer") -> dict[str, Any]:
    response = server.get(user, "/connect/api/connectors")
    assert response.status_code == 200, response.text
    return {c["name"]: c for c in response.json()["connectors"]} | {
        "": response.json()["deletions"]
    }


# -- the page's API -------------------------------------------------------------------------
def test_the_plugin_loads_once_without_import_errors(api_server: AirflowApiServer) -> None:
    plugins = api_server.get("admin", "/api/v2/plugins").json()["plugins"]
    names = [p["name"] for p in plugins]  # with the providers' own (OpenLineage's)
    assert names.count("connect") == 1
    errors = api_server.get("admin", "/api/v2/plugins/importErrors").json()
    assert errors["import_errors"] == []


def test_anonymous_is_refused_and_a_viewer_reads_but_cannot_act(
    api_server: AirflowApiServer, connectors: dict[str, str]
) -> None:
    assert api_server.get(None, "/connect/api/connectors").status_code == 401
    page = api_server.get(None, "/connect/", headers={"Accept": "text/html"}, allow_redirects=False)
    assert page.status_code == 307 and page.headers["location"].startswith("/auth/login?next=")
    assert api_server.get("viewer", "/connect/").status_code == 200
    viewer = api_server.session("viewer")
    for method, path in (
        ("PUT", "/connect/api/connectors/orders-source/pause"),
        ("POST", "/connect/api/connectors/orders-source/restart"),
        ("DELETE", "/connect/api/connectors/orders-source"),
    ):
        assert viewer.request(method, api_server.url + path, timeout=30).status_code == 403
    assert "orders-source" in overview(api_server)


def test_the_api_shows_status_config_offsets_lag_and_deletions(
    api_server: AirflowApiServer, connectors: dict[str, str]
) -> None:
    def progressed() -> dict[str, Any] | None:
        found = overview(api_server)
        source, sink = found["orders-source"], found["orders-sink"]
        committed = source["source_offsets"] and sink["sink_progress"]
        return found if committed and sink["sink_progress"][0]["lag"] == 0 else None

    found = wait_until(progressed, 60, "offsets and sink progress recorded")
    source = found["orders-source"]
    assert (
        source["type"] == "source"
        and source["class"] == "tests.connectors.RecordingSourceConnector"
    )
    assert source["connector"]["state"] == "RUNNING"
    (task,) = source["tasks"]
    assert task["state"] == "RUNNING" and task["worker_id"] and task["generation"] >= 1
    assert source["config"]["secret"] == "[hidden]" and "hunter2" not in str(found)
    assert source["source_offsets"][0]["partition"] and source["source_offsets"][0]["offset"]
    (progress,) = found["orders-sink"]["sink_progress"]
    assert progress["topic"] == connectors["orders-source"] and progress["partition"] == 0
    assert progress["committed_offset"] == progress["end_offset"] > 0
    (broken,) = found["broken-source"]["tasks"]
    assert broken["state"] == "FAILED" and "failed on purpose at start" in broken["trace"]
    (retired,) = [d for d in found[""] if d["connector"] == "retired"]
    assert retired["state"] == "DONE" and retired["finished_at"]


def test_the_edit_forms_validation_keeps_the_stored_password_and_shows_it_nowhere(
    api_server: AirflowApiServer, connectors: dict[str, str]
) -> None:
    """The edit form validates the shown config, whose password is ``[hidden]``, as the
    stored one; the answer has no secret. Another connector's secrets are never borrowed."""
    config = overview(api_server)["orders-source"]["config"]
    assert config["secret"] == "[hidden]"
    plugin = config["connector.class"]
    session = api_server.session("admin")
    answer = session.put(
        f"{api_server.url}/connect/api/connector-plugins/{plugin}/config/validate",
        params={"connector": "orders-source"},
        json=config,
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    assert "hunter2" not in answer.text
    (secret,) = [c["value"] for c in answer.json()["configs"] if c["value"]["name"] == "secret"]
    assert secret["value"] == "[hidden]" and secret["errors"] == []
    viewer = api_server.session("viewer").put(
        f"{api_server.url}/connect/api/connector-plugins/{plugin}/config/validate",
        json=config,
        timeout=30,
    )
    assert viewer.status_code == 403


def test_actions_are_the_operators_store_writes(
    api_server: AirflowApiServer,
    runtime: Connect,
    rest: TestClient,
    bootstrap: str,
    tmp_path: Path,
) -> None:
    config = recording_source(tmp_path / "e.jsonl", new_topic(bootstrap))
    assert rest.post("/connectors", json={"name": "acted", "config": config}).status_code == 201
    wait_until(lambda: task_states(rest, "acted") == ["RUNNING"], 60, "RUNNING")
    admin = api_server.session("admin")
    api = f"{api_server.url}/connect/api/connectors"

    assert admin.put(f"{api}/acted/pause", timeout=30).status_code == 202
    wait_until(lambda: rest_state(rest, "acted") == "PAUSED", 60, "PAUSED")
    assert admin.put(f"{api}/acted/resume", timeout=30).status_code == 202
    wait_until(lambda: rest_state(rest, "acted") == "RUNNING", 60, "RUNNING again")
    restart = admin.post(f"{api}/acted/restart?includeTasks=true&onlyFailed=false", timeout=30)
    assert restart.status_code == 202
    assert admin.put(f"{api}/acted/stop", timeout=30).status_code == 202
    wait_until(lambda: rest_state(rest, "acted") == "STOPPED", 60, "STOPPED")
    assert admin.put(f"{api}/nothing-here/pause", timeout=30).json() == {
        "error_code": 404,
        "message": "Connector nothing-here not found",
    }
    assert admin.delete(f"{api}/acted", timeout=30).status_code == 204

    def cleaned_up() -> bool:
        deletion = runtime.store.configs.deletion("acted")
        return deletion is not None and deletion.state is DeletionState.DONE

    wait_until(cleaned_up, 60, "the deletion's cleanup done")


def test_rest_the_hook_and_the_page_write_connectors_alike(
    api_server: AirflowApiServer,
    rest: TestClient,
    ui_store: MetadataStore,
    secrets_file: Path,
    bootstrap: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same configs through the REST API, ConnectHook and the page's API (one function,
    ``control.connectors``): placeholders are kept as written by all three and resolved
    where the runtime starts the connector (a placeholder whose value is invalid fails the
    connector there, naming the key); an invalid config is refused by each with one
    message."""
    monkeypatch.setenv(
        "AIRFLOW_CONN_CONNECT_DEFAULT",
        json.dumps({"conn_type": "connect", "extra": {"metadata_url": ui_store.url}}),
    )
    hook = ConnectHook()
    page = api_server.session("admin")

    def via_rest(name: str, config: dict[str, str]) -> tuple[int, str | None]:
        answer = rest.post("/connectors", json={"name": name, "config": config})
        return answer.status_code, answer.json().get("message")

    def via_hook(name: str, config: dict[str, str]) -> tuple[int, str | None]:
        try:
            hook.create_connector(name, config)
        except ConfigValidationError as e:
            return 400, str(e)
        return 201, None

    answers: dict[str, dict[str, Any]] = {}

    def via_page(name: str, config: dict[str, str]) -> tuple[int, str | None]:
        url = f"{api_server.url}/connect/api/connectors"
        answer = page.post(url, json={"name": name, "config": config}, timeout=30)
        answers[name] = answer.json()
        return answer.status_code, answer.json().get("message")

    def placeholder(key: str) -> str:
        return f"${{file:{secrets_file}:{key}}}"

    writers = {"rest": via_rest, "hook": via_hook, "page": via_page}
    refusals = set()
    try:
        for writer, write in writers.items():
            for kind, tolerance in (("good", "tolerance"), ("bad", "bad.tolerance")):
                name = f"{kind}-via-{writer}"
                config = recording_source(
                    tmp_path / f"{name}.jsonl",
                    new_topic(bootstrap),
                    {"errors.tolerance": placeholder(tolerance), "secret": placeholder("secret")},
                )
                assert write(name, config) == (201, None), writer
                assert ui_store.configs.connector(name).config == {**config, "name": name}
            invalid = recording_source(tmp_path / "x.jsonl", "t", {"errors.tolerance": "some"})
            status, message = write(f"invalid-via-{writer}", invalid)
            assert status == 400 and "errors.tolerance" in str(message), (writer, message)
            refusals.add(message)
        assert len(refusals) == 1, refusals
        info = rest.get("/connectors/good-via-page").json()
        shown = answers["good-via-page"]
        assert (shown["name"], shown["config"], shown["type"]) == (
            info["name"],
            info["config"],
            info["type"],
        )
        assert shown["config"]["secret"] == "[hidden]"  # a password, whatever it holds
        assert shown["config"]["errors.tolerance"] == placeholder("tolerance")  # as written
        for writer in writers:
            wait_until(
                lambda w=writer: task_states(rest, f"good-via-{w}") == ["RUNNING"],
                60,
                f"the connector written by {writer} RUNNING with its placeholders resolved",
            )
            failed = wait_until(
                lambda w=writer: (
                    (s := rest.get(f"/connectors/bad-via-{w}/status").json()["connector"])["state"]
                    == "FAILED"
                    and s
                ),
                60,
                f"the connector written by {writer} FAILED on its resolved value",
            )
            assert "errors.tolerance: Invalid value" in failed["trace"], failed
            assert placeholder("bad.tolerance") in failed["trace"], failed  # not its value
            assert "s3cret-in-a-file" not in json.dumps(rest.get("/connectors?expand=info").json())
    finally:
        for writer in writers:
            for kind in ("good", "bad"):
                hook.delete_connector(f"{kind}-via-{writer}", missing_ok=True)
        hook.close()


def test_the_overview_reads_each_table_once(store: MetadataStore) -> None:
    """500 connectors with 5,000 tasks: one query per table, not one per connector."""
    populate(store, 500, 10)
    with counting(store) as queries:
        found = connectors_overview(store)
    assert len(found["connectors"]) == 500
    assert sum(len(c["tasks"]) for c in found["connectors"]) == 5000
    assert len(queries) == 7, queries


# -- the page in Chromium -----------------------------------------------------------------
@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    with chromium() as driver:
        yield driver


def row(name: str, part: str = "") -> str:
    """The selector of connector ``name``'s row (or of ``part`` in it)."""
    return f'tr.connector[data-connector="{name}"] {part}'.strip()


def shown(browser: WebDriver) -> list[str]:
    """The connectors the page lists, in order."""
    return list(
        browser.execute_script(
            "return [...document.querySelectorAll('tr.connector')].map((r) => r.dataset.connector);"
        )
    )


def enabled_actions(browser: WebDriver, name: str) -> set[str] | None:
    """The actions whose buttons are enabled in connector ``name``'s details (None when they
    are not shown)."""
    found = browser.execute_script(
        """const d = document.querySelector(`[data-details="${CSS.escape(arguments[0])}"]`);
        return d && [...d.querySelectorAll('button[data-action]')]
            .filter((b) => !b.disabled).map((b) => b.dataset.action);""",
        name,
    )
    return None if found is None else set(found)


def banner(browser: WebDriver, kind: str) -> tuple[str, str] | None:
    """The ``notice`` or ``error`` banner's text and connector, None while it is hidden."""
    found = browser.execute_script(
        """const b = document.getElementById(arguments[0]);
        return b.hidden ? null : [b.querySelector('.banner-text').innerText, b.dataset.connector];""",
        kind,
    )
    return None if found is None else (str(found[0]), str(found[1]))


EVERY_TIME = {"delete", "edit"}
"""The actions a connector's state never rules out."""
WHEN_RUNNING = {"pause", "restart-all", "stop"} | EVERY_TIME
WHEN_PAUSED = {"resume", "stop"} | EVERY_TIME


def test_the_page_in_chromium(
    browser: WebDriver,
    api_server: AirflowApiServer,
    connectors: dict[str, str],
    rest: TestClient,
    bootstrap: str,
    tmp_path: Path,
) -> None:
    wait = waiting(browser)
    log_in(browser, api_server, "admin", "/connect/")
    wait.until(lambda b: len(shown(b)) >= 3)
    states = {
        name: text(browser, row(name, "[data-role=state]"))
        for name in ("orders-source", "orders-sink", "broken-source")
    }
    assert states == dict.fromkeys(("orders-source", "orders-sink", "broken-source"), "RUNNING")
    assert (text(browser, row("broken-source", "[data-role=tasks]")) or "").split() == [
        "FAILED",
        "1",
    ]
    assert "retired" in (text(browser, "#deletions") or "")

    # A FAILED task's trace opens.
    click(browser, row("broken-source"))
    click(browser, '[data-details="broken-source"] button[data-trace="0"]')
    wait.until(expected_conditions.visibility_of_element_located((By.ID, "trace")))
    assert "failed on purpose at start" in (text(browser, "#trace") or "")
    screenshot(browser, "connectors-trace.png", tmp_path)
    click(browser, "#trace-close")
    tail = '[data-details="broken-source"] [data-log-tail="0"]'
    assert (text(browser, tail) or "").startswith("Last log lines of this task run")
    click(browser, row("broken-source"))  # folds it again

    # A pause clicked on the page makes the connector PAUSED in Kafka Connect's REST API.
    # Its buttons follow its state: Pause while RUNNING, Resume once paused.
    click(browser, row("orders-source"))
    details = '[data-details="orders-source"]'
    wait.until(lambda b: "[hidden]" in (text(b, details) or ""))
    assert "hunter2" not in browser.page_source
    assert enabled_actions(browser, "orders-source") == WHEN_RUNNING
    click(browser, f"{details} button[data-action=pause]")
    wait.until(lambda b: enabled_actions(b, "orders-source") == WHEN_PAUSED)
    notice = banner(browser, "notice")
    assert notice is not None and notice[1] == "orders-source", notice
    assert notice[0].startswith("Pause: requested for orders-source"), notice
    wait_until(lambda: rest_state(rest, "orders-source") == "PAUSED", 60, "PAUSED in REST")
    wait.until(lambda b: text(b, row("orders-source", "[data-role=state]")) == "PAUSED")
    click(browser, row("metered-source"))  # the metrics its task registered (KIP-877)
    metrics = '[data-details="metered-source"] [data-metric="records-polled-total"]'
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, metrics))
    click(browser, row("metered-source"))
    click(browser, row("orders-sink"))  # the sink's progress and lag
    wait.until(lambda b: "Sink progress" in (text(b, '[data-details="orders-sink"]') or ""))
    screenshot(browser, "connectors-page.png", tmp_path)
    # Its throughput and lag over the last hour, drawn from the samples the runtime keeps.
    for chart in ("throughput", "lag"):
        drawn = f'[data-details="orders-sink"] [data-chart={chart}] polyline'
        wait.until(lambda b, d=drawn: b.find_elements(By.CSS_SELECTOR, d))
    lag_ticks = ticks(browser, '[data-details="orders-sink"] [data-chart=lag]')
    assert len(lag_ticks) == 2 and all(re.fullmatch(r"\d[\d,]*", t) for t in lag_ticks), lag_ticks
    produce(bootstrap, connectors["orders-source"], [b"more"] * 50)

    def moved() -> bool:
        history = api_server.get("viewer", "/connect/api/history").json()["connectors"]
        return any(rate > 0 for _, rate in history["orders-sink"]["records_per_s"])

    wait_until(moved, 60, "the sink's records per second above zero in the history")
    wait.until(
        lambda b: (
            float(
                b.find_element(
                    By.CSS_SELECTOR, '[data-details="orders-sink"] [data-chart=throughput]'
                ).get_attribute("data-top")
            )
            > 1
        )
    )
    screenshot(browser, "connectors-charts.png", tmp_path)
    click(browser, row("orders-sink"))
    click(browser, f"{details} button[data-action=resume]")
    wait_until(lambda: rest_state(rest, "orders-source") == "RUNNING", 60, "RUNNING in REST")
    wait.until(lambda b: enabled_actions(b, "orders-source") == WHEN_RUNNING)

    # Filters, on the deleted connectors too.
    Select(browser.find_element(By.ID, "filter-state")).select_by_visible_text("FAILED")
    wait.until(lambda b: shown(b) == ["broken-source"])
    Select(browser.find_element(By.ID, "filter-state")).select_by_visible_text("Every state")
    wait.until(lambda b: "retired" in (text(b, "#deletions tbody") or ""))
    browser.find_element(By.ID, "filter-name").send_keys("orders")
    wait.until(lambda b: shown(b) == ["orders-sink", "orders-source"])
    wait.until(lambda b: b.find_element(By.ID, "deletions").get_attribute("hidden") is not None)

    # Inside Airflow's own UI: the navigation's "Connectors" page frames it (Airflow 3.1+).
    browser.get(f"{api_server.url}/plugin/connectors")
    frame = wait.until(expected_conditions.presence_of_element_located((By.TAG_NAME, "iframe")))
    browser.switch_to.frame(frame)
    wait.until(lambda b: len(shown(b)) >= 3)
    browser.switch_to.default_content()
    screenshot(browser, "connectors-in-airflow.png", tmp_path)

    # Delete asks first: cancelled, nothing happens; confirmed, the cleanup runs. A FAILED
    # task's connector restarts its failed tasks.
    browser.get(f"{api_server.url}/connect/?connector=broken-source")
    wait.until(lambda b: enabled_actions(b, "broken-source") == WHEN_RUNNING | {"restart-failed"})
    delete = '[data-details="broken-source"] button[data-action=delete]'
    click(browser, delete)
    assert (text(browser, "#confirm-text") or "").startswith("Delete connector broken-source?")
    click(browser, "#confirm button[value=cancel]")
    assert rest.get("/connectors/broken-source").status_code == 200
    click(browser, delete)
    click(browser, "#confirm-button")
    wait_until(lambda: rest.get("/connectors/broken-source").status_code == 404, 60, "deleted")


def ticks(browser: WebDriver, chart: str) -> list[str]:
    """The values written on the axis of the chart ``chart`` selects (its top and zero)."""
    return list(
        browser.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map((t) => t.textContent);",
            f"{chart} [data-tick]",
        )
    )


LINE = "line {:07d}\n"
"""A line of the files the rates are measured on: all as long, so that a FileStreamSource's
offset (a byte position) says how many it read."""


def lines(first: int, count: int) -> str:
    return "".join(LINE.format(i) for i in range(first, first + count))


def test_the_charts_count_every_record_moved_and_show_no_rate_while_paused_or_stopped(
    browser: WebDriver,
    api_server: AirflowApiServer,
    rest: TestClient,
    bootstrap: str,
    tmp_path: Path,
) -> None:
    """A FileStreamSource reads a backlog at once, is paused (lines appended meanwhile wait),
    resumed, stopped right after more lines came (what its run read before it ended is
    counted, though a STOPPED connector has no task left to report it), resumed again (a new
    run, counting from zero): the history's samples add up to the lines read at each step,
    the backlog in the first point, and the page shows them and no current rate while the
    connector is paused or stopped."""
    wait = waiting(browser, 60)
    name = "rates-source"
    file = tmp_path / "lines.txt"
    backlog, while_paused, before_stop = 50_000, 3_000, 2_000
    file.write_text(lines(0, backlog))
    config = {
        "connector.class": "FileStreamSource",
        "file": str(file),
        "topic": new_topic(bootstrap),
    }
    assert rest.post("/connectors", json={"name": name, "config": config}).status_code == 201

    def history() -> dict[str, Any]:
        answer = api_server.get("viewer", "/connect/api/history")
        assert answer.status_code == 200, answer.text
        return dict(answer.json()["connectors"].get(name) or {"records": [], "records_per_s": []})

    def counted() -> int:
        samples = history()["records"]
        assert all(isinstance(n, int) for _, n in samples), samples
        return sum(n for _, n in samples)

    details = f'[data-details="{name}"]'
    now = f"{details} [data-chart=throughput] [data-role=now]"

    def shown_moved(b: WebDriver) -> int | None:
        found = b.execute_script(
            "const e = document.querySelector(arguments[0]); return e && e.dataset.records;",
            f"{details} [data-role=moved]",
        )
        return None if found is None else int(found)

    def append(first: int, count: int) -> None:
        with file.open("a") as out:
            out.write(lines(first, count))

    try:
        wait_until(lambda: counted() == backlog, 60, "the backlog counted", state=history)
        # The backlog, read at once, is counted by a sample that follows another (one of
        # nothing, taken when its run started if none came before): the chart's first
        # point above zero.
        samples = history()
        counting = [at for at, n in samples["records"] if n > 0]
        rising = [at for at, rate in samples["records_per_s"] if rate > 0]
        assert counting and rising and rising[0] == counting[0], samples
        log_in(browser, api_server, "admin", f"/connect/?connector={name}")
        wait.until(lambda b: shown_moved(b) == backlog)
        assert text(browser, f"{details} [data-role=moved]") == f"({backlog:,} records moved)"
        wait.until(lambda b: (text(b, now) or "").startswith("now "))

        # Paused: no current rate at once; lines appended meanwhile are not read.
        click(browser, f"{details} button[data-action=pause]")
        wait.until(lambda b: text(b, now) == "paused: no current rate")
        wait_until(lambda: task_states(rest, name) == ["PAUSED"], 60, "its task PAUSED")
        append(backlog, while_paused)
        taken = len(history()["records"])
        wait_until(lambda: len(history()["records"]) >= taken + 2, 30, "two samples while paused")
        assert counted() == backlog
        assert text(browser, now) == "paused: no current rate"

        # Resumed: the lines that waited are counted, and the rate is back.
        click(browser, f"{details} button[data-action=resume]")
        wait_until(lambda: counted() == backlog + while_paused, 60, "the lines that waited")
        wait.until(lambda b: (text(b, now) or "").startswith("now "))

        # Stopped as more lines come: whatever its run read before it ended is counted,
        # and the run resumed from its offset reads the rest, so the samples end up at
        # every line, each counted once.
        append(backlog + while_paused, before_stop)
        click(browser, f"{details} button[data-action=stop]")
        wait.until(lambda b: text(b, now) == "stopped: no current rate")
        wait_until(lambda: rest_state(rest, name) == "STOPPED", 60, "STOPPED")
        click(browser, f"{details} button[data-action=resume]")
        every = backlog + while_paused + before_stop
        wait_until(lambda: counted() == every, 60, "every line counted", state=history)
        wait.until(lambda b: shown_moved(b) == every)
        read = [
            {"partition": {"filename": str(file)}, "offset": {"position": len(file.read_bytes())}}
        ]
        wait_until(
            lambda: rest.get(f"/connectors/{name}/offsets").json()["offsets"] == read,
            60,
            "its offset at the end of the file",
        )
        taken = len(history()["records"])
        wait_until(lambda: len(history()["records"]) >= taken + 2, 30, "two samples more")
        assert counted() == every  # nothing counted twice
    finally:
        assert rest.delete(f"/connectors/{name}").status_code == 204


TAB_DAGS = """
import datetime as dt
import json
import os

from airflow.sdk import DAG

from airflow_provider_connect.operators.connector import (
    CreateConnectorOperator,
    DeleteConnectorOperator,
)

CONFIG = json.loads(os.environ.get("UI_TAB_CONFIG", "{}"))

with DAG("ui_tab", schedule=None, start_date=dt.datetime(2026, 1, 1)):
    CreateConnectorOperator(
        task_id="create",
        connector_name="{{ dag.dag_id }}-made",
        config=CONFIG,
        wait_for_running=False,
    )

with DAG("ui_tab_teardown", schedule=None, start_date=dt.datetime(2026, 1, 1)):
    create = CreateConnectorOperator(
        task_id="create",
        connector_name="{{ dag.dag_id }}-made",
        config=CONFIG,
        wait_for_running=False,
    )
    delete = DeleteConnectorOperator(task_id="delete", connector_name="{{ dag.dag_id }}-made")
    create >> delete.as_teardown(setups=create)
"""


def run_dag(server: AirflowApiServer, dag_id: str, config: dict[str, str]) -> str:
    """Runs ``dag_id`` of ``TAB_DAGS`` to success with ``airflow dags test``; its run id."""
    dags = Path(server.env["AIRFLOW__CORE__DAGS_FOLDER"])
    dags.mkdir(exist_ok=True)
    (dags / "ui_tab.py").write_text(TAB_DAGS)
    env = {**server.env, "UI_TAB_CONFIG": json.dumps(config)}
    airflow = [sys.executable, "-m", "airflow", "dags", "test", dag_id]
    subprocess.run(airflow, env=env, cwd=server.home, check=True, capture_output=True)
    (run,) = server.get("admin", f"/api/v2/dags/{dag_id}/dagRuns").json()["dag_runs"]
    assert run["state"] == "success", run
    return str(run["dag_run_id"])


def open_connector_tab(browser: WebDriver, server: AirflowApiServer, task: str) -> None:
    """Opens the "Connector" tab of the task instance at ``task`` (``dag/run/task``) in
    Airflow's UI and switches into its frame."""
    dag_id, run_id, task_id = task.split("/")
    browser.get(f"{server.url}/dags/{dag_id}/runs/{run_id}/tasks/{task_id}")
    click(browser, 'a[title="Connector"]')
    frame = waiting(browser).until(
        expected_conditions.presence_of_element_located((By.TAG_NAME, "iframe"))
    )
    browser.switch_to.frame(frame)


def test_the_task_instance_tab_and_the_status_link_open_the_connector_of_the_task(
    browser: WebDriver,
    api_server: AirflowApiServer,
    rest: TestClient,
    bootstrap: str,
    tmp_path: Path,
) -> None:
    """A DAG run whose task created ``ui_tab-made`` (a rendered name): its task instance's
    "Connector" tab in Airflow's UI opens the page on that connector, and so does its
    "Connector status" extra link, in Airflow's own frame (the navigation's view, active)."""
    config = recording_source(tmp_path / "e.jsonl", new_topic(bootstrap))
    run_id = run_dag(api_server, "ui_tab", config)
    wait_until(lambda: task_states(rest, "ui_tab-made") == ["RUNNING"], 60, "RUNNING")

    log_in(browser, api_server, "admin", "/connect/")
    wait = waiting(browser)
    open_connector_tab(browser, api_server, f"ui_tab/{run_id}/create")
    wait.until(lambda b: text(b, '[data-details="ui_tab-made"]'))
    assert browser.find_element(By.ID, "filter-name").get_attribute("value") == "ui_tab-made"
    wait.until(lambda b: text(b, row("ui_tab-made", "[data-role=state]")) == "RUNNING")
    browser.switch_to.default_content()
    screenshot(browser, "connector-tab.png", tmp_path)

    # The extra link, as the worker computed it, and clicked where Airflow shows it.
    task = f"/api/v2/dags/ui_tab/dagRuns/{run_id}/taskInstances/create"
    link = api_server.get("admin", f"{task}/links").json()["extra_links"]["Connector status"]
    assert link == f"{api_server.url}/plugin/connectors/connect/?connector=ui_tab-made"
    browser.get(f"{api_server.url}/dags/ui_tab/runs/{run_id}/tasks/create/details")
    click(browser, f'a[href="{link}"]')
    wait.until(lambda b: b.current_url == link)  # the same tab, inside Airflow's UI
    wait.until(  # Airflow's navigation renders after the URL changed
        lambda b: (
            b.find_element(By.CSS_SELECTOR, '[aria-label="Connectors"]').get_attribute(
                "aria-current"
            )
            == "page"
        )
    )
    frame = wait.until(expected_conditions.presence_of_element_located((By.TAG_NAME, "iframe")))
    # Airflow 3.3.2 gives the frame the link's query, 3.3.1 the view's href alone (the page
    # then reads the query of Airflow's page): either way the page opens on the connector
    assert frame.get_attribute("src").startswith(f"{api_server.url}/connect/")
    browser.switch_to.frame(frame)
    wait.until(lambda b: text(b, row("ui_tab-made", "[data-role=state]")) == "RUNNING")
    assert text(browser, '[data-details="ui_tab-made"]')  # opened on it
    assert browser.find_element(By.ID, "to-airflow").get_attribute("hidden") is not None
    browser.switch_to.default_content()


def test_the_tab_of_a_run_whose_teardown_deleted_the_connector_shows_the_deletion(
    browser: WebDriver,
    api_server: AirflowApiServer,
    connectors: dict[str, str],
    bootstrap: str,
    tmp_path: Path,
) -> None:
    """After the run, the task's connector is gone: the tab says when it was deleted and how
    its connectorDeleted cleanup ended, and lists that deletion alone of all there were."""
    config = recording_source(tmp_path / "e.jsonl", new_topic(bootstrap))
    run_id = run_dag(api_server, "ui_tab_teardown", config)
    name = "ui_tab_teardown-made"
    deletions = {d["connector"]: d for d in overview(api_server)[""]}
    assert deletions[name]["state"] == "DONE" and "retired" in deletions

    log_in(browser, api_server, "admin", "/connect/")
    open_connector_tab(browser, api_server, f"ui_tab_teardown/{run_id}/create")
    wait = waiting(browser)
    wait.until(lambda b: b.find_element(By.ID, "empty").get_attribute("data-deletion") == "DONE")
    said = text(browser, "#empty") or ""
    assert said.startswith(f"{name} was deleted (requested "), said
    assert "its connectorDeleted cleanup finished" in said, said
    assert "No connector matches" not in said
    listed = browser.execute_script(
        "return [...document.querySelectorAll('#deletions tbody tr')].map((r) => r.cells[0].innerText);"
    )
    assert listed == [name]
    assert text(browser, "#deletions tbody tr td:nth-child(2)") == "DONE"
    browser.switch_to.default_content()
    screenshot(browser, "connector-tab-deleted.png", tmp_path)


def test_a_task_says_beside_its_state_what_it_waits_on(
    browser: WebDriver, api_server: AirflowApiServer, rest: TestClient, tmp_path: Path
) -> None:
    """A sink subscribed to a topic that does not exist runs, and says so (its run's
    ``waiting_on``, which the runtime writes with the task's heartbeat)."""
    topic = f"missing-{uuid.uuid4().hex[:10]}"
    config = {
        "connector.class": "tests.connectors.RecordingSinkConnector",
        EVENTS: str(tmp_path / "k.jsonl"),
        "topics": topic,
        **PLAIN,
    }
    assert rest.post("/connectors", json={"name": "late-sink", "config": config}).status_code == 201
    try:
        log_in(browser, api_server, "admin", "/connect/?connector=late-sink")
        task = '[data-details="late-sink"] [data-task="0"]'
        waiting(browser).until(
            lambda b: (
                text(b, f"{task} [data-role=why]") == f"Waiting on topic {topic} does not exist"
            )
        )
        assert text(browser, f"{task} .state") == "RUNNING"
        title = browser.find_element(By.CSS_SELECTOR, row("late-sink", "[data-role=tasks]"))
        assert title.get_attribute("title") == f"Task 0: Waiting on topic {topic} does not exist"
    finally:
        assert rest.delete("/connectors/late-sink").status_code == 204


def test_the_page_asks_an_anonymous_browser_to_log_in(
    browser: WebDriver, api_server: AirflowApiServer
) -> None:
    browser.delete_all_cookies()
    browser.get(f"{api_server.url}/connect/")
    waiting(browser).until(expected_conditions.url_contains("/auth/login"))
    assert shown(browser) == []


# -- the create and edit forms --------------------------------------------------------------
RECORDING_SINK = "tests.connectors.RecordingSinkConnector"


def form_errors(browser: WebDriver) -> dict[str, Any] | None:
    """What the form shows of a refusal no field holds: heading, lines (and the keys each
    names), note."""
    found = browser.execute_script(
        """const box = document.getElementById('form-errors');
        if (box.hidden) return null;
        return {
          summary: document.getElementById('form-error-summary').innerText,
          lines: [...box.querySelectorAll('li')].map((li) => li.innerText),
          keys: [...box.querySelectorAll('li')].map((li) => li.dataset.keys || null),
          note: document.getElementById('form-error-note').innerText,
        };"""
    )
    return None if found is None else dict(found)


def field_errors(browser: WebDriver, key: str) -> list[str]:
    """The errors the form shows under the field of ``key``."""
    return list(
        browser.execute_script(
            """const list = document.querySelector(
                 `#connector-form [data-errors-of="${CSS.escape(arguments[0])}"]`);
            return list ? [...list.querySelectorAll('li')].map((li) => li.innerText) : [];""",
            key,
        )
    )


def field_value(browser: WebDriver, key: str) -> str | None:
    return browser.execute_script(
        """const input = document.querySelector(
             `#connector-form [data-input="${CSS.escape(arguments[0])}"]`);
        return input && input.value;""",
        key,
    )


def set_field(browser: WebDriver, key: str, value: str) -> None:
    """Opens the group of ``key``'s field, enters ``value`` and leaves the field, which
    fires its change (and the form's check)."""
    browser.execute_script(
        """const input = document.querySelector(
             `#connector-form [data-input="${CSS.escape(arguments[0])}"]`);
        input.closest('details').open = true;
        input.value = arguments[1];
        input.dispatchEvent(new Event('change'));""",
        key,
        value,
    )


def paste(browser: WebDriver, config: dict[str, Any]) -> None:
    """Pastes ``config`` (a config or a whole create body) into the form's "Extra keys"."""
    browser.execute_script(
        """const area = document.getElementById('form-config');
        area.value = arguments[0];
        area.dispatchEvent(new Event('change'));""",
        json.dumps(config),
    )


def checked(browser: WebDriver) -> str:
    return text(browser, "#form-checked") or ""


def dialog_open(browser: WebDriver, dialog: str) -> bool:
    return browser.find_element(By.ID, dialog).get_attribute("open") is not None


def test_the_form_is_drawn_from_the_config_def_and_refuses_a_bad_config_field_by_field(
    browser: WebDriver,
    api_server: AirflowApiServer,
    rest: TestClient,
    bootstrap: str,
    tmp_path: Path,
) -> None:
    """The create form draws the chosen connector's ConfigDef (groups, defaults,
    documentation, recommended values) and shows config/validate's errors under each field
    before anything is written; fixed, it creates the connector, which then runs. What only
    the write finds is listed as the API answered it. Editing goes the same way."""
    wait = waiting(browser)
    log_in(browser, api_server, "admin", "/connect/")
    topic = new_topic(bootstrap)
    invalid = {"connector.class": RECORDING_SINK, EVENTS: str(tmp_path / "k.jsonl"), **PLAIN}
    click(browser, "#new-connector")
    offered = wait.until(
        lambda b: b.execute_script(
            "return [...document.querySelectorAll('#form-classes option')].map((o) => o.value);"
        )
    )
    assert "org.apache.kafka.connect.file.FileStreamSinkConnector" in offered
    chosen = browser.find_element(By.ID, "form-class")
    chosen.send_keys(RECORDING_SINK)
    browser.execute_script("arguments[0].dispatchEvent(new Event('change'));", chosen)
    wait.until(lambda b: field_errors(b, "topics"))
    assert field_errors(browser, "topics") == ["Must configure one of topics or topics.regex"]
    groups = browser.execute_script(
        "return [...document.querySelectorAll('#form-fields details.group')]"
        ".map((g) => g.dataset.group);"
    )
    assert groups[:3] == ["RecordingSinkConnector settings", "Common", "Error Handling"], groups
    tolerance = '#connector-form [data-field="errors.tolerance"]'
    assert (
        browser.find_element(By.CSS_SELECTOR, f"{tolerance} input").get_attribute("placeholder")
        == "none"
    )
    doc = browser.find_element(By.CSS_SELECTOR, f"{tolerance} .doc").get_attribute("textContent")
    assert "tolerating errors" in (doc or "")
    recommended = browser.execute_script(
        """return [...document.querySelectorAll(
             '#connector-form [data-field="value.converter"] datalist option')]
           .map((o) => o.value);"""
    )
    assert "org.apache.kafka.connect.storage.StringConverter" in recommended

    # Pasted keys move to their fields; each bad value is named under its own field, and
    # submitting writes nothing while any is left.
    browser.find_element(By.ID, "form-name").send_keys("formed")
    paste(browser, invalid)
    wait.until(lambda b: field_value(b, "value.converter") == "StringConverter")
    set_field(browser, "errors.tolerance", "some")
    wait.until(lambda b: field_errors(b, "errors.tolerance"))
    assert field_errors(browser, "errors.tolerance")[0].startswith(
        "Invalid value some for configuration errors.tolerance"
    )
    set_field(browser, "tasks.max", "0")
    wait.until(lambda b: field_errors(b, "tasks.max"))
    screenshot(browser, "connectors-form.png", tmp_path)
    click(browser, "#form-submit")
    wait.until(lambda b: "error(s)" in checked(b))
    assert dialog_open(browser, "connector-form")
    assert rest.get("/connectors/formed").status_code == 404

    set_field(browser, "errors.tolerance", "all")
    set_field(browser, "tasks.max", "1")
    set_field(browser, "topics", topic)
    wait.until(lambda b: checked(b).startswith("Checked: no error."))
    click(browser, "#form-submit")
    wait.until(lambda b: not dialog_open(b, "connector-form"))
    wait_until(lambda: task_states(rest, "formed") == ["RUNNING"], 60, "the created sink RUNNING")
    wait.until(lambda b: text(b, row("formed", "[data-role=state]")) == "RUNNING")

    # What only the write finds (the name is taken) is listed as the API answered it.
    click(browser, "#new-connector")
    browser.find_element(By.ID, "form-name").send_keys("formed")
    paste(browser, {**invalid, "topics": topic})
    wait.until(lambda b: checked(b).startswith("Checked: no error."))
    click(browser, "#form-submit")
    shown = wait.until(form_errors)
    assert shown["lines"] == ["Connector formed already exists"], shown
    click(browser, "#form-cancel")

    # Edit: the fields hold the stored config; a bad change shows before saving.
    click(browser, '[data-details="formed"] button[data-action=edit]')
    wait.until(lambda b: field_value(b, "errors.tolerance") == "all")
    assert browser.find_element(By.ID, "form-name").get_attribute("readonly") is not None
    set_field(browser, "errors.tolerance", "some")
    wait.until(lambda b: field_errors(b, "errors.tolerance"))
    set_field(browser, "errors.tolerance", "none")
    wait.until(lambda b: checked(b).startswith("Checked: no error."))
    click(browser, "#form-submit")
    wait.until(lambda b: not dialog_open(b, "connector-form"))
    assert rest.get("/connectors/formed/config").json()["errors.tolerance"] == "none"
    notice = banner(browser, "notice")
    assert notice is not None and notice[1] == "formed", notice
    assert rest.delete("/connectors/formed").status_code == 204


def test_the_class_list_offers_the_names_users_know_and_a_typed_one_draws_its_settings(
    browser: WebDriver,
    api_server: AirflowApiServer,
    rest: TestClient,
    bootstrap: str,
    tmp_path: Path,
) -> None:
    """The class list offers each installed connector by its Kafka (or Debezium) class name
    and its short names, each of which config/validate accepts. Typing one draws its
    settings at once, while the class field still has the focus: the connector's own
    first, each field labelled once, and every key without a default marked required (the
    name and the class too), no other. Created under its short name, it runs."""
    wait = waiting(browser)
    log_in(browser, api_server, "admin", "/connect/")
    click(browser, "#new-connector")
    offered = wait.until(
        lambda b: b.execute_script(
            "return [...document.querySelectorAll('#form-classes option')].map((o) => o.value);"
        )
    )
    assert {
        "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "FileStreamSourceConnector",
        "FileStreamSource",
        "io.debezium.connector.postgresql.PostgresConnector",
        "PostgresConnector",
        "JdbcSink",
    } <= set(offered), offered
    admin = api_server.session("admin")
    for name in offered:
        answer = admin.put(
            f"{api_server.url}/connect/api/connector-plugins/{name}/config/validate",
            json={"connector.class": name},
            timeout=30,
        )
        assert answer.status_code == 200, answer.text
        (chosen,) = [c for c in answer.json()["configs"] if c["value"]["name"] == "connector.class"]
        assert chosen["value"]["errors"] == [], (name, chosen)

    browser.find_element(By.ID, "form-name").send_keys("typed-source")
    browser.find_element(By.ID, "form-class").send_keys("FileStreamSource")
    wait.until(lambda b: field_errors(b, "topic"))
    assert browser.execute_script("return document.activeElement.id") == "form-class"
    groups = browser.execute_script(
        """return [...document.querySelectorAll('#form-fields details.group')].map((g) => [
             g.dataset.group, g.dataset.own !== undefined, g.open,
             [...g.querySelectorAll('[data-field]')].map((f) => f.dataset.field)]);"""
    )
    assert groups[0] == [
        "FileStreamSource settings",
        True,
        True,
        ["file", "files", "topic", "batch.size"],
    ]
    assert [g[0] for g in groups[1:3]] == ["Common", "Error Handling"], groups
    assert not any(own for _, own, *_ in groups[1:]), groups

    fields = browser.execute_script(
        """return Object.fromEntries([...document.querySelectorAll('#connector-form [data-field]')]
             .map((f) => [f.dataset.field, {
               label: f.querySelector('label').textContent.replace(/\\s+/g, ' ').trim(),
               marked: Boolean(f.querySelector('label .required')),
               errors: [...f.querySelectorAll('.field-errors li')].map((li) => li.textContent)}]));"""
    )
    answer = admin.put(
        f"{api_server.url}/connect/api/connector-plugins/FileStreamSource/config/validate",
        json={"name": "typed-source", "connector.class": "FileStreamSource"},
        timeout=30,
    ).json()
    required = {c["definition"]["name"] for c in answer["configs"] if c["definition"]["required"]}
    assert required >= {"name", "connector.class", "topic"} and "file" not in required
    assert {key for key, f in fields.items() if f["marked"]} == required, fields
    for key, f in fields.items():
        said_required = any("Missing required configuration" in e for e in f["errors"])
        assert f["marked"] or not said_required, (key, f)
    assert fields["file"]["label"] == "file" and fields["topic"]["label"] == "topic *"
    assert (
        fields["file"]["errors"]
        == fields["files"]["errors"]
        == ["Must configure one of file or files"]
    )
    assert fields["tasks.max"]["label"] == "Tasks max tasks.max"
    assert fields["connector.class"]["label"] == "Connector class *"

    lines = tmp_path / "lines.txt"
    lines.write_text("one\ntwo\n")
    set_field(browser, "file", str(lines))
    set_field(browser, "topic", new_topic(bootstrap))
    wait.until(lambda b: checked(b).startswith("Checked: no error."))
    click(browser, "#form-submit")
    wait.until(lambda b: not dialog_open(b, "connector-form"))
    try:
        wait_until(lambda: task_states(rest, "typed-source") == ["RUNNING"], 60, "RUNNING")
        wait.until(lambda b: text(b, row("typed-source", "td.mono")) == "FileStreamSource")
    finally:
        assert rest.delete("/connectors/typed-source").status_code == 204


def test_a_stopped_connectors_offsets_are_altered_and_reset_on_the_page(
    browser: WebDriver,
    api_server: AirflowApiServer,
    rest: TestClient,
    bootstrap: str,
    tmp_path: Path,
) -> None:
    """A sink created STOPPED (KIP-980) from the offsets its pasted body gives (KIP-995):
    the page alters them (staged: the runtime writes them to its consumer group before the
    connector starts), resets them, alters them again; resumed, the sink reads from there.
    Only a STOPPED connector's offsets change (409 otherwise), a source's at once."""
    wait = waiting(browser)
    log_in(browser, api_server, "admin", "/connect/")
    topic = new_topic(bootstrap)
    produce(bootstrap, topic, [str(i).encode() for i in range(10)])
    events = tmp_path / "held.jsonl"
    config = {"connector.class": RECORDING_SINK, EVENTS: str(events), "topics": topic, **PLAIN}

    def at(offset: int) -> list[dict[str, Any]]:
        return [
            {
                "partition": {"kafka_topic": topic, "kafka_partition": 0},
                "offset": {"kafka_offset": offset},
            }
        ]

    click(browser, "#new-connector")
    wait.until(lambda b: dialog_open(b, "connector-form"))
    Select(browser.find_element(By.ID, "form-initial-state")).select_by_value("STOPPED")
    paste(browser, {"name": "held", "config": config, "initial_offsets": at(3)})
    wait.until(lambda b: checked(b).startswith("Checked: no error."))
    assert checked(browser).endswith("It starts from the 1 initial offsets pasted.")
    click(browser, "#form-submit")
    wait.until(lambda b: text(b, row("held", "[data-role=state]")) == "STOPPED")
    assert rest.get("/connectors/held/status").json()["tasks"] == []
    assert rest.get("/connectors/held/offsets").json() == {"offsets": at(3)}

    def change_offsets(offsets: list[dict[str, Any]] | None) -> None:
        click(browser, '[data-details="held"] button[data-action=offsets]')
        wait.until(lambda b: dialog_open(b, "offsets-form"))
        if offsets is None:  # asked first
            click(browser, "#offsets-reset")
            wait.until(lambda b: dialog_open(b, "confirm"))
            assert (text(browser, "#confirm-text") or "").startswith("Reset every offset of held?")
            click(browser, "#confirm-button")
        else:
            browser.execute_script(
                "document.getElementById('offsets-text').value = arguments[0];",
                json.dumps(offsets),
            )
            click(browser, "#offsets-submit")
        wait.until(lambda b: not dialog_open(b, "offsets-form"))

    change_offsets(at(5))
    assert rest.get("/connectors/held/offsets").json() == {"offsets": at(5)}
    wait.until(lambda b: "5" in (text(b, '[data-details="held"]') or ""))
    # A reset asks first: cancelled, the offsets stay and their dialog with them.
    click(browser, '[data-details="held"] button[data-action=offsets]')
    click(browser, "#offsets-reset")
    click(browser, "#confirm button[value=cancel]")
    wait.until(lambda b: not dialog_open(b, "confirm"))
    assert dialog_open(browser, "offsets-form")
    assert rest.get("/connectors/held/offsets").json() == {"offsets": at(5)}
    click(browser, "#offsets-cancel")
    change_offsets(None)
    assert rest.get("/connectors/held/offsets").json() == {"offsets": []}
    wait.until(
        lambda b: b.find_elements(By.CSS_SELECTOR, '[data-details="held"] [data-role=staged]')
    )
    change_offsets(at(7))
    screenshot(browser, "connectors-offsets.png", tmp_path)
    click(browser, '[data-details="held"] button[data-action=resume]')
    wait_until(
        lambda: (
            [v for e in read_events(events) if e["event"] == "put" for v in e["values"]]
            == ["7", "8", "9"]
        ),
        60,
        "the sink reading from the altered offset",
    )
    running = api_server.session("admin").patch(
        f"{api_server.url}/connect/api/connectors/held/offsets", json={"offsets": at(1)}, timeout=30
    )
    assert running.status_code == 409, running.text
    assert "must be in the STOPPED state" in running.json()["message"]
    assert rest.delete("/connectors/held").status_code == 204

    # A source's offsets change at once.
    source = recording_source(tmp_path / "s.jsonl", new_topic(bootstrap), {"count": "2"})
    assert (
        rest.post("/connectors", json={"name": "held-source", "config": source}).status_code == 201
    )
    assert rest.put("/connectors/held-source/stop").status_code == 204
    wait_until(lambda: rest_state(rest, "held-source") == "STOPPED", 60, "the source STOPPED")
    offsets = [{"partition": {"source": "s"}, "offset": {"position": 42}}]
    altered = api_server.session("admin").patch(
        f"{api_server.url}/connect/api/connectors/held-source/offsets",
        json={"offsets": offsets},
        timeout=30,
    )
    assert altered.status_code == 200, altered.text
    assert rest.get("/connectors/held-source/offsets").json() == {"offsets": offsets}
    assert rest.delete("/connectors/held-source").status_code == 204


# -- the navigation's icon ------------------------------------------------------------------
ICON_ON_ITS_BACKGROUND = """
const done = arguments[arguments.length - 1];
const entry = document.querySelector('[aria-label="Connectors"]');
const shown = entry.querySelector('img');
let node = entry, background = null;
while (node && !background) {
  const color = getComputedStyle(node).backgroundColor;
  if (color !== 'rgba(0, 0, 0, 0)' && color !== 'transparent') background = color;
  node = node.parentElement;
}
const canvas = document.createElement('canvas');
canvas.width = canvas.height = 40;  // the 20 px icon at twice its size
const context = canvas.getContext('2d', { willReadFrequently: true });
context.fillStyle = background;
context.fillRect(0, 0, 40, 40);
const plain = Array.from(context.getImageData(0, 0, 1, 1).data.slice(0, 3));
const icon = new Image();
icon.onload = () => {
  context.drawImage(icon, 0, 0, 40, 40);
  const data = context.getImageData(0, 0, 40, 40).data;
  const pixels = [];
  for (let i = 0; i < data.length; i += 4) pixels.push([data[i], data[i + 1], data[i + 2]]);
  done({ current: entry.getAttribute('aria-current'), src: shown.getAttribute('src'), plain, pixels });
};
icon.onerror = () => done(null);
icon.src = shown.src;
"""


def luminance(rgb: list[int]) -> float:
    """WCAG's relative luminance of an sRGB colour."""
    linear = [c / 3294.6 if c <= 10 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: list[int], b: list[int]) -> float:
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_the_navigation_icon_reads_on_its_background_active_or_not_in_either_mode(
    browser: WebDriver, api_server: AirflowApiServer
) -> None:
    """Airflow draws the icon as an <img> on its own background (light or dark blue at rest,
    mid blue when the page shows): in each case, many of its pixels stand out from that
    background by WCAG's 3:1 for graphics (the old dark grey icon had none when active)."""
    log_in(browser, api_server, "admin", "/connect/")
    browser.set_script_timeout(30)
    for mode in ("light", "dark"):
        for path, active in (("/plugin/connectors", "page"), ("/dags", None)):
            browser.execute_script("localStorage.setItem('theme', arguments[0]);", mode)
            browser.get(f"{api_server.url}{path}")
            waiting(browser).until(
                lambda b: b.find_element(By.CSS_SELECTOR, '[aria-label="Connectors"] img')
            )
            drawn = browser.execute_async_script(ICON_ON_ITS_BACKGROUND)
            assert drawn is not None and drawn["current"] == active, (mode, path)
            dark = mode == "dark"
            assert drawn["src"].endswith("connectors-dark.svg" if dark else "connectors.svg")
            standing_out = [p for p in drawn["pixels"] if contrast(p, drawn["plain"]) >= 3]
            assert len(standing_out) >= 60, (mode, path, drawn["plain"], len(standing_out))
    browser.execute_script("localStorage.removeItem('theme');")


# -- a store no runtime serves: states held still ---------------------------------------------
SLOW_REFRESH_S = 30
"""The page's refresh interval there: what shows sooner came from a refresh of its own."""
SOON_S = 5
AIRFLOW_TIMEZONE = "Asia/Kolkata"
"""Airflow's ``[core] default_timezone`` there: neither UTC nor the browser's zone."""
FILE_SOURCE = {"connector.class": "FileStreamSource", "file": "/dev/null", "topic": "t"}
SLOT = (
    "Waiting for a Spark task slot: the application has 2 now, each running task holds one, "
    "or shares one with up to tasks.per.slot tasks (more executors or cores, fewer tasks, or "
    "a higher tasks.per.slot)"
)


@pytest.fixture(scope="module")
def still_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MetadataStore]:
    with sqlite_store(tmp_path_factory, "still") as store:
        yield store


@pytest.fixture(scope="module")
def still_server(
    still_store: MetadataStore, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AirflowApiServer]:
    server = AirflowApiServer(tmp_path_factory.mktemp("still-airflow"), still_store.url)
    server.env["AIRFLOW__CONNECT__UI_REFRESH_INTERVAL"] = str(SLOW_REFRESH_S)
    server.env["AIRFLOW__CORE__DEFAULT_TIMEZONE"] = AIRFLOW_TIMEZONE
    with serving(server):
        yield server


def as_a_runtime_would(
    store: MetadataStore,
    name: str,
    state: State,
    tasks: list[State | str],
    target: TargetState = TargetState.STARTED,
) -> None:
    """Writes connector ``name`` in ``state`` with ``tasks`` as the herder records them (a
    string: an UNASSIGNED task the run watcher says waits for that)."""
    store.configs.create_connector(name, FILE_SOURCE, target)
    generation = store.configs.write_task_configs(name, [{}] * len(tasks))
    store.statuses.put_connector_status(name, state, "still-worker", generation=generation)
    for task_id, task in enumerate(tasks):
        run = store.statuses.assign_task(name, task_id, generation, "still-worker")
        if isinstance(task, State):  # a str too
            store.statuses.put_task_status(name, task_id, run, task, "still-worker")
        else:
            store.statuses.note_unassigned(name, task_id, run, task)


def test_the_buttons_follow_each_state_and_waiting_tasks_say_why(
    browser: WebDriver, still_server: AirflowApiServer, still_store: MetadataStore
) -> None:
    """Pause only a RUNNING connector, Resume a paused or stopped one, Stop any but a stopped
    one, restart a started one that runs or failed (its failed tasks only when some
    failed); a task waiting for a Spark slot says so beside its state."""
    expected = {
        "b-running": (State.RUNNING, [State.RUNNING], TargetState.STARTED, WHEN_RUNNING),
        "b-paused": (State.PAUSED, [State.PAUSED], TargetState.PAUSED, WHEN_PAUSED),
        "b-stopped": (State.STOPPED, [], TargetState.STOPPED, {"resume", "offsets"} | EVERY_TIME),
        "b-task-failed": (
            State.RUNNING,
            [State.RUNNING, State.FAILED],
            TargetState.STARTED,
            WHEN_RUNNING | {"restart-failed"},
        ),
        "b-failed": (
            State.FAILED,
            [],
            TargetState.STARTED,
            {"restart-failed", "restart-all", "stop"} | EVERY_TIME,
        ),
        "b-waiting": (State.UNASSIGNED, [SLOT], TargetState.STARTED, {"stop"} | EVERY_TIME),
    }
    for name, (state, tasks, target, _) in expected.items():
        as_a_runtime_would(still_store, name, state, tasks, target)
    log_in(browser, still_server, "admin", "/connect/")
    wait = waiting(browser)
    wait.until(lambda b: set(expected) <= set(shown(b)))
    for name in expected:
        click(browser, row(name))
    for name, (*_, allowed) in expected.items():
        wait.until(lambda b, n=name: enabled_actions(b, n) is not None)
        assert enabled_actions(browser, name) == allowed, name
    waits = '[data-details="b-waiting"] [data-task="0"] [data-role=why]'
    assert text(browser, waits) == SLOT
    assert f"Task 0: {SLOT}" in str(
        browser.find_element(By.CSS_SELECTOR, row("b-waiting", "[data-role=tasks]")).get_attribute(
            "title"
        )
    )
    blocked = '[data-details="b-paused"] button[data-action=pause]'
    assert "resume it first" in str(
        browser.find_element(By.CSS_SELECTOR, blocked).get_attribute("title")
    )


def airflow_time(iso: str, zone: str) -> str:
    """``iso`` as Airflow's UI shows a moment in ``zone``."""
    return dt.datetime.fromisoformat(iso).astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M:%S")


def test_times_show_as_airflow_shows_them_in_its_timezone(
    browser: WebDriver, still_server: AirflowApiServer, still_store: MetadataStore
) -> None:
    """Airflow's format (24-hour, ISO-like), in Airflow's ``[core] default_timezone``, or
    once its user chose a timezone in Airflow's UI, in that one; never the browser's."""
    as_a_runtime_would(still_store, "timed", State.RUNNING, [State.RUNNING])
    still_store.configs.delete_connector("timed")
    still_store.configs.finish_deletion("timed")
    (deletion,) = [d for d in overview(still_server)[""] if d["connector"] == "timed"]
    assert deletion["finished_at"]
    times = """return [...document.querySelectorAll('#deletions tbody tr')]
        .filter((r) => r.cells[0].innerText === 'timed')
        .flatMap((r) => [...r.querySelectorAll('time')].map((t) => [t.innerText, t.title]));"""

    def shown_in(zone: str) -> list[list[str]]:
        moments = (deletion["requested_at"], deletion["finished_at"])
        return [[airflow_time(moment, zone), zone] for moment in moments]

    log_in(browser, still_server, "admin", "/connect/")
    wait = waiting(browser)
    wait.until(lambda b: b.execute_script(times) == shown_in(AIRFLOW_TIMEZONE))
    refreshed = text(browser, "#refreshed") or ""
    assert re.fullmatch(
        rf"Refreshed \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d \({AIRFLOW_TIMEZONE}\)", refreshed
    ), refreshed
    chosen = "America/Sao_Paulo"  # as Airflow's UI keeps its user's choice
    browser.execute_script(
        "localStorage.setItem('timezone', JSON.stringify(arguments[0]));", chosen
    )
    try:
        browser.refresh()
        wait.until(lambda b: b.execute_script(times) == shown_in(chosen))
    finally:
        browser.execute_script("localStorage.removeItem('timezone');")


def test_an_action_shows_at_once_and_its_banners_clear(
    browser: WebDriver, still_server: AirflowApiServer, still_store: MetadataStore
) -> None:
    """The page refreshes right after an action's request returns, then often until the
    runtime applied it (the page's own refresh comes every 30 s here). Banners clear when
    dismissed, on the next successful action, after a while, and when their connector is
    gone, but not for an error about a connector already gone."""
    for name in ("acting", "doomed", "vanished"):
        as_a_runtime_would(still_store, name, State.RUNNING, [State.RUNNING])
    log_in(browser, still_server, "admin", "/connect/")
    wait = waiting(browser)
    soon = WebDriverWait(browser, SOON_S, ignored_exceptions=(StaleElementReferenceException,))
    wait.until(lambda b: {"acting", "doomed", "vanished"} <= set(shown(b)))
    for name in ("acting", "doomed", "vanished"):
        click(browser, row(name))

    # Pause: asked for at once, applied as soon as the runtime has.
    click(browser, '[data-details="acting"] button[data-action=pause]')
    soon.until(lambda b: text(b, row("acting", "[data-role=pending]")) == "→ PAUSED")
    assert enabled_actions(browser, "acting") == WHEN_PAUSED
    assert banner(browser, "notice") == (
        "Pause: requested for acting; the runtime applies it at its next reconcile.",
        "acting",
    )
    still_store.statuses.put_connector_status("acting", State.PAUSED, "still-worker")
    soon.until(lambda b: text(b, row("acting", "[data-role=state]")) == "PAUSED")
    click(browser, "#notice button[data-dismiss=notice]")
    assert banner(browser, "notice") is None

    # Delete: its banner goes with the connector once the cleanup finished.
    click(browser, '[data-details="doomed"] button[data-action=delete]')
    click(browser, "#confirm-button")
    soon.until(lambda b: "(deleting)" in (text(b, row("doomed")) or ""))
    assert banner(browser, "notice") == (
        "Delete: requested for doomed; the runtime applies it at its next reconcile.",
        "doomed",
    )
    still_store.configs.finish_deletion("doomed")
    soon.until(lambda b: "doomed" not in shown(b))
    assert banner(browser, "notice") is None
    assert "doomed" in (text(browser, "#deletions") or "")

    # An error about a connector deleted behind the page's back stays, until the next
    # successful action.
    still_store.configs.delete_connector("vanished")
    still_store.configs.finish_deletion("vanished")
    click(browser, '[data-details="vanished"] button[data-action=stop]')
    soon.until(lambda b: "vanished" not in shown(b))
    error = banner(browser, "error")
    assert error is not None and error[0].startswith("Stop vanished failed: 404"), error
    click(browser, '[data-details="acting"] button[data-action=resume]')
    soon.until(lambda b: banner(b, "error") is None)
    assert banner(browser, "notice") == (
        "Resume: requested for acting; the runtime applies it at its next reconcile.",
        "acting",
    )

    # A notice left alone goes after a while.
    WebDriverWait(browser, 30).until(lambda b: banner(b, "notice") is None)


# -- the metadata database away ---------------------------------------------------------------
@pytest.fixture(scope="module")
def outage_server(
    pg_cluster: PostgresCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AirflowApiServer]:
    with serving(AirflowApiServer(tmp_path_factory.mktemp("outage"), pg_cluster.url)) as s:
        yield s


def timed_overview(server: AirflowApiServer) -> tuple[int, dict[str, Any], float]:
    session = server.session("viewer")
    started = time.monotonic()
    response = session.get(f"{server.url}/connect/api/connectors", timeout=30)
    return response.status_code, response.json(), time.monotonic() - started


def test_the_page_says_the_database_is_unreachable_within_two_seconds_until_it_is_back(
    outage_server: AirflowApiServer, pg_cluster: PostgresCluster, browser: WebDriver
) -> None:
    """Hung (frozen: connections taken, never answered) and down (crashed: refused), the
    page's API answers 503 with Kafka Connect's error body naming the database and the
    cause, within 2 s and at once after the first; the page shows it in its banner, keeps
    the list it last read, and clears the banner once the database is back."""
    store = MetadataStore(pg_cluster.url)
    try:
        as_a_runtime_would(store, "kept", State.RUNNING, [State.RUNNING])
    finally:
        store.close()
    assert timed_overview(outage_server)[0] == 200
    named = f"The metadata database {pg_cluster.url} is unreachable: "
    with pg_cluster.frozen():
        status, body, took = timed_overview(outage_server)
        assert (status, body) == (
            503,
            {"error_code": 503, "message": f"{named}no answer within 1.5 s"},
        )
        assert took < 2, took
        assert timed_overview(outage_server)[2] < 0.5  # failing fast now
    wait_until(lambda: timed_overview(outage_server)[0] == 200, 30, "back after the freeze")

    log_in(browser, outage_server, "viewer", "/connect/")
    wait = waiting(browser)
    wait.until(lambda b: shown(b) == ["kept"])
    with pg_cluster.crashed():
        status, body, took = timed_overview(outage_server)
        assert status == 503 and took < 2, (status, took)
        assert body["message"].startswith(f"{named}connection failed: ")
        assert "Connection refused" in body["message"]
        wait.until(lambda b: "is unreachable" in (text(b, "#read-error") or ""))
        said = text(browser, "#read-error") or ""
        assert said.startswith(f"Could not read the connectors: 503 Service Unavailable: {named}")
        assert said.endswith("(the list below is as last read; trying again every 1 s)")
        assert shown(browser) == ["kept"]  # what it read before stays
    wait.until(lambda b: not b.find_element(By.ID, "read-error").is_displayed())
    assert timed_overview(outage_server)[0] == 200
