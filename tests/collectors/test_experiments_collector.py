"""The offline experiments (tfdoctor/collect/experiments.py) on fake TensorFlow packages that fail under one
condition: the trials run in real children of this interpreter, bisect to the culprit, stop at the first
proof, keep to their budget, never reach the network, and leave no process behind on Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tfdoctor.collect import experiments
from tfdoctor.collect.experiments import run_experiments

INNOCENT = {"TF_ENABLE_WHILE_V2": "1", "KERAS_BACKEND": "tensorflow", "XLA_FLAGS": "--xla_cpu_enable_fast_math=false",
            "CUDA_VISIBLE_DEVICES": "0", "TF_FORCE_GPU_ALLOW_GROWTH": "true", "LD_PRELOAD": ""}


def fake_tensorflow(root: Path, body: str) -> Path:
    package = root / "site" / "tensorflow"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent(body), encoding="utf-8")
    return root / "site"


def environ(site: Path, home: Path, **variables: str) -> dict[str, str]:
    """A bare environment: the fake package on PYTHONPATH, HOME without a ~/.keras, these variables."""
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "PYTHONPATH": str(site), **variables}


@pytest.fixture(scope="module")
def python(tmp_path_factory) -> str:
    """An interpreter with no TensorFlow of its own (a bare venv): only the fake one is found."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return str(venv / "bin" / "python")


@pytest.fixture
def home(tmp_path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def test_a_variable_is_bisected_out_of_the_innocent_ones(python, tmp_path, home):
    site = fake_tensorflow(tmp_path, """
        import os
        if os.environ.get("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION") == "cpp":
            raise ImportError("cannot import name '_message' from 'google.protobuf.pyext'")
    """)
    env = environ(site, home, PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION="cpp", **INNOCENT)
    section = run_experiments(python, [{"kind": "import"}], {}, frozenset(), 60.0, environ=env, cwd=str(tmp_path))
    assert section["stopped"] == "proven"
    (proof,) = section["proofs"]
    assert proof["unset"] == ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] and proof["kind"] == "variable"
    described = [t["description"] for t in section["trials"]]
    # PYTHONPATH first (without it there is no tensorflow at all: not a proof), then every variable at once
    assert described[0] == "PYTHONPATH unset" and not section["trials"][0]["works"]
    assert section["trials"][1]["works"] and len(section["trials"][1]["changes"]) == 1 + len(INNOCENT)
    assert len(section["trials"]) <= 2 + 2 * 3, described  # bisection: about log2(7) steps, two trials each at most
    assert section["variables_set"]["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] == "cpp"
    assert all(t["network"] == [] for t in section["trials"])


def test_no_trial_runs_the_project_folder_and_the_one_that_shows_the_users_view_says_so(python, tmp_path, home,
                                                                                          monkeypatch):
    """Issue 35: the doctor runs from the project folder; a json.py there writes a marker when imported. Every
    trial runs from an empty directory: the variable is still proven, and nothing of the folder is run. The
    one trial that runs there (a companion's layer used as it is) says so in its record."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "json.py").write_text(f"open({str(project / 'IMPORTED')!r}, 'a').write('json')\n")
    monkeypatch.chdir(project)
    site = fake_tensorflow(tmp_path, """
        import json, os
        if os.environ.get("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION") == "cpp":
            raise ImportError("cannot import name '_message' from 'google.protobuf.pyext'")
    """)
    env = environ(site, home, PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION="cpp")
    section = run_experiments(python, [{"kind": "import"}], {}, frozenset(), 60.0, environ=env, cwd=str(project))
    assert section["stopped"] == "proven" and section["proofs"][0]["unset"] == ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"]
    assert not (project / "IMPORTED").exists(), "a trial imported the project folder's json.py"
    (site / "layers.py").write_text("class Layer(object):\n    def __init__(self, *a, **k):\n        pass\n")
    section = run_experiments(python, [{"kind": "use", "module": "layers", "layer": "Layer"}], {}, frozenset(), 60.0,
                              environ=environ(site, home), cwd=str(project))
    (as_it_is,) = section["trials"]
    assert as_it_is["description"].startswith(f"as it is, from your working directory {project}")
    assert "runs the files of that folder" in as_it_is["description"]
    assert (project / "IMPORTED").read_text() == "json"  # that trial alone: it runs what the user's `python` runs


def test_keras_configuration_ignored_is_the_proof(python, tmp_path, home):
    (home / ".keras").mkdir()
    (home / ".keras" / "keras.json").write_text(json.dumps({"backend": "jax", "floatx": "float32"}), encoding="utf-8")
    site = fake_tensorflow(tmp_path, """
        import json, os
        path = os.path.join(os.environ.get("KERAS_HOME") or os.path.expanduser("~/.keras"), "keras.json")
        if os.path.exists(path) and json.load(open(path)).get("backend") == "jax":
            raise ImportError("Keras cannot be imported. Check that it is installed.")
    """)
    env = environ(site, home, KERAS_BACKEND="tensorflow")
    section = run_experiments(python, [{"kind": "import"}], {}, frozenset(), 60.0, environ=env, cwd=str(tmp_path))
    (proof,) = section["proofs"]
    assert proof["changes"] == ["keras-config"]
    assert section["keras_config"] == {"path": str(home / ".keras" / "keras.json"), "readable": True,
                                       "backend": "jax", "floatx": "float32"}
    assert json.loads((home / ".keras" / "keras.json").read_text())["backend"] == "jax", "the user's file was changed"


def test_a_default_keras_configuration_is_no_suspect(python, tmp_path, home):
    (home / ".keras").mkdir()
    (home / ".keras" / "keras.json").write_text(json.dumps({"backend": "tensorflow", "floatx": "float32",
                                                             "epsilon": 1e-07, "image_data_format": "channels_last"}))
    assert experiments.configuration_factors({"HOME": str(home)}, experiments.variable_names()) == []


def test_nothing_proven_when_no_change_helps(python, tmp_path, home):
    site = fake_tensorflow(tmp_path, "raise ImportError('broken for good')\n")
    env = environ(site, home, TF_ENABLE_WHILE_V2="1")
    section = run_experiments(python, [{"kind": "import"}], {}, frozenset(), 60.0, environ=env, cwd=str(tmp_path))
    assert section["stopped"] == "exhausted" and section["proofs"] == []
    assert [t["works"] for t in section["trials"]] == [False, False]
    assert section["trials"][1]["error"]["message"] == "broken for good"


def test_the_budget_bounds_them(python, tmp_path, home):
    site = fake_tensorflow(tmp_path, "import time\ntime.sleep(30)\n")
    env = environ(site, home, **INNOCENT)
    started = time.monotonic()
    section = run_experiments(python, [{"kind": "import"}], {}, frozenset(), 3.0, environ=env, cwd=str(tmp_path))
    assert time.monotonic() - started < 3.0 + 2.0
    assert section["stopped"] == "budget" and section["proofs"] == []
    assert section["trials"][-1]["timed_out"]


def test_the_network_is_refused_and_recorded(python, tmp_path, home):
    site = fake_tensorflow(tmp_path, """
        import os, socket
        if os.environ.get("TF_ENABLE_WHILE_V2"):
            raise ImportError("while v2")
        socket.create_connection(("192.0.2.1", 9), timeout=5)
    """)
    env = environ(site, home, TF_ENABLE_WHILE_V2="1")
    section = run_experiments(python, [{"kind": "import"}], {}, frozenset(), 30.0, environ=env, cwd=str(tmp_path))
    last = section["trials"][-1]
    assert not last["works"] and "never use the network" in last["error"]["message"]
    assert last["network"], "the audit hook did not record the connection"


def test_isolation_factors_only_when_they_change_something(python, tmp_path, home):
    site_packages = tmp_path / "site-packages"
    (site_packages / "numpy").mkdir(parents=True)
    facts = {"site_packages": [str(site_packages)], "user_site": str(home / "nothing"), "user_site_enabled": True}
    assert experiments.isolation_factors({"PYTHONUNBUFFERED": "1"}, facts) == []
    assert [f.id for f in experiments.isolation_factors({"PYTHONWARNINGS": "error", "PYTHONPATH": "/x"}, facts)] == [
        experiments.NO_PYTHONPATH, experiments.ISOLATED]


def test_ctrl_c_stops_them_at_once_and_leaves_no_process(python, tmp_path, home):
    site = fake_tensorflow(tmp_path, "import time\ntime.sleep(120)\n")
    marker = f"PYTHONPATH={site}"  # in every trial's environment, in no other process's
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        from tfdoctor.collect.experiments import run_experiments
        print("started", flush=True)
        run_experiments({python!r}, [{{"kind": "import"}}], {{}}, frozenset(), 100.0,
                        environ={json.dumps(environ(site, home, TF_ENABLE_WHILE_V2="1"))}, cwd={str(tmp_path)!r})
    """), encoding="utf-8")
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        assert process.stdout.readline().strip() == "started"
        deadline = time.monotonic() + 20
        while not _processes_with(marker) and time.monotonic() < deadline:  # the trial that sleeps in its import
            time.sleep(0.1)
        assert _processes_with(marker), f"no trial is running: {process.poll()} {process.stderr.read() if process.poll() is not None else ''}"
        interrupted = time.monotonic()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=10)
        assert time.monotonic() - interrupted < 3.0
        assert "KeyboardInterrupt" in process.stderr.read()
        time.sleep(0.2)
        assert not _processes_with(marker), "a trial outlived the interrupt"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _processes_with(marker: str) -> list[int]:
    """The processes whose environment holds the marker."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() + b"\0" in (entry / "environ").read_bytes() + b"\0":
                    found.append(int(entry.name))
            except OSError:
                pass
    return found
