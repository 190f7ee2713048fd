"""Every repair names TensorFlow as its installed distribution's metadata does, never as tf.__version__ prints
it: a `.postN` release ('2.15.0.post1', printed '2.15.0') and a nightly ('tf-nightly 2.21.0.dev20250722',
printed '2.21.0-dev20250722'), which pip cannot find under the release's name. Every recorded machine in
fixtures/ is diagnosed again with its TensorFlow turned into each of those."""

from __future__ import annotations

import copy
import re

import pytest

from tests.fixtures_support import fixture_id, fixture_paths, load_fixture
from tfdoctor.facts import canonical_name, requires_dist
from tfdoctor.checking.registry import all_checks
from tfdoctor.report.run import RunReport
from tfdoctor.checking.runner import run_checks

CHECKS = all_checks()
WITH_TENSORFLOW = [p for p in fixture_paths() if requires_dist.tensorflow_pin(load_fixture(p)["facts"])]


def _variant(facts: dict, kind: str) -> tuple[dict, str, str, str]:
    """(facts, build name, metadata version, tf.__version__) with the imported build made a .post1 release
    or a nightly."""
    facts = copy.deepcopy(facts)
    build, _, version = requires_dist.tensorflow_pin(facts).partition("==")
    entry = next(d for d in facts["distributions"] if canonical_name(d["name"]) == build)
    original = build
    base = ".".join(re.findall(r"\d+", version)[:3])
    if kind == "post":
        printed = base
        for other in facts["distributions"]:  # the shim that pins the build moves with it, as on PyPI
            if requires_dist.is_tensorflow_build(canonical_name(other["name"])) and other.get("version") == version:
                other["version"] = f"{base}.post1"
                other["requires"] = [re.sub(rf"(tensorflow[\w-]*\s*\(?\s*)=={re.escape(version)}\b", rf"\1=={base}.post1", line)
                                     for line in other.get("requires") or ()]
    else:
        entry["name"], entry["version"], printed = "tf-nightly", f"{base}.dev20250722", f"{base}-dev20250722"
        build = "tf-nightly"
    # the integrity child reads the same metadata: what it recorded of the build names the same release
    recorded = [*((facts.get("integrity") or {}).get("distributions") or ()), *((facts.get("installers") or {}).get("wheels") or ())]
    for other in recorded:
        if canonical_name(str(other.get("name") or "")) == original and other.get("version") == version:
            other["name"], other["version"] = entry["name"], entry["version"]
    if facts.get("tensorflow"):
        facts["tensorflow"]["version"] = printed
    # a new run's facts (a copy): the doctor indexes a run's distributions once, by the list (facts.copies_by_name),
    # and the pin read above indexed this list before its entry was renamed in place
    return copy.deepcopy(facts), build, entry["version"], printed


def _requirements_of(facts: dict) -> list[tuple[str, str]]:
    """(check id or 'plan', requirement) for every repair and every plan step."""
    results = run_checks(CHECKS, facts)
    found = [(r.check_id, package) for r in results if r.remediation
             for repair in r.remediation.repairs for package in repair.packages]
    found += [("plan", package) for step in RunReport(facts, results).plan.steps for package in step.packages]
    return found


@pytest.mark.parametrize("path", WITH_TENSORFLOW, ids=[fixture_id(p) for p in WITH_TENSORFLOW])
def test_a_post_release_is_pinned_as_its_metadata_spells_it(path):
    facts, build, metadata, printed = _variant(load_fixture(path)["facts"], "post")
    for where, requirement in _requirements_of(facts):
        name = canonical_name(re.split(r"[\[<>=!~ ;]", requirement, 1)[0])
        if name == build:
            assert not re.search(rf"=={re.escape(printed)}(?![\w.])", requirement), (where, requirement, metadata)


@pytest.mark.parametrize("path", WITH_TENSORFLOW, ids=[fixture_id(p) for p in WITH_TENSORFLOW])
def test_a_nightly_is_named_tf_nightly_with_its_metadata_version(path):
    facts, build, metadata, printed = _variant(load_fixture(path)["facts"], "nightly")
    for where, requirement in _requirements_of(facts):
        assert printed not in requirement, (where, requirement)
        name = canonical_name(re.split(r"[\[<>=!~ ;]", requirement, 1)[0])
        if ".dev" in requirement and requires_dist.is_tensorflow_build(name):
            assert name == "tf-nightly", (where, requirement)


def test_the_variants_do_reach_repairs_that_name_tensorflow():
    """Not vacuous: some fixtures' repairs pin the installed build, and they pin the metadata's version."""
    pinned = []
    for path in WITH_TENSORFLOW:
        facts, build, metadata, _ = _variant(load_fixture(path)["facts"], "post")
        pinned += [r for _, r in _requirements_of(facts) if canonical_name(re.split(r"[\[<>=!~ ;]", r, 1)[0]) == build
                   and f"=={metadata}" in r]
    assert len(pinned) >= 3, pinned


@pytest.mark.parametrize("installed, expected", [
    ("tf-nightly-cpu", ("uninstall tf-nightly-cpu", "install tf-nightly[and-cuda]==2.21.0.dev20250722 pre")),
    ("tensorflow-cpu", ("uninstall tensorflow-cpu", "install tensorflow[and-cuda]==2.21.0.dev20250722")),
    ("tf-nightly", ("install tf-nightly[and-cuda]==2.21.0.dev20250722 pre",)),
])
def test_the_cuda_build_of_a_nightly_is_tf_nightly(installed, expected):
    from tfdoctor.facts.tensorflow_build import tensorflow_version
    from tfdoctor.remedies.cuda import cuda_tensorflow

    facts = {"distributions": [{"name": installed, "version": "2.21.0.dev20250722", "top_level": ["tensorflow"]}],
             "tensorflow": {"version": "2.21.0-dev20250722"}}
    assert tensorflow_version(facts) == "2.21.0.dev20250722"
    repairs = cuda_tensorflow(facts, f"=={tensorflow_version(facts)}", "a GPU is here")
    assert tuple(f"{r.action.value} {' '.join(r.packages)}" + (" pre" if r.pre else "") for r in repairs) == expected
