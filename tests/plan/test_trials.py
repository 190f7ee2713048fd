"""Issue 29: the trial candidates tfdoctor fix and --prove try (tfdoctor/fixer/trials.py), read from the
dependencies check's result: the violated pin the error points into first, pins of one name merged."""

from __future__ import annotations

from tfdoctor.fixer import trials
from tfdoctor.results.model import CheckResult, Status


def _dependencies(unmet, suspects=(), status=Status.FAIL):
    return CheckResult("dependencies", "Declared dependencies (Requires-Dist)", status, "x",
                       evidence={"unmet": unmet, "suspects": [{"name": n} for n in suspects]})


UNMET = [
    {"requirer": "tensorflow-cpu", "name": "h5py", "specifier": "<3.15.0,>=3.11.0", "installed": "3.16.0"},
    {"requirer": "optree", "name": "typing-extensions", "specifier": ">=4.10.0", "installed": "4.5.0"},
    {"requirer": "grpcio", "name": "typing-extensions", "specifier": "~=4.12", "installed": "4.5.0"},
]


def test_the_pin_the_error_points_into_is_tried_first_and_one_names_pins_are_merged():
    found = trials.candidates([_dependencies(UNMET, suspects=("optree", "keras"))])
    assert [(c.name, c.requirement) for c in found] == [("typing-extensions", "typing-extensions>=4.10.0,~=4.12"),
                                                         ("h5py", "h5py<3.15.0,>=3.11.0")]
    assert found[0].why == "optree requires typing-extensions>=4.10.0"


def test_a_passing_dependencies_check_gives_nothing_to_try():
    assert trials.candidates([_dependencies(UNMET, status=Status.PASS)]) == []
    assert trials.candidates([]) == []


def test_the_smallest_working_change_is_the_proof():
    one, two = trials.candidates([_dependencies(UNMET, suspects=("optree",))])
    proof = trials.Proof([trials.Trial((one,), False, 3.0), trials.Trial((two,), False, 3.0),
                          trials.Trial((one, two), True, 4.0)])
    assert proof.proven.candidates == (one, two)
    assert trials.describe(proof)[-1].startswith("proven by experiment: optree requires typing-extensions>=4.10.0")
    assert trials.describe(trials.Proof([trials.Trial((one,), False, 1.0)]))[-1] == "no candidate made TensorFlow work on a copy"


def test_a_build_reinstalled_as_it_was_is_a_candidate_tried_with_the_reinstall_command():
    """Issue 38: the failing file is TensorFlow's own (or its WHEEL names another Python): `--prove` lays the installed
    release down again on a copy, `--force-reinstall --no-deps`, which `pip install name==version` would not do."""
    foreign = CheckResult("tensorflow-install", "TensorFlow distributions", Status.FAIL, "x", evidence={"candidates": [
        {"name": "tensorflow-cpu", "requirement": "tensorflow-cpu==2.21.0", "reinstall": True, "why": "built for 3.12"}]})
    (found,) = trials.candidates([foreign])
    assert (found.name, found.requirement, found.reinstall) == ("tensorflow-cpu", "tensorflow-cpu==2.21.0", True)
    kept, pin, refused = trials.screened([found], "tensorflow-cpu==2.21.0")
    assert kept == [found] and not refused
    assert trials._trial_argvs("venv", "/env/bin/python", [found], pin) == [
        ["/env/bin/python", "-m", "pip", "install", "--force-reinstall", "--no-deps", "--", "tensorflow-cpu==2.21.0"]]
    other = trials.Candidate("numpy", "numpy>=2", "why")
    assert trials._trial_argvs("venv", "/env/bin/python", [found, other], pin)[1] == [
        "/env/bin/python", "-m", "pip", "install", "--", "numpy>=2", "tensorflow-cpu==2.21.0"]
    assert trials.Trial((found,), True, 1.0).change == "tensorflow-cpu==2.21.0 (reinstalled)"
