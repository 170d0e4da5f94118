"""The stack of ``make airflow`` with the example DAGs' inputs in place: the test broker,
moto's S3 server, Airflow's services with the provider, a Spark standalone cluster and the
runtime deployed by its DAG (:class:`tests_common.local_stack.LocalStack`). ``demo/airflow.py`` runs it for a person;
the tests run it to check what that person sees."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

from confluent_kafka.admin import AdminClient, NewTopic

from tests_common.broker import EmbeddedBroker
from tests_common.local_stack import LocalStack
from tests_common.processes import Started, rest, rest_get, wait_until
from tests_common.s3 import S3Endpoint

DEMO_TOPIC = "connect-demo-lines"
"""The topic ``connector_lifecycle``'s default sink replays; the ``demo-lines`` source fills it."""
DEMO_LINES = 1_000
EXAMPLES_DIR_ENV = "CONNECT_EXAMPLES_DIR"
"""The environment variable the example DAGs take their default files' folder from (``/tmp``
when unset); the demo points it at a folder of its own, :attr:`AirflowDemo.examples`."""
LINES_FILE = Path("connect-lines.txt")
"""``file_to_table``'s default input, in :attr:`AirflowDemo.examples`."""
DAILY_DIR = Path("connect-daily")
"""``daily_file_ingestion``'s default input folder, in :attr:`AirflowDemo.examples`: today's
file is written there."""
LIFECYCLE_FILE = Path("connect-lifecycle-out.txt")
"""The file ``connector_lifecycle``'s default sink writes, in :attr:`AirflowDemo.examples`."""
S3_ENDPOINT_ENV = "CONNECT_S3_ENDPOINT"
"""The environment variable the S3 example DAGs take their endpoint from
(``http://127.0.0.1:5000`` when unset); the demo points it at its moto server,
:attr:`AirflowDemo.s3`."""
S3_BUCKET = "connect-landing"
"""The bucket ``topic_to_s3``'s defaults land :data:`DEMO_TOPIC` in, on :attr:`AirflowDemo.s3`."""
EXAMPLE_DAGS = ("connector_lifecycle", "file_to_table", "daily_file_ingestion", "topic_to_s3")
"""The example DAGs a user triggers; ``connect_runtime`` is the stack's own deployment."""


def seed_example_inputs(stack: LocalStack, folder: Path, examples: Path) -> None:
    """What the example DAGs' defaults read: the topic ``connect-demo-lines``, filled by a
    running FileStreamSource ``demo-lines`` with :data:`DEMO_LINES` lines (its input in
    ``folder``); ``file_to_table``'s input file and today's (UTC) file of
    ``daily_file_ingestion``, in ``examples``."""
    admin = AdminClient({"bootstrap.servers": stack.places.bootstrap_servers})
    admin.create_topics([NewTopic(DEMO_TOPIC, 1, 1)])[DEMO_TOPIC].result(timeout=30)
    del admin  # its connection must not outlive the broker
    lines = folder / "demo-lines.txt"
    lines.write_text("".join(f"demo line {i:04d}\n" for i in range(DEMO_LINES)))
    config = {"connector.class": "FileStreamSource", "file": str(lines), "topic": DEMO_TOPIC}
    rest("POST", f"{stack.places.runtime_url}/connectors", {"name": "demo-lines", "config": config})
    (examples / LINES_FILE).write_text("".join(f"line {i}\n" for i in range(DEMO_LINES)))
    (examples / DAILY_DIR).mkdir()
    today = examples / DAILY_DIR / f"{dt.datetime.now(dt.timezone.utc).date().isoformat()}.txt"
    today.write_text("".join(f"{today.stem} line {i}\n" for i in range(DEMO_LINES)))


class AirflowDemo(Started):
    """The broker, moto's S3 server, the stack and the example inputs, in ``folder``; ports
    left None are free ones. :meth:`stop` ends everything it started, by PID, and removes the
    example DAGs' files (:attr:`examples`)."""

    def __init__(
        self,
        folder: Path,
        api_port: int | None = None,
        runtime_port: int | None = None,
        broker_port: int | None = None,
    ) -> None:
        self.folder = folder
        self.broker = EmbeddedBroker(broker_port)
        self.s3 = S3Endpoint()
        """The S3 endpoint of the S3 example DAGs' defaults (their ``$CONNECT_S3_ENDPOINT``),
        with the bucket :data:`S3_BUCKET`; its keys are the stack's AWS default chain (its
        environment), so that no key is in a DAG or a run's conf."""
        self.examples = folder / "examples"
        """The folder of the files the example DAGs' defaults read and write (their
        ``$CONNECT_EXAMPLES_DIR``)."""
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
            extra_env={
                "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(transport),
                EXAMPLES_DIR_ENV: str(self.examples),
                S3_ENDPOINT_ENV: self.s3.url,
                "AWS_ACCESS_KEY_ID": self.s3.access_key,
                "AWS_SECRET_ACCESS_KEY": self.s3.secret_key,
                "AWS_DEFAULT_REGION": self.s3.region,
            },
        )

    def start(self) -> AirflowDemo:
        """Returns once the runtime serves and the example inputs are in place."""
        try:
            self.broker.start()
            self.s3.start()
            self.s3.new_bucket(S3_BUCKET)
            self.examples.mkdir()
            self.stack.folder.mkdir(parents=True)
            self.stack.start()
            self.stack.step = "the runtime, started by the connect_runtime DAG, to answer"
            wait_until(
                lambda: rest_get(self.stack.places.runtime_url + "/"),
                300,
                "the runtime deployed by connect_runtime answers",
                0.5,
                state=lambda: self.stack.log_tail("airflow-scheduler"),
            )
            self.stack.step = "the example DAGs' inputs"
            seed_example_inputs(self.stack, self.folder, self.examples)
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
            self.s3.stop()
            if self.examples.exists():
                shutil.rmtree(self.examples)
