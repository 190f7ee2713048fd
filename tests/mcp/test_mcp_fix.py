"""`tfdoctor mcp --allow-fix` (issue 27): a real broken environment (a venv whose fake tensorflow-cpu pins
fakedep>=2 over fakedep 1.0, pip from a local wheel directory: tests/mcp_support.py) repaired through
verify_fix then apply_fix, and undo_fix restoring its freeze exactly; apply_fix applies nothing it was
not shown proven in this session, for this very environment."""

from __future__ import annotations

import subprocess

import anyio
import pytest

from tests.fixer_support import freeze, hashes
from tests.mcp_support import build_broken_world, connected, error_text, structured


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return build_broken_world(tmp_path_factory.mktemp("mcp-fix"))


def test_verify_then_apply_repairs_and_undo_restores_the_freeze_exactly(offline):
    target = offline.copy("repair")
    python = str(target / "bin" / "python")
    before = freeze(target)
    assert "fakedep==1.0" in before
    seen = {}

    async def scenario():
        async with connected(allow_fix=True) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            seen["hints"] = {name: tools[name].annotations for name in ("apply_fix", "undo_fix")}
            seen["unproven"] = await client.call_tool("apply_fix", {"plan_id": "plan-0000"})
            seen["proof"] = await client.call_tool("verify_fix", {"python": python, "only": ["dependencies"]})
            seen["untouched"] = freeze(target)
            plan_id = structured(seen["proof"])["plan_id"]
            seen["applied"] = await client.call_tool("apply_fix", {"plan_id": plan_id})
            seen["fixed"] = freeze(target)
            seen["again"] = await client.call_tool("apply_fix", {"plan_id": plan_id})
            seen["healthy"] = await client.call_tool("diagnose", {"python": python, "only": ["dependencies"]})
            seen["undone"] = await client.call_tool("undo_fix", {"python": python})

    anyio.run(scenario)
    for hints in seen["hints"].values():
        assert hints.destructive_hint is True and hints.read_only_hint is False
    assert "not proven" in error_text(seen["unproven"])
    proof = structured(seen["proof"])
    assert proof["verified"] is True and proof["apply_allowed"] is True
    assert seen["untouched"] == before  # the proof ran on a copy
    applied = structured(seen["applied"])
    assert applied["applied"] is True, applied
    assert "fakedep 1.0 -> 2.0" in applied["changes"]
    assert "fakedep==2.0" in seen["fixed"] and "tensorflow-cpu==2.21.0" in seen["fixed"]
    assert "not proven" in error_text(seen["again"])  # a proof is used once
    assert structured(seen["healthy"])["results"][0]["status"] == "pass"
    undone = structured(seen["undone"])
    assert undone["restored"] is True, undone
    assert freeze(target) == before


def test_apply_fix_refuses_a_proof_the_environment_has_moved_away_from(offline):
    target = offline.copy("moved")
    python = str(target / "bin" / "python")

    async def scenario():
        async with connected(allow_fix=True) as client:
            proof = structured(await client.call_tool("verify_fix", {"python": python, "only": ["dependencies"]}))
            # meanwhile someone installs into the environment: the proof no longer describes it
            installed = subprocess.run([python, "-m", "pip", "install", "-q", "fakedep==2.0"], capture_output=True,
                                       text=True, timeout=300)
            assert installed.returncode == 0, installed.stderr
            files = hashes(target)
            refused = await client.call_tool("apply_fix", {"plan_id": proof["plan_id"]})
            return refused, files

    refused, files = anyio.run(scenario)
    assert "changed since verify_fix" in error_text(refused)
    assert hashes(target) == files and not (target / ".tfdoctor").exists()


def test_a_cancelled_apply_fix_that_started_runs_to_its_end_and_leaves_no_half_change(offline):
    """Killing pip halfway and then the put-back's own children would leave half a change: once apply_fix
    has started, cancelling the request abandons the answer only. The next job waits for it."""
    target = offline.copy("cancelled-apply")
    python = str(target / "bin" / "python")

    async def scenario():
        async with connected(allow_fix=True) as client:
            proof = structured(await client.call_tool("verify_fix", {"python": python, "only": ["dependencies"]}))
            with anyio.move_on_after(1.0) as scope:  # apply_fix's own diagnosis is still running then
                await client.call_tool("apply_fix", {"plan_id": proof["plan_id"]})
            assert scope.cancelled_caught
            return structured(await client.call_tool("diagnose", {"python": python, "only": ["dependencies"]}))

    after = anyio.run(scenario)
    assert after["results"][0]["status"] == "pass"  # the plan was applied whole, and checked
    assert "fakedep==2.0" in freeze(target)
    assert not [p for p in target.parent.iterdir() if "tfdoctor-verify" in p.name]
