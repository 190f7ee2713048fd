"""Issue 38, Build item 7, second round: confirmed changelog-watch cases not yet split (seen / held out).

A staging file so that each confirmed case is committed as soon as it is confirmed; the split moves each case into
test_live_changelog.py (seen) or changelog_aside.py (held out) and removes this file. Nothing imports it.
"""

from __future__ import annotations

_TF_KERAS_NO_DEPS = 'python -m pip install --no-deps "tf-keras==2.21.0"'  # tf-keras 2.21 requires `tensorflow`, not -cpu

CASES: tuple[dict, ...] = (
    {
        "id": "tensorflow-2.21-transformers-5-no-tensorflow-classes",
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
        "id": "tensorflow-2.21-tensorflow-similarity-keras-3",
        "mechanism": "pip install tensorflow-cpu==2.21.0 tensorflow-similarity on Python 3.11 today: TensorFlow 2.21's "
                     "tf.keras is Keras 3.15; tensorflow-similarity 0.17.1 (its newest) imports, but its losses pass "
                     "Keras 2's reduction='auto', so compiling a SimilarityModel raises ValueError (Invalid value for "
                     "argument `reduction`); it declares no tf-keras",
        "expect": "fail-or-warn",
        "causes": (("tensorflow-similarity",),),
        "hints": ("tf-keras", "TF_USE_LEGACY_KERAS"),
        "python": "3.11",
        "requirements": ("tensorflow-cpu==2.21.0", "tensorflow-similarity==0.17.1"),
        "use": "import numpy as np, tensorflow as tf, tensorflow_similarity as tfsim\n"
               "inputs = tf.keras.layers.Input(shape=(4,))\n"
               "outputs = tfsim.layers.MetricEmbedding(4)(tf.keras.layers.Dense(8)(inputs))\n"
               "model = tfsim.models.SimilarityModel(inputs, outputs)\n"
               "model.compile(optimizer='adam', loss=tfsim.losses.MultiSimilarityLoss())\n"
               "model.fit(np.random.rand(16, 4).astype('float32'), np.array([0, 1] * 8), epochs=1, verbose=0)\n"
               "print('works')",
        "premise": "import importlib.metadata as m\n"
                   "assert m.version('keras').split('.')[0] == '3', m.version('keras')\n"
                   "assert m.version('tensorflow-similarity') == '0.17.1'\n"
                   "assert m.version('tensorflow-cpu') == '2.21.0'",
        # proven on 2026-11-29: tf-keras 2.21.0 (--no-deps) and TF_USE_LEGACY_KERAS=1; TensorFlow 2.21.0 kept
        "repair": (_TF_KERAS_NO_DEPS, "export TF_USE_LEGACY_KERAS=1"),
        "sources": ("https://pypi.org/project/tensorflow-similarity/0.17.1/",
                    "https://github.com/tensorflow/tensorflow/releases/tag/v2.16.1"),
    },
    {
        "id": "tensorflow-2.21-tf2onnx-1.17-large-model-numpy-2",
        "mechanism": "pip install tensorflow-cpu==2.21.0 tf2onnx on Python 3.11 today: tf2onnx 1.17.0 (March 2026) "
                     "declares numpy>=1.23.5 and pip picks NumPy 2.4; its graph.py still calls np.product, which NumPy "
                     "2.0 removed, so `python -m tf2onnx.convert --large_model` raises AttributeError while plain "
                     "conversion works",
        "expect": "fail-or-warn",
        "causes": (("tf2onnx", "numpy"),),
        "hints": ("numpy<2",),
        "python": "3.11",
        "requirements": ("tensorflow-cpu==2.21.0", "tf2onnx==1.17.0"),
        "use": "import subprocess, sys, tempfile, tensorflow as tf\n"
               "class M(tf.Module):\n"
               "    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])\n"
               "    def __call__(self, x):\n"
               "        return tf.matmul(x, tf.ones([3, 2])) + 1.0\n"
               "where = tempfile.mkdtemp()\n"
               "tf.saved_model.save(M(), where + '/sm')\n"
               "subprocess.run([sys.executable, '-m', 'tf2onnx.convert', '--saved-model', where + '/sm', '--output', "
               "where + '/m.onnx', '--large_model'], check=True)\n"
               "print('works')",
        "premise": "import importlib.metadata as m, numpy as np\n"
                   "assert not hasattr(np, 'product'), np.__version__\n"
                   "assert m.version('tf2onnx') == '1.17.0'\n"
                   "assert m.version('tensorflow-cpu') == '2.21.0'",
        # proven on 2026-11-29: NumPy 1.26.4 with ml-dtypes 0.5.4 (ml-dtypes 0.6 requires NumPy 2, TensorFlow 2.21
        # takes numpy>=1.26.0 and ml_dtypes>=0.5.1); TensorFlow 2.21.0 kept, `pip check` clean
        "repair": ('python -m pip install "numpy<2" "ml-dtypes<0.6"',),
        "sources": ("https://numpy.org/doc/stable/release/2.0.0-notes.html",
                    "https://pypi.org/project/tf2onnx/1.17.0/"),
    },
    {
        "id": "tensorflow-2.21-tf2onnx-1.17-from-keras-keras-3",
        "mechanism": "pip install tensorflow-cpu==2.21.0 tf2onnx on Python 3.11 today: tf2onnx 1.17.0 (March 2026) "
                     "imports, but tf2onnx.convert.from_keras of a tf.keras model, which is Keras 3.15 under TensorFlow "
                     "2.21, raises KeyError ('keras_tensor_1'): it reads Keras 2's output names; with tf-keras and "
                     "TF_USE_LEGACY_KERAS=1 it converts",
        "expect": "fail-or-warn",
        "causes": (("tf2onnx",),),
        "hints": ("tf-keras", "TF_USE_LEGACY_KERAS"),
        "python": "3.11",
        "requirements": ("tensorflow-cpu==2.21.0", "tf2onnx==1.17.0"),
        "use": "import tensorflow as tf, tf2onnx\n"
               "model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])\n"
               "spec = (tf.TensorSpec((None, 3), tf.float32, name='x'),)\n"
               "proto, _ = tf2onnx.convert.from_keras(model, input_signature=spec, opset=13)\n"
               "print('works', len(proto.graph.node))",
        "premise": "import importlib.metadata as m\n"
                   "assert m.version('keras').split('.')[0] == '3', m.version('keras')\n"
                   "assert m.version('tf2onnx') == '1.17.0'\n"
                   "assert m.version('tensorflow-cpu') == '2.21.0'",
        # proven on 2026-11-29: tf-keras 2.21.0 (--no-deps) and TF_USE_LEGACY_KERAS=1; TensorFlow 2.21.0 kept
        "repair": (_TF_KERAS_NO_DEPS, "export TF_USE_LEGACY_KERAS=1"),
        "sources": ("https://pypi.org/project/tf2onnx/1.17.0/",
                    "https://github.com/onnx/tensorflow-onnx/releases/tag/v1.17.0"),
    },
    {
        "id": "tensorflowjs-4.22-converter-ydf-0.16.0-protobuf-gencode",
        "mechanism": "pip install tensorflowjs on Python 3.11 today: tensorflowjs 4.22 requires "
                     "tensorflow-decision-forests, whose 1.12 pins tensorflow==2.19.0 (protobuf<6); ydf 0.16.1 "
                     "declares protobuf>=6.31.1, so pip picks ydf 0.16.0 (March 2026), which declares "
                     "protobuf>=5.29.1 but ships protobuf 6.31.1 gencode: `tensorflowjs_converter` (and "
                     "`import tensorflow_decision_forests`) raises VersionError (gencode 6.31.1 runtime 5.29.6) "
                     "while TensorFlow and tf.keras work",
        "expect": "fail-or-warn",
        "causes": (("ydf",),),
        "hints": ("ydf<0.16",),
        "python": "3.11",
        "requirements": ("tensorflowjs==4.22.0",),
        "use": "import subprocess, sys, tempfile, tensorflow as tf\n"
               "where = tempfile.mkdtemp()\n"
               "model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])\n"
               "model.save(where + '/m.h5')\n"
               "# the tensorflowjs_converter entry point, run by this Python (a copy's bin/ scripts keep the source's "
               "shebang)\n"
               "subprocess.run([sys.executable, '-c', 'from tensorflowjs.converters.converter import pip_main; "
               "pip_main()', '--input_format=keras', where + '/m.h5', where + '/js'], check=True)\n"
               "print('works')",
        "premise": "import importlib.metadata as m, google.protobuf as p\n"
                   "assert m.version('ydf') == '0.16.0', m.version('ydf')\n"
                   "assert p.__version__.split('.')[0] == '5', p.__version__\n"
                   "assert m.version('tensorflow') == '2.19.0'",
        # proven on 2026-11-29: ydf 0.15.0 (protobuf 5 gencode), protobuf 5.29.6 and TensorFlow 2.19.0 kept
        "repair": ('python -m pip install "ydf<0.16"',),
        "sources": ("https://pypi.org/project/ydf/0.16.0/", "https://pypi.org/project/ydf/0.16.1/",
                    "https://protobuf.dev/support/cross-version-runtime-guarantee/"),
    },
    {
        "id": "tensorflow-2.21-autokeras-3.0-keras-3.13-dense-units",
        "mechanism": "pip install tensorflow-cpu==2.21.0 autokeras on Python 3.11 today: pip picks Keras 3.15 (TensorFlow "
                     "2.21 asks keras>=3.12.0); Keras 3.13.0 (December 2025) made Dense reject a `units` that is not a "
                     "Python int, and autokeras 3.0.0 (its newest, November 2025) builds its heads with "
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
        "id": "tensorflow-2.19-jax-0.10-jax2tf-serialization-10",
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
        "id": "tensorflow-2.19-probability-0.25-jax-substrate-jax-0.7",
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
