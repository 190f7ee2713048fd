"""Recorded runs with the child's facts taken out reach the same verdict (issue 38, build 1): every fixture that
holds what the TensorFlow child recorded about tf.keras or the companions (most recorded by tfdoctor on live
environments), judged again as an older report (no companions' imports, no tf.keras record) and as a report of
distributions alone (no `tensorflow` section); every fixture with the child's facts for the checks whose rules read
them; reports shaped as the live child records mechanisms no fixture holds; the thread sets' companion misses. The
live suite does the same on every report of the environments it builds (tests/live/support.py, check_stripped)."""

from __future__ import annotations

import functools

import pytest

from tests.builders import ENV_SITE, distribution, tensorflow_environment, tensorflow_result
from tests.fixtures_support import fixture_id, fixture_paths, load_fixture
from tests.import_support import closure_environment
from tests.stripped_support import (IMPORT_FACT_CHECKS, LEVELS, diagnosed, differences, plan_commands, statuses,
                                     stripped)


def _with_child_imports() -> list:
    paths = []
    for path in fixture_paths():
        tensorflow = load_fixture(path)["facts"].get("tensorflow") or {}
        if "companions" in tensorflow or "keras" in tensorflow:
            paths.append(path)
    return paths


RECORDED = _with_child_imports()
# What no table holds: the full verdict rests on a file or a variable the child's run or an experiment exercised.
BEYOND_TABLES = {
    "linux/keras-config-missing-backend-proven-by-experiment": ("keras",),  # ~/.keras/keras.json names jax
    "linux/gast-0.2.2-inside-its-pin-autograph-fails": ("dependencies",),  # AutoGraph's conversion, traced by the child
    "linux/loader-path-shadows-tensorflow-library-proven-by-experiment": ("tensorflow-import",),  # LD_LIBRARY_PATH
    "linux/protobuf-implementation-variable-proven-by-experiment": ("tensorflow-import",),  # a protobuf variable
    "linux/project-folder-tensorflow-py-hides-tensorflow": ("tensorflow-import",),  # a tensorflow.py first on the path
    "linux/pythonpath-old-numpy-hides-numpy-2": ("tensorflow-import",),  # a PYTHONPATH entry first on the path
}


def _hub_repaired_report() -> dict:
    """The hub case after its plan (tf-keras 2.21, TF_USE_LEGACY_KERAS=1): tf.keras is tf-keras, KerasLayer fits it.
    The live experiments module's repaired report, where the stripped check first failed (companions: a skip)."""
    document = _hub_report("2.21.0")
    facts = document["facts"]
    facts["environment"] = {"TF_USE_LEGACY_KERAS": "1"}
    tensorflow = facts["tensorflow"]
    tensorflow["keras"] = {**tensorflow["keras"], "flavor": "tf-keras", "version": "2.21.0", "legacy_env": "1",
                           "legacy_requested": True, "module": "tf_keras.src.layers.core.dense"}
    tensorflow["companions"][0]["keras_layers"][0]["tf_keras_layer"] = True
    return document


def _hub_report(tf_keras: str | None) -> dict:
    """What the live suite's child records beside tensorflow-hub 0.16.1 (tests/live/test_live_experiments.py's hub
    case, tensorflow-hub-without-tf-keras): KerasLayer a tf_keras layer while tf.keras is Keras 3; with tf-keras of
    this TensorFlow installed, or none."""
    hub = {"module": "tensorflow_hub", "status": "ok" if tf_keras else "failed", "version": "0.16.1",
           "exception": None if tf_keras else {"type": "ModuleNotFoundError", "message": "No module named 'tf_keras'",
                                               "traceback": [], "causes": []},
           "warnings": [], "log": [], "seconds": 0.4,
           "keras_layers": [{"name": "KerasLayer", "tf_keras_layer": False,
                             "base_module": "tf_keras.src.engine.base_layer"}] if tf_keras else []}
    keras = {"flavor": "keras3", "version": "3.15.1", "module": "keras.src.layers.core.dense", "layer_ok": True,
             "step": "done", "error": None, "legacy_env": None, "legacy_requested": False}
    extra = [distribution("tensorflow-hub", "0.16.1", location=ENV_SITE, top_level=["tensorflow_hub"],
                          requires=["numpy>=1.12.0", "protobuf>=3.19.6", "tf-keras>=2.14.1"])]
    if tf_keras:
        extra.append(distribution("tf-keras", tf_keras, location=ENV_SITE, top_level=["tf_keras"],
                                  requires=["tensorflow<2.22,>=2.21"]))
    tensorflow = tensorflow_result(keras=keras, companions=[hub])
    return {"schema_version": "1.3", "facts": tensorflow_environment(extra=extra, tensorflow=tensorflow)}


def _numpy_too_old_report() -> dict:
    """tests/live/test_live_environments.py's numpy-too-old: NumPy 1.25.2 below tensorflow-cpu 2.21's numpy>=1.26.0
    and ml-dtypes 0.6.0's numpy>=2.0.0, while TensorFlow and tf.keras work (the child built the layer)."""
    keras = {"flavor": "keras3", "version": "3.15.1", "module": "keras.src.layers.core.dense", "layer_ok": True,
             "step": "done", "error": None, "legacy_env": None, "legacy_requested": False}
    facts = tensorflow_environment({"numpy": "1.25.2"}, tensorflow=tensorflow_result(keras=keras, companions=[]))
    requires = {"keras": ["absl-py", "numpy", "h5py", "ml-dtypes"], "ml-dtypes": ["numpy>=2.0.0"]}
    for entry in facts["distributions"]:
        entry["requires"] = entry.get("requires") or requires.get(entry["name"], [])
    return {"schema_version": "1.3", "facts": facts}


def _one_companion_of(path_stem: str, keep: str, drop: tuple[str, ...]) -> dict:
    """A recorded run cut to one of its companions: its other companions' distributions and the child's imports of
    them taken out, as the live suite's environment with that companion alone records it."""
    document = load_fixture(next(p for p in fixture_paths() if p.stem == path_stem))
    facts = document["facts"]
    facts["distributions"] = [d for d in facts["distributions"] if d["name"] not in drop]
    facts["tensorflow"]["companions"] = [c for c in facts["tensorflow"]["companions"] if c["module"] == keep]
    return document


def _text_of_another_release_report() -> dict:
    """tests/live/test_live_environments.py's tensorflow-text-of-another-release: tensorflow-text 2.15.0 (--no-deps)
    beside tensorflow-cpu 2.21.0, whose `import tensorflow_text` fails with an undefined symbol while TensorFlow
    works: the recorded run of linux/companions-built-for-older-tensorflow-beside-tensorflow-cpu-2.21, cut to it."""
    return _one_companion_of("companions-built-for-older-tensorflow-beside-tensorflow-cpu-2.21", "tensorflow_text",
                             ("tensorflow-probability", "tensorflow-addons"))


# Reports shaped as the live child records them, of mechanisms no fixture holds (issue 38), with the full verdict.
LIVE_SHAPED = {"hub-0.16.1-keras-2-layer-beside-tf-keras": (lambda: _hub_report("2.21.0"), {"companions": "fail"}),
               "hub-0.16.1-without-tf-keras": (lambda: _hub_report(None), {"companions": "fail"}),
               "hub-0.16.1-repaired": (_hub_repaired_report, {"companions": "pass", "keras": "pass"}),
               # tests/live/test_live_closure.py's typing-extensions 4.5.0: tf.keras fails through optree's pin
               "closure-typing-extensions": (lambda: {"schema_version": "1.3", "facts": closure_environment()},
                                             {"keras": "fail", "dependencies": "fail"}),
               "numpy-too-old": (_numpy_too_old_report, {"keras": "pass", "dependencies": "warn"}),
               # tensorflow-text-of-another-release: from distributions alone, the companion table's row for 2.15.0
               "tensorflow-text-of-another-release": (_text_of_another_release_report, {"companions": "fail"})}


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", sorted(LIVE_SHAPED))
def test_a_live_shaped_report_without_the_childs_facts_reaches_the_same_verdict(name, level):
    build, verdict = LIVE_SHAPED[name]
    document = build()
    full, without = diagnosed(document), diagnosed(stripped(document, level))
    assert {check: statuses(full)[check] for check in verdict} == verdict
    assert not differences(full, without, level), (differences(full, without, level), statuses(without))


WITH_CHILD = [p for p in fixture_paths() if load_fixture(p)["facts"].get("tensorflow")]


@functools.lru_cache(maxsize=None)
def _full(path) -> dict:
    return diagnosed(load_fixture(path))


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("path", WITH_CHILD, ids=fixture_id)
def test_every_recorded_report_keeps_its_import_fact_verdicts_without_the_childs_facts(path, level):
    """Every fixture with the child's facts: the checks whose rules read them (dependencies, keras, companions) reach
    the same statuses and, together, the same repairs. Their other checks rest on what only the child observes (its
    devices, its logs, the CUDA libraries it loaded) and are not compared here."""
    beyond = BEYOND_TABLES.get(fixture_id(path), ())
    without = diagnosed(stripped(load_fixture(path), level))
    found = differences(_full(path), without, level, beyond, scope=IMPORT_FACT_CHECKS)
    assert not found, found


def test_the_recorded_runs_cover_the_child_facts_a_saved_report_lacks():
    assert len(RECORDED) >= 6, [fixture_id(p) for p in RECORDED]
    assert any("companions" in (load_fixture(p)["facts"]["tensorflow"] or {}) for p in RECORDED)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("path", RECORDED, ids=fixture_id)
def test_a_report_without_the_childs_facts_reaches_the_same_verdict(path, level):
    document = load_fixture(path)
    full, without = diagnosed(document), diagnosed(stripped(document, level))
    beyond = BEYOND_TABLES.get(fixture_id(path), ())
    assert not differences(full, without, level, beyond), (differences(full, without, level, beyond), statuses(without))
    # what the tables judged says so, and what the child judged says that
    for result in without["results"]:
        if result["id"] in ("companions", "keras") and result["status"] != "skip" or (
                level == "no-child" and result["id"] == "dependencies" and result["status"] in ("fail", "warn")):
            assert result["evidence"].get("judged") == "tables", (result["id"], result["summary"])
    for result in full["results"]:
        if result["id"] in ("companions", "keras") and result["status"] != "skip" and (
                result["id"] == "keras" and document["facts"]["tensorflow"].get("keras")
                or result["id"] == "companions" and document["facts"]["tensorflow"].get("companions") is not None):
            assert result["evidence"].get("judged") == "import", (result["id"], result["summary"])


def test_the_comparison_sees_a_companion_the_stripped_report_misses():
    """The comparison itself can fail: a verdict the tables do not reach is a difference."""
    document = load_fixture(next(p for p in RECORDED if "companions-built-for-older" in p.stem))
    full = diagnosed(document)
    worse = dict(full, results=[dict(r, status="skip") if r["id"] == "companions" else r for r in full["results"]])
    assert differences(full, worse, "older-report") == [
        "companions: fail with the child's facts, skip without (older-report)"]


# Issue 38's companion misses on thread reports (names and versions only, no child): (installed, the finding's words,
# a package the plan installs or None where no release made for that TensorFlow exists).
THREAD_MISSES = {
    "tensorflow-io-0.34-beside-2.14": ((("tensorflow", "2.14.0"), ("keras", "2.14.0"), ("tensorflow-io", "0.34.0")),
                                       "tensorflow-io 0.34.0 was built for another TensorFlow", "tensorflow-io==0.35.0"),
    "tensorflow-io-0.37.1-beside-2.18": ((("tensorflow", "2.18.0"), ("keras", "3.6.0"), ("tensorflow-io", "0.37.1")),
                                         "tensorflow-io 0.37.1 was built for another TensorFlow", None),
    "tensorflow-probability-0.25-beside-2.16.2": (
        (("tensorflow", "2.16.2"), ("keras", "3.5.0"), ("tensorflow-probability", "0.25.0")),
        "tensorflow-probability 0.25.0 refuses tensorflow 2.16.2", "tensorflow-probability==0.24.0"),
    "tensorflow-hub-0.16.1-layers-beside-keras-3": (
        (("tensorflow", "2.19.0"), ("keras", "3.9.2"), ("tensorflow-hub", "0.16.1"), ("tf-keras", "2.19.0")),
        "tensorflow_hub.KerasLayer is a layer of another Keras than tf.keras", None),
}


@pytest.mark.parametrize("name", sorted(THREAD_MISSES))
def test_the_companion_misses_of_the_thread_sets_are_judged_from_the_distributions(name):
    installed, words, planned = THREAD_MISSES[name]
    facts = {"host": {"system": "Linux", "machine": "x86_64"}, "python": {"version": "3.11.9"},
             "distributions": [{"name": n, "version": v} for n, v in installed]}
    document = diagnosed({"schema_version": "1.3", "facts": facts})
    companions = next(r for r in document["results"] if r["id"] == "companions")
    assert companions["status"] == "fail" and words in companions["summary"], companions["summary"]
    assert companions["evidence"]["judged"] == "tables"
    packages = [p for step in (document.get("plan") or {}).get("steps") or () for p in step.get("packages") or ()]
    if planned:
        assert planned in packages, packages
    if name == "tensorflow-probability-0.25-beside-2.16.2":
        assert "tf-keras==2.16.0" in packages  # 0.24 imports tf_keras: its tf-keras joins the repair
    if name.startswith("tensorflow-hub"):
        assert "export TF_USE_LEGACY_KERAS=1" in plan_commands(document)
