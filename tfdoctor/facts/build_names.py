"""The one list of TensorFlow's builds: the distributions that install the `tensorflow` package (shims
included), and the ones without CUDA whatever the machine. Read by the build, Requires-Dist and
installer readers and checks alike."""

from __future__ import annotations

# In the order a reader looks for the installed TensorFlow (the first found wins among equals).
TENSORFLOW_BUILDS = (
    "tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tf-nightly", "tf-nightly-cpu", "tf-nightly-gpu",
    "tensorflow-intel", "intel-tensorflow", "tensorflow-aarch64", "tensorflow-cpu-aws", "tensorflow-macos",
    "intel-tensorflow-avx512", "tf-nightly-macos", "tf-nightly-intel", "tensorflow-rocm",
)
# Builds without CUDA whatever the machine (their names say so, or their wheels ship no CUDA libraries).
# AMD's ROCm builds: a GPU build, but not a CUDA one (NVIDIA's checks do not apply to them).
ROCM_BUILDS = ("tensorflow-rocm",)
CPU_ONLY_BUILDS = ("tensorflow-cpu", "tf-nightly-cpu", "tensorflow-cpu-aws", "tensorflow-intel",
                   "intel-tensorflow", "tensorflow-aarch64", "tensorflow-macos")


def is_tensorflow_build(canonical: str) -> bool:
    """`canonical`, a canonical distribution name, is one of TensorFlow's builds."""
    return canonical in TENSORFLOW_BUILDS
