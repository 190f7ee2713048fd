"""`tfdoctor serve`: start the team server with uvicorn (the CLI imports this only for that command)."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import signal
import stat
import sys
from typing import Iterator, Optional

REQUIRED_MODULES = ("starlette", "uvicorn", "sqlalchemy", "alembic", "jinja2", "fastjsonschema", "prometheus_client")
INSTALL_LINE = "pip install 'tfdoctor[server]'"


def missing_module() -> Optional[str]:
    """The first module of the [server] extra that cannot be imported, or None (serve imports them all next)."""
    import importlib

    for name in REQUIRED_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            return name
    return None


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def shown_url(url: str) -> str:
    """The database URL without its password, for the start-up line."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


class Stopped(Exception):
    """SIGTERM: the server was asked to stop (a service manager, `kill`); a clean stop, exit 0."""


def _stop(signum: int, frame: object) -> None:
    raise Stopped()


@contextlib.contextmanager
def sigterm_stops_cleanly() -> Iterator[None]:
    """SIGTERM ends the server with exit 0, as a service manager expects of a stop it asked for. uvicorn takes
    SIGTERM while it serves, shuts down gracefully (open requests finish, the store closes), then raises the
    signal again for the handler it found: this one, which unwinds to `serve`'s return. Before uvicorn has
    started it ends the start-up the same way. Ctrl-C stays an interrupt (130), as for every command."""
    import threading

    if threading.current_thread() is not threading.main_thread():  # only the main thread takes signals
        yield
        return
    saved = signal.signal(signal.SIGTERM, _stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, saved)


def new_token(path: str) -> int:
    from tfdoctor.servers.team.security import write_new_token

    write_new_token(path)
    print(f"tfdoctor serve: a new token in {path} (mode 0600). Start the server with --token-file {path}; "
          f"machines post with TFDOCTOR_REPORT_TOKEN=\"$(cat {path})\" or --report-token-file.",
          file=sys.stderr, flush=True)
    return 0


def serve(host: str, port: int, db: Optional[str], token_file: Optional[str], private: bool = False,
          stale_after_hours: float = 24, keep_days: Optional[float] = None, keep_reports: Optional[int] = None) -> int:
    with sigterm_stops_cleanly():
        try:
            _serve(host, port, db, token_file, private, stale_after_hours, keep_days, keep_reports)
        except Stopped:
            pass
    print("tfdoctor serve: stopped", file=sys.stderr, flush=True)
    return 0


def _serve(host: str, port: int, db: Optional[str], token_file: Optional[str], private: bool,
           stale_after_hours: float = 24, keep_days: Optional[float] = None,
           keep_reports: Optional[int] = None) -> None:
    import uvicorn
    from sqlalchemy.exc import SQLAlchemyError

    from tfdoctor.servers.team.app import Settings, create_app
    from tfdoctor.servers.team.security import read_token_file
    from tfdoctor.servers.team.store import database_url, sqlite_file

    token = read_token_file(token_file) if token_file else None
    settings = Settings(database_url(db), token, private=private, stale_after_s=stale_after_hours * 3600,
                        keep_days=keep_days, keep_reports=keep_reports)  # ValueError: --private without a token
    url = settings.db_url
    if not is_loopback(host) and token is None:
        print(f"tfdoctor serve: warning: listening on {host} without --token-file: anyone who reaches this port "
              "can post reports", file=sys.stderr)
    database_file = sqlite_file(url)
    if database_file is not None and os.name != "nt" and os.path.exists(database_file) and \
            os.stat(database_file).st_mode & stat.S_IROTH:
        print(f"tfdoctor serve: warning: {database_file} can be read by every user of this machine (it holds "
              f"every report): chmod 600 {database_file}", file=sys.stderr)
    try:
        app = create_app(settings)
    except SQLAlchemyError as exc:
        raise ValueError(f"cannot open the database {shown_url(url)}: {type(exc).__name__}: "
                         f"{str(exc).splitlines()[0] if str(exc) else ''}") from None
    shown_host = f"[{host}]" if ":" in host else host
    reads = "reads need it too" if private else "reads need none"
    kept = [f"{keep_days:g} days" if keep_days is not None else "", f"{keep_reports} reports per environment"
            if keep_reports is not None else ""]
    retention = f"; keeps {' and at most '.join(k for k in kept if k)}" if any(kept) else ""
    print(f"tfdoctor serve: http://{shown_host}:{port}/ (database {shown_url(url)}; "
          f"{f'writes need the token, {reads}' if token else 'posts need no token'}{retention})",
          file=sys.stderr, flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", server_header=False, proxy_headers=False)
