"""tensorflow-metal against the installed TensorFlow, judged statically (a bad plugin breaks
`import tensorflow` itself, because TensorFlow loads every tensorflow-plugins directory on import).

Knows what really loads (tfdoctor/knowledge/macos.toml, metal_tf): 1.1.0 fails inside TF 2.18/2.19
although Apple's table lists it; no release loads into TF >= 2.20; none exists for Python >= 3.13;
0.6.0 imports into TF 2.9 and segfaults in training. Also: two copies of the plugin (TF registers
the METAL platform twice and aborts), a plugin built for the other architecture, and Keras 3 on
Metal training at CPU speed with metal 1.1.0.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from tfdoctor.checking.registry import Facts, check
from tfdoctor.environment.spell import fresh_environment, spelling_for
from tfdoctor.facts import (
    apple_silicon,
    installable_wheels,
    knowledge_age,
    mach_o,
    metal_pairing,
    section,
    tensorflow_distributions,
    tensorflow_pins,
)
from tfdoctor.facts.platform import wheel_platform
from tfdoctor.facts.sw_vers_sysctl import product_version
from tfdoctor.knowledge import rows as knowledge_rows
from tfdoctor.knowledge.versions import minor, release
from tfdoctor.remedies.arm64 import APPLE_PLUGIN_URL, combo_repairs, combo_words
from tfdoctor.results.findings import Findings
from tfdoctor.results.model import Outcome, Remediation
from tfdoctor.results.repairs import Repair

DUPLICATE_URL = "https://github.com/pleonard212/pix-plot/issues/268"
KERAS3_URL = "https://github.com/tensorflow/tensorflow/issues/63854"
OPTIMIZER_URL = "https://github.com/tensorflow/tensorflow/issues/58988"


def _minor(version: Optional[str]) -> str:
    return ".".join(map(str, minor(version)))


def _fresh_env_fix(facts: Facts, python_version: str, why: str) -> Remediation:
    """A Python tensorflow-metal has no wheel for: the GPU needs a new environment (manual steps), and
    what to install there is said in words (no plan runs in an environment that does not exist yet)."""
    combo = metal_pairing.gpu_combo(python_version)
    return Remediation(f"{why} For the GPU, create an environment with Python {python_version} and install "
                       f"{combo_words(combo) if combo else 'TensorFlow with tensorflow-metal'} there; "
                       "this one stays CPU-only.", fresh_environment(spelling_for(facts), python_version), APPLE_PLUGIN_URL)


def _metal_advice(version: str, pairing: Mapping[str, Any], tf: str) -> str:
    caveat = f" ({pairing['workaround']})" if pairing.get("workaround") else ""
    return f"Install tensorflow-metal {version}, the release that loads into TensorFlow {_minor(tf)}{caveat}."


def _install_metal(version: str, tf: str) -> Repair:
    return Repair.install(f"tensorflow-metal=={version}",
                          reason=f"tensorflow-metal {version} is the release that loads into TensorFlow {_minor(tf)}")


def _remove_metal(facts: Facts, reason: str) -> Repair:
    """Uninstall the plugin, every recorded copy of it (pip removes one per call)."""
    copies = tensorflow_distributions.installed(facts, tensorflow_distributions.METAL)
    return Repair.uninstall(tensorflow_distributions.METAL, reason=reason, copies=max(1, len(copies)))


def _no_metal_reason(tf: str) -> str:
    cutoff = no_metal_from_tf()
    which = f"{cutoff} or later" if cutoff and installable_wheels.within(tf, cutoff, None) else _minor(tf)
    return (f"no tensorflow-metal release loads into TensorFlow {which}: without the plugin `import tensorflow` "
            "works, on the CPU")


def _moves_back(combo: dict[str, str], tf: str) -> bool:
    """Would the GPU pair take TensorFlow back to an older minor? The plan never does that for the GPU:
    it keeps TensorFlow and says in words how to get the GPU."""
    return release(combo["tf"]) < minor(tf)


def _tf_build(facts: Facts) -> Optional[str]:
    """The TensorFlow build `import tensorflow` loads (tensorflow, tensorflow-macos...), when known."""
    builds = tensorflow_distributions.real_builds(facts)
    return builds[0].name if builds else None


def _build_fix(facts: Facts, metal: str, tf: str, python: Optional[str], build: str, wanted: str) -> Remediation:
    """The plugin was made for another TensorFlow build of this version: swap the build, keep the plugin."""
    platform = wheel_platform(facts)
    tf_minor = _minor(tf)
    has_wheel = bool(platform) and any(
        installable_wheels.covers_minor(row, tf_minor)
        and (not python or installable_wheels.within(python, row["python_min"], row["python_max"]))
        for row in installable_wheels.wheel_rows(platform, wanted))
    if has_wheel:
        why = (f"tensorflow-metal {metal} was built for {wanted}, not for the stock {build} wheel: it loads only "
               f"into {wanted} {tf_minor}")
        return Remediation(f"tensorflow-metal {metal} was built for {wanted}, not for the stock {build} wheel: "
                           f"replace {build} {tf} with {wanted} {tf_minor}.", (), APPLE_PLUGIN_URL,
                           (Repair.uninstall(build, reason=f"{wanted} {tf_minor} replaces it (one TensorFlow build "
                                                           "per environment)"),
                            Repair.install(f"{wanted}=={tf_minor}.*", reason=why)))
    return Remediation(f"tensorflow-metal {metal} was built for {wanted}, which has no {tf_minor} wheel for Python "
                       f"{_minor(python)} here: uninstall the plugin (TensorFlow then runs on the CPU).", (),
                       APPLE_PLUGIN_URL,
                       (_remove_metal(facts, f"tensorflow-metal {metal} loads only into {wanted}, which has no "
                                             f"{tf_minor} wheel for this Python: without it TensorFlow runs on the CPU"),))


def _pairing_fix(facts: Facts, metal: str, tf: str, python: Optional[str], pairing: Optional[Mapping[str, Any]]) -> Remediation:
    """Change the plugin to one that loads into this TF; or, where none does, remove it (TensorFlow stays)
    or move TensorFlow forward to the newest pair that loads, saying why it must move."""
    macos = product_version(section(facts, "os").get("sw_vers"))
    build = _tf_build(facts)
    wanted = (pairing or {}).get("built_for")
    if wanted and build and build != wanted:
        return _build_fix(facts, metal, tf, python, build, wanted)
    choice = metal_pairing.metal_choice(tf, python, macos, build)
    right_metal = choice[0] if choice else None
    if choice:
        repairs: tuple[Repair, ...] = (_install_metal(choice[0], tf),)
        advice = _metal_advice(choice[0], choice[1], tf)
    else:
        combo = metal_pairing.gpu_combo(python, macos)
        if combo and _moves_back(combo, tf):
            repairs = (_remove_metal(facts, _no_metal_reason(tf)),)
            advice = (f"No tensorflow-metal loads into TensorFlow {tf}: uninstall it, and TensorFlow runs on the CPU. "
                      f"For the GPU, move TensorFlow back to the newest pair that loads instead: {combo_words(combo)}.")
        elif combo:
            repairs = combo_repairs(facts, combo, f"no tensorflow-metal loads into TensorFlow {tf}: TensorFlow must move "
                                                  f"to {combo['tf']}, the newest release tensorflow-metal {combo['metal']} "
                                                  "loads into")
            advice = (f"No tensorflow-metal loads into TensorFlow {tf}: move TensorFlow to {combo['tf']} with "
                      f"tensorflow-metal {combo['metal']} for the GPU. Or stay on the CPU instead: uninstall "
                      "tensorflow-metal.")
        else:
            advice = f"No tensorflow-metal loads into TensorFlow {tf} on this Python: uninstall it and use the CPU."
            repairs = (_remove_metal(facts, _no_metal_reason(tf)),)
    tf_for_metal = newest_tf_minor_for_metal(metal)
    name = installable_wheels.install_name("macos-arm64", tf_for_metal) if tf_for_metal else None
    if right_metal and tf_for_metal and name and release(tf_for_metal) != minor(tf):
        # the plan carries one way; the other way out is words, or both would run
        advice += (f" Or keep tensorflow-metal {metal} and pin TensorFlow to {tf_for_metal}.x "
                   f"({name}=={tf_for_metal}.*) instead.")
    source = (pairing or {}).get("source", "")
    url = source.split()[0] if source.startswith("http") else APPLE_PLUGIN_URL
    return Remediation(advice, (), url, repairs)


def _not_installed(facts: Facts, tf: Optional[str], python: Optional[str]) -> Outcome:
    silicon = apple_silicon.apple_silicon(facts)
    if silicon is False:
        return Outcome.skip(f"Intel Mac: tensorflow-metal's x86_64 wheels ended at {metal_pairing.newest_x86_64_metal()} "
                            "(TensorFlow 2.13); TensorFlow runs on the CPU")
    if not interpreter_is_arm64(facts):
        return Outcome.skip("Python runs as x86_64 (see architecture): no tensorflow-metal for it")
    if not tf:
        return Outcome.skip("TensorFlow is not installed (see tensorflow-install)")
    evidence: dict[str, Any] = {"tensorflow": tf, "python": python}
    newest_python = metal_pairing.newest_metal_python()
    if release(python)[:2] > release(newest_python)[:2]:
        return Outcome.warn(f"No tensorflow-metal exists for Python {_minor(python)}: TensorFlow runs on the CPU only",
                            f"The newest tensorflow-metal ({metal_pairing.newest_metal()}) has wheels up to Python {newest_python}.",
                            fix=_fresh_env_fix(facts, newest_python, "pip finds no tensorflow-metal wheel here."),
                            **evidence)
    macos = product_version(section(facts, "os").get("sw_vers"))
    if macos and not installable_wheels.within(macos, "12.0", None):
        return Outcome.warn(f"tensorflow-metal needs macOS 12; this is macOS {macos}: TensorFlow runs on the CPU",
                            "See macos-version.", **evidence)
    choice = metal_pairing.metal_choice(tf, python, macos, _tf_build(facts))
    if choice:
        right, pairing = choice
        return Outcome.warn(f"tensorflow-metal is not installed: TensorFlow {tf} uses the CPU only",
                            fix=Remediation(_metal_advice(right, pairing, tf), (), APPLE_PLUGIN_URL,
                                            (_install_metal(right, tf),)),
                            **evidence)
    combo = metal_pairing.gpu_combo(python, macos)
    cutoff = no_metal_from_tf()
    untested = [v for v in metal_pairing.metal_versions()
                if (metal_pairing.metal_pairing(v, tf) or {}).get("outcome") == "loads_untested"
                and (metal_row := metal_pairing.metal_release(v)) is not None
                and metal_pairing.metal_supports_python(metal_row, python)]
    if cutoff and installable_wheels.within(tf, cutoff, None):
        why = f"No tensorflow-metal release loads into TensorFlow {cutoff} or later."
    elif untested:
        why = (f"tensorflow-metal {untested[-1]} installs here, but nobody has reported it working with "
               f"TensorFlow {_minor(tf)}.")
    else:
        why = f"No tensorflow-metal is known to load into TensorFlow {_minor(tf)} on Python {_minor(python)}."
    fix = None
    if combo:
        # TensorFlow works here, on the CPU: the plan moves it forward for the GPU, never back
        repairs = () if _moves_back(combo, tf) else combo_repairs(
            facts, combo, f"{why} TensorFlow must move to {combo['tf']}, the newest release tensorflow-metal "
                          f"{combo['metal']} loads into, for the GPU")
        fix = Remediation(f"{why} For the GPU, install {combo_words(combo)}.", (), APPLE_PLUGIN_URL, repairs)
    return Outcome.warn(f"TensorFlow {tf} has no Metal plugin: it runs on the CPU only", why, fix=fix, **evidence)


def _duplicates(facts: Facts, findings: Findings, dirs: list[dict]) -> None:
    python = section(facts, "python")
    user_site = str(python.get("user_site") or "")
    listing = "; ".join(f"{d['path']}" + (f" (tensorflow-metal {d['version']})" if d.get("version") else "") for d in dirs)
    in_user_site = [d for d in dirs if user_site and str(d["path"]).startswith(user_site)]
    if in_user_site:
        # the environment's pip does not uninstall outside the environment: the plan makes every Python
        # ignore the user site instead; removing that copy is the base interpreter's job (words)
        version = ".".join(str(python.get("version") or "3").split(".")[:2])
        base = f"{python.get('base_prefix')}/bin/python{version}" if python.get("base_prefix") else f"python{version}"
        advice = ("Keep exactly one tensorflow-metal: make every Python ignore the user site (PYTHONNOUSERSITE=1, "
                  f"as python -s does), or uninstall the user-site copy with the Python it belongs to ({base}, "
                  "outside this environment).")
        repairs: tuple[Repair, ...] = (Repair.set_env(
            "PYTHONNOUSERSITE", "1", reason="Python then ignores the user site, so only the environment's "
                                            "tensorflow-metal is on TensorFlow's plugin path"),)
    else:
        advice = ("Keep exactly one tensorflow-metal: uninstall the copies that are not wanted (pip removes the "
                  "first one on sys.path per call).")
        repairs = (Repair.uninstall(tensorflow_distributions.METAL, copies=len(dirs) - 1,
                                    reason=f"{len(dirs)} copies register the METAL platform twice; one must stay"),)
    findings.fail(
        f"{len(dirs)} copies of libmetal_plugin.dylib are on TensorFlow's plugin path",
        f"Copies: {listing}.",
        "TensorFlow loads every tensorflow-plugins directory (user site included); the second copy registers the "
        "METAL platform again and the process aborts: 'platform is already registered with name: \"METAL\"'.",
        fix=Remediation(advice, (), DUPLICATE_URL, repairs))


@check("metal-plugin", "Metal plugin (tensorflow-metal)", needs=("python", "distributions"),
       uses=("os", "sysctl", "cpu", "environment", "installers"), platforms=("Darwin",))
def metal_plugin(facts: Facts) -> Outcome:
    """tensorflow-metal loads into the installed TensorFlow and Python

    tensorflow-metal against the installed TensorFlow and Python, judged without importing (1.1.0 does not load into
    2.18/2.19, nothing loads into 2.20+, no wheel for 3.13+), duplicate copies, architecture
    """
    if not apple_silicon.is_mac(facts) and apple_silicon.apple_silicon(facts) is None:
        return Outcome.skip("not recorded: host (whether this is a Mac)", missing=["host"])
    python = section(facts, "python").get("version")
    tf = tensorflow_distributions.tensorflow_version(facts)
    entries = tensorflow_distributions.installed(facts, tensorflow_distributions.METAL)
    dirs = tensorflow_distributions.metal_plugin_dirs(facts)
    if not entries and not dirs:
        if tensorflow_distributions.tensorflow_copies(facts) and not tf:
            return Outcome.skip("TensorFlow's version was not recorded: cannot name the tensorflow-metal for it")
        return _not_installed(facts, tf, python)

    metal = (newest([e.get("version") for e in entries])
             or newest([d.get("version") for d in dirs]))
    findings = Findings()
    evidence = {"tensorflow_metal": metal, "tensorflow": tf, "python": python,
                "plugin_dirs": [d["path"] for d in dirs]}

    if len(dirs) > 1:
        _duplicates(facts, findings, dirs)

    machine = apple_silicon.interpreter_machine(facts)
    for record in dirs:
        archs = mach_o.architectures_from_hex(record.get("header_hex"))
        if archs and machine and can_run_as(archs, machine) is False:
            findings.fail(f"libmetal_plugin.dylib is {', '.join(archs)} but Python runs as {machine}",
                          f"In {record['path']}: dyld refuses it ('incompatible architecture').",
                          fix=Remediation("Reinstall tensorflow-metal from this interpreter, so pip picks the wheel "
                                          "for its architecture.", (), APPLE_PLUGIN_URL,
                                          (Repair.reinstall(f"tensorflow-metal=={metal}",
                                                            reason=f"pip picks the {machine} wheel for this interpreter"),)
                                          if metal else ()))
        elif archs:
            evidence.setdefault("plugin_architectures", archs)

    release_row = metal_pairing.metal_release(metal)
    wheel_machine = "x86_64" if machine == "x86_64" else "arm64"
    if release_row and python and not metal_pairing.metal_supports_python(release_row, python, wheel_machine):
        findings.fail(f"tensorflow-metal {metal} has no wheel for Python {_minor(python)} ({machine or 'this architecture'})",
                      f"Its wheels cover Python {release_row['python_min']}-{release_row['python_max']}; this copy was forced in.",
                      fix=_fresh_env_fix(facts, metal_pairing.newest_metal_python(),
                                         "This tensorflow-metal cannot work with this Python."))

    if not tensorflow_distributions.tensorflow_copies(facts):
        findings.warn(f"tensorflow-metal {metal or ''} is installed but TensorFlow is not".replace("  ", " "),
                      fix=Remediation("Install TensorFlow next to it (see tensorflow-install).", (), APPLE_PLUGIN_URL))
        return findings.outcome("", **evidence)

    if not metal or not tf:
        if findings.problems():
            return findings.outcome("", **evidence)
        return Outcome.skip("cannot match tensorflow-metal to TensorFlow: "
                            f"{'the plugin' if not metal else 'TensorFlow'}'s version was not recorded", **evidence)
    beyond = [f"{name} {version}" for name, version in ((tensorflow_distributions.METAL, metal),
                                                        (_tf_build(facts) or "tensorflow", tf))
              if knowledge_age.beyond(name, version)]
    if beyond:
        # a release newer than the tables: which tensorflow-metal loads into which TensorFlow there is unknown
        # (the curated rows' open ends, `tf_max = "2.99"`, are an inference about releases nobody has tried)
        evidence["pairing"] = "unknown"
        findings.note(f"{' and '.join(beyond)}: newer than the tables (see tensorflow-install), so this pair is not "
                      "in them")
        if findings.problems():
            return findings.outcome("", **evidence)
        return Outcome.skip(f"tensorflow-metal {metal} with TensorFlow {tf}: not in the tables ({' and '.join(beyond)} "
                            "newer than them)", **evidence)
    pairing = metal_pairing.metal_pairing(metal, tf, _tf_build(facts))
    evidence["pairing"] = pairing["outcome"] if pairing else "unknown"
    if pairing is None:
        findings.warn(f"No record of tensorflow-metal {metal} with TensorFlow {tf}",
                      "Neither Apple's table nor a tested report covers this pair.",
                      fix=_pairing_fix(facts, metal, tf, python, None))
    elif pairing["outcome"] == "import_fails":
        findings.fail(f"tensorflow-metal {metal} does not load into TensorFlow {tf}: 'import tensorflow' fails",
                      *( [f"The error: {pairing['error']}"] if pairing["error"] else []),
                      pairing["why"],
                      fix=_pairing_fix(facts, metal, tf, python, pairing))
    elif pairing["outcome"] == "crashes_in_use":
        findings.fail(f"tensorflow-metal {metal} imports into TensorFlow {tf} but crashes once training starts",
                      f"Reported: '{pairing['error']}'. {pairing['why']}",
                      fix=_pairing_fix(facts, metal, tf, python, pairing))
    elif pairing["outcome"] == "training_fails":
        findings.warn(f"TensorFlow {tf} with tensorflow-metal {metal}: model.fit fails with Keras {_minor(tf)}'s new optimizers",
                      f"The error: '{pairing['error']}: 0x...'. {pairing['why']}",
                      fix=Remediation("Use the legacy optimizers (tf.keras.optimizers.legacy.Adam and friends), or move "
                                      "to TensorFlow 2.12 or later, whose Keras falls back to them on Apple silicon.",
                                      (), OPTIMIZER_URL))
    elif pairing["outcome"] == "loads_untested":
        findings.warn(f"tensorflow-metal {metal} with TensorFlow {tf} is untested", pairing["why"],
                      fix=_pairing_fix(facts, metal, tf, python, pairing))
    else:
        findings.note(f"tensorflow-metal {metal} loads into TensorFlow {_minor(tf)}"
                      + ("" if pairing["official"] else " (not in Apple's table; reproduced on a real Mac)"))

    slow = keras3_slowdown(metal, tf)
    legacy = tensorflow_pins.legacy_keras()
    wants_legacy = str(section(facts, "environment").get(legacy["variable"]) or "") in legacy["true_values"]
    if slow and not wants_legacy and pairing and pairing["outcome"] == "loads":
        findings.warn(f"Keras 3 on tensorflow-metal {metal} trains at CPU speed",
                      f"Measured: {slow['measured']}.",
                      fix=Remediation(f"Use Keras 2 (tf_keras): install tf-keras for TensorFlow {_minor(tf)} and set "
                                      f"{legacy['variable']}=1 before TensorFlow is first imported.",
                                      (), KERAS3_URL,
                                      (Repair.install(f"tf-keras~={_minor(tf)}.0",
                                                      reason=f"Keras 2 (tf_keras) for TensorFlow {_minor(tf)}: Keras 3 on "
                                                             f"tensorflow-metal {metal} trains at CPU speed"),
                                       Repair.set_env(legacy["variable"], "1",
                                                      reason="tf.keras is then tf_keras (Keras 2); it must be set before "
                                                             "TensorFlow is first imported"))))
    elif installable_wheels.within(tf, legacy["tf_min"], None) and not wants_legacy and pairing and pairing["outcome"] == "loads":
        findings.note("Keras 3 with Metal: the CPU-speed slowdown was measured with tensorflow-metal 1.1.0; the probe "
                      "measures this machine")

    return findings.outcome(f"tensorflow-metal {metal} matches TensorFlow {tf}", **evidence)


def keras3_slowdown(metal: Optional[str], tf: Optional[str]) -> Optional[installable_wheels.Row]:
    for row in knowledge_rows("macos", "keras3_metal"):
        if installable_wheels.within(metal, row["metal_min"], row["metal_max"]) and installable_wheels.within(tf, row["tf_min"], None):
            return row
    return None


def newest_tf_minor_for_metal(metal: Optional[str]) -> Optional[str]:
    """The newest TensorFlow minor that `metal` is known to load into ('2.17' for 1.1.0)."""
    best: Optional[tuple[int, ...]] = None
    for row in knowledge_rows("macos", "metal_tf"):
        if row["outcome"] in metal_pairing.RECOMMENDABLE and installable_wheels.within(metal, row["metal_min"], row["metal_max"]):
            top = release(row["tf_max"])[:2]
            best = top if best is None or top > best else best
    return ".".join(map(str, best)) if best else None


def no_metal_from_tf() -> Optional[str]:
    """The first TensorFlow minor no metal release loads into (2.20)."""
    candidates = [row["tf_min"] for row in knowledge_rows("macos", "metal_tf")
                  if row["outcome"] == "import_fails" and release(row["metal_max"]) == release(metal_pairing.newest_metal())
                  and row["tf_max"].startswith("2.99")]
    return min(candidates, key=release) if candidates else None


def newest(versions: list[Optional[str]]) -> Optional[str]:
    known = [v for v in versions if v]
    return max(known, key=release) if known else None


def can_run_as(archs: Optional[list[str]], machine: str) -> Optional[bool]:
    """Does a file with these slices load into a process of `machine` ('arm64' / 'x86_64')? None: unknown."""
    if not archs:
        return None
    if mach_o.is_arm64(machine):
        return any(mach_o.is_arm64(a) for a in archs)
    return machine in archs


def interpreter_is_arm64(facts: Facts) -> bool:
    return apple_silicon.interpreter_machine(facts) in apple_silicon.ARM64_MACHINES
