"""Real TensorFlow environments broken in ways no table lists, diagnosed by the offline experiments (issue 29).

Each case is a hard-link copy of the test setup's TensorFlow (tests/live/support.py), broken one way that
no pin, RECORD or failure signature explains: a variable protobuf reads set to an implementation that
does not exist (`PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=cpp`, a workaround from protobuf 3 days, under
protobuf's upb build), a directory on LD_LIBRARY_PATH with another build of libtensorflow_framework.so.2,
a Keras configuration file (KERAS_HOME) naming the jax backend with no jax installed, and
tensorflow-hub's KerasLayer (a tf-keras layer) under the Keras 3 tf.keras. For each the doctor must say
"proven by experiment" from a run with no package index, name the cause, and its repair must work: the
plan pasted, every step in order, into one bash session (its manual steps too: unset the variable, set
TF_USE_LEGACY_KERAS), then the exact edit of keras.json its advice names, after which TensorFlow (and the
companion's layer in a tf.keras model) works in that shell and the doctor run there reports nothing. `tfdoctor fix --yes` runs what a command can do
and leaves TensorFlow where it is. The experiments change nothing in the environment: every file every
RECORD lists is byte for byte the same after the run. A healthy copy runs no experiment.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.live import support

pytestmark = [pytest.mark.live, pytest.mark.integration]

# The experiments' own budget is 30 s (bench/bench_experiments.py measures it); on the shared 2-core machine
# one `import tensorflow` alone has taken 37 s, so the live cases give them more room.
EXPERIMENTS_TIMEOUT = os.environ.get("TFDOCTOR_LIVE_EXPERIMENTS_TIMEOUT", "150")
HUB_RELEASE = "tensorflow-hub==0.16.1"  # the newest; imports tf_keras under Keras 3 and requires tf-keras
# A tf.keras model with tensorflow-hub's KerasLayer wrapping a plain callable: what a hub user's code does.
HUB_WORKS = ("import tensorflow as tf, tensorflow_hub as hub; "
             "m = tf.keras.Sequential([hub.KerasLayer(tf.function(lambda x: x * 2.0), input_shape=[3])]); "
             "print('works', m(tf.ones((1, 3))).shape)")
# tensorflow_hub imports pkg_resources (setuptools), which its metadata does not declare and a new venv lacks.
PKG_RESOURCES = "setuptools==75.8.2"
STUB_LIBRARY = "int tfdoctor_other_build(void) { return 2; }\n"


@dataclass(frozen=True)
class Case:
    id: str
    mechanism: str
    check: str  # the check that reports it
    tokens: tuple[str, ...]  # all in that check's finding
    env: dict[str, str] = field(default_factory=dict)
    install: tuple[str, ...] = ()
    works: str = support.TENSORFLOW_WORKS


CASES = (
    Case("protobuf-implementation-variable", "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=cpp under protobuf's upb build: "
         "`import tensorflow` fails (cannot import name '_message')", "tensorflow-import",
         ("proven by experiment", "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"),
         env={"PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": "cpp"}),
    Case("loader-path-shadows-tensorflow-library", "LD_LIBRARY_PATH first holds another build of "
         "libtensorflow_framework.so.2: the import fails (undefined symbol)", "tensorflow-import",
         ("proven by experiment", "LD_LIBRARY_PATH"), env={"LD_LIBRARY_PATH": "{stub_dir}"}),
    Case("keras-config-missing-backend", "KERAS_HOME's keras.json names the jax backend, jax is not installed: "
         "tf.keras fails (Keras cannot be imported)", "keras", ("proven by experiment", "keras.json", "jax"),
         env={"KERAS_HOME": "{keras_home}"}),
    Case("hub-keras-layer-under-keras-3", "tensorflow-hub 0.16.1's KerasLayer (a tf-keras layer) in a Keras 3 "
         "tf.keras model: Sequential refuses it", "companions",
         ("proven by experiment", "tensorflow_hub.KerasLayer", "TF_USE_LEGACY_KERAS"),
         install=(HUB_RELEASE, "tf-keras=={tf}", PKG_RESOURCES), works=HUB_WORKS),
)


# Every commit's run keeps this case (an experiment proves a variable, the plan names it as the manual step, fix
# keeps TensorFlow) and the healthy copy; the other three are the wide tier's (TFDOCTOR_LIVE_WIDE=1: docs/testing.md).
GATE = "protobuf-implementation-variable"
assert GATE in {case.id for case in CASES}
PARAMS = [pytest.param(case, id=case.id, marks=[] if case.id == GATE else [pytest.mark.wide]) for case in CASES]


# What no table holds, by report name: the keras.json that breaks tf.keras (support.check_stripped).
BEYOND_TABLES = {"keras-config-missing-backend": ("keras",)}


class Experiments:
    """The session's base environment (the test setup's TensorFlow, as tests/live/support.py builds it)
    and each case's copy, report and repairs."""

    def __init__(self, root: Path, tmp_path_factory: pytest.TempPathFactory, cases: tuple[Case, ...]):
        self.root = root
        pins = support.base_pins()
        self.tf_version = pins["tensorflow-cpu"]
        minor = f"{sys.version_info.major}.{sys.version_info.minor}"
        specs = {f"{n}=={v}" for n, v in pins.items()} | {s.format(tf=self.tf_version) for c in cases for s in c.install}
        self.wheels = support.fetch_wheels(support.wheelhouses(tmp_path_factory) / minor, sorted(specs), minor)
        self.base = support.shared_base(tmp_path_factory, [self.wheels[f"{n}=={v}"] for n, v in sorted(pins.items())],
                                        root / "base")
        self.places = {"stub_dir": str(self._stub_library()), "keras_home": str(self._keras_home())}
        self.no_index = root / "no-index"
        self.no_index.mkdir(exist_ok=True)
        self._made: dict[str, tuple[Path, dict]] = {}

    def _stub_library(self) -> Path:
        """A directory with another build of libtensorflow_framework.so.2 (one that defines none of its symbols)."""
        where = self.root / "other-build"
        where.mkdir(exist_ok=True)
        source = where / "stub.c"
        source.write_text(STUB_LIBRARY, encoding="utf-8")
        compiler = shutil.which("cc") or shutil.which("gcc")
        if compiler is None:
            support.unavailable("no C compiler to build another libtensorflow_framework.so.2")
        support.require(support.run([compiler, "-shared", "-fPIC", "-Wl,-soname,libtensorflow_framework.so.2", "-o",
                                     str(where / "libtensorflow_framework.so.2"), str(source)]), "building the stub")
        return where

    def _keras_home(self) -> Path:
        home = self.root / "keras-home"
        home.mkdir(exist_ok=True)
        (home / "keras.json").write_text(json.dumps({"floatx": "float32", "epsilon": 1e-07, "backend": "jax",
                                                     "image_data_format": "channels_last"}, indent=4), encoding="utf-8")
        return home

    def env_of(self, case: Case) -> dict[str, str]:
        return {name: value.format(**self.places) for name, value in case.env.items()}

    def offline(self, case: Case) -> dict[str, str]:
        """The case's environment with no package index: the diagnosis must not need one."""
        return {**self.env_of(case), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(self.no_index)}

    def made(self, case: Case) -> tuple[Path, dict]:
        if case.id not in self._made:
            env = support.clone(self.base, self.root / case.id)
            if case.install:
                wheels = [str(self.wheels[spec.format(tf=self.tf_version).replace("_", "-")]) for spec in case.install]
                support.require(support.pip(env / "bin" / "python", "install", "--no-deps", *wheels), f"{case.id}: install")
            before = support.installed_bytes(env)
            report = self.doctor(env, self.offline(case), case.id)
            assert support.installed_bytes(env) == before, "the diagnosis (and its experiments) changed installed files"
            self._made[case.id] = (env, report)
        return self._made[case.id]

    def doctor(self, env: Path, extra: dict[str, str], name: str) -> dict:
        started = time.monotonic()
        completed = support.run([str(support.DOCTOR), "--python", str(env / "bin" / "python"), "--json", "--no-redact",
                                 "--no-probe", "--experiments-timeout", EXPERIMENTS_TIMEOUT],
                                env=support.clean_environ(**extra), timeout=support.DOCTOR_TIMEOUT)
        assert completed.returncode in (0, 1), f"doctor exited {completed.returncode}: {completed.stderr[-2000:]}"
        (self.root / "reports").mkdir(exist_ok=True)
        (self.root / "reports" / f"{name}.json").write_text(completed.stdout, encoding="utf-8")
        report = json.loads(completed.stdout)
        support.check_stripped(report, name, BEYOND_TABLES.get(name, ()))
        experiments = report["facts"].get("experiments") or {}
        support.LEDGER.note(name, mechanism=name, expect="see test_live_experiments",
                            before=support.verdict_line(report), doctor_seconds=round(time.monotonic() - started, 1),
                            experiment_seconds=experiments.get("seconds"),
                            experiment_trials=len(experiments.get("trials") or ()))
        return report


@pytest.fixture(scope="module")
def experiments(tmp_path_factory, request):
    reason = support.platform_reason()
    if reason:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("live-experiments")
    outer = support.LEDGER.workdir  # put back when this module's root is removed (as test_live_closure does)
    support.LEDGER.workdir = outer or str(root)
    selected = {item.callspec.params["case"].id for item in support.selected_items(request, __name__)}
    yield Experiments(root, tmp_path_factory, tuple(c for c in CASES if c.id in selected) or CASES)
    if not os.environ.get("TFDOCTOR_LIVE_KEEP"):
        shutil.rmtree(root, ignore_errors=True)
    support.LEDGER.workdir = outer


def _finding(report: dict, check: str) -> dict:
    return next(r for r in report["results"] if r["id"] == check)


@pytest.mark.parametrize("case", PARAMS)
def test_experiment_proves_the_cause(experiments, case):
    env, report = experiments.made(case)
    works, output = support.tensorflow_works(env, experiments.env_of(case)) if case.works == support.TENSORFLOW_WORKS \
        else _works(env, experiments.env_of(case), case.works)
    assert not works, f"premise of {case.id}: it works before any repair:\n{output}"
    finding = _finding(report, case.check)
    seen = support.verdict_line(report)
    assert finding["status"] == "fail", f"{case.check} did not fail: {seen}\n{support.result_text(finding)[:800]}"
    assert support.names_cause(finding, case.tokens), (
        f"{case.check} does not name {case.tokens}:\n{support.result_text(finding)[:1500]}")
    experiments_section = report["facts"]["experiments"]
    assert experiments_section["stopped"] == "proven", experiments_section
    assert all(not trial["network"] for trial in experiments_section["trials"]), "a trial tried the network"


@pytest.mark.parametrize("case", PARAMS)
def test_plan_and_named_manual_step_repair(experiments, case):
    """The plan pasted into one shell, its steps for the shell too, then the advice's keras.json edit done as it
    says; TensorFlow stays where it was."""
    broken, report = experiments.made(case)
    env = support.clone(broken, experiments.root / f"{case.id}-pasted")
    try:
        ran, shell_env = support.paste([c.replace(str(broken), str(env)) for c in support.pasted_commands(report)],
                                       env, experiments.env_of(case))
        assert all(r["exit"] == 0 for r in ran) and len(ran) == len(report["plan"]["steps"]), f"a pasted step failed: {ran}"
        after_env = _edit_keras_config(experiments, case, report, shell_env)
        works, output = _works(env, after_env, case.works)
        assert works, f"still broken after the plan and its manual step:\n{output}"
        after = experiments.doctor(env, {**after_env, "PIP_NO_INDEX": "1"}, f"{case.id}-repaired")
        problems = support.problems(after, "fail", "error", "warn")
        assert not problems, f"after the repair the doctor still reports: {support.verdict_line(after)}"
        assert "experiments" not in after["facts"], "an experiment ran on the repaired (healthy) environment"
        assert support.tensorflow_builds(env) == support.tensorflow_builds(broken), "TensorFlow moved"
    finally:
        shutil.rmtree(env, ignore_errors=True)


@pytest.mark.parametrize("case", PARAMS)
def test_fix_yes_keeps_tensorflow(experiments, case):
    """`tfdoctor fix --yes` runs what a command can do (here: nothing but the manual steps it shows) and never
    moves TensorFlow; the environment's files stay as they were when no command applies."""
    broken, report = experiments.made(case)
    env = support.clone(broken, experiments.root / f"{case.id}-fixed")
    try:
        before = support.installed_bytes(env)
        fixed = support.tfdoctor_fix(env, experiments.env_of(case), "--yes")
        assert fixed.returncode in (0, 1, 3), fixed.stderr[-2000:]  # 3: applied, the shell's steps left (named)
        assert support.tensorflow_builds(env) == support.tensorflow_builds(broken)
        if not support.plan_commands(report):
            assert support.installed_bytes(env) == before, "fix changed files though no command applied"
        manual = [step["command"] for step in report["plan"]["steps"] if step["manual"]]
        for command in manual:
            assert command in fixed.stdout, f"fix does not show the manual step {command!r}:\n{fixed.stdout[-2000:]}"
    finally:
        shutil.rmtree(env, ignore_errors=True)


def test_healthy_copy_runs_no_experiment(experiments):
    report = experiments.doctor(experiments.base, {"PIP_NO_INDEX": "1"}, "healthy-base")
    assert not support.problems(report, "fail", "error", "warn"), support.verdict_line(report)
    assert "experiments" not in report["facts"]


def _works(env: Path, extra: dict[str, str], code: str) -> tuple[bool, str]:
    completed = support.run([str(env / "bin" / "python"), "-c", code], env=support.clean_environ(**extra),
                            timeout=support.DOCTOR_TIMEOUT)
    return completed.returncode == 0, "\n".join((completed.stdout + completed.stderr).strip().splitlines()[-6:])


def _edit_keras_config(experiments: Experiments, case: Case, report: dict, shell_env: dict[str, str]) -> dict[str, str]:
    """What a user does beyond pasting: for keras.json, the exact edit the keras finding spells (in the shell
    the paste left, `shell_env`)."""
    env = dict(shell_env)
    if case.id == "keras-config-missing-backend":
        advice = _finding(report, "keras")["remediation"]["advice"]
        config = Path(experiments.places["keras_home"]) / "keras.json"
        assert 'change "backend": "jax" to "backend": "tensorflow"' in advice and str(config) in advice, advice
        edited = experiments.root / "keras-home-edited"
        edited.mkdir(exist_ok=True)
        text = config.read_text(encoding="utf-8").replace('"backend": "jax"', '"backend": "tensorflow"')
        (edited / "keras.json").write_text(text, encoding="utf-8")
        env["KERAS_HOME"] = str(edited)  # the user's file edited; the broken original stays for the other tests
    return env
