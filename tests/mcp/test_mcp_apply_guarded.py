"""`tfdoctor mcp --allow-fix` under the attacks of issue 35 (Build 8, and Build 3 for the MCP tools), on the
small real venvs of tests/fixer_support.py (a fake tensorflow-cpu whose pin on fakedep is violated; pip fed
by a loopback index that can stop answering in the middle of a step):

- apply_fix beside a `tfdoctor fix` of the same environment is refused, naming the holder: one rollback
  record, one repair (on main both applied: two records);
- a client that goes away while pip applies (a real stdio server, closed by the SDK's own client: stdin
  closed, then its process group killed) leaves the environment repaired and checked by the doctor, no
  process behind, a `tfdoctor fix` meanwhile refused, and the next call reporting how the apply ended (on
  main pip went on as an orphan: nothing checked it, nothing recorded it, nothing held the environment);
- after apply_fix, explain_check and the report resource serve no pre-fix verdict (on main both did);
- every tool states its deadline, and verify_fix stuck in pip past it answers with an error and leaves no
  process and no copy behind (on main it waited on pip).

Each was checked to fail on main at 9527ef8 (this file and tests/mcp_support.py copied into a worktree of
it, the tests run there; `fixer_support.doctor_argv` runs the tfdoctor of the checkout the tests live in):
apply_fix applied beside the command line's fix; the command line's fix was not refused while the orphaned
pip wrote; explain_check served the pre-fix `warn`; verify_fix had not answered 60 s past the deadline."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import anyio
import pytest

from tests import fixer_support as fs
from tests.mcp_support import build_broken_world, connected, error_text, structured


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return build_broken_world(tmp_path_factory.mktemp("mcp-guarded"))


@pytest.fixture()
def index(world):
    served = fs.GatedIndex(world.wheels)
    yield served
    served.stop()


@pytest.fixture()
def served(world, index, monkeypatch, tmp_path):
    """This process (the in-memory server's) and the environment of every process the tests start: pip
    fed by the loopback index, the cache (locks, detached fixes' records) in the test's own directory."""
    environ = fs.offline_environ(world.wheels)
    environ.update(PIP_FIND_LINKS=index.url, XDG_CACHE_HOME=str(tmp_path / "cache"))
    for name in ("PIP_NO_INDEX", "PIP_FIND_LINKS", "PIP_NO_CACHE_DIR", "FAKE_TF_MODE", "NO_COLOR", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, environ[name])
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.chdir(tmp_path)
    return environ


def _records(target: Path) -> list[Path]:
    return sorted((target / ".tfdoctor" / "rollback").glob("*/record.json"))


def _pip_installing(target: Path) -> list:
    return [p for p in fs.processes_using(target / "bin") if {"pip", "install"} <= set(p.info["cmdline"] or ())]


def _wait_until(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def test_apply_fix_beside_a_cli_fix_of_the_same_environment_is_refused_naming_it(world, index, served):
    target = world.copy("beside-cli")
    python = str(target / "bin" / "python")
    opener = threading.Timer(60, index.open)  # an apply_fix that waits on the index (main) is let through

    async def scenario():
        async with connected(allow_fix=True) as client:
            proof = structured(await client.call_tool("verify_fix", {"python": python, "only": ["dependencies"]}))
            cli = fs.Staged(fs.doctor_argv("fix", "--python", python, "--only", "dependencies", "--yes"), served)
            assert await anyio.to_thread.run_sync(cli.wait_for, "writing the rollback record"), "".join(cli.lines)
            index.close()  # the command line's pip now waits in the middle of its step, the lock held
            assert await anyio.to_thread.run_sync(cli.wait_for, "applying: step 1")
            opener.start()
            applied = await client.call_tool("apply_fix", {"plan_id": proof["plan_id"]})
            index.open()
            return cli, applied

    try:
        cli, applied = anyio.run(scenario)
        code, out, err = cli.finish(300)
    finally:
        opener.cancel()
    assert "another tfdoctor is changing" in error_text(applied) and "pid" in error_text(applied)
    assert code == 0 and "Repaired" in out, out + err
    assert len(_records(target)) == 1, "one fix applied: one rollback record"
    assert "fakedep==2.0" in fs.freeze(target)


def test_a_client_gone_mid_apply_leaves_it_finished_and_checked_and_the_next_call_says_so(world, index, served,
                                                                                          tmp_path):
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    import psutil

    target = world.copy("client-gone")
    python = str(target / "bin" / "python")
    argv = fs.doctor_argv("mcp", "--allow-fix")
    server = StdioServerParameters(command=argv[0], args=argv[1:], env=served, cwd=str(tmp_path))
    seen = {}

    async def client_that_goes_away():
        async with Client(server) as client:
            proof = structured(await client.call_tool("verify_fix", {"python": python, "only": ["dependencies"]}))
            index.close()
            seen["servers"] = [p for p in psutil.Process().children() if "--allow-fix" in p.cmdline()]
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "apply_fix", {"plan_id": proof["plan_id"]})
                seen["pip"] = await anyio.to_thread.run_sync(_wait_until, lambda: _pip_installing(target), 120)
                group.cancel_scope.cancel()  # the client goes: the SDK closes stdin, then kills the server's group

    anyio.run(client_that_goes_away)
    assert seen["pip"], "apply_fix never reached pip"
    assert len(seen["servers"]) == 1
    _, alive = psutil.wait_procs(seen["servers"], timeout=15)
    assert not alive, "the server outlived its client"
    # pip still waits on the index: the environment is held, and a `tfdoctor fix` meanwhile is refused
    assert _pip_installing(target), "the apply died with the server"
    meanwhile = fs.fix(target, served, "--yes", timeout=120)
    assert meanwhile.returncode == 2 and "another tfdoctor" in meanwhile.stderr, meanwhile.stdout + meanwhile.stderr
    index.open()

    async def next_call():
        async with connected() as client:
            return structured(await client.call_tool("diagnose", {"python": python, "only": ["dependencies"]}))

    document = anyio.run(next_call)  # waits for the apply to end, then says how it ended
    [earlier] = document["earlier_fixes"]
    assert earlier["operation"] == "apply_fix" and earlier["result"] == "repaired" and earlier["verified"], earlier
    assert "fakedep 1.0 -> 2.0" in earlier["changes"]
    assert document["results"][0]["status"] == "pass"
    assert "fakedep==2.0" in fs.freeze(target) and len(_records(target)) == 1
    assert not list(fs.processes_using(target)), "a process of the apply outlived it"
    again = anyio.run(next_call)
    assert "earlier_fixes" not in again, "an outcome is told once"


def test_after_apply_fix_explain_check_and_the_report_resource_serve_no_verdict_from_before(world, served):
    target = world.copy("fresh-after")
    python = str(target / "bin" / "python")

    async def scenario():
        async with connected(allow_fix=True) as client:
            before = structured(await client.call_tool("diagnose", {"python": python, "only": ["dependencies"]}))
            [resource] = [r for r in (await client.list_resources()).resources
                          if str(r.uri).startswith("tfdoctor://report/")]
            proof = structured(await client.call_tool("verify_fix", {"python": python, "only": ["dependencies"]}))
            applied = structured(await client.call_tool("apply_fix", {"plan_id": proof["plan_id"]}))
            try:
                served_report = json.loads((await client.read_resource(resource.uri)).contents[0].text)
            except Exception as exc:  # noqa: BLE001 - the SDK raises the server's refusal to read as an error
                served_report = str(exc)
            explained = structured(await client.call_tool("explain_check", {"check_id": "dependencies",
                                                                            "python": python}))
            return before, applied, served_report, explained

    before, applied, served_report, explained = anyio.run(scenario)
    assert before["results"][0]["status"] in ("warn", "fail")
    assert applied["applied"] is True, applied
    assert explained["result"]["status"] == "pass", explained["result"]
    if isinstance(served_report, dict):
        assert served_report["results"][0]["status"] == "pass", "the resource served the report from before the fix"
    else:
        assert "diagnose it again" in served_report and "apply_fix" in served_report, served_report
    assert applied["verified"] is True, applied


def test_every_tool_states_its_deadline_and_verify_fix_past_it_stops_and_leaves_nothing(world, index, served,
                                                                                       monkeypatch):
    from tfdoctor.fixer.environment import CLONE_MARK
    from tfdoctor.servers import mcp as server_module

    target = world.copy("past-deadline")
    python = str(target / "bin" / "python")
    deadlines = dict(getattr(server_module, "DEADLINES", {}))
    if deadlines:
        deadlines["verify_fix"] = type(deadlines["verify_fix"])(12.0)
    monkeypatch.setattr(server_module, "DEADLINES", deadlines, raising=False)
    index.close()  # the plan's pip, on the copy, waits on the index: only the deadline ends it

    async def scenario():
        async with connected(allow_fix=True) as client:
            tools = {tool.name: tool.description for tool in (await client.list_tools()).tools}
            started = time.monotonic()
            with anyio.fail_after(12 + 60):
                answer = await client.call_tool("verify_fix", {"python": python, "only": ["dependencies"]})
            return tools, answer, time.monotonic() - started

    tools, answer, took = anyio.run(scenario)
    assert len(tools) == 10 and all("Deadline:" in text for text in tools.values()), tools
    assert "ran past its deadline of 12 s" in error_text(answer)
    copies = f"{target.parent}/.{target.name}{CLONE_MARK}"
    assert _wait_until(lambda: not list(fs.processes_using(Path(copies))), 30), "pip outlived verify_fix"
    assert _wait_until(lambda: not list(target.parent.glob(f".{target.name}{CLONE_MARK}*")), 30), "the copy stayed"
    assert took < 12 + 30
