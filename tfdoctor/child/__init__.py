"""Scripts run *inside the target interpreter* as `python -c <source>`.

They use the standard library only and old-enough syntax for any Python 3.6+, because the target
may be any interpreter the user points at, with or without tfdoctor installed in it. They print
one JSON document and never import TensorFlow (except tf_child, which exists to do exactly that).
"""

from __future__ import annotations

from importlib import resources


def source(name: str) -> str:
    """The text of child script `name` (for example 'target_info')."""
    return resources.files(__name__).joinpath(f"{name}.py").read_text(encoding="utf-8")
