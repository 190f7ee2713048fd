"""pixi, the newcomer installer: detected from the facts (conda-meta/pixi, or the default `.pixi/envs/<name>` of a
saved report), spelled as pixi's documentation says, and left alone by `tfdoctor fix`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tfdoctor.child import source
from tfdoctor.environment import installers
from tfdoctor.environment.spell import Spelling, argv, command, fresh_environment, spelling_for
from tfdoctor.fixer.environment import Environment, FixError, clone
from tfdoctor.plan.planner import build_plan
from tfdoctor.results.model import CheckResult, Remediation, Status
from tfdoctor.results.repairs import Action, Repair

WORKSPACE = "/home/u/proj"
RECORDED = {"manifest_path": f"{WORKSPACE}/pixi.toml", "environment_name": "cuda", "pixi_version": "0.48.1"}


def facts(**python):
    return {"host": {"system": "Linux"},
            "python": {"executable": f"{WORKSPACE}/.pixi/envs/cuda/bin/python", "prefix": f"{WORKSPACE}/.pixi/envs/cuda",
                       "in_venv": False, "conda": True, **python}}


@pytest.mark.parametrize("python, expected", [
    ({"pixi": RECORDED}, "pixi"),  # conda-meta/pixi, as the child records it
    ({}, "pixi"),  # a saved report without the field: the default place of a conda prefix
    ({"prefix": "/opt/conda/envs/tf"}, "conda"),  # a conda environment elsewhere
    ({"conda": False}, "system"),  # no conda-meta: no pixi environment, whatever the path says
    ({"uv_version": "0.5.1", "in_venv": True, "pixi": RECORDED}, "uv"),  # the precedence: a uv venv first
])
def test_pixi_is_detected_from_the_facts(python, expected):
    assert installers.detect(facts(**python)["python"]).kind == expected


def test_the_child_records_conda_meta_pixi_and_its_detection_follows(tmp_path):
    """The marker as pixi writes it: the target child (run with a prefix holding conda-meta/pixi) records its
    manifest, environment and version, and the registry names the environment pixi's."""
    (tmp_path / "conda-meta").mkdir()
    (tmp_path / "conda-meta" / "pixi").write_text(json.dumps({**RECORDED, "environment_lock_file_hash": "4f36"}))
    code = f"import sys; sys.prefix = {str(tmp_path)!r}\n" + source("target_info")
    python = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                       cwd=tmp_path).stdout)["python"]
    assert python["pixi"] == RECORDED and python["conda"] is True
    assert installers.detect(python).kind == "pixi"


def test_pixi_steps_change_the_workspace_as_pixi_documents():
    spelling = spelling_for(facts(pixi=RECORDED))
    manifest = [f"--manifest-path={WORKSPACE}/pixi.toml"]
    assert argv(spelling, Action.INSTALL, ("protobuf>=5.28,<6", "tensorflow-cpu==2.21.0")) == [
        "pixi", "add", *manifest, "--pypi", "--", "protobuf>=5.28,<6", "tensorflow-cpu==2.21.0"]
    assert argv(spelling, Action.UNINSTALL, ("tensorflow",)) == ["pixi", "remove", *manifest, "--pypi", "--", "tensorflow"]
    # conda's own packages too: pixi lays them down again, never `conda install` over pixi's prefix
    assert argv(spelling, Action.REINSTALL, ("numpy==1.26.4",), manager="conda", prefix="/x") == [
        "pixi", "reinstall", *manifest, "--environment=cuda", "--", "numpy"]
    assert command(spelling, Action.INSTALL, ("numpy<2",)).startswith("pixi add '--manifest-path=/home/u/proj/pixi.toml'")
    saved = spelling_for(facts())  # a saved report's default place: the workspace directory
    assert argv(saved, Action.INSTALL, ("numpy<2",))[:3] == ["pixi", "add", f"--manifest-path={WORKSPACE}"]
    hostile = spelling_for(facts(pixi={"manifest_path": "--frozen; rm -rf ~", "environment_name": "$(x)"}))
    line = command(hostile, Action.REINSTALL, ("numpy==1.26.4",))
    assert line == "pixi reinstall '--manifest-path=--frozen; rm -rf ~' '--environment=$(x)' -- numpy", line
    assert fresh_environment(spelling)[0].startswith("pixi init")


def test_a_plan_for_pixi_holds_no_pip_step_and_says_what_pixi_cannot_do():
    """No pip upgrade (pixi installs PyPI packages itself), and a --no-deps install, which pixi add cannot do,
    is a note rather than a command that would bring the dependencies along."""
    result = CheckResult("installer", "Installer", Status.WARN, "pip", remediation=Remediation(
        "", repairs=(Repair.upgrade_pip("old pip", minimum="20.3"), Repair.install("tensorflow-text==2.21.0", reason="r"),
                     Repair.install("tf-keras==2.21.0", reason="r", no_deps=True))))
    plan = build_plan([result], {**facts(pixi=RECORDED), "installers": {"pip": "9.0"}}, with_choices=False)
    assert plan.installer == "pixi"
    assert [step.command.split()[:2] for step in plan.steps] == [["pixi", "add"]]
    assert any("no pixi environment command for install tf-keras==2.21.0" in note for note in plan.notes), plan.notes


def test_fix_leaves_a_pixi_environment_alone(tmp_path):
    environment = Environment(str(tmp_path / "bin" / "python"), str(tmp_path), "pixi")
    with pytest.raises(FixError, match="pixi keeps this environment"):
        clone(environment)
    assert not [p for p in tmp_path.parent.iterdir() if ".tfdoctor-verify-" in p.name]  # no copy made beside it
    assert Spelling("pixi", "/p/bin/python").installer.dry_run is None


def test_prove_tries_nothing_on_a_pixi_environment():
    """`--prove` installs candidates into copies: for pixi it says why it tries none, and makes no copy."""
    from types import SimpleNamespace

    from tfdoctor.fixer.trials import prove_report

    unmet = CheckResult("dependencies", "Dependencies", Status.FAIL, "unmet", evidence={
        "unmet": [{"name": "protobuf", "specifier": ">=5.28.0", "requirer": "tensorflow"}]})
    said: list[str] = []
    report = SimpleNamespace(results=[unmet], facts=facts(pixi=RECORDED), plan=SimpleNamespace(steps=()))
    assert prove_report(report, said.append) is None
    assert said and "nothing tried: pixi keeps this environment" in said[-1], said
