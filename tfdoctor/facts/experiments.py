"""The offline experiments' facts (issue 29), read: what they tried and what they proved.

Which failures want experiments is a question about the checks' results, not the facts: the doctor asks it
(tfdoctor/diagnosis/doctor.py, experiment_goals) before it runs them.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

Facts = Mapping[str, Any]


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
