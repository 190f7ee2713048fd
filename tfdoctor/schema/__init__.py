"""The JSON Schema of the report (draft 2020-12), shipped with the package."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def report_schema() -> dict[str, Any]:
    return json.loads(resources.files(__name__).joinpath("report.schema.json").read_text(encoding="utf-8"))
