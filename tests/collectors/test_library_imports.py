"""What a library's own files import, read through its RECORD (issue 38, build 5): tfdoctor/collect/library_imports.py.

Every library here is built in tmp_path, and the cache lives under a tmp XDG_CACHE_HOME."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from tfdoctor.collect import library_imports
from tfdoctor.collect.library_imports import read_library, wanted, with_imports

# retina-face 0.0.17's own lines (retinaface/commons/package_utils.py, retinaface/RetinaFace.py), shortened
NEEDS = """import tensorflow as tf


def validate_for_keras3():
    tf_major = int(tf.__version__.split(".", maxsplit=1)[0])
    if tf_major == 1:
        return
    try:
        import tf_keras
    except ImportError as err:
        raise ValueError("requires tf-keras package") from err
"""
SETS = 'import os\nos.environ["TF_USE_LEGACY_KERAS"] = "1"\nimport tensorflow as tf\nfrom tensorflow.keras.models import Model\n'
FALLS_BACK = "try:\n    import tf_keras as keras\nexcept ImportError:\n    from tensorflow import keras\n"


def library(site: Path, name: str, files: dict[str, str], record_extra: tuple[str, ...] = ()) -> dict:
    """A dist-info with RECORD listing `files` (written under site) and `record_extra` (listed, maybe elsewhere), as
    the target child records a distribution requiring TensorFlow."""
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    for relative, text in files.items():
        (site / relative).parent.mkdir(parents=True, exist_ok=True)
        (site / relative).write_text(text, encoding="utf-8")
    listed = [*files, *record_extra, f"{info.name}/METADATA", f"{info.name}/RECORD"]
    (info / "RECORD").write_text("".join(f"{path},sha256=x,1\n" for path in listed), encoding="utf-8")
    return {"name": name, "version": "1.0", "location": str(site), "requires": ["tensorflow>=2.0"],
            "metadata_path": str(info)}


@pytest.fixture
def environ(tmp_path) -> dict[str, str]:
    return {"XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")}


def test_a_needed_import_of_tf_keras_is_found_with_its_line_and_a_fallback_is_not_a_need(tmp_path):
    site = tmp_path / "site-packages"
    entry = library(site, "retina-face", {"retinaface/commons/package_utils.py": NEEDS, "retinaface/RetinaFace.py": SETS,
                                          "retinaface/optional.py": FALLS_BACK, "retinaface/readme.txt": "import tf_keras"})
    found = read_library(entry["metadata_path"], (Path(entry["metadata_path"]) / "RECORD").read_bytes())
    assert found["tf_keras"] == ["retinaface/commons/package_utils.py:9"]
    assert (found["tf_keras_files"], found["tf_keras_optional_files"]) == (1, 1)
    assert (found["tensorflow_files"], found["keras_files"]) == (3, 0)  # `from tensorflow import keras` too
    assert found["sets_legacy_variable"] is True and found["complete"] is True
    assert found["files_read"] == 3  # .py files only


def test_record_entries_outside_the_site_directory_are_never_read(tmp_path):
    """A RECORD is data: `..`, an absolute path and a directory link out of the site directory lead nowhere."""
    site, outside = tmp_path / "site-packages", tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "evil.py").write_text("import tf_keras\n", encoding="utf-8")
    (site / "lib").mkdir(parents=True)
    os.symlink(outside, site / "lib" / "linked")
    os.symlink(outside / "evil.py", site / "lib" / "file_link.py")
    entry = library(site, "lib", {"lib/__init__.py": "x = 1\n"},
                    ("../elsewhere/evil.py", str(outside / "evil.py"), "lib/linked/evil.py", "lib/file_link.py"))
    found = read_library(entry["metadata_path"], (Path(entry["metadata_path"]) / "RECORD").read_bytes())
    assert found["tf_keras"] == [] and found["files_read"] == 1


def test_a_second_run_reads_no_source_file_and_a_new_record_is_read_again(tmp_path, environ, monkeypatch):
    site = tmp_path / "site-packages"
    entry = library(site, "retina-face", {"retinaface/commons/package_utils.py": NEEDS})
    first = with_imports([dict(entry)], environ)[0]["imports"]
    assert first["tf_keras"] == ["retinaface/commons/package_utils.py:9"]
    assert first["record_sha256"] == hashlib.sha256((Path(entry["metadata_path"]) / "RECORD").read_bytes()).hexdigest()
    assert list((tmp_path / "cache" / "tfdoctor" / "library-imports").glob("*.json"))

    def no_reading(*args, **kwargs):
        raise AssertionError("a cached library was read again")

    monkeypatch.setattr(library_imports, "read_library", no_reading)
    assert with_imports([dict(entry)], environ)[0]["imports"] == first
    monkeypatch.undo()
    # a reinstall writes another RECORD: read again
    (site / "retinaface/commons/package_utils.py").write_text("import tensorflow\n", encoding="utf-8")
    with (Path(entry["metadata_path"]) / "RECORD").open("a", encoding="utf-8") as record:
        record.write("retinaface/__init__.py,,\n")
    again = with_imports([dict(entry)], environ)[0]["imports"]
    assert again["tf_keras"] == [] and again["tensorflow_files"] == 1


def test_only_libraries_requiring_the_tensorflow_family_and_recorded_libraries_are_read(tmp_path, environ):
    site = tmp_path / "site-packages"
    reader = library(site, "reader", {"reader/__init__.py": NEEDS})
    family = library(site, "tf-keras", {"tf_keras/__init__.py": NEEDS})
    unrelated = dict(library(site, "requests", {"requests/__init__.py": NEEDS}), requires=["idna"])
    extra_only = dict(library(site, "wrapper", {"wrapper/__init__.py": NEEDS}), requires=['tf-keras; extra == "tf"'])
    transformers = dict(library(site, "transformers", {"transformers/__init__.py": "x = 1\n"}), requires=[])
    entries = with_imports([reader, family, unrelated, extra_only, transformers], environ)
    assert [e["name"] for e in entries if "imports" in e] == ["reader", "wrapper", "transformers"]
    assert not wanted({"name": "keras", "version": "3", "metadata_path": "/x/keras-3.dist-info", "requires": []})
    assert not wanted({"name": "reader", "version": "1", "requires": ["tensorflow"]})  # no metadata path recorded


def test_a_library_past_the_byte_bound_is_marked_incomplete(tmp_path, environ, monkeypatch):
    monkeypatch.setattr(library_imports, "MAX_BYTES", 200)
    site = tmp_path / "site-packages"
    entry = library(site, "big", {f"big/m{i}.py": "x = 1\n" * 20 for i in range(5)})
    found = with_imports([entry], environ)[0]["imports"]
    assert found["complete"] is False and found["bytes_read"] <= 201


def test_an_unwritable_cache_still_reads_the_library(tmp_path):
    site = tmp_path / "site-packages"
    entry = library(site, "reader", {"reader/__init__.py": NEEDS})
    (tmp_path / "cache-file").write_text("not a directory", encoding="utf-8")
    found = with_imports([entry], {"XDG_CACHE_HOME": str(tmp_path / "cache-file")})[0]["imports"]
    assert found["tf_keras"] == ["reader/__init__.py:9"]


# keras-tuner 1.4.8's keras_tuner/src/engine/tuner.py lines 414-421, shortened: tensorboard imported in every trial
TUNER = '''from keras_tuner.src import backend


def _configure_tensorboard_dir(self, callbacks, trial, execution=0):
    if backend.config.backend() != "tensorflow":
        return

    from tensorboard.plugins.hparams import api as hparams_api
'''
TENSORBOARD_FALLS_BACK = "try:\n    import tensorboard\nexcept ImportError:\n    tensorboard = None\n"


def test_needed_imports_of_tensorboard_are_recorded_by_line_and_a_fallback_is_not(tmp_path, environ):
    """keras-tuner 1.4.8 imports tensorboard inside a trial without declaring it: the needed line is recorded under
    `stack_modules`; an import with an ImportError fallback, and a word in a string, are not."""
    site = tmp_path / "site-packages"
    entry = library(site, "keras-tuner", {"keras_tuner/src/engine/tuner.py": TUNER,
                                          "keras_tuner/optional.py": TENSORBOARD_FALLS_BACK,
                                          "keras_tuner/doc.py": 'WORDS = "tensorboard configuration"\n'})
    entry["requires"] = ["keras", "packaging"]  # keras is of the family: the library is read
    found = with_imports([entry], environ)[0]["imports"]
    assert found["stack_modules"] == {"tensorboard": ["keras_tuner/src/engine/tuner.py:8"]}
    healthy = library(tmp_path / "other", "fallback", {"fallback/__init__.py": TENSORBOARD_FALLS_BACK})
    assert read_library(healthy["metadata_path"], (Path(healthy["metadata_path"]) / "RECORD").read_bytes())[
        "stack_modules"] == {}


def test_a_cache_entry_of_the_earlier_reader_is_not_reused(tmp_path, environ):
    """The recorded shape changed (stack_modules): an entry the previous reader version wrote is read again."""
    site = tmp_path / "site-packages"
    entry = library(site, "keras-tuner", {"keras_tuner/tuner.py": TUNER})
    digest = hashlib.sha256((Path(entry["metadata_path"]) / "RECORD").read_bytes()).hexdigest()
    root = tmp_path / "cache" / "tfdoctor" / "library-imports"
    root.mkdir(parents=True)
    for version in (1, library_imports.READER_VERSION - 1):
        key = hashlib.sha256(f"{version}:{digest}".encode()).hexdigest()
        (root / f"{key}.json").write_text('{"reader": %d, "tf_keras": [], "complete": true}' % version, encoding="utf-8")
    found = with_imports([entry], environ)[0]["imports"]
    assert found["stack_modules"] == {"tensorboard": ["keras_tuner/tuner.py:8"]}
