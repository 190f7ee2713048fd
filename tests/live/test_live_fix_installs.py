"""`tfdoctor fix --yes` on a fresh venv without TensorFlow installs it and exits 0 (issue 25: the plan
`pip install tensorflow` was proven on the copy, then refused as 'moving TensorFlow though no check
asked'). Real TensorFlow from the package index (pip's cache when it holds the wheels)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.live import support

pytestmark = [pytest.mark.live, pytest.mark.integration]


def test_fix_installs_tensorflow_on_a_fresh_venv(tmp_path):
    reason = support.platform_reason()
    if reason:
        pytest.skip(reason)
    env = tmp_path / "fresh"
    python = Path(getattr(sys, "_base_executable", sys.executable))
    made = subprocess.run([str(python), "-m", "venv", str(env)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    support.require(made, "python -m venv")
    fixed = subprocess.run([str(support.DOCTOR), "fix", "--python", str(env / "bin" / "python"), "--yes"],
                           capture_output=True, text=True, timeout=support.FIX_TIMEOUT, cwd=tmp_path,
                           env=support.clean_environ(), stdin=subprocess.DEVNULL)
    assert fixed.returncode == 0, f"{fixed.stdout[-3000:]}\n{fixed.stderr[-2000:]}"
    assert "Repaired" in fixed.stdout
    changed = [line.strip() for line in fixed.stdout.splitlines() if line.startswith("  ") and " -> " in line]
    assert changed and changed[0].startswith("tensorflow (not installed) -> "), fixed.stdout[-3000:]
    assert len(changed) > 5, "one package a line"
    works = subprocess.run([str(env / "bin" / "python"), "-c", support.TENSORFLOW_WORKS], capture_output=True, text=True,
                           timeout=600, cwd=tmp_path, env=support.clean_environ())
    assert works.returncode == 0 and "works" in works.stdout, works.stderr[-2000:]
