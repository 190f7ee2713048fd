"""The team server's storage: SQLAlchemy 2 Core over SQLite (default) or PostgreSQL, one code for both.

The schema is made and upgraded by Alembic (migrations/), run when the store opens. A report is kept
whole (zlib-compressed JSON) beside the columns the fleet table reads, so the table never parses one, and
beside its digest and its drift (tfdoctor/operations/drift.py), computed once when it arrives: no page parses two reports or
runs a check. Every method blocks (a database round trip): the application calls them off the event loop.
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
    bindparam,
    case,
    create_engine,
    event,
    func,
    or_,
    select,
    union,
)
from sqlalchemy.engine import Connection, Engine, make_url

from tfdoctor.operations.drift import digest as digest_of, drift as drift_between
from tfdoctor.servers.team.summary import FAILING, STATUS_ORDER, STATUS_RANK, summarize

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
    Column("cause", String(300)),  # the failing (else warning) check's one-line summary
    Column("cause_key", String(16)),  # shared by environments failing for the same cause
    Column("first_step", String(500)),  # the repair plan's first command
    Column("regressed_at", String(32)),  # when it became worse than its better report (None: never better)
    Column("better_report_id", Integer),  # the newest report with a better status: what the drift compares to
    Column("better_status", String(8)),  # its status ("regressed 2 h ago, warn before")
    Column("regressions", Integer, nullable=False, server_default="0"),  # reports worse than the one before
    UniqueConstraint("machine_id", "python", name="uq_environment_machine_python"),
    Index("ix_environments_cause", "cause_key"),
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
    Column("digest", LargeBinary),  # zlib(JSON): drift.digest (None: posted before revision 0002)
    Column("drift", LargeBinary),  # zlib(JSON): {"since_better", "since_previous"}, computed when it arrived
    Index("ix_reports_environment", "environment_id", "id"),
    Index("ix_reports_received", "received_at"),
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


def _pack(document: Mapping[str, Any], level: int = 6) -> bytes:
    return zlib.compress(json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), level)


def _unpack(blob: bytes) -> dict[str, Any]:
    return json.loads(zlib.decompress(blob).decode("utf-8"))


def passed(status: str) -> bool:
    return status not in FAILING


@dataclass(frozen=True)
class Posted:
    environment_id: int
    report_id: int
    status: str
    regressed: bool = False  # worse than the environment's previous report


def _rank(status: str) -> int:
    """Higher is better: pass 3, warn 2, fail 1, error 0 (an unknown status counts as an error)."""
    return STATUS_RANK.get(status, 0) if status != "skip" else 0


def _base(report: Mapping[Any, Any]) -> dict[str, Any]:
    return {"report": report["id"], "status": report["status"], "received_at": report["received_at"]}


_STATUS_RANK = case(STATUS_RANK, value=environments.c.status,
                    else_=len(STATUS_ORDER))


# an environment's row as pages read it: without each check's status (only /metrics counts those), which
# SQLite's sorter would otherwise copy for every environment it orders
_ENVIRONMENT_ROW = select(*(column for column in environments.c if column.name != "checks"))
_PREVIOUS = reports.alias("previous")  # made once: an alias builds a proxy of every column (a post's 1 ms)


# A post's statements, built once: SQLAlchemy builds and keys a statement made per call (.values(...)) anew each
# time, about a tenth of a post's CPU; these take their values as parameters.
_INSERT_REPORT = reports.insert().returning(reports.c.id)
_UPDATE_ENVIRONMENT = environments.update().where(environments.c.id == bindparam("environment")).values(
    hostname=func.coalesce(bindparam("new_hostname", type_=String), environments.c.hostname),
    last_pass_report_id=func.coalesce(bindparam("new_last_pass", type_=Integer), environments.c.last_pass_report_id))
_ENVIRONMENT_OF_POST = (
    select(environments.c.id, environments.c.last_report_id, environments.c.better_report_id,
           environments.c.regressed_at, environments.c.regressions, environments.c.labels,
           _PREVIOUS.c.status.label("previous_status"), _PREVIOUS.c.received_at.label("previous_received_at"),
           _PREVIOUS.c.digest.is_not(None).label("previous_is_current"))
    .outerjoin(_PREVIOUS, _PREVIOUS.c.id == environments.c.last_report_id)
    .where(environments.c.machine_id == bindparam("machine"), environments.c.python == bindparam("python"))
    .with_for_update(of=environments))


# An environment's page, in statements built once (as a post's, above).
_VIEW_ENVIRONMENT = _ENVIRONMENT_ROW.where(environments.c.id == bindparam("environment"))
_VIEW_LAST_REPORT = select(reports.c.document, reports.c.drift).where(reports.c.id == bindparam("report"))
_VIEW_HISTORY = (select(reports.c.id, reports.c.received_at, reports.c.created_at, reports.c.status,
                        reports.c.first_failing_check, reports.c.key_facts)
                 .where(reports.c.environment_id == bindparam("environment")).order_by(reports.c.id.desc())
                 .limit(bindparam("limit")).offset(bindparam("offset")))
_VIEW_HISTORY_COUNT = select(func.count()).select_from(reports).where(
    reports.c.environment_id == bindparam("environment"))


class Store:
    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self.dialect = self.engine.dialect.name
        migrate(self.engine)
        insert: Any  # each dialect's insert, with its ON CONFLICT DO NOTHING
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as postgresql_insert

            insert = postgresql_insert
        else:
            from sqlalchemy.dialects.sqlite import insert as sqlite_insert

            insert = sqlite_insert
        self._insert_environment_once = insert(environments).on_conflict_do_nothing(
            index_elements=["machine_id", "python"])

    def close(self) -> None:
        self.engine.dispose()

    # --- writing -------------------------------------------------------------------------------------
    def add_report(self, document: Mapping[str, Any], machine_id: str, labels_posted: Mapping[str, str],
                   hostname: Optional[str] = None) -> Posted:
        """Store a report with its verdict and its drift: what changed since the environment's newest report
        with a better status (its last passing one, for a failing report) and since its previous report."""
        summary = summarize(document)
        digest = digest_of(document)  # computed before the write lock is taken: the lock waits for no CPU work
        status = summary["status"]
        received = now()
        created = document.get("created_at")
        key_facts = json.dumps(summary["key_facts"], sort_keys=True)
        labels_json = json.dumps(dict(labels_posted), sort_keys=True)
        with self.engine.connect().execution_options(**WRITE) as conn, conn.begin():
            self._insert_environment(conn, machine_id, summary["python"], received)
            environment = conn.execute(  # the row lock orders two posts of one environment
                _ENVIRONMENT_OF_POST, {"machine": machine_id, "python": summary["python"]}).mappings().one()
            environment_id, previous_id = environment["id"], environment["last_report_id"]
            previous = None
            if previous_id is not None and environment["previous_status"] is not None:
                previous = {"id": previous_id, "status": environment["previous_status"],
                            "received_at": environment["previous_received_at"]}
            regressed = previous is not None and _rank(status) < _rank(previous["status"])
            better, regressed_at = self._better_report(conn, environment, previous, status, received)
            drift: dict[str, Any] = {"since_better": None, "since_previous": None}
            if better is not None:
                drift["since_better"] = drift_between(self._digest(conn, better["id"]), digest, _base(better))
            if status != "pass" and previous is not None and (better is None or previous["id"] != better["id"]):
                # a problem that goes on: what its last report changed (a passing report gets no drift view)
                drift["since_previous"] = drift_between(self._digest(conn, previous["id"]), digest, _base(previous))
            report_id = conn.execute(_INSERT_REPORT, {
                "environment_id": environment_id, "received_at": received,
                "created_at": str(created)[:64] if created is not None else None, "status": status,
                "first_failing_check": summary["first_failing_check"], "key_facts": key_facts,
                "document": _pack(document), "digest": _pack(digest, 1), "drift": _pack(drift, 1)}).scalar_one()
            conn.execute(_UPDATE_ENVIRONMENT, {
                "environment": environment_id, "labels": labels_json, "status": status,
                "first_failing_check": summary["first_failing_check"], "key_facts": key_facts,
                "checks": json.dumps(summary["checks"], sort_keys=True), "last_seen": received,
                "last_report_id": report_id, "cause": summary["cause"], "cause_key": summary["cause_key"],
                "first_step": summary["first_step"], "regressed_at": regressed_at,
                "better_report_id": better["id"] if better is not None else None,
                "better_status": better["status"] if better is not None else None,
                "regressions": environment["regressions"] + int(regressed), "new_hostname": hostname,
                "new_last_pass": report_id if passed(status) else None})
            if labels_json != environment["labels"] or previous_id is None:  # most posts carry the same labels
                conn.execute(labels.delete().where(labels.c.environment_id == environment_id))
                if labels_posted:
                    conn.execute(labels.insert(), [{"environment_id": environment_id, "key": k, "value": v}
                                                   for k, v in labels_posted.items()])
        return Posted(environment_id, report_id, status, regressed)

    def _better_report(self, conn: Connection, environment: Mapping[Any, Any], previous: Optional[Mapping[str, Any]],
                       status: str, received: str) -> tuple[Optional[dict[str, Any]], Optional[str]]:
        """The environment's newest report with a better status than `status` (None for a pass, or when there
        is none), and when the environment became worse than it: the time of the first report after it."""
        if status == "pass" or previous is None:
            return None, None
        if _rank(previous["status"]) > _rank(status):
            return dict(previous), received  # it regressed with this report
        head = select(reports.c.id, reports.c.status, reports.c.received_at)
        if previous["status"] == status and environment["better_report_id"] is None and \
                environment["previous_is_current"]:
            return None, None  # its previous post, of this revision, found nothing better: nothing came since
        if previous["status"] == status and environment["better_report_id"] is not None and environment["regressed_at"]:
            better = conn.execute(head.where(reports.c.id == environment["better_report_id"])).mappings().first()
            if better is not None:  # the same run of bad reports goes on (an index lookup, however long it is)
                return dict(better), environment["regressed_at"]
        better_statuses = [s for s in STATUS_ORDER if s != "skip" and _rank(s) > _rank(status)]
        better = conn.execute(head.where(reports.c.environment_id == environment["id"],
                                         reports.c.status.in_(better_statuses))
                              .order_by(reports.c.id.desc()).limit(1)).mappings().first()
        if better is None:
            return None, None
        first_after = conn.execute(
            select(reports.c.received_at).where(reports.c.environment_id == environment["id"],
                                                reports.c.id > better["id"])
            .order_by(reports.c.id).limit(1)).scalar()
        return dict(better), first_after or received

    @staticmethod
    def _digest(conn: Connection, report_id: int) -> dict[str, Any]:
        """A report's stored digest; one posted before revision 0002 has none: made from its document."""
        row = conn.execute(select(reports.c.digest, reports.c.document).where(reports.c.id == report_id)).first()
        if row is None:
            return {"rows": [], "results": []}
        return _unpack(row.digest) if row.digest is not None else digest_of(_unpack(row.document))

    def _insert_environment(self, conn: Connection, machine_id: str, python: str, when: str) -> None:
        conn.execute(self._insert_environment_once, {
            "machine_id": machine_id, "python": python, "labels": "{}", "status": "pass", "key_facts": "{}",
            "checks": "{}", "first_seen": when, "last_seen": when})

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
    @staticmethod
    def _filtered(query: Any, label: Optional[tuple[str, str]] = None, status: Optional[str] = None,
                  stale_before: Optional[str] = None, cause_key: Optional[str] = None) -> Any:
        """The fleet's filters: a label, a status ("stale": no report since `stale_before`), a shared cause."""
        if label is not None:
            query = query.join(labels, labels.c.environment_id == environments.c.id).where(
                labels.c.key == label[0], labels.c.value == label[1])
        if status == "stale":
            query = query.where(environments.c.last_seen < (stale_before or ""))
        elif status is not None:
            query = query.where(environments.c.status == status)
        if cause_key is not None:
            query = query.where(environments.c.cause_key == cause_key)
        return query

    def environments(self, label: Optional[tuple[str, str]] = None, limit: Optional[int] = None,
                     offset: int = 0, status: Optional[str] = None, stale_before: Optional[str] = None,
                     cause_key: Optional[str] = None) -> list[dict[str, Any]]:
        """One row per machine and interpreter, worst first, those failing alike together, then the most
        recently seen."""
        query = self._filtered(_ENVIRONMENT_ROW, label, status, stale_before, cause_key).order_by(
            _STATUS_RANK, environments.c.cause_key, environments.c.last_seen.desc(), environments.c.id)
        if limit is not None:
            query = query.limit(limit).offset(offset)
        with self.engine.connect() as conn:
            return [self._environment(row) for row in conn.execute(query).mappings()]

    def count_environments(self, label: Optional[tuple[str, str]] = None, status: Optional[str] = None,
                           stale_before: Optional[str] = None, cause_key: Optional[str] = None) -> int:
        query = self._filtered(select(func.count()).select_from(environments), label, status, stale_before,
                               cause_key)
        with self.engine.connect() as conn:
            return conn.execute(query).scalar_one()

    def status_counts(self, label: Optional[tuple[str, str]] = None,
                      stale_before: Optional[str] = None) -> dict[str, int]:
        """Environments per status (of those with the label), and "stale": those silent since `stale_before`."""
        stale = func.sum(case((environments.c.last_seen < (stale_before or ""), 1), else_=0))
        query = self._filtered(select(environments.c.status, func.count(), stale).group_by(environments.c.status),
                               label)
        counts: dict[str, int] = {"stale": 0}
        with self.engine.connect() as conn:
            for status, count, silent in conn.execute(query):
                counts[status] = count
                counts["stale"] += int(silent or 0)
        return counts

    def label_counts(self, stale_before: Optional[str] = None) -> list[dict[str, Any]]:
        """Per label: environments per status, the stale ones, and the total."""
        stale = func.sum(case((environments.c.last_seen < (stale_before or ""), 1), else_=0))
        query = (select(labels.c.key, labels.c.value, environments.c.status, func.count(), stale)
                 .join(environments, environments.c.id == labels.c.environment_id)
                 .group_by(labels.c.key, labels.c.value, environments.c.status))
        per_label: dict[str, dict[str, Any]] = {}
        with self.engine.connect() as conn:
            for key, value, status, count, silent in conn.execute(query):
                entry = per_label.setdefault(f"{key}={value}", {"label": f"{key}={value}", "stale": 0, "total": 0})
                entry[status] = entry.get(status, 0) + count
                entry["stale"] += int(silent or 0)
                entry["total"] += count
        return [per_label[name] for name in sorted(per_label)]

    def causes(self, label: Optional[tuple[str, str]] = None, status: Optional[str] = None,
               stale_before: Optional[str] = None, limit: int = 20) -> list[dict[str, Any]]:
        """Environments with a problem grouped by shared cause, the largest group of the worst status first:
        the cause, its check, the plan's first step, how many, how many regressed (the rest never passed)."""
        worst = func.min(_STATUS_RANK)
        query = self._filtered(
            select(environments.c.cause_key, func.min(environments.c.first_failing_check),
                   func.min(environments.c.cause), func.min(environments.c.first_step), worst, func.count(),
                   func.count(environments.c.regressed_at), func.min(environments.c.id))
            .where(environments.c.cause_key.is_not(None))
            .group_by(environments.c.cause_key), label, status, stale_before)
        query = query.order_by(worst, func.count().desc(), environments.c.cause_key).limit(limit)
        with self.engine.connect() as conn:
            return [{"cause_key": key, "check": check, "cause": cause, "first_step": step,
                     "status": STATUS_ORDER[rank] if rank is not None and rank < len(STATUS_ORDER) else "error",
                     "count": count, "regressed": regressed, "example": example}
                    for key, check, cause, step, rank, count, regressed, example in conn.execute(query)]

    def environment(self, environment_id: int) -> Optional[dict[str, Any]]:
        if not valid_id(environment_id):
            return None
        with self.engine.connect() as conn:
            row = conn.execute(_ENVIRONMENT_ROW.where(environments.c.id == environment_id)).mappings().first()
        return self._environment(row) if row is not None else None

    @staticmethod
    def _environment(row: Mapping[Any, Any]) -> dict[str, Any]:
        """An environment's row as the pages and the API read it (each check's status stays in the database:
        only /metrics counts them, fleet_counts)."""
        facts = json.loads(row["key_facts"])
        return {
            "id": row["id"], "machine": row["machine_id"], "hostname": row["hostname"], "python": row["python"],
            "labels": json.loads(row["labels"]), "status": row["status"],
            "first_failing_check": row["first_failing_check"], "tensorflow": facts.get("TensorFlow"),
            "cuda": facts.get("CUDA"), "gpu": facts.get("GPU"), "key_facts": facts,
            "first_seen": row["first_seen"], "last_seen": row["last_seen"],
            "last_report_id": row["last_report_id"], "last_pass_report_id": row["last_pass_report_id"],
            "cause": row["cause"], "cause_key": row["cause_key"], "first_step": row["first_step"],
            "regressed_at": row["regressed_at"], "better_report_id": row["better_report_id"],
            "regressions": row["regressions"], "better_status": row["better_status"],
        }

    def history(self, environment_id: int, limit: int = 200, offset: int = 0) -> list[dict[str, Any]]:
        """The environment's reports, newest first, each with the status of the one before it (a regression
        is visible) and how many facts changed since it."""
        if not valid_id(environment_id):
            return []
        query = (select(reports.c.id, reports.c.received_at, reports.c.created_at, reports.c.status,
                        reports.c.first_failing_check, reports.c.key_facts)
                 .where(reports.c.environment_id == environment_id).order_by(reports.c.id.desc())
                 .limit(limit).offset(offset))
        with self.engine.connect() as conn:
            return [{**dict(row), "key_facts": json.loads(row["key_facts"])} for row in conn.execute(query).mappings()]

    def environment_view(self, environment_id: int, history_limit: int, history_offset: int = 0
                         ) -> Optional[dict[str, Any]]:
        """What an environment's page shows, read on one connection: the environment, its last report, the drift
        stored with it, a page of its history (one row more than asked: whether an older page exists, and the
        status before the oldest shown) and how many reports it has."""
        if not valid_id(environment_id):
            return None
        with self.engine.connect() as conn:
            row = conn.execute(_VIEW_ENVIRONMENT, {"environment": environment_id}).mappings().first()
            if row is None:
                return None
            environment = self._environment(row)
            last = conn.execute(_VIEW_LAST_REPORT, {"report": environment["last_report_id"]}).first()
            history = [{**dict(r), "key_facts": json.loads(r["key_facts"])} for r in conn.execute(
                _VIEW_HISTORY, {"environment": environment_id, "limit": history_limit + 1,
                                "offset": history_offset}).mappings()]
            total = history_offset + len(history) if len(history) <= history_limit else conn.execute(
                _VIEW_HISTORY_COUNT, {"environment": environment_id}).scalar_one()
        drift = None
        if last is not None:
            drift = _unpack(last.drift) if last.drift is not None else self.drift(environment["last_report_id"])
        return {"environment": environment, "document": _unpack(last.document) if last is not None else None,
                "drift": drift, "history": history, "history_total": total}

    def history_count(self, environment_id: int) -> int:
        if not valid_id(environment_id):
            return 0
        with self.engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(reports)
                                .where(reports.c.environment_id == environment_id)).scalar_one()

    def report_head(self, report_id: int) -> Optional[dict[str, Any]]:
        """A report's row without its document: environment, time, status."""
        if not valid_id(report_id):
            return None
        with self.engine.connect() as conn:
            row = conn.execute(select(reports.c.id, reports.c.environment_id, reports.c.received_at,
                                      reports.c.created_at, reports.c.status, reports.c.first_failing_check)
                               .where(reports.c.id == report_id)).mappings().first()
        return dict(row) if row is not None else None

    def drift(self, report_id: int) -> Optional[dict[str, Any]]:
        """The drift stored with a report: {"since_better", "since_previous"}, each None or a drift.py drift.
        A report posted before revision 0002 gets it computed from the stored reports now, and stored."""
        if not valid_id(report_id):
            return None
        with self.engine.connect() as conn:
            row = conn.execute(select(reports.c.drift, reports.c.environment_id, reports.c.status)
                               .where(reports.c.id == report_id)).first()
        if row is None:
            return None
        if row.drift is not None:
            return _unpack(row.drift)
        drift: dict[str, Any] = {"since_better": None, "since_previous": None}
        with self.engine.connect().execution_options(**WRITE) as conn, conn.begin():
            if not passed(row.status):
                better = conn.execute(
                    select(reports.c.id, reports.c.status, reports.c.received_at)
                    .where(reports.c.environment_id == row.environment_id, reports.c.id < report_id,
                           reports.c.status.not_in(FAILING)).order_by(reports.c.id.desc()).limit(1)).mappings().first()
                if better is not None:
                    drift["since_better"] = drift_between(self._digest(conn, better["id"]),
                                                          self._digest(conn, report_id), _base(better))
            conn.execute(reports.update().where(reports.c.id == report_id).values(drift=_pack(drift)))
        return drift

    def digests(self, report_ids: tuple[int, int]) -> Optional[list[dict[str, Any]]]:
        """Two reports' digests (None if either is missing), for a diff of any two."""
        if not all(valid_id(i) for i in report_ids):
            return None
        with self.engine.connect() as conn:
            found = {row.id for row in conn.execute(select(reports.c.id).where(reports.c.id.in_(report_ids)))}
            if not set(report_ids) <= found:
                return None
            return [self._digest(conn, report_id) for report_id in report_ids]

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

    def environment_gauges(self) -> list[dict[str, Any]]:
        """What /metrics says of each environment: its names, when it last reported, how often it regressed."""
        query = select(environments.c.id, environments.c.machine_id, environments.c.hostname, environments.c.python,
                       environments.c.status, environments.c.last_seen, environments.c.regressions)
        with self.engine.connect() as conn:
            return [dict(row) for row in conn.execute(query.order_by(environments.c.id)).mappings()]

    # --- retention -----------------------------------------------------------------------------------
    def apply_retention(self, keep_days: Optional[float] = None, keep_reports: Optional[int] = None,
                        at: Optional[dt.datetime] = None, batch: int = 500) -> int:
        """Remove reports older than `keep_days` or beyond the newest `keep_reports` of their environment,
        except what the server still shows: each environment's last report, its last passing report, the
        report its drift compares to, and every label's marked baseline. Deletes in batches (each its own
        short transaction: posts are not held up behind one long delete). Returns how many went."""
        if keep_days is None and keep_reports is None:
            return 0
        protected = union(
            select(environments.c.last_report_id.label("id")).where(environments.c.last_report_id.is_not(None)),
            select(environments.c.last_pass_report_id).where(environments.c.last_pass_report_id.is_not(None)),
            select(environments.c.better_report_id).where(environments.c.better_report_id.is_not(None)),
            select(baselines.c.report_id),
        )
        conditions = []
        if keep_days is not None:
            cutoff = ((at or dt.datetime.now(dt.timezone.utc)) - dt.timedelta(days=keep_days))
            conditions.append(reports.c.received_at < cutoff.isoformat(timespec="microseconds"))
        if keep_reports is not None:
            newest_first = func.row_number().over(partition_by=reports.c.environment_id,
                                                  order_by=reports.c.id.desc()).label("position")
            ranked = select(reports.c.id, newest_first).subquery()
            conditions.append(reports.c.id.in_(select(ranked.c.id).where(ranked.c.position > keep_reports)))
        candidates = (select(reports.c.id).where(or_(*conditions), reports.c.id.not_in(select(protected.subquery())))
                      .order_by(reports.c.id).limit(batch))
        removed = 0
        while True:
            with self.engine.connect().execution_options(**WRITE) as conn, conn.begin():
                ids = list(conn.execute(candidates).scalars())
                if ids:
                    conn.execute(reports.delete().where(reports.c.id.in_(ids)))
            removed += len(ids)
            if len(ids) < batch:
                return removed
