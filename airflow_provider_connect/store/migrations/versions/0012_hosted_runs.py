"""Task runs that share a Spark task slot: the runs the herder gives each slot host, and
their outcomes.

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "connect_hosted_runs",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("host_id", sa.String(64), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("outcome", sa.JSON(), nullable=True),
        sa.Column("assigned_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_connect_hosted_runs_host_id", "connect_hosted_runs", ["host_id"])


def downgrade() -> None:
    op.drop_index("ix_connect_hosted_runs_host_id", "connect_hosted_runs")
    op.drop_table("connect_hosted_runs")
