"""The config version a connector's status reflects, and sink progress per partition.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "connect_connector_status",
        sa.Column("config_version", sa.Integer(), nullable=False, server_default="0"),
    )
    op.create_table(
        "connect_sink_progress",
        sa.Column("connector", sa.String(255), primary_key=True),
        sa.Column("topic", sa.String(255), primary_key=True),
        sa.Column("partition", sa.Integer(), primary_key=True),
        sa.Column("committed_offset", sa.BigInteger(), nullable=True),
        sa.Column("end_offset", sa.BigInteger(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("connect_sink_progress")
    with op.batch_alter_table("connect_connector_status") as batch:
        batch.drop_column("config_version")
