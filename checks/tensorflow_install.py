"""Which TensorFlow distributions are installed, read from metadata (no import), on every platform.

Finds: nothing installed (with the install command for this platform and Python); two real builds
writing the same site-packages/tensorflow/ (uninstalling one breaks the other); a shim without its
real package or at another version (the shim direction flipped: tensorflow -> tensorflow-macos for
2.13-2.15 on Apple silicon, tensorflow-macos -> tensorflow in 2.16); one name installed twice; a
TensorFlow with no wheel for this Python; distributions whose own WHEEL tags name another Python (their
extension modules cannot load here: reinstalled at the same release for this one); Keras, tf-keras and NumPy
outside TensorFlow's pins, from the curated tables only where TensorFlow's own Requires-Dist cannot say (not
recorded, or NumPy past the ABI an old release declares no bound for): the dependencies check judges the declared
pins.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional

from tfdoctor.checking.registry import Facts, check
from tfdoctor.environment import installers
from tfdoctor.environment.pip import Installer, installer_for
from tfdoctor.environment.spell import fresh_environment, spelling_for
from tfdoctor.facts import (
    PLATFORM_NAMES,
    apple_silicon,
    host_system,
    installable_wheels,
    knowledge_age,
    metal_pairing,
    requires_dist,
    section,
    signatures,
    tensorflow_distributions,
    tensorflow_pins,
    wheel_tags,
    windows_paths,
)
from tfdoctor.facts.platform import target_machine, wheel_platform
from tfdoctor.facts.sw_vers_sysctl import product_version
from tfdoctor.knowledge.specifiers import satisfies
from tfdoctor.knowledge.versions import minor, release
from tfdoctor.remedies.arm64 import combo_requirements, native_environment
from tfdoctor.remedies.integrity import this_python_fix
from tfdoctor.remedies.tf_keras import tf_keras_repairs
from tfdoctor.results.findings import Findings
from tfdoctor.results.model import Outcome, Remediation
from tfdoctor.results.repairs import Repair

INSTALL_URL = "https://www.tensorflow.org/install/pip"
APPLE_URL = "https://developer.apple.com/metal/tensorflow-plugin/"
CONFLICT_URL = "https://github.com/openvinotoolkit/openvino_notebooks/pull/2793"
NUMPY2_URL = "https://github.com/CameronBodine/PINGMapper/issues/123"
LEGACY_KERAS_URL = "https://github.com/tensorflow/tensorflow/issues/63854"
# PowerShell, as administrator: the registry value Python's Windows docs name (signatures.toml's
# windows-long-path-limit row cites them); a new terminal sees it.
ENABLE_LONG_PATHS = ('New-ItemProperty -Path "HKLM:\\SYSTEM\\CurrentControlSet\\Control\\FileSystem" '
                     '-Name "LongPathsEnabled" -Value 1 -PropertyType DWORD -Force')


def _nvidia_gpu(facts: Facts) -> bool:
    try:  # written by the Linux helper; absent or failing means "not known"
        from tfdoctor.facts.nvidia_smi import detected_gpus
    except ImportError:
        return False
    try:
        return bool(detected_gpus(facts))
    except Exception:  # noqa: BLE001 - a broken helper must not turn this check into an error
        return False


def install_plan(facts: Facts) -> tuple[Optional[tuple[str, ...]], str, str]:
    """(requirements to install or None, advice, url) for TensorFlow on this platform and Python."""
    platform = wheel_platform(facts)
    python = section(facts, "python").get("version")
    macos = product_version(section(facts, "os").get("sw_vers"))
    system = PLATFORM_NAMES.get(host_system(facts), host_system(facts) or "this system")
    if platform == "macos-arm64":
        combo = metal_pairing.gpu_combo(python, macos)
        if combo:
            return (combo_requirements(combo),
                    f"Install TensorFlow {combo['tf']} with the Metal plugin {combo['metal']} (the newest pair that "
                    "loads; no tensorflow-metal loads into TensorFlow 2.20 or later).", APPLE_URL)
        newest = installable_wheels.newest_installable(platform, python, macos)
        if newest:
            return ((f"{newest[0]}=={newest[1]}",),
                    f"Install {newest[0]} {newest[1]}, the newest wheel for Python {python} on macOS {macos or ''}".rstrip()
                    + " (CPU only: no tensorflow-metal for this Python/macOS).", APPLE_URL)
    elif platform == "macos-x86_64":
        newest = installable_wheels.newest_installable(platform, python, macos)
        if newest:
            return ((f"{newest[0]}=={newest[1]}",),
                    f"TensorFlow's x86_64 macOS wheels end at {newest[1]} for Python {python}: pin it.", INSTALL_URL)
    elif platform in ("linux-x86_64", "linux-aarch64", "windows-x86_64"):
        newest = installable_wheels.newest_installable(platform, python, None, distributions=("tensorflow",))
        if newest:
            if platform == "linux-x86_64" and _nvidia_gpu(facts):
                return (("tensorflow[and-cuda]",), "Install TensorFlow with the CUDA libraries for the NVIDIA GPU.", INSTALL_URL)
            extra = " (CPU only on native Windows; for the GPU use WSL2)" if platform == "windows-x86_64" else ""
            return (("tensorflow",), f"Install TensorFlow{extra}.", INSTALL_URL)
    if platform is None or (python is None and platform in ("macos-arm64", "linux-x86_64", "linux-aarch64",
                                                              "windows-x86_64")):
        # where the platform or the Python is not recorded, pip chooses the wheel for the Python it runs under
        return (("tensorflow",), "Install TensorFlow (this report does not record the Python, so pip picks the "
                "newest release with a wheel for the one it runs under)." if python is None else "Install TensorFlow.",
                INSTALL_URL)
    return (None, f"No TensorFlow wheel exists for Python {python} on {system} ({platform}).", INSTALL_URL)


def _fresh_python(facts: Facts) -> str:
    """A Python every current TensorFlow (and, on Apple silicon, tensorflow-metal) has wheels for."""
    if wheel_platform(facts) in ("macos-arm64", "macos-x86_64"):
        return metal_pairing.newest_metal_python()
    return "3.12"


def _install_fix(facts: Facts, installer: Installer, why: str, first: tuple[Repair, ...] = ()) -> Remediation:
    """Install TensorFlow as this platform and Python take it (`why`: the reason the plan shows); `first`:
    repairs that come before it (uninstall a build pip would not pick)."""
    requirements, advice, url = install_plan(facts)
    if wheel_platform(facts) is None and host_system(facts) and target_machine(facts):
        # a recorded platform with no TensorFlow wheel: no install here repairs it (platform-support says where)
        return Remediation("PyPI has no TensorFlow wheel for this platform: platform-support says where TensorFlow "
                           "runs from this machine.", (), url)
    if apple_silicon.is_mac(facts) and apple_silicon.apple_silicon(facts) and apple_silicon.translated(facts):
        name, commands = native_environment(facts, metal_pairing.newest_metal_python())
        return Remediation(f"This Python runs under Rosetta (see architecture): make a native arm64 environment "
                           f"from {name} and install TensorFlow there.", commands, APPLE_URL)
    if requirements is None:
        # the new environment is not this one: creating it is the user's step, installing into it too
        version = _fresh_python(facts)
        return Remediation(f"{advice} Create an environment with Python {version} and install it there.",
                           fresh_environment(spelling_for(facts), version), url, first)
    return Remediation(advice, url=url, repairs=first + (Repair.install(*requirements, reason=why),))


def _after_long_paths(fix: Remediation) -> Remediation:
    """The install fix, preceded by enabling Windows long paths (the advice pip's own error gives)."""
    row = signatures.by_id("windows-long-path-limit")
    return Remediation(f"First, long paths: {row.advice} {fix.advice}", (ENABLE_LONG_PATHS, *fix.commands),
                       row.url, fix.repairs)


def _check_pins(facts: Facts, findings: Findings, tf: str, real_name: str) -> None:
    """The curated NumPy and Keras rules, where TensorFlow's own Requires-Dist cannot say: reports without
    it, and NumPy past the ABI TensorFlow was built for when its pin does not already exclude it (old
    releases declare no upper bound). Where the metadata says it, the dependencies check speaks."""
    declared = requires_dist.declared_names(facts, real_name)  # None: Requires-Dist not recorded
    unmet = {u.name for u in requires_dist.unmet_requirements(facts)} if declared is not None else set()

    def metadata_says(name: str) -> bool:
        return declared is not None and name in declared

    numpy = tensorflow_distributions.first_version(facts, "numpy")
    keras = tensorflow_distributions.first_version(facts, "keras")
    tf_keras = tensorflow_distributions.first_version(facts, "tf-keras")
    environment = section(facts, "environment")

    abi = tensorflow_pins.numpy_major_max(tf)
    numpy_pin = tensorflow_pins.pin("numpy", tf)
    if "numpy" in unmet:
        findings.note(f"numpy {numpy or 'missing'}: outside TensorFlow {tf}'s Requires-Dist (see dependencies)")
    elif not tensorflow_distributions.installed(facts, "numpy"):
        # A note, not a warning: hand-written and partial fact sets often list only TensorFlow, and a
        # really missing NumPy fails `import tensorflow` itself (tensorflow-import reports it).
        findings.note(f"numpy is not among the recorded distributions (TensorFlow {tf} cannot import without it)")
    elif numpy and abi and release(numpy)[:1] > (abi["numpy_major_max"],):
        findings.fail(f"NumPy {numpy} with TensorFlow {tf}, which is built for NumPy {abi['numpy_major_max']}.x",
                      "Import fails with 'A module that was compiled using NumPy 1.x cannot be run in NumPy 2'. "
                      "TensorFlow 2.18 is the first built for NumPy 2.",
                      fix=Remediation("Install a NumPy 1.x (or move to TensorFlow 2.18 or later).", url=NUMPY2_URL,
                                      repairs=(Repair.install("numpy<2", reason=f"TensorFlow {tf} is built for NumPy "
                                                              f"{abi['numpy_major_max']}.x, not NumPy {numpy}"),)))
    elif numpy and numpy_pin and not metadata_says("numpy") and pin_holds("numpy", tf, numpy) is False:
        findings.fail(f"NumPy {numpy} is outside TensorFlow {tf}'s pin numpy{numpy_pin['spec']}",
                      "Extensions built against a newer NumPy C API fail to import under an older NumPy "
                      "('module compiled against API version 0x10 but this version of numpy is 0xf').",
                      fix=Remediation("Install the NumPy TensorFlow declares.", url=INSTALL_URL,
                                      repairs=(Repair.install("numpy" + numpy_pin["spec"], reason=f"numpy {numpy} is "
                                                              f"outside TensorFlow {tf}'s numpy{numpy_pin['spec']}"),)))
    elif numpy:
        findings.note(f"numpy {numpy}")

    keras_pin = tensorflow_pins.pin("keras", tf)
    legacy = tensorflow_pins.legacy_keras()
    wants_legacy = str(environment.get(legacy["variable"]) or "") in legacy["true_values"]
    if wants_legacy and installable_wheels.within(tf, legacy["tf_min"], None) and not tf_keras:
        findings.fail(f"{legacy['variable']} is set but tf-keras is not installed",
                      f"tf.keras fails: '{legacy['error']}'.",
                      fix=Remediation(f"Install tf-keras for TensorFlow {'.'.join(map(str, minor(tf)))}, or unset "
                                      f"{legacy['variable']}.", url=LEGACY_KERAS_URL,
                                      repairs=tf_keras_repairs(
                                          facts, f"{legacy['variable']} is set but tf-keras is not installed")))
    if metadata_says("keras"):
        if keras:
            findings.note(f"keras {keras}" + (f", tf-keras {tf_keras}" if tf_keras else "")
                          + (" (outside TensorFlow's Requires-Dist: see dependencies)" if "keras" in unmet else ""))
    elif keras_pin and not tensorflow_distributions.installed(facts, "keras"):
        findings.note(f"keras is not among the recorded distributions (tf.keras of TensorFlow {tf} needs "
                      f"keras{keras_pin['spec']})")
    elif keras and keras_pin and pin_holds("keras", tf, keras) is False:
        findings.fail(f"Keras {keras} does not fit TensorFlow {tf} (needs keras{keras_pin['spec']})",
                      "Keras 3 is the default from TensorFlow 2.16; 2.13-2.15 need the Keras 2 of the same minor.",
                      fix=Remediation("Install the Keras TensorFlow declares.", url=INSTALL_URL,
                                      repairs=(Repair.install("keras" + keras_pin["spec"], reason=f"Keras {keras} does "
                                                              f"not fit TensorFlow {tf} (keras{keras_pin['spec']})"),)))
    elif keras:
        findings.note(f"keras {keras}" + (f", tf-keras {tf_keras}" if tf_keras else ""))


def _partial_list_of_a_working_tensorflow(facts: Facts) -> bool:
    """A report whose distributions are a partial list (hand-written, trimmed: no distribution count) and whose
    TensorFlow child imported, or did not run: what it leaves out proves nothing about what is installed."""
    if requires_dist.complete_record(facts):
        return False
    child = facts.get("tensorflow")
    return not isinstance(child, Mapping) or bool(child.get("imported")) or _failed_inside_tensorflow(child)


# The failing import ran TensorFlow's own package code (tensorflow/python/..., its native _pywrap_ modules): the
# real build's files are there, whatever a partial list names.
_INSIDE_TENSORFLOW = re.compile(r"tensorflow[./\\]python|_pywrap_tensorflow|_pywrap_tf2")


def _failed_inside_tensorflow(child: Mapping[str, Any]) -> bool:
    exception = found if isinstance(found := child.get("exception"), Mapping) else {}
    texts = [str(exception.get("message") or ""), *map(str, exception.get("traceback") or ())]
    return any(_INSIDE_TENSORFLOW.search(text) for text in texts)


@check("tensorflow-install", "TensorFlow distributions", needs=("distributions",),
       uses=("python", "os", "sysctl", "cpu", "environment", "installers", "nvidia", "tensorflow"))
def tensorflow_install(facts: Facts) -> Outcome:
    """which TensorFlow builds are installed; two builds in one `site-packages/tensorflow/`

    which TensorFlow distributions are installed, read from metadata without importing: shims vs real builds (a
    shim's real build that a partial list, a saved or hand-written report, leaves out while TensorFlow imports or
    was not tried is noted, not failed), two builds in one `site-packages/tensorflow/`, wheels for this Python
    (the release table's, and every installed distribution's own WHEEL tags against this interpreter's version and
    ABI through `packaging.tags`: files built for another Python, cp312 in 3.11, fail, reinstalled at their release
    for this one; `facts/wheel_tags.py`);
    Keras and NumPy against curated pins only where the metadata cannot say (Requires-Dist not recorded, NumPy 2
    under an old release that set no bound); a TensorFlow, tensorflow-metal or companion newer than the generated
    tables is said in one line, with the tables' date (`facts/knowledge_age.py`), and nothing is claimed from
    release rows they do not hold
    """
    installer = installer_for(facts)
    platform = wheel_platform(facts)
    python = section(facts, "python").get("version")
    copies = tensorflow_distributions.tensorflow_copies(facts)
    evidence = {"platform": platform, "python": python, "installer": installer.kind,
                "distributions": [c.to_dict() for c in copies]}
    child = found if isinstance(found := facts.get("tensorflow"), Mapping) else {}
    if not copies and child.get("imported") and not requires_dist.complete_record(facts):
        # a partial list (a thread's, trimmed by hand) that names no TensorFlow, beside a child that imported it
        version = child.get("version")
        return Outcome.ok(f"TensorFlow {version or ''} imported, though this report's list of distributions names "
                          "none (a partial list)".replace("  ", " "), **evidence)
    if not copies:
        fix = _install_fix(facts, installer, "TensorFlow is not installed for this Python")
        machine = target_machine(facts)
        where = platform or (f"{host_system(facts)} {machine}" if host_system(facts) and machine else "an unknown platform")
        details = [f"Python {python or '(version not recorded)'} ({installer.label}) on {where}."]
        shortfall = windows_paths.long_path_shortfall(facts)
        if shortfall:
            # the install the plan asks for would stop half done at Windows' path limit: say how to lift it first
            fix = _after_long_paths(fix)
            details.append(f"Before installing: {shortfall.describe()}.")
            evidence["long_path_needed"] = shortfall.needed
        return Outcome.fail("TensorFlow is not installed", *details, fix=fix, **evidence)

    findings = Findings()
    names = sorted({c.name for c in copies})
    by_name: dict[str, list[tensorflow_distributions.TFCopy]] = {}
    for copy in copies:
        by_name.setdefault(copy.name, []).append(copy)
    reals = [c for c in copies if c.real]
    shims = [c for c in copies if not c.real]

    for name, same in by_name.items():
        if len(same) > 1:
            where = "; ".join(f"{c.version} in {c.location}" for c in same)
            versions = {c.version for c in same}
            (findings.fail if len(versions) > 1 else findings.warn)(
                f"{name} is installed {len(same)} times ({', '.join(sorted(str(v) for v in versions))})",
                f"Copies: {where}. The first one on sys.path wins; the other shadows or half-overwrites it.",
                fix=Remediation("Uninstall until no copy is left, then install one.", url=CONFLICT_URL, repairs=(
                    Repair.uninstall(name, reason=f"{name} is installed {len(same)} times", copies=len(same)),
                    Repair.install(f"{name}=={same[0].version}", reason=f"one copy of {name} {same[0].version}, the "
                                   "one first on sys.path"))))

    distinct_reals = {c.name: c for c in reals}
    if len(distinct_reals) > 1:
        listing = ", ".join(f"{c.name} {c.version}" for c in distinct_reals.values())
        keep = tensorflow_distributions.build_to_keep(platform, [(c.name, c.version) for c in distinct_reals.values()])
        findings.fail(f"Two real TensorFlow builds write the same site-packages/tensorflow/: {listing}",
                      "Each overwrites the other's files; uninstalling one of them removes files the other needs.",
                      fix=Remediation("Uninstall every TensorFlow distribution, then install exactly one (its shim "
                                      "comes with it when the version needs one).", url=CONFLICT_URL, repairs=(
                                          Repair.uninstall(*names, reason=f"two real TensorFlow builds ({listing}) "
                                                           "write one site-packages/tensorflow/"),
                                          *((Repair.install(keep, reason=f"two real TensorFlow builds ({listing}) "
                                                            f"write one site-packages/tensorflow/: only one is "
                                                            f"installed again, {keep.replace('==', ' ')}, the "
                                                            "newest"),) if keep else ()))))

    for shim in shims:
        target = shim.shim_of
        partners = by_name.get(target or "", [])
        if not target:
            continue
        if not partners and _partial_list_of_a_working_tensorflow(facts):
            # a saved or hand-written report lists what its author chose: a target it leaves out while TensorFlow
            # imports (or the import was not tried) is not shown missing (issue 29 round 2: Windows 2.18's shim)
            findings.note(f"{shim.name} {shim.version} is the shim for {target}, which this report does not list "
                          "(a partial list: not judged missing)")
        elif not partners:
            findings.fail(f"{shim.name} {shim.version} is only a shim for {target}, which is not installed",
                          f"The {shim.name} wheel here has no tensorflow/ files; it depends on {target}=={shim.version}.",
                          fix=Remediation(f"Install {target} at the same version.", url=INSTALL_URL, repairs=(
                              Repair.install(f"{target}=={shim.version}", reason=f"{shim.name} {shim.version} is only "
                                             f"a shim for {target}, which is not installed"),)))
        elif partners[0].version != shim.version:
            findings.fail(f"{shim.name} {shim.version} (shim) and {target} {partners[0].version} differ",
                          "A shim and its real package must have the same version.",
                          fix=Remediation("Reinstall the pair at one version.", url=INSTALL_URL, repairs=(
                              Repair.uninstall(shim.name, target, reason=f"{shim.name} {shim.version} (shim) and "
                                               f"{target} {partners[0].version} differ"),
                              Repair.install(f"{shim.name}=={partners[0].version}", reason=f"the pair at one version, "
                                             f"{partners[0].version}: the shim brings {target} with it"))))
        else:
            findings.note(f"{shim.name} {shim.version} is the shim for {target} {shim.version} (normal for this version)")

    tf = tensorflow_distributions.tensorflow_version(facts)
    real = reals[0] if reals else None
    other_python, move_fix = False, None
    # a TensorFlow newer than the release table: its wheels and Python range are unknown, not absent
    beyond = bool(real and tf and knowledge_age.beyond(real.name, tf))
    if real and tf and not beyond:
        row = installable_wheels.wheel_for(real.name, tf, platform) if platform else None
        other_python = bool(row and python and not installable_wheels.within(python, row["python_min"],
                                                                            row["python_max"]))
        # conda's own build (INSTALLER says conda): PyPI's wheels are not where it came from, nor a fault of it
        owner = installers.recorded_by((requires_dist.first_copy(facts, real.name) or {}).get("installer"))
        if owner is not None and (not row or other_python):
            findings.note(f"{real.name} {tf} was installed by {owner.records} (its own build for "
                          f"{platform or 'this platform'}), not from a PyPI wheel")
        elif other_python and row:
            move_fix = _install_fix(facts, installer, f"{real.name} {tf} has no wheel for Python {python}: "
                                    "TensorFlow moves to the release pip installs for it",
                                    (Repair.uninstall(*names, reason=f"{real.name} {tf} has no wheel for "
                                                      f"Python {python} on {platform}"),))
            findings.warn(f"{real.name} {tf} has no wheel for Python {python} on {platform} "
                          f"(Python {row['python_min']}-{row['python_max']})",
                          "It was built from source, by conda, or forced in; pip would not pick it.", fix=move_fix)
        elif not row and platform and known_platform(platform) and release(tf) >= (2, 5) \
                and installable_wheels.wheel_rows(platform, real.name) \
                and installable_wheels.table_speaks_for(real.name, tf):
            findings.warn(f"PyPI has no {real.name} {tf} wheel for {platform}",
                          "It came from another channel (conda-forge, a community build, a source build).")
        _check_pins(facts, findings, tf, real.name)
    _check_wheel_tags(facts, findings, real.name if real and other_python else None, move_fix)

    if real and tf and beyond:
        _check_pins(facts, findings, tf, real.name)

    summary = ", ".join(f"{c.name} {c.version or '(version not recorded)'}" for c in (reals or copies))
    age = knowledge_age.age_line(facts)
    if age:  # the one line that says the knowledge is older than what is installed (issue 38, build 6)
        evidence["knowledge_generated"] = knowledge_age.generated_on()
        evidence["beyond_knowledge"] = [n.name for n in knowledge_age.beyond_knowledge(facts)]
        if findings.problems():
            findings.note(age)
        return findings.outcome(f"TensorFlow installed: {summary}; {age}", **evidence)
    return findings.outcome(f"TensorFlow installed: {summary}", **evidence)


def _check_wheel_tags(facts: Facts, findings: Findings, moving: Optional[str], move_fix: Optional[Remediation]) -> None:
    """Installed distributions whose WHEEL tags name another interpreter or ABI (facts/wheel_tags.py): their
    extension modules cannot load here. Each is reinstalled at its release for this Python, except a TensorFlow
    build whose release has no wheel for it (`moving`: TensorFlow moves, `move_fix`, which this finding carries
    too, being the worse one). A fail while the import fails or was not tried; a warn while TensorFlow imports (the
    foreign files are not on its path, or fall back)."""
    found = wheel_tags.foreign_builds(facts)
    if not found:
        return
    child = found_child if isinstance(found_child := facts.get("tensorflow"), Mapping) else {}
    repairable = [build for build in found if build.name != moving]
    fix = this_python_fix(repairable) if repairable else None
    if moving and move_fix is not None and any(build.name == moving for build in found):
        fix = move_fix if fix is None else Remediation(f"{move_fix.advice} {fix.advice}", move_fix.commands,
                                                       move_fix.url, move_fix.repairs + fix.repairs)
    first = found[0]
    others = [f"also {build.describe()}" for build in found[1:]]
    (findings.warn if child.get("imported") else findings.fail)(
        first.describe() + (f" (and {len(found) - 1} more)" if len(found) > 1 else ""),
        *others,
        "Its files came from a wheel pip would not install here (pip install --target --python-version, a copied "
        "site-packages, a renamed wheel): its extension modules fail at import, e.g. 'undefined symbol: "
        "_PyObject_ClearManagedDict' or 'PyInit_...' missing.",
        fix=fix, foreign_builds=[build.to_dict() for build in found],
        # what `tfdoctor --prove` lays down again on a copy (fixer/trials.py), the same step the plan has
        candidates=[{"name": build.name, "requirement": build.pin, "reinstall": True, "why": build.describe()}
                    for build in repairable if build.version])


def known_platform(platform: Optional[str]) -> bool:
    return bool(platform) and bool(installable_wheels.wheel_rows(platform))


def pin_holds(package: str, tf: Optional[str], version: Optional[str]) -> Optional[bool]:
    row = tensorflow_pins.pin(package, tf)
    return satisfies(version, row["spec"]) if row else None
