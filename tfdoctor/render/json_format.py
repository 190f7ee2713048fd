from __future__ import annotations

from typing import Any

from tfdoctor.render.sanitize import json_dumps


def render(document: dict[str, Any], verbose: bool = False) -> str:
    return json_dumps(document) + "\n"
