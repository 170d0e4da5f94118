"""Alembic environment: runs on the connection the store hands over (see store.database)."""

from alembic import context

from airflow_provider_connect.store.database import VERSION_TABLE
from airflow_provider_connect.store.models import Base

context.configure(
    connection=context.config.attributes["connection"],
    target_metadata=Base.metadata,
    version_table=VERSION_TABLE,
    render_as_batch=True,
)
with context.begin_transaction():
    context.run_migrations()
