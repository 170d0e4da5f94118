"""Schema migrations belong to the runtime and to ``connect-runtime db``: the Airflow side
never migrates, and says which command to run when the schema is behind or ahead."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import text

from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.store import (
    MIGRATE_COMMAND,
    SCHEMA_REVISION,
    Database,
    MetadataStore,
    SchemaVersionError,
)
from airflow_provider_connect.store.database import MIGRATIONS, REVISIONS, VERSION_TABLE
from tests.databases import database

pytestmark = pytest.mark.integration
CLI = str(Path(sys.executable).parent / "connect-runtime")


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> object:
    with database(request.param, tmp_path) as url:
        yield url


def db_command(action: str, url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, "db", action, "--metadata-url", url], capture_output=True, text=True, timeout=120
    )


def test_the_known_revisions_are_the_migration_scripts() -> None:
    scripts = ScriptDirectory(str(MIGRATIONS))
    assert tuple(reversed([s.revision for s in scripts.walk_revisions()])) == REVISIONS
    assert scripts.get_current_head() == SCHEMA_REVISION


def test_db_check_then_migrate_then_check(empty_url: str) -> None:
    before = db_command("check", empty_url)
    assert before.returncode == 1
    assert "has no Connect schema yet" in before.stderr and MIGRATE_COMMAND in before.stderr
    migrated = db_command("migrate", empty_url)
    assert migrated.returncode == 0, migrated.stderr
    assert f"schema revision {SCHEMA_REVISION}" in migrated.stdout
    after = db_command("check", empty_url)
    assert after.returncode == 0, after.stderr


def _set_revision(url: str, revision: str) -> None:
    db = Database(url)
    with db.engine.begin() as connection:
        connection.execute(text(f"UPDATE {VERSION_TABLE} SET version_num = :r"), {"r": revision})
    db.close()


def test_the_airflow_hook_never_migrates_and_names_the_command(
    empty_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "AIRFLOW_CONN_CONNECT_DEFAULT",
        json.dumps({"conn_type": "connect", "extra": {"metadata_url": empty_url}}),
    )
    hook = ConnectHook()
    with pytest.raises(SchemaVersionError, match="run `connect-runtime db migrate`"):
        hook.get_config("anything")
    assert Database(empty_url).revision() is None  # the hook did not migrate it
    ok, message = hook.test_connection()
    assert not ok and MIGRATE_COMMAND in message

    MetadataStore(empty_url, migrate=True).close()
    _set_revision(empty_url, REVISIONS[-2])
    with pytest.raises(SchemaVersionError, match=f"behind {SCHEMA_REVISION}: run"):
        ConnectHook().get_status("anything")
    _set_revision(empty_url, "9999")
    with pytest.raises(SchemaVersionError, match="a newer version migrated it"):
        ConnectHook().get_status("anything")
    assert db_command("check", empty_url).returncode == 1


def test_serve_with_no_migrate_refuses_an_unmigrated_database(
    empty_url: str, tmp_path: Path
) -> None:
    worker = tmp_path / "worker.properties"
    worker.write_text(f"metadata.url={empty_url}\n")
    served = subprocess.run(
        [CLI, "serve", "--config", str(worker), "--no-migrate"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert served.returncode == 1
    assert "has no Connect schema yet" in served.stderr
    assert Database(empty_url).revision() is None
