"""API keys stored as salted hashes; a session's mode (consult, or collect for the imitator corpus).

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "askopt_api_keys",
        sa.Column("key_id", sa.String(16), primary_key=True),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("salt", sa.String(32), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.Column("rate_per_minute", sa.Float, nullable=True),
        sa.Column("created", sa.Float, nullable=False),
        sa.Column("revoked", sa.Float, nullable=True),
    )
    with op.batch_alter_table("askopt_sessions") as batch:
        batch.add_column(sa.Column("mode", sa.String(16), nullable=False, server_default="consult"))
    op.create_index("ix_askopt_sessions_mode", "askopt_sessions", ["mode"])


def downgrade() -> None:
    op.drop_index("ix_askopt_sessions_mode", "askopt_sessions")
    with op.batch_alter_table("askopt_sessions") as batch:
        batch.drop_column("mode")
    op.drop_table("askopt_api_keys")
