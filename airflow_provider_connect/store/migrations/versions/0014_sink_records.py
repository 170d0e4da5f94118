"""The records a sink connector has committed per partition.

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("connect_sink_progress") as batch:
        batch.add_column(sa.Column("records", sa.BigInteger(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("connect_sink_progress") as batch:
        batch.drop_column("records")
