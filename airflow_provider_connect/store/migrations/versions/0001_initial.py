"""The initial metadata tables.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

NAME = sa.String(255)
WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "connect_connectors",
        sa.Column("name", NAME, primary_key=True),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("target_state", sa.String(16), nullable=False),
        sa.Column("deleted", sa.Boolean(), nullable=False),
        sa.Column("config_version", sa.Integer(), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("updated_at", WHEN, nullable=False),
    )
    op.create_table(
        "connect_task_configs",
        sa.Column("connector", NAME, primary_key=True),
        sa.Column("generation", sa.Integer(), primary_key=True),
        sa.Column("task_id", sa.Integer(), primary_key=True),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
    )
    op.create_table(
        "connect_task_counts",
        sa.Column("connector", NAME, primary_key=True),
        sa.Column("generation", sa.Integer(), primary_key=True),
        sa.Column("task_count", sa.Integer(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
    )
    op.create_table(
        "connect_connector_status",
        sa.Column("connector", NAME, primary_key=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("worker_id", sa.String(255), nullable=False),
        sa.Column("trace", sa.Text(), nullable=True),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("updated_at", WHEN, nullable=False),
    )
    op.create_table(
        "connect_task_status",
        sa.Column("connector", NAME, primary_key=True),
        sa.Column("task_id", sa.Integer(), primary_key=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("worker_id", sa.String(255), nullable=False),
        sa.Column("trace", sa.Text(), nullable=True),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("heartbeat_at", WHEN, nullable=False),
        sa.Column("updated_at", WHEN, nullable=False),
    )
    op.create_table(
        "connect_source_offsets",
        sa.Column("connector", NAME, primary_key=True),
        sa.Column("partition_key", sa.String(1024), primary_key=True),
        sa.Column("partition", sa.JSON(), nullable=False),
        sa.Column("offset", sa.JSON(), nullable=True),
        sa.Column("updated_at", WHEN, nullable=False),
    )
    op.create_table(
        "connect_deletions",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("connector", NAME, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("trace", sa.Text(), nullable=True),
        sa.Column("requested_at", WHEN, nullable=False),
        sa.Column("finished_at", WHEN, nullable=True),
    )
    op.create_index("ix_connect_deletions_connector", "connect_deletions", ["connector"])
    op.create_table(
        "connect_restart_requests",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("connector", NAME, nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=True),
        sa.Column("include_tasks", sa.Boolean(), nullable=False),
        sa.Column("only_failed", sa.Boolean(), nullable=False),
        sa.Column("requested_at", WHEN, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("connect_restart_requests")
    op.drop_index("ix_connect_deletions_connector", "connect_deletions")
    op.drop_table("connect_deletions")
    op.drop_table("connect_source_offsets")
    op.drop_table("connect_task_status")
    op.drop_table("connect_connector_status")
    op.drop_table("connect_task_counts")
    op.drop_table("connect_task_configs")
    op.drop_table("connect_connectors")
