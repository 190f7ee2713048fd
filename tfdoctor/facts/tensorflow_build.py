"""The installed TensorFlow's CUDA build, looked up in knowledge/linux.toml: pure functions.

Shared by nvidia-driver, cuda-build, platform-support and cpu-instructions: which TensorFlow is
installed, whether it is a CUDA build, which CUDA/cuDNN and GPU architectures it was built for, the
platform facts, whether the Linux host is WSL (the repairs that make the CUDA build the installed one are
remedies/cuda.py's). What only one check asks (a driver's CUDA, kernels for a GPU, the `[and-cuda]` pins)
lives in that check.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from tfdoctor.facts import Facts, canonical_name, distributions, host_system, section
from tfdoctor.facts.build_names import CPU_ONLY_BUILDS, ROCM_BUILDS, TENSORFLOW_BUILDS
from tfdoctor.facts.platform import detect_wsl, target_machine
from tfdoctor.knowledge import rows as knowledge_rows
from tfdoctor.knowledge.versions import compare, minor, release


def minor_string(version: str | None) -> str | None:
    parts = minor(version)
    return ".".join(str(p) for p in parts) if len(parts) == 2 else None


# ---------------------------------------------------------------- installed TensorFlow

def tensorflow_distribution(facts: Facts) -> Mapping[str, Any] | None:
    """The distribution that provides `tensorflow` (a real one rather than a shim when both exist)."""
    found = [d for name in TENSORFLOW_BUILDS for d in distributions(facts, name)]
    if not found:
        return None
    real = [d for d in found if "tensorflow" in (d.get("top_level") or ())]
    return (real or found)[0]


def tensorflow_version(facts: Facts) -> str | None:
    """The installed distribution's version, from its metadata (what pip installs and pins: '2.15.0.post1',
    '2.21.0.dev20250722'); the imported tf.__version__ ('2.15.0', '2.21.0-dev20250722') only when no
    distribution is recorded."""
    dist = tensorflow_distribution(facts)
    if dist and dist.get("version"):
        return str(dist["version"])
    version = section(facts, "tensorflow").get("version")
    return str(version) if version else None


def build_info(facts: Facts) -> Mapping[str, Any]:
    value = section(facts, "tensorflow").get("build_info")
    return value if isinstance(value, Mapping) else {}


def is_cuda_build(facts: Facts) -> bool | None:
    """True/False when known: build_info says so, or the distribution's name, or the platform's wheels
    are CPU-only (Linux aarch64 from 2.16; native Windows from 2.11). None when unknown."""
    info = build_info(facts)
    if "is_cuda_build" in info:
        return bool(info["is_cuda_build"])
    dist = tensorflow_distribution(facts)
    if dist is None:
        return None
    name = canonical_name(str(dist.get("name", "")))
    if name in CPU_ONLY_BUILDS or name in ROCM_BUILDS:
        return False
    version = tensorflow_version(facts)
    machine = target_machine(facts)
    system = host_system(facts)
    if system == "Linux" and machine in ("aarch64", "arm64"):
        return False
    if system == "Windows":
        last_gpu = platform_fact("windows-native-last-gpu")
        return bool(version and compare(minor_string(version), last_gpu) <= 0)
    if system == "Darwin":
        return False
    return True if system == "Linux" else None


# ---------------------------------------------------------------- knowledge lookups

def platform_fact(fact_id: str) -> str:
    for row in knowledge_rows("linux", "platform_facts"):
        if row["id"] == fact_id:
            return str(row["value"])
    raise KeyError(fact_id)


def row_for_minor(table: str, version: str | None) -> Mapping[str, Any] | None:
    wanted = minor_string(version)
    return next((r for r in knowledge_rows("linux", table) if r["tf"] == wanted), None)


def _capability(token: str) -> str | None:
    """'sm_35' -> '3.5', 'compute_90' -> '9.0', 'sm_120' -> '12.0'."""
    match = re.match(r"^(?:sm|compute)_(\d+)(\d)[a-z]?$", token.strip())
    return f"{match.group(1)}.{match.group(2)}" if match else None


def _cuda_from_build_info(value: Any) -> str | None:
    """'12.5.1' -> '12.5.1'; Windows '64_112' (a DLL suffix) -> '11.2'."""
    if not value:
        return None
    text = str(value)
    dll = re.match(r"^64_(\d+)(\d)$", text)
    if dll:
        return f"{dll.group(1)}.{dll.group(2)}"
    return text if release(text) else None


def wheel_build_info(facts: Facts) -> Mapping[str, Any]:
    """The build_info the installed release's Linux x86_64 `tensorflow` wheel ships (knowledge/build_info.toml,
    generated from the wheels): for a saved report or an import that failed, where the child recorded none.
    {} for another build or platform, or a release the table does not hold."""
    dist = tensorflow_distribution(facts)
    machine = target_machine(facts)
    if host_system(facts) != "Linux" or machine != "x86_64" or dist is None \
            or canonical_name(str(dist.get("name"))) != "tensorflow":
        return {}
    version = str(dist.get("version") or "")
    return next((row for row in knowledge_rows("build_info", "build") if row["tensorflow"] == version), {})


def tensorflow_build(facts: Facts) -> dict[str, Any]:
    """CUDA, cuDNN and GPU kernels of the installed TensorFlow: from build_info when the child ran
    and it has the keys (2.22.0rc0 dropped them), else from its wheel's build_info (the generated table),
    else from the knowledge row of its minor release. cuDNN from the row where build_info has only the major."""
    from tfdoctor.facts import knowledge_age

    version = tensorflow_version(facts)
    # a release newer than the tables: the row of its minor (curated from a pre-release, or none) says nothing
    # of it; only what its own build_info recorded counts
    beyond = knowledge_age.tensorflow_beyond(facts) is not None
    row = {} if beyond else row_for_minor("tf_cuda", version) or {}
    info = build_info(facts) or ({} if beyond else {key: value for key, value in wheel_build_info(facts).items()
                                                    if key in ("cuda_compute_capabilities", "cuda_version")})
    capabilities = info.get("cuda_compute_capabilities")
    sass: list[str] = []
    ptx: str | None = None
    if isinstance(capabilities, (list, tuple)) and capabilities:
        for token in capabilities:
            cc = _capability(str(token))
            if cc and cc not in sass:
                sass.append(cc)  # sm_XY and compute_XY both ship native code
            if cc and str(token).startswith("compute_"):
                ptx = cc
    cuda = _cuda_from_build_info(info.get("cuda_version"))
    cudnn_value = str(info.get("cudnn_version") or "")
    cudnn = cudnn_value[3:] if cudnn_value.startswith("64_") else (cudnn_value or None)  # Windows '64_8' -> '8'

    return {
        "tensorflow": version,
        "cuda": cuda or row.get("cuda"),
        "cudnn": cudnn or row.get("cudnn"),
        "sass": sass or list(row.get("sass") or ()),
        "ptx": ptx or row.get("ptx"),
        "from_build_info": bool(cuda or sass),
        "known": bool(row) or bool(cuda or sass),
        "beyond_knowledge": beyond,
    }


# ---------------------------------------------------------------- WSL

def wsl_version(facts: Facts) -> int | None:
    """1 or 2 when the Linux host is a WSL guest (collected in facts["os"]["wsl"], or recognised from
    the kernel release string of an older report), else None."""
    if host_system(facts) != "Linux":
        return None
    wsl = section(facts, "os").get("wsl")
    if isinstance(wsl, Mapping):
        return wsl.get("version")
    found = detect_wsl(section(facts, "host").get("release"), section(facts, "os").get("proc_version"), {}, ())
    return (found or {}).get("version")
