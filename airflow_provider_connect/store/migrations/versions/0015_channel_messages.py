"""The messages of sink connectors' coordination channels.

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "connect_channel_messages",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("connector", sa.String(255), nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(255), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index(
        "ix_connect_channel_messages_connector", "connect_channel_messages", ["connector"]
    )


def downgrade() -> None:
    op.drop_index("ix_connect_channel_messages_connector", "connect_channel_messages")
    op.drop_table("connect_channel_messages")
