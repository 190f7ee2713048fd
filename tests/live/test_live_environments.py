"""Real TensorFlow environments, healthy or broken one mechanism each: the doctor's verdict, then its own fix.

Most cases are the test setup's TensorFlow (tensorflow-cpu, latest) in a fresh venv, broken in one way with
real releases from the package index. Others are made as a user makes them: `pip install
tensorflow-cpu==2.X` into a fresh Python 3.11 venv with pip's own resolver (healthy controls of older
minors), `pip install tensorflow-cpu==2.10.1` on Python 3.10 (the resolver's NumPy 2 then breaks it), or
`uv venv` with the test setup's TensorFlow installed by uv (no pip inside). `test_verdict` runs the doctor
on each and asserts the mechanism's verdict: a `fail` (a `warn` where TensorFlow still works) from a check
that names the cause, and neither a `fail` nor a `warn` on a healthy control. Then each broken case is
repaired twice, on two hard-link copies: the report's plan pasted into one bash session (every step, in
order: an `export` step holds for what runs in that shell afterwards), and `tfdoctor fix --yes` (exit 0, or 3
with the plan's steps for the shell named, which are then done in a shell as the user would). After each,
`import tensorflow` and `tf.keras.layers.Dense(2)` work (and the case's companion imports) in that shell, the
doctor run there reports neither a `fail` nor a `warn`, one TensorFlow
build is installed, and its version is the one before unless the plan's `moves_tensorflow` said why and
where. `tfdoctor fix --undo --yes` then restores the freeze before the fix. On a healthy control
`tfdoctor fix --yes` changes nothing. A plan that cannot work (no package index) fails on the fixer's
copy and leaves the environment byte for byte as it was (every file every RECORD lists: size, sha256).

Expectations are written against mechanisms ("a finding names protobuf"), not one check id. Releases
outside TensorFlow's pins are chosen for the TensorFlow the test setup installs (2.21 when written); each
case asserts its own premise (that the release really violates the installed TensorFlow's Requires-Dist,
or that the companion's Requires-Dist excludes the installed TensorFlow), so a newer TensorFlow that moves
a pin makes the case say so rather than pass vacuously.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.live import support

pytestmark = [pytest.mark.live, pytest.mark.integration]

FAIL, WARN, PROBLEM, HEALTHY = "fail", "warn", "fail-or-warn", "healthy"
BASE, RESOLVED, UV = "copy of the base", "pip's resolver", "uv"
# Every tensorflow-cpu 2.12-2.15 and 2.17-2.19 that pip installs on Python 3.11 comes with
# tensorflow-io-gcs-filesystem 0.37.1, which declares `tensorflow-cpu<2.17,>=2.16; extra == 'tensorflow-cpu'`:
# an extra nobody asked for (issue 17).
HEALTHY_RELEASES = ("2.13.1", "2.18.1")  # one of each range above (2.15.1 and 2.17.1 left out for CI's time)
# The cases every commit's run keeps (the others are the wide tier's, TFDOCTOR_LIVE_WIDE=1: docs/testing.md): a healthy
# control (no warning, fix changes nothing); a pin violated where the import fails (verdict, pasted plan, fix and undo,
# and the plan that fails on a copy with no index); a companion of another release under TF_USE_LEGACY_KERAS (a
# `--no-deps` step, the variable kept in the shell).
GATE = frozenset({"healthy-tensorflow-cpu", "protobuf-too-old", "tf-keras-of-another-release"})


@dataclass(frozen=True)
class Case:
    id: str
    mechanism: str
    expect: str
    causes: tuple[tuple[str, ...], ...] = ()  # each group: every token in one finding ("{tf}", "{tf_minor}": TensorFlow's)
    origin: str = BASE
    python: str | None = None  # RESOLVED: the Python minor of the fresh venv (None: the tests' own)
    requirements: tuple[str, ...] = ()  # RESOLVED: what `pip install` is asked for
    install: tuple[str, ...] = ()  # releases installed --no-deps on top ("{tf}": the base's TensorFlow version)
    # the Python minor whose wheels `install` takes instead, laid over site-packages as `pip install --target
    # <site-packages> --python-version <it> --only-binary=:all: --upgrade` does (a layer built for another runtime)
    wheels_for: str | None = None
    uninstall: tuple[str, ...] = ()
    delete: tuple[str, ...] = ()  # files of the install, relative to site-packages, unlinked
    violates: str | None = None  # the distribution whose installed release breaks TensorFlow's pin
    built_for_another: str | None = None  # the companion whose installed release requires another TensorFlow
    imports: tuple[str, ...] = ()  # modules that must import after the fix, beside TensorFlow
    env: dict[str, str] = field(default_factory=dict)
    xfail: str | None = None  # "verdict: why", "plan: why", "fix: why" (or "plan, fix: why"): not right yet
    # the broken case whose `tfdoctor fix` test walks this one's path (a plan of the same steps on the same kind of
    # environment, the fixer indifferent to the package's name): this case's fix test is left out for CI's time (each
    # is minutes: the plan twice, the doctor three times); its verdict and pasted-plan tests stay
    fix_as: str | None = None
    # checks whose verdict on this case rests on what no table holds: a report without the child's facts may pass or
    # skip there (support.check_stripped, issue 38)
    beyond_tables: tuple[str, ...] = ()


# Copies of the base first: the other environments are built meanwhile (see Live).
CASES = (
    Case("healthy-tensorflow-cpu", "control: tensorflow-cpu with its dependencies at their pins", HEALTHY),
    Case("healthy-tensorflow", "control: tensorflow (the CUDA-capable build) instead of tensorflow-cpu", HEALTHY,
         uninstall=("tensorflow-cpu",), install=("tensorflow=={tf}",)),
    Case("protobuf-too-old", "protobuf below TensorFlow's pin: the import fails (gencode/runtime major mismatch)",
         FAIL, causes=(("protobuf 5.29",),), install=("protobuf==5.29.5",), violates="protobuf"),
    Case("ml-dtypes-too-old", "ml-dtypes below TensorFlow's pin: the import fails (a dtype is missing)",
         FAIL, causes=(("ml-dtypes 0.4",),), install=("ml-dtypes==0.4.1",), violates="ml-dtypes",
         fix_as="protobuf-too-old"),  # one `pip install` of a pin's range, a failing import before
    Case("keras-2-with-tf2", "Keras 2 where TensorFlow pins Keras 3: TensorFlow imports, tf.keras fails",
         FAIL, causes=(("keras 2.15",),), install=("keras==2.15.0",), violates="keras",
         fix_as="protobuf-too-old"),  # one `pip install` of a pin's range, a failing import before
    Case("h5py-too-new", "h5py above TensorFlow's pin while TensorFlow still imports and works",
         WARN, causes=(("h5py 3.16",),), install=("h5py==3.16.0",), violates="h5py",
         fix_as="tensorboard-without-pkg-resources"),  # one `pip install` of a pin's range, TensorFlow working before
    Case("numpy-too-old", "NumPy below TensorFlow's pin while TensorFlow still imports and works",
         WARN, causes=(("numpy 1.25",),), install=("numpy==1.25.2",), violates="numpy",
         fix_as="tensorboard-without-pkg-resources"),  # one `pip install` of a pin's range, TensorFlow working before
    Case("shared-library-deleted", "a shared library of the tensorflow package deleted: the import fails",
         FAIL, causes=(("libtensorflow_framework.so.2",),), delete=("tensorflow/libtensorflow_framework.so.2",),
         fix_as="old-pip-and-deleted-library"),  # TensorFlow's wheel reinstalled, that plan's last step
    Case("old-pip-and-deleted-library", "pip 20.2 (cannot install manylinux_2_27 wheels) in an environment "
         "whose repair needs TensorFlow's wheel", FAIL, causes=(("pip 20.2",),), install=("pip==20.2.4",),
         delete=("tensorflow/python/_pywrap_tensorflow_internal.so",)),
    Case("tf-keras-of-another-release", "tf-keras 2.15 with TF_USE_LEGACY_KERAS=1 on TensorFlow {tf}: tf.keras fails",
         # without the child's facts, companions judges tf-keras 2.15.1 from the companion table's row (issue 38)
         FAIL, causes=(("tf-keras", "{tf_minor}"),), install=("tf-keras==2.15.1",), env={"TF_USE_LEGACY_KERAS": "1"}),
    Case("legacy-keras-without-tf-keras", "TF_USE_LEGACY_KERAS=1 and no tf-keras beside tensorflow-cpu {tf}: tf.keras fails",
         FAIL, causes=(("tf-keras", "{tf_minor}"),), env={"TF_USE_LEGACY_KERAS": "1"},
         fix_as="tf-keras-of-another-release"),  # one `pip install` of tf-keras's range under TF_USE_LEGACY_KERAS=1
    Case("two-tensorflow-builds", "tensorflow and tensorflow-cpu both installed into one site-packages/tensorflow/",
         PROBLEM, causes=(("tensorflow {tf}", "tensorflow-cpu {tf}"),), install=("tensorflow=={tf}",)),
    Case("tensorflow-text-of-another-release", "tensorflow-text 2.15.0 (made for TensorFlow 2.15; requires `tensorflow`) "
         "beside tensorflow-cpu {tf}: import tensorflow_text fails while TensorFlow works", FAIL, causes=(("tensorflow-text 2.15",),),
         # without the child's facts, companions judges it from the companion table's row for 2.15.0 (issue 38)
         install=("tensorflow-text==2.15.0",), built_for_another="tensorflow-text", imports=("tensorflow_text",)),
    Case("tensorflow-hub-without-tf-keras", "tensorflow-hub 0.16.0 (its Requires-Dist names no tf-keras, its own source "
         "imports tf_keras under Keras 3) beside tensorflow-cpu {tf} without tf-keras: import tensorflow_hub fails",
         FAIL, causes=(("tensorflow-hub 0.16.0", "tf-keras"),),
         # setuptools below 82: hub also imports pkg_resources, which it does not declare either (the base's
         # `python -m venv` setuptools has it; tensorflow-hub-0.15-beside-setuptools-84 is that mechanism's case)
         # the plan: tf-keras, and `export TF_USE_LEGACY_KERAS=1` (hub's KerasLayer is a tf-keras layer under Keras 3),
         # a step for the shell: pasted into it, and named by `tfdoctor fix` (exit 3) as left to the user
         install=("tensorflow-hub==0.16.0", "setuptools==80.9.0"), imports=("tensorflow_hub",),
         # `pip install --no-deps` of tf-keras, then the shell's export (fix exits 3): the 0.15 case's plan ends so
         fix_as="tensorflow-hub-0.15-beside-setuptools-84"),
    Case("tensorflow-hub-0.15-beside-setuptools-84", "tensorflow-hub 0.15.0 (before hub moved to tf_keras; it imports "
         "tf.estimator, gone since TensorFlow 2.16, and pkg_resources, which setuptools 82 removed) beside setuptools 84 "
         "and tensorflow-cpu {tf} without tf-keras: import tensorflow_hub fails on one, then on the other",
         FAIL, causes=(("tensorflow-hub 0.15.0", "pkg_resources", "setuptools<82", "tf-keras"),),
         # every need in the one plan (tensorflow/hub#934, #901): setuptools<82, tf-keras, tensorflow-hub>=0.16.0 (no
         # setting makes 0.15 work under Keras 3) and `export TF_USE_LEGACY_KERAS=1` for hub's KerasLayer
         install=("tensorflow-hub==0.15.0", "setuptools==84.2.1"), imports=("tensorflow_hub",)),
    Case("tensorboard-without-pkg-resources", "tensorboard 2.20.0 (TensorFlow 2.20's, whose default.py imports "
         "pkg_resources) beside setuptools 84 (82 removed it): the `tensorboard` command fails while TensorFlow works",
         WARN, causes=(("tensorboard 2.20.0", "pkg_resources", "setuptools<82"),),
         # tensorboard#7107; installed --no-deps, so its own requirements missing here join the plan's one step
         install=("tensorboard==2.20.0", "setuptools==84.2.1"), imports=("tensorboard.main",)),
    Case("tensorflow-built-for-another-python", "tensorflow-cpu {tf}'s cp312 wheel laid over the Python 3.11 base with "
         "`pip install --target <site-packages> --python-version 3.12 --only-binary=:all: --upgrade --no-deps`: its "
         "RECORD holds, its WHEEL says cp312, the import fails (undefined symbol: _PyObject_ClearManagedDict)",
         FAIL, causes=(("tensorflow-cpu", "cpython 3.12", "cp312-cp312", "python 3.11"),), install=("tensorflow-cpu=={tf}",),
         wheels_for="3.12"),
    Case("uv-venv-protobuf-too-old", "a uv venv (no pip inside) with protobuf below TensorFlow's pin: the import fails",
         FAIL, causes=(("protobuf 5.29",),), origin=UV, install=("protobuf==5.29.5",), violates="protobuf"),
    *(Case(f"healthy-tensorflow-cpu-{release}", f"control: pip install tensorflow-cpu=={release} into a fresh Python 3.11 venv",
           HEALTHY, origin=RESOLVED, python="3.11", requirements=(f"tensorflow-cpu=={release}",))
      for release in HEALTHY_RELEASES),
    Case("tensorflow-2.10-numpy-2-and-protobuf-4", "pip install tensorflow-cpu==2.10.1 on Python 3.10 (the resolver "
         "picks NumPy 2.2, which 2.10's extensions cannot import), then protobuf 4.25 above its <3.20 pin",
         FAIL, causes=(("numpy 2.2",), ("protobuf 4.25",)), origin=RESOLVED, python="3.10",
         requirements=("tensorflow-cpu==2.10.1",), install=("numpy==2.2.6", "protobuf==4.25.9"), violates="protobuf"),
)


assert GATE <= {case.id for case in CASES}, "GATE names a case that is not in CASES"


def _params(phase: str, cases: tuple[Case, ...] = CASES) -> list:
    """xfail names the phases it is about ("verdict: ...", "plan, fix: ..."), strict: a pass means it's fixed."""
    def phases(case: Case) -> list[str]:
        return [p.strip() for p in case.xfail.split(":", 1)[0].split(",")] if case.xfail else []

    return [pytest.param(case, id=case.id,
                         marks=([pytest.mark.xfail(strict=True, reason=case.xfail)] if phase in phases(case) else [])
                         + ([pytest.mark.wide] if case.id not in GATE else []))
            for case in cases]


class Live:
    """The session's environments: the wheelhouses, the base, each selected case's environment, its
    report and what `tfdoctor fix` made of a copy of it. Threads beside the tests' keep the cores busy: one
    builds the environments not copied from the base (pip's resolver, uv) from the start, while the copies
    are diagnosed; FIXERS others run `tfdoctor fix` on a copy of each case as soon as the case is diagnosed,
    while the tests go on (the fix tests then only read the outcome). One fixer made the module's last
    minutes a queue of fixes one after another (each minutes long, the two-builds case's ~6) on one core
    while the other core had nothing left to do."""

    def __init__(self, root: Path, tmp_path_factory: pytest.TempPathFactory, cases: tuple[Case, ...],
                 fixing: frozenset[str] = frozenset(), users: dict[str, set[str]] | None = None):
        self.root = root
        self.fixing = fixing  # the cases whose fix test runs
        # what still uses each case's environment (its tests' node ids, FIXING for the fixer's thread): the last one
        # to finish removes it (done_with), so the run's disk holds the environments in use, not every one built
        self._users = {case: set(users) for case, users in (users or {}).items()}
        self._users_lock = threading.Lock()
        pins = support.base_pins()
        self.tf_version = pins[canonicalize_name(support.BASE_DISTRIBUTION)]
        self.tf_minor = ".".join(self.tf_version.split(".")[:2])
        self.own_python = f"{sys.version_info.major}.{sys.version_info.minor}"
        self.wheels: dict[str, dict[str, Path]] = {}
        wheelhouses = support.wheelhouses(tmp_path_factory)
        for minor in sorted({self._wheels_python(case) for case in cases} | {self.own_python}):
            specs = {spec.format(tf=self.tf_version) for case in cases if self._wheels_python(case) == minor
                     for spec in case.install}
            if minor == self.own_python:
                specs |= {f"{name}=={version}" for name, version in pins.items()}
            self.wheels[minor] = support.fetch_wheels(wheelhouses / minor, sorted(specs), minor)
        support.LEDGER.wheelhouse_bytes = sum(w.stat().st_size for w in wheelhouses.rglob("*.whl"))
        self.base_wheels = [self.wheels[self.own_python][f"{name}=={version}"] for name, version in sorted(pins.items())]
        self._builder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="live-build")
        self._made: dict[str, Future] = {case.id: self._builder.submit(self._make, case) for case in cases if case.origin != BASE}
        self.base = support.shared_base(tmp_path_factory, self.base_wheels, root / "base")
        self._broken: dict[str, tuple[Path, dict]] = {}
        self._fixer = ThreadPoolExecutor(max_workers=FIXERS, thread_name_prefix="live-fix")
        self._fixes: dict[str, Future] = {}

    def close(self) -> None:
        for executor in (self._builder, self._fixer):
            executor.shutdown(wait=True, cancel_futures=True)

    def _python(self, case: Case) -> str:
        return case.python or self.own_python

    def _wheels_python(self, case: Case) -> str:
        return case.wheels_for or self._python(case)

    def broken(self, case: Case) -> tuple[Path, dict]:
        if case.id not in self._broken:
            started = time.monotonic()
            env, made_seconds, fetched = self._made[case.id].result() if case.id in self._made else self._make(case)
            python = env / "bin" / "python"
            if case.uninstall:
                support.require(support.pip(python, "uninstall", "-y", *case.uninstall), f"{case.id}: uninstall")
            if case.install:
                wheels = [str(self._wheel(case, spec)) for spec in case.install]
                if case.origin == UV:
                    support.require(support.uv("pip", "install", "--python", str(python), "--no-deps", *wheels), f"{case.id}: install")
                elif case.wheels_for:
                    support.require(support.pip(python, "install", "--no-deps", "--only-binary=:all:", "--python-version",
                                                case.wheels_for, "--target", str(support.site_packages(env)), "--upgrade",
                                                *wheels), f"{case.id}: install for Python {case.wheels_for}")
                else:
                    support.require(support.pip(python, "install", "--no-deps", *wheels), f"{case.id}: install")
            for relative in case.delete:
                os.unlink(support.site_packages(env) / relative)  # only unlinks: the base keeps its inode
            self._premise(case, env)
            report = support.run_doctor(env, case.env, self.root / "reports" / f"{case.id}.json", case.beyond_tables)
            support.LEDGER.note(case.id, mechanism=case.mechanism.format(tf=self.tf_version), expect=case.expect,
                                before=support.verdict_line(report),
                                build_seconds=made_seconds + time.monotonic() - started, build_download=fetched)
            self._broken[case.id] = (env, report)
            if case.id in self.fixing:
                self._fixes[case.id] = self._fixer.submit(self._fix, case)
        return self._broken[case.id]

    def fixed(self, case: Case) -> dict:
        """What `tfdoctor fix --yes` (and, on a broken case, `--undo --yes` after it) did to a copy."""
        self.broken(case)
        if case.id not in self._fixes:
            self._fixes[case.id] = self._fixer.submit(self._fix, case)
        return self._fixes[case.id].result()

    def _fix(self, case: Case) -> dict:
        broken, report = self._broken[case.id]
        started = time.monotonic()
        env = support.clone(broken, self.root / f"{case.id}-fixed")
        before = support.freeze(env)
        fixed = support.tfdoctor_fix(env, case.env, "--yes")
        outcome = {"fixed": fixed, "before": before, "report": report}
        shell_env = case.env
        if fixed.returncode == SHELL_STEPS_LEFT:  # the steps fix names as left to the user, done in a shell
            outcome["left"], shell_env = support.paste(support.manual_commands(report), env, case.env)
        if case.expect == HEALTHY:
            outcome["after"] = support.freeze(env)
            support.LEDGER.note(case.id, fix_exit=fixed.returncode, fix_changes=sorted(set(outcome["after"]) ^ set(before)))
        else:
            support.LEDGER.note(case.id, fix_exit=fixed.returncode)
            outcome["seen"] = _repaired(self, case, report, broken, env, "fix", shell_env)
            outcome["undone"] = support.tfdoctor_fix(env, case.env, "--yes", "--undo")
            outcome["restored"] = support.freeze(env)
            support.LEDGER.note(case.id, undo_exit=outcome["undone"].returncode, undo_restores=outcome["restored"] == before,
                                fix_seconds=time.monotonic() - started)
        shutil.rmtree(env, ignore_errors=True)
        self.done_with(case.id, FIXING)
        return outcome

    def done_with(self, case_id: str, user: str) -> None:
        """`user` (a test's node id, or FIXING) needs the case's environment no more; the last user removes it."""
        with self._users_lock:
            users = self._users.get(case_id)
            if users is None or user not in users:
                return
            users.discard(user)
            if users or case_id not in self._broken or os.environ.get("TFDOCTOR_LIVE_KEEP"):
                return
            env = self._broken[case_id][0]
        assert env != self.base, "a case's environment is a copy of the base, never the base itself"
        shutil.rmtree(env, ignore_errors=True)

    def _make(self, case: Case) -> tuple[Path, float, int]:
        """The case's environment before it is broken: where, seconds taken, bytes pip fetched."""
        started, fetched, target = time.monotonic(), 0, self.root / case.id
        if case.origin == RESOLVED:
            fetched = support.build_resolved(target, support.python_of(self._python(case)), case.requirements)
        elif case.origin == UV:
            support.build_with_uv(target, support.python_of(self.own_python), self.base_wheels)
        else:
            support.clone(self.base, target)
        return target, time.monotonic() - started, fetched

    def _wheel(self, case: Case, spec: str) -> Path:
        requirement = Requirement(spec.format(tf=self.tf_version))
        version = next(iter(requirement.specifier)).version
        return self.wheels[self._wheels_python(case)][f"{canonicalize_name(requirement.name)}=={version}"]

    def _premise(self, case: Case, env: Path) -> None:
        dists = support.installed(env)
        builds = support.tensorflow_builds(env)
        tensorflow = dists[next(iter(builds))]
        if case.violates:
            pins = [Requirement(r) for r in tensorflow.requires or () if canonicalize_name(Requirement(r).name) == case.violates]
            version = dists[case.violates].version
            assert pins and not any(p.specifier.contains(version, prereleases=True) for p in pins), (
                f"premise of {case.id} no longer holds: {case.violates} {version} satisfies TensorFlow "
                f"{tensorflow.version}'s {[str(p) for p in pins]}; pick a release outside the pin")
        if case.built_for_another:
            companion = dists[case.built_for_another]
            wanted = [Requirement(r) for r in companion.requires or () if canonicalize_name(Requirement(r).name) in support.TENSORFLOW_BUILDS
                      and (Requirement(r).marker is None or Requirement(r).marker.evaluate({"extra": ""}))]
            assert wanted and not any(r.specifier.contains(tensorflow.version, prereleases=True) for r in wanted), (
                f"premise of {case.id}: {case.built_for_another} {companion.version} accepts TensorFlow {tensorflow.version}")
        if case.env.get("TF_USE_LEGACY_KERAS"):
            if "tf-keras" in dists:
                release = ".".join(dists["tf-keras"].version.split(".")[:2])
                assert release != self.tf_minor, f"premise of {case.id}: tf-keras {release} is TensorFlow's own release"
        if case.origin == UV:
            assert "pip" not in dists, f"premise of {case.id}: uv venv has pip inside"
        if case.wheels_for:
            wheel, = support.site_packages(env).glob(f"{canonicalize_name(tensorflow.metadata['Name']).replace('-', '_')}-*.dist-info/WHEEL")
            wanted = "cp" + case.wheels_for.replace(".", "")
            assert f"Tag: {wanted}-{wanted}-" in wheel.read_text(), f"premise of {case.id}: {wheel} is not {wanted}'s"
            works, output = support.tensorflow_works(env, case.env)
            assert not works and "undefined symbol" in output, f"premise of {case.id}: TensorFlow imports:\n{output}"
        for relative in case.delete:
            assert not (support.site_packages(env) / relative).exists()
            assert (support.site_packages(self.base) / relative).exists(), "the base lost a file: a copy was modified in place"


@pytest.fixture(scope="module")  # its environments go when the module ends, not when the worker's session does
def live(tmp_path_factory, request):
    reason = support.platform_reason()
    if reason:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("live")
    support.LEDGER.started = time.monotonic()
    # this module's root until it is removed (below); then the one before, for the live modules after this one
    outer, support.LEDGER.workdir = support.LEDGER.workdir, str(root)
    # only the cases this session runs (-k): their wheels, their environments
    mine = support.selected_items(request, __name__)
    selected = {item.callspec.params["case"].id for item in mine}
    offline = [item for item in request.session.items if getattr(item, "module", None) is sys.modules[__name__] and
               getattr(item, "originalname", "") == test_a_plan_that_fails_on_the_copy_leaves_the_environment_byte_for_byte.__name__]
    if offline:
        selected.add(OFFLINE_CASE)
    fix_tests = {test_fix_repairs_and_undo_restores.__name__, test_fix_changes_nothing_when_healthy.__name__}
    fixing = frozenset(item.callspec.params["case"].id for item in mine if getattr(item, "originalname", "") in fix_tests)
    users: dict[str, set[str]] = {case: ({FIXING} if case in fixing else set()) for case in selected}
    for item in mine:
        if getattr(item, "originalname", "") not in fix_tests:  # a fix test reads what the fixer's thread did
            users[item.callspec.params["case"].id].add(item.nodeid)
    for item in offline:
        users[OFFLINE_CASE].add(item.nodeid)
    live = Live(root, tmp_path_factory, tuple(case for case in CASES if case.id in selected), fixing, users)
    yield live
    live.close()
    if not os.environ.get("TFDOCTOR_LIVE_KEEP"):
        shutil.rmtree(root, ignore_errors=True)
    support.LEDGER.workdir = outer


@pytest.fixture(autouse=True)
def _done_with_the_environment(live, request):
    """When a test of a case ends, passed or not, it no longer needs the case's environment (Live.done_with)."""
    yield
    case = getattr(getattr(request.node, "callspec", None), "params", {}).get("case")
    live.done_with(case.id if case else OFFLINE_CASE, request.node.nodeid)


@pytest.mark.parametrize("case", _params("verdict"))
def test_verdict(live, case):
    _, report = live.broken(case)
    fails = support.problems(report, "fail", "error")
    warns = support.problems(report, "warn")
    seen = support.verdict_line(report)
    if case.expect == HEALTHY:
        assert not fails and not warns, f"a healthy environment got: {seen}"
        return
    wanted = {FAIL: fails, WARN: warns, PROBLEM: fails + warns}[case.expect]
    if case.expect == WARN:
        assert not fails, f"TensorFlow works here, so a pin violation is a warn, not a fail; got: {seen}"
    for tokens in case.causes:
        cause = tuple(token.format(tf=live.tf_version, tf_minor=live.tf_minor) for token in tokens)
        assert any(support.names_cause(r, cause) for r in wanted), (
            f"expected a {case.expect} naming {cause} with a remediation; got: {seen}\n"
            + "\n".join(support.result_text(r)[:600] for r in fails + warns))


def _repaired(live: Live, case: Case, report: dict, broken: Path, env: Path, how: str, shell_env: dict[str, str]) -> dict:
    """What the case looks like after a repair (`how`: "pasted" or "fix"), in the shell the repair left
    (`shell_env`: the case's variables as the pasted steps left them), noted in the ledger; asserts nothing,
    so the ledger shows every case, repaired or not."""
    works, output = support.tensorflow_works(env, shell_env, case.imports)
    after = support.run_doctor(env, shell_env, live.root / "reports" / f"{case.id}-{how}.json")
    seen = {"works": works, "output": output, "after": after, "builds_before": support.tensorflow_builds(broken),
            "builds_after": support.tensorflow_builds(env), "moves": report["plan"]["moves_tensorflow"]}
    support.LEDGER.note(case.id, **{f"{how}_works": works, f"{how}_after": support.verdict_line(after)})
    return seen


def _assert_repaired(case: Case, seen: dict) -> None:
    assert seen["works"], f"TensorFlow, tf.keras or {case.imports or 'nothing else'} still fails:\n{seen['output']}"
    problems = support.problems(seen["after"], "fail", "error", "warn")
    assert not problems, f"after the repair the doctor still reports: {support.verdict_line(seen['after'])}"
    builds = seen["builds_after"]
    assert len(builds) == 1, f"one TensorFlow build expected after the repair, found {builds}"
    (name, version), = builds.items()
    moves = seen["moves"]
    if moves is None:
        assert seen["builds_before"].get(name) == version, (
            f"TensorFlow moved from {seen['builds_before']} to {builds} though the plan's moves_tensorflow is null")
    else:
        assert moves["why"].strip() and Requirement(moves["to"]).specifier.contains(version, prereleases=True), (
            f"TensorFlow is now {name} {version}; the plan said it moves {moves}")


BROKEN = tuple(case for case in CASES if case.expect != HEALTHY)
FIXED = tuple(case for case in BROKEN if case.fix_as is None)  # the broken cases whose `tfdoctor fix` is tested
assert {case.fix_as for case in BROKEN} - {None} <= {case.id for case in FIXED}, "fix_as names a case whose fix is tested"
SHELL_STEPS_LEFT = 3  # `tfdoctor fix`: applied and verified, and steps only the user's shell can do are left
OFFLINE_CASE = "protobuf-too-old"  # the case whose plan is run with no package index
FIXING = "the fixer's thread"  # a user of a case's environment (Live.done_with) beside its tests
FIXERS = 2  # `tfdoctor fix` runs at once, each on its own case's copy (the fixer locks per environment)


@pytest.mark.parametrize("case", _params("plan", BROKEN))
def test_pasted_plan_repairs(live, case):
    """The report's plan pasted, every step in order, into one bash session on a copy (a user's shell)."""
    broken, report = live.broken(case)
    started = time.monotonic()
    env = support.clone(broken, live.root / f"{case.id}-pasted")
    commands = support.pasted_commands(report)
    ran, shell_env = support.paste([c.replace(str(broken), str(env)) for c in commands], env, case.env)
    support.LEDGER.note(case.id, ran=[(r["command"], r["exit"]) for r in ran])
    seen = _repaired(live, case, report, broken, env, "pasted", shell_env)
    support.LEDGER.note(case.id, pasted_seconds=time.monotonic() - started, pasted_download=sum(r["fetched"] for r in ran))
    shutil.rmtree(env, ignore_errors=True)
    assert commands, f"the report of a broken environment has no plan to paste: {report['plan']}"
    failed = [r for r in ran if r["exit"] != 0]
    assert not failed, f"a step of the plan failed: {failed[0]['command']}\n{failed[0]['output']}"
    _assert_repaired(case, seen)


@pytest.mark.parametrize("case", _params("fix", FIXED))
def test_fix_repairs_and_undo_restores(live, case):
    """`tfdoctor fix --yes` on a copy repairs it; `tfdoctor fix --undo --yes` then puts back the freeze."""
    outcome = live.fixed(case)
    fixed, undone = outcome["fixed"], outcome["undone"]
    manual = support.manual_commands(outcome["report"])
    wanted = SHELL_STEPS_LEFT if manual else 0  # the plan's steps for the shell: named, left to the user
    assert fixed.returncode == wanted, f"tfdoctor fix exited {fixed.returncode}:\n{fixed.stdout[-3000:]}\n{fixed.stderr[-2000:]}"
    for command in manual:
        assert "Left to you:" in fixed.stdout and command in fixed.stdout, f"fix does not leave {command!r} to the user:\n{fixed.stdout[-2000:]}"
    assert all(r["exit"] == 0 for r in outcome.get("left", ())), outcome["left"]
    _assert_repaired(case, outcome["seen"])
    assert undone.returncode == 0, f"tfdoctor fix --undo exited {undone.returncode}:\n{undone.stdout[-2000:]}\n{undone.stderr[-2000:]}"
    changed = sorted(set(outcome["restored"]) ^ set(outcome["before"]))
    assert outcome["restored"] == outcome["before"], f"--undo left {changed} different from before the fix"


@pytest.mark.parametrize("case", _params("fix", tuple(case for case in CASES if case.expect == HEALTHY)))
def test_fix_changes_nothing_when_healthy(live, case):
    outcome = live.fixed(case)
    fixed, before, after = outcome["fixed"], outcome["before"], outcome["after"]
    assert fixed.returncode == 0, f"tfdoctor fix exited {fixed.returncode} on a healthy environment:\n{fixed.stdout[-2000:]}"
    assert after == before, f"tfdoctor fix changed a healthy environment: {sorted(set(after) ^ set(before))}"
    assert support.plan_commands(outcome["report"]) == [], f"a healthy environment got a plan: {outcome['report']['plan']}"


def test_a_plan_that_fails_on_the_copy_leaves_the_environment_byte_for_byte(live):
    """With no package index (pip told --no-index, an empty find-links), the plan cannot work on the
    fixer's throwaway copy: fix exits 1, every file every RECORD lists is as it was, and the copy is gone."""
    case = next(case for case in CASES if case.id == OFFLINE_CASE)
    broken, _ = live.broken(case)
    env = support.clone(broken, live.root / f"{case.id}-offline")
    no_index = live.root / "no-index"
    no_index.mkdir(exist_ok=True)
    before, beside, inside = support.installed_bytes(env), sorted(env.parent.iterdir()), sorted(env.iterdir())
    fixed = support.tfdoctor_fix(env, {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(no_index)}, "--yes")
    after = support.installed_bytes(env)
    support.LEDGER.note("a plan that fails on the copy", mechanism=f"{case.id}, tfdoctor fix with no package index",
                        expect="exit 1, the environment byte for byte as it was", fix_exit=fixed.returncode,
                        unchanged=after == before, files=len(before))
    assert fixed.returncode == 1, f"tfdoctor fix exited {fixed.returncode}:\n{fixed.stdout[-2000:]}\n{fixed.stderr[-1000:]}"
    assert "did not work on a copy" in fixed.stdout + fixed.stderr, f"the plan did not fail on the copy:\n{fixed.stdout[-2000:]}"
    changed = sorted(path for path in set(before) | set(after) if before.get(path) != after.get(path))
    assert not changed, f"{len(changed)} installed files changed though the plan failed on the copy: {changed[:10]}"
    assert sorted(env.parent.iterdir()) == beside, "the fixer's copy was left behind"
    assert sorted(env.iterdir()) == inside, "the environment's prefix gained or lost an entry"
