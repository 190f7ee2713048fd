"""What a TensorFlow release pins, from knowledge/macos.toml: a package's version range (`tensorflow_pin`), the
newest NumPy major its binaries take (`numpy_abi`), the packages its import itself loads
(`import_time_dependency`), and the legacy Keras (tf-keras) row. Pure lookups.
"""

from __future__ import annotations

from typing import Optional

from tfdoctor.facts.installable_wheels import Row, within
from tfdoctor.knowledge import rows as knowledge_rows

FILE = "macos"

def pin(package: str, tf: Optional[str]) -> Optional[Row]:
    for row in knowledge_rows(FILE, "tensorflow_pin"):
        if row["package"] == package and within(tf, row["tf_min"], row["tf_max"]):
            return row
    return None


def numpy_major_max(tf: Optional[str]) -> Optional[Row]:
    for row in knowledge_rows(FILE, "numpy_abi"):
        if within(tf, row["tf_min"], row["tf_max"]):
            return row
    return None


def import_time_dependency(package: str) -> Optional[Row]:
    """The row saying `import tensorflow` itself loads this package (numpy, ml-dtypes, protobuf), or None."""
    for row in knowledge_rows(FILE, "import_time_dependency"):
        if row["package"] == package:
            return row
    return None


def legacy_keras() -> Row:
    return knowledge_rows(FILE, "legacy_keras")[0]
