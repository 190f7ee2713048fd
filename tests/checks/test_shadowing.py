"""Modules that hide the installed ones: the shadowing check on constructed module origins, tensorflow-import
pointing at it, and the plan holding its install steps back while a copy hides a module. Where the target
finds each module (child/target_info.py, run for real): tests/child/test_module_origins.py."""

from __future__ import annotations

import json

from checks.shadowing import shadowing_check
from tests.builders import fixture_facts
from tfdoctor.facts import shadowing
from tfdoctor.checks import tensorflow_import as tensorflow_import_check
from tfdoctor.results.model import CheckResult, Remediation, Status
from tfdoctor.plan.planner import build_plan
from tfdoctor.checking.registry import all_checks
from tfdoctor.results.repairs import Action, Repair
from tfdoctor.checking.runner import run_checks

SITE = "/home/user/proj/.venv/lib/python3.11/site-packages"
STDLIB = "/usr/lib/python3.11"


# --- the check, on constructed facts -----------------------------------------------------------------------

def entries(*extra: dict) -> list[dict]:
    return [{"path": "", "kind": "working-directory", "pth": None, "pythonpath_item": None}, *extra,
            {"path": STDLIB, "kind": "stdlib", "pth": None, "pythonpath_item": None},
            {"path": SITE, "kind": "site-packages", "pth": None, "pythonpath_item": None}]


def installed(name: str, origin: str | None = None) -> dict:
    path = origin or f"{SITE}/{name.replace('.', '/')}/__init__.py"
    return {"module": name, "found": True, "origin": path, "entry": SITE, "entry_index": 2, "kind": "site-packages",
            "namespace": False, "copies": []}


def origins_with(*modules: dict, extra_entries: tuple = (), **top) -> dict:
    names = {m["module"] for m in modules}
    every = list(modules) + [installed(n) for n in ("tensorflow", "keras", "numpy", "google.protobuf", "ml_dtypes")
                             if n not in names]
    return {"cwd": "/home/user/proj", "pythonpath": None, "safe_path": False, "no_user_site": False,
            "installation_site_dirs": [SITE], "entries": entries(*extra_entries), "modules": every,
            "shell_lines": [], **top}


def facts_with(origins: dict | None, system: str = "Linux") -> dict:
    python = {"executable": "/home/user/proj/.venv/bin/python", "version": "3.11.7", "in_venv": True,
              "prefix": "/home/user/proj/.venv", "site_packages": [SITE]}
    if origins is not None:
        python["module_origins"] = origins
    return {"host": {"system": system, "machine": "x86_64"}, "python": python,
            "distributions": [{"name": "tensorflow-cpu", "version": "2.21.0", "location": SITE, "top_level": ["tensorflow"]},
                              {"name": "numpy", "version": "2.1.3", "location": SITE, "top_level": ["numpy"]},
                              {"name": "numpy", "version": "1.23.5", "location": "/opt/old", "top_level": ["numpy"]}]}


SITE_COPY = [{"origin": f"{SITE}/tensorflow/__init__.py", "entry": SITE, "kind": "site-packages"}]
PROJECT_TF = {"module": "tensorflow", "found": True, "origin": "/home/user/proj/tensorflow.py", "entry": "",
              "entry_index": 0, "kind": "working-directory", "namespace": False, "copies": SITE_COPY}
OLD_NUMPY = {"module": "numpy", "found": True, "origin": "/opt/old/numpy/__init__.py", "entry": "/opt/old",
             "entry_index": 1, "kind": "PYTHONPATH", "namespace": False,
             "copies": [{"origin": f"{SITE}/numpy/__init__.py", "entry": SITE, "kind": "site-packages"}]}
OLD_NUMPY_ENTRY = {"path": "/opt/old", "kind": "PYTHONPATH", "pth": None, "pythonpath_item": "/opt/old"}


def test_every_module_from_site_packages_passes():
    outcome = shadowing_check.run(facts_with(origins_with()))
    assert outcome.status is Status.PASS and outcome.remediation is None
    assert "tensorflow, keras, numpy, google.protobuf, ml_dtypes come from this installation" in outcome.summary


def test_not_recorded_and_could_not_tell_skip():
    assert shadowing_check.run(facts_with(None)).status is Status.SKIP
    outcome = shadowing_check.run(facts_with({"error": "OSError: boom"}))
    assert outcome.status is Status.SKIP and "OSError: boom" in outcome.summary


def test_tensorflow_py_in_the_project_fails_with_a_rename_that_unhides_tensorflow():
    outcome = shadowing_check.run(facts_with(origins_with(PROJECT_TF)))
    assert outcome.status is Status.FAIL
    assert outcome.summary.startswith("`import tensorflow` imports /home/user/proj/tensorflow.py from the working "
                                      "directory /home/user/proj")
    assert outcome.summary.endswith("not tensorflow-cpu 2.21.0 in site-packages")
    (repair,) = outcome.remediation.repairs
    assert repair == Repair.rename("/home/user/proj/tensorflow.py", "/home/user/proj/my_tensorflow.py",
                                   repair.reason, unhides=("tensorflow",))
    assert outcome.remediation.commands == ()


def test_a_project_package_folder_is_renamed_whole():
    numpy_dir = dict(PROJECT_TF, module="numpy", origin="/home/user/proj/numpy/__init__.py", copies=[])
    outcome = shadowing_check.run(facts_with(origins_with(numpy_dir)))
    assert outcome.status is Status.FAIL  # a project folder named like the module fails even with no copy hidden
    assert outcome.remediation.repairs[0].path == "/home/user/proj/numpy"
    assert outcome.remediation.repairs[0].new_path == "/home/user/proj/my_numpy"


def test_pythonpath_hiding_an_old_numpy_names_the_entry_and_unsets_the_variable():
    origins = origins_with(OLD_NUMPY, extra_entries=(OLD_NUMPY_ENTRY,), pythonpath="/opt/old",
                           shell_lines=[{"file": "/home/user/.bashrc", "line": 12, "text": "export PYTHONPATH=/opt/old"}])
    outcome = shadowing_check.run(facts_with(origins))
    assert outcome.status is Status.FAIL
    assert outcome.summary == ("`import numpy` imports /opt/old/numpy/__init__.py (numpy 1.23.5) from the PYTHONPATH "
                               "entry /opt/old, not numpy 2.1.3 in site-packages")
    (repair,) = outcome.remediation.repairs
    assert repair.action is Action.UNSET_ENV and repair.variable == "PYTHONPATH" and repair.unhides == ("numpy",)
    assert "/home/user/.bashrc line 12 (`export PYTHONPATH=/opt/old`)" in outcome.remediation.advice


def test_pythonpath_keeps_its_other_entries_with_the_target_separator():
    entry = dict(OLD_NUMPY_ENTRY, path="C:\\old", pythonpath_item="C:\\old")
    numpy_old = dict(OLD_NUMPY, origin="C:\\old\\numpy\\__init__.py", entry="C:\\old")
    origins = origins_with(numpy_old, extra_entries=(entry,), pythonpath="C:\\old;C:\\tools")
    (repair,) = shadowing_check.run(facts_with(origins, system="Windows")).remediation.repairs
    assert repair.action is Action.SET_ENV and repair.value == "C:\\tools"


def test_pythonpath_without_an_installed_copy_is_an_install_of_its_own():
    alone = dict(OLD_NUMPY, copies=[])
    outcome = shadowing_check.run(facts_with(origins_with(alone, extra_entries=(OLD_NUMPY_ENTRY,), pythonpath="/opt/old")))
    assert outcome.status is Status.PASS
    assert any("numpy comes from PYTHONPATH" in line for line in outcome.details)


def test_user_site_hiding_site_packages_sets_pythonnousersite():
    user = "/home/user/.local/lib/python3.11/site-packages"
    hiding = dict(OLD_NUMPY, origin=f"{user}/numpy/__init__.py", entry=user, kind="user-site")
    origins = origins_with(hiding, extra_entries=({"path": user, "kind": "user-site", "pth": None, "pythonpath_item": None},))
    outcome = shadowing_check.run(facts_with(origins))
    assert outcome.status is Status.FAIL and "the user site" in outcome.summary
    (repair,) = outcome.remediation.repairs
    assert (repair.action, repair.variable, repair.value, repair.unhides) == (Action.SET_ENV, "PYTHONNOUSERSITE", "1", ("numpy",))


def test_a_user_site_install_hiding_nothing_passes():
    user = "/home/user/.local/lib/python3.11/site-packages"
    alone = dict(OLD_NUMPY, origin=f"{user}/numpy/__init__.py", entry=user, kind="user-site", copies=[])
    assert shadowing_check.run(facts_with(origins_with(alone))).status is Status.PASS


def test_a_pth_entry_ahead_of_site_packages_disables_that_file():
    pth = f"{SITE}/easy-install.pth"
    hiding = dict(OLD_NUMPY, origin="/opt/eggs/numpy.egg/numpy/__init__.py", entry="/opt/eggs/numpy.egg", kind="pth")
    origins = origins_with(hiding, extra_entries=({"path": "/opt/eggs/numpy.egg", "kind": "pth", "pth": pth,
                                                   "pythonpath_item": None},))
    outcome = shadowing_check.run(facts_with(origins))
    assert outcome.status is Status.FAIL and "added by " + pth in outcome.summary
    (repair,) = outcome.remediation.repairs
    assert (repair.action, repair.path, repair.new_path) == (Action.RENAME, pth, pth + ".disabled")


def test_an_entry_from_elsewhere_is_named_but_has_no_step():
    hiding = dict(OLD_NUMPY, entry="/opt/other", kind="other")
    outcome = shadowing_check.run(facts_with(origins_with(hiding, extra_entries=(
        {"path": "/opt/other", "kind": "other", "pth": None, "pythonpath_item": None},))))
    assert outcome.status is Status.FAIL and outcome.remediation.repairs == ()
    assert "sitecustomize" in outcome.remediation.advice


def test_an_editable_finder_is_not_hiding():
    editable = {"module": "keras", "found": True, "origin": "/home/user/src/keras/keras/__init__.py", "entry": None,
                "entry_index": None, "kind": "finder", "finder": "_EditableFinder", "namespace": False, "copies": []}
    outcome = shadowing_check.run(facts_with(origins_with(editable)))
    assert outcome.status is Status.PASS and any("keras comes from finder (_EditableFinder)" in d for d in outcome.details)


def test_google_py_of_the_project_hides_google_protobuf():
    missing = {"module": "google.protobuf", "found": False,
               "parent": {"found": True, "origin": "/home/user/proj/google.py", "entry": "", "kind": "working-directory",
                          "namespace": False}}
    outcome = shadowing_check.run(facts_with(origins_with(missing)))
    assert outcome.status is Status.FAIL
    assert outcome.summary.startswith("`import google.protobuf` fails: it finds /home/user/proj/google.py")
    assert outcome.remediation.repairs[0].unhides == ("google.protobuf",)


def test_two_hiding_copies_are_one_remediation_with_both_steps():
    origins = origins_with(PROJECT_TF, OLD_NUMPY, extra_entries=(OLD_NUMPY_ENTRY,), pythonpath="/opt/old")
    outcome = shadowing_check.run(facts_with(origins))
    assert [r.action for r in outcome.remediation.repairs] == [Action.RENAME, Action.UNSET_ENV]
    assert any(d.startswith("Also: `import numpy`") for d in outcome.details)


def stdlib_shadow(name: str, masked_by: str | None = None, package: bool = False) -> dict:
    origin = f"/home/user/proj/{name}/__init__.py" if package else f"/home/user/proj/{name}.py"
    return {"module": name, "origin": origin, "masked_by": masked_by,
            "stdlib_origin": None if masked_by == "builtin" else f"{STDLIB}/{name}.py"}


def test_a_json_py_in_the_project_fails_with_a_rename_and_names_the_standard_library():
    outcome = shadowing_check.run(facts_with(origins_with(stdlib_shadows=[stdlib_shadow("json")])))
    assert outcome.status is Status.FAIL
    assert outcome.summary == ("`import json` imports /home/user/proj/json.py from the working directory /home/user/proj "
                               "(first on sys.path, as for `python script.py` run from this folder), not the standard "
                               "library's json")
    (repair,) = outcome.remediation.repairs
    assert (repair.action, repair.path, repair.new_path, repair.unhides) == (
        Action.RENAME, "/home/user/proj/json.py", "/home/user/proj/my_json.py", ("json",))
    assert "the standard library's json" in repair.reason and "standard library's json" in outcome.remediation.advice
    assert f"hidden: {STDLIB}/json.py" in outcome.details
    assert outcome.evidence["hiding"][0]["stdlib"] is True


def test_a_package_folder_named_like_a_stdlib_module_is_renamed_whole_beside_a_tensorflow_py():
    outcome = shadowing_check.run(facts_with(origins_with(PROJECT_TF, stdlib_shadows=[stdlib_shadow("email", package=True)])))
    assert outcome.summary.startswith("`import tensorflow` imports /home/user/proj/tensorflow.py")
    assert [(r.path, r.new_path) for r in outcome.remediation.repairs] == [
        ("/home/user/proj/tensorflow.py", "/home/user/proj/my_tensorflow.py"),
        ("/home/user/proj/email", "/home/user/proj/my_email")]


def test_a_name_that_replaces_nothing_passes_with_a_note():
    """os is imported when Python starts, sys is built in, test/ is the standard library's own test suite:
    none of these files is ever imported in place of the standard library's module."""
    shadows = [stdlib_shadow("os", "startup"), stdlib_shadow("sys", "builtin"), stdlib_shadow("test", package=True)]
    outcome = shadowing_check.run(facts_with(origins_with(stdlib_shadows=shadows)))
    assert outcome.status is Status.PASS and outcome.remediation is None
    notes = [d for d in outcome.details if "stays in place" in d]
    assert len(notes) == 3 and "imported when Python starts" in notes[0] and "a built-in module" in notes[1]
    assert "no library imports" in notes[2]


def test_a_report_from_before_the_stdlib_facts_judges_as_it_did():
    origins = origins_with()
    assert "stdlib_shadows" not in origins
    assert shadowing_check.run(facts_with(origins)).status is Status.PASS


def test_a_stdlib_shadow_does_not_explain_a_failed_tensorflow_import():
    facts = facts_with(origins_with(stdlib_shadows=[stdlib_shadow("json")]))
    assert [h.module for h in shadowing.hiding(facts)] == ["json"]
    assert tensorflow_import_check.hiding_tensorflow_import(facts) == []


# --- the plan and the import check ------------------------------------------------------------------------

def test_a_hiding_copy_holds_back_every_install_step_of_the_plan():
    facts = facts_with(origins_with(OLD_NUMPY, extra_entries=(OLD_NUMPY_ENTRY,), pythonpath="/opt/old"))
    hiding = CheckResult.from_dict({**_result("shadowing", shadowing_check.run(facts))})
    pin = CheckResult("dependencies", "Declared dependencies", Status.FAIL, "numpy 1.23.5 is outside numpy>=2.0.0",
                      remediation=Remediation("Install what the metadata declares.", repairs=(
                          Repair.install("numpy>=2.0.0", reason="ml-dtypes 0.6.0 requires numpy>=2.0.0"),)))
    plan = build_plan([hiding, pin], facts)
    assert [s.action for s in plan.steps] == [Action.UNSET_ENV] and all(s.manual for s in plan.steps)
    assert plan.steps[0].command == "unset PYTHONPATH"
    assert any("held back" in note and "numpy" in note for note in plan.notes)
    without = build_plan([pin], facts)
    assert [s.action for s in without.steps] == [Action.INSTALL] and not without.notes


def _result(check_id: str, outcome) -> dict:
    return CheckResult(check_id, check_id, outcome.status, outcome.summary, outcome.details, outcome.remediation,
                       outcome.evidence).to_dict()


def test_the_unhides_field_survives_a_saved_report():
    repair = Repair.rename("/p/tensorflow.py", "/p/my_tensorflow.py", "hides", unhides=("tensorflow",))
    assert Repair.from_dict(json.loads(json.dumps(repair.to_dict()))) == repair
    assert "unhides" not in Repair.rename("/a", "/b", "r").to_dict()


def test_tensorflow_import_blames_the_hiding_copy_not_an_unknown_error():
    facts = facts_with(origins_with(PROJECT_TF))
    facts["tensorflow"] = {"status": "import_error", "imported": False, "exit_code": 3, "stage": "import_failed",
                           "exception": {"type": "AttributeError", "message": "partially initialized module "
                                         "'tensorflow' has no attribute 'Variable' (most likely due to a circular import)"}}
    result = next(r for r in run_checks(all_checks(), facts) if r.check_id == "tensorflow-import")
    assert result.status is Status.FAIL and "(see shadowing)" in result.summary
    assert "/home/user/proj/tensorflow.py" in result.summary and result.remediation.repairs == ()
    assert "does not know this error" not in result.remediation.advice


def test_a_hidden_keras_does_not_explain_a_failed_tensorflow_import():
    keras = dict(PROJECT_TF, module="keras", origin="/home/user/proj/keras.py", copies=[])
    facts = facts_with(origins_with(keras))
    assert [h.module for h in shadowing.hiding(facts)] == ["keras"]
    assert tensorflow_import_check.hiding_tensorflow_import(facts) == []


def test_the_two_recorded_fixtures_hold_their_steps_back():
    from tfdoctor.report.run import RunReport

    for name, command in (("project-folder-tensorflow-py-hides-tensorflow.json", "mv -- "),
                          ("pythonpath-old-numpy-hides-numpy-2.json", "unset PYTHONPATH")):
        facts = fixture_facts(f"linux/{name}")
        results = run_checks(all_checks(), facts)
        plan = RunReport(facts, results).plan
        assert plan.steps and all(step.manual for step in plan.steps), name
        assert plan.steps[0].command.startswith(command), name
        assert not plan.conflicts
