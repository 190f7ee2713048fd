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
