"""The Mac fixes, as repair intents for the current environment and as manual steps for a new one.

In the *current* environment a fix is a Repair (tfdoctor/results/repairs.py) that the planner merges into the
run's one plan; the way out of an x86_64 (Rosetta) interpreter or a Python tensorflow-metal has no wheel
for is a NEW native arm64 environment: the commands that create it, never a pip command in the broken
one. What to install in that new environment is said in words (`combo_words`), as no plan runs there.
"""

from __future__ import annotations

from typing import Optional

from tfdoctor.environment.kinds import InstallerKind
from tfdoctor.environment.pip import installer_for
from tfdoctor.environment.spell import native_arm64_environment
from tfdoctor.facts import Facts, apple_silicon, tensorflow_distributions
from tfdoctor.facts.installable_wheels import Row
from tfdoctor.knowledge import rows as knowledge_rows
from tfdoctor.results.repairs import Repair

APPLE_PLUGIN_URL = "https://developer.apple.com/metal/tensorflow-plugin/"


def combo_requirements(combo: Optional[dict[str, str]]) -> tuple[str, ...]:
    """('tensorflow==2.19.*', 'tensorflow-metal==1.2.0') for a gpu_combo()."""
    if not combo:
        return ("tensorflow",)
    return (f"{combo['tf_name']}=={combo['tf']}.*", f"tensorflow-metal=={combo['metal']}")


def combo_words(combo: dict[str, str]) -> str:
    """'TensorFlow 2.19 with tensorflow-metal 1.2.0 (tensorflow==2.19.*, tensorflow-metal==1.2.0)': the
    pair named for a reader, with the requirements to ask pip for."""
    return f"TensorFlow {combo['tf']} with tensorflow-metal {combo['metal']} ({', '.join(combo_requirements(combo))})"


def combo_repairs(facts: Facts, combo: dict[str, str], reason: str) -> tuple[Repair, ...]:
    """Move this environment to a GPU pair: the pair installed together, and, where the pair's TensorFlow
    is another build than the installed one (tensorflow-macos -> tensorflow), that build uninstalled
    first, so two builds never share site-packages/tensorflow/."""
    builds = {copy.name for copy in tensorflow_distributions.real_builds(facts)}
    others = sorted(builds - {combo["tf_name"]})
    removal = (Repair.uninstall(*others, reason=f"{combo['tf_name']} {combo['tf']} replaces it: {reason}"),) if others else ()
    return (*removal, Repair.install(*combo_requirements(combo), reason=reason))


def uses_conda(facts: Facts) -> bool:
    origin = apple_silicon.python_origin(facts)
    return installer_for(facts).kind == InstallerKind.CONDA or origin["kind"] in apple_silicon.CONDA_ORIGINS


def native_environment(facts: Facts, python_version: str = "3.12") -> tuple[str, tuple[str, ...]]:
    """(name of the arm64 Python to use, commands that create and activate a native environment and
    confirm it is arm64). What to install there: `combo_words(metal_pairing.gpu_combo(python_version))`."""
    if uses_conda(facts):
        row = arm64_python("conda")
        return (row["name"] if row else "Miniforge (arm64)",
                native_arm64_environment(InstallerKind.CONDA, python_version, row["installer_url"] if row else ""))
    if installer_for(facts).kind == InstallerKind.UV:
        return ("a uv-managed arm64 CPython", native_arm64_environment(InstallerKind.UV, python_version))
    row = arm64_python("python.org")
    return (f"the {row['name'] if row else 'python.org universal2 installer'} ({row['installer_url'] if row else ''})",
            native_arm64_environment(InstallerKind.VENV, python_version))


def arm64_python(kind: str) -> Optional[Row]:
    for row in knowledge_rows("macos", "arm64_python"):
        if row["kind"] == kind:
            return row
    return None
