"""Issue 38, Build item 7: the changelog watch's HELD-OUT cases (data only, no tests here).

Drawn before the doctor saw any case: `random.Random(38).sample(sorted(ids), k)` over the ids of every confirmed case
(fixtures/fresh/SCORES.md, "Changelog watch (issue 38)", says the method and the counts). Nobody on the branch that
made them ran the doctor on these. tests/live/test_live_changelog.py includes them only when TFDOCTOR_LIVE_ASIDE=1:

    TFDOCTOR_LIVE_ASIDE=1 .venv/bin/python -m pytest -q -n 0 -rA tests/live/test_live_changelog.py -k aside

prints one line per case and phase (verdict, pasted plan): PASSED is right, FAILED is wrong. Each dict holds the
fields of that module's Case; `expect`, `causes` and `repair` were written from the experiment alone.
"""

from __future__ import annotations

CASES: tuple[dict, ...] = (
    {
        "id": "aside-tf-models-official-2.20-python-3.13",
        "mechanism": "tf-models-official 2.20.0 (the newest, February 2026) beside tensorflow-cpu 2.20.0 on Python 3.13: "
                     "official.vision.data.image_utils imports imghdr, which Python 3.13 removed (PEP 594), so the "
                     "vision data modules fail to import while TensorFlow works",
        "expect": "fail-or-warn",
        "causes": (("imghdr",),),
        "hints": ("standard-imghdr",),
        "python": "3.13",
        # the modules official.vision.data's import chain needs, by pip's resolver; tf-models-official and its tf-keras
        # --no-deps (its own Requires-Dist names `tensorflow`, `tensorflow-text` and ~1 GB more that the import does
        # not need)
        "requirements": ("tensorflow-cpu==2.20.0", "pillow", "pyyaml", "gin-config", "tensorflow-datasets", "scipy",
                         "pycocotools", "opencv-python-headless", "matplotlib"),
        "no_deps": ("tf-models-official==2.20.0", "tf-keras==2.20.1"),
        "use": "import official.vision.data.image_utils, official.vision.dataloaders.tfexample_utils; print('works')",
        "premise": "import sys; assert sys.version_info >= (3, 13)\n"
                   "import importlib.util; assert importlib.util.find_spec('imghdr') is None",
        # proven on 2026-11-29: the `imghdr` backport of Python's 'dead batteries'; TensorFlow 2.20.0 kept
        "repair": ("python -m pip install standard-imghdr",),
        "sources": ("https://docs.python.org/3/whatsnew/3.13.html#pep-594-remove-dead-batteries-from-the-standard-library",
                    "https://pypi.org/project/tf-models-official/2.20.0/",
                    "https://pypi.org/project/standard-imghdr/"),
    },
)
