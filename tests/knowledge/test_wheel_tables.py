"""The tables tools/refresh_knowledge.py reads out of the wheels themselves (issue 29): each Linux `tensorflow`
wheel's build_info (build_info.toml) and which libraries import tf_keras (tf_keras_users.toml). Their rows
cite the wheel's PyPI file URL; the build_info rows agree with the verbatim dicts of linux-outputs (the same
wheels) and with the curated tf_cuda rows; the checks use them where the child recorded no build_info."""

from __future__ import annotations

import copy

import pytest

from tests.builders import check_result, fixture_facts
from tfdoctor.facts.tensorflow_build import tensorflow_build, wheel_build_info
from tfdoctor.knowledge import rows
from tfdoctor.results.model import Status


def _cc(token: str) -> str:
    digits = token.split("_", 1)[1]
    return f"{digits[:-1]}.{digits[-1]}"


def test_every_build_info_row_cites_its_wheel_on_pypi():
    found = rows("build_info", "build")
    assert len(found) >= 40
    for row in found:
        assert row["source"].startswith("https://files.pythonhosted.org/") and row["source"].endswith(row["wheel"])
        assert row["wheel"].startswith(f"tensorflow-{row['tensorflow']}-") and "manylinux" in row["wheel"]


@pytest.mark.parametrize("version, capabilities, cuda", [
    ("2.4.0", ["sm_35", "sm_50", "sm_60", "sm_70", "sm_75", "compute_80"], "11.0"),
    ("2.15.0", ["sm_50", "sm_60", "sm_70", "sm_75", "compute_80"], "12.2"),
    ("2.18.0", ["sm_60", "sm_70", "sm_80", "sm_89", "compute_90"], "12.5.1"),
    ("2.21.0", ["sm_60", "sm_70", "sm_80", "sm_89", "compute_90"], "12.5.1"),
])
def test_build_info_rows_are_the_wheels_own_dicts(version, capabilities, cuda):
    """tf.sysconfig.get_build_info() of these wheels, verbatim (https://pypi.org/project/tensorflow/<version>/#files)."""
    (row,) = [r for r in rows("build_info", "build") if r["tensorflow"] == version]
    assert row["cuda_compute_capabilities"] == capabilities and row["cuda_version"] == cuda and row["is_cuda_build"]
    assert row["ptx"] == [c for c in capabilities if c.startswith("compute_")]


def test_the_release_candidate_that_dropped_the_cuda_keys_says_so():
    (row,) = [r for r in rows("build_info", "build") if r["tensorflow"] == "2.22.0rc0"]
    assert row["is_cuda_build"] and row["cuda_compute_capabilities"] == [] and "cuda_version" not in row["keys"]


def test_the_generated_kernels_agree_with_the_curated_rows_of_every_minor():
    built = {}
    for row in rows("build_info", "build"):
        if row["cuda_compute_capabilities"]:
            built[".".join(row["tensorflow"].split(".")[:2])] = row
    for curated in rows("linux", "tf_cuda"):
        row = built.get(curated["tf"])
        if row is None:
            continue
        assert [_cc(t) for t in row["native"]] == curated["sass"], curated["tf"]
        assert [_cc(t) for t in row["ptx"]] == [curated["ptx"]], curated["tf"]


def test_a_saved_report_reads_the_kernels_from_its_wheels_build_info():
    """No child facts: the kernels of tensorflow 2.15.1 come from its wheel's row, with the wheel as source."""
    facts = fixture_facts("linux/h100-tensorflow-2.15-ptx-jit.json")
    next(d for d in facts["distributions"] if d["name"] == "tensorflow")["version"] = "2.15.1"
    assert wheel_build_info(facts)["wheel"].startswith("tensorflow-2.15.1-cp")
    build = tensorflow_build(facts)
    assert build["sass"] == ["5.0", "6.0", "7.0", "7.5", "8.0"] and build["ptx"] == "8.0" and build["cuda"] == "12.2"
    # the H100 (9.0) is newer than every native kernel: flagged from these facts, no log line needed
    result = check_result("cuda-build", facts)
    assert result.status is Status.WARN and "PTX" in result.summary


def test_another_build_or_platform_gets_no_wheel_row():
    facts = fixture_facts("linux/h100-tensorflow-2.15-ptx-jit.json")
    other = copy.deepcopy(facts)
    next(d for d in other["distributions"] if d["name"] == "tensorflow")["name"] = "tensorflow-cpu"
    assert wheel_build_info(other) == {}
    mac = copy.deepcopy(facts)
    mac["host"]["system"] = "Darwin"
    assert wheel_build_info(mac) == {}


def test_every_tf_keras_user_row_cites_its_wheel_and_the_lines_it_read():
    found = rows("tf_keras_users", "release")
    assert {"tensorflow-hub", "tensorflow-model-optimization", "tensorflow-probability"} <= {r["distribution"] for r in found}
    for row in found:
        assert row["source"].startswith("https://files.pythonhosted.org/") and row["source"].endswith(row["wheel"])
        assert all(":" in line and line.split(":")[0].endswith(".py") for line in row["imports_tf_keras"])
    hub = {r["release"]: r for r in found if r["distribution"] == "tensorflow-hub"}
    assert "tensorflow_hub/__init__.py:100" in hub["0.16.0"]["imports_tf_keras"] and hub["0.16.0"]["requires_tf_keras"] == []
    assert hub["0.15.0"]["imports_tf_keras"] == []


def test_the_import_checks_read_from_the_wheels_agree_with_the_curated_rows():
    """tensorflow-probability's floors (companions_curated.toml) and tensorflow-addons' ranges
    (companion_imports.toml) were read from the tagged sources by hand; the generated rows read the wheels."""
    generated = {(r["distribution"], r["release"]): r for r in rows("companion_import_checks", "import_check")}
    compared = 0
    for row in rows("companions_curated", "import_check"):
        found = generated.get((row["name"], row["version"]))
        if found:
            assert found["tensorflow"] == row["tensorflow"] and found["enforced"] == "raises", row
            compared += 1
    for row in rows("companion_imports", "import_requirements"):
        found = generated.get((row["distribution"], row["release"]))
        if found:
            assert found["tensorflow"] == row["tensorflow"] and found["enforced"] == row["enforced"], row
            compared += 1
    assert compared >= 10
    for row in generated.values():
        assert row["source"].startswith("https://files.pythonhosted.org/") and row["read_at"].split(":")[0].endswith(".py")
