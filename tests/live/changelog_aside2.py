"""Issue 38, Build item 7: the changelog watch's HELD-OUT cases of round 3 (data only, no tests here).

Drawn before the doctor saw any case of the round: `random.Random(39).sample(sorted(ids), k=len(ids) // 2)` over the
ids of every confirmed case of round 3 (fixtures/fresh/SCORES.md, "Changelog watch, round 3", says the method and the
counts). Nobody on the branch that made them ran the doctor on these. tests/live/test_live_changelog.py includes them
only when TFDOCTOR_LIVE_ASIDE=1, with the earlier rounds' (tests/live/changelog_aside.py):

    TFDOCTOR_LIVE_WIDE=1 TFDOCTOR_LIVE_ASIDE=1 .venv/bin/python -m pytest -q -n 0 -rA tests/live/test_live_changelog.py -k aside2

scores these alone (`-k aside` scores every held-out case, this round's among them): one line per case and phase
(verdict, pasted plan), PASSED is right, FAILED is wrong. Each dict holds the fields of that module's Case; `expect`,
`causes`, `hints` and `repair` were written from the experiment alone.
"""

from __future__ import annotations

CASES: tuple[dict, ...] = (
    {
        "id": "aside-r3-tensorflow-2.21-datasets-4.9.10-etils-1.14-no-importlib-resources",
        "mechanism": "pip install tensorflow-cpu==2.21.0 tensorflow-datasets on Python 3.11 today: "
                     "tensorflow-datasets 4.9.10 (its newest, May 2026) imports importlib_resources in "
                     "tensorflow_datasets.core.dataset_builder (lazily, through etils' lazy imports) but declares it "
                     "only for Python < 3.9; it came in through etils[epath] until etils 1.14.0 (March 2026) dropped it "
                     "from that extra, so pip installs etils 1.15 without it and preparing or loading any dataset "
                     "raises ModuleNotFoundError (No module named 'importlib_resources') while `import "
                     "tensorflow_datasets`, TensorFlow and tf.keras work",
        "expect": "fail-or-warn",
        "causes": (("tensorflow-datasets", "importlib-resources"),),
        "hints": ("importlib-resources",),
        "python": "3.11",
        "requirements": ("tensorflow-cpu==2.21.0", "tensorflow-datasets==4.9.10"),
        "use": "import tempfile, tensorflow as tf, tensorflow_datasets as tfds\n"
               "where = tempfile.mkdtemp()\n"
               "tfds.dataset_builders.store_as_tfds_dataset(name='tiny', version='1.0.0', "
               "features=tfds.features.FeaturesDict({'x': tf.int64}), "
               "split_datasets={'train': tf.data.Dataset.from_tensor_slices({'x': [1, 2, 3]})}, data_dir=where)\n"
               "print(list(tfds.load('tiny', data_dir=where, split='train').as_numpy_iterator()), 'works')",
        "premise": "import importlib.metadata as m, importlib.util\n"
                   "from packaging.version import Version\n"
                   "assert importlib.util.find_spec('importlib_resources') is None\n"
                   "assert Version(m.version('etils')) >= Version('1.14.0'), m.version('etils')\n"
                   "assert m.version('tensorflow-datasets') == '4.9.10'\n"
                   "assert m.version('tensorflow-cpu') == '2.21.0'",
        # proven on 2026-11-29: importlib-resources (the backport tensorflow-datasets imports); TensorFlow 2.21.0 kept
        "repair": ("python -m pip install importlib-resources",),
        "sources": ("https://pypi.org/project/etils/1.14.0/", "https://pypi.org/project/etils/1.13.0/",
                    "https://pypi.org/project/tensorflow-datasets/4.9.10/"),
    },
)
