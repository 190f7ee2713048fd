"""The report schema (tfdoctor/schema/, draft 2020-12) checked at a fleet's pace.

jsonschema, the reference, takes 40-100 ms on a real 50 KB report; fastjsonschema compiles the schema to
Python and takes ~6 ms, but reads drafts 4-7 only. The schema's one 2020-12 keyword is `prefixItems`
(tuples such as a stage's [name, seconds]), which draft 7 spells `items: [...]` with `additionalItems`
for the rest: the schema is translated so, and tests/server/test_validation.py holds the two validators
to the same verdicts.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Optional

DRAFT_7 = "http://json-schema.org/draft-07/schema#"


def as_draft_7(node: Any) -> Any:
    """The schema in draft 7's words: prefixItems P (+ items X) -> items P (+ additionalItems X)."""
    if isinstance(node, list):
        return [as_draft_7(item) for item in node]
    if not isinstance(node, dict):
        return node
    translated = {key: as_draft_7(value) for key, value in node.items()}
    if "prefixItems" in translated:
        rest = translated.pop("items", None)
        translated["items"] = translated.pop("prefixItems")
        if rest is not None:
            translated["additionalItems"] = rest
    if "$schema" in translated:
        translated["$schema"] = DRAFT_7
    return translated


@lru_cache(maxsize=1)
def report_validator() -> Callable[[Any], Optional[str]]:
    """A function: document -> None when it matches the report schema, else the first error, one line.
    Compiled once per process (about a second)."""
    import fastjsonschema

    from tfdoctor.report.document import report_schema

    compiled = fastjsonschema.compile(as_draft_7(report_schema()))

    def validate(document: Any) -> Optional[str]:
        try:
            compiled(document)
        except fastjsonschema.JsonSchemaException as exc:
            return str(exc)[:300]  # a JsonSchemaValueException's message
        return None

    return validate
