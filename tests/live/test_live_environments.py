"""Real broken TensorFlow environments, one mechanism each: the doctor's verdict, then its own fix.

Each case is the test setup's TensorFlow (tensorflow-cpu, latest) in a fresh venv, broken in one way with
real releases from the package index. `test_verdict` runs the doctor on it and asserts the mechanism's
verdict: a `fail` (a `warn` where TensorFlow still works) from a check that names the cause, and no
`fail` on a healthy control. `test_fix_repairs` runs the doctor's commands (failing and warning checks,
report order) in bash on a copy of that environment, then asserts that `import tensorflow` and
`tf.keras.layers.Dense(2)` work and that the doctor reports no `fail` any more.

Expectations are written against mechanisms ("a finding names protobuf"), not one check id. Releases
outside TensorFlow's pins are chosen for the TensorFlow the test setup installs (2.21 when written); each
case asserts its own premise (that the release really violates the installed TensorFlow's Requires-Dist),
so a newer TensorFlow that moves a pin makes the case say so rather than pass vacuously.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.live import support

pytestmark = [pytest.mark.live, pytest.mark.integration]

FAIL, WARN, PROBLEM, HEALTHY = "fail", "warn", "fail-or-warn", "healthy"


@dataclass(frozen=True)
class Case:
    id: str
    mechanism: str
    expect: str
    cause: tuple[str, ...] = ()  # every token must appear in one finding ("{tf}", "{tf_minor}": TensorFlow's)
    install: tuple[str, ...] = ()  # releases installed --no-deps on top of the base ("{tf}": its version)
    uninstall: tuple[str, ...] = ()
    delete: tuple[str, ...] = ()  # files of the install, relative to site-packages, unlinked
    violates: str | None = None  # the distribution whose installed release breaks TensorFlow's pin
    env: dict[str, str] = field(default_factory=dict)
    xfail: str | None = None  # "verdict: why" / "fix: why" the doctor does not get it right yet


CASES = (
    Case("healthy-tensorflow-cpu", "control: tensorflow-cpu with its dependencies at their pins", HEALTHY),
    Case("healthy-tensorflow", "control: tensorflow (the CUDA-capable build) instead of tensorflow-cpu", HEALTHY,
         uninstall=("tensorflow-cpu",), install=("tensorflow=={tf}",)),
    Case("protobuf-too-old", "protobuf below TensorFlow's pin: the import fails (gencode/runtime major mismatch)",
         FAIL, cause=("protobuf 5.29",), install=("protobuf==5.29.5",), violates="protobuf"),
    Case("ml-dtypes-too-old", "ml-dtypes below TensorFlow's pin: the import fails (a dtype is missing)",
         FAIL, cause=("ml-dtypes 0.4",), install=("ml-dtypes==0.4.1",), violates="ml-dtypes"),
    Case("keras-2-with-tf2", "Keras 2 where TensorFlow pins Keras 3: TensorFlow imports, tf.keras fails",
         FAIL, cause=("keras 2.15",), install=("keras==2.15.0",), violates="keras"),
    Case("h5py-too-new", "h5py above TensorFlow's pin while TensorFlow still imports and works",
         WARN, cause=("h5py 3.16",), install=("h5py==3.16.0",), violates="h5py"),
    Case("numpy-too-old", "NumPy below TensorFlow's pin while TensorFlow still imports and works",
         WARN, cause=("numpy 1.25",), install=("numpy==1.25.2",), violates="numpy"),
    Case("shared-library-deleted", "a shared library of the tensorflow package deleted: the import fails",
         FAIL, cause=("libtensorflow_framework.so.2",), delete=("tensorflow/libtensorflow_framework.so.2",)),
    Case("old-pip-and-deleted-library", "pip 20.2 (cannot install manylinux_2_27 wheels) in an environment "
         "whose repair needs TensorFlow's wheel", FAIL, cause=("pip 20.2",), install=("pip==20.2.4",),
         delete=("tensorflow/python/_pywrap_tensorflow_internal.so",)),
    Case("tf-keras-of-another-release", "tf-keras 2.15 with TF_USE_LEGACY_KERAS=1 on TensorFlow 2.21: tf.keras fails",
         FAIL, cause=("tf-keras", "{tf_minor}"), install=("tf-keras==2.15.1",), violates=None, env={"TF_USE_LEGACY_KERAS": "1"}),
    Case("two-tensorflow-builds", "tensorflow and tensorflow-cpu both installed into one site-packages/tensorflow/",
         PROBLEM, cause=("tensorflow {tf}", "tensorflow-cpu {tf}"), install=("tensorflow=={tf}",)),
)


def _params(phase: str) -> list:
    """xfail names the phase it is about ("verdict: ..." or "fix: ..."), strict: a pass means it's fixed."""
    return [pytest.param(case, id=case.id,
                         marks=[pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail and case.xfail.startswith(phase) else [])
            for case in CASES]


class Live:
    """The session's environments: the base, the wheelhouse, each case's broken environment and its report."""

    def __init__(self, root: Path):
        self.root = root
        self.tf_version = support.dependency_closure(support.BASE_DISTRIBUTION)[canonicalize_name(support.BASE_DISTRIBUTION)]
        self.tf_minor = ".".join(self.tf_version.split(".")[:2])
        specs = sorted({spec.format(tf=self.tf_version) for case in CASES for spec in case.install})
        self.wheels = support.fetch_wheels(root / "wheelhouse", specs)
        self.base = support.build_base(root / "base")
        self._broken: dict[str, tuple[Path, dict]] = {}

    def broken(self, case: Case) -> tuple[Path, dict]:
        if case.id not in self._broken:
            started, fetched = time.monotonic(), support.LEDGER.download_bytes
            env = support.clone(self.base, self.root / case.id)
            python = env / "bin" / "python"
            if case.uninstall:
                support.require(support.pip(python, "uninstall", "-y", *case.uninstall), f"{case.id}: uninstall")
            if case.install:
                wheels = [str(self._wheel(spec)) for spec in case.install]
                support.require(support.pip(python, "install", "--no-deps", *wheels), f"{case.id}: install")
            for relative in case.delete:
                os.unlink(support.site_packages(env) / relative)  # only unlinks: the base keeps its inode
            self._premise(case, env)
            report = support.run_doctor(env, case.env, self.root / "reports" / f"{case.id}.json")
            support.LEDGER.note(case.id, mechanism=case.mechanism, expect=case.expect, before=support.verdict_line(report),
                                build_seconds=time.monotonic() - started,
                                build_download=support.LEDGER.download_bytes - fetched)
            self._broken[case.id] = (env, report)
        return self._broken[case.id]

    def _wheel(self, spec: str) -> Path:
        requirement = Requirement(spec.format(tf=self.tf_version))
        version = next(iter(requirement.specifier)).version
        return self.wheels[f"{canonicalize_name(requirement.name)}=={version}"]

    def _premise(self, case: Case, env: Path) -> None:
        dists = support.installed(env)
        if case.violates:
            tensorflow = dists.get("tensorflow-cpu") or dists.get("tensorflow")
            pins = [Requirement(r) for r in tensorflow.requires or () if canonicalize_name(Requirement(r).name) == case.violates]
            version = dists[case.violates].version
            assert pins and not any(p.specifier.contains(version, prereleases=True) for p in pins), (
                f"premise of {case.id} no longer holds: {case.violates} {version} satisfies TensorFlow "
                f"{tensorflow.version}'s {[str(p) for p in pins]}; pick a release outside the pin")
        if "tf-keras" in dists and case.env.get("TF_USE_LEGACY_KERAS"):
            release = ".".join(dists["tf-keras"].version.split(".")[:2])
            assert release != self.tf_minor, f"premise of {case.id}: tf-keras {release} is TensorFlow's own release"
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
        assert not fails, f"a healthy environment got: {seen}"
        return
    wanted = {FAIL: fails, WARN: warns, PROBLEM: fails + warns}[case.expect]
    if case.expect == WARN:
        assert not fails, f"TensorFlow works here, so a pin violation is a warn, not a fail; got: {seen}"
    cause = tuple(token.format(tf=live.tf_version, tf_minor=live.tf_minor) for token in case.cause)
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
    works, output = support.tensorflow_works(env, case.env)
    after = support.run_doctor(env, case.env, live.root / "reports" / f"{case.id}-fixed.json")
    support.LEDGER.note(case.id, commands=commands, ran=[(r["command"], r["exit"]) for r in ran],
                        works=works, after=support.verdict_line(after), fix_seconds=time.monotonic() - started,
                        fix_download=support.LEDGER.download_bytes - fetched)
    shutil.rmtree(env, ignore_errors=True)
    failed = [r for r in ran if r["exit"] != 0]
    assert not failed, f"a remediation command failed: {failed[0]['command']}\n{failed[0]['output']}"
    assert works, f"after {commands}, TensorFlow or tf.keras still fails:\n{output}"
    assert not support.problems(after, "fail", "error"), f"after the fix the doctor still reports: {support.verdict_line(after)}"
