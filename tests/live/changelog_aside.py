"""Issue 38, Build item 7: the changelog watch's HELD-OUT cases (data only, no tests here).

Drawn before the doctor saw any case: `random.Random(38).sample(sorted(ids), k)` over the ids of every confirmed case
of round 1, `random.Random(382)` over round 2's eight (fixtures/fresh/SCORES.md, "Changelog watch (issue 38)", says
the method and the counts). Nobody on the branch that made them ran the doctor on these.
tests/live/test_live_changelog.py includes them only when TFDOCTOR_LIVE_ASIDE=1:

    TFDOCTOR_LIVE_WIDE=1 TFDOCTOR_LIVE_ASIDE=1 .venv/bin/python -m pytest -q -n 0 -rA tests/live/test_live_changelog.py -k aside

prints one line per case and phase (verdict, pasted plan): PASSED is right, FAILED is wrong. Each dict holds the
fields of that module's Case; `expect`, `causes` and `repair` were written from the experiment alone.
"""

from __future__ import annotations

# tf-keras 2.21's Requires-Dist names `tensorflow`, which pip would install beside tensorflow-cpu
_TF_KERAS_NO_DEPS = 'python -m pip install --no-deps "tf-keras==2.21.0"'

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
    {
        "id": "aside-tensorflow-2.21-transformers-5-no-tensorflow-classes",
        "mechanism": "pip install tensorflow-cpu==2.21.0 transformers on Python 3.11 today: transformers 5 (January "
                     "2026) removed its TensorFlow and Flax classes, so `from transformers import TFAutoModel` raises "
                     "ImportError although TensorFlow is installed and works; transformers 4.x has them, and under "
                     "Keras 3 its TensorFlow side raises ValueError without tf-keras",
        "expect": "fail-or-warn",
        "causes": (("transformers",),),
        "hints": ("transformers<5", "tf-keras"),
        "python": "3.11",
        "requirements": ("tensorflow-cpu==2.21.0", "transformers>=5,<6"),
        "use": "from transformers import BertConfig, TFAutoModel\n"
               "config = BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, "
               "intermediate_size=8)\n"
               "model = TFAutoModel.from_config(config)\n"
               "print(type(model).__name__, model(model.dummy_inputs).last_hidden_state.shape, 'works')",
        "premise": "import importlib.metadata as m\n"
                   "assert m.version('transformers').split('.')[0] == '5', m.version('transformers')\n"
                   "assert m.version('tensorflow-cpu') == '2.21.0'",
        # proven on 2026-11-29: transformers 4.57.6 with tf-keras 2.21.0 (--no-deps: its Requires-Dist names
        # `tensorflow`, which pip would install beside tensorflow-cpu); TensorFlow 2.21.0 kept
        "repair": ('python -m pip install "transformers<5"', _TF_KERAS_NO_DEPS),
        "sources": ("https://github.com/huggingface/transformers/releases/tag/v5.0.0",
                    "https://pypi.org/project/transformers/"),
    },
    {
        "id": "aside-tensorflow-2.21-autokeras-3.0-keras-3.13-dense-units",
        "mechanism": "pip install tensorflow-cpu==2.21.0 autokeras on Python 3.11 today: pip picks Keras 3.15 "
                     "(TensorFlow 2.21 asks keras>=3.12.0); Keras 3.13.0 (December 2025) made Dense reject a `units` "
                     "that is not a Python int, and autokeras 3.0.0 (its newest, November 2025) builds its heads with "
                     "Dense(self.shape[-1]), a NumPy integer: every AutoModel fit raises ValueError (Received an "
                     "invalid value for `units`, expected a positive integer. Received: units=1); Keras 3.12.4 works",
        "expect": "fail-or-warn",
        "causes": (("autokeras",),),
        "hints": ("keras<3.13",),
        "python": "3.11",
        "requirements": ("tensorflow-cpu==2.21.0", "autokeras==3.0.0"),
        "use": "import tempfile, numpy as np, autokeras as ak\n"
               "clf = ak.ImageClassifier(max_trials=1, overwrite=True, directory=tempfile.mkdtemp())\n"
               "clf.fit(np.random.rand(8, 8, 8, 1).astype('float32'), np.array([0, 1] * 4), epochs=1, verbose=0)\n"
               "print('works')",
        "premise": "import importlib.metadata as m\n"
                   "from packaging.version import Version\n"
                   "assert Version(m.version('keras')) >= Version('3.13.0'), m.version('keras')\n"
                   "assert m.version('autokeras') == '3.0.0'\n"
                   "assert m.version('tensorflow-cpu') == '2.21.0'",
        # proven on 2026-11-29: Keras 3.12.4 (inside TensorFlow 2.21's keras>=3.12.0; 3.13.0, 3.13.2, 3.14.0 and
        # 3.15.1 all fail); TensorFlow 2.21.0 kept, `pip check` clean
        "repair": ('python -m pip install "keras<3.13"',),
        "sources": ("https://github.com/keras-team/keras/releases/tag/v3.13.0",
                    "https://pypi.org/project/autokeras/3.0.0/"),
    },
    {
        "id": "aside-tensorflow-2.19-jax-0.10-jax2tf-serialization-10",
        "mechanism": "pip install tensorflow-cpu==2.19.0 jax on Python 3.11 today: pip picks jax 0.10.2 (June 2026), "
                     "whose jax2tf serializes StableHLO modules of calling-convention version 10; TensorFlow 2.19's "
                     "XlaCallModule op loads up to version 9, so any function made by jax.experimental.jax2tf.convert "
                     "raises NotImplementedError when TensorFlow runs it (with version 9 forced, its StableHLO 1.9.1 "
                     "deserializer rejects vhlo.sine_v2); TensorFlow and tf.keras work; jax 0.5.3 works",
        "expect": "fail-or-warn",
        "causes": (("jax",),),
        "hints": ("jax<0.6",),
        "python": "3.11",
        "requirements": ("tensorflow-cpu==2.19.0", "jax"),
        "use": "import jax.numpy as jnp, tensorflow as tf\n"
               "from jax.experimental import jax2tf\n"
               "f = tf.function(jax2tf.convert(lambda x: jnp.sin(x) * 2.0), autograph=False)\n"
               "print(f(tf.constant([1.0, 2.0])).numpy(), 'works')",
        "premise": "import importlib.metadata as m\n"
                   "assert m.version('jax').startswith('0.10.'), m.version('jax')\n"
                   "assert m.version('tensorflow-cpu') == '2.19.0'",
        # proven on 2026-11-29: jax and jaxlib 0.5.3 (March 2025, TensorFlow 2.19's time); TensorFlow 2.19.0 kept,
        # `pip check` clean
        "repair": ('python -m pip install "jax<0.6" "jaxlib<0.6"',),
        "sources": ("https://pypi.org/project/jax/0.10.2/",
                    "https://github.com/jax-ml/jax/blob/main/jax/experimental/jax2tf/README.md"),
    },
    {
        "id": "aside-tensorflow-2.19-probability-0.25-jax-substrate-jax-0.7",
        "mechanism": "pip install tensorflow-cpu==2.19.0 tensorflow-probability jax on Python 3.11 today: pip picks "
                     "tensorflow-probability 0.25.0 (its newest) and jax 0.10.2; jax 0.7.0 (July 2025) removed "
                     "jax.interpreters.xla.pytype_aval_mappings, which TFP's JAX backend reads when it loads, so "
                     "`from tensorflow_probability.substrates import jax` raises AttributeError; TensorFlow and "
                     "tf.keras work; jax 0.6.2 works",
        "expect": "fail-or-warn",
        "causes": (("jax",),),
        "hints": ("jax<0.7",),
        "python": "3.11",
        "requirements": ("tensorflow-cpu==2.19.0", "tensorflow-probability", "jax"),
        "use": "import jax.numpy as jnp\n"
               "from tensorflow_probability.substrates import jax as tfp\n"
               "print(tfp.distributions.Normal(0.0, 1.0).log_prob(jnp.array(0.5)), 'works')",
        "premise": "import importlib.metadata as m\n"
                   "from packaging.version import Version\n"
                   "assert Version(m.version('jax')) >= Version('0.7.0'), m.version('jax')\n"
                   "assert m.version('tensorflow-probability') == '0.25.0'\n"
                   "assert m.version('tensorflow-cpu') == '2.19.0'",
        # proven on 2026-11-29: jax and jaxlib 0.6.2; TensorFlow 2.19.0 kept, `pip check` clean
        "repair": ('python -m pip install "jax<0.7" "jaxlib<0.7"',),
        "sources": ("https://docs.jax.dev/en/latest/changelog.html",
                    "https://github.com/tensorflow/probability/issues/2010",
                    "https://pypi.org/project/tensorflow-probability/0.25.0/"),
    },
)
