"""``make airflow``: Airflow's UI with the provider, on this machine, in one command.

Starts on loopback, as ``docker/compose.yaml`` runs them in containers
(``tests_common.local_stack``): the test broker, a Spark standalone master and two workers,
Airflow's services one by one (api-server, scheduler with LocalExecutor, dag-processor,
triggerer; SQLite) with the provider, its ``connect_default`` connection and the example DAGs,
and the Connect runtime, deployed on Spark by the ``connect_runtime`` DAG. Then it gives the example DAGs what their
defaults read (:func:`seed_example_inputs`), prints the UI's URL and the admin login, and
stops everything it started on Ctrl-C.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType
from typing import Any

from confluent_kafka.admin import AdminClient, NewTopic

from tests_common.broker import EmbeddedBroker
from tests_common.local_stack import LocalStack
from tests_common.processes import Started, rest, rest_get, wait_until

DEMO_TOPIC = "connect-demo-lines"
"""The topic ``connector_lifecycle``'s default sink replays; the ``demo-lines`` source fills it."""
DEMO_LINES = 1_000
LINES_FILE = Path("/tmp/connect-lines.txt")
"""``file_to_table``'s default input."""
DAILY_DIR = Path("/tmp/connect-daily")
"""``daily_file_ingestion``'s default input folder: today's file is written there."""
EXAMPLE_DAGS = ("connector_lifecycle", "file_to_table", "daily_file_ingestion")
"""The example DAGs a user triggers; ``connect_runtime`` is the stack's own deployment."""


def port_taken(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def seed_example_inputs(stack: LocalStack, folder: Path) -> None:
    """What the example DAGs' defaults read: the topic ``connect-demo-lines``, filled by a
    running FileStreamSource ``demo-lines`` with :data:`DEMO_LINES` lines; ``file_to_table``'s
    input file and today's (UTC) file of ``daily_file_ingestion``, each written when missing."""
    admin = AdminClient({"bootstrap.servers": stack.places.bootstrap_servers})
    admin.create_topics([NewTopic(DEMO_TOPIC, 1, 1)])[DEMO_TOPIC].result(timeout=30)
    del admin  # its connection must not outlive the broker
    lines = folder / "demo-lines.txt"
    lines.write_text("".join(f"demo line {i:04d}\n" for i in range(DEMO_LINES)))
    config = {"connector.class": "FileStreamSource", "file": str(lines), "topic": DEMO_TOPIC}
    rest("POST", f"{stack.places.runtime_url}/connectors", {"name": "demo-lines", "config": config})
    if not LINES_FILE.exists():
        LINES_FILE.write_text("".join(f"line {i}\n" for i in range(DEMO_LINES)))
    DAILY_DIR.mkdir(exist_ok=True)
    today = DAILY_DIR / f"{dt.datetime.now(dt.timezone.utc).date().isoformat()}.txt"
    if not today.exists():
        today.write_text("".join(f"{today.stem} line {i}\n" for i in range(DEMO_LINES)))


class AirflowDemo(Started):
    """The broker, the stack and the example inputs, in ``folder``; ports left None are
    free ones. :meth:`stop` ends everything it started, by PID."""

    def __init__(
        self,
        folder: Path,
        api_port: int | None = None,
        runtime_port: int | None = None,
        broker_port: int | None = None,
    ) -> None:
        self.folder = folder
        self.broker = EmbeddedBroker(broker_port)
        self.lineage = folder / "openlineage.jsonl"
        """The OpenLineage events of the stack's tasks (Airflow's OpenLineage provider, its
        file transport)."""
        transport = {"type": "file", "log_file_path": str(self.lineage), "append": True}
        self.stack = LocalStack(
            folder / "stack",
            self.broker.bootstrap_servers,
            f"sqlite:///{folder / 'airflow.db'}",
            f"sqlite:///{folder / 'connect.db'}",
            api_port=api_port,
            runtime_port=runtime_port,
            extra_env={"AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(transport)},
        )

    def start(self) -> AirflowDemo:
        """Returns once the runtime serves and the example inputs are in place."""
        try:
            self.broker.start()
            self.stack.folder.mkdir(parents=True)
            self.stack.start()
            wait_until(
                lambda: rest_get(self.stack.places.runtime_url + "/"),
                300,
                "the runtime deployed by connect_runtime answers",
                0.5,
                state=lambda: self.stack.log_tail("airflow-scheduler"),
            )
            seed_example_inputs(self.stack, self.folder)
        except BaseException:
            self.stop()
            raise
        return self

    @property
    def url(self) -> str:
        """Airflow's UI and API."""
        return self.stack.api_url

    def password(self, user: str = "admin") -> str:
        """The password Airflow's simple auth manager generated for ``user``."""
        return self.stack.password(user)

    def stop(self) -> None:
        try:
            self.stack.stop()
        finally:
            self.broker.stop()


def _interrupt(signum: int, frame: FrameType | None) -> Any:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make airflow", description=__doc__.split("\n")[0])
    parser.add_argument("--api-port", type=int, default=8080, help="Airflow's UI and API")
    parser.add_argument("--runtime-port", type=int, default=8083, help="Connect's REST API")
    parser.add_argument("--broker-port", type=int, default=9092, help="the test broker")
    args = parser.parse_args(argv)
    taken = [f"{name} {port}" for name, port in vars(args).items() if port_taken(port)]
    if taken:
        print(f"Ports in use: {', '.join(taken)}; choose others, e.g. --api-port 8090")
        return 2
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _interrupt)
    folder = Path(tempfile.mkdtemp(prefix="connect-airflow-"))
    print("Starting the broker, Spark, Airflow's services and the runtime (about a minute)")
    began = time.monotonic()
    demo = AirflowDemo(folder, args.api_port, args.runtime_port, args.broker_port)
    try:
        demo.start()
        print(
            f"\nReady in {time.monotonic() - began:.0f} s.\n"
            f"  Airflow:         {demo.url}  (user admin, password {demo.password()})\n"
            f"  Connectors page: {demo.url}/plugin/connectors\n"
            f"  Connect REST:    {demo.stack.places.runtime_url}\n"
            f"  Kafka:           {demo.stack.places.bootstrap_servers}\n"
            f"  Logs:            {demo.stack.folder}\n"
            "Trigger connector_lifecycle with its defaults: its sink replays the topic "
            f"{DEMO_TOPIC}\n(filled by the demo-lines source) into "
            "/tmp/connect-lifecycle-out.txt. Ctrl-C stops everything."
        )
        while not demo.stack.exited():
            time.sleep(1)
        print(f"{', '.join(demo.stack.exited())} stopped", file=sys.stderr)
        code = 1
    except KeyboardInterrupt:
        code = 0
    except Exception as e:
        print(f"Could not start: {e}", file=sys.stderr)
        code = 1
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)  # a second Ctrl-C must not cut the stop short
        print("\nStopping everything it started (up to a minute)")
        demo.stop()
    if code == 0:
        shutil.rmtree(folder)
    else:
        print(f"The services' logs are kept in {demo.stack.folder}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
