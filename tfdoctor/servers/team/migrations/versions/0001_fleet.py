"""The fleet: environments, their reports, their labels, and each label's known-good report.

Revision ID: 0001_fleet
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001_fleet"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "environments",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("machine_id", sa.String(64), nullable=False),
        sa.Column("python", sa.String(500), nullable=False),
        sa.Column("hostname", sa.String(255)),
        sa.Column("labels", sa.Text, nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("first_failing_check", sa.String(100)),
        sa.Column("key_facts", sa.Text, nullable=False),
        sa.Column("checks", sa.Text, nullable=False),
        sa.Column("first_seen", sa.String(32), nullable=False),
        sa.Column("last_seen", sa.String(32), nullable=False),
        sa.Column("last_report_id", sa.Integer),
        sa.Column("last_pass_report_id", sa.Integer),
        sa.UniqueConstraint("machine_id", "python", name="uq_environment_machine_python"),
    )
    op.create_table(
        "reports",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("environment_id", sa.Integer, sa.ForeignKey("environments.id", ondelete="CASCADE"), nullable=False),
        sa.Column("received_at", sa.String(32), nullable=False),
        sa.Column("created_at", sa.String(64)),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("first_failing_check", sa.String(100)),
        sa.Column("key_facts", sa.Text, nullable=False),
        sa.Column("document", sa.LargeBinary, nullable=False),
    )
    op.create_index("ix_reports_environment", "reports", ["environment_id", "id"])
    op.create_table(
        "environment_labels",
        sa.Column("environment_id", sa.Integer, sa.ForeignKey("environments.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.String(128), nullable=False),
    )
    op.create_index("ix_labels_key_value", "environment_labels", ["key", "value"])
    op.create_table(
        "baselines",
        sa.Column("label", sa.String(200), primary_key=True),
        sa.Column("report_id", sa.Integer, sa.ForeignKey("reports.id", ondelete="CASCADE"), nullable=False),
        sa.Column("marked_at", sa.String(32), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("baselines")
    op.drop_table("environment_labels")
    op.drop_table("reports")
    op.drop_table("environments")
