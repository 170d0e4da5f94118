"""Fixtures of the MySQL / MariaDB change-capture tests: a private MariaDB server per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests_common.mariadb import MariaDbServer, mariadb_server_or_skip


@pytest.fixture
def mariadb(request: pytest.FixtureRequest) -> Iterator[MariaDbServer]:
    """A started MariaDB 10.11 server of the test's own (binlog ROW, FULL row image and
    metadata), stopped and removed after it. Parametrized indirectly, the parameter is the
    server's ``settings`` (mariadbd options overriding the defaults, e.g.
    ``{"binlog-format": "STATEMENT"}``)."""
    with mariadb_server_or_skip(settings=getattr(request, "param", None)) as server:
        yield server
