"""The CUDA build made the installed TensorFlow: shared by nvidia-driver, cuda-build, gpu-visible and the team's
requirements (which build is installed, and whether it is a CUDA one, is facts/tensorflow_build.py's)."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from tfdoctor.facts import Facts, canonical_name
from tfdoctor.facts.tensorflow_build import tensorflow_distribution
from tfdoctor.knowledge import rows as knowledge_rows
from tfdoctor.results.repairs import Repair


def pip_cuda_trap(version: Optional[str]) -> Optional[Mapping[str, Any]]:
    """The trap row of a release whose Linux wheel does not find its own pip CUDA libraries (2.16.1's RUNPATH),
    with the release that does (`fixed_in`); None for every other release. Every [and-cuda] install at a
    version goes through it, so two checks never ask for 2.16.1 and 2.16.2 at once."""
    return next((row for row in knowledge_rows("linux", "traps") if version in (row.get("tf_versions") or ())
                 and row.get("fixed_in") and "pip-cuda" in row["id"]), None)


def cuda_tensorflow(facts: Facts, specifier: str, reason: str) -> tuple[Repair, ...]:
    """The repairs that make `tensorflow[and-cuda]<specifier>` the installed TensorFlow: the install, and,
    when another build provides `tensorflow` now (tensorflow-cpu, tf-nightly), that build uninstalled in
    the same remediation, so two builds never share site-packages/tensorflow/."""
    installed = canonical_name(str((tensorflow_distribution(facts) or {}).get("name") or "tensorflow"))
    nightly = installed.startswith("tf-nightly")
    build = "tf-nightly" if nightly else "tensorflow"  # a nightly's CUDA build is tf-nightly, not a release
    switch = (Repair.uninstall(installed, reason=f"the CUDA build replaces it: {reason}"),) if installed != build else ()
    return (*switch, Repair.install(f"{build}[and-cuda]{specifier}", reason=reason, pre=nightly))
