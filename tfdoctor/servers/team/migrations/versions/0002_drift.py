"""Drift and causes computed when a report arrives (issue 37): each report keeps its digest (the fact rows and
recorded verdicts a drift compares) and its drift; each environment its cause (the failing check's one-line
summary and a key machines failing alike share), the plan's first step, since when it has regressed and from
which report (and its status), and how many times it regressed.

Existing environments get their cause and first step from their last report here (read with the server's
own `summarize`, the function that computes them for every new report); a report posted before this
revision has no digest or drift: the store computes them from its document the first time a page needs them.

Revision ID: 0002_drift
Revises: 0001_fleet
"""

import json
import zlib

import sqlalchemy as sa
from alembic import op

revision = "0002_drift"
down_revision = "0001_fleet"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("environments") as batch:
        batch.add_column(sa.Column("cause", sa.String(300)))
        batch.add_column(sa.Column("cause_key", sa.String(16)))
        batch.add_column(sa.Column("first_step", sa.String(500)))
        batch.add_column(sa.Column("regressed_at", sa.String(32)))
        batch.add_column(sa.Column("better_report_id", sa.Integer))
        batch.add_column(sa.Column("better_status", sa.String(8)))
        batch.add_column(sa.Column("regressions", sa.Integer, nullable=False, server_default="0"))
    with op.batch_alter_table("reports") as batch:
        batch.add_column(sa.Column("digest", sa.LargeBinary))
        batch.add_column(sa.Column("drift", sa.LargeBinary))
    op.create_index("ix_reports_received", "reports", ["received_at"])
    op.create_index("ix_environments_cause", "environments", ["cause_key"])

    from tfdoctor.servers.team.summary import summarize

    connection = op.get_bind()
    environments = sa.table("environments", sa.column("id"), sa.column("last_report_id"), sa.column("cause"),
                            sa.column("cause_key"), sa.column("first_step"))
    reports = sa.table("reports", sa.column("id"), sa.column("document"))
    rows = connection.execute(sa.select(environments.c.id, reports.c.document)
                              .join(reports, reports.c.id == environments.c.last_report_id)).all()
    for environment_id, document in rows:
        summary = summarize(json.loads(zlib.decompress(document).decode("utf-8")))
        connection.execute(environments.update().where(environments.c.id == environment_id).values(
            cause=summary["cause"], cause_key=summary["cause_key"], first_step=summary["first_step"]))


def downgrade() -> None:
    op.drop_index("ix_environments_cause", "environments")
    op.drop_index("ix_reports_received", "reports")
    with op.batch_alter_table("reports") as batch:
        batch.drop_column("drift")
        batch.drop_column("digest")
    with op.batch_alter_table("environments") as batch:
        for column in ("regressions", "better_status", "better_report_id", "regressed_at", "first_step", "cause_key", "cause"):
            batch.drop_column(column)
