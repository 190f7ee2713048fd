"""Reading facts["tensorflow"] (what the TensorFlow child recorded): its fate in words, the stage it
reached, the Python stack faulthandler printed, its GPUs (the fix a failure signature names is
remedies/signatures.py's). Pure functions of the facts, shared by the tensorflow-import, gpu-visible and
probe checks."""

from __future__ import annotations

import re
from typing import Any, Mapping

from tfdoctor.facts import Facts, canonical_name, section

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
        message = first_line(exception.get("message"))
        return f"raised {short_type(exception.get('type'))}" + (f": {message}" if message else "")
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
