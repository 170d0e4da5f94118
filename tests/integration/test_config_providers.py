"""A secret from a config provider end to end: the JDBC sink logs in with a user and password
read from a properties file through ``${file:…}``; the secret reaches the database driver and
nothing else: no REST answer, no log line (driver or executors), nothing Airflow shows, no row
of the metadata database."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, inspect, text

from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.runtime import Connect
from airflow_provider_connect.runtime.rest.app import create_app
from tests.databases import POSTGRES_ADMIN_URL, postgres_database
from tests_common.kafka import new_topic, produce, wait_until

pytestmark = pytest.mark.integration
SCHEMA = {
    "type": "struct",
    "optional": False,
    "fields": [{"field": "id", "type": "int32", "optional": False}],
}


def every_row(url: str) -> str:
    """Every row of every table of a database, as text."""
    engine = create_engine(url)
    try:
        with engine.connect() as c:
            return "\n".join(
                repr(tuple(row))  # a Row's own repr shortens long values
                for name in inspect(engine).get_table_names()
                for row in c.execute(text(f'SELECT * FROM "{name}"'))
            )
    finally:
        engine.dispose()


def test_a_file_secret_reaches_the_database_and_nothing_else(
    worker_props: dict[str, str],
    spark: Any,
    bootstrap: str,
    connection: str,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = f"s3cret-{uuid.uuid4().hex}"
    role = f"connect_secret_{uuid.uuid4().hex[:8]}"
    creds = tmp_path / "creds.properties"
    creds.write_text(f"user={role}\npassword={secret}\n")
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f"CREATE ROLE {role} LOGIN PASSWORD '{secret}'"))
    topic = new_topic(bootstrap)
    produce(
        bootstrap,
        topic,
        [json.dumps({"schema": SCHEMA, "payload": {"id": i}}).encode() for i in range(10)],
    )
    worker = {
        **worker_props,
        "config.providers": "file",
        "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
        "config.providers.file.param.allowed.paths": str(tmp_path),
    }
    runtime = Connect("secrets-runtime", worker)
    runtime.start()
    caplog.set_level("DEBUG")
    try:
        with postgres_database() as url:
            with create_engine(url, isolation_level="AUTOCOMMIT").connect() as c:
                c.execute(text(f"GRANT CREATE, USAGE ON SCHEMA public TO {role}"))
            config = {
                "connector.class": "JdbcSinkConnector",
                "connection.url": url.replace("postgres@", "@"),
                "connection.user": f"${{file:{creds}:user}}",
                "connection.password": f"${{file:{creds}:password}}",
                "topics": topic,
                "auto.create": "true",
                "table.name.format": "secret_rows",
                "value.converter": "JsonConverter",
            }
            with TestClient(create_app(runtime.store, runtime.worker)) as rest:
                created = rest.post("/connectors", json={"name": "with-secret", "config": config})
                assert created.status_code == 201, created.text
                engine = create_engine(url)
                wait_until(
                    lambda: (
                        inspect(engine).has_table("secret_rows")
                        and engine.connect()
                        .execute(text("SELECT count(*) FROM secret_rows"))
                        .scalar_one()
                        == 10
                    ),
                    90,
                    "the rows written as the role read from the file",
                )
                engine.dispose()
                answers = [
                    rest.get(path).text
                    for path in (
                        "/connectors?expand=status&expand=info",
                        "/connectors/with-secret",
                        "/connectors/with-secret/config",
                        "/connectors/with-secret/tasks",
                        "/connectors/with-secret/status",
                    )
                ]
                assert f"${{file:{creds}:user}}" in answers[2]  # placeholders shown as written
                hook = ConnectHook(connection)
                shown = [
                    json.dumps(hook.get_config("with-secret")),
                    json.dumps(hook.get_status("with-secret")),
                ]
                hook.close()
                store_rows = every_row(runtime.store.url)
                rest.delete("/connectors/with-secret")
                wait_until(
                    lambda: (
                        (d := runtime.store.configs.deletion("with-secret")) is not None
                        and d.state.value == "DONE"
                    ),
                    60,
                    "deleted",
                )
    finally:
        runtime.stop()
        with admin.connect() as c:
            c.execute(text(f"DROP ROLE IF EXISTS {role}"))
        admin.dispose()
    output = capfd.readouterr()
    for where, seen in [
        ("REST", "\n".join(answers)),
        ("Airflow", "\n".join(shown)),
        ("the metadata database", store_rows),
        ("the driver's log", caplog.text),
        ("the executors' output", output.out + output.err),
    ]:
        assert secret not in seen, f"the secret leaked into {where}"
    assert "${file:" in store_rows, store_rows  # the store kept the placeholder
