"""Tests support: a TensorFlow 2.21 environment whose import fails, with the real error texts (reproduced on
tensorflow-cpu 2.21.0 with one dependency swapped; their signatures cite public reports of the same texts),
and real error texts from public reports with the signature each must match."""

from __future__ import annotations

import shlex

from tests.builders import ENV_SITE, tensorflow_environment
from tests.plan_support import as_result, plan_of

TF_KERAS_221 = "tf-keras==2.21.0"  # the tf-keras made for TensorFlow 2.21 (companion table)


def failed_import(type_: str, message: str, frames: list[str]) -> dict:
    traceback = ["Traceback (most recent call last):"]
    for path in frames:
        traceback += [f'  File "{path}", line 1, in <module>', "    import something"]
    traceback.append(f"{type_}: {message}")
    return {"status": "import_error", "imported": False, "stage": "import_failed", "exit_code": 3, "signal": None,
            "timed_out": False, "stderr_tail": "", "spec": {"origin": f"{ENV_SITE}/tensorflow/__init__.py"},
            "exception": {"type": type_, "message": message, "traceback": traceback, "causes": []}}


PROTOBUF_TOO_OLD = failed_import(
    "ImportError", f"cannot import name 'runtime_version' from 'google.protobuf' ({ENV_SITE}/google/protobuf/__init__.py)",
    [f"{ENV_SITE}/tensorflow/__init__.py", f"{ENV_SITE}/tensorflow/python/framework/ops.py",
     f"{ENV_SITE}/tensorflow/core/framework/attr_value_pb2.py"])


ML_DTYPES_TOO_OLD = failed_import(
    "AttributeError", "module 'ml_dtypes' has no attribute 'float4_e2m1fn'. Did you mean: 'float8_e4m3fn'?",
    [f"{ENV_SITE}/tensorflow/__init__.py", f"{ENV_SITE}/tensorflow/python/framework/dtypes.py"])


H5PY_FOR_NUMPY1 = failed_import(
    "ValueError", "numpy.dtype size changed, may indicate binary incompatibility. Expected 96 from C header, got 88 "
    "from PyObject", [f"{ENV_SITE}/tensorflow/__init__.py", f"{ENV_SITE}/tensorflow/python/keras/saving/hdf5_format.py",
                      f"{ENV_SITE}/h5py/__init__.py", "h5py/_errors.pyx"])


LIBRARY_MISSING = failed_import(
    "ImportError", "libtensorflow_framework.so.2: cannot open shared object file: No such file or directory",
    [f"{ENV_SITE}/tensorflow/__init__.py", f"{ENV_SITE}/tensorflow/python/pywrap_tensorflow.py",
     f"{ENV_SITE}/tensorflow/python/platform/self_check.py"])


UNKNOWN = failed_import("RuntimeError", "something nobody has seen", [f"{ENV_SITE}/tensorflow/__init__.py"])


def install_command(facts: dict, outcome, check_id: str = "tensorflow-import") -> list[str]:
    """The one plan step this check's repairs make (the check itself writes no command)."""
    assert outcome.remediation.commands == (), outcome.remediation.commands
    plan = plan_of(facts, [as_result(check_id, outcome)])
    assert len(plan.steps) == 1 and not plan.conflicts, plan
    return shlex.split(plan.steps[0].command)


# (text, where it was reported, the signature it must match first). Copied verbatim from those reports.
METAL_BLOG = ("https://github.com/ShapeLayer/blog.jonghyeon.me/blob/648c1a19a2fb7fd2c78e4350b37e1ecbfc7ca940/"
              "_posts/2025-09-11-tensorflow-metal-compatibilities.md")


REAL_TEXTS = [
    ("tensorflow.python.framework.errors_impl.NotFoundError: dlopen(/opt/miniconda3/envs/metal/lib/python3.10/"
     "site-packages/tensorflow-plugins/libmetal_plugin.dylib, 0x0006): Symbol not found: "
     "__ZN3tsl8internal10LogMessageC1EPKcii",
     METAL_BLOG, "metal-built-for-other-tensorflow"),
    ("tensorflow.python.framework.errors_impl.NotFoundError: dlopen(/opt/miniconda3/envs/metal/lib/python3.10/"
     "site-packages/tensorflow-plugins/libmetal_plugin.dylib, 0x0006): symbol not found in flat namespace "
     "'__ZN3tsl8internal10LogMessage16VmoduleActivatedEPKci'",
     METAL_BLOG, "metal-built-for-other-tensorflow"),
    ("tensorflow.python.framework.errors_impl.NotFoundError: dlopen(/Users/user/env/miniforge3/lib/python3.9/"
     "site-packages/tensorflow-plugins/libmetal_plugin.dylib, 0x0006): symbol not found in flat namespace "
     "'_TF_AllocateOutput'",
     "https://github.com/tensorflow/models/issues/10617", "metal-built-for-other-tensorflow"),
    ("tensorflow.python.framework.errors_impl.NotFoundError: dlopen(/Users/zhangjing/miniforge3/envs/tf3.7/lib/"
     "python3.8/site-packages/tensorflow-plugins/libmetal_plugin.dylib, 6): Symbol not found: "
     "_OBJC_CLASS_$_MPSGraphCompilationDescriptor",
     "https://github.com/tensorflow/tensorflow/issues/53309", "metal-needs-newer-macos"),
    ("Library not loaded: @rpath/_pywrap_tensorflow_internal.so",
     METAL_BLOG, "metal-with-tensorflow-2.20"),  # TF 2.20 + metal 1.2.0
    ("(mach-o file, but is an incompatible architecture (have (x86_64), need (arm64e)))",
     "https://github.com/tensorflow/tensorflow/issues/57483", "mixed-architectures"),
    ("ImportError: dlopen(/Users/fzzfbyx/pythonvirtual/tff/lib/python3.8/site-packages/tensorflow/python/"
     "_pywrap_tensorflow_internal.so, 6): no suitable image found.  Did find:\n\t/Users/fzzfbyx/pythonvirtual/tff/"
     "lib/python3.8/site-packages/tensorflow/python/_pywrap_tensorflow_internal.so: mach-o, but wrong architecture",
     "https://github.com/apple/tensorflow_macos/issues/28", "mixed-architectures"),
    ("The TensorFlow library was compiled to use AVX instructions, but these aren't available on your machine.",
     "https://github.com/tensorchord/envd/issues/881", "cpu-without-avx-message"),
    (">>> import tensorflow\nIllegal instruction: 4", "https://github.com/tensorflow/tensorflow/issues/25822",
     "illegal-instruction"),
    (">>> import tensorflow as tf\nzsh: illegal hardware instruction  python",
     "https://github.com/tensorflow/tensorflow/issues/45645", "illegal-instruction"),
    ("Illegal instruction (core dumped)\ntraps: python[434569] trap invalid opcode ip:7fb785029c48 sp:7ffd15a859a0 "
     "error:0 in libtensorflow_framework.so.2[7fb7842a2000+1c55000]",
     "https://github.com/tensorflow/tensorflow/issues/45744", "illegal-instruction"),
    ("A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.0 as it may crash. To support both 1.x "
     "and 2.x\nversions of NumPy, modules must be compiled with NumPy 2.0.",
     "https://github.com/CameronBodine/PINGMapper/issues/123", "numpy2-with-numpy1-build"),
    ("RuntimeError: module compiled against API version 0x10 but this version of numpy is 0xf\nImportError: "
     "numpy.core.multiarray failed to import", "https://github.com/mrdbourke/m1-machine-learning-test/issues/16",
     "numpy-older-than-build"),
    ('F tensorflow/c/experimental/stream_executor/stream_executor.cc:808] Non-OK-status: '
     'stream_executor::MultiPlatformManager::RegisterPlatform( std::move(cplatform)) status: INTERNAL: platform is '
     'already registered with name: "METAL"\nAbort trap: 6',
     "https://github.com/pleonard212/pix-plot/issues/268", "metal-plugin-loaded-twice"),
    ("TypeError: bases must be types", "https://github.com/tensorflow/tensorflow/issues/61182", "protobuf-mismatch"),
    ("tensorflow.python.framework.errors_impl.NotFoundError: C:\\Users\\user\\AppData\\Local\\Programs\\Python\\"
     "Python310\\lib\\site-packages\\tensorflow-plugins\\tfdml_plugin.dll not found",
     "https://github.com/microsoft/tensorflow-directml-plugin/issues/352", "directml-plugin-with-newer-tensorflow"),
    ("Could not load dynamic library 'libcusolver.so.11'; dlerror: libcusolver.so.11: cannot open shared object "
     "file: No such file or directory", "https://github.com/JdeRobot/BehaviorMetrics/issues/385",
     "cuda-libraries-missing"),
    ("Loaded runtime CuDNN library: 9.0.0 but source was compiled with: 9.3.0.  CuDNN library needs to have "
     "matching major version and equal or higher minor version.", "https://github.com/Kaggle/docker-python/issues/1435",
     "cudnn-older-than-build"),
    ("failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected",
     "https://github.com/manishsoni1908/Mobilenet-ssd-keras/issues/10", "cuda-no-device"),
    ("failed call to cuInit: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
     "https://github.com/google-research/omniglue/issues/14", "cuda-forward-compat-unsupported"),
    ("TensorFlow was not built with CUDA kernel binaries compatible with compute capability 9.0. CUDA kernels will "
     "be jit-compiled from PTX, which could take 30 minutes or longer.",
     "https://github.com/tensorflow/tensorflow/issues/62320", "ptx-jit-compilation"),
]


# Issue 29, an import error no rule explains: the text of ostris/ai-toolkit#262 and pytorch/pytorch#133883 (2024-25,
# fixed by upgrading typing_extensions) in a report of names and versions only, frames in Python's own format.
SITE = "/home/u/.venv/lib/python3.11/site-packages"
TYPE_IS = {"type": "ImportError",
           "message": f"cannot import name 'TypeIs' from 'typing_extensions' ({SITE}/typing_extensions.py)",
           "traceback": ["Traceback (most recent call last):",
                         f'  File "{SITE}/tensorflow/__init__.py", line 49, in <module>',
                         f'  File "{SITE}/keras/__init__.py", line 2, in <module>',
                         f'  File "{SITE}/optree/ops.py", line 30, in <module>']}


def partial_report(*more: dict) -> dict:
    """A thread's report: names and versions only (no RECORD, no location, no Requires-Dist)."""
    return {"host": {"system": "Linux", "machine": "x86_64"}, "python": {"version": "3.11"},
            "distributions": [{"name": "tensorflow", "version": "2.18.0"}, {"name": "keras", "version": "3.8.0"},
                              {"name": "optree", "version": "0.14.0"},
                              {"name": "typing_extensions", "version": "4.5.0"}, *more]}


# ------------------------------------------------------- a pin violated in tf.keras's closure (issue 29)

KERAS_REQUIRES = ["numpy", "h5py", "optree", "ml-dtypes"]  # keras 3.15.1's, those installed here
OPTREE_REQUIRES = ['typing-extensions>=4.10.0', 'typing-extensions>=4.12.0; python_version >= "3.13"',
                   'jax; extra == "jax"', 'typing-extensions==4.10.0; (python_version < "3.13" and '
                   'platform_system == "Linux") and extra == "test"']
# The real chained error (tf.keras in the TensorFlow child), trimmed: keras's frames, then TensorFlow's lazy loader.
KERAS_ERROR = {
    "type": "ImportError", "message": "Keras cannot be imported. Check that it is installed.",
    "causes": [{"type": "ImportError", "message": "To use Keras, you need to have `optree` installed. "
                                                  "Install it via `pip install optree`"}],
    "frames": [{"file": f"{ENV_SITE}/tensorflow/python/util/lazy_loader.py", "line": 161, "chain": 0},
               {"file": f"{ENV_SITE}/keras/src/tree/tree_api.py", "line": 17, "chain": 1},
               {"file": f"{ENV_SITE}/keras/src/utils/dataset_utils.py", "line": 10, "chain": 1}],
}


def closure_environment(typing_extensions: str = "4.5.0", python: str = "3.11.7", keras_error=KERAS_ERROR, **more):
    """The live closure case (tests/live/test_live_closure.py): tensorflow-cpu 2.21.0 with typing-extensions 4.5.0,
    inside TensorFlow's pin, outside optree 0.20.0's, which keras imports: tf.keras fails (`keras_error`, None: it
    works; False: not recorded, an older report)."""
    extra = [
        {"name": "optree", "version": "0.20.0", "location": ENV_SITE, "top_level": ["optree"],
         "requires": OPTREE_REQUIRES, "has_record": True},
        {"name": "typing-extensions", "version": typing_extensions, "location": ENV_SITE,
         "top_level": ["typing_extensions"], "requires": [], "has_record": more.pop("te_record", True)},
        {"name": "jax", "version": "0.1.0", "location": ENV_SITE, "top_level": ["jax"], "requires": ["numpy>=9"]},
    ]
    tensorflow = {"status": "ok", "imported": True, "version": "2.21.0", "stage": "done"}
    if keras_error is not False:
        tensorflow["keras"] = {"layer_ok": False, "error": keras_error} if keras_error else {"layer_ok": True}
    facts = tensorflow_environment({"keras": "3.15.1"}, extra=extra, python=python, tensorflow=tensorflow, **more)
    for entry in facts["distributions"]:
        if entry["name"] == "keras":
            entry["requires"] = KERAS_REQUIRES
    return facts
