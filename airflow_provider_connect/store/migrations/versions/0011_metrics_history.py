"""A bounded history of each connector's throughput and lag, for the Connectors page; and
whether a sink's staged offsets alter only the partitions they name (KIP-875 from the page).

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "connect_metrics_history",
        sa.Column("connector", sa.String(255), primary_key=True),
        sa.Column("sampled_at", sa.DateTime(timezone=True), primary_key=True),
        sa.Column("records", sa.BigInteger(), nullable=False),
        sa.Column("lag", sa.BigInteger(), nullable=True),
    )
    op.create_index(
        "ix_connect_metrics_history_sampled_at", "connect_metrics_history", ["sampled_at"]
    )
    with op.batch_alter_table("connect_connectors") as batch:
        batch.add_column(
            sa.Column(
                "initial_offsets_alter", sa.Boolean(), nullable=False, server_default=sa.false()
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("connect_connectors") as batch:
        batch.drop_column("initial_offsets_alter")
    op.drop_index("ix_connect_metrics_history_sampled_at", "connect_metrics_history")
    op.drop_table("connect_metrics_history")
