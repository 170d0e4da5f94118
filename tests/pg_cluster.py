"""The private PostgreSQL cluster (``demo/postgres_cluster.py``) for tests: skipped, saying
why, where it cannot run."""

from __future__ import annotations

import pytest

from demo.postgres_cluster import PostgresCluster, unavailable_reason


def postgres_cluster_or_skip(port: int | None = None) -> PostgresCluster:
    """A new, not yet started cluster (start it with ``with`` or :meth:`~PostgresCluster.start`);
    skips the calling test, saying why, when one cannot run here."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"private PostgreSQL cluster unavailable: {reason}")
    return PostgresCluster(port)
