"""`tfdoctor fix --choice N` end to end, offline (issue 38, build 3): a companion with no release for the installed
TensorFlow (a tensorflow-decision-forests 1.12.0 wheel requiring tensorflow==2.19.0, as the real one does, beside
the fake tensorflow-cpu 2.21.0 of tests/fixer_support.build_world) gets two complete choices; each is proven on a
copy and applied, the one chosen and no other; a choice not offered changes nothing.

The wheel directory (PIP_NO_INDEX, PIP_FIND_LINKS) holds what each choice installs: fakedep 2.0 (the fake
TensorFlow's pin, violated in the base), a fake tensorflow-cpu 2.19.0 and tf-keras 2.19.0."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes import HERE as FAKES
from tests.fixer_support import build_world, fix, freeze, run, wheel

@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("fix-choice")
    wheels, base, env = build_world(root)
    wheel(wheels, "tensorflow-decision-forests", "1.12.0",
          {"tensorflow_decision_forests/__init__.py": "import tensorflow\n"}, ("tensorflow==2.19.0",))
    fake = (FAKES / "functional_tensorflow.py").read_text(encoding="utf-8")
    wheel(wheels, "tensorflow-cpu", "2.19.0", {"tensorflow/__init__.py": fake.replace('"2.99.0"', repr("2.19.0"))},
          ("fakedep>=2", "numpy"))
    wheel(wheels, "tf-keras", "2.19.0", {"tf_keras/__init__.py": "import tensorflow\n"})
    installed = run([base / "bin" / "python", "-m", "pip", "install", "--no-deps", "tensorflow-decision-forests==1.12.0"],
                    env=env)
    assert installed.returncode == 0, installed.stderr
    return root, base, env


def _copy(world, name: str) -> Path:
    root, base, _ = world
    target = root / name
    assert run(["cp", "-a", base, target]).returncode == 0
    return target


def _fix(world, target: Path, *args: str):
    return fix(target, world[2], *args)


def test_choice_1_keeps_tensorflow_uninstalls_the_companion_and_repairs_the_rest(world):
    target = _copy(world, "keep")
    fixed = _fix(world, target, "--choice", "1", "--yes")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "Choice 1: keep tensorflow-cpu 2.21.0 and uninstall tensorflow-decision-forests" in fixed.stdout
    assert "Verified on a copy" in fixed.stdout and "tensorflow-decision-forests 1.12.0 -> removed" in fixed.stdout
    after = freeze(target)
    assert {"fakedep==2.0", "tensorflow-cpu==2.21.0"} <= set(after), after
    assert not [line for line in after if line.startswith(("tensorflow-decision-forests==", "tf-keras=="))], after


def test_choice_2_moves_tensorflow_to_what_the_companion_supports(world):
    target = _copy(world, "move")
    fixed = _fix(world, target, "--choice", "2", "--yes")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "Choice 2: move TensorFlow to tensorflow-cpu 2.19.0 for tensorflow-decision-forests" in fixed.stdout
    assert "tensorflow-cpu 2.21.0 -> 2.19.0" in fixed.stdout
    after = freeze(target)
    assert {"tensorflow-cpu==2.19.0", "tensorflow-decision-forests==1.12.0", "tf-keras==2.19.0", "fakedep==2.0"} <= set(after)


def test_a_choice_not_offered_changes_nothing(world):
    target = _copy(world, "none")
    before = freeze(target)
    refused = _fix(world, target, "--choice", "9", "--yes")
    assert refused.returncode not in (0, 1), refused.stdout + refused.stderr
    assert "There is no choice 9 for this environment (choices offered: 1, 2)" in refused.stdout
    assert freeze(target) == before
