"""Alembic's environment for the team server: run on the connection the store hands over (store.migrate)."""

from alembic import context

from tfdoctor.servers.team.store import METADATA

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=METADATA, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
