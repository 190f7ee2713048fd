"""Issue 29, live: a violated requirement outside TensorFlow's family and a RECORD-less install, on
hard-link copies of the test setup's TensorFlow (support.shared_base), with a healthy control.

- typing-extensions 4.5.0: inside tensorflow-cpu 2.21's `typing_extensions>=3.6.6`, outside optree
  0.20's `typing-extensions>=4.10.0`. TensorFlow imports; tf.keras fails with "Keras cannot be imported"
  over keras's "To use Keras, you need to have `optree` installed" (optree no longer imports).
- protobuf 5.29.5 below TensorFlow's pin, its RECORD deleted (what `setup.py install` or a copying tool
  leaves): pip 26 refuses "Cannot uninstall protobuf 5.29.5 ... no RECORD file was found".
- gast 0.2.2 (its wheel built from PyPI's sdist), inside tensorflow-cpu 2.21's gast>=0.2.1,!=0.5.*: TensorFlow
  and tf.keras work, AutoGraph cannot convert Python control flow (a tf.function with an `if` on a tensor
  fails); the suspect is found through what the failing TensorFlow files import, and a traced tf.function
  must work after each repair.

The diagnosis runs without the package index; the installed files (every RECORD's hashes) are the same after it
and after `--prove` (typing-extensions' case; PROVE_CASE below).

Each: the doctor names the suspect, the pasted plan repairs it on a copy, and `tfdoctor fix --yes`, its trials
proving the suspect, repairs another (gast's and the RECORD-less protobuf's; TensorFlow kept, no warning left); the
control gets no warning.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.live import support

pytestmark = [pytest.mark.live, pytest.mark.integration]

# What gast 0.2.2 breaks: a tf.function with an `if` on a tensor (AutoGraph cannot convert it, so it runs as-is
# and the `if` raises OperatorNotAllowedInGraphError). Run as a file: AutoGraph reads the function's source.
CONTROL_FLOW_WORKS = """import tensorflow as tf
layer = tf.keras.layers.Dense(2)
@tf.function
def g(x):
    if tf.reduce_sum(x) > 0:
        return x + 1
    return x - 1
assert float(tf.reduce_sum(g(tf.ones(3)))) == 6.0
print("works", tf.__version__)
"""

CASES = {
    "closure-typing-extensions": {"install": "typing-extensions==4.5.0", "suspect": ("optree 0.20", "typing-extensions 4.5.0")},
    "record-less-protobuf": {"install": "protobuf==5.29.5", "strip_record": "protobuf-5.29.5.dist-info",
                             "suspect": ("protobuf 5.29.5", "no record")},
    # inside tensorflow-cpu 2.21's gast!=0.5.0,!=0.5.1,!=0.5.2,>=0.2.1: TensorFlow and Keras work, AutoGraph does not
    # convert Python control flow; PyPI has only its sdist, so its wheel is built here
    "gast-inside-its-pin": {"install": "gast==0.2.2", "build": True, "suspect": ("gast 0.2.2", "autograph"),
                            "works": CONTROL_FLOW_WORKS,
                            "beyond_tables": ("dependencies",)},  # the traced function only the child runs
}
# `tfdoctor --prove` (a diagnosis door of its own: trials on copies, nothing installed changed) runs on this case, and
# `tfdoctor fix` on the others, whose own trials (the same fixer/trials.py) prove their suspects: each case's trials run
# once more, not twice (gast's --prove: 53 s of CI). This case's fix, one `pip install` of a pin's range where the
# import fails, is the path test_live_environments' protobuf-too-old fix walks.
PROVE_CASE = "closure-typing-extensions"
# Every commit's run keeps the --prove case (a door of its own; its suspect outside any table's reach); the other two and
# this module's healthy base (test_live_environments' healthy control is the same base) are the wide tier's
# (TFDOCTOR_LIVE_WIDE=1: docs/testing.md).
GATE = PROVE_CASE


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    reason = support.platform_reason()
    if reason:
        pytest.skip(reason)
    root = Path(os.environ.get("TFDOCTOR_CLOSURE_ROOT") or tmp_path_factory.mktemp("closure"))
    # this module's root until it is removed (below); then the one before, for the live modules after this one
    # on this worker (the root conftest.py sends the modules to workers by size, not by name)
    outer, support.LEDGER.workdir = support.LEDGER.workdir, str(root)
    pins = support.base_pins()
    minor = f"{sys.version_info.major}.{sys.version_info.minor}"
    specs = sorted({f"{n}=={v}" for n, v in pins.items()} | {c["install"] for c in CASES.values() if not c.get("build")})
    wheels = support.fetch_wheels(support.wheelhouses(tmp_path_factory) / minor, specs, minor)
    for case in (c for c in CASES.values() if c.get("build")):  # sdist only on the index: build its wheel once, here
        if case["install"] not in wheels:
            support.require(support.pip(Path(sys.executable), "wheel", "--no-deps", "--no-binary", Requirement(case["install"]).name, "-w",
                                        str(root / "wheelhouse"), case["install"]), f"building {case['install']}")
            wheels[case["install"]] = next((root / "wheelhouse").glob(case["install"].replace("==", "-") + "-*.whl"))
    env = root / "base"
    if not (env / "bin" / "python").exists():  # a kept base (TFDOCTOR_LIVE_KEEP) is reused
        support.shared_base(tmp_path_factory, [wheels[f"{n}=={v}"] for n, v in sorted(pins.items())], env)
    yield root, env, wheels, pins
    if not os.environ.get("TFDOCTOR_LIVE_KEEP"):
        shutil.rmtree(root, ignore_errors=True)
    support.LEDGER.workdir = outer


def _works(env: Path, script: str, extra: dict[str, str] | None = None) -> tuple[bool, str]:
    """The script, run as a file beside the environment (AutoGraph needs a source file)."""
    path = env.parent / f"{env.name}-use.py"
    path.write_text(script, encoding="utf-8")
    completed = support.run([str(env / "bin" / "python"), str(path)], env=support.clean_environ(**(extra or {})),
                            timeout=support.DOCTOR_TIMEOUT)
    return completed.returncode == 0, "\n".join((completed.stdout + completed.stderr).strip().splitlines()[-6:])


def _doctor_problems(report: dict) -> list[str]:
    return [f"{r['id']}:{r['status']}" for r in support.problems(report, "fail", "warn", "error")]


@pytest.mark.wide
def test_healthy_base_gets_no_warning(base):
    root, env, _, _ = base
    report = support.run_doctor(env, {}, root / "reports" / "closure-healthy.json")
    assert _doctor_problems(report) == [] and report["plan"]["steps"] == []


@pytest.mark.parametrize("case", [pytest.param(case, marks=[] if case == GATE else [pytest.mark.wide]) for case in sorted(CASES)])
def test_diagnosed_then_repaired_by_the_pasted_plan_and_by_fix(base, case):
    root, env, wheels, pins = base
    spec = CASES[case]
    started = time.monotonic()
    broken = support.clone(env, root / case)
    support.require(support.pip(broken / "bin" / "python", "install", "--no-deps", str(wheels[spec["install"]])), "install")
    if spec.get("strip_record"):
        os.unlink(support.site_packages(broken) / spec["strip_record"] / "RECORD")
    frozen = support.freeze(broken)
    recorded = support.installed_bytes(broken)
    if spec.get("works"):
        works, tail = _works(broken, spec["works"])
        assert not works, f"premise of {case}: it works before any repair:\n{tail}"
    report = support.run_doctor(broken, {"PIP_NO_INDEX": "1"}, root / "reports" / f"{case}.json",  # offline
                                CASES[case].get("beyond_tables", ()))
    failing = support.problems(report, "fail")
    assert any(support.names_cause(r, spec["suspect"][:1]) for r in failing), _doctor_problems(report)
    plan_text = support._normal(" ".join(s["command"] + " " + " ".join(r["reason"] for r in s["reasons"])
                                         for s in report["plan"]["steps"]))
    assert all(support._normal(token) in plan_text or any(support.names_cause(r, (token,)) for r in failing)
               for token in spec["suspect"])
    diagnosed = time.monotonic() - started
    suspect_word = spec["suspect"][0].split()[0]
    tf_version = pins[canonicalize_name(support.BASE_DISTRIBUTION)]

    if case == PROVE_CASE:  # the other cases' suspects are proven by `tfdoctor fix`'s own trials (below)
        proving = support.run([str(support.DOCTOR), "--prove", "--python", str(broken / "bin" / "python"), "--json",
                               "--no-probe"], env=support.clean_environ(), timeout=support.FIX_TIMEOUT)
        assert "proven by experiment" in proving.stderr and suspect_word in proving.stderr, proving.stderr[-3000:]
        assert json.loads(proving.stdout)["results"]  # --json keeps stdout to the report
    assert support.freeze(broken) == frozen  # the diagnosis (and --prove) changes nothing
    assert support.installed_bytes(broken) == recorded, "the diagnosis or --prove changed an installed file"
    proved = time.monotonic() - started - diagnosed

    pasted = support.clone(broken, root / f"{case}-pasted")
    ran, shell_env = support.paste([c.replace(str(broken), str(pasted)) for c in support.pasted_commands(report)],
                                   pasted, {})
    assert all(step["exit"] == 0 for step in ran), ran
    works, tail = support.tensorflow_works(pasted, shell_env)
    assert works, tail
    if spec.get("works"):
        works, tail = _works(pasted, spec["works"], shell_env)
        assert works, tail
    after = support.run_doctor(pasted, shell_env, root / "reports" / f"{case}-pasted.json")
    assert _doctor_problems(after) == []
    assert support.tensorflow_builds(pasted) == {support.BASE_DISTRIBUTION: tf_version}

    fix_seen = {}
    if case != PROVE_CASE:  # that case's fix is one `pip install` of a pin's range, test_live_environments' protobuf's
        fixed = support.clone(broken, root / f"{case}-fixed")
        completed = support.tfdoctor_fix(fixed, {}, "--yes")
        assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
        works, tail = support.tensorflow_works(fixed, {})
        assert works, tail
        if spec.get("works"):
            works, tail = _works(fixed, spec["works"])
            assert works, tail
        assert _doctor_problems(support.run_doctor(fixed, {}, root / "reports" / f"{case}-fixed.json")) == []
        assert support.tensorflow_builds(fixed) == {support.BASE_DISTRIBUTION: tf_version}
        # without --prove above, fix's own trial is the proof that this suspect is the cause
        proof = [line for line in (completed.stdout + completed.stderr).splitlines() if "proven by experiment" in line]
        assert proof and suspect_word in " ".join(proof), proof or completed.stdout[-3000:]
        fix_seen = {"fix_exit": completed.returncode}
    print(f"{case}: diagnosed {diagnosed:.0f} s, --prove {proved:.0f} s, all {time.monotonic() - started:.0f} s; "
          f"pip downloads so far {support.LEDGER.download_bytes / 1e6:.1f} MB")
    support.LEDGER.note(case, mechanism=case, expect="fail", before=support.verdict_line(report),
                        build_seconds=diagnosed, prove_seconds=proved, pasted_works=True, ran=[(s["command"][:80], s["exit"]) for s in ran],
                        pasted_after=support.verdict_line(after), fix_seconds=time.monotonic() - started, **fix_seen)
