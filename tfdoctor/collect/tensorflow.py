"""The TensorFlow child: built in issue 4. Until then the section is left unrecorded."""

from __future__ import annotations

from typing import Any

from tfdoctor.collect.options import CollectOptions


def collect_tensorflow(options: CollectOptions) -> dict[str, Any]:
    return {"tensorflow": None}
