"""A conda environment (conda-meta/ in its prefix): TensorFlow and its PyPI companions come from its pip, but
what conda itself installed (INSTALLER says conda) conda lays down again: pip would write over conda's
package and leave conda's record of it wrong (https://docs.conda.io/projects/conda/en/latest/commands/install.html).
`fix` proves a plan on conda's own clone of the environment (`conda create --clone`, offline)."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from tfdoctor.environment.installers.base import CHECK_ARM64, END_OF_OPTIONS, PipInstaller


def _fresh(shell: str, python_version: str) -> tuple[str, ...]:
    return (f"conda create -n tf python={python_version} -y", "conda activate tf")


def _arm64(python_version: str, installer_url: str) -> tuple[str, ...]:
    """Miniforge for arm64 from `installer_url` (knowledge/macos.toml's arm64_python row), then an environment."""
    return (f"curl -L -O {installer_url}", "bash Miniforge3-MacOSX-arm64.sh", "source ~/miniforge3/bin/activate",
            f"conda create -n tf python={python_version} -y", "conda activate tf", CHECK_ARM64)


class CondaInstaller(PipInstaller):
    def reinstall_recorded(self, pins: Sequence[str], prefix: Optional[str]) -> list[str]:
        # conda's own packages: conda lays its files down again ('name==1.2' is conda's 'name=1.2')
        where = ["-p", prefix] if prefix else []
        return ["conda", "install", *where, "--force-reinstall", "--no-deps", "-y", END_OF_OPTIONS,
                *(pin.replace("==", "=", 1) for pin in pins)]

    def clone_argv(self, tool: str, source: str, target: str) -> list[str]:
        return [tool, "create", "-y", "--offline", "-p", target, "--clone", source]

    def native_arm64_name(self, row: Optional[Mapping[str, Any]]) -> str:
        return str(row["name"]) if row else "Miniforge (arm64)"


INSTALLER = CondaInstaller(
    kind="conda",
    label="conda environment",
    detect=lambda python: python.get("conda"),  # conda-meta/ in sys.prefix
    records="conda",
    keeps_records=True,
    clone_tools=("conda", "mamba"),
    fresh=_fresh,
    arm64=_arm64,
    arm64_origin="conda",
)
