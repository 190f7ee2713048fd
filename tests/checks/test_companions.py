"""Companions of TensorFlow as user code imports them: the companions check on constructed facts (each known
cause, the companion at fault, a crash, the release made for the installed TensorFlow), and its repairs in the
plan. The child's guarded imports that record these facts: tests/child/test_companion_imports.py."""

from __future__ import annotations

import pytest

from checks.companions import accepts_at_import, cause_of, companions, culprit, release_made_for, static_problems
from tfdoctor import knowledge
from tfdoctor.results.model import CheckResult, Status
from tfdoctor.plan.planner import build_plan
from tfdoctor.results.repairs import Action

# --- the check ----------------------------------------------------------------------------------------------

SITE = "/home/user/.venv/lib/python3.11/site-packages"


def facts_with(*entries: dict, distributions: tuple = (), tf: dict | None = None) -> dict:
    return {"host": {"system": "Linux", "machine": "x86_64"},
            "python": {"executable": "/home/user/.venv/bin/python", "version": "3.11.7", "in_venv": True,
                       "distribution_count": 40,
                       "marker_environment": {"python_version": "3.11", "sys_platform": "linux",
                                              "platform_machine": "x86_64", "platform_system": "Linux"}},
            "distributions": [{"name": "tensorflow-cpu", "version": "2.21.0", "location": SITE,
                               "top_level": ["tensorflow"], "requires": []}, *distributions],
            "tensorflow": {"status": "ok", "imported": True, "stage": "done", "version": "2.21.0",
                           "companions": list(entries), **(tf or {})}}


def entry(module: str, status: str = "failed", message: str = "", kind: str = "ImportError", **more) -> dict:
    exception = {"type": kind, "message": message, "traceback": [], "causes": []} if status == "failed" else None
    return {"module": module, "status": status, "version": None, "origin": None, "exception": exception,
            "warnings": [], "log": [], "seconds": 0.01, **more}


TEXT = {"name": "tensorflow-text", "version": "2.15.0", "location": SITE, "top_level": ["tensorflow_text"],
        "requires": ["tensorflow<2.16,>=2.15.0; platform_machine != \"arm64\" or platform_system != \"Darwin\""]}
UNDEFINED = (f"{SITE}/tensorflow_text/core/pybinds/tflite_registrar.so: undefined symbol: "
             "_ZN4absl12lts_2023012516raw_log_internal21internal_log_functionB5cxx11E")


def test_no_companion_installed_passes():
    outcome = companions.run(facts_with())
    assert outcome.status is Status.PASS and outcome.summary == "no companion of TensorFlow is installed"


def test_companions_that_import_pass_with_their_versions():
    outcome = companions.run(facts_with(entry("tensorflow_text", "ok", version="2.21.0")))
    assert outcome.status is Status.PASS and outcome.summary == "tensorflow_text 2.21.0 imports with tensorflow-cpu 2.21.0"


def test_skipped_when_tensorflow_did_not_import_or_nothing_was_recorded():
    assert companions.run(facts_with(tf={"imported": False, "status": "import_error"})).status is Status.SKIP
    partial = facts_with(tf={"companions": None})
    del partial["python"]["distribution_count"]  # a list naming only some distributions says nothing of the rest
    assert companions.run(partial).status is Status.SKIP


def test_a_complete_list_without_companions_passes_without_the_childs_imports():
    """Issue 38: a report whose collector counted every distribution says no companion is installed, whether or not
    the child recorded its imports (an older report) or recorded anything at all (the child's facts left out)."""
    older = companions.run(facts_with(tf={"companions": None}))
    no_child = facts_with()
    del no_child["tensorflow"]
    for outcome in (older, companions.run(no_child)):
        assert outcome.status is Status.PASS, outcome.summary
        assert outcome.evidence["judged"] == "tables"
        assert outcome.summary.startswith("no companion of TensorFlow is installed")
    assert companions.run(facts_with()).evidence["judged"] == "import"


def test_an_undefined_symbol_fails_the_companion_built_for_another_tensorflow():
    outcome = companions.run(facts_with(entry("tensorflow_text", message=UNDEFINED), distributions=(TEXT,)))
    assert outcome.status is Status.FAIL
    assert outcome.summary == ("`import tensorflow_text` fails: tensorflow-text 2.15.0 was built for another TensorFlow "
                               "than tensorflow-cpu 2.21.0")
    assert any(d.startswith("error: ImportError: ") and "undefined symbol" in d for d in outcome.details)
    assert outcome.remediation.url == "https://github.com/tensorflow/text/issues/961"


def test_keras_hub_failing_in_tensorflow_texts_library_blames_tensorflow_text():
    hub = entry("keras_hub", message=UNDEFINED.replace("core/pybinds/tflite_registrar", "python/ops/_regex_split_ops"))
    outcome = companions.run(facts_with(hub, distributions=(TEXT,)))
    assert outcome.summary.startswith("`import keras_hub` fails (in tensorflow_text, which it imports): "
                                      "tensorflow-text 2.15.0 was built")
    assert culprit(hub, ["keras_hub", "tensorflow_text"]) == "tensorflow_text"


def test_a_missing_tf_keras_asks_for_the_tf_keras_made_for_the_installed_tensorflow():
    tfp = entry("tensorflow_probability", message="No module named 'tf_keras'", kind="ModuleNotFoundError")
    outcome = companions.run(facts_with(tfp, distributions=(
        {"name": "tensorflow-probability", "version": "0.25.0", "location": SITE,
         "top_level": ["tensorflow_probability"], "requires": []},)))
    assert outcome.status is Status.FAIL and "tensorflow-probability 0.25.0 needs tf-keras" in outcome.summary
    (repair,) = outcome.remediation.repairs
    assert repair.action is Action.INSTALL and repair.packages[0].startswith("tf-keras")
    assert ("2.21" in repair.packages[0]) and "imports tf_keras" in repair.reason


def test_tfp_refusing_an_old_tensorflow_asks_for_the_release_that_accepts_it():
    message = ("This version of TensorFlow Probability requires TensorFlow version >= 2.18; Detected an installation "
               "of version 2.17.1. Please upgrade TensorFlow to proceed.")
    facts = facts_with(entry("tensorflow_probability", message=message), distributions=(
        {"name": "tensorflow-probability", "version": "0.25.0", "location": SITE,
         "top_level": ["tensorflow_probability"], "requires": []},))
    facts["distributions"][0]["version"] = "2.17.1"
    outcome = companions.run(facts)
    assert outcome.status is Status.FAIL
    assert "requires TensorFlow >= 2.18 when imported" in outcome.summary
    # 0.24 imports tf_keras (tf_keras_users.toml, read from its wheel) and tf.keras of 2.17 is Keras 3: its tf-keras
    # is part of the same repair, or the pasted plan fails at the next import (issue 38)
    assert [r.packages for r in outcome.remediation.repairs] == [("tensorflow-probability==0.24.0",),
                                                                 ("tf-keras==2.17.0",)]


def test_addons_warning_about_an_unsupported_tensorflow_warns_and_names_no_release():
    warning = ("Tensorflow Addons supports using Python ops for all Tensorflow versions above or equal to 2.13.0 and "
               "strictly below 2.16.0 (nightly versions are not supported). \n The versions of TensorFlow you are "
               "currently using is 2.21.0 and is not supported. ")
    addons = entry("tensorflow_addons", "ok", version="0.23.0",
                   warnings=[{"category": "UserWarning", "message": warning}])
    outcome = companions.run(facts_with(addons, distributions=(
        {"name": "tensorflow-addons", "version": "0.23.0", "location": SITE, "top_level": ["tensorflow_addons"],
         "requires": []},)))
    assert outcome.status is Status.WARN
    assert "supports TensorFlow >= 2.13.0, < 2.16.0 (it warns at import), not tensorflow-cpu 2.21.0" in outcome.summary
    assert outcome.remediation.repairs == () and "No release of tensorflow-addons" in outcome.remediation.advice


def test_a_crash_while_importing_a_companion_fails_that_companion():
    tf = {"status": "crashed", "stage": "companion:tensorflow_addons", "signal": "SIGSEGV", "exit_code": -11,
          "companions": [entry("tensorflow_text", "ok", version="2.21.0"), entry("tensorflow_addons", "skipped")]}
    facts = facts_with(tf=tf)
    outcome = companions.run(facts)
    assert outcome.status is Status.FAIL
    assert outcome.summary == "`import tensorflow_addons` died of SIGSEGV (segmentation fault)"
    assert outcome.remediation.advice.startswith("The interpreter itself ended while importing tensorflow_addons")
    from checks.tensorflow_import import tensorflow_import

    imported = tensorflow_import.run(facts)  # the import itself worked: it points at the companions
    assert imported.status is Status.PASS and any("(while companions; see companions)" in d for d in imported.details)


def test_an_unknown_error_says_so_and_still_names_the_culprit():
    outcome = companions.run(facts_with(entry("tensorflow_datasets", message="boom", kind="RuntimeError")))
    assert outcome.status is Status.FAIL and outcome.summary == "`import tensorflow_datasets` fails: RuntimeError: boom"
    assert outcome.remediation.advice.startswith("tfdoctor does not know this error.")


def test_harmless_warnings_pass():
    quiet = entry("tensorflow_hub", "ok", version="0.16.1", warnings=[{"category": "UserWarning", "message": "x"}])
    assert companions.run(facts_with(quiet)).status is Status.PASS


# --- import-time knowledge -----------------------------------------------------------------------------------

def test_the_import_requirements_are_read_from_the_tagged_sources():
    rows = knowledge.rows("companion_imports", "import_requirements")
    assert {r["distribution"] for r in rows} == {"tensorflow-addons"}  # tensorflow-probability's: companions_curated
    assert all(r["source"].startswith("https://github.com/tensorflow/") and f"/v{r['release']}/" in r["source"]
               for r in rows)
    assert accepts_at_import("tensorflow-probability", "0.25.0", "2.17.1") is False
    assert accepts_at_import("tensorflow-probability", "0.25.0", "2.21.0") is True
    assert accepts_at_import("tensorflow-addons", "0.23.0", "2.16.0") is False
    assert accepts_at_import("tensorflow-text", "2.15.0", "2.21.0") is None


@pytest.mark.parametrize("tf_version, distribution, expected", [
    ("2.17.1", "tensorflow-probability", "0.24.0"),
    ("2.21.0", "tensorflow-probability", "0.25.0"),
    ("2.14.1", "tensorflow-addons", "0.23.0"),
    ("2.21.0", "tensorflow-addons", None),
])
def test_the_release_made_for_tensorflow_respects_what_it_checks_at_import(tf_version, distribution, expected):
    facts = facts_with()
    facts["distributions"][0]["version"] = tf_version
    assert release_made_for(facts, distribution) == expected


def test_every_failure_pattern_matches_its_own_public_example():
    examples = {
        "undefined-symbol": {"exception": [UNDEFINED]},
        "io-plugins-not-loaded": {"warning": ["file system plugins are not loaded: unable to open file: libtensorflow_io.so"]},
        "decision-forests-ops-not-loaded": {"log": ["WARNING:root:Failure to load the inference.so custom c++ "
                                                    "tensorflow ops. This error is likely caused the version of "
                                                    "TensorFlow and TensorFlow Decision Forests are not compatible."]},
        "keras-2-internals": {"exception": ["ModuleNotFoundError: No module named 'keras.src.engine'"]},
        "needs-tf-keras": {"exception": ["ModuleNotFoundError: No module named 'tf_keras'"]},
        "tfp-minimum-tensorflow": {"exception": ["ImportError: This version of TensorFlow Probability requires "
                                                 "TensorFlow version >= 2.18; Detected an installation of version "
                                                 "2.17.0. Please upgrade TensorFlow to proceed."]},
        "addons-unsupported-tensorflow": {"warning": ["Tensorflow Addons supports using Python ops for all Tensorflow "
                                                      "versions above or equal to 2.13.0 and strictly below 2.16.0 "
                                                      "(nightly versions are not supported). "]},
    }
    assert set(examples) == {r["id"] for r in knowledge.rows("companion_imports", "import_failures")}
    for row_id, texts in examples.items():
        fake = {"exception": {"type": "", "message": texts["exception"][0]} if "exception" in texts else None,
                "warnings": [{"message": m} for m in texts.get("warning", ())], "log": texts.get("log", [])}
        found = cause_of(fake)
        assert found is not None and found.id == row_id, row_id


# --- the plan ---------------------------------------------------------------------------------------------------

def test_the_companion_repairs_keep_tensorflow_where_it_is():
    tfp = entry("tensorflow_probability", message="No module named 'tf_keras'", kind="ModuleNotFoundError")
    facts = facts_with(tfp)
    outcome = companions.run(facts)
    result = CheckResult("companions", "c", outcome.status, outcome.summary, remediation=outcome.remediation)
    plan = build_plan([result], facts)
    assert not plan.conflicts and plan.moves_tensorflow is None
    install = [s for s in plan.steps if s.action is Action.INSTALL]
    assert install and any(p.startswith("tf-keras") for s in install for p in s.packages)
    assert all(" -m pip " not in c for c in outcome.remediation.commands)


# --- judged from the tables, without the child's imports (issue 29) ----------------------------------------

def table_facts(*distributions: dict, tf_version: str = "2.21.0", tf: dict | None = None,
                environment: dict | None = None) -> dict:
    """A saved report without the child's facts (no `tensorflow` section unless `tf` is given)."""
    facts = facts_with(distributions=distributions)
    facts["distributions"][0]["version"] = tf_version
    facts["environment"] = environment or {}
    del facts["tensorflow"]
    if tf is not None:
        facts["tensorflow"] = tf
    return facts


def installed(name: str, version: str, **more) -> dict:
    return {"name": name, "version": version, "location": SITE, "top_level": [name.replace("-", "_")], **more}


HUB_160 = installed("tensorflow-hub", "0.16.0", requires=["numpy >=1.12.0", "protobuf >=3.19.6"])


def test_the_hub_fixture_a_saved_report_names_tensorflow_hub_and_asks_for_its_tf_keras():
    from tests.builders import check_result, fixture_facts

    facts = fixture_facts("linux/tensorflow-hub-0.16.0-keras-3-without-tf-keras.json")
    result = check_result(companions, facts)
    assert result.status is Status.FAIL and "tensorflow-hub 0.16.0 needs tf-keras" in result.summary
    assert "tensorflow_hub/__init__.py:100" in " ".join(result.details)  # the line read from its wheel
    # tf-keras alone leaves hub's KerasLayer a tf-keras layer a Keras 3 tf.keras model refuses (issue 29): tf.keras
    # must be tf-keras too, the shell's step the experiments prove once tf-keras is there
    assert [(r.action, r.packages, r.variable, r.value) for r in result.remediation.repairs] == [
        (Action.INSTALL, ("tf-keras==2.21.0",), None, None), (Action.SET_ENV, (), "TF_USE_LEGACY_KERAS", "1")]
    assert "tensorflow_hub.KerasLayer" in result.remediation.advice and "TF_USE_LEGACY_KERAS=1" in result.remediation.advice
    plan = build_plan([result], facts)
    assert [(s.command.split()[-1], s.no_deps, s.manual) for s in plan.steps] == [
        ("'tf-keras==2.21.0'", True, False), ("TF_USE_LEGACY_KERAS=1", False, True)]  # --no-deps beside tensorflow-cpu
    assert plan.steps[1].command == "export TF_USE_LEGACY_KERAS=1"


def test_hub_failing_to_import_without_tf_keras_gets_tf_keras_and_tf_keras_as_tf_keras():
    """The child saw `import tensorflow_hub` fail (No module named 'tf_keras'): the same two steps as from the
    tables; tensorflow-probability, which exports no Keras layer, gets tf-keras alone (the test above)."""
    hub = entry("tensorflow_hub", message="No module named 'tf_keras'", kind="ModuleNotFoundError")
    facts = facts_with(hub, distributions=(HUB_160,))
    outcome = companions.run(facts)
    assert outcome.status is Status.FAIL and "tensorflow-hub 0.16.0 needs tf-keras" in outcome.summary
    assert [(r.action, r.variable) for r in outcome.remediation.repairs] == [(Action.INSTALL, None),
                                                                             (Action.SET_ENV, "TF_USE_LEGACY_KERAS")]
    # already switched to tf-keras (the variable set): tf-keras is all that is missing
    facts["environment"] = {"TF_USE_LEGACY_KERAS": "1"}
    assert [r.action for r in companions.run(facts).remediation.repairs] == [Action.INSTALL]


def test_a_keras_3_beside_a_tensorflow_before_2_16_makes_hub_need_tf_keras_without_the_2_16_switch():
    # keras-hub#1417: Colab's TensorFlow 2.15 with Keras 3 (for keras-nlp) and tensorflow-hub 0.16.0: hub's
    # import of tf_keras is what works; TF_USE_LEGACY_KERAS exists only from 2.16, so no such step is given
    keras3 = table_facts(HUB_160, installed("keras", "3.0.4"), tf_version="2.15.0.post1")
    outcome = companions.run(keras3)
    assert outcome.status is Status.FAIL and "tensorflow-hub 0.16.0 needs tf-keras" in outcome.summary
    assert [r.action for r in outcome.remediation.repairs] == [Action.INSTALL]
    assert all(p.startswith("tf-keras") for r in outcome.remediation.repairs for p in r.packages)
    assert "TF_USE_LEGACY_KERAS" not in outcome.remediation.advice
    # the Keras 2 TensorFlow 2.15 pins: tf.keras is Keras 2, hub needs nothing more
    keras2 = table_facts(HUB_160, installed("keras", "2.15.0"), tf_version="2.15.0.post1")
    assert not any("needs tf-keras" in p.summary for p in static_problems(keras2))


@pytest.mark.parametrize("library", [installed("tensorflow-model-optimization", "0.8.0"),
                                     installed("tensorflow-probability", "0.25.0"),
                                     installed("tensorflow-decision-forests", "1.12.0")])
def test_every_library_whose_wheel_imports_tf_keras_is_flagged_under_keras_3_without_it(library):
    outcome = companions.run(table_facts(library))
    assert outcome.status is Status.FAIL and "needs tf-keras" in outcome.summary, outcome.summary


@pytest.mark.parametrize("facts, status", [
    # tf-keras of this TensorFlow installed: the tables know the need is met (issue 38: judged, a pass), for a
    # library without a Keras layer, or one whose layer fits tf.keras switched to tf-keras (hub's: the test below)
    (table_facts(installed("tensorflow-model-optimization", "0.8.0"), installed("tf-keras", "2.21.0")), Status.PASS),
    (table_facts(HUB_160, installed("tf-keras", "2.21.0"), environment={"TF_USE_LEGACY_KERAS": "1"}), Status.PASS),
    (table_facts(HUB_160, tf_version="2.15.1"), Status.SKIP),  # TensorFlow 2.15: tf.keras is Keras 2
    (table_facts(HUB_160, environment={"TF_USE_LEGACY_KERAS": "1"}), Status.SKIP),  # the keras check's case
    (table_facts(installed("tensorflow-hub", "0.15.0"), tf_version="2.15.1"), Status.SKIP),  # Keras 2 tf.keras
], ids=["tf-keras-installed", "hub-with-tf-keras-as-tf-keras", "keras-2", "legacy-variable-set",
        "hub-0.15-under-keras-2"])
def test_no_warning_where_the_library_has_what_it_needs(facts, status):
    outcome = companions.run(facts)
    assert outcome.status is status, outcome.summary
    assert status is Status.SKIP or outcome.evidence["judged"] == "tables"


@pytest.mark.parametrize("library, moved, layer", [
    (installed("tensorflow-hub", "0.15.0"), "0.16.0", True),  # tensorflow/hub#903 (0.12 under 2.16), #901 (0.15 under 2.16)
    (installed("deepface", "0.0.87"), "0.0.88", False),       # serengil's own issue: 'tf 2.16 causes ... KerasTensor'
])
def test_a_release_older_than_its_librarys_move_to_tf_keras_is_upgraded_past_it(library, moved, layer):
    # the table reads each library's wheels: from `moved` on it imports tf_keras; an older release was written for
    # Keras 2 as tf.keras, which TensorFlow 2.16+ makes Keras 3. tf-keras and TF_USE_LEGACY_KERAS=1 do not repair
    # hub 0.15 (it imports tf.estimator, gone in 2.16: hub#901, and measured): the repair upgrades past the move,
    # with tf-keras; a library exporting a Keras 2 layer (hub's KerasLayer) also needs tf.keras to be tf-keras
    outcome = companions.run(table_facts(library))
    assert outcome.status is Status.FAIL and "made for Keras 2 as tf.keras" in outcome.summary, outcome.summary
    assert any(f"{moved} and later import tf_keras" in d for d in outcome.details)
    repairs = outcome.remediation.repairs
    assert [r.packages for r in repairs if r.action is Action.INSTALL] == [("tf-keras==2.21.0",),
                                                                           (f"{library['name']}>={moved}",)]
    assert [r.variable for r in repairs if r.action is Action.SET_ENV] == (["TF_USE_LEGACY_KERAS"] if layer else [])
    assert f"Upgrade {library['name']} to {moved} or later" in outcome.remediation.advice


def test_a_tfp_release_whose_import_check_refuses_the_installed_tensorflow_fails_without_the_child():
    """tensorflow-probability 0.25.0 raises at import below TensorFlow 2.18 (its source, companions_curated.toml):
    a saved report with TensorFlow 2.16.2 is flagged and gets the release that accepts 2.16."""
    outcome = companions.run(table_facts(installed("tensorflow-probability", "0.25.0"), installed("tf-keras", "2.16.0"),
                                     tf_version="2.16.2"))
    assert outcome.status is Status.FAIL and "refuses" in outcome.summary
    assert [r.packages for r in outcome.remediation.repairs] == [("tensorflow-probability==0.24.0",)]


def test_an_addons_release_that_warns_at_import_warns_without_the_child():
    outcome = companions.run(table_facts(installed("tensorflow-addons", "0.23.0")))
    assert outcome.status is Status.WARN and "does not support" in outcome.summary


def test_a_companion_made_for_another_tensorflow_is_flagged_from_the_table_where_its_metadata_is_not_recorded():
    """An older report without Requires-Dist: companions.toml says tensorflow-text 2.15.0 requires tensorflow<2.16."""
    outcome = companions.run(table_facts(installed("tensorflow-text", "2.15.0")))
    assert outcome.status is Status.FAIL and "built for another TensorFlow" in outcome.summary
    assert [r.packages for r in outcome.remediation.repairs] == [("tensorflow-text==2.21.1",)]
    # with its Requires-Dist recorded too (issue 38, build 1): the import the child would have tried fails, as the
    # live run's does; the dependencies check judges the pin beside it
    recorded = companions.run(table_facts(TEXT))
    assert recorded.status is Status.FAIL and "judged from the companion table's Requires-Dist" in recorded.summary
    assert [r.packages for r in recorded.remediation.repairs] == [("tensorflow-text==2.21.1",)]


TF_KERAS_215 = installed("tf-keras", "2.15.1", requires=["tensorflow<2.16,>=2.15"])


def test_a_tf_keras_of_another_release_fails_without_the_child_where_it_is_tf_keras():
    """tf-keras 2.15.1 beside TensorFlow 2.21 (the live suite's tf-keras-of-another-release): with TF_USE_LEGACY_KERAS
    tf.keras is that tf-keras, and it fails; without it a warning (tf-keras is pure Python), as its recorded pin."""
    legacy = companions.run(table_facts(TF_KERAS_215, environment={"TF_USE_LEGACY_KERAS": "1"}))
    assert legacy.status is Status.FAIL and "tf-keras 2.15.1 was built for another TensorFlow" in legacy.summary
    assert [r.packages for r in legacy.remediation.repairs] == [("tf-keras==2.21.0",)]
    assert companions.run(table_facts(TF_KERAS_215)).status is Status.WARN


def test_a_tf_keras_release_the_table_lacks_is_judged_by_its_minor():
    """tf-keras is released in step with TensorFlow, one line per minor: 2.20.7 (no such row) is not 2.21's."""
    outcome = companions.run(table_facts(installed("tf-keras", "2.20.7"), environment={"TF_USE_LEGACY_KERAS": "1"}))
    assert outcome.status is Status.FAIL and "in step with TensorFlow's" in outcome.summary
    fits = companions.run(table_facts(installed("tf-keras", "2.21.7"), environment={"TF_USE_LEGACY_KERAS": "1"}))
    assert fits.status is not Status.FAIL and fits.status is not Status.WARN


def test_with_the_childs_imports_a_keras_2_library_under_keras_3_is_still_flagged():
    """tensorflow-model-optimization 0.8.0 imports fine under Keras 3 without tf-keras (it falls back to tf.keras)
    and breaks on use: the child's clean import does not clear it."""
    facts = facts_with(entry("tensorflow_model_optimization", status="ok"),
                       distributions=(installed("tensorflow-model-optimization", "0.8.0"),))
    outcome = companions.run(facts)
    assert outcome.status is Status.FAIL and "tensorflow-model-optimization 0.8.0 needs tf-keras" in outcome.summary


def test_decision_forests_checks_its_exact_tensorflow_at_import_read_from_its_wheel():
    """tensorflow-decision-forests 1.12.0's __init__.py: compatible_tf_versions = ["2.19.0"], a warning otherwise
    (companion_import_checks.toml, generated from the wheel). The warning is not the verdict: its Requires-Dist pins
    tensorflow==2.19.0, and its compiled ops are built against that TensorFlow (decision-forests#214), so a fail."""
    outcome = companions.run(table_facts(installed("tensorflow-decision-forests", "1.12.0"), installed("tf-keras", "2.21.0")))
    assert outcome.status is Status.FAIL and "built for another TensorFlow" in outcome.summary
    assert "its import only warns" in outcome.summary and "its Requires-Dist: " in " ".join(outcome.details)
    assert "tensorflow_decision_forests/__init__.py:57" in " ".join(outcome.details)
    assert accepts_at_import("tensorflow-decision-forests", "1.12.0", "2.19.0") is True
    assert accepts_at_import("tensorflow-decision-forests", "1.12.0", "2.19.1") is False


# --- issue 29, round 2: the child's record counts without a listed TensorFlow; where a companion can work ---

def test_a_companion_with_no_wheel_for_this_platform_is_told_where_it_works():
    # fixtures/fresh/windows-python-3.10-decision-forests-inference-so (tensorflow#72106): TF-DF on Windows, a
    # report whose list does not name tensorflow-intel; no TF-DF release has a Windows wheel: WSL2, no install step
    from tests.fixtures_support import FRESH, load_fixture

    facts = load_fixture(FRESH / "windows-python-3.10-decision-forests-inference-so.json")["facts"]
    outcome = companions.run(facts)
    assert outcome.status is Status.FAIL, outcome.summary
    assert "No release of tensorflow-decision-forests has a wheel for windows-x86_64" in outcome.remediation.advice
    assert "WSL2" in outcome.remediation.advice and outcome.remediation.repairs == ()


def test_the_childs_record_is_judged_when_the_report_lists_no_distributions():
    # fixtures/fresh/tensorflow-io-plugins-undefined-tsl-mutex-python-3.12 (argonne-lcf/dlio_benchmark#305)
    warning = ("unable to load libtensorflow_io_plugins.so: unable to open file: libtensorflow_io_plugins.so, from "
               "paths: ['/usr/local/lib/python3.12/site-packages/tensorflow_io/python/ops/libtensorflow_io_plugins.so']"
               "\ncaused by: ['/usr/local/lib/python3.12/site-packages/tensorflow_io/python/ops/"
               "libtensorflow_io_plugins.so: undefined symbol: _ZN3tsl5mutex6unlockEv']")
    io = entry("tensorflow_io", "ok", warnings=[{"category": "UserWarning", "message": warning}])
    facts = {"host": {"system": "Linux"}, "python": {"version": "3.12"},
             "tensorflow": {"status": "ok", "imported": True, "version": None, "companions": [io]}}
    outcome = companions.run(facts)
    assert outcome.status is Status.FAIL
    assert "tensorflow-io was built for another TensorFlow" in outcome.summary
    # which TensorFlow the report does not say: the advice names the one tensorflow-io's newest release is made for
    assert "tensorflow-io 0.37.1, its newest release, is made for TensorFlow <2.17.0,>=2.16.0" in outcome.remediation.advice
    # no child and no list: nothing to judge, and no claim that TensorFlow is missing
    assert companions.run({"host": {"system": "Linux"}}).summary == "not recorded: distributions"


# --- issue 29, round 3: judged from the tables where the report holds little -------------------------------

def test_a_companion_naming_tensorflow_only_in_an_extra_is_judged_by_that_extra():
    # tensorflow/io#1972: tensorflow-io 0.36.0 (its `tensorflow` extra: <2.16,>=2.15) beside TensorFlow 2.16.1,
    # a saved report without the child: the release made for 2.16 is 0.37.1 (extra <2.17,>=2.16)
    facts = table_facts(installed("tensorflow-io", "0.36.0"), tf_version="2.16.1")
    outcome = companions.run(facts)
    assert outcome.status is Status.FAIL, outcome.summary
    assert "tensorflow-io 0.36.0 was built for another TensorFlow than tensorflow-cpu 2.16.1" in outcome.summary
    assert "tensorflow-io==0.37.1" in [p for r in outcome.remediation.repairs for p in r.packages]


def test_a_companion_tensorflow_itself_requires_is_never_judged_by_its_own_extras():
    # tensorflow-io-gcs-filesystem 0.37.1's extras say tensorflow<2.17, but TensorFlow requires it >=0.23.1: no
    # companion of this check's to judge in a complete list (the dependencies check judges TensorFlow's own pins)
    facts = table_facts(installed("tensorflow-io-gcs-filesystem", "0.37.1"), tf_version="2.18.0")
    assert companions.run(facts).status is Status.PASS


def test_only_a_shim_in_a_partial_windows_list_is_its_real_build_and_a_companion_without_wheels_there_gets_wsl2():
    # tensorflow/text#1349: Windows, `tensorflow` 2.18 (the shim for tensorflow-intel, which the thread's list
    # leaves out) beside tensorflow-text 2.10.0; no tensorflow-text made for 2.18 has a Windows wheel
    from tfdoctor.facts import made_for

    facts = {"host": {"system": "Windows", "machine": "AMD64"}, "python": {"machine": "AMD64"},
             "distributions": [{"name": "tensorflow", "version": "2.18"}, {"name": "tensorflow-text", "version": "2.10.0"}]}
    assert made_for.installed_tensorflow(facts) == ("tensorflow-intel", "2.18")
    outcome = companions.run(facts)
    assert outcome.status is Status.FAIL, outcome.summary
    assert "have no wheel for windows-x86_64" in outcome.remediation.advice and "WSL2" in outcome.remediation.advice
    assert not outcome.remediation.repairs  # no tensorflow-text install that has no wheel here
    # a complete list (the environment's own) naming only the shim: no real build is assumed
    facts["python"]["distribution_count"] = 2
    assert made_for.installed_tensorflow(facts) is None


def test_a_keras_2_library_failing_under_keras_3_without_tf_keras_is_told_tf_keras():
    # keras-team/keras-io#1945: `import tensorflow_probability` fails with an error no signature knows, Keras 3.5.0
    # is installed, tf-keras is not, the report gives no TensorFlow version: TFP's releases import tf_keras
    failing = entry("tensorflow_probability", message="module 'tensorflow._api.v2.compat.v2.__internal__' has no "
                    "attribute 'register_load_context_function'", kind="AttributeError")
    facts = {"host": {"system": "Darwin"}, "python": {"version": "3.10.9"},
             "distributions": [{"name": "keras", "version": "3.5.0"}],
             "tensorflow": {"status": "ok", "imported": True, "version": None, "companions": [failing]}}
    outcome = companions.run(facts)
    assert outcome.status is Status.FAIL
    assert "under Keras 3, and tf-keras is not installed" in outcome.summary
    assert "tf-keras" in outcome.remediation.advice
    # with tf-keras installed the error is not that: it stays unknown
    facts["distributions"].append({"name": "tf-keras", "version": "2.16.0"})
    assert "does not know this error" in companions.run(facts).remediation.advice


def test_a_tf_keras_of_another_tensorflow_warns_from_the_table_where_its_metadata_is_not_recorded():
    """A partial report (names and versions only): tf-keras 2.17.0 requires tensorflow<2.18,>=2.17 (companions.toml,
    from its PyPI metadata). The same warning the dependencies check gives when the pin is recorded, and its fix."""
    facts = table_facts(installed("tf-keras", "2.17.0"), tf_version="2.18.0")
    outcome = companions.run(facts)
    assert outcome.status is Status.WARN and "tf-keras 2.17.0 was built for another TensorFlow" in outcome.summary
    result = CheckResult("companions", "c", outcome.status, outcome.summary, remediation=outcome.remediation)
    plan = build_plan([result], facts)
    assert [s.packages for s in plan.steps] == [("tf-keras==2.18.0",)] and plan.moves_tensorflow is None
    fits = companions.run(table_facts(installed("tf-keras", "2.18.0"), tf_version="2.18.0"))
    assert fits.status is Status.PASS and "judged from the companion tables" in fits.summary


def test_an_older_series_of_a_library_finds_its_own_row_in_the_generated_table():
    """tf_keras_users.toml holds the newest release of each minor series since Keras 3 became tf.keras: transformers
    4.x imports tf_keras (its TensorFlow models), 5.x has no TensorFlow side; a partial report (aside5's
    huggingface/transformers#36410) listing transformers 4.49.0 beside TensorFlow 2.18 and no tf-keras is told it."""
    outcome = companions.run(table_facts(installed("transformers", "4.49.0"), tf_version="2.18.0"))
    assert outcome.status is Status.FAIL and "transformers 4.49.0 needs tf-keras" in outcome.summary
    assert companions.run(table_facts(installed("transformers", "5.24.0"), tf_version="2.18.0")).status is Status.PASS


def test_companions_the_tables_judge_fit_pass_without_the_child_and_unknown_ones_still_skip():
    """round 5 (AlexanderVNikitin/tsgm#47): tensorflow-probability 0.23.0 beside tensorflow-macos 2.15 works; its
    import check (>=2.15, read from its wheel) judges it. Companions TensorFlow's own Requires-Dist ranges (keras,
    tensorflow-estimator ...) are the dependencies check's, not unknowns; a companion no table knows keeps the skip."""
    fits = companions.run(table_facts(installed("tensorflow-probability", "0.23.0"), installed("keras", "2.15.0"),
                                      installed("tensorflow-estimator", "2.15.0"), tf_version="2.15.0"))
    assert fits.status is Status.PASS and "tensorflow-probability 0.23.0 fits" in fits.summary
    unknown = companions.run(table_facts(installed("tensorflow-serving-api", "2.15.0"), tf_version="2.15.0"))
    assert unknown.status is Status.SKIP


def test_an_import_that_only_warns_that_it_does_not_support_this_tensorflow_is_a_warning_from_the_child_too():
    """round 5 (tensorflow/tfjs#8301): TF-DF 1.8.1 imports under TensorFlow 2.15.1 and logs that it supports only
    2.15.0 (its check, read from its wheel); its Requires-Dist (tensorflow~=2.15.0) admits 2.15.1, so a warning."""
    entry = {"module": "tensorflow_decision_forests", "status": "ok", "version": "1.8.1", "exception": None,
             "warnings": [], "log": []}
    facts = facts_with(entry, distributions=(installed("tensorflow-decision-forests", "1.8.1"),))
    facts["distributions"][0]["version"] = "2.15.1"
    facts["tensorflow"]["version"] = "2.15.1"
    outcome = companions.run(facts)
    assert outcome.status is Status.WARN and "tensorflow-decision-forests 1.8.1 warns at import" in outcome.summary


def test_a_library_with_only_patch_releases_finds_its_own_row():
    """deepface is released as 0.0.N only: the generated table keeps each such release since Keras 3 became tf.keras
    (aside6's deepface 0.0.92 under TensorFlow 2.16.2 without tf-keras, scored before this change)."""
    outcome = companions.run(table_facts(installed("deepface", "0.0.92"), tf_version="2.16.2"))
    assert outcome.status is Status.FAIL and "deepface 0.0.92 needs tf-keras" in outcome.summary


# --- an undeclared need: a module its provider no longer has; a release from before the move to tf_keras --------

NO_PKG_RESOURCES = {"message": "No module named 'pkg_resources'", "kind": "ModuleNotFoundError"}
HUB_161 = installed("tensorflow-hub", "0.16.1", requires=["numpy >=1.12.0", "protobuf >=3.19.6", "tf-keras >=2.14.1"])


@pytest.mark.parametrize("setuptools, has", [(installed("setuptools", "84.2.1"), "setuptools 84.2.1, installed here, has not"),
                                             (None, "setuptools is not installed")])
def test_a_module_its_provider_removed_gets_the_providers_releases_that_have_it(setuptools, has):
    # tensorflow/hub#934: hub 0.16.1 imports pkg_resources without requiring setuptools, and setuptools 82 removed it
    # (knowledge/module_providers.toml); tf-keras is there, so only setuptools and, for hub's KerasLayer under
    # Keras 3, TF_USE_LEGACY_KERAS are asked for
    facts = facts_with(entry("tensorflow_hub", **NO_PKG_RESOURCES),
                       distributions=(HUB_161, installed("tf-keras", "2.21.0"), *([setuptools] if setuptools else [])))
    outcome = companions.run(facts)
    assert outcome.status is Status.FAIL and "does not know" not in outcome.remediation.advice
    assert "tensorflow-hub 0.16.1 imports pkg_resources, which setuptools<82 provides" in outcome.summary
    assert has in outcome.summary
    assert [(r.action, r.packages, r.variable) for r in outcome.remediation.repairs] == [
        (Action.INSTALL, ("setuptools<82",), None), (Action.SET_ENV, (), "TF_USE_LEGACY_KERAS")]


def test_a_provider_that_still_has_the_module_is_not_blamed():
    # setuptools 81 has pkg_resources: the module went missing some other way, which no rule here names
    facts = facts_with(entry("tensorflow_hub", **NO_PKG_RESOURCES),
                       distributions=(HUB_161, installed("tf-keras", "2.21.0"), installed("setuptools", "81.0.0")))
    outcome = companions.run(facts)
    assert outcome.status is Status.FAIL and "setuptools<82" not in outcome.summary
    assert not any(r.packages == ("setuptools<82",) for r in outcome.remediation.repairs)


def test_hub_0_15_failing_under_keras_3_is_upgraded_past_the_move_with_each_need_in_one_repair():
    # measured: hub 0.15.0 beside TensorFlow 2.21 fails on pkg_resources (setuptools 84), and with setuptools 81 on
    # `tensorflow.compat.v1.estimator` (gone since 2.16, hub#901); tf-keras with TF_USE_LEGACY_KERAS does not repair
    # it, hub 0.16 and later with tf-keras do: every need is in the repair, so the pasted plan gets past both errors
    facts = facts_with(entry("tensorflow_hub", **NO_PKG_RESOURCES),
                       distributions=(installed("tensorflow-hub", "0.15.0"), installed("setuptools", "84.2.1")))
    outcome = companions.run(facts)
    assert outcome.status is Status.FAIL and "under Keras 3, and tf-keras is not installed" in outcome.summary
    assert [(r.action, r.packages, r.variable) for r in outcome.remediation.repairs] == [
        (Action.INSTALL, ("setuptools<82",), None), (Action.INSTALL, ("tf-keras==2.21.0",), None),
        (Action.INSTALL, ("tensorflow-hub>=0.16.0",), None), (Action.SET_ENV, (), "TF_USE_LEGACY_KERAS")]
    assert "Upgrade tensorflow-hub to 0.16.0 or later" in outcome.remediation.advice
    estimator = entry("tensorflow_hub", message="cannot import name 'estimator' from 'tensorflow.compat.v1'")
    later = companions.run(facts_with(estimator, distributions=(installed("tensorflow-hub", "0.15.0"),)))
    assert [r.packages for r in later.remediation.repairs if r.action is Action.INSTALL] == [
        ("tf-keras==2.21.0",), ("tensorflow-hub>=0.16.0",)]


def test_hubs_keras_2_layer_beside_tf_keras_under_keras_3_is_judged_from_the_tables():
    """Issue 38: tensorflow-hub 0.16.1 with tf-keras installed and tf.keras Keras 3 (TF_USE_LEGACY_KERAS unset):
    hub.KerasLayer subclasses tf_keras's Layer (companion_layers.toml; its wheel imports tf_keras), which a tf.keras
    model refuses. The child sees it as the layer's base class; a report without the child's facts must see it from
    the distributions (mediapipe-model-maker#5542's environment: TensorFlow 2.19, hub 0.16.1, tf-keras 2.19)."""
    hub = installed("tensorflow-hub", "0.16.1", requires=["numpy >=1.12.0", "protobuf >=3.19.6", "tf-keras >=2.14.1"])
    tf_keras = installed("tf-keras", "2.21.0", requires=["tensorflow<2.22,>=2.21"])
    facts = table_facts(hub, tf_keras, installed("keras", "3.13.1"))
    outcome = companions.run(facts)
    assert outcome.status is Status.FAIL, outcome.summary
    assert "tensorflow_hub.KerasLayer is a layer of another Keras than tf.keras" in outcome.summary
    assert "tensorflow-hub 0.16.1" in outcome.summary and outcome.evidence["judged"] == "tables"
    # tf-keras of this TensorFlow is there: the shell's switch is the whole repair
    assert [(r.action, r.variable, r.value) for r in outcome.remediation.repairs] == [
        (Action.SET_ENV, "TF_USE_LEGACY_KERAS", "1")]
    # a tf-keras of another release is replaced by this TensorFlow's, with the switch
    facts_old = table_facts(hub, installed("tf-keras", "2.19.0"), installed("keras", "3.13.1"))
    assert {(r.action, r.packages, r.variable) for r in companions.run(facts_old).remediation.repairs} == {
        (Action.INSTALL, ("tf-keras==2.21.0",), None), (Action.SET_ENV, (), "TF_USE_LEGACY_KERAS")}
    # tf.keras already switched to tf-keras, or TensorFlow 2.15 (tf.keras is Keras 2): the layer fits
    switched = table_facts(hub, tf_keras, installed("keras", "3.13.1"), environment={"TF_USE_LEGACY_KERAS": "1"})
    assert not any("another Keras" in p.summary for p in static_problems(switched))
    keras2 = table_facts(hub, installed("tf-keras", "2.15.1"), installed("keras", "2.15.0"), tf_version="2.15.1")
    assert not any("another Keras" in p.summary for p in static_problems(keras2))


# --- libraries in no list, read from their own files (issue 38, build 5) ----------------------------------------

RETINA = "linux/retina-face-0.0.17-keras-3-without-tf-keras.json"
TRANSFORMERS_5 = "linux/transformers-5-beside-tensorflow-2.21-no-tensorflow-code.json"
TRANSFORMERS_4 = "linux/transformers-4.57-with-tf-keras-beside-tensorflow-2.21-healthy.json"


def _plan_commands(facts: dict) -> str:
    from tfdoctor.checking.registry import all_checks
    from tfdoctor.checking.runner import run_checks

    plan = build_plan(run_checks(all_checks(), facts), facts)
    return "\n".join(step.command for step in plan.steps)


def test_a_library_in_no_list_whose_files_import_tf_keras_needs_tf_keras_under_keras_3():
    """retina-face 0.0.17 is in no table: its own package_utils.py imports tf_keras (read through its RECORD), so
    under TensorFlow 2.21 without tf-keras it fails, saying where it read that, with the tf-keras made for 2.21."""
    from tests.builders import fixture_facts

    facts = fixture_facts(RETINA)
    outcome = companions.run(facts)
    assert outcome.status is Status.FAIL
    assert outcome.summary == "retina-face 0.0.17 needs tf-keras under Keras 3, and tf-keras is not installed"
    assert "read from its files: retinaface/commons/package_utils.py:19" in outcome.details
    assert "--no-deps -- 'tf-keras==2.21.0'" in _plan_commands(facts)
    # the same library with tf-keras installed, or whose import of tf_keras has a fallback, is no finding
    with_tf_keras = fixture_facts(RETINA)
    with_tf_keras["distributions"].append({"name": "tf-keras", "version": "2.21.0", "requires": ["tensorflow<2.22,>=2.21"]})
    assert companions.run(with_tf_keras).status is Status.PASS
    optional = fixture_facts(RETINA)
    imports = next(d for d in optional["distributions"] if d["name"] == "retina-face")["imports"]
    imports.update(tf_keras=[], tf_keras_files=0, tf_keras_optional_files=1)
    assert not [p for p in static_problems(optional) if p.module == "retina-face"]


def test_a_library_read_from_its_files_is_flagged_beside_the_childs_imports_too():
    """The live path (the child imported TensorFlow and the companions) adds the files' finding as the tables' one."""
    from tests.builders import fixture_facts

    facts = fixture_facts(RETINA)
    facts["tensorflow"] = {"status": "ok", "imported": True, "stage": "done", "version": "2.21.0", "companions": []}
    outcome = companions.run(facts)
    assert outcome.status is Status.FAIL and "retina-face 0.0.17 needs tf-keras" in outcome.summary


def test_transformers_5_without_tensorflow_code_beside_a_tensorflow_only_environment_warns_with_the_way_back():
    """transformers 5 removed its TensorFlow classes (none of its files imports tensorflow or tf_keras); with TensorFlow
    installed and no PyTorch or JAX, a warning names it and its last release with TensorFlow code, and the plan puts
    transformers<5.0.0 and its tf-keras in place, TensorFlow kept; the advice names the other choice."""
    from tests.builders import fixture_facts

    facts = fixture_facts(TRANSFORMERS_5)
    outcome = companions.run(facts)
    assert outcome.status is Status.WARN
    assert outcome.summary.startswith("transformers 5.24.0 ships no TensorFlow code")
    assert "transformers 4.57.6 was the last release with them" in outcome.summary
    assert any(d.startswith("read from its files: 2912 .py files") for d in outcome.details)
    assert "PyTorch or JAX" in outcome.remediation.advice
    commands = _plan_commands(facts)
    assert "'transformers<5.0.0' 'tensorflow-cpu==2.21.0'" in commands
    assert "--no-deps -- 'tf-keras==2.21.0'" in commands


@pytest.mark.parametrize("change", ["torch", "jax", "no tensorflow", "incomplete", "tensorflow code"])
def test_transformers_5_is_no_finding_where_the_environment_is_not_set_up_for_tensorflow_alone(change):
    """Healthy: transformers 5 beside PyTorch or JAX (its frameworks), without TensorFlow, or where its files were not
    all read or do hold TensorFlow code."""
    from tests.builders import fixture_facts

    facts = fixture_facts(TRANSFORMERS_5)
    transformers = next(d for d in facts["distributions"] if d["name"] == "transformers")
    if change in ("torch", "jax"):
        facts["distributions"].append({"name": change, "version": "2.9.0" if change == "torch" else "0.7.2"})
    elif change == "no tensorflow":
        facts["distributions"] = [d for d in facts["distributions"] if d["name"] != "tensorflow-cpu"]
    elif change == "incomplete":
        transformers["imports"]["complete"] = False
    else:
        transformers["imports"]["tensorflow_files"] = 12
    assert companions.run(facts).status is not Status.WARN
    assert not [p for p in static_problems(facts) if p.module == "transformers"]


def test_transformers_4_with_its_tf_keras_beside_tensorflow_2_21_passes():
    from tests.builders import fixture_facts

    facts = fixture_facts(TRANSFORMERS_4)
    assert companions.run(facts).status is Status.PASS
    assert _plan_commands(facts) == ""
