"""The Mac fixes, as repair intents for the current environment and as manual steps for a new one.

In the *current* environment a fix is a Repair (tfdoctor/results/repairs.py) that the planner merges into the
run's one plan; the way out of an x86_64 (Rosetta) interpreter or a Python tensorflow-metal has no wheel
for is a NEW native arm64 environment: the commands that create it, never a pip command in the broken
one. What to install in that new environment is said in words (`combo_words`), as no plan runs there.
"""

from __future__ import annotations

from typing import Optional

from tfdoctor.environment import installers
from tfdoctor.environment.pip import installer_for
from tfdoctor.environment.spell import native_arm64_environment
from tfdoctor.facts import Facts, apple_silicon, tensorflow_distributions
from tfdoctor.facts.installable_wheels import Row
from tfdoctor.knowledge import rows as knowledge_rows
from tfdoctor.results.repairs import Repair

APPLE_PLUGIN_URL = "https://developer.apple.com/metal/tensorflow-plugin/"
# knowledge/macos.toml's arm64_python rows: python.org's universal2 framework build, and Miniforge
PYTHON_ORG, CONDA_ROW = "python.org", "conda"


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


def arm64_installer(facts: Facts) -> installers.Installer:
    """The installer whose native arm64 environment to make: the environment's own, except that a plain venv
    (or system Python) made from a conda Python moves to conda's (Miniforge), as its user already uses conda."""
    installer = installer_for(facts).installer
    origin = apple_silicon.python_origin(facts)
    if installer.arm64_origin == PYTHON_ORG and origin["kind"] in apple_silicon.CONDA_ORIGINS:
        return next(other for other in installers.REGISTERED if other.arm64_origin == CONDA_ROW)
    return installer


def native_environment(facts: Facts, python_version: str = "3.12") -> tuple[str, tuple[str, ...]]:
    """(name of the arm64 Python to use, commands that create and activate a native environment and
    confirm it is arm64). What to install there: `combo_words(metal_pairing.gpu_combo(python_version))`."""
    installer = arm64_installer(facts)
    row = arm64_python(installer.arm64_origin) if installer.arm64_origin else None
    return (installer.native_arm64_name(row),
            native_arm64_environment(installer.kind, python_version, row["installer_url"] if row else ""))


def arm64_python(kind: str) -> Optional[Row]:
    for row in knowledge_rows("macos", "arm64_python"):
        if row["kind"] == kind:
            return row
    return None
