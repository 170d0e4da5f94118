"""Runs the Quix Streams peer (``bench/quix_peer.py``) in its own virtualenv,
``bench/.quix-venv`` (``make bench`` creates it: Quix Streams pins versions of
confluent-kafka and pydantic that Airflow's do not match)."""

from __future__ import annotations

import subprocess
from pathlib import Path

BENCH = Path(__file__).resolve().parent
PYTHON = BENCH / ".quix-venv" / "bin" / "python"


def quix_records_per_s(mode: str, bootstrap: str, topic: str, *args: object) -> float:
    """The peer's records/s, or 0.0 when the Quix Streams virtualenv is missing."""
    if not PYTHON.exists():
        return 0.0
    command = [str(PYTHON), str(BENCH / "quix_peer.py"), mode, bootstrap, topic]
    done = subprocess.run([*command, *map(str, args)], capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"the Quix Streams peer failed:\n{done.stderr[-4000:]}")
    return float(done.stdout.strip().splitlines()[-1])
