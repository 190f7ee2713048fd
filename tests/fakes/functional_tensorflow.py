# A fake `tensorflow` package for tests (copied as tensorflow/__init__.py into a temporary directory on
# PYTHONPATH). It implements, on NumPy, just what tfdoctor's child uses: device listing, device scopes,
# identity, matmul, slicing, build info. FAKE_TF_MODE chooses how its "GPU" behaves:
#   cpu             no GPU at all
#   gpu             a GPU whose results are right
#   gpu-fallback    the GPU's products come back placed on the CPU (silent fallback)
#   gpu-nan         the GPU's products are NaN
#   gpu-no-kernel   matmul on the GPU raises "Could not satisfy device specification" (soft placement off)
#   gpu-crash       the GPU's matmul segfaults the process
#   gpu-hang        the GPU's matmul never returns
#   devices-crash   listing the devices segfaults the process
# FAKE_TF_CPU_GFLOPS / FAKE_TF_GPU_GFLOPS make a device's matmul take as long as it would at that speed
# (a sleep), whatever NumPy's speed: then the speed-up is what the test chose. In that mode A @ A is
# computed once per input and remembered, and other products (the GPU's timing chains, whose values are never
# checked) are not computed at all.
# FAKE_TF_STDERR is printed to stderr at import (log lines TensorFlow would print).
import os
import sys
import time

import numpy as np

__version__ = "2.99.0"
MODE = os.environ.get("FAKE_TF_MODE", "cpu")
RATES = {"CPU": float(os.environ.get("FAKE_TF_CPU_GFLOPS", "0")), "GPU": float(os.environ.get("FAKE_TF_GPU_GFLOPS", "0"))}
_products = {}
if os.environ.get("FAKE_TF_STDERR"):
    sys.stderr.write(os.environ["FAKE_TF_STDERR"] + "\n")
    sys.stderr.flush()

_scope = ["/job:localhost/replica:0/task:0/device:CPU:0"]
_soft = [True]


def _segfault():
    import ctypes

    ctypes.string_at(0)


class InvalidArgumentError(Exception):
    pass


class PhysicalDevice(object):
    def __init__(self, name, device_type):
        self.name, self.device_type = name, device_type


class Tensor(object):
    def __init__(self, value, device):
        self.value = np.asarray(value)
        self.device = device

    def numpy(self):
        return self.value

    @property
    def shape(self):
        return self.value.shape

    def __getitem__(self, key):
        return Tensor(self.value[key], self.device)

    def __mul__(self, other):
        return Tensor(self.value * other, self.device)

    __rmul__ = __mul__

    def __float__(self):
        return float(self.value)


def _full(name):
    kind, _, index = name.strip("/").upper().rpartition(":")
    return "/job:localhost/replica:0/task:0/device:%s:%s" % (kind.split(":")[-1], index)


class device(object):
    def __init__(self, name):
        self.name = _full(name)

    def __enter__(self):
        _scope.append(self.name)

    def __exit__(self, *exc):
        _scope.pop()


def identity(value):
    return Tensor(np.array(value.value if isinstance(value, Tensor) else value), _scope[-1])


def _matmul(a, b):
    where = _scope[-1]
    on_gpu = "GPU" in where
    if on_gpu and MODE == "gpu-no-kernel" and not _soft[0]:
        raise InvalidArgumentError("Could not satisfy device specification of node MatMul: "
                                   "enable_soft_placement=0. Supported device types [CPU]")
    if on_gpu and MODE == "gpu-crash":
        _segfault()
    if on_gpu and MODE == "gpu-hang":
        time.sleep(3600)
    rate = RATES["GPU" if on_gpu else "CPU"]
    if rate:
        n = a.value.shape[0]
        time.sleep(2.0 * n ** 3 / (rate * 1e9))
        if a is b:
            # one remembered product per input: the probe interleaves GPU and CPU blocks, and a single
            # slot made every CPU block recompute A @ A with NumPy inside its timed call (a busy machine
            # then pulled the chosen speed-up toward 1)
            key = (id(a.value), a.value.shape)
            if key not in _products:
                if len(_products) >= 4:
                    _products.clear()
                _products[key] = (a.value, np.dot(a.value, a.value))
            product = _products[key][1]
        else:
            product = b.value
    else:
        product = np.dot(a.value, b.value)
    if on_gpu and MODE == "gpu-nan":
        product = np.full_like(product, np.nan)
    if on_gpu and MODE == "gpu-fallback":
        where = "/job:localhost/replica:0/task:0/device:CPU:0"
    return Tensor(product, where)


class linalg(object):
    matmul = staticmethod(_matmul)


class _Experimental(object):
    @staticmethod
    def get_device_details(device_):
        return {"device_name": "Fake GPU 9000"}

    @staticmethod
    def tensor_float_32_execution_enabled():
        return True


class config(object):
    experimental = _Experimental

    @staticmethod
    def list_physical_devices(device_type=None):
        if MODE == "devices-crash":
            _segfault()
        found = [PhysicalDevice("/physical_device:CPU:0", "CPU")]
        if MODE != "cpu":
            found.append(PhysicalDevice("/physical_device:GPU:0", "GPU"))
        return [d for d in found if device_type in (None, d.device_type)]

    @staticmethod
    def set_soft_device_placement(enabled):
        _soft[0] = bool(enabled)

    @staticmethod
    def get_soft_device_placement():
        return _soft[0]


class sysconfig(object):
    @staticmethod
    def get_build_info():
        return {"is_cuda_build": MODE != "cpu", "is_rocm_build": False, "is_tensorrt_build": False}


# tf.keras: by default a NumPy Dense layer defined here (the child sees it as TensorFlow's built-in Keras).
# With FAKE_TF_KERAS=package, tf.keras resolves the way TensorFlow 2.16+ does: the tf_keras package when
# TF_USE_LEGACY_KERAS is true, else the keras package (fake ones written by tests/fakes.install_keras).
def ones(shape):
    return Tensor(np.ones(shape, dtype=np.float32), _scope[-1])


class _Dense(object):
    def __init__(self, units):
        self.units = units

    def __call__(self, x):
        value = np.asarray(x.value if isinstance(x, Tensor) else x, dtype=np.float32)
        return Tensor(value.dot(np.ones((value.shape[-1], self.units), dtype=np.float32)), _scope[-1])


class _BuiltinKeras(object):
    __version__ = "2.99.0"

    class layers(object):
        Dense = _Dense


class _KerasLoader(object):
    def __getattr__(self, name):
        if os.environ.get("FAKE_TF_KERAS") != "package":
            return getattr(_BuiltinKeras, name)
        import importlib

        legacy = os.environ.get("TF_USE_LEGACY_KERAS") in ("true", "True", "1")
        try:  # tensorflow/python/util/lazy_loader.py KerasLazyLoader._initialize
            module = importlib.import_module("tf_keras" if legacy else "keras")
        except ImportError:
            raise ImportError("Keras cannot be imported. Check that it is installed.")
        return getattr(module, name)


keras = _KerasLoader()
