"""Config providers (KIP-297, KIP-421, KIP-632, KIP-887) and the resolution of
``${provider:path:key}``: Kafka's file, directory and environment providers with their
params, the Airflow connection provider, and placeholders put back into task configs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airflow_provider_connect.config_providers import (
    AirflowConfigProvider,
    DirectoryConfigProvider,
    EnvVarConfigProvider,
    FileConfigProvider,
)
from airflow_provider_connect.connect.errors import ConfigException
from airflow_provider_connect.runtime.config_transformer import (
    ConfigTransformer,
    reverse_transform,
)

K = "org.apache.kafka.common.config.provider."


def test_file_provider_and_allowed_paths(tmp_path: Path) -> None:
    creds = tmp_path / "secrets" / "creds.properties"
    creds.parent.mkdir()
    creds.write_text("user=alice\npassword=hunter2\n# a comment\n")
    provider = FileConfigProvider()
    provider.configure({})
    assert provider.get(str(creds)) == {"user": "alice", "password": "hunter2"}
    assert provider.get(str(creds), {"password", "nope"}) == {"password": "hunter2"}
    assert provider.get("") == {}
    fenced = FileConfigProvider()
    fenced.configure({"allowed.paths": str(tmp_path / "elsewhere")})
    assert fenced.get(str(creds)) == {}  # outside the allowed paths: nothing
    allowed = FileConfigProvider()
    allowed.configure({"allowed.paths": str(creds.parent)})
    assert allowed.get(str(creds), {"user"}) == {"user": "alice"}
    with pytest.raises(ConfigException, match="Could not read properties"):
        provider.get(str(tmp_path / "missing.properties"))


def test_directory_provider(tmp_path: Path) -> None:
    (tmp_path / "password").write_text("hunter2")
    (tmp_path / "user").write_text("alice")
    (tmp_path / "sub").mkdir()
    provider = DirectoryConfigProvider()
    provider.configure({})
    assert provider.get(str(tmp_path)) == {"password": "hunter2", "user": "alice"}
    assert provider.get(str(tmp_path), {"password"}) == {"password": "hunter2"}
    assert provider.get("") == {}  # no path: nothing, not the working directory


def test_env_var_provider_and_allowlist(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DB_PASSWORD", "hunter2")
    monkeypatch.setenv("OTHER", "x")
    provider = EnvVarConfigProvider()
    provider.configure({"allowlist.pattern": "DB_.*"})
    assert provider.get("", {"DB_PASSWORD", "OTHER"}) == {"DB_PASSWORD": "hunter2"}
    assert provider.get("some/path", {"DB_PASSWORD"}) == {}  # env vars have no path


def test_airflow_provider_reads_connections_through_secrets_backends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(
        "AIRFLOW_CONN_WAREHOUSE",
        json.dumps(
            {
                "conn_type": "postgres",
                "login": "alice",
                "password": "hunter2",
                "host": "db",
                "extra": {"role": "rw"},
            }
        ),
    )
    provider = AirflowConfigProvider()
    provider.configure({})
    assert provider.get("warehouse", {"password", "login", "host", "extra.role"}) == {
        "password": "hunter2",
        "login": "alice",
        "host": "db",
        "extra.role": "rw",
    }


def test_transform_resolves_known_variables_and_leaves_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    creds = tmp_path / "creds.properties"
    creds.write_text("password=hunter2\n")
    monkeypatch.setenv("DB_HOST", "db.internal")
    transformer = ConfigTransformer(
        {
            "config.providers": "file,env",
            "config.providers.file.class": K + "FileConfigProvider",
            "config.providers.env.class": K + "EnvVarConfigProvider",
            "config.providers.env.param.allowlist.pattern": "DB_.*",
        }
    )
    config = {
        "connection.password": f"${{file:{creds}:password}}",
        "connection.url": "postgresql://${env:DB_HOST}:5432/db",
        "unknown.provider": "${vault:secret/db:password}",
        "unknown.key": f"${{file:{creds}:nope}}",
        "plain": "value",
    }
    assert transformer.transform(config) == {
        "connection.password": "hunter2",
        "connection.url": "postgresql://db.internal:5432/db",
        "unknown.provider": "${vault:secret/db:password}",
        "unknown.key": f"${{file:{creds}:nope}}",
        "plain": "value",
    }
    transformer.close()


def test_task_configs_get_the_placeholders_back() -> None:
    raw = {"connection.password": "${file:/c.properties:password}", "topic": "t"}
    returned = [{"connection.password": "hunter2", "topic": "t", "task": "0"}, {"topic": "t"}]
    assert reverse_transform(raw, returned) == [
        {"connection.password": "${file:/c.properties:password}", "topic": "t", "task": "0"},
        {"topic": "t"},
    ]
