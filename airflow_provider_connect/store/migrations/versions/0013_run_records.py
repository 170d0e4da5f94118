"""The records each task run moved, which the history's samples are taken from; and the
history's samples hold the records moved since the sample before (they held the current
runs' totals, which lost what a run moved after the last sample once it ended).

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "connect_run_records",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("connector", sa.String(255), nullable=False),
        sa.Column("records", sa.BigInteger(), nullable=False),
        sa.Column("counted", sa.BigInteger(), nullable=False),
        sa.Column("ended", sa.Boolean(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_connect_run_records_connector", "connect_run_records", ["connector"])
    op.execute("DELETE FROM connect_metrics_history")  # totals, not records moved in between


def downgrade() -> None:
    op.execute("DELETE FROM connect_metrics_history")  # records moved in between, not totals
    op.drop_index("ix_connect_run_records_connector", "connect_run_records")
    op.drop_table("connect_run_records")
