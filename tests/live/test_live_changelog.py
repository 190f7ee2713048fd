"""Issue 38, Build item 7: the changelog watch. Breakages found by reading the 2025-2026 release notes of
TensorFlow's dependencies and companions, each confirmed by building the real environment from the index.

Each case is made as a user makes it: a fresh venv of a pyenv Python and `pip install <requirements>` with pip's own
resolver (the releases it picks today), then releases installed `--no-deps` where the case needs them. Each case
carries what was written from the experiment before the doctor saw it: `use`, the code that fails in the broken
environment and works after a repair; `causes`, what a finding of the doctor must name; `hints`, what its advice or
plan must say; and `repair`, the commands proven to repair it while keeping TensorFlow. The tests:

- test_premise_and_the_use_fails: the environment is what the case says (its `premise` script) and `use` fails;
- test_the_proven_repair_works: `repair` pasted into a copy makes `use` work, TensorFlow kept at its version;
- test_verdict: a `fail` or `warn` of the doctor names every token of a cause, and the hints are in its advice;
- test_pasted_plan_repairs: the doctor's plan pasted into a copy (support.paste) makes `use` work, TensorFlow kept
  at its version (or moved where the plan's moves_tensorflow says), and the doctor then names the cause no more.

`tfdoctor fix` is not run here: it would repeat the pasted plan on a third copy (CI's time), and
test_live_environments.py covers the fixer. Cases the doctor of this branch gets wrong are xfail(strict=True) with the
reason in the case (the `xfail` field of test_live_environments.py's Case: "verdict: why", "plan: why"), so the suite
passes and turns red when one gets fixed.

The held-out half (tests/live/changelog_aside.py for rounds 1 and 2, changelog_aside2.py for round 3, each drawn
before any scoring) joins only with TFDOCTOR_LIVE_ASIDE=1.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.live import changelog_aside, changelog_aside2, support

# The whole watch is the wide tier's (TFDOCTOR_LIVE_WIDE=1, nightly: docs/testing.md): each case is a fresh venv of pip's
# resolver (1.6 to 2.9 GB, 3-5 minutes of CI), and the path it walks (a report, its plan pasted into a shell) is walked
# in every commit's run by test_live_environments' gate cases. The two cases the doctor gets right are also recorded
# machines the fast suite diagnoses (fixtures/linux/keras-tuner-1.4.8-beside-tensorflow-2.21-without-tensorboard.json,
# retina-face-0.0.17-keras-3-without-tf-keras.json); the other five are xfail, a watch rather than a gate.
pytestmark = [pytest.mark.live, pytest.mark.integration, pytest.mark.wide]

FAIL, WARN, PROBLEM = "fail", "warn", "fail-or-warn"
# tf-keras 2.21's Requires-Dist names `tensorflow`, which pip would install beside tensorflow-cpu
_TF_KERAS_NO_DEPS = 'python -m pip install --no-deps "tf-keras==2.21.0"'


@dataclass(frozen=True)
class Case:
    id: str
    mechanism: str
    expect: str
    causes: tuple[tuple[str, ...], ...]  # each group: every token in one finding
    python: str  # the Python minor of the fresh venv
    requirements: tuple[str, ...]  # what `pip install` is asked for (pip's resolver)
    use: str  # fails before any repair, works after one
    premise: str  # asserts the environment is the case's (the release the changelog names is the one installed)
    repair: tuple[str, ...]  # proven by the experiment: pasted, it repairs and keeps TensorFlow
    hints: tuple[str, ...] = ()  # in the advice or commands of a finding naming a cause, or in the plan
    no_deps: tuple[str, ...] = ()  # then installed --no-deps
    sources: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    xfail: str | None = None  # "verdict: why", "plan: why": the doctor of this branch is wrong there
    # checks whose verdict on this case rests on what no table holds: a report without the child's facts may pass or
    # skip there (support.check_stripped, issue 38)
    beyond_tables: tuple[str, ...] = ()


SEEN = (
    Case("tensorflow-2.20-protobuf-7-write-graph-text",
         "pip install tensorflow-cpu==2.20.0 on Python 3.11 today: TensorFlow 2.20 declares protobuf>=5.28.0 with no "
         "ceiling, so pip picks protobuf 7.x, whose text_format.MessageToString no longer takes float_format (protobuf "
         "v34.0, February 2026); TensorFlow and tf.keras work, tf.io.write_graph(..., as_text=True), the default, "
         "raises TypeError (TensorFlow 2.21, made for protobuf 7, no longer passes it)",
         PROBLEM, causes=(("protobuf 7",),), hints=("protobuf<7",), python="3.11",
         requirements=("tensorflow-cpu==2.20.0",),
         use="import tempfile, tensorflow as tf\n"
             "g = tf.function(lambda x: x + 1).get_concrete_function(tf.TensorSpec([2])).graph.as_graph_def()\n"
             "tf.io.write_graph(g, tempfile.mkdtemp(), 'g.pbtxt', as_text=True)\nprint('works')",
         premise="import google.protobuf as p, importlib.metadata as m\n"
                 "assert p.__version__.split('.')[0] == '7', p.__version__\n"
                 "assert m.version('tensorflow-cpu') == '2.20.0'",
         # proven on 2026-11-29: protobuf 6.33.6 (inside TensorFlow 2.20's pin and tensorboard 2.20's); TensorFlow kept
         repair=('python -m pip install "protobuf<7"',),
         sources=("https://github.com/protocolbuffers/protobuf/releases/tag/v34.0",
                  "https://pypi.org/project/tensorflow/2.20.0/"),
         xfail="verdict, plan: protobuf 7.36.2 satisfies TensorFlow 2.20's own protobuf>=5.28.0, TensorFlow and tf.keras "
               "import, and no table says protobuf 7 dropped what graph_io.write_graph passes: the doctor reports no "
               "finding and prints no plan (scored on main fab4259)"),
    Case(
        id="tensorflow-2.21-tensorflow-similarity-keras-3",
        mechanism="pip install tensorflow-cpu==2.21.0 tensorflow-similarity on Python 3.11 today: TensorFlow 2.21's "
                  "tf.keras is Keras 3.15; tensorflow-similarity 0.17.1 (its newest) imports, but its losses pass "
                  "Keras 2's reduction='auto', so compiling a SimilarityModel raises ValueError (Invalid value for "
                  "argument `reduction`); it declares no tf-keras",
        expect="fail-or-warn",
        causes=(("tensorflow-similarity",),),
        hints=("tf-keras", "TF_USE_LEGACY_KERAS"),
        python="3.11",
        requirements=("tensorflow-cpu==2.21.0", "tensorflow-similarity==0.17.1"),
        use="import numpy as np, tensorflow as tf, tensorflow_similarity as tfsim\n"
            "inputs = tf.keras.layers.Input(shape=(4,))\n"
            "outputs = tfsim.layers.MetricEmbedding(4)(tf.keras.layers.Dense(8)(inputs))\n"
            "model = tfsim.models.SimilarityModel(inputs, outputs)\n"
            "model.compile(optimizer='adam', loss=tfsim.losses.MultiSimilarityLoss())\n"
            "model.fit(np.random.rand(16, 4).astype('float32'), np.array([0, 1] * 8), epochs=1, verbose=0)\n"
            "print('works')",
        premise="import importlib.metadata as m\n"
                "assert m.version('keras').split('.')[0] == '3', m.version('keras')\n"
                "assert m.version('tensorflow-similarity') == '0.17.1'\n"
                "assert m.version('tensorflow-cpu') == '2.21.0'",
        # proven on 2026-11-29: tf-keras 2.21.0 (--no-deps) and TF_USE_LEGACY_KERAS=1; TensorFlow 2.21.0 kept
        repair=(_TF_KERAS_NO_DEPS, "export TF_USE_LEGACY_KERAS=1"),
        sources=("https://pypi.org/project/tensorflow-similarity/0.17.1/",
                 "https://github.com/tensorflow/tensorflow/releases/tag/v2.16.1"),
        xfail=("verdict, plan: tensorflow-similarity 0.17.1 imports under TensorFlow 2.21's Keras 3.15, and nothing it "
               "declares or any table says its losses pass Keras 2's reduction='auto': every check passes, no finding "
               "names tensorflow-similarity, no plan (scored on 6dad2fa, before any diagnosis change)"),
    ),
    Case(
        id="tensorflow-2.21-tf2onnx-1.17-large-model-numpy-2",
        mechanism="pip install tensorflow-cpu==2.21.0 tf2onnx on Python 3.11 today: tf2onnx 1.17.0 (March 2026) "
                  "declares numpy>=1.23.5 and pip picks NumPy 2.4; its graph.py still calls np.product, which NumPy "
                  "2.0 removed, so `python -m tf2onnx.convert --large_model` raises AttributeError while plain "
                  "conversion works",
        expect="fail-or-warn",
        causes=(("tf2onnx", "numpy"),),
        hints=("numpy<2",),
        python="3.11",
        requirements=("tensorflow-cpu==2.21.0", "tf2onnx==1.17.0"),
        use="import subprocess, sys, tempfile, tensorflow as tf\n"
            "class M(tf.Module):\n"
            "    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])\n"
            "    def __call__(self, x):\n"
            "        return tf.matmul(x, tf.ones([3, 2])) + 1.0\n"
            "where = tempfile.mkdtemp()\n"
            "tf.saved_model.save(M(), where + '/sm')\n"
            "subprocess.run([sys.executable, '-m', 'tf2onnx.convert', '--saved-model', where + '/sm', '--output', "
            "where + '/m.onnx', '--large_model'], check=True)\n"
            "print('works')",
        premise="import importlib.metadata as m, numpy as np\n"
                "assert not hasattr(np, 'product'), np.__version__\n"
                "assert m.version('tf2onnx') == '1.17.0'\n"
                "assert m.version('tensorflow-cpu') == '2.21.0'",
        # proven on 2026-11-29: NumPy 1.26.4 with ml-dtypes 0.5.4 (ml-dtypes 0.6 requires NumPy 2, TensorFlow 2.21
        # takes numpy>=1.26.0 and ml_dtypes>=0.5.1); TensorFlow 2.21.0 kept, `pip check` clean
        repair=('python -m pip install "numpy<2" "ml-dtypes<0.6"',),
        sources=("https://numpy.org/doc/stable/release/2.0.0-notes.html",
                 "https://pypi.org/project/tf2onnx/1.17.0/"),
        xfail=("verdict, plan: NumPy 2.x satisfies tf2onnx 1.17.0's own numpy>=1.23.5 and TensorFlow 2.21's pin, "
               "tf2onnx imports, and np.product is reached only by --large_model: every check passes, no finding "
               "names tf2onnx, no plan (scored on 6dad2fa, and on main 9045b69)"),
    ),
    Case(
        id="tensorflow-2.21-tf2onnx-1.17-from-keras-keras-3",
        mechanism="pip install tensorflow-cpu==2.21.0 tf2onnx on Python 3.11 today: tf2onnx 1.17.0 (March 2026) "
                  "imports, but tf2onnx.convert.from_keras of a tf.keras model, which is Keras 3.15 under TensorFlow "
                  "2.21, raises KeyError ('keras_tensor_1'): it reads Keras 2's output names; with tf-keras and "
                  "TF_USE_LEGACY_KERAS=1 it converts",
        expect="fail-or-warn",
        causes=(("tf2onnx",),),
        hints=("tf-keras", "TF_USE_LEGACY_KERAS"),
        python="3.11",
        requirements=("tensorflow-cpu==2.21.0", "tf2onnx==1.17.0"),
        use="import tensorflow as tf, tf2onnx\n"
            "model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])\n"
            "spec = (tf.TensorSpec((None, 3), tf.float32, name='x'),)\n"
            "proto, _ = tf2onnx.convert.from_keras(model, input_signature=spec, opset=13)\n"
            "print('works', len(proto.graph.node))",
        premise="import importlib.metadata as m\n"
                "assert m.version('keras').split('.')[0] == '3', m.version('keras')\n"
                "assert m.version('tf2onnx') == '1.17.0'\n"
                "assert m.version('tensorflow-cpu') == '2.21.0'",
        # proven on 2026-11-29: tf-keras 2.21.0 (--no-deps) and TF_USE_LEGACY_KERAS=1; TensorFlow 2.21.0 kept
        repair=(_TF_KERAS_NO_DEPS, "export TF_USE_LEGACY_KERAS=1"),
        sources=("https://pypi.org/project/tf2onnx/1.17.0/",
                 "https://github.com/onnx/tensorflow-onnx/releases/tag/v1.17.0"),
        xfail=("verdict, plan: tf2onnx 1.17.0 imports under Keras 3.15 and declares no tf-keras; that from_keras "
               "reads Keras 2's output names is in no artifact or table: every check passes, no finding names "
               "tf2onnx, no plan (scored on 6dad2fa, and on main 9045b69)"),
    ),
    Case(
        id="tensorflowjs-4.22-converter-ydf-0.16.0-protobuf-gencode",
        mechanism="pip install tensorflowjs on Python 3.11 today: tensorflowjs 4.22 requires "
                  "tensorflow-decision-forests, whose 1.12 pins tensorflow==2.19.0 (protobuf<6); ydf 0.16.1 "
                  "declares protobuf>=6.31.1, so pip picks ydf 0.16.0 (March 2026), which declares "
                  "protobuf>=5.29.1 but ships protobuf 6.31.1 gencode: `tensorflowjs_converter` (and "
                  "`import tensorflow_decision_forests`) raises VersionError (gencode 6.31.1 runtime 5.29.6) "
                  "while TensorFlow and tf.keras work",
        expect="fail-or-warn",
        causes=(("ydf",),),
        hints=("ydf<0.16",),
        python="3.11",
        requirements=("tensorflowjs==4.22.0",),
        use="import subprocess, sys, tempfile, tensorflow as tf\n"
            "where = tempfile.mkdtemp()\n"
            "model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])\n"
            "model.save(where + '/m.h5')\n"
            "# the tensorflowjs_converter entry point, run by this Python (a copy's bin/ scripts keep the source's "
            "shebang)\n"
            "subprocess.run([sys.executable, '-c', 'from tensorflowjs.converters.converter import pip_main; "
            "pip_main()', '--input_format=keras', where + '/m.h5', where + '/js'], check=True)\n"
            "print('works')",
        premise="import importlib.metadata as m, google.protobuf as p\n"
                "assert m.version('ydf') == '0.16.0', m.version('ydf')\n"
                "assert p.__version__.split('.')[0] == '5', p.__version__\n"
                "assert m.version('tensorflow') == '2.19.0'",
        # proven on 2026-11-29: ydf 0.15.0 (protobuf 5 gencode), protobuf 5.29.6 and TensorFlow 2.19.0 kept
        repair=('python -m pip install "ydf<0.16"',),
        sources=("https://pypi.org/project/ydf/0.16.0/", "https://pypi.org/project/ydf/0.16.1/",
                 "https://protobuf.dev/support/cross-version-runtime-guarantee/"),
        xfail=("verdict, plan: the companions check fails on `import tensorflow_decision_forests` (VersionError, "
               "gencode 6.31.1 runtime 5.29.6) but names neither ydf nor a ydf<0.16 hint; its plan, `export "
               "TF_USE_LEGACY_KERAS=1` (for tensorflow_hub's KerasLayer, a second finding), leaves "
               "tensorflowjs_converter failing (scored on 6dad2fa, and on main 9045b69)"),
    ),
    # Round 3 (2026-11-29): fixtures/fresh/SCORES.md, "Changelog watch, round 3"
    Case(
        id="tensorflow-2.21-keras-tuner-1.4.8-no-tensorboard",
        mechanism="pip install tensorflow-cpu==2.21.0 keras-tuner on Python 3.11 today: TensorFlow 2.21 no longer "
                  "requires tensorboard (2.20 pinned tensorboard~=2.20.0), and keras-tuner 1.4.8 (its newest, November "
                  "2025) imports tensorboard.plugins.hparams in every trial under the TensorFlow backend without "
                  "declaring it: each trial of Tuner.search fails with ModuleNotFoundError (No module named "
                  "'tensorboard') and no trial completes, while TensorFlow, tf.keras and `import keras_tuner` work",
        expect="fail-or-warn",
        causes=(("keras-tuner", "tensorboard"),),
        hints=("tensorboard",),
        python="3.11",
        requirements=("tensorflow-cpu==2.21.0", "keras-tuner==1.4.8"),
        use="import tempfile, numpy as np, keras, keras_tuner as kt\n"
            "def build(hp):\n"
            "    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(hp.Int('units', 2, 4, step=2)), "
            "keras.layers.Dense(1)])\n"
            "    model.compile(optimizer='adam', loss='mse')\n"
            "    return model\n"
            "tuner = kt.RandomSearch(build, objective='val_loss', max_trials=1, directory=tempfile.mkdtemp())\n"
            "x, y = np.random.rand(16, 4).astype('float32'), np.random.rand(16, 1).astype('float32')\n"
            "tuner.search(x, y, epochs=1, validation_data=(x, y), verbose=0)\n"
            "# a failed trial is logged, not raised: the search must have completed one\n"
            "best = tuner.oracle.get_best_trials(1)\n"
            "assert best and best[0].score is not None, 'no trial completed'\n"
            "print('works', best[0].hyperparameters.values)",
        premise="import importlib.metadata as m, importlib.util\n"
                "assert importlib.util.find_spec('tensorboard') is None\n"
                "assert m.version('keras-tuner') == '1.4.8'\n"
                "assert m.version('tensorflow-cpu') == '2.21.0'",
        # proven on 2026-11-29: tensorboard 2.21.0 (with markdown, werkzeug, tensorboard-data-server); TensorFlow
        # 2.21.0 kept
        repair=("python -m pip install tensorboard",),
        sources=("https://pypi.org/project/keras-tuner/1.4.8/", "https://pypi.org/project/tensorflow-cpu/2.21.0/",
                 "https://pypi.org/project/tensorflow-cpu/2.20.0/"),
        # right since keras-tuner's own files are read for tensorboard (library_imports reader 2): the dependencies check
        # warns naming tuner.py:421 and the plan installs tensorboard~=2.21.0, TensorFlow kept (XPASS, 2026-11-29)
    ),
)

# Issue 38, build 5: libraries in no list, known only by what their own files import (not from a changelog: the
# issue's own example, scored apart from the changelog watch's sets).
OUTSIDE_LISTS = (
    Case(
        id="tensorflow-2.21-retina-face-0.0.17-tf-keras-read-from-its-files",
        mechanism="pip install tensorflow-cpu==2.21.0 and retina-face 0.0.17's other requirements on Python 3.11, then "
                  "retina-face --no-deps (it requires `tensorflow`, which pip would install beside tensorflow-cpu): "
                  "`from retinaface import RetinaFace` sets TF_USE_LEGACY_KERAS=1 and raises ValueError (\"requires "
                  "tf-keras package\") under TensorFlow 2.16+ without tf-keras; retina-face is in no table, its "
                  "package_utils.py imports tf_keras",
        expect=FAIL,
        causes=(("retina-face",),),
        hints=("tf-keras",),
        python="3.11",
        requirements=("tensorflow-cpu==2.21.0", "numpy>=1.14.0", "gdown>=3.10.1", "Pillow>=5.2.0",
                      "opencv-python>=3.4.4"),
        no_deps=("retina-face==0.0.17",),
        # detect_faces on a synthetic image, the network built with its initial weights: its pretrained ones are a
        # download from GitHub, which this machine cannot reach
        use="import numpy as np\n"
            "from retinaface import RetinaFace\n"
            "from retinaface.model import retinaface_model\n"
            "retinaface_model.load_weights = lambda model: model\n"
            "faces = RetinaFace.detect_faces(np.zeros((64, 64, 3), dtype=np.uint8), model=RetinaFace.build_model())\n"
            "print('works', type(faces).__name__)",
        premise="import importlib.metadata as m, importlib.util as u\n"
                "assert u.find_spec('tf_keras') is None\n"
                "assert m.version('retina-face') == '0.0.17'\n"
                "assert m.version('tensorflow-cpu') == '2.21.0'",
        repair=(_TF_KERAS_NO_DEPS,),
        sources=("https://pypi.org/project/retina-face/0.0.17/",
                 "https://github.com/serengil/retinaface/blob/master/retinaface/commons/package_utils.py"),
    ),
)

# the held-out cases of every round: `-k aside` selects them all, `-k aside-r3` round 3's alone
ASIDE = (tuple(Case(**spec) for spec in changelog_aside.CASES + changelog_aside2.CASES)
         if os.environ.get("TFDOCTOR_LIVE_ASIDE") == "1" else ())
CASES = SEEN + OUTSIDE_LISTS + ASIDE


def _params(phase: str) -> list:
    def phases(case: Case) -> list[str]:
        return [p.strip() for p in case.xfail.split(":", 1)[0].split(",")] if case.xfail else []

    return [pytest.param(case, id=case.id,
                         marks=[pytest.mark.xfail(strict=True, reason=case.xfail)] if phase in phases(case) else [])
            for case in CASES]


def _recipe(case: Case) -> tuple:
    """What makes a case's environment and its report: cases that share it share one build (the two tf2onnx cases are
    one `pip install tensorflow-cpu==2.21.0 tf2onnx==1.17.0`: 50-100 s of CI each)."""
    return case.python, case.requirements, case.no_deps, tuple(sorted(case.env.items())), case.beyond_tables


class Built:
    """Each selected case's environment, built once (pip's resolver, then the --no-deps releases), and its report;
    one for the cases of one recipe, removed when the last of them is done."""

    def __init__(self, root: Path, cases: list[Case]):
        self.root = root
        self._made: dict[tuple, tuple[Path, dict]] = {}
        self._users: dict[tuple, set[str]] = {}  # the selected cases of each recipe not done yet
        for case in cases:
            self._users.setdefault(_recipe(case), set()).add(case.id)

    def broken(self, case: Case) -> tuple[Path, dict]:
        recipe = _recipe(case)
        if recipe not in self._made:
            started, env = time.monotonic(), self.root / case.id
            fetched = support.build_resolved(env, support.python_of(case.python), case.requirements)
            if case.no_deps:
                completed = support.pip(env / "bin" / "python", "install", "--no-deps", *case.no_deps)
                fetched += support.downloaded_bytes(completed.stdout + completed.stderr)
                support.require(completed, f"{case.id}: install --no-deps")
            report = support.run_doctor(env, case.env, self.root / "reports" / f"{case.id}.json", case.beyond_tables)
            support.LEDGER.note(case.id, mechanism=case.mechanism[:120], expect=case.expect,
                                before=support.verdict_line(report), build_seconds=time.monotonic() - started,
                                build_download=fetched)
            self._made[recipe] = (env, report)
        elif case.id not in support.LEDGER.cases:  # the recipe's environment, built for a case before this one
            env, report = self._made[recipe]
            support.LEDGER.note(case.id, mechanism=f"{case.mechanism[:90]} (the environment of {env.name})",
                                expect=case.expect, before=support.verdict_line(report))
        return self._made[recipe]

    def drop(self, case: Case) -> None:
        """Remove the case's environment once the tests of every case built the same way are done: one recipe's
        at a time on disk, not the module's."""
        recipe = _recipe(case)
        users = self._users.get(recipe, set())
        users.discard(case.id)
        if not users and recipe in self._made and not os.environ.get("TFDOCTOR_LIVE_KEEP"):
            env, _ = self._made.pop(recipe)
            shutil.rmtree(env, ignore_errors=True)
            env.with_name(f"{env.name}-use.py").unlink(missing_ok=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory, request):
    reason = support.platform_reason()
    if reason:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("changelog")
    support.LEDGER.started = time.monotonic()
    outer, support.LEDGER.workdir = support.LEDGER.workdir, str(root)
    cases = list({item.callspec.params["case"].id: item.callspec.params["case"]
                  for item in support.selected_items(request, __name__)}.values())
    yield Built(root, cases)
    if not os.environ.get("TFDOCTOR_LIVE_KEEP"):
        shutil.rmtree(root, ignore_errors=True)
    support.LEDGER.workdir = outer


@pytest.fixture(scope="module")
def case(request, built):
    """The case of the test (parametrized indirectly): a module-scoped parameter, so pytest runs a case's four tests
    one after another and tears this down, removing its environment, before the next case's are built."""
    yield request.param
    built.drop(request.param)


def _use(env: Path, case: Case, extra: dict[str, str]) -> tuple[bool, str]:
    """The case's `use`, run as a file beside the environment."""
    path = env.parent / f"{env.name}-use.py"
    path.write_text(case.use, encoding="utf-8")
    completed = support.run([str(env / "bin" / "python"), str(path)], env=support.clean_environ(**case.env, **extra),
                            timeout=support.DOCTOR_TIMEOUT)
    return completed.returncode == 0, "\n".join((completed.stdout + completed.stderr).strip().splitlines()[-6:])


def _naming(report: dict, case: Case) -> list[dict]:
    """The doctor's fail/warn findings that name a cause of the case."""
    return [r for r in support.problems(report, "fail", "error", "warn")
            if any(all(support._normal(t) in support.result_text(r) for t in tokens) for tokens in case.causes)]


def _after(built: Built, case: Case, how: str, commands: list[str]) -> tuple[list[dict], dict, Path]:
    """Paste the commands into one shell on a fresh copy of the case's environment: what ran, the shell's variables."""
    broken, _ = built.broken(case)
    env = support.clone(broken, built.root / f"{case.id}-{how}")
    ran, shell_env = support.paste([c.replace(str(broken), str(env)) for c in commands], env, case.env)
    support.LEDGER.note(case.id, ran=[(r["command"][:100], r["exit"]) for r in ran])
    return ran, shell_env, env


@pytest.mark.parametrize("case", _params("premise"), indirect=True)
def test_premise_and_the_use_fails(built, case):
    env, _ = built.broken(case)
    premise = support.run([str(env / "bin" / "python"), "-c", case.premise], env=support.clean_environ(**case.env))
    assert premise.returncode == 0, f"premise of {case.id} no longer holds:\n{premise.stderr[-2000:]}"
    works, tail = _use(env, case, {})
    assert not works, f"{case.id}: the use works before any repair, the case is gone:\n{tail}"


@pytest.mark.parametrize("case", _params("repair"), indirect=True)
def test_the_proven_repair_works(built, case):
    broken, _ = built.broken(case)
    ran, shell_env, env = _after(built, case, "repair", list(case.repair))
    try:
        assert all(r["exit"] == 0 for r in ran) and len(ran) == len(case.repair), ran
        works, tail = _use(env, case, shell_env)
        assert works, tail
        assert support.tensorflow_builds(env) == support.tensorflow_builds(broken), "the proven repair moved TensorFlow"
    finally:
        shutil.rmtree(env, ignore_errors=True)


@pytest.mark.parametrize("case", _params("verdict"), indirect=True)
def test_verdict(built, case):
    _, report = built.broken(case)
    named = _naming(report, case)
    seen = support.verdict_line(report)
    assert named, f"no fail or warn names {case.causes}; got: {seen}"
    if case.expect == FAIL:
        assert any(r["status"] in ("fail", "error") for r in named), f"expected a fail naming the cause; got: {seen}"
    advice = " ".join(support.result_text(r) for r in named) + " " + support._normal(
        " ".join(step["command"] for step in report["plan"]["steps"]))
    for hint in case.hints:
        assert support._normal(hint) in advice, f"the advice lacks {hint!r}: {advice[:800]}"


@pytest.mark.parametrize("case", _params("plan"), indirect=True)
def test_pasted_plan_repairs(built, case):
    broken, report = built.broken(case)
    commands = support.pasted_commands(report)
    assert commands, f"the report has no plan to paste: {support.verdict_line(report)}"
    ran, shell_env, env = _after(built, case, "pasted", commands)
    try:
        failed = [r for r in ran if r["exit"] != 0]
        assert not failed, f"a step of the plan failed: {failed[0]['command']}\n{failed[0]['output']}"
        works, tail = _use(env, case, shell_env)
        support.LEDGER.note(case.id, pasted_works=works)
        assert works, f"after the pasted plan the use still fails:\n{tail}"
        builds, before = support.tensorflow_builds(env), support.tensorflow_builds(broken)
        moves = report["plan"]["moves_tensorflow"]
        if moves is None:
            assert builds == before, f"TensorFlow moved from {before} to {builds} though the plan said it stays"
        else:
            (version,) = builds.values()
            assert Requirement(moves["to"]).specifier.contains(version, prereleases=True), (builds, moves)
        after = support.run_doctor(env, shell_env, built.root / "reports" / f"{case.id}-pasted.json")
        support.LEDGER.note(case.id, pasted_after=support.verdict_line(after))
        assert not _naming(after, case), f"after the plan the doctor still names the cause: {support.verdict_line(after)}"
    finally:
        shutil.rmtree(env, ignore_errors=True)
