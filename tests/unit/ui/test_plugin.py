"""The UI plugin's registration, the connection form, and what the page is told."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from airflow_provider_connect.control.secrets import hide_restored, masked_config
from airflow_provider_connect.get_provider_info import get_provider_info
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.links.connector import (
    airflow_frames_deep_links,
    connector_page_url,
)
from airflow_provider_connect.store import MetadataStore
from airflow_provider_connect.ui.plugin import ConnectUIPlugin

PLUGIN_CLASS = "airflow_provider_connect.ui.plugin.ConnectUIPlugin"


def test_the_plugin_is_registered_by_provider_info_and_entry_point() -> None:
    assert get_provider_info()["plugins"] == [{"name": "connect", "plugin-class": PLUGIN_CLASS}]
    (entry,) = [e for e in entry_points(group="airflow.plugins") if e.name == "connect"]
    assert entry.load() is ConnectUIPlugin


def test_the_plugin_mounts_the_page_and_adds_a_nav_entry_and_a_task_instance_tab() -> None:
    (app,) = ConnectUIPlugin.fastapi_apps
    assert app["url_prefix"] == "/connect"
    paths = {route.path for route in app["app"].routes}
    assert {"/", "/api/connectors", "/api/connectors/{name}/pause"} <= paths
    views = {v["destination"]: v for v in ConnectUIPlugin.external_views}
    assert views["nav"]["href"] == "connect/" and views["nav"]["url_route"] == "connectors"
    tab = views["task_instance"]["href"]
    assert tab.startswith("connect/?") and "{DAG_ID}" in tab and "{TASK_ID}" in tab
    static = Path(__file__).parents[3] / "airflow_provider_connect" / "ui" / "static"
    for view in views.values():  # an icon for each of Airflow's colour modes, served
        assert view["icon"] == "connect/static/connectors.svg"
        assert view["icon_dark_mode"] == "connect/static/connectors-dark.svg"
    assert (static / "connectors.svg").is_file() and (static / "connectors-dark.svg").is_file()


def test_the_status_link_opens_the_connector_inside_airflow_from_3_3() -> None:
    """Airflow 3.3 frames ``/<path>?<query>`` of its origin at ``/plugin/<url_route>/<path>``
    (a base URL's path comes twice: the route is under it, and so is the page); before
    3.3 the frame always shows the page's start, so the link opens the page itself."""
    base = "https://airflow.example.com/team/"
    assert connector_page_url(base, "a b/c", framed=True) == (
        "https://airflow.example.com/team/plugin/connectors/team/connect/?connector=a%20b%2Fc"
    )
    assert connector_page_url("", "orders", framed=True) == (
        "/plugin/connectors/connect/?connector=orders"
    )
    assert connector_page_url(base, "a b/c", framed=False) == (
        "https://airflow.example.com/team/connect/?connector=a%20b%2Fc"
    )
    assert [
        airflow_frames_deep_links(v) for v in ("3.0.6", "3.2.2", "3.3.0", "3.3.2", "4.0.0")
    ] == [
        False,
        False,
        True,
        True,
        True,
    ]
    assert airflow_frames_deep_links()  # the installed 3.3


def test_airflow_reads_the_connection_form_from_provider_info() -> None:
    from airflow.providers_manager import ProvidersManager

    manager = ProvidersManager()
    widgets = manager.connection_form_widgets
    assert widgets["extra__connect__metadata_url"].field["schema"]["title"] == (
        "Metadata database URL"
    )
    assert widgets["extra__connect__rest_url"].field["schema"]["title"] == "Runtime REST URL"
    assert widgets["extra__connect__metadata_timeout"].field["schema"]["title"] == (
        "Metadata database timeout"
    )
    behaviour = manager.field_behaviours["connect"]
    assert behaviour["relabeling"] == {"schema": "Database", "login": "User"}
    assert behaviour["placeholders"]["extra__connect__rest_url"] == "http://127.0.0.1:8083"


def test_the_hook_gives_the_form_to_airflow_before_3_2() -> None:
    widgets = ConnectHook.get_connection_form_widgets()
    labels = {name: field.args[0] for name, field in widgets.items()}
    assert labels == {
        "metadata_url": "Metadata database URL",
        "rest_url": "Runtime REST URL",
        "metadata_timeout": "Metadata database timeout",
    }
    assert ConnectHook.get_ui_field_behaviour()["placeholders"]["schema"] == "connect"


def test_the_hook_reads_extras_saved_by_either_form(monkeypatch: pytest.MonkeyPatch) -> None:
    extra = {"extra__connect__metadata_url": "sqlite:///x.db", "rest_url": "http://h:8083"}
    connection = json.dumps({"conn_type": "connect", "extra": extra})
    monkeypatch.setenv("AIRFLOW_CONN_FORM", connection)
    hook = ConnectHook("form")
    assert (hook.metadata_url, hook.rest_url) == ("sqlite:///x.db", "http://h:8083")


def test_a_config_of_an_unknown_class_hides_what_looks_secret() -> None:
    config = {
        "connector.class": "com.example.NotInstalledHere",
        "connection.password": "p",
        "aws.secret.access.key": "s",
        "sasl.jaas.config": "j",
        "connection.user": "u",
    }
    assert masked_config(config) == {
        **config,
        "connection.password": "[hidden]",
        "aws.secret.access.key": "[hidden]",
        "sasl.jaas.config": "[hidden]",
    }


def test_a_validation_with_restored_secrets_shows_none_of_them() -> None:
    """The edit form validates a config whose ``[hidden]`` values were restored: the
    answer hides those values again, and masks them in every error message."""
    infos = {
        "configs": [
            {"value": {"name": "connection.password", "value": "s3cret", "errors": []}},
            {
                "value": {
                    "name": "connection.url",
                    "value": "postgres://u:s3cret@db/x",
                    "errors": ["Invalid value postgres://u:s3cret@db/x: cannot connect"],
                }
            },
            {"value": {"name": "topics", "value": "orders", "errors": ["Bad topics"]}},
        ]
    }
    restored = {"connection.password": "s3cret", "connection.url": "postgres://u:s3cret@db/x"}
    shown = json.dumps(hide_restored(infos, restored))
    assert "s3cret" not in shown
    values = [c["value"] for c in infos["configs"]]
    assert [v["value"] for v in values] == ["[hidden]", "[hidden]", "orders"]
    assert values[1]["errors"] == ["Invalid value [hidden]: cannot connect"]
    assert values[2]["errors"] == ["Bad topics"]


@contextmanager
def page_api(monkeypatch: pytest.MonkeyPatch, metadata_url: str) -> Iterator[TestClient]:
    """The Connectors page's API on the metadata database at ``metadata_url``, with the
    auth manager's checks passed."""
    from airflow_provider_connect.ui import app as ui_app

    extra = {"metadata_url": metadata_url}
    monkeypatch.setenv("AIRFLOW__CONNECT__UI_CONN_ID", "page")
    monkeypatch.setenv("AIRFLOW_CONN_PAGE", json.dumps({"conn_type": "connect", "extra": extra}))
    ui_app.connect_hook.cache_clear()
    app = ui_app.create_app()
    for check in (*ui_app.READ, *ui_app.CHANGE, *ui_app.DELETE):
        app.dependency_overrides[check.dependency] = lambda: None  # the auth manager's part
    try:
        yield TestClient(app)
    finally:
        ui_app.connect_hook.cache_clear()


def test_the_page_api_answers_503_until_a_runtime_migrated_the_database(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with page_api(monkeypatch, f"sqlite:///{tmp_path / 'empty.db'}") as client:
        response = client.get("/api/connectors")
    assert response.status_code == 503
    assert response.json()["error_code"] == 503 and "migrate" in response.json()["message"]


def test_the_form_offers_and_recommends_plugins_by_their_java_names(
    monkeypatch: pytest.MonkeyPatch, store: MetadataStore, tmp_path: Path
) -> None:
    """The page's plugin list is the runtime's ``GET /connector-plugins`` with each
    connector's short names, and its validation recommends converters and transformations
    as Kafka Connect names them and names the connector's own keys; a config of Java names
    validates."""
    kafka = "org.apache.kafka.connect."
    plugin = kafka + "file.FileStreamSourceConnector"
    config = {
        "name": "java-named",
        "connector.class": plugin,
        "file": str(tmp_path / "in.txt"),
        "topic": "t",
        "value.converter": kafka + "json.JsonConverter",
        "transforms": "add",
        "transforms.add.type": kafka + "transforms.InsertField$Value",
        "transforms.add.static.field": "f",
        "transforms.add.static.value": "v",
    }
    with page_api(monkeypatch, store.url) as client:
        offered = client.get("/api/connector-plugins").json()
        answer = client.put(f"/api/connector-plugins/{plugin}/config/validate", json=config)
    assert {p["class"] for p in offered} >= {plugin, kafka + "file.FileStreamSinkConnector"}
    assert {p["type"] for p in offered} == {"source", "sink"}
    (source,) = [p for p in offered if p["class"] == plugin]
    assert source["aliases"] == ["FileStreamSourceConnector", "FileStreamSource"]
    assert answer.status_code == 200 and answer.json()["error_count"] == 0, answer.text
    assert answer.json()["connector_keys"] == ["file", "files", "topic", "batch.size"]
    values = {c["value"]["name"]: c["value"] for c in answer.json()["configs"]}
    assert kafka + "storage.StringConverter" in values["value.converter"]["recommended_values"]
    assert (
        kafka + "transforms.InsertField$Key" in values["transforms.add.type"]["recommended_values"]
    )
    assert not [
        v
        for key in ("key.converter", "value.converter", "transforms.add.type")
        for v in values[key]["recommended_values"]
        if v.startswith("airflow_provider_connect")
    ]
