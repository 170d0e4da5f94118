"""A new sink connector's initial offsets (KIP-995), kept until the herder wrote them; and
whether a source connector's offsets were set outside its tasks (for its offsets topic).

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("connect_connectors") as batch:
        batch.add_column(sa.Column("initial_offsets", sa.JSON(), nullable=True))
        batch.add_column(
            sa.Column("source_offsets_set", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("connect_connectors") as batch:
        batch.drop_column("source_offsets_set")
        batch.drop_column("initial_offsets")
