"""``connect-runtime``: run the Connect runtime from the command line.

    connect-runtime standalone WORKER.properties CONNECTOR.properties [...]
    connect-runtime serve --config WORKER.properties

``standalone`` is KIP-26's agent mode: the connectors come from the files (created, or
updated when they exist) and offsets live in a local SQLite file
(``offset.storage.file.filename``, unless ``metadata.url`` says otherwise). ``serve`` runs
the herder and the REST API on the metadata database of the worker config; connectors are
managed through REST or Airflow. Both run until SIGINT or SIGTERM, then stop every task
gracefully.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path

from jproperties import Properties

from airflow_provider_connect.control.validation import ConfigValidationError
from airflow_provider_connect.runtime.connect import Connect
from airflow_provider_connect.runtime.worker_config import GROUP_ID, METADATA_URL

OFFSET_STORAGE_FILE = "offset.storage.file.filename"
log = logging.getLogger("connect-runtime")


def read_properties(path: str | Path) -> dict[str, str]:
    """A Java properties file as a dict (comments, continuations and escapes as in Java)."""
    properties = Properties()
    with open(path, "rb") as f:
        properties.load(f, "utf-8")
    return {key: value.data for key, value in properties.items()}


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="connect-runtime", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    standalone = commands.add_parser("standalone", help="run the connectors of properties files")
    standalone.add_argument("worker", help="worker properties file")
    standalone.add_argument("connectors", nargs="+", help="connector properties files")
    serve = commands.add_parser(
        "serve", help="run the herder and REST API on the metadata database"
    )
    serve.add_argument("--config", required=True, help="worker properties file")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("py4j").setLevel(logging.WARNING)

    if args.command == "standalone":
        worker = standalone_worker(read_properties(args.worker))
        connectors = [read_properties(path) for path in args.connectors]
    else:
        worker, connectors = read_properties(args.config), []
    connect = Connect(worker.get(GROUP_ID, "connect-cluster"), worker)
    try:
        for config in connectors:
            name = config.get("name")
            if not name:
                parser.error("every connector properties file needs a 'name'")
            connect.put_connector(name, config)
    except ConfigValidationError as e:
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
