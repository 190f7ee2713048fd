"""A virtual environment (`python -m venv`, virtualenv): its own pip installs into it."""

from __future__ import annotations

from tfdoctor.environment.installers.base import PipInstaller

INSTALLER = PipInstaller(
    kind="venv",
    label="virtual environment",
    detect=lambda python: python.get("in_venv"),  # sys.prefix is not sys.base_prefix
)
