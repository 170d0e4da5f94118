"""``connect-runtime``: run the Connect runtime from the command line.

    connect-runtime standalone WORKER.properties CONNECTOR.properties|CONNECTOR.json [...]
    connect-runtime serve --config WORKER.properties
    connect-runtime db migrate|check (--config WORKER.properties | --metadata-url URL)

``standalone`` is KIP-26's agent mode: the connectors come from the files (created, or
updated when they exist; a JSON file may be a REST create body, with ``initial_state`` and
``initial_offsets``) and offsets live in a local SQLite file
(``offset.storage.file.filename``, unless ``metadata.url`` says otherwise). ``serve`` runs
the herder and the REST API on the metadata database of the worker config; connectors are
managed through REST or Airflow. Both run until SIGINT or SIGTERM, then stop every task
gracefully, and both migrate the metadata database's schema at start unless given
``--no-migrate``. ``db migrate`` brings the schema to this version's revision (as
``airflow db migrate`` does for Airflow's); ``db check`` exits 1 with the reason when the
schema is behind or ahead of it. Airflow never migrates the metadata database.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from jproperties import Properties

from airflow_provider_connect.connect.errors import AlreadyExistsException, ConfigException
from airflow_provider_connect.control.connectors import config_strings, split_create_body
from airflow_provider_connect.control.errors import BadRequestError
from airflow_provider_connect.control.validation import ConfigValidationError
from airflow_provider_connect.runtime import logs
from airflow_provider_connect.runtime.connect import Connect
from airflow_provider_connect.runtime.worker_config import (
    GROUP_ID,
    LOG_FORMAT,
    METADATA_URL,
    WorkerConfig,
)
from airflow_provider_connect.store import SCHEMA_REVISION, Database, SchemaVersionError

OFFSET_STORAGE_FILE = "offset.storage.file.filename"
log = logging.getLogger("connect-runtime")


def read_properties(path: str | Path) -> dict[str, str]:
    """A Java properties file as a dict (comments, continuations and escapes as in Java)."""
    properties = Properties()
    with open(path, "rb") as f:
        properties.load(f, "utf-8")
    return {key: value.data for key, value in properties.items()}


def read_connector_file(path: str | Path) -> tuple[dict[str, str], dict[str, Any]]:
    """A standalone connector file's config and create options, as Kafka Connect reads it:
    a JSON REST create body (with KIP-980's ``initial_state`` and KIP-995's
    ``initial_offsets``, which count when the connector is created), a JSON object of config
    keys, or else a Java properties file. ConnectException for a JSON file that is neither."""
    try:
        loaded = json.loads(Path(path).read_text("utf-8"))
    except ValueError:
        return read_properties(path), {}
    if not isinstance(loaded, dict):
        raise ConfigException(f"{path} must hold a JSON object")
    try:
        config, options = split_create_body(loaded)
    except BadRequestError as e:
        raise ConfigException(f"{e} at '{path}'") from None
    return config_strings(config), options


def standalone_worker(worker: dict[str, str]) -> dict[str, str]:
    """Standalone keeps its state in a local SQLite file."""
    if METADATA_URL not in worker:
        path = Path(worker.get(OFFSET_STORAGE_FILE, "connect.offsets.db")).resolve()
        worker = {**worker, METADATA_URL: f"sqlite:///{path}"}
    return worker


def run_until_signalled(connect: Connect) -> None:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    log.info("stopping")
    connect.stop()


def run_db_command(action: str, metadata_url: str) -> int:
    """``db migrate`` or ``db check`` on the database at ``metadata_url``."""
    db = Database(metadata_url)
    try:
        if action == "migrate":
            db.migrate()
            print(f"The metadata database is at schema revision {SCHEMA_REVISION}.")
            return 0
        try:
            db.check_schema()
        except SchemaVersionError as e:
            print(e, file=sys.stderr)
            return 1
        print(f"The metadata database is at schema revision {SCHEMA_REVISION}, as expected.")
        return 0
    finally:
        db.close()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="connect-runtime", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    standalone = commands.add_parser("standalone", help="run the connectors of properties files")
    standalone.add_argument("worker", help="worker properties file")
    standalone.add_argument(
        "connectors", nargs="+", help="connector files: properties, or JSON (a REST create body)"
    )
    serve = commands.add_parser(
        "serve", help="run the herder and REST API on the metadata database"
    )
    serve.add_argument("--config", required=True, help="worker properties file")
    for command in (standalone, serve):
        command.add_argument(
            "--no-migrate",
            action="store_true",
            help="do not migrate the metadata database at start; fail unless it is up to date",
        )
    db = commands.add_parser("db", help="the metadata database's schema")
    db.add_argument("action", choices=["migrate", "check"])
    where = db.add_mutually_exclusive_group(required=True)
    where.add_argument("--config", help="worker properties file (its metadata.url)")
    where.add_argument("--metadata-url", help="SQLAlchemy URL of the metadata database")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logs.configure()

    if args.command == "db":
        url = args.metadata_url or WorkerConfig(read_properties(args.config))[METADATA_URL]
        return run_db_command(args.action, url)
    if args.command == "standalone":
        worker = standalone_worker(read_properties(args.worker))
        try:
            connectors = [read_connector_file(path) for path in args.connectors]
        except ConfigException as e:
            parser.error(str(e))
    else:
        worker, connectors = read_properties(args.config), []
    try:
        connect = Connect(
            worker.get(GROUP_ID, "connect-cluster"), worker, migrate=not args.no_migrate
        )
    except SchemaVersionError as e:
        print(e, file=sys.stderr)
        return 1
    logs.configure(connect.worker[LOG_FORMAT])
    try:
        for config, options in connectors:
            name = config.get("name")
            if not name:
                parser.error("every connector file needs a 'name'")
            try:
                connect.add_connector(name, config, **options)
            except AlreadyExistsException:  # standalone updates the connectors it finds
                connect.put_connector(name, config)
    except (ConfigValidationError, BadRequestError) as e:
        print(e, file=sys.stderr)
        connect.stop()
        return 1
    connect.start(rest=True)
    assert connect.rest is not None
    log.info("REST API on %s", connect.rest.url)
    run_until_signalled(connect)
    return 0


if __name__ == "__main__":
    sys.exit(main())
