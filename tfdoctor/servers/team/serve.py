"""`tfdoctor serve`: start the team server with uvicorn (the CLI imports this only for that command)."""

from __future__ import annotations

import ipaddress
import sys
from typing import Optional

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


def serve(host: str, port: int, db: Optional[str], token_file: Optional[str]) -> int:
    import uvicorn

    from tfdoctor.servers.team.app import Settings, create_app
    from tfdoctor.servers.team.security import read_token_file
    from tfdoctor.servers.team.store import database_url

    token = read_token_file(token_file) if token_file else None
    url = database_url(db)
    if not is_loopback(host) and token is None:
        print(f"tfdoctor serve: warning: listening on {host} without --token-file: anyone who reaches this port "
              "can post reports", file=sys.stderr)
    app = create_app(Settings(url, token))
    shown_host = f"[{host}]" if ":" in host else host
    print(f"tfdoctor serve: http://{shown_host}:{port}/ (database {shown_url(url)}; "
          f"posts {'need the token' if token else 'need no token'})", file=sys.stderr, flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", server_header=False, proxy_headers=False)
    return 0
