"""The metal-plugin check: plugin copies, their architecture, the TensorFlow and Python they fit, the Keras 3
slowdown; and against its own table (issue 11 §6): a hint never denies a plugin the table lists, and an early
plugin (0.1-0.6, built for tensorflow-macos) is judged against the build really installed."""

from __future__ import annotations

import pytest

from tfdoctor.checks.metal_plugin import metal_plugin
from tfdoctor.facts import installable_wheels, metal_pairing
from tfdoctor.results.model import CheckResult, Remediation, Status
from tfdoctor.results.repairs import Repair
from tfdoctor.checking.runner import run_check
from tfdoctor.knowledge.versions import release
from tfdoctor.knowledge import rows as knowledge_rows

from tests.builders import (
    MAC_SITE,
    MAC_USER_SITE,
    MAC_VENV,
    METAL_100_X86_64_HEX,
    METAL_120_ARM64_HEX,
    check_result,
    fix_text,
    mac,
    site_distribution,
)
from tests.plan_support import plan_commands, plan_of


def test_two_plugin_copies_in_user_site_and_venv_fail():
    facts = mac()
    facts["python"]["tensorflow_plugin_dirs"] = [
        {"path": f"{MAC_USER_SITE}/tensorflow-plugins", "files": [{"name": "libmetal_plugin.dylib", "header_hex": METAL_120_ARM64_HEX}]},
        {"path": f"{MAC_SITE}/tensorflow-plugins", "files": [{"name": "libmetal_plugin.dylib", "header_hex": METAL_120_ARM64_HEX}]},
    ]
    facts["distributions"] = [site_distribution("tensorflow", "2.19.0"), site_distribution("tensorflow-metal", "1.2.0"),
                              site_distribution("tensorflow-metal", "1.2.0", MAC_USER_SITE)]
    result = check_result(metal_plugin, facts)
    assert result.status is Status.FAIL and result.summary.startswith("2 copies of libmetal_plugin.dylib")
    # the environment's pip does not uninstall outside the environment: the plan hides the user site;
    # removing that copy with the base interpreter is the alternative, in words
    assert plan_commands(facts, result) == ["export PYTHONNOUSERSITE=1"]
    assert "/opt/homebrew/opt/python@3.11/Frameworks/Python.framework/Versions/3.11/bin/python3.11" in fix_text(result)
    assert result.remediation.commands == ()


def test_two_plugin_copies_inside_the_environment_uninstall_all_but_one():
    facts = mac()
    other_site = f"{MAC_VENV}/lib/python3.11/site-packages/extra"
    facts["python"]["tensorflow_plugin_dirs"] = [
        {"path": f"{d}/tensorflow-plugins", "files": [{"name": "libmetal_plugin.dylib", "header_hex": METAL_120_ARM64_HEX}]}
        for d in (MAC_SITE, other_site, f"{MAC_VENV}/lib/python3.11/site-packages/third")]
    facts["distributions"] = [site_distribution("tensorflow", "2.19.0"), site_distribution("tensorflow-metal", "1.2.0")]
    result = check_result(metal_plugin, facts)
    assert result.status is Status.FAIL and result.summary.startswith("3 copies")
    uninstall = f"{MAC_VENV}/bin/python -m pip uninstall -y -- tensorflow-metal"
    assert plan_commands(facts, result) == [uninstall, uninstall]  # pip removes one copy per call; one stays


def test_a_plugin_named_by_tf_pluggable_device_library_path_counts_as_a_copy():
    facts = mac()
    facts["environment"] = {"TF_PLUGGABLE_DEVICE_LIBRARY_PATH": "/opt/metal/libmetal_plugin.dylib"}
    facts["distributions"] = [site_distribution("tensorflow", "2.19.0"), site_distribution("tensorflow-metal", "1.2.0")]
    result = check_result(metal_plugin, facts)
    assert result.status is Status.FAIL and "/opt/metal" in " ".join(result.details)


def test_plugin_built_for_the_other_architecture_fails():
    facts = mac()
    facts["python"]["tensorflow_plugin_dirs"] = [
        {"path": f"{MAC_SITE}/tensorflow-plugins", "files": [{"name": "libmetal_plugin.dylib", "header_hex": METAL_100_X86_64_HEX}]}]
    facts["distributions"] = [site_distribution("tensorflow", "2.13.0"), site_distribution("tensorflow-macos", "2.13.0"), site_distribution("tensorflow-metal", "1.0.0")]
    result = check_result(metal_plugin, facts)
    assert result.status is Status.FAIL and "x86_64 but Python runs as arm64" in result.summary
    plan = plan_of(facts, result)  # the same release again, from this interpreter: pip picks the arm64 wheel
    assert [s.command for s in plan.steps] == [
        f"{MAC_VENV}/bin/python -m pip install --force-reinstall --no-deps -- 'tensorflow-metal==1.0.0'"]


def test_matching_plugin_with_matching_architecture_passes():
    facts = mac()
    facts["python"]["tensorflow_plugin_dirs"] = [
        {"path": f"{MAC_SITE}/tensorflow-plugins", "files": [{"name": "libmetal_plugin.dylib", "header_hex": METAL_120_ARM64_HEX}]}]
    facts["distributions"] = [site_distribution("tensorflow", "2.19.1"), site_distribution("tensorflow-metal", "1.2.0")]
    result = check_result(metal_plugin, facts)
    assert result.status is Status.PASS and result.evidence["plugin_architectures"] == ["arm64"]


def test_tensorflow_2_20_without_plugin_warns_with_the_working_pair():
    facts = mac(version="3.12.4")
    facts["distributions"] = [site_distribution("tensorflow", "2.20.0")]
    result = check_result(metal_plugin, facts)
    assert result.status is Status.WARN and "CPU only" in result.summary
    # TensorFlow works here, on the CPU: the plan never moves it back for the GPU; the pair is advice
    assert "tensorflow==2.19.*, tensorflow-metal==1.2.0" in result.remediation.advice
    assert plan_commands(facts, result) == []


def test_tensorflow_2_20_with_metal_uninstalls_the_plugin_in_one_step_with_tensorflow_import():
    facts = mac(version="3.12.4")
    facts["distributions"] = [site_distribution("tensorflow", "2.20.0"), site_distribution("tensorflow-metal", "1.2.0")]
    result = check_result(metal_plugin, facts)
    assert result.status is Status.FAIL
    assert [(r.action.value, r.packages) for r in result.remediation.repairs] == [("uninstall", ("tensorflow-metal",))]
    assert "2.20 or later" in result.remediation.repairs[0].reason
    assert "tensorflow==2.19.*, tensorflow-metal==1.2.0" in result.remediation.advice  # the GPU way, in words
    # tensorflow-import asks the same of this machine: one plan step that both point to, TensorFlow stays
    import_failed = CheckResult("tensorflow-import", "import", Status.FAIL, "x", remediation=Remediation(
        "x", repairs=(Repair.uninstall("tensorflow-metal", reason="the plugin breaks import tensorflow"),)))
    plan = plan_of(facts, result, import_failed)
    assert [s.command for s in plan.steps] == [f"{MAC_VENV}/bin/python -m pip uninstall -y -- tensorflow-metal"]
    assert plan.steps_for("metal-plugin") == plan.steps_for("tensorflow-import") == [1]
    assert plan.moves_tensorflow is None and not plan.conflicts


def test_a_stock_tensorflow_without_a_fitting_plugin_moves_forward_to_the_newest_pair_and_says_why():
    facts = mac(version="3.12.4")
    facts["distributions"] = [site_distribution("tensorflow", "2.16.1"), site_distribution("tensorflow-metal", "1.2.0")]
    result = check_result(metal_plugin, facts)
    assert result.status is Status.WARN and "untested" in result.summary
    plan = plan_of(facts, result)
    assert [s.command for s in plan.steps] == [f"{MAC_VENV}/bin/python -m pip install -- 'tensorflow==2.19.*' "
                                               "'tensorflow-metal==1.2.0'"]
    assert plan.moves_tensorflow.source == "tensorflow==2.16.1"
    assert "TensorFlow must move to 2.19" in plan.moves_tensorflow.why


def test_keras_3_slowdown_installs_tf_keras_and_sets_the_switch_as_a_manual_step():
    facts = mac()
    facts["distributions"] = [site_distribution("tensorflow", "2.16.1"), site_distribution("tensorflow-metal", "1.1.0")]
    result = check_result(metal_plugin, facts)
    plan = plan_of(facts, result)
    assert [(s.command, s.manual) for s in plan.steps] == [
        (f"{MAC_VENV}/bin/python -m pip install -- 'tf-keras~=2.16.0' 'tensorflow==2.16.1'", False),
        ("export TF_USE_LEGACY_KERAS=1", True)]


def test_legacy_keras_switch_silences_the_keras_3_warning():
    facts = mac()
    facts["distributions"] = [site_distribution("tensorflow", "2.16.1"), site_distribution("tensorflow-metal", "1.1.0")]
    assert check_result(metal_plugin, facts).status is Status.WARN
    facts["environment"] = {"TF_USE_LEGACY_KERAS": "1"}
    assert check_result(metal_plugin, facts).status is Status.PASS


def test_intel_mac_without_plugin_skips():
    facts = mac(machine="x86_64", translated=None)
    facts["sysctl"] = {"hw.optional.arm64": "0", "machdep.cpu.brand_string": "Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz"}
    facts["distributions"] = [site_distribution("tensorflow", "2.16.2")]
    result = check_result(metal_plugin, facts)
    assert result.status is Status.SKIP and "1.0.0" in result.summary


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
    for row in knowledge_rows("macos", "metal_tf"):
        if row["outcome"] not in metal_pairing.RECOMMENDABLE or row.get("tf_distributions"):
            continue
        for version in metal_pairing.metal_versions():
            if not installable_wheels.within(version, row["metal_min"], row["metal_max"]):
                continue
            python = metal_pairing.metal_release(version)["python_min"]
            tf_minor = ".".join(row["tf_min"].split(".")[:2])
            if metal_pairing.metal_pairing(version, f"{tf_minor}.0") is row and installable_wheels.install_name("macos-arm64", tf_minor):
                yield version, tf_minor, python


USABLE = sorted(set(usable_pairs()), key=lambda t: (release(t[1]), release(t[0])))


def test_the_table_has_usable_pairs_from_2_5_to_2_19():
    minors = {tf for _, tf, _ in USABLE}
    assert {"2.5", "2.11", "2.19"} <= minors


@pytest.mark.parametrize("metal, tf_minor, python", USABLE, ids=[f"metal{m}-tf{t}" for m, t, _ in USABLE])
def test_a_hint_never_denies_a_plugin_the_table_lists(metal, tf_minor, python):
    assert metal_pairing.metal_for(f"{tf_minor}.0", python, "14.2") is not None
    facts = metal_mac(f"{python}.10", tf_build(tf_minor))
    missing = run_check(metal_plugin, facts)
    assert f"No tensorflow-metal loads into TensorFlow {tf_minor}" not in fix_text(missing)
    assert f"{PYTHON} -m pip install -- 'tensorflow-metal==" in plan_commands(facts, missing)[0]
    for other in metal_pairing.metal_versions():
        pairing = metal_pairing.metal_pairing(other, f"{tf_minor}.0")
        if pairing and pairing["outcome"] == "import_fails" and metal_pairing.metal_supports_python(metal_pairing.metal_release(other), python):
            facts = metal_mac(f"{python}.10", tf_build(tf_minor) + [("tensorflow-metal", other)])
            broken = run_check(metal_plugin, facts)
            assert broken.status is Status.FAIL
            text = fix_text(broken)
            assert f"No tensorflow-metal loads into TensorFlow {tf_minor}" not in text, (other, text)
            plan = plan_of(facts, broken)
            assert f"{PYTHON} -m pip install -- 'tensorflow-metal==" in plan.steps[0].command, (other, text)
            assert not plan.conflicts and plan.moves_tensorflow is None, (other, plan.to_dict())


def test_tf_2_11_gets_metal_0_7_with_the_optimizer_caveat():
    facts = metal_mac("3.10.11", [("tensorflow-macos", "2.11.0"), ("tensorflow-metal", "0.8.0")])
    result = run_check(metal_plugin, facts)
    assert result.status is Status.FAIL
    assert plan_commands(facts, result) == [f"{PYTHON} -m pip install -- 'tensorflow-metal==0.7.1' 'tensorflow-macos==2.11.0'"]
    assert "legacy optimizers" in result.remediation.advice
    assert metal_pairing.metal_for("2.11.0", "3.10") == "0.7.1"


EARLY = [row for row in knowledge_rows("macos", "metal_release") if release(row["version"]) <= (0, 6, 0) and row["apple_tf"]]


@pytest.mark.parametrize("row", EARLY, ids=[r["version"] for r in EARLY])
def test_an_early_plugin_in_stock_tensorflow_fails_and_swaps_the_build(row):
    metal, tf = row["version"], f"{row['apple_tf']}.0"
    python = f"{row['python_min']}.10"
    facts = metal_mac(python, [("tensorflow", tf), ("tensorflow-metal", metal)])
    stock = run_check(metal_plugin, facts)
    assert stock.status is Status.FAIL, stock.summary
    plan = plan_of(facts, stock)  # the build switch: uninstall and install in one remediation, no conflict
    assert [s.command for s in plan.steps] == [
        f"{PYTHON} -m pip uninstall -y -- tensorflow",
        f"{PYTHON} -m pip install -- 'tensorflow-macos=={row['apple_tf']}.*'"]
    assert not plan.conflicts and plan.moves_tensorflow.source == f"tensorflow=={tf}"
    assert "built for tensorflow-macos, not for the stock tensorflow wheel" in plan.moves_tensorflow.why
    apple = run_check(metal_plugin, metal_mac(python, [("tensorflow-macos", tf), ("tensorflow-metal", metal)]))
    assert apple.status is not Status.FAIL, apple.summary


def test_an_unknown_build_is_judged_by_version_alone():
    assert metal_pairing.metal_pairing("0.5.0", "2.9.0")["outcome"] == "loads"
    assert metal_pairing.metal_pairing("0.5.0", "2.9.0", "tensorflow-macos")["outcome"] == "loads"
    assert metal_pairing.metal_pairing("0.5.0", "2.9.0", "tensorflow")["outcome"] == "import_fails"
    assert metal_pairing.metal_pairing("1.2.0", "2.19.0", "tensorflow")["outcome"] == "loads"


def test_a_report_that_does_not_say_it_is_a_mac_is_not_told_its_python_runs_as_x86_64():
    # fixtures/fresh/aside8 (a deepface thread): no host, an empty python section: nothing says Mac or x86_64
    facts = {"python": {}, "distributions": [{"name": "tensorflow", "version": "2.16.1"}]}
    outcome = metal_plugin.run(facts)
    assert outcome.status is Status.SKIP and "not recorded: host" in outcome.summary
    assert "x86_64" not in outcome.summary
