"""TensorFlow imports: the fate of `import tensorflow` in the isolated child, and why it failed.

The child's fate (exception, signal, timeout) is matched against the failure signatures
(knowledge/signatures.toml); an illegal instruction is then put in context (Rosetta 2, an emulator,
a CPU or VM CPU model without AVX) from the platform facts. Not installed: skip, because
tensorflow-install already fails with the install command.
"""

from __future__ import annotations

from typing import Any, Mapping

from tfdoctor.checking.registry import Facts, check
from tfdoctor.environment import installers
from tfdoctor.environment.pip import installer_for
from tfdoctor.facts import (
    host_system,
    import_suspects,
    requires_dist,
    shadowing,
    signatures,
    tensorflow_child,
)
from tfdoctor.remedies import experiments as experiment_remedies, import_causes
from tfdoctor.remedies.signatures import remediation_for
from tfdoctor.results.model import Outcome, Remediation

INSTRUCTION_SIGNATURES = ("illegal-instruction", "cpu-without-avx-message")


@check("tensorflow-import", "TensorFlow imports", needs=("tensorflow",),
       uses=("host", "os", "python", "distributions", "cpu", "sysctl", "integrity", "installers", "experiments"))
def tensorflow_import(facts: Facts) -> Outcome:
    """`import tensorflow` in a child process: crash, hang or error matched to a known cause

    `import tensorflow` in a child process: its fate (exception, SIGILL, segfault, abort, hang) matched against
    known failure signatures; an error that names an installed distribution (google.protobuf, ml_dtypes, numpy,
    h5py, a library of the tensorflow package) is tied to the pin it violates or the file its RECORD misses, and the
    fix repairs every broken pin together; an error no signature and no declaration explains but that names
    distributions outside TensorFlow (its message's modules, then its failing frames, mapped through RECORD or the
    path under site-packages: `facts/import_suspects.py`) names them as suspects, each with a candidate release, and
    no plan step: the offline experiments still run, and `tfdoctor --prove` / `fix` try the candidates on a copy
    """
    tf = facts["tensorflow"]
    if tf.get("status") == "not_installed":
        return Outcome.skip("TensorFlow is not installed for this interpreter (see tensorflow-install)")
    if tf.get("imported"):
        return _imported(tf)
    return _failed(facts, tf)


def _imported(tf: Mapping[str, Any]) -> Outcome:
    version = tf.get("version")
    seconds = tf.get("import_s")
    took = f" in {seconds:.1f} s" if isinstance(seconds, (int, float)) else ""
    details = [build_description(tf.get("build_info"))]
    for plugin in tf.get("plugins") or ():
        state = {True: "loaded", False: "present but not loaded", None: "present"}[plugin.get("loaded")]
        details.append(f"plugin {state}: {plugin.get('path')}")
    later = tensorflow_child.phase_of(tf.get("stage"))
    if tf.get("status") != "ok" and later != "done":
        see = later if later in ("keras", "companions") else "gpu-visible and probe"
        details.append(f"after the import the child {tensorflow_child.fate(tf)} (while {later}; see {see})")
    named = f"TensorFlow {version}" if version else "TensorFlow (version not recorded)"
    return Outcome.ok(f"{named} imported{took}", *details, version=version, import_s=seconds,
                      build_info=tf.get("build_info"))


def build_description(build_info: Mapping[str, Any] | None) -> str:
    if not build_info:
        return "build information not recorded"
    if build_info.get("is_cuda_build"):
        cuda = build_info.get("cuda_version")
        return f"CUDA build (CUDA {cuda})" if cuda else "CUDA build"
    if build_info.get("is_rocm_build"):
        return "ROCm build"
    return "CPU-only build (no CUDA)"


def _failed(facts: Facts, tf: Mapping[str, Any]) -> Outcome:
    spec = tf.get("spec") or {}
    if spec.get("namespace"):
        return _namespace_package(facts, tf, spec)
    hidden = hiding_tensorflow_import(facts)
    matches = signatures.find(tf, tensorflow_child.installed_names(facts), phases=("import",))
    what = f"`import tensorflow` {tensorflow_child.fate(tf)}"
    details = _context_lines(tf)
    evidence: dict[str, Any] = {"status": tf.get("status"), "stage": tf.get("stage"), "signal": tf.get("signal"),
                                "exit_code": tf.get("exit_code"), "timed_out": tf.get("timed_out"),
                                "signatures": [m.signature.id for m in matches]}
    # The environment's own declarations (RECORD, Requires-Dist) explain an error that names one of their
    # distributions better than any table: their repair fixes every broken pin together, not one.
    stderr = "\n".join(part for part in (tf.get("stderr_head"), tf.get("stderr_tail")) if part)
    cause = import_causes.import_error_cause(facts, tf.get("exception"), stderr, broad=not matches and not tf.get("timed_out"))
    if cause:
        evidence.update(explained_by=cause.check, cause=list(cause.distributions))
        details = [f"cause ({cause.check}): {line}" for line in cause.details] + details
        exception = tf.get("exception") or {}
        if exception and (cause.named or not matches):
            # the cause is the summary; the error's own (often long) text moves to the details
            what = f"`import tensorflow` raised {tensorflow_child.short_type(exception.get('type'))}"
            details.insert(0, f"error: {exception.get('type')}: {tensorflow_child.first_line(exception.get('message'), 300)}")
    raised = not tf.get("timed_out") and not tf.get("signal")  # a hang or a crash keeps its own tools
    if hidden and raised and not matches and (cause is None or _hidden_explains(cause, hidden)):
        # the copy that hides the installed one is what failed: not an unknown error, nor the installed pins
        return _hidden(tf, hidden, details, evidence)
    if hidden:
        details.insert(0, f"note: the import loaded {_hidden_names(hidden)}, not the installed copy (see shadowing)")
    proven = experiment_remedies.proven_or_noted(facts, "import", what, details, evidence)
    if proven is not None:  # the experiments ran because nothing above proved a cause
        return proven
    if not matches:
        if cause:
            return Outcome.fail(f"{what}: {cause.summary} (see {cause.check})", *details, fix=cause.fix, **evidence)
        found = import_suspects.suspects(facts, tf.get("exception")) if raised else []
        if found:  # issue 29: no rule explains it, but the error names distributions to try, as an expert would
            return _suspected(facts, tf, what, found, details, evidence)
        own = import_suspects.own_files_failing(facts, tf.get("exception")) if raised else []
        if own:  # issue 38: the failing file is TensorFlow's own: the build laid down again is the one to try
            evidence["candidates"] = [{"name": s.name, "requirement": s.requirement, "reinstall": True,
                                       "why": f"the import error points into {s.name} {s.version}'s own files "
                                              f"({s.how()}): reinstalled as it was"} for s in own]
            details.append(f"the error points into {own[0].name} {own[0].version}'s own files ({own[0].how()}): "
                           "`tfdoctor --prove` tries it reinstalled as it was on a throwaway copy")
        return Outcome.fail(what, *details, fix=_unknown_failure_fix(facts, tf), **evidence)
    primary = matches[0]
    evidence["diagnosis"] = primary.signature.diagnosis
    lines = [] if primary.where == "signal" else [f"matched ({primary.where}): {tensorflow_child.first_line(primary.evidence, 300)}"]
    lines += [f"also: {m.signature.summary}" for m in matches[1:]]
    summary, fix = primary.signature.summary, remediation_for(primary, facts)
    if primary.signature.id in INSTRUCTION_SIGNATURES:
        instruction = instruction_cause(facts, tf)
        evidence["cause"] = instruction["id"]
        summary, fix = instruction["summary"], instruction["fix"] or fix
    elif cause and cause.named:
        # the error names a distribution the environment's metadata shows broken: that repair fixes every
        # unmet pin (and damaged file) together, where the table's fix would name one of them
        lines = [f"known error: {primary.signature.summary}"] + [line for line in lines if line.startswith("also:")]
        summary, fix = f"{cause.summary} (see {cause.check})", cause.fix
    return Outcome.fail(f"{what}: {summary}", *lines, *details, fix=fix, **evidence)


def _suspected(facts: Facts, tf: Mapping[str, Any], what: str, found: list[import_suspects.ImportSuspect],
               details: list[str], evidence: dict[str, Any]) -> Outcome:
    """No rule or declaration explains the error, but it names distributions outside TensorFlow: they are the
    suspects, the first one's candidate the repair, and `tfdoctor --prove` (or fix) tries them on a clone."""
    first = found[0]
    exception = tf.get("exception") or {}
    evidence["diagnosis"] = "suspected"  # a hypothesis, not a cause: no plan step, the experiments still run
    evidence["suspects"] = [s.to_dict() for s in found]
    evidence["candidates"] = [{"name": s.name, "requirement": s.requirement,
                               "why": f"the import error points into {s.name} {s.version} ({s.how()})"} for s in found]
    lines = [f"error: {exception.get('type')}: {tensorflow_child.first_line(exception.get('message'), 300)}",
             "No known error and no declared pin explains it; the distributions it names are the suspects:",
             *(f"suspect: {s.describe()}" for s in found[:4]),
             "the experiment that would prove it: `tfdoctor --prove` tries each candidate on a throwaway copy "
             "(it uses the package index; `tfdoctor fix` runs it before it applies anything)"]
    pin = requires_dist.tensorflow_pin(facts)
    keep = f", keeping {pin.replace('==', ' ')} where it is" if pin else ""
    # No plan step: a suspect is not a cause until a trial proves it, and `tfdoctor fix` runs the trials when
    # the plan has nothing to run (fixer/trials.py reads these candidates).
    advice = (f"Suspect {first.name} {first.version} ({first.how()}): the candidate is {first.requirement}{keep}. "
              "`tfdoctor --prove` tries each suspect's candidate on a throwaway copy (it uses the package index), "
              "and `tfdoctor fix` applies the one that makes TensorFlow work. The full traceback:")
    fix = Remediation(advice, _unknown_failure_fix(facts, tf).commands)
    short = tensorflow_child.short_type(exception.get("type"))
    return Outcome.fail(f"`import tensorflow` raised {short}: suspect {first.name} {first.version} (the error points "
                        "into it; no rule explains it)", *lines, *details, fix=fix, **evidence)


def _hidden_names(hidden: list[shadowing.Hiding]) -> str:
    return ", ".join(f"{h.imported_as} from {h.origin}" for h in hidden)


def _hidden_explains(cause: import_causes.Cause, hidden: list[shadowing.Hiding]) -> bool:
    """Does the copy that hides an installed module explain the failure better than the installed metadata?
    Yes when it hides TensorFlow itself, or the distribution the cause blames."""
    blamed = set(cause.distributions)
    return any(h.imported_as == "tensorflow" or shadowing.DISTRIBUTION_OF.get(h.module) in blamed for h in hidden)


def _hidden(tf: Mapping[str, Any], hidden: list[shadowing.Hiding], details: list[str],
            evidence: dict[str, Any]) -> Outcome:
    """The import met a copy from outside the installation (a tensorflow.py in the project folder, an old
    NumPy on PYTHONPATH): that copy is the cause, and the shadowing check carries its fix."""
    return Outcome.fail(
        f"`import tensorflow` {tensorflow_child.fate(tf)}: it imported {_hidden_names(hidden)}, not the installed copy "
        "(see shadowing)",
        *details,
        fix=Remediation("The import met a copy from outside this installation: get it out of the way first (the "
                        "shadowing check says how; its steps are in the plan), then run tfdoctor again."),
        **{**evidence, "diagnosis": "module-shadowed", "hidden": [h.to_dict() for h in hidden]})


def _context_lines(tf: Mapping[str, Any]) -> list[str]:
    # the child records its stage from its first line on; a report without one simply did not record it
    lines = [f"stage reached: {tf['stage']}"] if tf.get("stage") else []
    stack = tensorflow_child.stack_line(tf)
    if stack:
        lines.append(stack)
    lines += [f"stderr: {line}" for line in tensorflow_child.stderr_excerpt(tf)]
    return lines


def _unknown_failure_fix(facts: Facts, tf: Mapping[str, Any]) -> Remediation:
    python = installer_for(facts).python
    python = f'"{python}"' if " " in python else python
    if tf.get("timed_out"):
        return Remediation(
            "The import blocked until the timeout. Run it by hand to see which module it stops in "
            "(the last line printed); if the machine is only slow, give tfdoctor more time with --timeout.",
            (f'{python} -X importtime -c "import tensorflow"',),
        )
    if tf.get("signal"):
        return Remediation(
            "The interpreter crashed inside a native library. This shows the Python stack at the crash, "
            "which names the module that was loading:",
            (f'{python} -X faulthandler -c "import tensorflow"',),
        )
    return Remediation("tfdoctor does not know this error. The full traceback:",
                       (f'{python} -c "import tensorflow"',))


def _namespace_package(facts: Facts, tf: Mapping[str, Any], spec: Mapping[str, Any]) -> Outcome:
    """A tensorflow/ directory without __init__.py: what is left when one of two distributions that
    shared the directory (tensorflow and tensorflow-macos, ...) is uninstalled."""
    from tfdoctor.facts.tensorflow_distributions import tensorflow_copies

    copies = tensorflow_copies(facts)
    names = [copy.name for copy in copies] or ["tensorflow"]
    version = copies[0].version if copies else None
    pin = f"{names[0]}=={version}" if version else names[0]
    locations = ", ".join(spec.get("locations") or ()) or "?"
    return Outcome.fail(
        "`import tensorflow` finds a tensorflow directory without its __init__.py (an incomplete install)",
        f"found: {locations}",
        f"the child {tensorflow_child.fate(tf)}",
        fix=Remediation(
            "Two TensorFlow distributions that write the same tensorflow/ directory were installed and one "
            "was uninstalled, taking shared files with it. Reinstall the one you use.",
            repairs=installers.reinstall_repairs(facts, [pin], f"tensorflow/ has no __init__.py: "
                                                 f"{pin.replace('==', ' ')} lays its files down again"),
        ),
        status=tf.get("status"), diagnosis="conflicting-tf-distributions",
    )


def instruction_cause(facts: Facts, tf: Mapping[str, Any]) -> dict[str, Any]:
    """Why the CPU could not run TensorFlow's instructions: Rosetta 2, an emulator, a VM CPU model that
    hides AVX, or a CPU without AVX. {'id', 'summary', 'fix' (Remediation or None)}."""
    from tfdoctor.facts import apple_silicon

    stderr = "\n".join(part for part in (tf.get("stderr_head"), tf.get("stderr_tail")) if part)
    if host_system(facts) == "Darwin" and apple_silicon.translated(facts):
        return {"id": "rosetta", "summary": "this Python is an x86_64 program running under Rosetta 2, "
                "which cannot execute TensorFlow's AVX instructions", "fix": _native_arm64_fix(facts)}
    if "qemu:" in stderr:
        return {"id": "emulation", "summary": "the x86_64 build runs under QEMU emulation, which offers no AVX",
                "fix": Remediation("Use an arm64 (aarch64) image and TensorFlow build instead of an emulated "
                                   "amd64 one, or run natively.")}
    flags = tensorflow_child.cpu_flags(facts)
    if flags is not None and "avx" not in flags:
        if "hypervisor" in flags:
            return {"id": "vm-cpu-model", "summary": "this virtual machine's CPU model hides AVX from the guest",
                    "fix": Remediation("Set the VM's CPU type to `host` (or a model that exposes AVX) so the "
                                       "guest sees the host CPU's AVX, then check that `avx` appears in "
                                       "/proc/cpuinfo.")}
        return {"id": "cpu-without-avx", "summary": "this CPU has no AVX, which every official TensorFlow "
                "build since 1.6 requires", "fix": Remediation(
                    "Official TensorFlow builds need AVX. Use a machine with AVX, or a TensorFlow built "
                    "from source for this CPU.")}
    if flags is not None and not {"avx2", "fma", "bmi2"} <= flags:
        missing = ", ".join(sorted({"avx2", "fma", "bmi2"} - flags))
        return {"id": "cpu-without-avx2", "summary": f"this CPU lacks {missing}, which this TensorFlow build "
                "uses (see cpu-instructions)", "fix": None}
    return {"id": "unknown", "summary": "the CPU met an instruction it cannot execute", "fix": None}


def _native_arm64_fix(facts: Facts) -> Remediation:
    from tfdoctor.remedies.arm64 import native_environment

    name, commands = native_environment(facts)
    return Remediation(f"Create a native arm64 environment from {name} and install TensorFlow there; "
                       "an x86_64 interpreter cannot be repaired in place.", commands)


def hiding_tensorflow_import(facts: Facts) -> list[shadowing.Hiding]:
    """The hiding copies that `import tensorflow` itself meets (keras only later, through tf.keras)."""
    return [h for h in shadowing.hiding(facts) if h.imported_as in shadowing.IMPORTED_WITH_TENSORFLOW]
