"""A venv made by uv (pyvenv.cfg's `uv` line): uv's own resolver and installer, usually no pip in it; every
step is `uv pip ... --python <the environment's interpreter>` (https://docs.astral.sh/uv/pip/environments/)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from tfdoctor.environment.installers.base import (
    CHECK_ARM64,
    END_OF_OPTIONS,
    POWERSHELL,
    UV_DRY_RUN,
    Installer,
    PipInstaller,
    Unspellable,
)

if TYPE_CHECKING:
    from tfdoctor.environment.spell import Spelling


def _fresh(shell: str, python_version: str) -> tuple[str, ...]:
    if shell == POWERSHELL:
        return (f"uv venv --python {python_version} $env:USERPROFILE\\.venvs\\tf",
                "& $env:USERPROFILE\\.venvs\\tf\\Scripts\\Activate.ps1")
    return (f"uv venv --python {python_version} ~/.venvs/tf", "source ~/.venvs/tf/bin/activate")


def _arm64(python_version: str, installer_url: str) -> tuple[str, ...]:
    request = f"cpython-{python_version}-macos-aarch64-none"  # a uv-managed arm64 CPython
    return (f"uv python install {request}", f"uv venv --python {request} ~/.venvs/tf",
            "source ~/.venvs/tf/bin/activate", CHECK_ARM64)


class UvInstaller(PipInstaller):
    def install(self, spelling: "Spelling", requirements: Sequence[str], *, no_deps: bool, pre: bool) -> list[str]:
        return ["uv", "pip", "install", "--python", spelling.python, *(["--no-deps"] if no_deps else []),
                *(["--prerelease=allow"] if pre else []), END_OF_OPTIONS, *requirements]

    def uninstall(self, spelling: "Spelling", names: Sequence[str]) -> list[str]:
        return ["uv", "pip", "uninstall", "--python", spelling.python, END_OF_OPTIONS, *names]

    def reinstall(self, spelling: "Spelling", pins: Sequence[str], *, owner: Optional[Installer], prefix: Optional[str]) -> list[str]:
        if owner is not None:
            return owner.reinstall_recorded(pins, prefix)
        return ["uv", "pip", "install", "--python", spelling.python, "--reinstall", "--no-deps", END_OF_OPTIONS, *pins]

    def upgrade_pip(self, spelling: "Spelling", *, missing: bool) -> list[str]:
        raise Unspellable("uv installs here, not pip: no pip to bring up")

    def native_arm64_name(self, row: Optional[Mapping[str, Any]]) -> str:
        return "a uv-managed arm64 CPython"

    def capability_note(self, python: Mapping[str, Any]) -> Optional[str]:
        return f"uv {python.get('uv_version')} manages this environment: it installs with its own resolver, not pip"


INSTALLER = UvInstaller(
    kind="uv",
    label="uv-managed environment",
    detect=lambda python: python.get("uv_version"),
    uses_pip=False,
    dry_run=UV_DRY_RUN,
    fresh=_fresh,
    arm64=_arm64,
    arm64_origin=None,
)
