from __future__ import annotations

import json
from typing import Any


def render(document: dict[str, Any], verbose: bool = False) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
