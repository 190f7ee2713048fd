"""`tfdoctor mcp` driven in memory with the SDK's own client (issue 27): every tool, its schemas and
annotations, the resources, bad paths, a hanging fake TensorFlow, a cancelled request, several requests
in a row in one session. The environment diagnosed is a real venv with a fake TensorFlow wheel whose pin
is violated (tests/mcp_support.py), so each diagnosis takes seconds, not a real TensorFlow import."""

from __future__ import annotations

import json
import os
import time
from unittest import mock

import anyio
import jsonschema
import pytest

from tests import fakes
from tests.fixer_support import hashes
from tests.mcp_support import build_broken_world, connected, error_text, structured

READ_ONLY_TOOLS = {"diagnose", "list_checks", "explain_check", "explain_report", "repair_plan", "diff_reports", "scan"}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return build_broken_world(tmp_path_factory.mktemp("mcp-world"))


@pytest.fixture(scope="module")
def saved_report(world, tmp_path_factory):
    """One diagnosis of the broken environment through the server, saved as a client would save it."""
    target = world.base / "bin" / "python"

    async def scenario():
        async with connected() as client:
            return structured(await client.call_tool("diagnose", {"python": str(target), "only": ["dependencies"]}))

    with mock.patch.dict(os.environ, world.environ()):  # put back exactly afterwards (a module-scoped fixture)
        document = anyio.run(scenario)
    path = tmp_path_factory.mktemp("mcp-report") / "report.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def report_schema() -> dict:
    from importlib import resources

    return json.loads(resources.files("tfdoctor.schema").joinpath("report.schema.json").read_text(encoding="utf-8"))


def test_the_read_only_tools_are_listed_with_schemas_and_annotations_and_no_destructive_one():
    async def scenario():
        async with connected() as client:
            return {tool.name: tool for tool in (await client.list_tools()).tools}

    tools = anyio.run(scenario)
    assert set(tools) == READ_ONLY_TOOLS | {"verify_fix"}
    for name in READ_ONLY_TOOLS:
        hints = tools[name].annotations
        assert hints.read_only_hint is True and hints.destructive_hint is False and hints.idempotent_hint is True, name
    verify = tools["verify_fix"].annotations
    assert verify.destructive_hint is False and verify.read_only_hint is False  # it writes a throwaway copy
    assert set(tools["diagnose"].input_schema["properties"]) == {"python", "only", "skip", "deep", "probe", "timeout"}
    assert tools["explain_check"].input_schema["required"] == ["check_id"]
    assert tools["diagnose"].output_schema["properties"].keys() == report_schema()["properties"].keys()
    assert "plan" in tools["repair_plan"].output_schema["properties"]


def test_diagnose_returns_the_redacted_report_and_remembers_it_as_a_resource(offline):
    target = offline.base / "bin" / "python"

    async def scenario():
        async with connected() as client:
            first = await client.call_tool("diagnose", {"python": str(target), "only": ["dependencies", "tensorflow-import"]})
            second = await client.call_tool("diagnose", {"python": str(target), "only": "dependencies".split()})
            listed = (await client.list_resources()).resources
            reports = [r for r in listed if str(r.uri).startswith("tfdoctor://report/")]
            read = await client.read_resource(reports[0].uri)
            schema = await client.read_resource("tfdoctor://schema/report")
            return first, second, reports, read, schema

    first, second, reports, read, schema = anyio.run(scenario)
    document = structured(first)
    jsonschema.validate(document, report_schema())
    results = {r["id"]: r for r in document["results"]}
    assert results["dependencies"]["status"] in ("warn", "fail") and "fakedep" in results["dependencies"]["summary"]
    assert results["tensorflow-import"]["status"] == "pass"
    assert document["redacted"] is True
    assert any("fakedep" in step["command"] for step in document["plan"]["steps"])
    assert "dependencies" in first.content[0].text and "1 passed" in first.content[0].text
    # the session keeps one report per interpreter: the last one
    assert len(reports) == 1 and [r["id"] for r in structured(second)["results"]] == ["dependencies"]
    assert [r["id"] for r in json.loads(read.contents[0].text)["results"]] == ["dependencies"]
    assert json.loads(schema.contents[0].text)["properties"].keys() == report_schema()["properties"].keys()


def test_list_checks_gives_ids_titles_tags_and_platforms():
    async def scenario():
        async with connected() as client:
            return structured(await client.call_tool("list_checks", {}))

    checks = {c["id"]: c for c in anyio.run(scenario)["checks"]}
    from tfdoctor.checking.registry import all_checks

    assert set(checks) == {c.id for c in all_checks()}
    assert checks["metal-plugin"]["platforms"] == ["Darwin"] and checks["dependencies"]["title"]
    assert all(isinstance(c["tags"], list) for c in checks.values())


def test_explain_check_shows_the_result_its_facts_and_its_plan_steps(saved_report):
    async def scenario():
        async with connected() as client:
            found = await client.call_tool("explain_check", {"check_id": "dependencies", "report_path": str(saved_report)})
            unknown = await client.call_tool("explain_check", {"check_id": "no-such-check",
                                                               "report_path": str(saved_report)})
            return found, unknown

    found, unknown = anyio.run(scenario)
    explained = structured(found)
    assert explained["result"]["id"] == "dependencies" and explained["result"]["status"] in ("warn", "fail")
    assert "packages" in explained["facts"] or "python" in explained["facts"]
    assert explained["plan_steps"] and all(any(r["check"] == "dependencies" for r in s["reasons"])
                                           for s in explained["plan_steps"])
    assert "fakedep" in found.content[0].text
    assert "unknown check" in error_text(unknown)


def test_explain_report_rejudges_a_report_given_as_json_or_by_path(saved_report):
    document = json.loads(saved_report.read_text(encoding="utf-8"))

    async def scenario():
        async with connected() as client:
            by_json = await client.call_tool("explain_report", {"report": document, "only": ["dependencies"]})
            by_path = await client.call_tool("explain_report", {"report_path": str(saved_report), "only": ["dependencies"]})
            both = await client.call_tool("explain_report", {"report": document, "report_path": str(saved_report)})
            not_a_report = await client.call_tool("explain_report", {"report": {"hello": "world"}})
            return by_json, by_path, both, not_a_report

    by_json, by_path, both, not_a_report = anyio.run(scenario)
    for result in (by_json, by_path):
        explained = structured(result)
        jsonschema.validate(explained, report_schema())
        assert [r["status"] for r in explained["results"]] == [r["status"] for r in document["results"]]
        assert explained["explained_from"]
    assert "either" in error_text(both)
    assert "report" in error_text(not_a_report)


def test_diff_reports_names_what_differs(saved_report):
    document = json.loads(saved_report.read_text(encoding="utf-8"))
    changed = json.loads(json.dumps(document))
    changed["facts"]["python"]["version"] = "3.99.0"

    async def scenario():
        async with connected() as client:
            same = await client.call_tool("diff_reports", {"a_path": str(saved_report), "b": document})
            differs = await client.call_tool("diff_reports", {"a": document, "b": changed})
            return same, differs

    same, differs = anyio.run(scenario)
    assert structured(same)["identical"] is True and "do not differ" in same.content[0].text
    rows = structured(differs)["differences"]
    assert structured(differs)["identical"] is False
    assert any(row["b"] == "3.99.0" for row in rows), rows


def test_repair_plan_gives_the_steps_and_what_each_changes(offline):
    target = offline.base / "bin" / "python"

    async def scenario():
        async with connected() as client:
            return await client.call_tool("repair_plan", {"python": str(target), "only": ["dependencies"]})

    result = anyio.run(scenario)
    plan = structured(result)
    assert plan["plan"]["steps"] and plan["changes"][0]["number"] == 1
    assert "fakedep" in plan["changes"][0]["changes"] and plan["changes"][0]["checks"] == ["dependencies"]
    assert "step 1:" in result.content[0].text


def test_scan_finds_and_diagnoses_the_environment_under_a_path(offline):
    async def scenario():
        async with connected() as client:
            return await client.call_tool("scan", {"paths": [str(offline.base)], "depth": 1})

    rows = structured(anyio.run(scenario))["environments"]
    assert len(rows) == 1 and rows[0]["tensorflow"] and rows[0]["verdict"]


@pytest.mark.parametrize("tool, arguments, says", [
    ("diagnose", {"python": "bin/python"}, "not an absolute path"),
    ("diagnose", {"python": "/no/such/python"}, "No such file"),
    ("diagnose", {"python": "/"}, "not an executable file"),
    ("diagnose", {"python": "/bin/python\x00x"}, "NUL"),
    ("diagnose", {"timeout": 0.01}, "timeout"),
    ("diagnose", {"only": ["no-such-check"]}, "no-such-check"),
    ("verify_fix", {"python": "/no/such/python"}, "No such file"),
    ("undo_fix", {"python": "/no/such/python"}, "Unknown tool"),  # not even listed without --allow-fix
    ("explain_report", {"report_path": "/no/such/report.json"}, "No such file"),
    ("explain_report", {"report_path": "relative.json"}, "not an absolute path"),
    ("diff_reports", {"a_path": "/", "b_path": "/"}, "not a regular file"),
    ("scan", {"paths": ["/no/such/place"]}, "no such file"),
])
def test_a_bad_argument_is_a_clear_tool_error(tool, arguments, says):
    async def scenario():
        async with connected() as client:
            return await client.call_tool(tool, arguments)

    try:
        result = anyio.run(scenario)
        message = error_text(result)
    except Exception as exc:  # noqa: BLE001 - an unknown tool is a protocol error, raised by the client
        message = str(exc)
    assert says.lower() in message.lower(), message


def test_a_fifo_given_as_a_report_is_refused_without_reading_it(tmp_path):
    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)

    async def scenario():
        async with connected() as client:
            with anyio.fail_after(20):
                return await client.call_tool("explain_report", {"report_path": str(fifo)})

    assert "not a regular file" in error_text(anyio.run(scenario))


def test_a_hanging_tensorflow_is_a_result_within_the_timeout_and_leaves_nothing_running(tmp_path, monkeypatch):
    root = fakes.install(tmp_path / "hanging", fakes.HANGS)
    monkeypatch.setenv("PYTHONPATH", str(root))
    monkeypatch.setenv("FAKE_TF_PIDFILE", str(root / "pids.txt"))
    monkeypatch.chdir(root)

    async def scenario():
        async with connected() as client:
            started = time.monotonic()
            hung = await client.call_tool("diagnose", {"only": ["tensorflow-import"], "timeout": 3})
            took = time.monotonic() - started
            after = await client.call_tool("list_checks", {})  # the session goes on
            return hung, took, after

    hung, took, after = anyio.run(scenario)
    result = structured(hung)["results"][0]
    assert result["id"] == "tensorflow-import" and result["status"] in ("fail", "error")
    assert "timed out" in json.dumps(result).lower() or "hang" in json.dumps(result).lower(), result
    assert took < 3 + 20, took  # the timeout plus the doctor's own start, on a shared machine
    assert structured(after)["checks"]
    pids = [int(p) for p in (root / "pids.txt").read_text().split()]
    assert len(pids) >= 2 and fakes.survivors(pids) == []


def test_a_cancelled_request_kills_its_children_and_the_next_request_works(tmp_path, monkeypatch):
    root = fakes.install(tmp_path / "hanging", fakes.HANGS)
    monkeypatch.setenv("PYTHONPATH", str(root))
    monkeypatch.setenv("FAKE_TF_PIDFILE", str(root / "pids.txt"))
    monkeypatch.chdir(root)
    seen: dict = {}

    async def scenario():
        async with connected() as client:
            async with anyio.create_task_group() as group:
                async def call():
                    seen["result"] = await client.call_tool("diagnose", {"only": ["tensorflow-import"], "timeout": 120})

                group.start_soon(call)
                seen["pids"] = await anyio.to_thread.run_sync(fakes.wait_for_import, root)
                seen["cancelled_at"] = time.monotonic()
                group.cancel_scope.cancel()
            seen["gone"] = await anyio.to_thread.run_sync(fakes.survivors, seen["pids"], 5.0)
            seen["gone_after"] = time.monotonic() - seen["cancelled_at"]
            seen["next"] = await client.call_tool("list_checks", {})
            (root / "tensorflow" / "__init__.py").write_text("__version__ = '2.99.0'\n", encoding="utf-8")
            seen["again"] = await client.call_tool("diagnose", {"only": ["tensorflow-install"], "timeout": 30})

    anyio.run(scenario)
    assert "result" not in seen  # the call was abandoned, not answered
    assert seen["gone"] == [] and seen["gone_after"] < 5.0, seen
    assert structured(seen["next"])["checks"]
    assert structured(seen["again"])["results"][0]["id"] == "tensorflow-install"


def test_without_allow_fix_no_listed_tool_changes_the_environment(offline, saved_report):
    """Every listed tool, called on the broken environment: its files are byte for byte as they were, and
    verify_fix's proof leaves no copy behind. apply_fix does not exist in this session."""
    target = offline.copy("read-only")
    python = str(target / "bin" / "python")
    before = hashes(target)

    async def scenario():
        async with connected() as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            names = set(tools)
            calls = {
                "diagnose": {"python": python, "only": ["dependencies"]},
                "list_checks": {},
                "explain_check": {"check_id": "dependencies", "python": python},
                "explain_report": {"report_path": str(saved_report)},
                "repair_plan": {"python": python, "only": ["dependencies"]},
                "verify_fix": {"python": python, "only": ["dependencies"]},
                "diff_reports": {"a_path": str(saved_report), "b_path": str(saved_report)},
                "scan": {"paths": [str(target)], "depth": 0},
            }
            assert set(calls) == names
            results = {name: await client.call_tool(name, arguments) for name, arguments in calls.items()}
            try:
                refused = await client.call_tool("apply_fix", {"plan_id": "anything"})
                refused = refused.content[0].text
            except Exception as exc:  # noqa: BLE001 - an unknown tool: a protocol error
                refused = str(exc)
            return results, refused, tools

    results, refused, tools = anyio.run(scenario)
    for name, result in results.items():
        if tools[name].output_schema:  # each result has the shape its tool declares
            jsonschema.validate(structured(result), tools[name].output_schema)
        assert structured(result) and result.content[0].text, name
    proof = structured(results["verify_fix"])
    assert proof["verified"] is True and proof["plan_id"] and proof["apply_allowed"] is False
    assert any("fakedep 1.0 -> 2.0" in line for line in proof["changes"]), proof
    assert "Unknown tool" in refused or "apply_fix" in refused
    assert hashes(target) == before
    assert not (target / ".tfdoctor").exists()
    assert not [p for p in target.parent.iterdir() if "tfdoctor-verify" in p.name], "the throwaway copy was left"

