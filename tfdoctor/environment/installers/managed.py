"""An externally managed base Python (PEP 668: Homebrew's, Debian's): pip refuses to change it without
--break-system-packages, which every pip step here passes (https://peps.python.org/pep-0668/); `tfdoctor
fix` asks for --system before it runs such a plan."""

from __future__ import annotations

from tfdoctor.environment.installers.base import PipInstaller

INSTALLER = PipInstaller(
    kind="managed",
    label="externally managed system Python (Homebrew, Debian)",
    detect=lambda python: python.get("externally_managed"),  # EXTERNALLY-MANAGED in the stdlib directory
    isolated=False,
    pip_flags=("--break-system-packages",),
    note=("Externally managed Python (PEP 668): its pip changes it only with --break-system-packages, which the "
          "plan's pip steps pass (tfdoctor fix asks for --system)"),
)
