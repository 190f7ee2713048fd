"""The CUDA build made the installed TensorFlow: shared by nvidia-driver, cuda-build, gpu-visible and the team's
requirements (which build is installed, and whether it is a CUDA one, is facts/tensorflow_build.py's)."""

from __future__ import annotations

from tfdoctor.facts import Facts, canonical_name
from tfdoctor.facts.tensorflow_build import tensorflow_distribution
from tfdoctor.repairs import Repair


def cuda_tensorflow(facts: Facts, specifier: str, reason: str) -> tuple[Repair, ...]:
    """The repairs that make `tensorflow[and-cuda]<specifier>` the installed TensorFlow: the install, and,
    when another build provides `tensorflow` now (tensorflow-cpu, tf-nightly), that build uninstalled in
    the same remediation, so two builds never share site-packages/tensorflow/."""
    installed = canonical_name(str((tensorflow_distribution(facts) or {}).get("name") or "tensorflow"))
    nightly = installed.startswith("tf-nightly")
    build = "tf-nightly" if nightly else "tensorflow"  # a nightly's CUDA build is tf-nightly, not a release
    switch = (Repair.uninstall(installed, reason=f"the CUDA build replaces it: {reason}"),) if installed != build else ()
    return (*switch, Repair.install(f"{build}[and-cuda]{specifier}", reason=reason, pre=nightly))
