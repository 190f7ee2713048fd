"""An import error tied to its cause (tfdoctor/facts/import_causes.py): the modules an error names and the
distributions that install them."""

from __future__ import annotations

from tfdoctor.facts import import_causes

from tests.builders import tensorflow_environment
from tests.import_support import H5PY_FOR_NUMPY1, ML_DTYPES_TOO_OLD, PROTOBUF_TOO_OLD


def test_the_modules_an_error_names_map_to_installed_distributions():
    facts = tensorflow_environment(tensorflow=PROTOBUF_TOO_OLD)
    assert import_causes.named_distributions(facts, PROTOBUF_TOO_OLD["exception"])[:2] == ["protobuf", "tensorflow-cpu"]
    assert "h5py" in import_causes.named_distributions(facts, H5PY_FOR_NUMPY1["exception"])
    assert import_causes.named_distributions(facts, ML_DTYPES_TOO_OLD["exception"])[0] == "ml-dtypes"
