"""The TensorFlow child's guarded imports of TensorFlow's companions (tfdoctor/child/tf_child.py's
companion_imports), on stand-in packages, run for real in a subprocess: the order, each one's fate, the time
left. The companions check on these facts is tests/checks/test_companions.py."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tfdoctor.child import source


DRIVER = """
import json, sys, time
namespace = {"__name__": "tf_child"}
exec(compile(sys.stdin.read(), "tf_child", "exec"), namespace)
config = json.loads(sys.argv[1])
config["deadline"] = time.perf_counter() + config.pop("left_s")
recorder = namespace["Recorder"](config["out"])
namespace["companion_imports"](recorder, config)
print(json.dumps(recorder.data))
"""


def run_companions(tmp_path: Path, modules: list[str], left_s: float = 60.0) -> dict:
    config = {"out": str(tmp_path / "result.json"), "companions": modules, "left_s": left_s}
    completed = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(config)], input=source("tf_child"),
                               capture_output=True, text=True, cwd=str(tmp_path), timeout=60)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def stand_in(tmp_path: Path, name: str, body: str) -> None:
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(body))


def test_installed_companions_are_imported_in_order_and_their_fate_recorded(tmp_path):
    stand_in(tmp_path, "fake_ok", "__version__ = '2.21.0'\n")
    stand_in(tmp_path, "fake_broken", """
        raise ImportError("/site-packages/fake_broken/_ops.so: undefined symbol: _ZN10tensorflow8OpKernelD2Ev")
    """)
    stand_in(tmp_path, "fake_warns", """
        import logging, warnings
        warnings.warn("Tensorflow Addons supports using Python ops for all Tensorflow versions above or equal "
                      "to 2.13.0 and strictly below 2.16.0 (nightly versions are not supported). ", UserWarning)
        warnings.warn("Tensorflow Addons supports using Python ops for all Tensorflow versions above or equal "
                      "to 2.13.0 and strictly below 2.16.0 (nightly versions are not supported). ", UserWarning)
        warnings.warn("old API", DeprecationWarning)
        logging.getLogger().warning("Failure to load the inference.so custom c++ tensorflow ops.")
    """)
    stand_in(tmp_path, "fake_exits", "raise SystemExit(3)\n")
    data = run_companions(tmp_path, ["fake_ok", "not_installed_here", "fake_broken", "fake_warns", "fake_exits"])
    found = {entry["module"]: entry for entry in data["companions"]}
    assert list(found) == ["fake_ok", "fake_broken", "fake_warns", "fake_exits"]  # absent ones are not listed
    assert found["fake_ok"]["status"] == "ok" and found["fake_ok"]["version"] == "2.21.0"
    assert found["fake_ok"]["origin"].endswith("fake_ok/__init__.py") and found["fake_ok"]["seconds"] >= 0
    broken = found["fake_broken"]
    assert broken["status"] == "failed" and broken["exception"]["type"] == "ImportError"
    assert "undefined symbol" in broken["exception"]["message"] and broken["exception"]["traceback"]
    warns = found["fake_warns"]
    assert warns["status"] == "ok"
    assert [w["category"] for w in warns["warnings"]] == ["UserWarning"]  # once, and no DeprecationWarning
    assert warns["log"] == ["WARNING:root:Failure to load the inference.so custom c++ tensorflow ops."]
    assert found["fake_exits"]["status"] == "failed" and found["fake_exits"]["exception"]["type"] == "SystemExit"
    assert [name for name, _ in data["stages"]] == ["companion:fake_ok", "companion:fake_broken",
                                                    "companion:fake_warns", "companion:fake_exits"]


def test_with_too_little_time_left_a_companion_is_listed_but_not_imported(tmp_path):
    stand_in(tmp_path, "fake_slow", "raise RuntimeError('must not be imported')\n")
    (entry,) = run_companions(tmp_path, ["fake_slow"], left_s=0.5)["companions"]
    assert entry["status"] == "skipped" and entry["reason"].startswith("only 0.")
    assert entry["exception"] is None


def test_without_companions_nothing_is_recorded_but_the_empty_list(tmp_path):
    assert run_companions(tmp_path, ["tensorflow_text", "tf_keras_absent"])["companions"] == []
