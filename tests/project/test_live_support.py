"""The live harness's own rules, without building anything (these run on every platform)."""

from __future__ import annotations

import pytest

from tests.live import support


def test_an_unreachable_index_fails_in_ci_and_skips_elsewhere(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="cannot run in CI: index down"):
        support.unavailable("index down")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="index down"):
        support.unavailable("index down")


def test_network_bytes_come_from_pips_downloading_lines_only():
    output = (
        "Processing /opt/pypi/files/tensorflow_cpu-2.21.0-cp311-cp311-manylinux_2_27_x86_64.whl\n"
        "  Downloading tensorflow-2.21.0-cp311-cp311-manylinux_2_27_x86_64.whl (572.4 MB)\n"
        "  Downloading tf_keras-2.21.0-py3-none-any.whl (1.7 MB)\n"
        "  Using cached protobuf-5.29.5-cp38-abi3-manylinux2014_x86_64.whl (319 kB)\n"
        "  Downloading protobuf-5.29.5-cp38-abi3-manylinux2014_x86_64.whl (319 kB)\n"
    )
    assert support.downloaded_bytes(output) == 572_400_000 + 1_700_000 + 319_000


def test_a_user_pastes_every_step_in_order_and_fix_runs_those_that_are_not_manual():
    report = {"plan": {"steps": [
        {"number": 1, "command": "python -m pip install --upgrade pip", "manual": False},
        {"number": 2, "command": "export TF_USE_LEGACY_KERAS=1", "manual": True},
        {"number": 3, "command": "python -m pip install 'protobuf>=6'", "manual": False},
    ], "conflicts": [], "moves_tensorflow": None}}
    assert support.plan_commands(report) == ["python -m pip install --upgrade pip", "python -m pip install 'protobuf>=6'"]
    assert support.pasted_commands(report) == ["python -m pip install --upgrade pip", "export TF_USE_LEGACY_KERAS=1",
                                               "python -m pip install 'protobuf>=6'"]
    assert support.manual_commands(report) == ["export TF_USE_LEGACY_KERAS=1"]
    assert support.plan_commands({"plan": {"steps": [], "conflicts": [], "moves_tensorflow": None}}) == []


def test_the_plan_is_pasted_into_one_shell_whose_variables_hold_for_what_runs_after(tmp_path):
    """An `export` step holds for the steps after it and for what runs once the paste is done; an `unset` step
    drops a variable of the case's; the first failing step ends the paste, as a user would stop."""
    ran, after = support.paste(["export TF_USE_LEGACY_KERAS=1", "unset BROKEN",
                                f"echo \"$TF_USE_LEGACY_KERAS${{BROKEN:-gone}}\" > {tmp_path / 'seen'}"],
                               tmp_path, {"BROKEN": "cpp", "KEPT": "x"})
    assert [r["exit"] for r in ran] == [0, 0, 0] and (tmp_path / "seen").read_text() == "1gone\n"
    assert after == {"TF_USE_LEGACY_KERAS": "1", "KEPT": "x"}
    ran, after = support.paste(["echo one", "false", "export NEVER=1"], tmp_path, {})
    assert [(r["command"], r["exit"]) for r in ran] == [("echo one", 0), ("false", 1)] and ran[0]["output"] == "one"
    assert after == {}


def test_a_finding_names_the_cause_only_with_a_remediation_and_every_token():
    finding = {"summary": "ml_dtypes 0.4.1 is outside tensorflow-cpu 2.21.0's ml_dtypes<1.0.0,>=0.5.1", "details": [],
               "remediation": {"advice": "Install what the metadata declares", "commands": []}}
    assert support.names_cause(finding, ("ml-dtypes 0.4",))
    assert not support.names_cause(finding, ("ml-dtypes 0.4", "protobuf"))
    assert not support.names_cause({**finding, "remediation": None}, ("ml-dtypes 0.4",))


def test_wheels_are_fetched_in_batches_with_one_release_of_each_name():
    batches = support._distinct_names(["h5py==3.14.0", "numpy==2.0", "H5py==3.16.0", "protobuf==5.29.5", "h5py==3.15.1"])
    assert batches == [["h5py==3.14.0", "numpy==2.0", "protobuf==5.29.5"], ["H5py==3.16.0"], ["h5py==3.15.1"]]


def test_installed_bytes_cover_every_recorded_file_and_see_one_changed_byte(tmp_path):
    site = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    (site / "demo").mkdir(parents=True)
    (site / "demo" / "__init__.py").write_bytes(b"x = 1\n")
    (site / "demo-1.0.dist-info").mkdir()
    (site / "demo-1.0.dist-info" / "RECORD").write_text(
        "demo/__init__.py,sha256=abc,6\ndemo-1.0.dist-info/RECORD,,\n../../../bin/demo,sha256=def,3\n", encoding="utf-8")
    (tmp_path / "env" / "bin").mkdir()
    (tmp_path / "env" / "bin" / "demo").write_bytes(b"#!\n")
    before = support.installed_bytes(tmp_path / "env")
    assert set(before) == {"demo-1.0.dist-info/RECORD", "demo/__init__.py", "../../../bin/demo"}
    assert before["demo/__init__.py"][0] == 6
    (site / "demo" / "__init__.py").write_bytes(b"x = 2\n")  # same size, one byte differs
    assert support.installed_bytes(tmp_path / "env") != before
    (site / "demo" / "__init__.py").unlink()
    assert support.installed_bytes(tmp_path / "env")["demo/__init__.py"] is None


def test_the_live_modules_share_one_base_built_once_each_taking_a_hard_link_copy(tmp_path, monkeypatch):
    built = []

    def build(env, wheels):  # build_base's place: a venv's worth of one file, and who asked
        built.append(env)
        (env / "lib").mkdir(parents=True)
        (env / "lib" / "module.py").write_text("x = 1\n", encoding="utf-8")
        return env

    class WorkerFactory:  # an xdist worker's tmp_path_factory: its root inside the run's
        def getbasetemp(self):
            return tmp_path / "popen-gw1"

    monkeypatch.setattr(support, "build_base", build)
    monkeypatch.setattr(support.LEDGER, "base_seconds", 0.0)
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    wheels = [tmp_path / "b-2-py3-none-any.whl", tmp_path / "a-1-py3-none-any.whl"]
    shared = tmp_path / support.SHARED_BASE
    copies = [tmp_path / module / "base" for module in ("live0", "closure0")]
    for copy in copies:
        copy.parent.mkdir()
        assert support.shared_base(WorkerFactory(), wheels, copy) == copy
    assert built == [shared], "built once, beside the run's wheelhouse"
    for copy in copies:
        assert (copy / "lib" / "module.py").stat().st_ino == (shared / "lib" / "module.py").stat().st_ino
    with pytest.raises(AssertionError, match="same wheels"):
        support.shared_base(WorkerFactory(), wheels[:1], copies[0])
    (tmp_path / f"{support.SHARED_BASE}.built").unlink()  # a build cut short (no mark) is made again, from nothing
    (shared / "half-written").write_text("", encoding="utf-8")
    support.shared_base(WorkerFactory(), wheels, copies[1])
    assert built == [shared, shared] and not (shared / "half-written").exists()


def test_every_live_report_is_judged_again_without_the_childs_facts():
    """Issue 38: the hook run_doctor (and the experiments module's doctor) calls on each report: a verdict the
    tables do not reach without the child's facts fails the live test; a check named beyond the tables may then pass
    or skip; a release the tables lack is not compared (a warning says so)."""
    from tests.fixtures_support import FIXTURES, load_fixture
    from tests.stripped_support import diagnosed

    live = diagnosed(load_fixture(FIXTURES / "linux/keras-config-missing-backend-proven-by-experiment.json"))
    with pytest.raises(AssertionError, match="keras: fail with the child's facts, pass without"):
        support.check_stripped(live, "keras-config-missing-backend")
    support.check_stripped(live, "keras-config-missing-backend", ("keras",))  # the keras.json no table holds
    support.check_stripped(diagnosed(load_fixture(FIXTURES / "linux/companions-built-for-older-tensorflow-beside-"
                                                  "tensorflow-cpu-2.21.json")), "companions")
    nightly = diagnosed(load_fixture(FIXTURES / "linux/container-no-nvidia-smi-blackwell-tf-nightly-ptx-jit.json"))
    with pytest.warns(UserWarning, match="the tables lack tf-nightly 2.21.0.dev20250722"):
        support.check_stripped(nightly, "nightly")
