"""The metal-plugin check against its own table (issue 11 §6): a hint never says that no
tensorflow-metal loads into a TensorFlow for which the table lists one that does, and an early
plugin (0.1-0.6, built for Apple's tensorflow-macos) is judged against the build really installed,
not only its version."""

from __future__ import annotations

import pytest

from tfdoctor.checks.metal_plugin import metal_plugin
from tfdoctor.facts import macos_knowledge as mk
from tfdoctor.model import Status
from tfdoctor.runner import run_check
from tfdoctor.versions import release

from tests.plan_support import plan_commands, plan_of
from tests.builders import fix_text

SITE = "/Users/me/.venvs/tf/lib/python3.10/site-packages"
PYTHON = "/Users/me/.venvs/tf/bin/python"


def metal_mac(python: str, distributions: list[tuple[str, str]]) -> dict:
    return {
        "host": {"system": "Darwin", "machine": "arm64"},
        "os": {"sw_vers": "ProductName:\tmacOS\nProductVersion:\t14.2\n"},
        "sysctl": {"hw.optional.arm64": "1", "machdep.cpu.brand_string": "Apple M1"},
        "python": {"executable": "/Users/me/.venvs/tf/bin/python", "version": python, "machine": "arm64",
                   "proc_translated": "0", "in_venv": True, "conda": False, "uv_version": None,
                   "prefix": "/Users/me/.venvs/tf", "base_prefix": "/opt/homebrew", "user_site": "/nowhere"},
        "distributions": [{"name": n, "version": v, "location": SITE} for n, v in distributions],
        "environment": {},
    }




def tf_build(tf_minor: str) -> list[tuple[str, str]]:
    """What `pip install` of TensorFlow `tf_minor` leaves on an arm64 Mac (the real build, and a shim)."""
    version = f"{tf_minor}.0"
    if release(tf_minor) <= (2, 12):
        return [("tensorflow-macos", version)]
    if release(tf_minor) <= (2, 15):
        return [("tensorflow", version), ("tensorflow-macos", version)]
    return [("tensorflow", version)]


def usable_pairs():
    """(metal, TF minor, Python) for every pairing the table says imports and may be recommended."""
    for row in mk.rows("metal_tf"):
        if row["outcome"] not in mk.RECOMMENDABLE or row.get("tf_distributions"):
            continue
        for version in mk.metal_versions():
            if not mk.within(version, row["metal_min"], row["metal_max"]):
                continue
            python = mk.metal_release(version)["python_min"]
            tf_minor = ".".join(row["tf_min"].split(".")[:2])
            if mk.metal_pairing(version, f"{tf_minor}.0") is row and mk.install_name("macos-arm64", tf_minor):
                yield version, tf_minor, python


USABLE = sorted(set(usable_pairs()), key=lambda t: (release(t[1]), release(t[0])))


def test_the_table_has_usable_pairs_from_2_5_to_2_19():
    minors = {tf for _, tf, _ in USABLE}
    assert {"2.5", "2.11", "2.19"} <= minors


@pytest.mark.parametrize("metal, tf_minor, python", USABLE, ids=[f"metal{m}-tf{t}" for m, t, _ in USABLE])
def test_a_hint_never_denies_a_plugin_the_table_lists(metal, tf_minor, python):
    assert mk.metal_for(f"{tf_minor}.0", python, "14.2") is not None
    facts = metal_mac(f"{python}.10", tf_build(tf_minor))
    missing = run_check(metal_plugin, facts)
    assert f"No tensorflow-metal loads into TensorFlow {tf_minor}" not in fix_text(missing)
    assert f"{PYTHON} -m pip install 'tensorflow-metal==" in plan_commands(facts, missing)[0]
    for other in mk.metal_versions():
        pairing = mk.metal_pairing(other, f"{tf_minor}.0")
        if pairing and pairing["outcome"] == "import_fails" and mk.metal_supports_python(mk.metal_release(other), python):
            facts = metal_mac(f"{python}.10", tf_build(tf_minor) + [("tensorflow-metal", other)])
            broken = run_check(metal_plugin, facts)
            assert broken.status is Status.FAIL
            text = fix_text(broken)
            assert f"No tensorflow-metal loads into TensorFlow {tf_minor}" not in text, (other, text)
            plan = plan_of(facts, broken)
            assert f"{PYTHON} -m pip install 'tensorflow-metal==" in plan.steps[0].command, (other, text)
            assert not plan.conflicts and plan.moves_tensorflow is None, (other, plan.to_dict())


def test_tf_2_11_gets_metal_0_7_with_the_optimizer_caveat():
    facts = metal_mac("3.10.11", [("tensorflow-macos", "2.11.0"), ("tensorflow-metal", "0.8.0")])
    result = run_check(metal_plugin, facts)
    assert result.status is Status.FAIL
    assert plan_commands(facts, result) == [f"{PYTHON} -m pip install 'tensorflow-metal==0.7.1' 'tensorflow-macos==2.11.0'"]
    assert "legacy optimizers" in result.remediation.advice
    assert mk.metal_for("2.11.0", "3.10") == "0.7.1"


EARLY = [row for row in mk.rows("metal_release") if release(row["version"]) <= (0, 6, 0) and row["apple_tf"]]


@pytest.mark.parametrize("row", EARLY, ids=[r["version"] for r in EARLY])
def test_an_early_plugin_in_stock_tensorflow_fails_and_swaps_the_build(row):
    metal, tf = row["version"], f"{row['apple_tf']}.0"
    python = f"{row['python_min']}.10"
    facts = metal_mac(python, [("tensorflow", tf), ("tensorflow-metal", metal)])
    stock = run_check(metal_plugin, facts)
    assert stock.status is Status.FAIL, stock.summary
    plan = plan_of(facts, stock)  # the build switch: uninstall and install in one remediation, no conflict
    assert [s.command for s in plan.steps] == [
        f"{PYTHON} -m pip uninstall -y tensorflow",
        f"{PYTHON} -m pip install 'tensorflow-macos=={row['apple_tf']}.*'"]
    assert not plan.conflicts and plan.moves_tensorflow.source == f"tensorflow=={tf}"
    assert f"built for tensorflow-macos, not for the stock tensorflow wheel" in plan.moves_tensorflow.why
    apple = run_check(metal_plugin, metal_mac(python, [("tensorflow-macos", tf), ("tensorflow-metal", metal)]))
    assert apple.status is not Status.FAIL, apple.summary


def test_an_unknown_build_is_judged_by_version_alone():
    assert mk.metal_pairing("0.5.0", "2.9.0")["outcome"] == "loads"
    assert mk.metal_pairing("0.5.0", "2.9.0", "tensorflow-macos")["outcome"] == "loads"
    assert mk.metal_pairing("0.5.0", "2.9.0", "tensorflow")["outcome"] == "import_fails"
    assert mk.metal_pairing("1.2.0", "2.19.0", "tensorflow")["outcome"] == "loads"
