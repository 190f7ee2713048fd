"""Real TensorFlow environments, healthy or broken one mechanism each: the doctor's verdict, then its own fix.

Most cases are the test setup's TensorFlow (tensorflow-cpu, latest) in a fresh venv, broken in one way with
real releases from the package index. Others are made as a user makes them: `pip install
tensorflow-cpu==2.X` into a fresh Python 3.11 venv with pip's own resolver (healthy controls of older
minors), `pip install tensorflow-cpu==2.10.1` on Python 3.10 (the resolver's NumPy 2 then breaks it), or
`uv venv` with the test setup's TensorFlow installed by uv (no pip inside). `test_verdict` runs the doctor
on each and asserts the mechanism's verdict: a `fail` (a `warn` where TensorFlow still works) from a check
that names the cause, and neither a `fail` nor a `warn` on a healthy control. `test_fix_repairs` runs the
doctor's commands (failing and warning checks, report order) in bash on a copy of that environment, then
asserts that `import tensorflow` and `tf.keras.layers.Dense(2)` work (and the case's companion imports)
and that the doctor reports no `fail` any more.

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
import time
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
# tensorflow-io-gcs-filesystem 0.37.1, whose `tensorflow-cpu<2.17,>=2.16; extra == 'tensorflow-cpu'` the
# doctor takes as requested.
EXTRAS_TAKEN_AS_REQUESTED = "verdict: extras taken as requested (issue 17)"
HEALTHY_RELEASES = ("2.13.1", "2.15.1", "2.17.1", "2.18.1")


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
    uninstall: tuple[str, ...] = ()
    delete: tuple[str, ...] = ()  # files of the install, relative to site-packages, unlinked
    violates: str | None = None  # the distribution whose installed release breaks TensorFlow's pin
    built_for_another: str | None = None  # the companion whose installed release requires another TensorFlow
    imports: tuple[str, ...] = ()  # modules that must import after the fix, beside TensorFlow
    env: dict[str, str] = field(default_factory=dict)
    xfail: str | None = None  # "verdict: why" / "fix: why" the doctor does not get it right yet


CASES = (
    Case("healthy-tensorflow-cpu", "control: tensorflow-cpu with its dependencies at their pins", HEALTHY),
    Case("healthy-tensorflow", "control: tensorflow (the CUDA-capable build) instead of tensorflow-cpu", HEALTHY,
         uninstall=("tensorflow-cpu",), install=("tensorflow=={tf}",)),
    *(Case(f"healthy-tensorflow-cpu-{release}", f"control: pip install tensorflow-cpu=={release} into a fresh Python 3.11 venv",
           HEALTHY, origin=RESOLVED, python="3.11", requirements=(f"tensorflow-cpu=={release}",), xfail=EXTRAS_TAKEN_AS_REQUESTED)
      for release in HEALTHY_RELEASES),
    Case("protobuf-too-old", "protobuf below TensorFlow's pin: the import fails (gencode/runtime major mismatch)",
         FAIL, causes=(("protobuf 5.29",),), install=("protobuf==5.29.5",), violates="protobuf"),
    Case("ml-dtypes-too-old", "ml-dtypes below TensorFlow's pin: the import fails (a dtype is missing)",
         FAIL, causes=(("ml-dtypes 0.4",),), install=("ml-dtypes==0.4.1",), violates="ml-dtypes"),
    Case("keras-2-with-tf2", "Keras 2 where TensorFlow pins Keras 3: TensorFlow imports, tf.keras fails",
         FAIL, causes=(("keras 2.15",),), install=("keras==2.15.0",), violates="keras"),
    Case("h5py-too-new", "h5py above TensorFlow's pin while TensorFlow still imports and works",
         WARN, causes=(("h5py 3.16",),), install=("h5py==3.16.0",), violates="h5py"),
    Case("numpy-too-old", "NumPy below TensorFlow's pin while TensorFlow still imports and works",
         WARN, causes=(("numpy 1.25",),), install=("numpy==1.25.2",), violates="numpy"),
    Case("shared-library-deleted", "a shared library of the tensorflow package deleted: the import fails",
         FAIL, causes=(("libtensorflow_framework.so.2",),), delete=("tensorflow/libtensorflow_framework.so.2",)),
    Case("old-pip-and-deleted-library", "pip 20.2 (cannot install manylinux_2_27 wheels) in an environment "
         "whose repair needs TensorFlow's wheel", FAIL, causes=(("pip 20.2",),), install=("pip==20.2.4",),
         delete=("tensorflow/python/_pywrap_tensorflow_internal.so",)),
    Case("tf-keras-of-another-release", "tf-keras 2.15 with TF_USE_LEGACY_KERAS=1 on TensorFlow {tf}: tf.keras fails",
         FAIL, causes=(("tf-keras", "{tf_minor}"),), install=("tf-keras==2.15.1",), env={"TF_USE_LEGACY_KERAS": "1"}),
    Case("legacy-keras-without-tf-keras", "TF_USE_LEGACY_KERAS=1 and no tf-keras beside tensorflow-cpu {tf}: tf.keras fails",
         FAIL, causes=(("tf-keras", "{tf_minor}"),), env={"TF_USE_LEGACY_KERAS": "1"},
         xfail="fix: tensorflow-install's `pip install tf-keras~=2.N.0` pulls in a second TensorFlow build (issue 17)"),
    Case("two-tensorflow-builds", "tensorflow and tensorflow-cpu both installed into one site-packages/tensorflow/",
         PROBLEM, causes=(("tensorflow {tf}", "tensorflow-cpu {tf}"),), install=("tensorflow=={tf}",)),
    Case("tensorflow-text-of-another-release", "tensorflow-text 2.15.0 (made for TensorFlow 2.15; requires `tensorflow`) "
         "beside tensorflow-cpu {tf}: import tensorflow_text fails while TensorFlow works", PROBLEM, causes=(("tensorflow-text 2.15",),),
         install=("tensorflow-text==2.15.0",), built_for_another="tensorflow-text", imports=("tensorflow_text",),
         xfail="fix: the command asks for tensorflow<2.16 and tensorflow-cpu<2.14 at once (issue 17)"),
    Case("uv-venv-protobuf-too-old", "a uv venv (no pip inside) with protobuf below TensorFlow's pin: the import fails",
         FAIL, causes=(("protobuf 5.29",),), origin=UV, install=("protobuf==5.29.5",), violates="protobuf"),
    Case("tensorflow-2.10-numpy-2-and-protobuf-4", "pip install tensorflow-cpu==2.10.1 on Python 3.10 (the resolver "
         "picks NumPy 2.2, which 2.10's extensions cannot import), then protobuf 4.25 above its <3.20 pin",
         FAIL, causes=(("numpy 2.2",), ("protobuf 4.25",)), origin=RESOLVED, python="3.10",
         requirements=("tensorflow-cpu==2.10.1",), install=("numpy==2.2.6", "protobuf==4.25.9"), violates="protobuf",
         xfail="fix: an extra taken as requested yields a command pip cannot resolve (issue 17)"),
)


def _params(phase: str) -> list:
    """xfail names the phase it is about ("verdict: ..." or "fix: ..."), strict: a pass means it's fixed."""
    return [pytest.param(case, id=case.id,
                         marks=[pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail and case.xfail.startswith(phase) else [])
            for case in CASES]


class Live:
    """The session's environments: the wheelhouses, the base, each case's environment and its report."""

    def __init__(self, root: Path):
        self.root = root
        pins = support.base_pins()
        self.tf_version = pins[canonicalize_name(support.BASE_DISTRIBUTION)]
        self.tf_minor = ".".join(self.tf_version.split(".")[:2])
        self.own_python = f"{sys.version_info.major}.{sys.version_info.minor}"
        self.wheels: dict[str, dict[str, Path]] = {}
        for minor in sorted({self._python(case) for case in CASES}):
            specs = {spec.format(tf=self.tf_version) for case in CASES if self._python(case) == minor for spec in case.install}
            if minor == self.own_python:
                specs |= {f"{name}=={version}" for name, version in pins.items()}
            self.wheels[minor] = support.fetch_wheels(root / "wheelhouse" / minor, sorted(specs), minor)
        support.LEDGER.wheelhouse_bytes = sum(w.stat().st_size for w in (root / "wheelhouse").rglob("*.whl"))
        self.base_wheels = [self.wheels[self.own_python][f"{name}=={version}"] for name, version in sorted(pins.items())]
        self.base = support.build_base(root / "base", self.base_wheels)
        self._broken: dict[str, tuple[Path, dict]] = {}

    def _python(self, case: Case) -> str:
        return case.python or self.own_python

    def broken(self, case: Case) -> tuple[Path, dict]:
        if case.id not in self._broken:
            started, fetched = time.monotonic(), support.LEDGER.download_bytes
            env = self._make(case)
            python = env / "bin" / "python"
            if case.uninstall:
                support.require(support.pip(python, "uninstall", "-y", *case.uninstall), f"{case.id}: uninstall")
            if case.install:
                wheels = [str(self._wheel(case, spec)) for spec in case.install]
                if case.origin == UV:
                    support.require(support.uv("pip", "install", "--python", str(python), "--no-deps", *wheels), f"{case.id}: install")
                else:
                    support.require(support.pip(python, "install", "--no-deps", *wheels), f"{case.id}: install")
            for relative in case.delete:
                os.unlink(support.site_packages(env) / relative)  # only unlinks: the base keeps its inode
            self._premise(case, env)
            report = support.run_doctor(env, case.env, self.root / "reports" / f"{case.id}.json")
            support.LEDGER.note(case.id, mechanism=case.mechanism.format(tf=self.tf_version), expect=case.expect,
                                before=support.verdict_line(report), build_seconds=time.monotonic() - started,
                                build_download=support.LEDGER.download_bytes - fetched)
            self._broken[case.id] = (env, report)
        return self._broken[case.id]

    def _make(self, case: Case) -> Path:
        target = self.root / case.id
        if case.origin == RESOLVED:
            return support.build_resolved(target, support.python_of(self._python(case)), case.requirements)
        if case.origin == UV:
            return support.build_with_uv(target, support.python_of(self.own_python), self.base_wheels)
        return support.clone(self.base, target)

    def _wheel(self, case: Case, spec: str) -> Path:
        requirement = Requirement(spec.format(tf=self.tf_version))
        version = next(iter(requirement.specifier)).version
        return self.wheels[self._python(case)][f"{canonicalize_name(requirement.name)}=={version}"]

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
        for relative in case.delete:
            assert not (support.site_packages(env) / relative).exists()
            assert (support.site_packages(self.base) / relative).exists(), "the base lost a file: a copy was modified in place"


@pytest.fixture(scope="session")
def live(tmp_path_factory):
    reason = support.platform_reason()
    if reason:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("live")
    support.LEDGER.started = time.monotonic()
    support.LEDGER.workdir = str(root)
    yield Live(root)
    if not os.environ.get("TFDOCTOR_LIVE_KEEP"):
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(autouse=True)
def _clock():
    """The suite's time ends with its last test, not with the session (other tests may run after it)."""
    yield
    support.LEDGER.finished = time.monotonic()


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


@pytest.mark.parametrize("case", _params("fix"))
def test_fix_repairs(live, case):
    broken, report = live.broken(case)
    started, fetched = time.monotonic(), support.LEDGER.download_bytes
    env = support.clone(broken, live.root / f"{case.id}-fixed")
    commands = support.fix_commands(report)
    ran = support.paste([c.replace(str(broken), str(env)) for c in commands], env, case.env)
    works, output = support.tensorflow_works(env, case.env, case.imports)
    after = support.run_doctor(env, case.env, live.root / "reports" / f"{case.id}-fixed.json")
    support.LEDGER.note(case.id, commands=commands, ran=[(r["command"], r["exit"]) for r in ran],
                        works=works, after=support.verdict_line(after), fix_seconds=time.monotonic() - started,
                        fix_download=support.LEDGER.download_bytes - fetched)
    shutil.rmtree(env, ignore_errors=True)
    failed = [r for r in ran if r["exit"] != 0]
    assert not failed, f"a remediation command failed: {failed[0]['command']}\n{failed[0]['output']}"
    assert works, f"after {commands}, TensorFlow or tf.keras still fails:\n{output}"
    assert not support.problems(after, "fail", "error"), f"after the fix the doctor still reports: {support.verdict_line(after)}"
