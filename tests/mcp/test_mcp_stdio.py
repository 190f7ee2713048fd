"""`tfdoctor mcp` as an assistant starts it (issue 27): a real subprocess speaking MCP on stdin/stdout,
driven by the SDK's stdio client, diagnosing the real tensorflow-cpu environment of the test setup. Every
byte the server writes to stdout is kept (through `tee`) and must be a JSON-RPC message; and without the
SDK the command exits 2 with the install line."""

from __future__ import annotations

import json
import subprocess
import sys

import anyio
import pytest

from tests.mcp_support import structured

pytestmark = pytest.mark.integration


def test_a_real_stdio_server_diagnoses_the_real_tensorflow_and_writes_only_protocol(tmp_path):
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    pytest.importorskip("tensorflow", reason="the test setup's tensorflow-cpu")
    wire = tmp_path / "stdout.jsonl"
    errors = tmp_path / "stderr.txt"
    # sh runs the server with its stdout through tee: the client reads what the server wrote, byte for byte
    command = '"$0" -m tfdoctor mcp 2>"$2" | tee "$1"'
    server = StdioServerParameters(command="/bin/sh", args=["-c", command, sys.executable, str(wire), str(errors)],
                                   cwd=str(tmp_path))

    async def scenario():
        async with Client(server) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            with anyio.fail_after(300):
                diagnosed = await client.call_tool("diagnose", {"only": ["tensorflow-install", "tensorflow-import",
                                                                         "keras"], "timeout": 240})
            listed = await client.call_tool("list_checks", {})
            return names, diagnosed, listed

    names, diagnosed, listed = anyio.run(scenario)
    assert "diagnose" in names and "apply_fix" not in names
    document = structured(diagnosed)
    results = {r["id"]: r for r in document["results"]}
    assert results["tensorflow-import"]["status"] == "pass", results["tensorflow-import"]
    assert document["facts"]["tensorflow"]["version"] and document["redacted"] is True
    assert structured(listed)["checks"]
    lines = wire.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) > 4
    for line in lines[:-1]:
        assert json.loads(line)["jsonrpc"] == "2.0", line[:200]


def test_without_the_sdk_tfdoctor_mcp_exits_2_with_the_install_line():
    code = ("import sys\nsys.modules['mcp'] = None  # as if the [mcp] extra were not installed\n"
            "from tfdoctor.cli.entry import run_command_line\nsys.exit(run_command_line(['mcp']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert "pip install 'tfdoctor[mcp]'" in done.stderr and "3.10" in done.stderr
