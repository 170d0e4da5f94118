"""The lease holder's REST URL, for readers that wait for a runtime to serve.

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("connect_herder_lease") as batch:
        batch.add_column(sa.Column("rest_url", sa.String(1024), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("connect_herder_lease") as batch:
        batch.drop_column("rest_url")
