"""The planner's manual steps (environment variables, renames): one step per distinct change, however
many checks ask for it, so two checks never print the same shell line twice."""

from __future__ import annotations

from tfdoctor.results.model import CheckResult, Remediation, Status
from tfdoctor.plan.planner import build_plan
from tfdoctor.results.repairs import Action, Repair

FACTS = {"host": {"system": "Linux"}, "python": {"executable": "/venv/bin/python", "in_venv": True}}


def result(check_id: str, *repairs: Repair) -> CheckResult:
    return CheckResult(check_id, check_id, Status.WARN, "x", remediation=Remediation("x", repairs=repairs))


def test_two_checks_unsetting_one_variable_share_one_step():
    plan = build_plan([result("nvidia-driver", Repair.unset_env("CUDA_VISIBLE_DEVICES", reason="hides every GPU")),
                       result("gpu-visible", Repair.unset_env("CUDA_VISIBLE_DEVICES", reason="TensorFlow lists none"))],
                      FACTS)
    assert [s.command for s in plan.steps] == ["unset CUDA_VISIBLE_DEVICES"]
    assert plan.steps_for("nvidia-driver") == plan.steps_for("gpu-visible") == [1]
    assert [r.check for r in plan.steps[0].reasons] == ["nvidia-driver", "gpu-visible"]


def test_different_values_stay_different_steps():
    plan = build_plan([result("a", Repair.set_env("TF_USE_LEGACY_KERAS", "1", reason="x")),
                       result("b", Repair.set_env("OTHER", "1", reason="y"))], FACTS)
    assert [(s.action, s.command) for s in plan.steps] == [(Action.SET_ENV, "export TF_USE_LEGACY_KERAS=1"),
                                                           (Action.SET_ENV, "export OTHER=1")]
