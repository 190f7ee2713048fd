# The workload probe of `tfdoctor --deep`: the performance advice people read ("the GPU loses on small
# models", "wrap the step in tf.function", "add prefetch", ...) measured on this machine. Runs inside
# the TensorFlow child (tf_child.py) after the import and the matmul probe: the child reads this file
# and calls run_workload(tf, recorder, config, gpus). Standard library, TensorFlow and NumPy only;
# syntax for Python 3.6+.
#
# Method (the probe's): every contender is called once untimed-for-the-figure (its first call, with
# tracing, kernel selection and device set-up, is recorded as warmup_s), then timed in blocks of k
# repetitions ending in a read-back, each block about BLOCK_S long whatever the budget; the contenders'
# blocks are interleaved (G, C, G, C, ...) so they see the same clocks and the same neighbours, and come
# in PASSES windows with the other sections timed in between, so a figure's blocks are spread over the
# whole workload; the figure is the best block (noise on a shared machine only adds time) with the
# median and the spread (interquartile range / median, as torch.utils.benchmark reports it) beside it.
import sys
import time

SEED = 20240611
# A timed block lasts about BLOCK_S whatever the budget; the budget buys more blocks, not longer ones.
# A longer run then times the same blocks, only more of them, and its figures agree with a short run's.
# (Blocks sized from the budget made a long run's blocks longer, and a longer block catches more of a
# shared machine's interruptions: its best block read up to 1.5x slower.)
BLOCK_S = 0.025
MIN_BLOCKS = 3
MAX_BLOCKS = 120  # per contender: enough for a stable best and quartiles, and a report of modest size
MAX_REPS = 2000  # repetitions per block at most
PASSES = 2  # windows of blocks per section, the other sections timed in between (see Windows)
MIN_SECTION_S = 0.3  # the least budget a section gets, however small its share (and before the deadline)
# Share of the workload budget each timed section may use; memory is sampled around the others.
SHARES = (("crossover", 0.17), ("dispatch", 0.1), ("input_pipeline", 0.2), ("conv2d", 0.18),
          ("training_step", 0.35))
LADDER = (64, 128, 256, 512, 1024, 2048)
# Shares of the crossover budget: the same for every size (every block lasts BLOCK_S), except the largest,
# whose single repetition outlasts a block on a CPU.
LADDER_WEIGHTS = (1, 1, 1, 1, 1, 2)
LARGER_IS_FASTER = 0.6  # as in the probe: doubling N costs about 8 x 0.6 the time, not 8x
DISPATCH_OPS = 40  # ops in the chain whose per-op latency is timed
PIPELINE_BATCH, PIPELINE_FEATURES, PIPELINE_HIDDEN = 256, 64, 1024
SETTLE_STEPS = 3  # untimed steps before each timed block of a fed step
CONV_BATCH, CONV_SIZE, CONV_FILTERS = 8, 256, 32  # the articles' 256x256x3 images
DENSE_BATCH, CNN_BATCH = 128, 64
MESSAGE_LIMIT = 2000
# tf.data iterators kept alive until the child's os._exit (see input_pipeline): the one deliberate piece
# of module state, in a process that lives for one run
PARKED: list = []


def now():
    return time.perf_counter()


def rounded(value, digits=5):
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return None
    return float("%.*g" % (digits, value))


def error_of(exc):
    cls = type(exc)
    module = getattr(cls, "__module__", "builtins")
    name = cls.__name__ if module in ("builtins", "__main__") else module + "." + cls.__name__
    return {"type": name, "message": str(exc)[:MESSAGE_LIMIT]}


# --------------------------------------------------------------------------------------- timing

class Contender(object):
    """One thing to time: run(k) does k repetitions and returns after a read-back (GPU work is
    asynchronous: only a value on the host proves it finished)."""

    def __init__(self, name, run, device=None):
        self.name, self.run, self.device = name, run, device
        self.info = {"warmup_s": None, "reps_per_block": 1, "block_s": []}

    def timed(self, k):
        started = now()
        self.run(k)
        return now() - started

    def summary(self):
        times = [t for t in self.info["block_s"] if t]
        info = dict(self.info, blocks=len(times))
        if times:
            low, middle, high = quartiles(times)
            info.update(best_s=rounded(min(times)), median_s=rounded(middle),
                        spread=rounded((high - low) / middle, 3))
        if self.device:
            info["device"] = self.device
        return info


def quartiles(values):
    """Lower quartile, median, upper quartile (linear interpolation between the order statistics)."""
    ordered = sorted(values)

    def at(fraction):
        position = fraction * (len(ordered) - 1)
        below = int(position)
        above = min(below + 1, len(ordered) - 1)
        return ordered[below] + (ordered[above] - ordered[below]) * (position - below)

    return at(0.25), at(0.5), at(0.75)


def prepare(contenders, budget_s):
    """Warm every contender up and size its blocks to about BLOCK_S (shorter only when budget_s cannot
    hold MIN_BLOCKS of each after the warm-ups). Returns the contenders that did not raise; one that
    raises keeps its error and is left out."""
    started = now()
    block_target = min(BLOCK_S, max(0.002, budget_s / float(len(contenders) * (MIN_BLOCKS + 2))))
    live = []
    for contender in contenders:
        try:
            contender.info["warmup_s"] = rounded(contender.timed(1))  # tracing, kernels, device set-up
            # like timeit's autorange: one call can be a fluke, so size the blocks from a run of several
            # repetitions lasting a fair part of a block (at most three runs, jumping to the size wanted)
            k, seconds, overhead = 1, None, 0.0
            for _ in range(3):
                wall = now()
                seconds = contender.timed(k)
                overhead = max(0.0, now() - wall - seconds)  # a block's untimed set-up (settling steps)
                if seconds >= block_target / 4 or k >= MAX_REPS:
                    break
                k = min(MAX_REPS, max(k + 1, int(k * block_target / 4 / max(seconds, 1e-6))))
        except Exception as exc:
            contender.info["error"] = error_of(exc)
            continue
        live.append((contender, seconds / k, overhead))
    if not live:
        return []
    # warm-ups can eat a squeezed budget: then the blocks shrink so that MIN_BLOCKS still fit
    left = budget_s - (now() - started)
    per_round = sum(overhead + block_target for _, _, overhead in live)
    if per_round * MIN_BLOCKS > left:
        block_target = max(0.002, (left / MIN_BLOCKS - sum(overhead for _, _, overhead in live)) / len(live))
    for contender, per_rep, _ in live:
        contender.info["reps_per_block"] = max(1, min(MAX_REPS, int(round(block_target / max(per_rep, 1e-7)))))
    return [contender for contender, _, _ in live]


def time_blocks(live, budget_s, deadline, min_blocks):
    """Time blocks of the live contenders round-robin until budget_s is spent (no round is started that
    would end past it) once each has min_blocks more, and at most MAX_BLOCKS in all. A contender that
    raises is removed from `live` with its error; the others go on."""
    started, round_s, rounds = now(), 0.0, 0
    while live and max(len(c.info["block_s"]) for c in live) < MAX_BLOCKS:
        if rounds >= min_blocks and now() - started + round_s > budget_s:
            break
        round_started = now()
        for contender in list(live):
            if now() > deadline:
                return
            k = contender.info["reps_per_block"]
            try:
                contender.info["block_s"].append(rounded(contender.timed(k) / k))
            except Exception as exc:
                contender.info["error"] = error_of(exc)
                live.remove(contender)
        round_s, rounds = now() - round_started, rounds + 1


class Windows(object):
    """A section's contenders timed in PASSES windows of blocks, the first one after the warm-up.
    run_workload times the other sections between two windows, so a figure's blocks come from moments
    seconds apart, and a machine that slows down for seconds at a time (a shared VM switching speed
    states, a laptop changing power state) rarely holds a whole figure in its slow state. The budget
    counts this section's own time only, never the other sections' in between."""

    def __init__(self, contenders, budget_s, deadline):
        self.contenders, self.budget_s, self.deadline = contenders, budget_s, deadline
        self.live, self.used, self.done = None, 0.0, 0

    def next(self):
        started = now()
        if self.live is None:
            self.live = prepare(self.contenders, self.budget_s / PASSES)
        share = max(0.0, (self.budget_s - self.used - (now() - started)) / float(PASSES - self.done))
        time_blocks(self.live, share, self.deadline, MIN_BLOCKS if self.done == 0 else 1)
        self.done += 1
        self.used += now() - started


def in_passes(contenders, budget_s, deadline, around=None):
    """A generator for a section: each window of blocks, with a yield between two (run_workload's turn
    to time the other sections). around() gives a context for each window (never held across a yield,
    so the other sections never run inside it)."""
    windows = Windows(contenders, budget_s, deadline)
    for index in range(PASSES):
        if index:
            yield
        if around is None:
            windows.next()
        else:
            with around():
                windows.next()


def uniform(np, shape):
    rng = np.random.RandomState(SEED)
    return (rng.random_sample(shape).astype(np.float32) * np.float32(2.0) - np.float32(1.0))


def placed_on(tensor, kind):
    return str(getattr(tensor, "device", "")).upper().endswith(kind + ":0")


class SoftPlacementOff(object):
    """Soft placement off inside: an op without a kernel on the asked device raises instead of silently
    running on the CPU (the probe's rule); the previous setting comes back afterwards."""

    def __init__(self, tf):
        self.tf, self.previous = tf, None

    def __enter__(self):
        try:
            self.previous = self.tf.config.get_soft_device_placement()
            self.tf.config.set_soft_device_placement(False)
        except Exception:
            self.previous = None

    def __exit__(self, *exc):
        if self.previous is not None:
            try:
                self.tf.config.set_soft_device_placement(self.previous)
            except Exception:
                pass


def devices_of(gpus):
    return [("gpu", "/GPU:0"), ("cpu", "/CPU:0")] if gpus else [("cpu", "/CPU:0")]


# ------------------------------------------------------------------------------------ crossover

def crossover(tf, np, gpus, budget_s, deadline):
    """float32 matmul over a size ladder on each device: where the GPU starts to beat the CPU. The ladder
    is walked in the first window (its time decides how far it goes); later windows add blocks to every
    size it reached."""
    started = now()
    devices = devices_of(gpus)
    host = uniform(np, (LADDER[-1], LADDER[-1]))
    bases = {}
    for kind, device in devices:
        with tf.device(device):
            bases[kind] = tf.identity(host)
    result = {"dtype": "float32", "devices": [kind for kind, _ in devices]}
    first = budget_s / float(PASSES)
    measured = []  # (n, contenders, outputs, windows)
    previous = None  # the slowest per-call time at the last size
    for n in LADDER:
        left = first - (now() - started)
        if previous is not None:
            # the next size's warm-up, sizing and MIN_BLOCKS blocks, against what it would get in all windows
            predicted = previous * 8 * LARGER_IS_FASTER * len(devices) * (MIN_BLOCKS + 3)
            if predicted > left * PASSES:
                result["stopped_at"] = n
                result["stopped_because"] = "the next size would not fit the budget"
                break
        contenders = []
        outputs = {}
        for kind, device in devices:
            with tf.device(device):
                a = bases[kind][:n, :n] * np.float32((3.0 / n) ** 0.5)

            def run(k, a=a, device=device, kind=kind, outputs=outputs):
                with tf.device(device):
                    x = a
                    for _ in range(k):
                        x = tf.linalg.matmul(a, x)
                    float(x[0, 0].numpy())
                outputs[kind] = x

            contenders.append(Contender(kind, run, device))
        # what is left of the first window, shared by weight among this size and the larger ones to come
        weights = [weight for size, weight in zip(LADDER, LADDER_WEIGHTS) if size >= n]
        windows = Windows(contenders, left * weights[0] / float(sum(weights)) * PASSES, deadline)
        with SoftPlacementOff(tf):
            windows.next()
        measured.append((n, contenders, outputs, windows))
        times = [c.summary().get("best_s") for c in contenders]
        if not all(times):
            break  # a device raised: larger sizes will not do better
        previous = max(times)
        if now() > deadline:
            break
    for _ in range(1, PASSES):
        yield
        for _, _, _, windows in measured:
            with SoftPlacementOff(tf):
                windows.next()
    rows = []
    for n, contenders, outputs, _ in measured:
        row = {"n": n}
        for contender in contenders:
            info = contender.summary()
            if info.get("best_s"):
                info["gflops"] = rounded(2.0 * n ** 3 / info["best_s"] / 1e9, 4)
            if contender.name in outputs:
                info["output_device"] = str(outputs[contender.name].device)
                info["placement_ok"] = placed_on(outputs[contender.name], contender.name.upper())
            row[contender.name] = info
        gpu, cpu = row.get("gpu", {}), row.get("cpu", {})
        if gpu.get("best_s") and cpu.get("best_s"):
            row["gpu_speedup"] = rounded(cpu["best_s"] / gpu["best_s"], 4)
        rows.append(row)
    result["sizes"] = rows
    result.update(crossover_of(rows))
    return result


def crossover_of(rows):
    """The smallest size from which the GPU wins at every larger size measured; the CPU wins below."""
    compared = [row for row in rows if row.get("gpu_speedup") is not None]
    if not compared:
        return {"outcome": "cpu_only" if rows and "gpu" not in rows[0] else "no_comparison"}
    if all(row["gpu_speedup"] > 1 for row in compared):
        return {"outcome": "gpu_faster_everywhere", "crossover_n": compared[0]["n"]}
    if not compared[-1]["gpu_speedup"] > 1:
        return {"outcome": "cpu_faster_everywhere", "crossover_n": None}
    index = len(compared) - 1
    while index > 0 and compared[index - 1]["gpu_speedup"] > 1:
        index -= 1
    return {"outcome": "crossover", "crossover_n": compared[index]["n"]}


# ------------------------------------------------------------------------------------- dispatch

def dispatch(tf, np, gpus, budget_s, deadline):
    """Per-op latency of a chain of small element-wise ops, eagerly and inside tf.function."""
    device = "/GPU:0" if gpus else "/CPU:0"
    with tf.device(device):
        start = tf.identity(uniform(np, (8, 8)))

    def chain(x):
        for index in range(DISPATCH_OPS // 2):
            x = tf.math.multiply(x, 1.0001)
            x = tf.math.add(x, -0.0001 * (index % 3))
        return x

    graph = tf.function(chain)

    def runner(step):
        def run(k):
            with tf.device(device):
                x = start
                for _ in range(k):
                    x = step(x)
                float(x[0, 0].numpy())
        return run

    contenders = [Contender("eager", runner(chain), device), Contender("function", runner(graph), device)]
    yield from in_passes(contenders, budget_s, deadline)
    result = {"device": device, "ops_per_chain": DISPATCH_OPS, "tensor_shape": [8, 8]}
    for contender in contenders:
        info = contender.summary()
        if info.get("best_s"):
            info["per_op_us"] = rounded(info["best_s"] / DISPATCH_OPS * 1e6, 4)
        result[contender.name] = info
    if result["eager"].get("per_op_us") and result["function"].get("per_op_us"):
        result["ratio"] = rounded(result["eager"]["per_op_us"] / result["function"]["per_op_us"], 4)
    return result


# ------------------------------------------------------------------------------- input pipeline

def input_pipeline(tf, np, gpus, budget_s, deadline):
    """A small model step fed from tf.data over a Python generator, with and without prefetch, and
    with no pipeline at all (the same batch again): how long the step waits for its input."""
    device = "/GPU:0" if gpus else "/CPU:0"
    mixing = uniform(np, (PIPELINE_FEATURES, PIPELINE_FEATURES)) * np.float32(0.1)

    stopping = []  # set at the end: the generators return, and every pipeline runs out by itself

    def batches():
        rng = np.random.RandomState(SEED)
        while not stopping:
            # host-side preparation of a batch, as decoding and augmenting would do
            x = rng.standard_normal((PIPELINE_BATCH, PIPELINE_FEATURES)).astype(np.float32)
            for _ in range(2):
                x = np.tanh(x.dot(mixing) + x)
            yield x, (x[:, 0] > 0).astype(np.int32)

    signature = (tf.TensorSpec((PIPELINE_BATCH, PIPELINE_FEATURES), tf.float32),
                 tf.TensorSpec((PIPELINE_BATCH,), tf.int32))
    with tf.device(device):
        w1 = tf.Variable(uniform(np, (PIPELINE_FEATURES, PIPELINE_HIDDEN)) * np.float32(0.1))
        w2 = tf.Variable(uniform(np, (PIPELINE_HIDDEN, 2)) * np.float32(0.1))

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            logits = tf.linalg.matmul(tf.nn.relu(tf.linalg.matmul(x, w1)), w2)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        for variable, gradient in zip((w1, w2), tape.gradient(loss, [w1, w2])):
            variable.assign_sub(0.01 * gradient)
        return loss

    pipelines = []

    def fed(prefetch):
        """One pipeline for all the blocks (building one costs more than many steps). Each block starts
        with SETTLE_STEPS untimed steps: a prefetch buffer filled while the other contenders ran is used
        up there, so the timed steps see the pipeline's steady pace, not a head start."""
        pipeline = []
        pipelines.append(pipeline)

        def run(k):
            if not pipeline:
                dataset = tf.data.Dataset.from_generator(batches, output_signature=signature)
                pipeline.append(iter(dataset.prefetch(tf.data.AUTOTUNE) if prefetch else dataset))
            iterator = pipeline[0]
            with tf.device(device):
                loss = None
                for _ in range(SETTLE_STEPS):
                    loss = step(*next(iterator))
                float(loss.numpy())
                started = now()
                for _ in range(k):
                    loss = step(*next(iterator))
                float(loss.numpy())
                return now() - started
        return run

    fixed = next(batches())
    with tf.device(device):
        fixed = (tf.identity(fixed[0]), tf.identity(fixed[1]))

    def model_only(k):
        with tf.device(device):
            loss = None
            for _ in range(k):
                loss = step(*fixed)
            float(loss.numpy())

    contenders = [PipelineContender("no_prefetch", fed(False), device),
                  PipelineContender("prefetch", fed(True), device),
                  Contender("model_only", model_only, device)]
    yield from in_passes(contenders, budget_s, deadline)
    # The generators return (the pipelines stop pulling batches), and the iterators are parked, never
    # destroyed: destroying a prefetch iterator stalled for about 4 s in 2 to 4 runs of 6 of the
    # tfdoctor child on 2 cores (even drained to its end), and the child leaves by os._exit.
    stopping.append(True)
    PARKED.extend(pipelines)
    result = {"device": device, "batch": PIPELINE_BATCH, "features": PIPELINE_FEATURES}
    for contender in contenders:
        info = contender.summary()
        if info.get("best_s"):
            info["steps_per_s"] = rounded(1.0 / info["best_s"], 4)
        result[contender.name] = info
    alone = result["model_only"].get("best_s")
    for name in ("no_prefetch", "prefetch"):
        fed_s = result[name].get("best_s")
        if alone and fed_s:
            result[name]["starvation"] = rounded(max(0.0, 1.0 - alone / fed_s), 3)
    if result["no_prefetch"].get("best_s") and result["prefetch"].get("best_s"):
        result["prefetch_speedup"] = rounded(result["no_prefetch"]["best_s"] / result["prefetch"]["best_s"], 4)
    return result


class PipelineContender(Contender):
    """Its run(k) times itself (the settling steps before each block excluded) and returns seconds."""

    def timed(self, k):
        return self.run(k)


# --------------------------------------------------------------------------------------- conv2d

def conv2d(tf, np, gpus, budget_s, deadline):
    """Forward, and forward with backward (gradients for the filters and the input), of a 3x3 Conv2D
    on a small batch of 256x256x3 images, on each device."""
    images = uniform(np, (CONV_BATCH, CONV_SIZE, CONV_SIZE, 3))
    filters = uniform(np, (3, 3, 3, CONV_FILTERS)) * np.float32(0.2)
    contenders, outputs = [], {}
    for kind, device in devices_of(gpus):
        with tf.device(device):
            x, w = tf.identity(images), tf.Variable(filters)

        @tf.function
        def forward(x=x, w=w):
            return tf.reduce_sum(tf.nn.conv2d(x, w, strides=1, padding="SAME"))

        @tf.function
        def backward(x=x, w=w):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.nn.conv2d(x, w, strides=1, padding="SAME")
                loss = tf.reduce_sum(y * y)
            dx, dw = tape.gradient(loss, [x, w])
            return tf.reduce_sum(dx) + tf.reduce_sum(dw)

        for what, function in (("forward", forward), ("backward", backward)):
            def run(k, function=function, device=device, key=kind + "_" + what):
                with tf.device(device):
                    value = None
                    for _ in range(k):
                        value = function()
                    float(value.numpy())
                    outputs[key] = value
            contenders.append(Contender(kind + "_" + what, run, device))
    yield from in_passes(contenders, budget_s, deadline, around=lambda: SoftPlacementOff(tf))
    result = {"batch": CONV_BATCH, "image": [CONV_SIZE, CONV_SIZE, 3], "filters": CONV_FILTERS, "kernel": [3, 3],
              "devices": [kind for kind, _ in devices_of(gpus)]}
    for contender in contenders:
        info = contender.summary()
        if info.get("best_s"):
            info["images_per_s"] = rounded(CONV_BATCH / info["best_s"], 4)
        if contender.name in outputs:
            info["output_device"] = str(outputs[contender.name].device)
            info["placement_ok"] = placed_on(outputs[contender.name], contender.device[1:4])
        result[contender.name] = info
    for what in ("forward", "backward"):
        gpu, cpu = result.get("gpu_" + what, {}), result.get("cpu_" + what, {})
        if gpu.get("best_s") and cpu.get("best_s"):
            result[what + "_gpu_speedup"] = rounded(cpu["best_s"] / gpu["best_s"], 4)
    return result


# -------------------------------------------------------------------------------- training step

def mixed_precision_support(tf, gpus):
    """(True, None) where float16 can speed the GPU up, else (False, reason). TensorFlow's guide: NVIDIA
    GPUs of compute capability 7.0 or higher; a pluggable device (Metal) reports none and is tried."""
    if not gpus:
        return False, "no GPU"
    try:
        details = tf.config.experimental.get_device_details(gpus[0])
    except Exception:
        details = {}
    capability = details.get("compute_capability")
    if capability and tuple(capability) < (7, 0):
        return False, "compute capability %s.%s is below 7.0" % tuple(capability)
    return True, None


def training_step(tf, np, gpus, budget_s, deadline):
    """Per-step time of Keras train_on_batch for a small dense model and a small CNN on each device, and
    in mixed precision on the GPU where it can help."""
    keras_started = now()
    keras = tf.keras
    keras_s = now() - keras_started
    rng = np.random.RandomState(SEED)
    data = {
        "dense": (rng.random_sample((DENSE_BATCH, 784)).astype(np.float32),
                  rng.randint(0, 10, DENSE_BATCH).astype(np.int32)),
        "cnn": (rng.random_sample((CNN_BATCH, 28, 28, 1)).astype(np.float32),
                rng.randint(0, 10, CNN_BATCH).astype(np.int32)),
    }

    def build(kind, policy):
        layers = keras.layers
        if kind == "dense":
            stack = [keras.Input((784,)), layers.Dense(128, activation="relu", dtype=policy),
                     layers.Dense(10, dtype=policy), layers.Activation("linear", dtype="float32")]
        else:
            stack = [keras.Input((28, 28, 1)), layers.Conv2D(32, 3, activation="relu", dtype=policy),
                     layers.MaxPooling2D(dtype=policy), layers.Conv2D(64, 3, activation="relu", dtype=policy),
                     layers.MaxPooling2D(dtype=policy), layers.Flatten(dtype=policy), layers.Dense(10, dtype=policy),
                     layers.Activation("linear", dtype="float32")]
        model = keras.Sequential(stack)
        optimizer = keras.optimizers.SGD(0.01)
        if policy == "mixed_float16":
            optimizer = keras.mixed_precision.LossScaleOptimizer(optimizer)
        model.compile(optimizer=optimizer, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return model

    supported, reason = mixed_precision_support(tf, gpus)
    plans = []
    for model_kind in ("dense", "cnn"):
        for kind, device in devices_of(gpus):
            plans.append((model_kind + "_" + kind, model_kind, device, "float32"))
        if supported:
            plans.append((model_kind + "_gpu_mixed", model_kind, "/GPU:0", "mixed_float16"))
    contenders, errors, raised = [], {}, []
    build_s = {}
    for name, model_kind, device, policy in plans:
        started = now()
        try:
            with tf.device(device):
                model = build(model_kind, policy)
        except Exception as exc:
            errors[name] = error_of(exc)
            raised.append(exc)
            continue
        build_s[name] = rounded(now() - started)
        x, y = data[model_kind]

        def run(k, model=model, device=device, x=x, y=y):
            with tf.device(device):
                for _ in range(k):
                    loss = model.train_on_batch(x, y)
            float(loss[0] if isinstance(loss, (list, tuple)) else loss)

        contenders.append(Contender(name, run, device))
    if not contenders:
        raise raised[0]  # no model could be built: the section failed as a whole
    yield from in_passes(contenders, max(0.0, budget_s - (now() - keras_started)), deadline)
    result = {"keras_version": str(getattr(keras, "__version__", "") or ""), "keras_import_s": rounded(keras_s),
              "batch": {"dense": DENSE_BATCH, "cnn": CNN_BATCH},
              "models": {"dense": "784-128-10 Dense", "cnn": "28x28x1 Conv32-Pool-Conv64-Pool-Dense10"},
              "mixed_precision": {"tried": supported, "reason": reason}}
    for contender in contenders:
        info = contender.summary()
        info["build_s"] = build_s.get(contender.name)
        result[contender.name] = info
    for name, error in errors.items():
        result[name] = {"error": error}
    for model_kind in ("dense", "cnn"):
        cpu = result.get(model_kind + "_cpu", {}).get("best_s")
        gpu = result.get(model_kind + "_gpu", {}).get("best_s")
        mixed = result.get(model_kind + "_gpu_mixed", {}).get("best_s")
        if cpu and gpu:
            result[model_kind + "_gpu_speedup"] = rounded(cpu / gpu, 4)
        if gpu and mixed:
            result[model_kind + "_mixed_speedup"] = rounded(gpu / mixed, 4)
    return result


# --------------------------------------------------------------------------------------- memory

def _read_kib(path, keys):
    found = {}
    try:
        with open(path) as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key in keys:
                    found[key] = int(value.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return found


def _macos_swap_used_mb():
    import re
    import subprocess

    try:
        text = subprocess.run(["sysctl", "-n", "vm.swapusage"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              timeout=3, check=False).stdout.decode("utf-8", "replace")
    except Exception:
        return None
    match = re.search(r"used\s*=\s*([\d.,]+)M", text)
    return float(match.group(1).replace(",", ".")) if match else None  # a decimal comma in some locales


def memory_sample():
    """Resident and peak resident memory of this process, and swap in use on the machine, in MiB."""
    sample = {"rss_mb": None, "peak_rss_mb": None, "swap_used_mb": None}
    if sys.platform.startswith("linux"):
        own = _read_kib("/proc/self/status", ("VmRSS", "VmHWM"))
        machine = _read_kib("/proc/meminfo", ("SwapTotal", "SwapFree", "MemTotal"))
        if "VmRSS" in own:
            sample["rss_mb"] = rounded(own["VmRSS"] / 1024.0)
        if "VmHWM" in own:
            sample["peak_rss_mb"] = rounded(own["VmHWM"] / 1024.0)
        if "SwapTotal" in machine and "SwapFree" in machine:
            sample["swap_used_mb"] = rounded((machine["SwapTotal"] - machine["SwapFree"]) / 1024.0)
        if "MemTotal" in machine:
            sample["ram_mb"] = rounded(machine["MemTotal"] / 1024.0)
        return sample
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # bytes on macOS
        sample["peak_rss_mb"] = rounded(peak / 1048576.0)
    except Exception:
        pass
    if sys.platform == "darwin":
        sample["swap_used_mb"] = _macos_swap_used_mb()
    return sample


# ----------------------------------------------------------------------------------------- main

SECTION_FUNCTIONS = {"crossover": crossover, "dispatch": dispatch, "input_pipeline": input_pipeline,
                     "conv2d": conv2d, "training_step": training_step}


def run_workload(tf, recorder, config, gpus):
    """Runs every section within config['budget_s'] (and before config['deadline'], the parent's
    timeout less a margin) and records them in recorder.data['workload'], flushed after each."""
    import numpy as np

    started = now()
    budget = float(config.get("budget_s") or 12.0)
    deadline = min(float(config["deadline"]) - 1.5, started + budget * 1.5)
    workload = recorder.data["workload"] = {"status": "running", "budget_s": budget, "sections": {},
                                            "devices": [kind for kind, _ in devices_of(gpus)]}
    samples = [["start"] + [memory_sample()]]
    workload["memory"] = {"samples": samples}
    recorder.flush()
    # Every section is a generator that times PASSES windows of blocks and yields between two: the
    # sections take turns, window by window (crossover, dispatch, ..., training_step, then crossover's
    # second window, ...), so each figure's blocks are spread over the whole workload. A section's budget
    # is its share (at least MIN_SECTION_S: 3 blocks of each contender whatever the budget), counted in
    # its own time; an overrun on a busy machine does not take the shares of the others.
    running = {}  # name -> {"windows": the section's generator, "budget_s", "windows_s": seconds of each window}
    for _ in range(PASSES + 1):  # the last round only finishes a section that yielded once too often
        for name, share in SHARES:
            if name in workload["sections"]:
                continue  # finished, failed or skipped
            if name not in running:
                before_deadline = deadline - now()
                if before_deadline <= 1.0:
                    workload["sections"][name] = {"status": "skipped", "reason": "no time left before the --timeout"}
                    continue
                section_budget = min(max(MIN_SECTION_S, budget * share), before_deadline - 0.5)
                running[name] = {"windows": SECTION_FUNCTIONS[name](tf, np, gpus, section_budget, deadline),
                                 "budget_s": section_budget, "windows_s": []}
            recorder.stage("workload:" + name)
            section, window_started = running[name], now()
            figures = None
            try:
                next(section["windows"])  # a window of blocks (the first one after the set-up and warm-up)
            except StopIteration as finished:
                figures = dict(finished.value or {}, status="ok")
            except Exception as exc:
                figures = {"status": "error", "error": error_of(exc)}
            section["windows_s"].append(now() - window_started)
            if figures is None:
                continue
            figures["duration_s"] = rounded(sum(section["windows_s"]), 4)
            figures["budget_s"] = rounded(section["budget_s"], 4)
            figures["windows_s"] = [rounded(seconds, 4) for seconds in section["windows_s"]]
            workload[name] = figures
            workload["sections"][name] = {"status": figures["status"], "duration_s": figures["duration_s"]}
            samples.append([name, memory_sample()])
            recorder.flush()
    memory = workload["memory"]
    first, last = samples[0][1], samples[-1][1]
    peaks = [s[1].get("peak_rss_mb") for s in samples if s[1].get("peak_rss_mb")]
    memory.update(peak_rss_mb=max(peaks) if peaks else None, rss_start_mb=first.get("rss_mb"),
                  ram_mb=first.get("ram_mb"), swap_start_mb=first.get("swap_used_mb"),
                  swap_end_mb=last.get("swap_used_mb"))
    swaps = [s[1].get("swap_used_mb") for s in samples if s[1].get("swap_used_mb") is not None]
    if swaps:
        memory["swap_growth_mb"] = rounded(max(swaps) - swaps[0])
    workload["sections"]["memory"] = {"status": "ok" if peaks or swaps else "unavailable"}
    workload["duration_s"] = rounded(now() - started, 4)
    workload["status"] = "ok" if all(s.get("status") == "ok" for s in workload["sections"].values()) else "incomplete"
    recorder.flush()
    return workload
