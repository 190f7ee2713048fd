"""The plain CLI never imports the server stack (issue 28): a fresh interpreter runs the commands a machine
runs (explain, --format openmetrics, --report-to) and loads none of it; without the extra, `tfdoctor
serve` exits 2 with the install line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "linux" / "kaggle-cudnn-9.0-vs-9.3.json"
SERVER_STACK = ("starlette", "uvicorn", "sqlalchemy", "alembic", "jinja2", "prometheus_client", "psycopg",
                "jsonschema", "fastjsonschema", "httpx", "tfdoctor.servers")

PROBE = """
import json, sys
from tfdoctor.cli.entry import run_command_line
codes = [run_command_line(argv) for argv in json.loads(sys.argv[1])]
stack = json.loads(sys.argv[2])
loaded = sorted(m for m in sys.modules if any(m == s or m.startswith(s + ".") for s in stack))
print(json.dumps({"codes": codes, "loaded": loaded}))
"""


def fresh(argvs: list[list[str]]) -> dict:
    completed = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argvs), json.dumps(SERVER_STACK)],
                               capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.splitlines()[-1])


def test_the_plain_cli_imports_no_server_stack():
    argvs = [["--version"], ["--list"], ["explain", str(FIXTURE), "--json"],
             ["explain", str(FIXTURE), "--format", "openmetrics"]]
    assert fresh(argvs) == {"codes": [0, 0, 1, 1], "loaded": []}


def test_report_to_posts_with_the_standard_library_only():
    code = ("import json, sys; from tfdoctor.posting.client import report_to;"
            "line = report_to('http://127.0.0.1:9', [{}], None, ['team=x'], False).lines[-1];"
            "stack = json.loads(sys.argv[1]);"
            "loaded = sorted(m for m in sys.modules if any(m == s or m.startswith(s + '.') for s in stack));"
            "print(json.dumps({'line': line, 'loaded': loaded}))")
    environ = {"XDG_CONFIG_HOME": "/nonexistent/config", "XDG_CACHE_HOME": "/nonexistent/cache",
               "PATH": "/usr/bin:/bin"}
    completed = subprocess.run([sys.executable, "-c", code, json.dumps(SERVER_STACK)], capture_output=True,
                               text=True, timeout=60, env=environ)
    result = json.loads(completed.stdout)
    assert result["loaded"] == [] and result["line"].startswith("tfdoctor: report not posted to http://127.0.0.1:9")


def test_serve_without_the_extra_exits_2_with_the_install_line():
    code = ("import sys; sys.modules['uvicorn'] = None;"  # as if the [server] extra were not installed
            "from tfdoctor.cli.entry import run_command_line; sys.exit(run_command_line(['serve']))")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 2 and completed.stdout == ""
    assert completed.stderr == "tfdoctor: error: tfdoctor serve needs uvicorn: pip install 'tfdoctor[server]'\n"
