# An AutoGraph-converted function with Python control flow on tensors, traced once (issue 29: use, not
# only import). A file of its own, loaded by child/experiments.py from where the collector writes it:
# AutoGraph converts a function from its source, which a `python -c` script does not have.


def trace(tf):
    def step(x):
        if tf.reduce_sum(x) > 0:
            x = x * 2.0
        for _ in tf.range(2):
            x = x + 1.0
        return x

    traced = tf.function(step).get_concrete_function(tf.TensorSpec([None, 3], tf.float32))
    return traced.name is not None
