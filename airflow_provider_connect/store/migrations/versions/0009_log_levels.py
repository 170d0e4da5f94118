"""Cluster-wide log levels (KIP-976), one row per logger namespace.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "connect_log_levels",
        sa.Column("logger", sa.String(255), primary_key=True),
        sa.Column("level", sa.String(16), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("version", name="uq_connect_log_levels_version"),
    )


def downgrade() -> None:
    op.drop_table("connect_log_levels")
