"""The offline experiments' facts (issue 29), read: which failures want experiments, and what they proved.

A failure wants experiments when TensorFlow's import, tf.keras or a companion failed and the check that
reports it proved no cause (its result asks for no repair: "does not know this error", "nothing in the
environment's metadata explains it"), or when a companion's Keras layer subclasses another Keras than
the tf.keras in use (recorded by the TensorFlow child). A healthy environment wants none.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

from tfdoctor.model import CheckResult, Status

Facts = Mapping[str, Any]
# The checks whose failures experiments can explain.
EXPERIMENT_CHECKS = ("tensorflow-import", "keras", "companions")


def unexplained(result: Optional[CheckResult]) -> bool:
    """A failure whose check asks for no repair: no cause proven."""
    return (result is not None and result.status is Status.FAIL
            and not (result.remediation is not None and result.remediation.repairs))


def goals(facts: Facts, results: Iterable[CheckResult]) -> list[dict[str, Any]]:
    """What the experiments should make work, in order: [{"kind": "import"}], [{"kind": "keras"}],
    {"kind": "companion", "module"}, {"kind": "use", "module", "layer"}. Empty when nothing failed
    unexplained."""
    tf = facts.get("tensorflow") or {}
    by_id = {r.check_id: r for r in results}
    if not tf or tf.get("status") == "not_installed":
        return []
    if tf.get("timed_out"):
        # A hang's finding arrives at the timeout: each trial would wait out that timeout again, and only a
        # trial that finishes proves anything; the stack dumped at the kill is the evidence.
        return []
    if not tf.get("imported"):
        namespace = (tf.get("spec") or {}).get("namespace")
        return [{"kind": "import"}] if unexplained(by_id.get("tensorflow-import")) and not namespace else []
    found: list[dict[str, Any]] = []
    keras = tf.get("keras") or {}
    keras_fails = bool(keras) and bool(keras.get("error") or not keras.get("layer_ok"))
    if keras_fails and unexplained(by_id.get("keras")):
        found.append({"kind": "keras"})
    for entry in tf.get("companions") or ():
        module = entry.get("module")
        if entry.get("status") == "failed":
            if unexplained(by_id.get("companions")):
                found.append({"kind": "companion", "module": module})
            continue
        for layer in entry.get("keras_layers") or ():
            if layer.get("tf_keras_layer") is False and not keras_fails:
                found.append({"kind": "use", "module": module, "layer": layer.get("name")})
    return found


def section(facts: Facts) -> Mapping[str, Any]:
    return facts.get("experiments") or {}


def proof_for(facts: Facts, kind: str, module: Optional[str] = None) -> Optional[Mapping[str, Any]]:
    """The recorded proof for that goal (None: no experiment proved anything about it)."""
    for proof in section(facts).get("proofs") or ():
        goal = proof.get("goal") or {}
        if goal.get("kind") == kind and (module is None or goal.get("module") == module):
            return proof
    return None


def tried(facts: Facts, kind: str, module: Optional[str] = None) -> list[Mapping[str, Any]]:
    """The trials run for that goal."""
    return [t for t in section(facts).get("trials") or ()
            if t.get("goal") == kind and (module is None or t.get("module") == module)]


def use_failure(facts: Facts, module: str) -> Optional[Mapping[str, Any]]:
    """The trial that reproduced a companion layer's failure on use (as it is), if one ran."""
    proof = proof_for(facts, "use", module)
    return (proof or {}).get("failure")


def mismatched_layers(facts: Facts) -> list[tuple[str, Mapping[str, Any]]]:
    """(companion module, layer fact) for each exported Keras layer of another Keras than tf.keras."""
    tf = facts.get("tensorflow") or {}
    return [(entry.get("module"), layer) for entry in tf.get("companions") or ()
            for layer in entry.get("keras_layers") or () if layer.get("tf_keras_layer") is False]
