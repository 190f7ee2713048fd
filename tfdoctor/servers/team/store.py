"""The team server's storage: SQLAlchemy 2 Core over SQLite (default) or PostgreSQL, one code for both.

The schema is made and upgraded by Alembic (migrations/), run when the store opens. A report is kept
whole (zlib-compressed JSON) beside the columns the fleet table reads, so the table never parses one.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import zlib
from dataclasses import dataclass
from importlib import resources
from typing import Any, Mapping, Optional

from sqlalchemy import (
    Column,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    case,
    create_engine,
    event,
    func,
    select,
)
from sqlalchemy.engine import Connection, Engine, make_url

from tfdoctor.servers.team.summary import FAILING, STATUS_ORDER, summarize

METADATA = MetaData()

environments = Table(
    "environments", METADATA,
    Column("id", Integer, primary_key=True),
    Column("machine_id", String(64), nullable=False),
    Column("python", String(500), nullable=False),
    Column("hostname", String(255)),
    Column("labels", Text, nullable=False),  # JSON object, as last posted
    Column("status", String(8), nullable=False),
    Column("first_failing_check", String(100)),
    Column("key_facts", Text, nullable=False),  # JSON object (summary.KEY_FACTS)
    Column("checks", Text, nullable=False),  # JSON object: check id -> status, of the last report
    Column("first_seen", String(32), nullable=False),
    Column("last_seen", String(32), nullable=False),
    Column("last_report_id", Integer),
    Column("last_pass_report_id", Integer),
    UniqueConstraint("machine_id", "python", name="uq_environment_machine_python"),
)

reports = Table(
    "reports", METADATA,
    Column("id", Integer, primary_key=True),
    Column("environment_id", Integer, ForeignKey("environments.id", ondelete="CASCADE"), nullable=False),
    Column("received_at", String(32), nullable=False),
    Column("created_at", String(64)),
    Column("status", String(8), nullable=False),
    Column("first_failing_check", String(100)),
    Column("key_facts", Text, nullable=False),
    Column("document", LargeBinary, nullable=False),  # zlib(JSON)
    Index("ix_reports_environment", "environment_id", "id"),
)

labels = Table(
    "environment_labels", METADATA,
    Column("environment_id", Integer, ForeignKey("environments.id", ondelete="CASCADE"), primary_key=True),
    Column("key", String(64), primary_key=True),
    Column("value", String(128), nullable=False),
    Index("ix_labels_key_value", "key", "value"),
)

baselines = Table(
    "baselines", METADATA,
    Column("label", String(200), primary_key=True),  # "key=value"
    Column("report_id", Integer, ForeignKey("reports.id", ondelete="CASCADE"), nullable=False),
    Column("marked_at", String(32), nullable=False),
)

WRITE = {"tfdoctor_write": True}  # execution option: SQLite takes its write lock at BEGIN (no upgrade deadlock)
ID_MAX = 2**31 - 1  # ids are the schema's Integer: 32 bits on PostgreSQL; a larger one names nothing here


def valid_id(value: int) -> bool:
    """An id the database can hold: anything else (0, negative, beyond 32 bits) is no such row, not an error
    of the driver (OverflowError on SQLite, "integer out of range" on PostgreSQL)."""
    return 0 < value <= ID_MAX


class NoSuchReport(LookupError):
    pass


class BaselineRefused(ValueError):
    """A report that cannot be a label's known-good one; the message says why."""


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="microseconds")


def default_sqlite_path() -> str:
    """A SQLite file in the user's data directory (XDG on Linux, Application Support, LOCALAPPDATA)."""
    import os
    import sys
    from pathlib import Path

    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif os.name == "nt":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return str(base / "tfdoctor" / "server.sqlite3")


def database_url(db: Optional[str]) -> str:
    """--db as SQLAlchemy reads it: a URL, or a path of a SQLite file; postgresql:// means psycopg 3.
    The default file's directory is the doctor's own, made private (0700, no link: tfdoctor/files/own_files.py);
    a directory the user named is theirs, made if missing."""
    if not db:
        from pathlib import Path

        from tfdoctor.files.own_files import private_dir

        db = default_sqlite_path()
        private_dir(Path(db).parent, Path(db).parent.parent)
    if "://" not in db:
        os.makedirs(os.path.dirname(os.path.abspath(db)), exist_ok=True)
        return f"sqlite:///{os.path.abspath(db)}"
    if db.startswith("postgresql://") or db.startswith("postgres://"):
        return "postgresql+psycopg://" + db.split("://", 1)[1]
    return db


def sqlite_file(url: str) -> Optional[str]:
    """The file of a SQLite URL (None for another database, memory or a `file:` URI)."""
    parsed = make_url(url)
    database = parsed.database
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:" or database.startswith("file:"):
        return None
    return database


def create_private_file(path: str) -> None:
    """Make the SQLite file first, empty and 0600 (an empty file is an empty database): SQLite would make it with
    the umask's mode (0644: every local user reads every report), and it gives its -wal and -shm files the
    database file's own mode. An existing file is left as it is (`tfdoctor serve` warns when others may read it)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        os.close(os.open(path, flags, 0o600))
    except FileExistsError:
        pass


def make_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, pool_size=10, max_overflow=10, pool_pre_ping=True)
    path = sqlite_file(url)
    if path is not None:
        create_private_file(path)
    engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False}, pool_size=10)

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, record: Any) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy's BEGIN below, not the driver's
        cursor = dbapi_connection.cursor()
        for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "foreign_keys=ON", "busy_timeout=30000"):
            cursor.execute(f"PRAGMA {pragma}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        write = connection.get_execution_options().get("tfdoctor_write")
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def migrate(engine: Engine) -> None:
    """Bring the schema to Alembic's head (creates it on an empty database)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(resources.files("tfdoctor.servers.team") / "migrations"))
    with engine.connect().execution_options(**WRITE) as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
        connection.commit()


def _pack(document: Mapping[str, Any]) -> bytes:
    return zlib.compress(json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), 6)


def _unpack(blob: bytes) -> dict[str, Any]:
    return json.loads(zlib.decompress(blob).decode("utf-8"))


def passed(status: str) -> bool:
    return status not in FAILING


@dataclass(frozen=True)
class Posted:
    environment_id: int
    report_id: int
    status: str


_STATUS_RANK = case({status: rank for rank, status in enumerate(STATUS_ORDER)}, value=environments.c.status,
                    else_=len(STATUS_ORDER))


class Store:
    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self.dialect = self.engine.dialect.name
        migrate(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    # --- writing -------------------------------------------------------------------------------------
    def add_report(self, document: Mapping[str, Any], machine_id: str, labels_posted: Mapping[str, str],
                   hostname: Optional[str] = None) -> Posted:
        summary = summarize(document)
        received = now()
        created = document.get("created_at")
        key_facts = json.dumps(summary["key_facts"], sort_keys=True)
        with self.engine.connect().execution_options(**WRITE) as conn, conn.begin():
            self._insert_environment(conn, machine_id, summary["python"], received)
            environment_id = conn.execute(  # the row lock orders two posts of one environment
                select(environments.c.id).where(environments.c.machine_id == machine_id,
                                                environments.c.python == summary["python"]).with_for_update()
            ).scalar_one()
            report_id = conn.execute(reports.insert().values(
                environment_id=environment_id, received_at=received,
                created_at=str(created)[:64] if created is not None else None, status=summary["status"],
                first_failing_check=summary["first_failing_check"], key_facts=key_facts, document=_pack(document),
            ).returning(reports.c.id)).scalar_one()
            values: dict[str, Any] = dict(
                labels=json.dumps(dict(labels_posted), sort_keys=True), status=summary["status"],
                first_failing_check=summary["first_failing_check"], key_facts=key_facts,
                checks=json.dumps(summary["checks"], sort_keys=True), last_seen=received, last_report_id=report_id)
            if hostname is not None:
                values["hostname"] = hostname
            if passed(summary["status"]):
                values["last_pass_report_id"] = report_id
            conn.execute(environments.update().where(environments.c.id == environment_id).values(**values))
            conn.execute(labels.delete().where(labels.c.environment_id == environment_id))
            if labels_posted:
                conn.execute(labels.insert(), [{"environment_id": environment_id, "key": k, "value": v}
                                               for k, v in labels_posted.items()])
        return Posted(environment_id, report_id, summary["status"])

    def _insert_environment(self, conn: Connection, machine_id: str, python: str, when: str) -> None:
        row = dict(machine_id=machine_id, python=python, labels="{}", status="pass", key_facts="{}", checks="{}",
                   first_seen=when, last_seen=when)
        insert: Any  # the dialect's own insert, which has ON CONFLICT
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        conn.execute(insert(environments).values(**row).on_conflict_do_nothing(
            index_elements=["machine_id", "python"]))

    def mark_baseline(self, label: str, report_id: int) -> None:
        """Mark the report known-good for `label` ("key=value"): a passing report (warnings allowed) of an
        environment that carries the label; else NoSuchReport or BaselineRefused, and nothing changes."""
        if not valid_id(report_id):
            raise NoSuchReport(report_id)
        key, _, value = label.partition("=")
        with self.engine.connect().execution_options(**WRITE) as conn, conn.begin():
            row = conn.execute(select(reports.c.status, reports.c.environment_id)
                               .where(reports.c.id == report_id)).first()
            if row is None:
                raise NoSuchReport(report_id)
            if not passed(row.status):
                raise BaselineRefused(f"report {report_id} is {row.status}: only a passing report can be known-good")
            carried = conn.execute(select(labels.c.value).where(labels.c.environment_id == row.environment_id,
                                                                labels.c.key == key)).scalar()
            if carried != value:
                raise BaselineRefused(f"the environment of report {report_id} does not carry the label {label}")
            conn.execute(baselines.delete().where(baselines.c.label == label))
            conn.execute(baselines.insert().values(label=label, report_id=report_id, marked_at=now()))

    # --- reading -------------------------------------------------------------------------------------
    def environments(self, label: Optional[tuple[str, str]] = None, limit: Optional[int] = None,
                     offset: int = 0) -> list[dict[str, Any]]:
        """One row per machine and interpreter, worst first, then the most recently seen."""
        query = select(environments).order_by(_STATUS_RANK, environments.c.last_seen.desc(), environments.c.id)
        if label is not None:
            query = query.join(labels, labels.c.environment_id == environments.c.id).where(
                labels.c.key == label[0], labels.c.value == label[1])
        if limit is not None:
            query = query.limit(limit).offset(offset)
        with self.engine.connect() as conn:
            return [self._environment(row) for row in conn.execute(query).mappings()]

    def status_counts(self, label: Optional[tuple[str, str]] = None) -> dict[str, int]:
        """Environments per status (of those with the label)."""
        query = select(environments.c.status, func.count()).group_by(environments.c.status)
        if label is not None:
            query = query.join(labels, labels.c.environment_id == environments.c.id).where(
                labels.c.key == label[0], labels.c.value == label[1])
        with self.engine.connect() as conn:
            return {status: count for status, count in conn.execute(query)}

    def environment(self, environment_id: int) -> Optional[dict[str, Any]]:
        if not valid_id(environment_id):
            return None
        with self.engine.connect() as conn:
            row = conn.execute(select(environments).where(environments.c.id == environment_id)).mappings().first()
        return self._environment(row) if row is not None else None

    @staticmethod
    def _environment(row: Mapping[Any, Any]) -> dict[str, Any]:
        facts = json.loads(row["key_facts"])
        return {
            "id": row["id"], "machine": row["machine_id"], "hostname": row["hostname"], "python": row["python"],
            "labels": json.loads(row["labels"]), "status": row["status"],
            "first_failing_check": row["first_failing_check"], "tensorflow": facts.get("TensorFlow"),
            "cuda": facts.get("CUDA"), "gpu": facts.get("GPU"), "key_facts": facts,
            "checks": json.loads(row["checks"]), "first_seen": row["first_seen"], "last_seen": row["last_seen"],
            "last_report_id": row["last_report_id"], "last_pass_report_id": row["last_pass_report_id"],
        }

    def history(self, environment_id: int, limit: int = 200) -> list[dict[str, Any]]:
        if not valid_id(environment_id):
            return []
        query = (select(reports.c.id, reports.c.received_at, reports.c.created_at, reports.c.status,
                        reports.c.first_failing_check, reports.c.key_facts)
                 .where(reports.c.environment_id == environment_id).order_by(reports.c.id.desc()).limit(limit))
        with self.engine.connect() as conn:
            return [{**dict(row), "key_facts": json.loads(row["key_facts"])} for row in conn.execute(query).mappings()]

    def report(self, report_id: int) -> Optional[dict[str, Any]]:
        if not valid_id(report_id):
            return None
        with self.engine.connect() as conn:
            row = conn.execute(select(reports.c.document).where(reports.c.id == report_id)).first()
        return _unpack(row[0]) if row is not None else None

    def report_count(self) -> int:
        with self.engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(reports)).scalar_one()

    def last_pass_before(self, environment_id: int, report_id: int) -> Optional[int]:
        """The newest passing report of the environment older than `report_id`."""
        if not (valid_id(environment_id) and valid_id(report_id)):
            return None
        query = (select(reports.c.id).where(reports.c.environment_id == environment_id, reports.c.id < report_id,
                                            reports.c.status.not_in(FAILING))
                 .order_by(reports.c.id.desc()).limit(1))
        with self.engine.connect() as conn:
            return conn.execute(query).scalar()

    def label_names(self) -> list[str]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(labels.c.key, labels.c.value).distinct().order_by(labels.c.key, labels.c.value))
            return [f"{k}={v}" for k, v in rows]

    def baseline(self, label: str) -> Optional[dict[str, Any]]:
        """The label's known-good report: the one marked, else the label's newest passing report."""
        key, _, value = label.partition("=")
        with self.engine.connect() as conn:
            marked = conn.execute(select(baselines.c.report_id).where(baselines.c.label == label)).scalar()
            if marked is not None:
                report_id, how = marked, "marked known-good"
            else:
                report_id = conn.execute(
                    select(reports.c.id).join(labels, labels.c.environment_id == reports.c.environment_id)
                    .where(labels.c.key == key, labels.c.value == value, reports.c.status.not_in(FAILING))
                    .order_by(reports.c.id.desc()).limit(1)).scalar()
                how = "newest passing report"
            if report_id is None:
                return None
            row = conn.execute(select(reports.c.id, reports.c.environment_id, reports.c.received_at,
                                      reports.c.key_facts).where(reports.c.id == report_id)).mappings().first()
        if row is None:  # gone since (a report deleted meanwhile)
            return None
        return {"label": label, "report_id": row["id"], "environment_id": row["environment_id"],
                "received_at": row["received_at"], "how": how, "key_facts": json.loads(row["key_facts"])}

    def fleet_counts(self) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
        """Environments per status, and (check, status) counts over each environment's last report."""
        per_status: dict[str, int] = {}
        per_check: dict[tuple[str, str], int] = {}
        with self.engine.connect() as conn:
            for status, checks in conn.execute(select(environments.c.status, environments.c.checks)):
                per_status[status] = per_status.get(status, 0) + 1
                for check, check_status in json.loads(checks).items():
                    per_check[(check, check_status)] = per_check.get((check, check_status), 0) + 1
        return per_status, per_check
