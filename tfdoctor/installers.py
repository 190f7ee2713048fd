"""Exact commands for the installer the user actually has: pip in a venv, conda/mamba, uv, system.

Hints name commands for the *target* interpreter (`<python> -m pip ...`), so a user with several
Pythons runs the fix where the problem is. Paths are redacted with the rest of the report.
"""

from __future__ import annotations

from dataclasses import dataclass

from tfdoctor.facts import Facts, host_system, section

MANAGED_VENV = "~/.venvs/tf"


@dataclass(frozen=True)
class Installer:
    kind: str  # "uv" | "conda" | "venv" | "system" | "managed" (PEP 668: pip refuses to install)
    python: str  # the target interpreter, as recorded
    windows: bool = False

    def _quote(self, requirement: str) -> str:
        if not any(ch in requirement for ch in "<>=!~*[; "):
            return requirement
        return f'"{requirement}"' if self.windows else f"'{requirement}'"

    def _python(self) -> str:
        return f'"{self.python}"' if " " in self.python else self.python

    def install(self, *requirements: str) -> str:
        reqs = " ".join(self._quote(r) for r in requirements)
        if self.kind == "uv":
            return f"uv pip install --python {self._python()} {reqs}"
        if self.kind == "managed":
            # Homebrew's and Debian's Pythons are externally managed: pip refuses to install into
            # them ("externally-managed-environment"), so the working command is a venv of their own.
            return f"{self._python()} -m venv {MANAGED_VENV} && {MANAGED_VENV}/bin/python -m pip install {reqs}"
        return f"{self._python()} -m pip install {reqs}"

    def uninstall(self, *names: str) -> str:
        if self.kind == "uv":
            return f"uv pip uninstall --python {self._python()} {' '.join(names)}"
        if self.kind == "managed":
            # only reachable for packages forced in with the same flag; pip refuses otherwise
            return f"{self._python()} -m pip uninstall --break-system-packages -y {' '.join(names)}"
        return f"{self._python()} -m pip uninstall -y {' '.join(names)}"

    def reinstall(self, *requirements: str) -> str:
        """Force a clean reinstall (after two packages wrote the same files)."""
        reqs = " ".join(self._quote(r) for r in requirements)
        if self.kind == "uv":
            return f"uv pip install --python {self._python()} --reinstall {reqs}"
        if self.kind == "managed":
            return self.install(*requirements)
        return f"{self._python()} -m pip install --force-reinstall --no-deps {reqs}"

    @property
    def label(self) -> str:
        return {
            "uv": "uv-managed environment",
            "conda": "conda environment",
            "venv": "virtual environment",
            "system": "system Python",
            "managed": "externally managed system Python (Homebrew, Debian)",
        }[self.kind]

    def fresh_environment(self, python_version: str = "3.12") -> tuple[str, ...]:
        """Commands that create a clean environment of the same kind and activate it."""
        if self.kind == "conda":
            return (
                f"conda create -n tf python={python_version} -y",
                "conda activate tf",
            )
        if self.kind == "uv":
            return (f"uv venv --python {python_version} ~/.venvs/tf", "source ~/.venvs/tf/bin/activate")
        if self.windows:
            return (f"py -{python_version} -m venv %USERPROFILE%\\tf-venv", "%USERPROFILE%\\tf-venv\\Scripts\\activate")
        return (f"python{python_version} -m venv ~/.venvs/tf", "source ~/.venvs/tf/bin/activate")


def installer_for(facts: Facts) -> Installer:
    python = section(facts, "python")
    executable = str(python.get("executable") or "python3")
    windows = host_system(facts) == "Windows"
    if python.get("uv_version"):
        kind = "uv"
    elif python.get("conda"):
        kind = "conda"
    elif python.get("in_venv"):
        kind = "venv"
    elif python.get("externally_managed"):
        kind = "managed"
    else:
        kind = "system"
    return Installer(kind, executable, windows)
