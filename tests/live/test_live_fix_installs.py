"""`tfdoctor fix --yes` on a fresh venv without TensorFlow installs it and exits 0 (issue 25: the plan
`pip install tensorflow` was proven on the copy, then refused as 'moving TensorFlow though no check
asked'). Real TensorFlow, installed offline from the live suite's one wheelhouse (support.wheelhouses): the
test setup's TensorFlow release as `tensorflow` and the exact dependency closure of the test setup's build,
laid out as a find-links directory of its own (hard links) with no index. It was fetched from the index on
both of fix's installs (the copy's, then the real one's: ~1.1 GB); the wheelhouse holds these wheels already
when test_live_environments.py has run its two-builds case, and fetches them once otherwise. What the test
proves is the fixer's, not the resolver's: the plan is the same `pip install tensorflow`, pip resolves it."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.live import support

# The wide tier's (TFDOCTOR_LIVE_WIDE=1, nightly: docs/testing.md): 140 s and the 572 MB `tensorflow` wheel; every
# commit's run walks the same path with a small TensorFlow (tests/attack/test_fix_small_falls.py,
# test_the_plan_that_installs_tensorflow_is_applied: that plan proven on the copy, then applied).
pytestmark = [pytest.mark.live, pytest.mark.integration, pytest.mark.wide]


def _requires(wheel: Path) -> set[str]:
    """The canonical names a wheel's Requires-Dist asks for here (markers evaluated, no extras)."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        fields = Parser().parsestr(archive.read(name).decode("utf-8"))
    wanted = set()
    for line in fields.get_all("Requires-Dist") or ():
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            wanted.add(canonicalize_name(requirement.name))
    return wanted


def _find_links(tmp_path_factory: pytest.TempPathFactory, target: Path) -> Path:
    """A find-links directory holding `tensorflow` at the test setup's release and that build's dependency
    closure, hard-linked from the shared wheelhouse: pip resolves `tensorflow` from these alone."""
    pins = support.base_pins()
    version = pins.pop(canonicalize_name(support.BASE_DISTRIBUTION))
    minor = f"{sys.version_info.major}.{sys.version_info.minor}"
    specs = sorted({f"tensorflow=={version}"} | {f"{name}=={pinned}" for name, pinned in pins.items()})
    held = support.fetch_wheels(support.wheelhouses(tmp_path_factory) / minor, specs, minor)
    chosen = {spec: held[spec] for spec in (f"tensorflow=={version}", *(f"{n}=={v}" for n, v in pins.items()))}
    missing = _requires(chosen[f"tensorflow=={version}"]) - set(pins)
    assert not missing, f"tensorflow {version} requires what {support.BASE_DISTRIBUTION}'s closure lacks: {missing}"
    target.mkdir()
    for wheel in chosen.values():
        os.link(wheel, target / wheel.name)
    return target


def test_fix_installs_tensorflow_on_a_fresh_venv(tmp_path, tmp_path_factory):
    reason = support.platform_reason()
    if reason:
        pytest.skip(reason)
    wheels = _find_links(tmp_path_factory, tmp_path / "wheels")
    offline = support.clean_environ(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels))
    env = tmp_path / "fresh"
    python = Path(getattr(sys, "_base_executable", sys.executable))
    made = subprocess.run([str(python), "-m", "venv", str(env)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    support.require(made, "python -m venv")
    fixed = subprocess.run([str(support.DOCTOR), "fix", "--python", str(env / "bin" / "python"), "--yes"],
                           capture_output=True, text=True, timeout=support.FIX_TIMEOUT, cwd=tmp_path,
                           env=offline, stdin=subprocess.DEVNULL)
    assert fixed.returncode == 0, f"{fixed.stdout[-3000:]}\n{fixed.stderr[-2000:]}"
    assert "Repaired" in fixed.stdout
    changed = [line.strip() for line in fixed.stdout.splitlines() if line.startswith("  ") and " -> " in line]
    assert changed and changed[0].startswith("tensorflow (not installed) -> "), fixed.stdout[-3000:]
    assert len(changed) > 5, "one package a line"
    works = subprocess.run([str(env / "bin" / "python"), "-c", support.TENSORFLOW_WORKS], capture_output=True, text=True,
                           timeout=600, cwd=tmp_path, env=support.clean_environ())
    assert works.returncode == 0 and "works" in works.stdout, works.stderr[-2000:]
