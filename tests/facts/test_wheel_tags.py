"""facts/wheel_tags.py (issue 38 item 4): installed wheels' WHEEL tags against the target interpreter, read as
packaging.tags reads them; and the target collector that records them (only where they can matter)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tfdoctor.facts import wheel_tags

from tests.builders import tensorflow_environment

TF_312 = "cp312-cp312-manylinux_2_27_x86_64"


def environment(*tagged: tuple[str, list[str]], python: str = "3.11.7", **python_facts) -> dict:
    """tensorflow-cpu 2.21.0 and its dependencies on `python`, the named distributions carrying these WHEEL tags."""
    facts = tensorflow_environment(python=python)
    facts["python"].update(python_facts)
    for entry in facts["distributions"]:
        for name, tags in tagged:
            if entry["name"] == name:
                entry["wheel_tags"] = tags
    return facts


def test_tensorflow_built_for_python_3_12_in_python_3_11_is_named():
    found = wheel_tags.foreign_builds(environment(("tensorflow-cpu", [TF_312])))
    assert [(b.name, b.version, b.built_for, b.runs) for b in found] == [
        ("tensorflow-cpu", "2.21.0", "CPython 3.12", "Python 3.11")]
    assert found[0].describe() == ("tensorflow-cpu's files were built for CPython 3.12 (WHEEL tag "
                                   "cp312-cp312-manylinux_2_27_x86_64) but this environment runs Python 3.11")
    assert found[0].pin == "tensorflow-cpu==2.21.0"


def test_any_compiled_distribution_is_judged_not_only_tensorflow():
    facts = environment(("numpy", ["cp310-cp310-manylinux_2_17_x86_64", "cp310-cp310-manylinux2014_x86_64"]),
                        ("h5py", ["cp311-cp311-manylinux_2_17_x86_64"]))
    assert [(b.name, b.built_for) for b in wheel_tags.foreign_builds(facts)] == [("numpy", "CPython 3.10")]


@pytest.mark.parametrize("tags", [
    ["cp311-cp311-manylinux_2_27_x86_64"],  # this Python's own
    ["cp311-cp311-manylinux_2_17_x86_64", "cp311-cp311-manylinux2014_x86_64"],  # a manylinux of another glibc
    ["cp311-cp311-musllinux_1_2_x86_64"],  # another platform: not this reader's question
    ["cp310-abi3-manylinux2014_x86_64"],  # the stable ABI of an older Python (protobuf)
    ["cp38-abi3-macosx_11_0_arm64"],
    ["py3-none-manylinux2010_x86_64", "py2-none-manylinux2010_x86_64"],  # libclang: no interpreter binding
    ["py3-none-any"],
    ["cp311-none-any"],
    ["cp310.cp311.cp312-cp310.cp311.cp312-manylinux_2_17_x86_64"],  # a compressed tag set that names this one
])
def test_a_healthy_environment_gets_nothing(tags):
    assert wheel_tags.foreign_builds(environment(("tensorflow-cpu", tags), ("numpy", tags))) == []


def test_the_abi_flags_count_free_threaded_and_default_builds_apart():
    default_wheel = environment(("numpy", ["cp313-cp313-manylinux_2_27_x86_64"]), python="3.13.1", abiflags="t")
    found = wheel_tags.foreign_builds(default_wheel)
    assert [(b.name, b.built_for, b.runs) for b in found] == [("numpy", "CPython 3.13", "Python 3.13 (free-threaded)")]
    threaded_wheel = environment(("numpy", ["cp313-cp313t-manylinux_2_27_x86_64"]), python="3.13.1", abiflags="")
    assert [b.built_for for b in wheel_tags.foreign_builds(threaded_wheel)] == ["free-threaded CPython 3.13"]
    # a report from before abiflags was recorded is the default build's
    assert wheel_tags.foreign_builds(environment(("numpy", ["cp313-cp313-manylinux_2_27_x86_64"]), python="3.13.1")) == []


def test_nothing_is_judged_without_a_cpython_version_or_for_conda_builds():
    pypy = environment(("tensorflow-cpu", [TF_312]), implementation="PyPy")
    assert wheel_tags.foreign_builds(pypy) == []
    unknown = environment(("tensorflow-cpu", [TF_312]))
    del unknown["python"]["version"]
    assert wheel_tags.foreign_builds(unknown) == []
    conda = environment(("tensorflow-cpu", [TF_312]))
    conda["distributions"][0]["installer"] = "conda"
    assert wheel_tags.foreign_builds(conda) == []
    garbled = environment(("tensorflow-cpu", ["not a tag", 7]))
    assert wheel_tags.foreign_builds(garbled) == []


def test_the_first_copy_on_sys_path_is_the_one_judged():
    facts = environment(("numpy", ["cp311-cp311-manylinux_2_27_x86_64"]))
    facts["distributions"].append({"name": "numpy", "version": "1.26.4", "wheel_tags": ["cp312-cp312-linux_x86_64"]})
    assert wheel_tags.foreign_builds(facts) == []


# ------------------------------------------------------------------------------------------- the collector

def dist_info(site: Path, name: str, version: str, files: list[str], tags: list[str] | None, requires=()) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    headers = [f"Name: {name}", f"Version: {version}", *(f"Requires-Dist: {r}" for r in requires)]
    (info / "METADATA").write_text("\n".join(headers) + "\n\nbody\n")
    (info / "INSTALLER").write_text("pip\n")
    (info / "RECORD").write_text("".join(f"{path},,\n" for path in files + [f"{info.name}/METADATA"]))
    if tags is not None:
        (info / "WHEEL").write_text("Wheel-Version: 1.0\nRoot-Is-Purelib: false\n" + "".join(f"Tag: {t}\n" for t in tags))


def test_the_target_collector_records_tags_only_where_extension_modules_make_them_matter(tmp_path):
    from tfdoctor.child import source

    site = tmp_path / "site"
    dist_info(site, "tensorflow-cpu", "2.21.0", ["tensorflow/python/_pywrap_tensorflow_internal.so"], [TF_312],
              requires=["numpy>=1.26.0", "wrapt>=1.11.0", "six"])
    dist_info(site, "numpy", "2.4.6", ["numpy/_core/_multiarray_umath.cpython-312-x86_64-linux-gnu.so"],
              ["cp312-cp312-manylinux_2_27_x86_64"])
    # on TensorFlow's closure, not detailed: its WHEEL is left to the integrity child (installers.wheels)
    dist_info(site, "wrapt", "1.17.0", ["wrapt/_wrappers.so"], ["cp312-cp312-manylinux_2_17_x86_64"])
    dist_info(site, "six", "1.17.0", ["six.py"], ["py2.py3-none-any"])  # pure: nothing recorded
    dist_info(site, "tensorflow-io", "0.37.1", ["tensorflow_io/core/python/ops/libtensorflow_io.so"],
              ["cp311-cp311-manylinux_2_12_x86_64"], requires=["tensorflow<2.17"])  # a dependent: detailed
    # a detailed distribution whose RECORD lists no extension module: its WHEEL is not even read
    dist_info(site, "tensorboard-data-server", "0.7.2", ["tensorboard_data_server/bin/server"],
              ["py3-none-manylinux_2_31_x86_64"])
    dist_info(site, "unrelated", "1.0", ["unrelated/_speedups.so"], ["cp312-cp312-linux_x86_64"])  # not recorded
    env = {**os.environ, "PYTHONPATH": str(site)}
    out = subprocess.run([sys.executable, "-c", source("target_info")], capture_output=True, text=True, timeout=60,
                         env=env, cwd=tmp_path)
    facts = json.loads(out.stdout)
    tags = {d["name"]: d.get("wheel_tags") for d in facts["distributions"] if d.get("location") == str(site)}
    assert tags == {"tensorflow-io": ["cp311-cp311-manylinux_2_12_x86_64"], "tensorflow-cpu": [TF_312], "numpy": ["cp312-cp312-manylinux_2_27_x86_64"],
                    "wrapt": None, "six": None, "tensorboard-data-server": None}
    assert facts["python"]["abiflags"] == sys.abiflags


def test_a_report_from_before_schema_1_5_is_judged_on_the_integrity_childs_tags():
    """installers.wheels (the family's WHEEL tags, recorded by the integrity child) stands in where a distribution
    has no wheel_tags field; a wheel_tags field, even empty-handed, is the collector's own word."""
    facts = environment()
    facts["installers"] = {"wheels": [{"name": "tensorflow-cpu", "version": "2.21.0", "tags": [TF_312]},
                                      {"name": "numpy", "version": "2.4.6", "tags": ["cp311-cp311-manylinux_2_27_x86_64"]}]}
    assert [b.name for b in wheel_tags.foreign_builds(facts)] == ["tensorflow-cpu"]
    facts["installers"]["wheels"][0]["version"] = "2.20.0"  # another release than the one installed: not its tags
    assert wheel_tags.foreign_builds(facts) == []
