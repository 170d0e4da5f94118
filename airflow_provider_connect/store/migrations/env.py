"""Alembic environment: runs on the connection the store hands over (see store.engine)."""

from alembic import context

from airflow_provider_connect.store.models import Base

context.configure(
    connection=context.config.attributes["connection"],
    target_metadata=Base.metadata,
    version_table="connect_alembic_version",
    render_as_batch=True,
)
with context.begin_transaction():
    context.run_migrations()
