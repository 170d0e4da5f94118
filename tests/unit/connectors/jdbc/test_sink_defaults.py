"""The SQL defaults the JDBC sink gives the columns auto.evolve adds, in each dialect."""

from __future__ import annotations

import decimal
from typing import Any

import pytest
from sqlalchemy import Boolean, Column, Float, Numeric, String
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.schema import CreateColumn

from airflow_provider_connect.connectors.jdbc.writer import server_default as _server_default


def ddl(column_type: Any, default: Any, dialect: Any) -> str:
    column = Column("c", column_type, server_default=_server_default(default))
    return str(CreateColumn(column).compile(dialect=dialect))


@pytest.mark.parametrize(
    ("column_type", "default", "on_postgresql", "on_sqlite"),
    [
        (Boolean(), True, "c BOOLEAN DEFAULT true", "c BOOLEAN DEFAULT 1"),
        (Boolean(), False, "c BOOLEAN DEFAULT false", "c BOOLEAN DEFAULT 0"),
        (Float(), 1.5, "c FLOAT DEFAULT 1.5", "c FLOAT DEFAULT (1.5)"),
        (Numeric(), decimal.Decimal("2.50"), "c NUMERIC DEFAULT 2.50", "c NUMERIC DEFAULT (2.50)"),
        (String(), "gold", "c VARCHAR DEFAULT 'gold'", "c VARCHAR DEFAULT 'gold'"),
        (Float(), float("nan"), "c FLOAT", "c FLOAT"),  # no literal for it: no default
        (Numeric(), decimal.Decimal("sNaN"), "c NUMERIC", "c NUMERIC"),
    ],
)
def test_a_fields_default_is_its_columns_default_in_the_dialect(
    column_type: Any, default: Any, on_postgresql: str, on_sqlite: str
) -> None:
    assert ddl(column_type, default, postgresql.dialect()) == on_postgresql
    assert ddl(column_type, default, sqlite.dialect()) == on_sqlite
