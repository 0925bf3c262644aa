"""Alembic environment: migrations run on the connection `serving.migrations.upgrade` hands over (or, for the
`alembic` command line, on `sqlalchemy.url`), against the metadata of `serving.sessions`."""

from alembic import context
from sqlalchemy import create_engine

from serving.sessions import metadata

config = context.config
connection = config.attributes.get("connection")


def _run(conn) -> None:
    # batch mode: SQLite cannot ALTER most things, so alembic copies the table; a no-op difference on PostgreSQL
    context.configure(connection=conn, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


if connection is not None:
    _run(connection)
else:
    with create_engine(config.get_main_option("sqlalchemy.url")).begin() as conn:
        _run(conn)
