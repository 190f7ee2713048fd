''''exit 64 # '''
# ^ A no-op string in Python; in a POSIX shell it runs `exit 64`.
#
# One experiment's trial (issue 29): run in the target interpreter, under the changed conditions the
# doctor is trying (-I, -s, another working directory, a variable unset, Keras's configuration ignored),
# it does what failed in the TensorFlow child and records whether it works now: `import tensorflow`;
# tf.keras building a Dense(2) layer; a companion's import; a companion's Keras layer used in a tf.keras
# Sequential model, then an AutoGraph-converted function with Python control flow traced once.
# Standard library only at the top, syntax for Python 3.6+. Run as `python -c <this source> <json
# config>`; the result goes to the file the config names (TensorFlow prints as it likes on stdout).
# It never reaches the network: a socket connection is refused by an audit hook and recorded.
import json
import os
import sys
import time

MESSAGE_LIMIT = 4000


def describe(exc):
    cls = type(exc)
    module = getattr(cls, "__module__", "builtins")
    name = cls.__qualname__ if module in ("builtins", "__main__") else module + "." + cls.__qualname__
    return {"type": name, "message": str(exc)[:MESSAGE_LIMIT]}


def refuse_network(result):
    """Record and refuse every socket connection (Python 3.8+ audit hooks); earlier Pythons go on."""
    def hook(event, args):
        if event in ("socket.connect", "socket.getaddrinfo", "socket.sendto"):
            result["network"].append(event)
            raise OSError("tfdoctor experiments never use the network")
    if hasattr(sys, "addaudithook"):
        sys.addaudithook(hook)


def autograph_trace(tf, path):
    """child/autograph_trace.py, loaded from its file (AutoGraph reads the function's source)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("tfdoctor_autograph_trace", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.trace(tf)


def use_layer(tf, module, layer):
    """The companion's Keras layer, wrapping a plain callable, in a tf.keras Sequential model, called once."""
    import importlib

    cls = getattr(importlib.import_module(module), layer)
    wrapped = cls(tf.function(lambda x: x * 2.0), input_shape=[3])
    model = tf.keras.Sequential([wrapped])
    output = model(tf.ones((1, 3)))
    return tuple(int(d) for d in output.shape) == (1, 3)


def main(argv):
    config = json.loads(argv[1])
    goal = config["goal"]
    result = {"works": False, "step": "import", "error": None, "network": [], "seconds": None}
    started = time.perf_counter()
    refuse_network(result)
    try:
        import tensorflow as tf

        if goal["kind"] in ("keras", "use"):
            result["step"] = "keras"
            layer = tf.keras.layers.Dense(2)
            if tuple(int(d) for d in layer(tf.ones((1, 3))).shape) != (1, 2):
                raise AssertionError("Dense(2) did not give a (1, 2) output")
        if goal["kind"] in ("companion", "use"):
            import importlib

            result["step"] = "companion"
            importlib.import_module(goal["module"])
        if goal["kind"] == "use":
            result["step"] = "use"
            if not use_layer(tf, goal["module"], goal["layer"]):
                raise AssertionError("the model's output has the wrong shape")
            result["step"] = "autograph"
            autograph_trace(tf, config["autograph"])
        result["step"] = "done"
        result["works"] = True
    except BaseException as exc:  # SystemExit too: a broken package may call sys.exit
        result["error"] = describe(exc)
    result["seconds"] = round(time.perf_counter() - started, 3)
    temporary = config["out"] + ".tmp"
    with open(temporary, "w") as handle:
        json.dump(result, handle, default=str)
    os.replace(temporary, config["out"])
    return 0


if __name__ == "__main__":
    code = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # skip TensorFlow's teardown (see tf_child.py)
