"""A base interpreter that is no environment of its own and carries no PEP 668 marker: its pip installs into
its site-packages. Last in the registry: what no other installer claims."""

from __future__ import annotations

from tfdoctor.environment.installers.base import PipInstaller

INSTALLER = PipInstaller(
    kind="system",
    label="system Python",
    detect=lambda python: True,
    isolated=False,  # `fix` changes it only with --yes --system, proving the plan on a stand-in venv
)
