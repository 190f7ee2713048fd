"""Exact commands for the Mac fixes, for the installer in use (pip in a venv, conda/mamba, uv, system).

Commands in the *current* environment come from tfdoctor.installers; the way out of an x86_64
(Rosetta) interpreter is a NEW native arm64 environment, never a pip command in the broken one.
"""

from __future__ import annotations

from typing import Optional

from tfdoctor.facts import Facts, apple
from tfdoctor.facts import macos_knowledge as mk
from tfdoctor.installers import installer_for

APPLE_PLUGIN_URL = "https://developer.apple.com/metal/tensorflow-plugin/"
CHECK_ARM64 = "python -c \"import platform; print(platform.machine())\"  # must print arm64"


def combo_requirements(combo: Optional[dict[str, str]]) -> tuple[str, ...]:
    """('tensorflow==2.19.*', 'tensorflow-metal==1.2.0') for a gpu_combo()."""
    if not combo:
        return ("tensorflow",)
    return (f"{combo['tf_name']}=={combo['tf']}.*", f"tensorflow-metal=={combo['metal']}")


def uses_conda(facts: Facts) -> bool:
    return installer_for(facts).kind == "conda" or apple.python_origin(facts)["kind"] in apple.CONDA_ORIGINS


def native_environment(facts: Facts, python_version: str = "3.12") -> tuple[str, tuple[str, ...]]:
    """(name of the arm64 Python to use, commands that create and fill a native environment)."""
    combo = mk.gpu_combo(python_version)
    requirements = " ".join(f"'{r}'" if "*" in r or "<" in r else r for r in combo_requirements(combo))
    kind = installer_for(facts).kind
    if uses_conda(facts):
        row = mk.arm64_python("conda")
        url = row["installer_url"] if row else ""
        return (row["name"] if row else "Miniforge (arm64)", (
            f"curl -L -O {url}",
            "bash Miniforge3-MacOSX-arm64.sh",
            "source ~/miniforge3/bin/activate",
            f"conda create -n tf python={python_version} -y",
            "conda activate tf",
            CHECK_ARM64,
            f"python -m pip install {requirements}",
        ))
    if kind == "uv":
        request = f"cpython-{python_version}-macos-aarch64-none"
        return ("a uv-managed arm64 CPython", (
            f"uv python install {request}",
            f"uv venv --python {request} ~/.venvs/tf",
            "source ~/.venvs/tf/bin/activate",
            CHECK_ARM64,
            f"uv pip install {requirements}",
        ))
    framework = f"/Library/Frameworks/Python.framework/Versions/{python_version}/bin/python{python_version}"
    row = mk.arm64_python("python.org")
    return (f"the {row['name'] if row else 'python.org universal2 installer'} ({row['installer_url'] if row else ''})", (
        f"arch -arm64 {framework} -m venv ~/.venvs/tf",
        "source ~/.venvs/tf/bin/activate",
        CHECK_ARM64,
        f"python -m pip install {requirements}",
    ))
