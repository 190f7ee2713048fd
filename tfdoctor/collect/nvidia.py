"""nvidia-smi and /proc/driver/nvidia facts: built in issue 6. Until then the section is unrecorded."""

from __future__ import annotations

from typing import Any

from tfdoctor.collect.options import CollectOptions


def collect_nvidia(options: CollectOptions) -> dict[str, Any]:
    return {"nvidia": None}
