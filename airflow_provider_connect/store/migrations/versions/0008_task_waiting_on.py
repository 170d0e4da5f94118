"""What each task run waits on (a missing topic), written with its heartbeat.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("connect_task_status") as batch:
        batch.add_column(sa.Column("waiting_on", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("connect_task_status") as batch:
        batch.drop_column("waiting_on")
