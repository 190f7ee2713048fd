# An AutoGraph-converted function with Python control flow on tensors (issue 29: use, not only import).
# A file of its own, loaded by the TensorFlow child and by child/experiments.py from where the collector
# writes it: AutoGraph converts a function from its source, which a `python -c` script does not have.
# Standard library only at the top, syntax for Python 3.6+.
import ast
import os

MESSAGE_LIMIT = 2000
FILES_LIMIT = 40


def control_flow(tf):
    def step(x):
        if tf.reduce_sum(x) > 0:
            x = x * 2.0
        for _ in tf.range(2):
            x = x + 1.0
        return x

    return step


def trace(tf):
    traced = tf.function(control_flow(tf)).get_concrete_function(tf.TensorSpec([None, 3], tf.float32))
    return traced.name is not None


def top_level_imports(path):
    """The modules a source file imports at its top level (inside a module-level try/if too), by top name."""
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return None
    found, todo = [], list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module]
        else:
            if isinstance(node, (ast.Try, ast.If)):
                todo.extend(node.body + node.orelse + [n for h in getattr(node, "handlers", ()) for n in h.body])
            continue
        for name in names:
            top = name.split(".")[0]
            if top not in found:
                found.append(top)
    return found


def failing_files(exc):
    """The files of the frames of the error and of every exception it was raised over, innermost first,
    each once with its number of frames."""
    counts, order, seen = {}, [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        tb, stack = exc.__traceback__, []
        while tb is not None:
            stack.append(tb.tb_frame.f_code.co_filename)
            tb = tb.tb_next
        for filename in reversed(stack):
            if filename not in counts:
                order.append(filename)
            counts[filename] = counts.get(filename, 0) + 1
        exc = exc.__cause__ or exc.__context__
    return [{"file": f, "frames": counts[f]} for f in order[:FILES_LIMIT]]


def describe(exc):
    cls = type(exc)
    module = getattr(cls, "__module__", "builtins")
    name = cls.__qualname__ if module in ("builtins", "__main__") else module + "." + cls.__qualname__
    return {"type": name, "message": str(exc)[:MESSAGE_LIMIT]}


def autograph_facts(tf):
    """Does AutoGraph convert Python control flow? tf.autograph.to_graph raises the conversion error that
    tf.function only logs ("could not transform ... will run it as-is"). On failure: the error, the causes
    it was raised over, and the failing frames' files with the modules each imports at its top level."""
    to_graph = getattr(getattr(tf, "autograph", None), "to_graph", None)
    if to_graph is None:
        return {"status": "unavailable"}
    try:
        to_graph(control_flow(tf))
    except Exception as exc:
        causes, inner, seen = [], exc.__cause__ or exc.__context__, set()
        while inner is not None and id(inner) not in seen and len(causes) < 5:
            seen.add(id(inner))
            causes.append(describe(inner))
            inner = inner.__cause__ or inner.__context__
        files = [f for f in failing_files(exc) if os.path.abspath(f["file"]) != os.path.abspath(__file__)]
        for entry in files:
            if os.path.isfile(entry["file"]):
                entry["imports"] = top_level_imports(entry["file"])
        return {"status": "failed", "error": dict(describe(exc), causes=causes), "files": files}
    return {"status": "converted"}
