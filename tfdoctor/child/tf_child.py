''''exit 64 # '''
# ^ A no-op string in Python; a POSIX shell runs `exit 64` (`--python /bin/sh` runs no shell commands).
#
# The TensorFlow child: imports TensorFlow in the target interpreter, lists its devices and times a
# float32 matmul on each. Standard library only at the top (numpy and tensorflow are imported inside),
# syntax for Python 3.6+. Run as `python -c <this source> <json config>`; the result goes to the file
# the config names (TensorFlow prints as it likes), rewritten after every stage: after a signal or a
# hang it still says how far the import got.
import json
import os
import sys
import time

TRACEBACK_LINES = 40
MESSAGE_LIMIT = 8000


def now():
    return time.perf_counter()


class Recorder(object):
    """The result document, flushed to disk (atomically) at every stage."""

    def __init__(self, path):
        self.path = path
        self.started = now()
        self.data = {"stage": None, "stages": [], "pid": os.getpid(), "errors": {}}

    def elapsed(self):
        return round(now() - self.started, 4)

    def stage(self, name):
        self.data["stage"] = name
        self.data["stages"].append([name, self.elapsed()])
        self.flush()

    def error(self, where, exc):
        self.data["errors"][where] = describe_exception(exc, with_traceback=False)
        self.flush()

    def flush(self):
        temporary = self.path + ".tmp"
        with open(temporary, "w") as handle:
            json.dump(self.data, handle, allow_nan=False, default=str)
        os.replace(temporary, self.path)


def type_name(exc):
    """As a traceback prints it: 'ImportError', 'tensorflow.python.framework.errors_impl.NotFoundError'."""
    cls = type(exc)
    module = getattr(cls, "__module__", "builtins")
    name = getattr(cls, "__qualname__", cls.__name__)
    return name if module in ("builtins", "exceptions", "__main__") else module + "." + name


def describe_exception(exc, with_traceback=True):
    described = {"type": type_name(exc), "message": str(exc)[:MESSAGE_LIMIT]}
    if with_traceback:
        import traceback

        lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
        text = "".join(lines).splitlines()
        described["traceback"] = text[-TRACEBACK_LINES:]
        causes = []
        seen = set()
        inner = exc.__cause__ or exc.__context__
        while inner is not None and id(inner) not in seen and len(causes) < 5:
            seen.add(id(inner))
            causes.append({"type": type_name(inner), "message": str(inner)[:MESSAGE_LIMIT]})
            inner = inner.__cause__ or inner.__context__
        described["causes"] = causes
        described["frames"] = failing_frames(exc)
    return described


FRAMES_PER_EXCEPTION = 8


def failing_frames(exc):
    """Innermost frames of the exception and of each one it was raised over, for the checks to map to
    their owning distributions: [{"file", "line", "chain"}], chain 0 the outer one."""
    frames, seen, chain = [], set(), 0
    while exc is not None and id(exc) not in seen and chain < 6:
        seen.add(id(exc))
        tb, stack = exc.__traceback__, []
        while tb is not None:
            stack.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
            tb = tb.tb_next
        for filename, line in reversed(stack[-FRAMES_PER_EXCEPTION:]):
            frames.append({"file": filename, "line": line, "chain": chain})
        exc = exc.__cause__ or exc.__context__
        chain += 1
    return frames


def finite_or_none(value, digits=6):
    """JSON has no NaN: non-finite numbers become None (finiteness is recorded separately)."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return None
    return float("%.*g" % (digits, value))


def jsonable(value, depth=0):
    if depth > 4:
        return str(value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return finite_or_none(value, 12)
    if isinstance(value, dict):
        return dict((str(k), jsonable(v, depth + 1)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [jsonable(v, depth + 1) for v in value]
    return str(value)


def find_tensorflow():
    """Where `import tensorflow` would look, without importing it (cheap 'not installed' answer)."""
    import importlib.util

    spec = importlib.util.find_spec("tensorflow")
    if spec is None:
        return None
    origin = spec.origin
    return {
        "origin": origin,
        "namespace": origin in (None, "namespace"),  # a directory without __init__.py: a partial install
        "locations": list(spec.submodule_search_locations or []),
    }


def plugin_candidates():
    """The libraries TensorFlow's __init__ loads: every tensorflow-plugins/ directory on sys.path."""
    found = []
    for entry in sys.path:
        directory = os.path.join(entry or ".", "tensorflow-plugins")
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            if name.endswith((".so", ".dylib", ".dll")):
                path = os.path.realpath(os.path.join(directory, name))
                if path not in found:
                    found.append(path)
    return found


def loaded_images():
    """Paths of the shared libraries mapped into this process (Linux: /proc/self/maps; macOS: dyld)."""
    if sys.platform.startswith("linux"):
        paths = set()
        try:
            with open("/proc/self/maps") as handle:
                for line in handle:
                    parts = line.split(None, 5)
                    if len(parts) == 6 and parts[5].startswith("/"):
                        paths.add(os.path.realpath(parts[5].strip()))
        except OSError:
            return None
        return paths
    if sys.platform == "darwin":
        try:
            import ctypes

            dyld = ctypes.CDLL(None)
            dyld._dyld_image_count.restype = ctypes.c_uint32
            dyld._dyld_get_image_name.restype = ctypes.c_char_p
            dyld._dyld_get_image_name.argtypes = [ctypes.c_uint32]
            names = (dyld._dyld_get_image_name(i) for i in range(dyld._dyld_image_count()))
            return set(os.path.realpath(n.decode("utf-8", "replace")) for n in names if n)
        except Exception:
            return None
    return None


def describe_plugins():
    loaded = loaded_images()
    return [{"path": path, "loaded": (path in loaded) if loaded is not None else None}
            for path in plugin_candidates()]


def cpu_facts():
    """The CPU the probe ran on, for its peak estimate (Linux: clock, ISA flags, cores usable here;
    Macs and Windows name their CPUs in the doctor's own facts)."""
    found = {"usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()}
    try:
        with open("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") as handle:
            found.update(mhz=int(handle.read().strip()) / 1000.0, clock_source="cpufreq cpuinfo_max_freq")
    except (OSError, ValueError):
        pass
    cores = set()
    try:
        with open("/proc/cpuinfo") as handle:
            physical = None
            for line in handle:
                key, _, value = line.partition(":")
                key, value = key.strip().lower(), value.strip()
                if key == "cpu mhz" and "mhz" not in found:
                    found.update(mhz=float(value), clock_source="/proc/cpuinfo cpu MHz")
                elif key == "flags" and "flags" not in found:
                    found["flags"] = sorted(set(value.split()))
                elif key == "physical id":
                    physical = value
                elif key == "core id":
                    cores.add((physical, value))
    except (OSError, ValueError):
        pass
    if cores:
        found["physical_cores"] = len(cores)
    return found


# The probe: float32 matmul on each device, inputs resident on the device, warm-up at the timed size,
# blocks ending in a scalar read-back (GPU work is asynchronous), GPU and CPU blocks interleaved so
# both see the same clocks, and every result checked against a float64 NumPy reference.

SEED = 20240611
CPU_SIZES = (128, 2048)  # smallest, largest N for the CPU side
GPU_SIZES = (1024, 4096)  # below 1024 a GPU measures dispatch overhead, not compute
# Throughput grows with N, so 8x per doubling overshoots: TF-CPU 1024 -> 2048 on a 2-core VM x0.57;
# TF-metal on an M1 Max x0.84 (https://github.com/tlkh/tf-metal-experiments).
LARGER_IS_FASTER = 0.6
GPU_BLOCK_S = 0.02  # a GPU block lasts at least this long, so timer and sync noise vanish
MAX_BLOCKS = 5
MIN_BLOCKS = 3
REFERENCE_BLOCK = 64  # C[:64, :64] is checked against float64 (64 x 64 x N multiply-adds)


def round_size(n, low, high):
    n = int(n) // 64 * 64
    return max(low, min(high, n))


def size_for(gflops, seconds, low, high):
    """The largest N whose matmul takes about `seconds` at `gflops` (2 N^3 flops)."""
    if not gflops or gflops <= 0:
        return low
    return round_size((gflops * 1e9 * seconds / 2.0) ** (1.0 / 3.0), low, high)


def gflops_of(n, seconds):
    return 2.0 * n ** 3 / seconds / 1e9 if seconds > 0 else None


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2.0


def host_uniform(np, n):
    """An n x n float32 matrix of U(-1, 1) numbers, fixed seed."""
    try:
        matrix = np.random.default_rng(SEED).random((n, n), dtype=np.float32)
    except AttributeError:  # NumPy < 1.17
        matrix = np.random.RandomState(SEED).random_sample((n, n)).astype(np.float32)
    matrix *= np.float32(2.0)
    matrix -= np.float32(1.0)
    return matrix


class Side(object):
    """One device's half of the probe. It times C = A @ A (one matrix halves the set-up) and, on a GPU,
    chains x <- A @ x; A = U(-1, 1) * sqrt(3/N) has variance 1/N, so chained products stay O(1)."""

    def __init__(self, tf, np, kind, device, budget, sizes):
        self.tf, self.np, self.kind, self.device, self.budget = tf, np, kind, device, budget
        self.sizes = sizes
        self.info = {"device": device, "kind": kind, "n": None, "calls_per_block": 1, "block_s": [],
                     "init_call_s": None, "first_call_s": None}
        self.base = self.base_tensor = self.a = self.output = None
        self.spent = 0.0

    def inputs(self, n):
        """A at size n on the device: one random matrix at the largest size, copied once, sliced there
        (host work right after TensorFlow calls is slowed by its spinning threads)."""
        tf, np = self.tf, self.np
        if self.base is None:
            self.base = host_uniform(np, self.sizes[1])
            with tf.device(self.device):
                self.base_tensor = tf.identity(self.base)
        self.scale = np.float32((3.0 / n) ** 0.5)
        with tf.device(self.device):
            self.a = self.base_tensor[:n, :n] * self.scale
        self.info["n"] = n
        self.info["input_device"] = str(self.a.device)

    def call(self):
        """One product A @ A, synchronised by reading back one scalar; returns (seconds, output)."""
        tf = self.tf
        started = now()
        with tf.device(self.device):
            c = tf.linalg.matmul(self.a, self.a)
            float(c[0, 0].numpy())
        return now() - started, c

    def block(self, k):
        """k chained products x <- A @ x, one read-back at the end; per-call seconds."""
        tf = self.tf
        started = now()
        with tf.device(self.device):
            x = self.a
            for _ in range(k):
                x = tf.linalg.matmul(self.a, x)
            float(x[0, 0].numpy())
        return (now() - started) / k

    def measure(self, n):
        """Two calls at size n: the first sets up the shape (timed as first_call_s), the second estimates
        the per-call time; its output is kept for the numbers check. Returns the second call's seconds."""
        self.inputs(n)
        first = self.call()[0]
        if self.info["init_call_s"] is None:
            self.info["init_call_s"] = finite_or_none(first)  # device and library start-up included
        seconds, self.output = self.call()
        self.info["first_call_s"] = finite_or_none(first)
        self.info["ladder"].append([n, finite_or_none(first), finite_or_none(seconds)])
        return seconds

    def calibrate(self, target_call_s):
        """Warm the device and pick N so one call takes about target_call_s: climb doubling sizes while
        the next is predicted to fit (each rung warms and re-estimates); step down once if far too slow."""
        low, high = self.sizes
        n = max(low, min(high, 512 if self.kind == "CPU" else 2048))
        self.info["ladder"] = []
        seconds = self.measure(n)
        while n < high:
            bigger = min(high, 2 * n)
            predicted = seconds * (float(bigger) / n) ** 3 * LARGER_IS_FASTER
            overhead_bound = self.kind == "GPU" and seconds < 0.002  # a GPU call under 2 ms is mostly overhead
            if predicted > target_call_s * 1.25 and not overhead_bound:
                break
            n = bigger
            seconds = self.measure(n)
        if seconds > target_call_s * 1.5 and n > low:
            n = size_for(gflops_of(n, seconds), target_call_s, low, max(low, n - 64))
            seconds = self.measure(n)
        if self.kind == "GPU":
            self.info["calls_per_block"] = max(1, min(64, int(GPU_BLOCK_S / max(seconds, 1e-5)) + 1))

    def check(self):
        """Placement and numbers of the first product at N: all finite, top-left block against float64.
        After the timing: NumPy's spinning BLAS threads slowed TensorFlow's next call 1.5-2x on 2 cores."""
        np = self.np
        output, self.output = self.output, None
        self.info["output_device"] = str(output.device)
        self.info["placement_ok"] = str(output.device).upper().endswith(self.kind + ":0")
        values = output.numpy()
        finite = bool(np.isfinite(values).all())
        n = self.info["n"]
        k = min(REFERENCE_BLOCK, n)
        a = self.base[:n, :n]
        left = (a[:k] * self.scale).astype(np.float64)  # the float32 A the device multiplied
        right = (a[:, :k] * self.scale).astype(np.float64)
        reference = left.dot(right)
        got = values[:k, :k].astype(np.float64)
        with np.errstate(all="ignore"):
            difference = got - reference
            rel = np.linalg.norm(difference) / np.linalg.norm(reference)
            max_abs = np.max(np.abs(difference)) / np.mean(np.abs(reference))
        self.info.update(finite=finite, rel_error=finite_or_none(rel, 4),
                         max_abs_rel_error=finite_or_none(max_abs, 4), reference_block=k)

    def run_block(self):
        k = self.info["calls_per_block"]
        started = now()
        self.info["block_s"].append(finite_or_none(self.block(k) if self.kind == "GPU" else self.call()[0]))
        self.spent += now() - started

    def summarise(self):
        times = [t for t in self.info["block_s"] if t]
        n = self.info["n"]
        self.info["blocks"] = len(times)
        if times:
            middle, best, worst = median(times), min(times), max(times)
            self.info.update(call_s_median=finite_or_none(middle), call_s_min=finite_or_none(best),
                             call_s_max=finite_or_none(worst),
                             gflops_median=finite_or_none(gflops_of(n, middle), 4),
                             gflops_best=finite_or_none(gflops_of(n, best), 4),
                             spread=finite_or_none((worst - best) / middle, 3))
        return self.info


def run_probe(tf, recorder, config, gpus):
    import numpy as np

    # no GPU to compare: a short run (cpu_only_budget_s), the CPU's correctness and GFLOPS
    budget = float(config["budget_s"] if gpus else config.get("cpu_only_budget_s") or config["budget_s"])
    probe = recorder.data["probe"] = {"status": "running", "dtype": "float32", "budget_s": budget,
                                      "cpu": cpu_facts(), "sides": {}}
    started = now()
    hard_stop = config["deadline"] - 1.0  # leave time to write the result before the parent's timeout
    try:
        tf.config.set_soft_device_placement(False)  # a missing GPU kernel must raise, not fall back
        probe["soft_placement_off"] = True
    except Exception as exc:
        recorder.error("probe:soft_placement", exc)
        probe["soft_placement_off"] = False
    sides = []
    if gpus:
        sides.append(Side(tf, np, "GPU", "/GPU:0", budget / 2, GPU_SIZES))
    sides.append(Side(tf, np, "CPU", "/CPU:0", budget / (2 if gpus else 1), CPU_SIZES))
    for side in list(sides):
        recorder.stage("probe:" + side.kind + ":warmup")
        probe["sides"][side.kind.lower()] = side.info
        try:
            # the ladder (two calls per rung) and five blocks fit in the side's budget
            side.calibrate(side.budget / (MAX_BLOCKS + 3.0))
        except Exception as exc:
            side.info["error"] = describe_exception(exc, with_traceback=False)
            sides.remove(side)
        recorder.flush()
    recorder.stage("probe:timing")
    for round_number in range(MAX_BLOCKS):
        used = now() - started
        if round_number >= MIN_BLOCKS and used > budget:
            break
        for side in sides:
            if now() > hard_stop:
                break
            try:
                side.run_block()
            except Exception as exc:
                side.info["error"] = describe_exception(exc, with_traceback=False)
                sides.remove(side)
                break
    recorder.stage("probe:check")
    for side in sides:
        side.summarise()
        try:
            side.check()
        except Exception as exc:
            side.info["error"] = describe_exception(exc, with_traceback=False)
    gpu, cpu = probe["sides"].get("gpu"), probe["sides"].get("cpu")
    # Throughput from each side's best block: on a shared machine noise only ever adds time, so the
    # fastest block is what the device can do (median and spread stay recorded beside it).
    if gpu and cpu and gpu.get("gflops_best") and cpu.get("gflops_best"):
        probe["speedup"] = finite_or_none(gpu["gflops_best"] / cpu["gflops_best"], 4)
    probe["duration_s"] = finite_or_none(now() - started, 4)
    probe["status"] = "ok" if all(s.get("blocks", 0) >= MIN_BLOCKS and "error" not in s
                                  for s in probe["sides"].values()) else "incomplete"


def tf_facts(tf, recorder):
    data = recorder.data
    try:
        data["build_info"] = jsonable(dict(tf.sysconfig.get_build_info()))
    except Exception as exc:
        recorder.error("build_info", exc)
    try:
        data["plugins"] = describe_plugins()
    except Exception as exc:
        recorder.error("plugins", exc)
    recorder.stage("devices")  # loading a plugin's device happens here: a crash now is the GPU's
    devices = tf.config.list_physical_devices()
    data["devices"] = [{"name": d.name, "device_type": d.device_type} for d in devices]
    gpus = [d for d in devices if d.device_type == "GPU"]
    details = []
    for gpu in gpus:
        try:
            details.append(jsonable(tf.config.experimental.get_device_details(gpu)))
        except Exception as exc:
            details.append({"error": describe_exception(exc, with_traceback=False)})
    data["gpu_details"] = details
    try:
        data["tf32_enabled"] = bool(tf.config.experimental.tensor_float_32_execution_enabled())
    except Exception as exc:
        recorder.error("tf32", exc)
    try:
        data["soft_placement_default"] = bool(tf.config.get_soft_device_placement())
    except Exception as exc:
        recorder.error("soft_placement", exc)
    recorder.stage("listed")
    return gpus


# tensorflow/__init__.py of TF 2.16+ routes tf.keras to tf_keras when TF_USE_LEGACY_KERAS is one of these.
LEGACY_KERAS_VALUES = ("true", "True", "1")
# Which Keras tf.keras reached, from the top-level package of its Dense class.
KERAS_FLAVORS = {"keras": None, "tf_keras": "tf-keras", "tensorflow": "builtin"}


def keras_facts(tf, recorder):
    """tf.keras as user code reaches it (Keras 3, tf_keras under TF_USE_LEGACY_KERAS, or TF <= 2.15's
    Keras 2), then one Dense(2) built and called: which Keras, its version, the error of a step."""
    found = {"legacy_env": os.environ.get("TF_USE_LEGACY_KERAS"),
             "legacy_requested": os.environ.get("TF_USE_LEGACY_KERAS") in LEGACY_KERAS_VALUES,
             "flavor": None, "module": None, "version": None, "layer_ok": False, "step": "resolve",
             "error": None}
    recorder.data["keras"] = found
    started = now()
    try:
        dense = tf.keras.layers.Dense
        found["module"] = module = str(getattr(dense, "__module__", "") or "")
        package = module.split(".", 1)[0]
        found["flavor"] = KERAS_FLAVORS.get(package, package)
        top = sys.modules.get(package)
        version = getattr(top, "__version__", None) if package != "tensorflow" else None
        found["version"] = str(version or getattr(tf.keras, "__version__", "") or "") or None
        if found["flavor"] is None:
            found["flavor"] = "keras3" if (found["version"] or "").startswith("3.") else "keras2"
        found["step"] = "layer"
        recorder.flush()
        layer = dense(2)
        output = layer(tf.ones((1, 3)))
        found["layer_ok"] = tuple(int(d) for d in output.shape) == (1, 2)
        found["step"] = "done"
    except BaseException as exc:  # SystemExit too, as for the import
        found["error"] = describe_exception(exc)
    found["seconds"] = round(now() - started, 4)
    recorder.flush()


# Companions (issue 19): imported after TensorFlow and tf.keras as user code imports them, each only when
# installed, guarded and timed; its exception, its warnings and the log records it emitted are kept.
COMPANION_RESERVE_S = 2.0  # of the --timeout, left for writing the result
COMPANION_LOG_LIMIT = 10
QUIET_WARNINGS = (DeprecationWarning, PendingDeprecationWarning)


def keras_layer_fact(module, name):
    """A companion's Keras layer class against the tf.keras in use: the same base class or another's."""
    found = {"name": name, "tf_keras_layer": None, "base_module": None}
    try:
        cls = getattr(module, name)
        bases = [b for b in cls.__mro__ if b.__name__ == "Layer"]
        found["base_module"] = bases[0].__module__ if bases else None
        found["tf_keras_layer"] = issubclass(cls, sys.modules["tensorflow"].keras.layers.Layer)
    except Exception as exc:
        found["error"] = describe_exception(exc, with_traceback=False)
    return found


def companion_imports(recorder, config):
    import importlib
    import importlib.util
    import logging
    import warnings

    class Records(logging.Handler):
        def __init__(self):
            logging.Handler.__init__(self, logging.WARNING)
            self.lines = []

        def emit(self, record):
            if len(self.lines) < COMPANION_LOG_LIMIT:
                self.lines.append(("%s:%s:%s" % (record.levelname, record.name, record.getMessage()))[:MESSAGE_LIMIT])

    found = recorder.data["companions"] = []
    for name in config["companions"]:
        try:
            if importlib.util.find_spec(name) is None:
                continue
        except Exception:  # a broken parent package: the import below tells
            pass
        entry = {"module": name, "status": "skipped", "version": None, "origin": None, "exception": None,
                 "warnings": [], "log": [], "seconds": None}
        found.append(entry)
        left = config["deadline"] - now()
        if left < COMPANION_RESERVE_S:
            entry["reason"] = "only %.1f s of the --timeout left" % left
            continue
        recorder.stage("companion:" + name)  # a crash or hang from here on is this import's
        records, root, started = Records(), logging.getLogger(), now()
        root.addHandler(records)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    module = importlib.import_module(name)
                    entry.update(status="ok", origin=getattr(module, "__file__", None),
                                 version=str(getattr(module, "__version__", "") or "") or None)
                    layers = (config.get("keras_layers") or {}).get(name)
                    if layers:
                        entry["keras_layers"] = [keras_layer_fact(module, layer) for layer in layers]
                except BaseException as exc:  # SystemExit too, as for TensorFlow's import
                    entry.update(status="failed", exception=describe_exception(exc))
        finally:
            root.removeHandler(records)
        entry["seconds"] = round(now() - started, 4)
        for w in caught:
            said = {"category": type_name(w.message), "message": str(w.message)[:MESSAGE_LIMIT]}
            if not issubclass(w.category, QUIET_WARNINGS) and said not in entry["warnings"]:
                entry["warnings"].append(said)
        del entry["warnings"][COMPANION_LOG_LIMIT:]
        entry["log"] = records.lines
        recorder.flush()


def script_function(path, name):  # a file: AutoGraph reads the source
    namespace = {"__name__": "tfdoctor_script", "__file__": path}
    with open(path) as handle:
        exec(compile(handle.read(), path, "exec"), namespace)
    return namespace[name]


def main(argv):
    config = json.loads(argv[1])
    recorder = Recorder(config["out"])
    data = recorder.data
    data["python"] = {"executable": sys.executable, "version": sys.version.split()[0]}
    started = now()
    config["deadline"] = now() + float(config.get("timeout_s") or 60.0)
    try:
        import faulthandler

        faulthandler.enable()  # a fatal signal prints the Python stack: where in the import it died
        timeout = float(config.get("timeout_s") or 0)
        if timeout >= 1:  # print the stack shortly before the parent's kill: where it hangs
            faulthandler.dump_traceback_later(timeout - min(1.5, timeout / 2.0), exit=False)
    except Exception:
        pass
    recorder.stage("started")

    try:
        spec = find_tensorflow()
    except Exception as exc:  # a broken parent package or path hook: let the import itself tell
        recorder.error("find_spec", exc)
        spec = {"origin": None, "namespace": False, "locations": [], "error": True}
    data["spec"] = spec
    if spec is None:
        recorder.stage("not_installed")
        return 0
    recorder.stage("importing")
    try:
        import tensorflow as tf

        data["version"] = str(tf.__version__)  # a namespace package (partial install) fails here
    except BaseException as exc:  # SystemExit too: a broken package may call sys.exit
        data["import_s"] = round(now() - started, 4)
        data["exception"] = describe_exception(exc)
        recorder.stage("import_failed")
        return 3
    data["import_s"] = round(now() - started, 4)
    recorder.stage("imported")
    try:
        gpus = tf_facts(tf, recorder)
    except Exception as exc:  # listing devices raised: recorded; there is nothing to probe
        recorder.error(data["stage"], exc)
        gpus = None
    left = config["deadline"] - now()
    if not config.get("probe"):
        data["probe"] = {"status": "skipped", "reason": "--no-probe"}
    elif gpus is not None and left < 3 * float(config["budget_s"]) + 1.0:
        # what the import left of --timeout is too little: a probe killed half-way would read as a fault
        data["probe"] = {"status": "skipped", "reason": "only %.1f s of the --timeout left after the import" % left}
    elif gpus is not None:
        recorder.stage("probe")
        try:
            run_probe(tf, recorder, config, gpus)
        except Exception as exc:
            data["probe"] = dict(data.get("probe") or {}, status="error",
                                 error=describe_exception(exc, with_traceback=False))
    recorder.stage("keras")
    try:
        if "soft_placement_default" in data:  # the probe turned soft placement off: users get the default
            tf.config.set_soft_device_placement(data["soft_placement_default"])
    except Exception as exc:
        recorder.error("keras:soft_placement", exc)
    keras_facts(tf, recorder)
    if config.get("workload") and gpus is not None:  # --deep: the workload probe (child/workload.py)
        recorder.stage("workload")
        try:
            run = script_function(config["workload"]["script"], "run_workload")
            run(tf, recorder, dict(config["workload"], deadline=config["deadline"]), gpus)
        except Exception as exc:
            data["workload"] = dict(data.get("workload") or {}, status="error",
                                    error=describe_exception(exc, with_traceback=False))
    if config.get("autograph") and config["deadline"] - now() > COMPANION_RESERVE_S:  # issue 29: use
        recorder.stage("autograph")
        try:
            data["autograph"] = script_function(config["autograph"], "autograph_facts")(tf)
        except Exception as exc:
            recorder.error("autograph", exc)
    if config.get("companions"):
        companion_imports(recorder, config)
    try:
        import faulthandler

        faulthandler.cancel_dump_traceback_later()
    except Exception:
        pass
    recorder.stage("done")
    return 0


if __name__ == "__main__":
    code = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip the teardown: with TensorFlow loaded it takes 0.7 s (TF 2.21, 2-core VM). All is written.
    os._exit(code)
