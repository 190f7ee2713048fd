"""What a TensorFlow release pins, from knowledge/macos.toml: a package's version range (`tensorflow_pin`), the
newest NumPy major its binaries take (`numpy_abi`), the packages its import itself loads
(`import_time_dependency`), and the legacy Keras (tf-keras) row. Pure lookups.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

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


def tf_keras_distribution(tf: Optional[str], environment: Any) -> str:
    """The distribution tf.keras loads in TensorFlow `tf`: tf-keras where TF_USE_LEGACY_KERAS (as `environment`
    records it) switches a TensorFlow of 2.16 or later to it, else the keras package."""
    legacy = legacy_keras()
    variable = environment.get(legacy["variable"]) if isinstance(environment, Mapping) else None
    if within(tf, legacy["tf_min"], None) and str(variable or "") in legacy["true_values"]:
        return "tf-keras"
    return "keras"
