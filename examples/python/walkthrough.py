"""The tf.function walkthrough of the seeds, run on Kiln: eager vs traced, the tracing rules, and
when a function traces again. Every snippet is TF2 code; only the import differs.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/walkthrough.py

`print` is a Python side effect: it runs while a function is traced. `tf.print` is an op: it runs
every time the graph runs, and writes to stderr (as TF's); run with 2>&1 to see both in order."""
import sys
import timeit

import numpy as np

import kiln as tf

sys.stdout.reconfigure(line_buffering=True)  # print and tf.print (stderr) interleave in a pipe too


def section(title):
    print(f"\n== {title} ==")


tf.random.set_seed(7)

# ---------------------------------------------------------------------------------------------
section("1. The first call traces, later calls with the same signature run the graph")


@tf.function
def myadd(a, b):
    for i in tf.range(3):   # AutoGraph: a loop op in the graph
        tf.print(i)
    c = a + b
    print("tracing")        # Python: only while tracing
    return c


print(myadd(tf.constant("hello"), tf.constant("world")))   # traces, then runs: tracing, 0 1 2
print(myadd(tf.constant("good"), tf.constant("morning")))  # same signature (string scalars): runs only
print(myadd(tf.constant(1), tf.constant(2)))               # new dtype: traces again
print("traces so far:", myadd.experimental_get_tracing_count())

# ---------------------------------------------------------------------------------------------
section("2. Python values are part of the signature: each new value traces")


@tf.function
def f(x):
    print("Traced with", x)
    tf.print("Executed with", x)


f(1)
f(1)        # same Python value: the cached graph
f(2)        # a new value: a new trace
print("traces:", f.experimental_get_tracing_count())
print("why the last trace happened:", f.retrace_log()[-1])

# ---------------------------------------------------------------------------------------------
section("3. Tensors and NumPy arrays key by dtype and shape, not by value")


@tf.function
def double(a):
    print("Tracing with", a)
    return a + a


print(double(tf.constant(1)))
print(double(tf.constant(2)))                   # same dtype and shape: no trace
print(double(np.array(3, dtype=np.int32)))      # a NumPy int32 scalar: the same signature
print(double(tf.constant(1.1)))                 # float32: traces
print(double(tf.constant("a")))                 # string: traces
print("traces:", double.experimental_get_tracing_count())

# ---------------------------------------------------------------------------------------------
section("4. Use TF ops inside functions: NumPy values are frozen into the graph")


@tf.function
def np_random():
    a = np.random.randn(3, 3)   # drawn once, while tracing: a constant in the graph
    tf.print(a)


@tf.function
def tf_random():
    a = tf.random.normal((3, 3))  # an op: new values on every call
    tf.print(a)


np.random.seed(0)
np_random()
np_random()   # the same numbers again
tf_random()
tf_random()   # new numbers

# ---------------------------------------------------------------------------------------------
section("5. Variables: create them outside, or only on the first call")
x = tf.Variable(1.0, dtype=tf.float32)


@tf.function
def outer_var():
    x.assign_add(1.0)
    tf.print(x)
    return x


outer_var()
outer_var()


@tf.function
def inner_var():
    v = tf.Variable(1.0, dtype=tf.float32)
    v.assign_add(1.0)
    return v


try:
    inner_var()   # traces twice on its first call (variables were made); the second trace makes another
except tf.errors.FailedPreconditionError as e:   # TF raises ValueError here
    print("FailedPreconditionError:", str(e).split(". ")[0])

state = []


@tf.function
def fn(x):
    if not state:   # Python state: read while tracing; the variables exist from the first call on
        state.append(tf.Variable(2.0 * x))
        state.append(tf.Variable(state[0] * 3.0))
    return state[0] * x * state[1]


print(fn(tf.constant(1.0)))
print(fn(tf.constant(3.0)))

# ---------------------------------------------------------------------------------------------
section("6. Python lists outside the function see the trace, not the calls")
tensor_list = []


@tf.function
def append_tensor(x):
    tensor_list.append(x)
    return tensor_list


append_tensor(tf.constant(5.0))
append_tensor(tf.constant(6.0))
print(tensor_list)   # one symbolic tensor, appended while tracing

external_list = []


def side_effect(x):
    print("Python side effect")
    external_list.append(x)


@tf.function
def g(x):
    tf.py_function(side_effect, inp=[x], Tout=[])   # runs on every call


g(1)
g(1)
g(1)
print("py_function ran", len(external_list), "times")

# ---------------------------------------------------------------------------------------------
section("7. get_concrete_function and input_signature")
double_strings = double.get_concrete_function(tf.TensorSpec(shape=None, dtype=tf.string))
print(double_strings(tf.constant("a")))
print(double_strings(a=tf.constant("b")))
try:
    double_strings(tf.constant(1))
except tf.errors.InvalidArgumentError as e:
    print("InvalidArgumentError:", str(e).splitlines()[0])


@tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
def next_collatz(x):
    print("Tracing with", x)
    return tf.where(x % 2 == 0, x // 2, 3 * x + 1)


print(next_collatz(tf.constant([1, 2])))
print(next_collatz(tf.constant([5, 6, 7])))   # any length: the signature's None dim, no new trace
try:
    next_collatz(tf.constant([[1, 2], [3, 4]]))
except ValueError as e:
    print("ValueError:", str(e).splitlines()[0])

# ---------------------------------------------------------------------------------------------
section("8. Pass tensors, not Python numbers, for values that change")


@tf.function
def train(num_steps):
    print("Tracing with num_steps = {}".format(num_steps))
    total = tf.constant(0)
    for i in tf.range(num_steps):
        total += i
    return total


train(num_steps=10)                 # traces
train(num_steps=20)                 # traces again: a new Python value
train(num_steps=tf.constant(10))    # traces once for an int32 scalar tensor...
print(train(num_steps=tf.constant(20)))   # ...and reuses it
print("traces:", train.experimental_get_tracing_count())


def measure_graph_size(f, *args):
    g = f.get_concrete_function(*args).graph
    print("{}({}) contains {} nodes in its graph".format(f.__name__, ", ".join(map(str, args)),
                                                         len(g.as_graph_def().node)))


@tf.function
def sum_pairs(dataset):
    loss = tf.constant(0)
    for x, y in dataset:   # a Python list is unrolled while tracing: the graph grows with it
        loss += tf.abs(y - x)
    return loss


measure_graph_size(sum_pairs, [(1, 1)] * 3)
measure_graph_size(sum_pairs, [(1, 1)] * 10)

# ---------------------------------------------------------------------------------------------
section("9. Eager vs traced: the same code, faster as one graph when it is many small ops")


def many_small_ops(x):
    for _ in range(100):
        x = x * 1.0001 + 0.0001
    return x


traced = tf.function(many_small_ops)
a = tf.ones([16])
traced(a)
eager_s = timeit.timeit(lambda: many_small_ops(a), number=50)
traced_s = timeit.timeit(lambda: traced(a), number=50)
print("same result:", bool(tf.reduce_all(tf.abs(many_small_ops(a) - traced(a)) < 1e-6)))
print(f"eager {1e3 * eager_s / 50:.2f} ms, traced {1e3 * traced_s / 50:.3f} ms per call "
      f"({eager_s / traced_s:.0f}x)")
print("the traced graph has", traced.get_concrete_function(a).graph.num_nodes(), "nodes")

with_debugging = tf.function(many_small_ops)
tf.config.run_functions_eagerly(True)   # debugging: functions run as plain Python
print("run eagerly:", bool(tf.reduce_all(with_debugging(a) == many_small_ops(a))),
      "traces:", with_debugging.experimental_get_tracing_count())
tf.config.run_functions_eagerly(False)
