"""Reading facts["tensorflow"] (what the TensorFlow child recorded): its fate in words, the stage it
reached, the Python stack faulthandler printed, its GPUs, and the fix a failure signature names.
Pure functions of the facts, shared by the tensorflow-import, gpu-visible and probe checks."""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from tfdoctor.versions import in_range
from tfdoctor.facts import Facts, canonical_name, section, signatures
from tfdoctor.environment.spell import fresh_environment, spelling_for
from tfdoctor.model import Remediation
from tfdoctor.repairs import Repair

SIGNAL_MEANINGS = {
    "SIGILL": "illegal instruction",
    "SIGSEGV": "segmentation fault",
    "SIGABRT": "aborted",
    "SIGBUS": "bus error",
    "SIGFPE": "arithmetic error",
    "SIGKILL": "killed",
    "SIGTERM": "terminated",
}

# Companions the child imports after TensorFlow and tf.keras, when installed (child/tf_child.py
# companion_imports), in this order: tf_keras first, as several of the others import it.
COMPANION_MODULES = ("tf_keras", "tensorflow_hub", "tensorflow_text", "tensorflow_io", "tensorflow_probability",
                     "tensorflow_decision_forests", "tensorflow_addons", "tensorflow_model_optimization",
                     "tensorflow_datasets", "keras_hub", "keras_nlp", "keras_cv")

# The child's stages (tfdoctor/child/tf_child.py), grouped by what was going on.
_IMPORT_STAGES = {None, "started", "importing", "import_failed", "not_installed"}
_DEVICE_STAGES = {"imported", "devices"}


def phase_of(stage: str | None) -> str:
    """'import' | 'devices' | 'probe' | 'keras' | 'workload' | 'companions' | 'done' for a recorded stage."""
    if stage in _IMPORT_STAGES:
        return "import"
    if stage in _DEVICE_STAGES:
        return "devices"
    if stage in ("done", "keras"):
        return stage
    if str(stage).startswith("workload"):  # --deep runs after the probe and keras: their records stand
        return "workload"
    if str(stage).startswith("companion:"):  # the companions' imports come last: every other record stands
        return "companions"
    return "probe"  # listed, probe, probe:GPU:warmup, probe:timing, probe:check


def fate(tf: Mapping[str, Any]) -> str:
    """How the child ended, in words: 'was killed after the 60 s timeout', 'died of SIGILL (...)'."""
    if tf.get("timed_out"):
        return f"did not finish within {tf.get('timeout_s') or 0:g} s and was killed"
    signal = tf.get("signal")
    if signal:
        meaning = SIGNAL_MEANINGS.get(signal)
        how = f"died of {signal}" + (f" ({meaning})" if meaning else "")
        if tf.get("signal_inferred"):
            how += f", exit code {tf.get('exit_code')}"
        return how
    exception = tf.get("exception")
    if exception:
        return f"raised {short_type(exception.get('type'))}: {first_line(exception.get('message'))}"
    if tf.get("exit_code") is None:  # a hand-written or older report that kept only the error text
        return "failed"
    return f"exited with code {tf.get('exit_code')}"


def short_type(name: Any) -> str:
    return str(name or "").rsplit(".", 1)[-1] or "an exception"


def first_line(text: Any, limit: int = 240) -> str:
    line = next((part.strip() for part in str(text or "").splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


_TRACE_START = re.compile(r"^(Fatal Python error|Timeout \(\d+:\d\d:\d\d)")
_TRACE_LINE = re.compile(r'^(File "|Thread 0x|Current thread 0x|Fatal Python error|Timeout \(\d+:|'
                         r'Extension modules:|<no Python frame>)')
_OWN_FRAME = re.compile(r'^File "(<frozen [^>]*>|<string>)"')  # importlib's and the child's own frames


def python_stack(tf: Mapping[str, Any], limit: int = 3) -> list[str]:
    """faulthandler's header and the innermost frames of the user's code when the child crashed or
    hung: [header, frame, ...] (frames most recent first), or []."""
    lines = [line.strip() for line in (tf.get("stderr_tail") or "").splitlines()]
    starts = [i for i, line in enumerate(lines) if _TRACE_START.match(line)]
    if not starts:
        return []
    block = lines[starts[-1]:]
    frames = [line for line in block[1:] if line.startswith('File "') and not _OWN_FRAME.match(line)]
    return [block[0]] + frames[:limit]


def stack_line(tf: Mapping[str, Any]) -> str | None:
    stack = python_stack(tf)
    if len(stack) < 2:
        return None
    return "Python stack (innermost first): " + " <- ".join(stack[1:])


def stderr_excerpt(tf: Mapping[str, Any], count: int = 3, gpu_expected: bool = True) -> list[str]:
    """The last meaningful lines of the child's stderr: harmless noise and faulthandler's dump (shown
    by stack_line) left out."""
    from tfdoctor.facts.tensorflow_log import noise_kind

    lines = [line.strip() for line in (tf.get("stderr_tail") or "").splitlines() if line.strip()]
    kept = [line for line in lines if not _TRACE_LINE.match(line) and noise_kind(line, gpu_expected) is None]
    return [first_line(line, 300) for line in kept[-count:]]


def installed_names(facts: Facts) -> set[str]:
    return {canonical_name(str(d.get("name") or "")) for d in facts.get("distributions") or ()}


def devices(tf: Mapping[str, Any], kind: str) -> list[Mapping[str, Any]]:
    return [d for d in tf.get("devices") or () if d.get("device_type") == kind]


def gpu_names(tf: Mapping[str, Any]) -> list[str]:
    """What each GPU is: TensorFlow's device details, else the Metal plugin's startup line."""
    names = [str(d.get("device_name")) for d in tf.get("gpu_details") or () if d.get("device_name")]
    if names:
        return names
    metal = [line.split("Metal device set to:", 1)[1].strip() for line in tf.get("metal_lines") or ()
             if "Metal device set to:" in line]
    return metal[:1]


def _step_applies(step: signatures.FixStep, tf_version: str | None) -> bool:
    if step.when_tensorflow_below or step.when_tensorflow_at_least:
        if not tf_version:
            return False
        return in_range(tf_version, step.when_tensorflow_at_least, step.when_tensorflow_below)
    return True


def placeholders(facts: Facts, groups: Mapping[str, str] | None = None) -> dict[str, str]:
    """Values for the {names} in fix steps: the installed TensorFlow's version and distribution, and the
    named groups of the matched error text ({gencode} and, for a version, {gencode_next_major})."""
    from tfdoctor.facts.tensorflow_distributions import real_builds, tensorflow_version

    installed = tensorflow_version(facts) or str(section(facts, "tensorflow").get("version") or "")
    values = {"tensorflow_version": installed,
              "tensorflow_distribution": next((copy.name for copy in real_builds(facts)), "tensorflow"),
              "cuda_tensorflow_version": _finds_its_cuda_libraries(installed)}
    for key, value in (groups or {}).items():
        values[key] = value
        major = re.match(r"(\d+)\.\d+", value)
        if major:
            values[f"{key}_next_major"] = str(int(major.group(1)) + 1)
    return values


def _finds_its_cuda_libraries(version: str) -> str:
    """The release to install for TensorFlow's pip CUDA libraries: the installed one, unless a known trap
    says that release cannot find them (2.16.1: its RUNPATH misses them; linux.toml [[traps]])."""
    from tfdoctor.knowledge import rows as knowledge_rows

    for trap in knowledge_rows("linux", "traps"):
        if trap["id"].endswith("pip-cuda-not-found") and version in trap.get("tf_versions", ()) and trap.get("fixed_in"):
            return str(trap["fixed_in"])
    return version


def _fill(name: str, values: Mapping[str, str]) -> str | None:
    """The name with its {placeholders} filled; None when one has no value (the step cannot apply)."""
    try:
        filled = name.format_map(values)
    except (KeyError, ValueError, IndexError):
        return None
    return filled if "==" not in filled or not filled.endswith("==") else None


def repairs_for(steps: Iterable[signatures.FixStep], facts: Facts, reason: str,
                groups: Mapping[str, str] | None = None) -> tuple[tuple[Repair, ...], tuple[str, ...]]:
    """(repairs, manual commands) for these fix steps, for the installed TensorFlow: installs, uninstalls and
    exact reinstalls become repair intents the plan carries out; a fresh environment is the user's to make
    (the steps after it belong to that new environment, which the signature's advice says in words)."""
    from tfdoctor.facts import integrity

    values = placeholders(facts, groups)
    tf_version = values["tensorflow_version"] or None
    repairs: list[Repair] = []
    for step in steps:
        if not _step_applies(step, tf_version) or (step.otherwise and repairs):
            continue
        filled = [_fill(n, values) for n in step.names]
        if any(n is None for n in filled):
            continue
        names = [n for n in filled if n is not None]
        if step.action == "fresh_environment":
            return tuple(repairs), fresh_environment(spelling_for(facts))
        if step.action == "install":
            repairs.append(Repair.install(*names, reason=reason))
        elif step.action == "uninstall":
            repairs.append(Repair.uninstall(*names, reason=reason))
        elif step.action == "reinstall":
            by_conda, others = integrity.by_installer(facts, names)
            if by_conda:
                repairs.append(Repair.reinstall(*by_conda, reason=reason, manager="conda",
                                                prefix=integrity.conda_prefix(facts)))
            if others:
                repairs.append(Repair.reinstall(*others, reason=reason))
    return tuple(repairs), ()


def remediation_for(match: signatures.Match, facts: Facts) -> Remediation:
    signature = match.signature
    repairs, manual = repairs_for(signature.fix, facts, signature.summary, match.groups)
    return Remediation(signature.advice, manual, signature.url, repairs)


def cpu_flags(facts: Facts) -> set[str] | None:
    """Lower-case ISA flags: /proc/cpuinfo or py-cpuinfo, or an Intel Mac's sysctl feature lists."""
    flags = section(facts, "cpu").get("flags")
    if flags:
        return {str(f).lower() for f in flags}
    sysctl = section(facts, "sysctl")
    features = " ".join(str(sysctl.get(k) or "") for k in ("machdep.cpu.features", "machdep.cpu.leaf7_features"))
    if features.strip():
        # sysctl spells AVX as AVX1.0 (machdep.cpu.features, https://github.com/tensorflow/tensorflow/issues/47205)
        # and AVX2 as AVX2 (leaf7_features, https://github.com/yaroslavvb/tensorflow-community-wheels/issues/95)
        return {f.lower().replace("avx1.0", "avx") for f in features.split()}
    return None
