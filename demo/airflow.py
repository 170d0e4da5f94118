"""``make airflow``: Airflow's UI with the provider, on this machine, in one command.

Starts on loopback, as ``docker/compose.yaml`` runs them in containers
(``tests_common.local_stack``): the test broker, moto's S3 server with the bucket
``connect-landing``, a Spark standalone master and two workers, Airflow's services one by one
(api-server, scheduler with LocalExecutor, dag-processor, triggerer; SQLite) with the
provider, its ``connect_default`` connection and the example DAGs, and the Connect runtime,
deployed on Spark by the ``connect_runtime`` DAG. Then it gives the example DAGs what their
defaults read (``tests_common.airflow_demo``, which the tests run
too), prints the UI's URL and the admin login, and stops everything it started on Ctrl-C.
While it starts and stops it says what it waits for; everything it writes, the example
DAGs' files included, stays in its own temporary folder, removed when it stops.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType
from typing import Any

from demo.progress import Progress
from tests_common.airflow_demo import DEMO_TOPIC, LIFECYCLE_FILE, S3_BUCKET, AirflowDemo


def port_taken(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


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
    print(
        f"Starting the broker, Spark, Airflow's services and the runtime in {folder}\n"
        "(on 2 CPUs: about 90 s when they are idle, over three minutes when they are busy)"
    )
    began = time.monotonic()
    demo = AirflowDemo(folder, args.api_port, args.runtime_port, args.broker_port)
    try:
        with Progress(lambda: demo.stack.step):
            demo.start()
        print(
            f"\nReady in {time.monotonic() - began:.0f} s.\n"
            f"  Airflow:         {demo.url}  (user admin, password {demo.password()})\n"
            f"  Connectors page: {demo.url}/plugin/connectors\n"
            f"  Connect REST:    {demo.stack.places.runtime_url}\n"
            f"  Kafka:           {demo.stack.places.bootstrap_servers}\n"
            f"  S3 (moto):       {demo.s3.url}  (bucket {S3_BUCKET})\n"
            f"  Logs:            {demo.stack.folder}\n"
            "Trigger connector_lifecycle with its defaults: its sink replays the topic "
            f"{DEMO_TOPIC}\n(filled by the demo-lines source) into "
            f"{demo.examples / LIFECYCLE_FILE};\ntopic_to_s3 lands it in "
            f"s3://{S3_BUCKET}/topics/{DEMO_TOPIC}. Ctrl-C stops everything."
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
        with Progress("Airflow's services, the runtime, Spark, the broker and S3 to stop"):
            demo.stop()
    if code == 0:
        shutil.rmtree(folder)
        print(f"Stopped; {folder} removed.")
    else:
        print(f"Stopped; the services' logs are kept in {demo.stack.folder}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
