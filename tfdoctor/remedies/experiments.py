"""What a proof by experiment says and how it is repaired (issue 29), shared by the tensorflow-import,
keras and companions checks: one wording, one set of repair intents, whichever check reports it.

A variable proven to break the import is unset (a manual step the planner spells for the plan's shell)
and its line in the shell profile is named; Keras's configuration file gets the exact edit; a companion's
Keras 2 layer under Keras 3 gets tf.keras routed to tf-keras (TF_USE_LEGACY_KERAS=1, with the tf-keras
made for the installed TensorFlow).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from tfdoctor.facts import experiments as experiment_facts
from tfdoctor.results.model import Remediation
from tfdoctor.results.repairs import Repair

Facts = Mapping[str, Any]
PROFILE = ("and delete the line that sets it from your shell profile (~/.bashrc, ~/.zshrc, ~/.profile, or the "
           "environment variables of your Windows account, an IDE's run configuration or a container's ENV) so "
           "that new shells do not set it again")
LOADER_VARIABLES = ("LD_LIBRARY_PATH", "LD_PRELOAD", "DYLD_LIBRARY_PATH", "DYLD_FALLBACK_LIBRARY_PATH",
                    "DYLD_INSERT_LIBRARIES", "DYLD_FRAMEWORK_PATH")
LEGACY_KERAS_URL = "https://github.com/tensorflow/tensorflow/releases/tag/v2.16.1"
KERAS_CONFIG_URL = "https://keras.io/getting_started/#configuring-your-backend"
WHAT = {"import": "`import tensorflow`", "keras": "tf.keras", "companion": "the import of {module}",
        "use": "{module}.{layer} in a tf.keras model"}


def goal_words(goal: Mapping[str, Any]) -> str:
    return WHAT.get(str(goal.get("kind")), "it").format(module=goal.get("module"), layer=goal.get("layer"))


def trials_line(facts: Facts) -> str:
    section = experiment_facts.section(facts)
    trials = section.get("trials") or ()
    seconds = section.get("seconds")
    took = f" in {seconds:.1f} s" if isinstance(seconds, (int, float)) else ""
    return f"experiments: {len(trials)} trial{'s' if len(trials) != 1 else ''} in a child{took}, the real environment untouched"


def proven_summary(proof: Mapping[str, Any]) -> str:
    """'proven by experiment: `import tensorflow` works with PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION unset'."""
    return f"proven by experiment: {goal_words(proof.get('goal') or {})} works with {proof.get('description')}"


def proven_details(facts: Facts, proof: Mapping[str, Any]) -> list[str]:
    section = experiment_facts.section(facts)
    values = section.get("variables_set") or {}
    lines = [trials_line(facts)]
    for name in proof.get("unset") or ():
        if name in values:
            lines.append(f"{name}={values[name]} is set in the environment the doctor ran in")
    config = section.get("keras_config") or {}
    if "keras-config" in (proof.get("changes") or ()) and config.get("path"):
        lines.append(f"Keras reads {config['path']}" + (f", which names the backend \"{config['backend']}\""
                                                         if config.get("backend") else ""))
    return lines


def remediation(facts: Facts, proof: Mapping[str, Any]) -> Remediation:
    """The repair of what the proof changed: unset the variables, edit keras.json, the isolation's fix."""
    goal = goal_words(proof.get("goal") or {})
    changes = list(proof.get("changes") or ())
    repairs: list[Repair] = []
    advice: list[str] = []
    unset = list(proof.get("unset") or ())
    for name in unset:
        if name == "PYTHONPATH":
            continue  # said below with the isolation
        repairs.append(Repair.unset_env(name, reason=f"{goal} works once {name} is unset (proven by experiment)"))
    variables = [n for n in unset if n != "PYTHONPATH"]
    if variables:
        names = ", ".join(variables)
        advice.append(f"{goal} works with {names} unset: unset {'it' if len(variables) == 1 else 'them'} in this shell "
                      f"{PROFILE}.")
        if any(n in LOADER_VARIABLES for n in variables):
            advice.append("If you need that variable for other software, drop from it only the directories that hold "
                          "another build of a library TensorFlow ships (libtensorflow_framework, libtensorflow_cc, "
                          "CUDA or cuDNN libraries).")
    if "keras-config" in changes:
        advice.append(keras_config_edit(facts, goal))
    for name, value in proof.get("set") or ():
        repairs.append(Repair.set_env(name, value, reason=f"{goal} works with {name}={value} (proven by experiment)"))
        advice.append(f"{goal} works with {name}={value}: set it in this shell and in your shell profile.")
    if "no-pythonpath" in changes:
        repairs.append(Repair.unset_env("PYTHONPATH", reason=f"{goal} works without PYTHONPATH (proven by experiment)"))
        advice.append(f"{goal} works without PYTHONPATH: unset it {PROFILE}.")
    if "no-user-site" in changes:
        repairs.append(Repair.set_env("PYTHONNOUSERSITE", "1",
                                      reason=f"{goal} works without the user site (proven by experiment)"))
        advice.append(f"{goal} works without your user site-packages (a copy there hides the environment's): set "
                      "PYTHONNOUSERSITE=1, or uninstall what `pip install --user` put there.")
    if "other-cwd" in changes:
        advice.append(f"{goal} works from another working directory: a file or folder in the directory tfdoctor ran "
                      "in hides a module TensorFlow imports; rename it (the shadowing check names it when it can).")
    if "isolated" in changes and len(changes) == 1:
        advice.append(f"{goal} works in Python's isolated mode (-I): a PYTHON* variable (PYTHONHOME, PYTHONSTARTUP, "
                      "...) breaks it; unset the PYTHON* variables you do not need.")
    url = KERAS_CONFIG_URL if "keras-config" in changes else None
    return Remediation(" ".join(advice) or f"{goal} works with {proof.get('description')}.", url=url,
                       repairs=tuple(repairs))


def keras_config_edit(facts: Facts, goal: str) -> str:
    config = experiment_facts.section(facts).get("keras_config") or {}
    path = config.get("path") or "~/.keras/keras.json"
    backend = config.get("backend")
    if backend and backend != "tensorflow":
        return (f"{goal} works with Keras's configuration file ignored: {path} names the backend \"{backend}\", "
                f"which is not installed here. Edit {path} and change \"backend\": \"{backend}\" to "
                f"\"backend\": \"tensorflow\" (or install {backend}; or unset KERAS_HOME if it points at another "
                "project's configuration).")
    return (f"{goal} works with Keras's configuration file ignored: {path} is what breaks it. Move it aside "
            f"(for example to {path}.bak); Keras writes a default one on its next start.")


def use_remediation(facts: Facts, proof: Mapping[str, Any], tf_keras_repairs: tuple[Repair, ...],
                    tf_version: Optional[str]) -> Remediation:
    """A companion's Keras 2 layer under Keras 3: route tf.keras to tf-keras (the proof's variable, or, when
    tf-keras is missing, the tf-keras made for this TensorFlow with TF_USE_LEGACY_KERAS=1)."""
    goal = proof.get("goal") or {}
    layer = f"{goal.get('module')}.{goal.get('layer')}"
    if proof.get("works"):
        base = remediation(facts, proof)
        return Remediation(f"{layer} is a Keras 2 (tf-keras) layer and tf.keras here is Keras 3. " + base.advice
                           + " Keras 3 code in the same program then needs `import keras` instead of tf.keras.",
                           url=LEGACY_KERAS_URL, repairs=tuple(tf_keras_repairs) + base.repairs)
    reason = f"{layer} is a Keras 2 layer: tf.keras must be tf-keras (TF_USE_LEGACY_KERAS=1)"
    return Remediation(
        f"{layer} is a Keras 2 (tf-keras) layer and tf.keras here is Keras 3: install the tf-keras of TensorFlow "
        f"{tf_version or 'this TensorFlow'} and set TF_USE_LEGACY_KERAS=1 (in this shell and your shell profile), "
        "so that tf.keras is tf-keras.", url=LEGACY_KERAS_URL,
        repairs=tuple(tf_keras_repairs) + (Repair.set_env("TF_USE_LEGACY_KERAS", "1", reason=reason),))


def proven_failure(facts: Facts, kind: str, what: str, details: list[str], evidence: Mapping[str, Any],
                   module: Optional[str] = None):
    """The failing Outcome a check returns when an experiment proved what makes `kind` work, else None."""
    from tfdoctor.results.model import Outcome

    proof = experiment_facts.proof_for(facts, kind, module)
    if proof is None or not proof.get("works"):
        return None
    return Outcome.fail(f"{what}: {proven_summary(proof)}", *proven_details(facts, proof), *details,
                        fix=remediation(facts, proof),
                        **{**evidence, "diagnosis": "proven-by-experiment", "proven": dict(proof)})


def proven_or_noted(facts: Facts, kind: str, what: str, details: list[str], evidence: Mapping[str, Any]):
    """The failing Outcome of a proof for `kind`; else None, with what the experiments tried (and that
    proved nothing) added to `details`."""
    proven = proven_failure(facts, kind, what, details, evidence)
    if proven is None:
        tried = unproven_line(facts, kind)
        if tried:
            details.append(tried)
    return proven


def unproven_line(facts: Facts, kind: str, module: Optional[str] = None) -> Optional[str]:
    """When experiments ran for `kind` and none made it work: say what was tried."""
    trials = experiment_facts.tried(facts, kind, module)
    if not trials:
        return None
    section = experiment_facts.section(facts)
    tried = "; ".join(str(t.get("description")) for t in trials[:6])
    out = " (stopped at the time budget)" if section.get("stopped") == "budget" else ""
    return f"experiments: none of {len(trials)} trial{'s' if len(trials) != 1 else ''} made it work{out}: {tried}"
