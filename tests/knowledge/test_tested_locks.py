"""Issue 29: the lock reader of tools/refresh_knowledge.py keeps, from a TensorFlow release's
requirements_lock_3_*.txt, only the pins on TensorFlow's import path, each row citing the lock at the tag."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("refresh_knowledge", ROOT / "tools" / "refresh_knowledge.py")
refresh = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(refresh)

# The shape of pip-compile's output as TensorFlow's locks are written (requirements_lock_3_11.txt), trimmed.
LOCK = """\
absl-py==2.1.0 \\
    --hash=sha256:526a04eadab8b4ee719ce68f204172ead1027549089702d99b9059f129ff1308
    # via
    #   keras
    #   tb-nightly
gast==0.4.0 \\
    --hash=sha256:40feb7b8b8434785585ab224d1568b857edb18297e5a3047f1ba012bc83b42c1
    # via -r ci/official/requirements_updater/requirements.in
keras==3.12.0 \\
    --hash=sha256:aaaa
    # via -r ci/official/requirements_updater/requirements.in
optree==0.16.0 \\
    --hash=sha256:bbbb
    # via keras
typing-extensions==4.14.0 \\
    --hash=sha256:cccc
    # via
    #   optree
    #   -r ci/official/requirements_updater/requirements.in
portpicker==1.6.0 \\
    --hash=sha256:dddd
    # via -r ci/official/requirements_updater/requirements.in
"""


def test_the_lock_is_read_with_who_required_each_pin():
    lock = refresh.parse_lock(LOCK)
    assert lock["gast"] == ("0.4.0", set())
    assert lock["absl-py"] == ("2.1.0", {"keras", "tb-nightly"})
    assert lock["typing-extensions"] == ("4.14.0", {"optree"})


def test_only_the_import_path_is_kept_and_each_row_cites_the_lock_at_the_tag():
    rows = refresh.lock_rows("2.21.0", 11, LOCK, ["gast", "keras", "absl_py"])
    assert {r["name"]: r["version"] for r in rows} == {"absl-py": "2.1.0", "gast": "0.4.0", "keras": "3.12.0",
                                                        "optree": "0.16.0", "typing-extensions": "4.14.0"}
    assert {r["source"] for r in rows} == {
        "https://github.com/tensorflow/tensorflow/blob/v2.21.0/requirements_lock_3_11.txt"}
    assert "portpicker" not in refresh.render_locks(rows)  # a test-only pin is not on the import path
