"""Run-time dispatch and what conversion must keep working: methods, closures,
defaults, decorators, nested functions, lambdas, caching, do_not_convert,
unreadable source, iteration over TensorArrays and Python iterables."""
import collections
import functools
import importlib.util
import pathlib
import re
import warnings

import numpy as np
import pytest

import kiln as tf
from kiln.autograph import conversion


def _count_ops(f, *args):
    return f.get_concrete_function(*args).graph.num_nodes()


def test_methods_closures_defaults_decorators():
    def twice(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs) * 2
        return wrapper

    offset = tf.constant(10)

    class Model:
        def __init__(self, scale):
            self.scale = scale

        @twice
        def step(self, x, bias=1, *, sign=1):
            if x > 0:
                x = x * self.scale + offset
            else:
                x = -x
            return sign * (x + bias)

    m = Model(3)
    f = tf.function(m.step)
    assert int(f(tf.constant(2))) == 2 * (2 * 3 + 10 + 1)
    assert int(f(tf.constant(-2), 5, sign=-1)) == 2 * -(2 + 5)


def test_method_with_zero_argument_super():
    class Base:
        def value(self, x):
            return x + 1

    class Child(Base):
        def value(self, x):
            if x > 0:
                x = super().value(x)
            return x

    c = Child()
    f = tf.function(c.value)
    assert int(f(tf.constant(1))) == 2
    assert int(f(tf.constant(-1))) == -1


def test_kiln_function_method_one_cache_per_instance():
    class Counter(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(0)

        @tf.function
        def add_while_positive(self, n):
            while n > 0:
                self.v.assign_add(n)
                n -= 1
            return self.v

    c = Counter()
    assert int(c.add_while_positive(tf.constant(3))) == 6


def test_nested_functions_and_lambdas_recursive_conversion():
    def helper(x):
        if x > 0:
            return x
        return -x

    @tf.function
    def f(x):
        sq = lambda v: v * v if v > 0 else v  # noqa: E731
        return helper(x) + sq(x)

    assert int(f(tf.constant(3))) == 12
    assert int(f(tf.constant(-3))) == 0


def test_conversion_is_cached_per_code_object():
    def make(k):
        def g(x):
            if x > 0:
                x = x + k
            return x
        return g

    g1, g2 = make(1), make(2)
    c1, c2 = conversion.convert(g1), conversion.convert(g2)
    assert c1.__code__ is c2.__code__  # converted once for the code object
    assert c1(1) == 2 and c2(1) == 3     # each keeps its own closure
    assert conversion.convert(g1) is c1


def test_kiln_numpy_and_stdlib_are_not_converted():
    import math
    for f in (tf.reduce_sum, np.sum, math.sqrt, functools.reduce, print, len):
        assert conversion.call_target(f) is f


def test_do_not_convert():
    @tf.autograph.experimental.do_not_convert
    def plain(x):
        if x > 0:  # a tensor here fails: not converted
            return x
        return -x

    @tf.function
    def f(x):
        return plain(x)

    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
        f(tf.constant(1))
    assert tf.autograph.experimental.set_loop_options() is None


def test_unreadable_source_warns_once_and_runs_unconverted():
    namespace = {"tf": tf}
    exec("def made(x):\n    return x * 2\n", namespace)
    made = namespace["made"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert tf.autograph._convert(made) is made
        assert tf.autograph._convert(made) is made
        f = tf.function(made)
        assert int(f(tf.constant(3))) == 6
    assert len([w for w in caught if "could not convert" in str(w.message)]) == 1


def test_for_over_tensor_rows_and_tensor_array():
    @tf.function
    def rows(m):
        total = tf.zeros([2])
        for row in m:
            total += row
        return total

    np.testing.assert_allclose(rows(tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).numpy(), [9.0, 12.0])

    @tf.function
    def over_ta(n):
        ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[])
        for i in tf.range(n):
            ta = ta.write(i, i * i)
        s = 0
        for v in ta:
            s += v
        return s

    assert int(over_ta(tf.constant(4))) == 0 + 1 + 4 + 9


def test_python_loop_with_break_on_tensor_becomes_conds():
    @tf.function
    def f(x):
        s = tf.constant(0)
        for v in [1, 2, 3, 4]:
            if s + v > x:
                break
            s += v
        return s

    assert int(f(tf.constant(4))) == 3
    assert int(f(tf.constant(100))) == 10


def test_while_python_then_tensor():
    @tf.function
    def f(n):
        i = 0
        s = tf.constant(0)
        while i < 3:          # Python test: unrolled
            s += i
            i += 1
        while s < n:          # tensor test: one loop
            s += 10
        return s

    assert int(f(tf.constant(25))) == 33


def test_conditional_expression_and_lazy_logic():
    @tf.function
    def f(x, xs):
        safe = x < 3 and tf.gather(xs, x) > 0  # the gather runs only when x < 3
        return tf.cast(safe, tf.int32) if x >= 0 else -1

    xs = tf.constant([1, -1, 1])
    assert int(f(tf.constant(0), xs)) == 1
    assert int(f(tf.constant(1), xs)) == 0
    assert int(f(tf.constant(5), xs)) == 0


def test_run_functions_eagerly_runs_python():
    @tf.function
    def f(x):
        if x > 0:
            x = x * 2
        return x

    tf.config.run_functions_eagerly(True)
    try:
        assert int(f(tf.constant(3))) == 6
    finally:
        tf.config.run_functions_eagerly(False)
    assert int(f(tf.constant(3))) == 6


def test_graph_size_matches_hand_written_control_flow():
    @tf.function
    def auto(x, n):
        if x > 0:
            x = x * x
        else:
            x = -x
        for i in tf.range(n):
            x = x + i
        return x

    @tf.function(autograph=False)
    def manual(x, n):
        x = tf.cond(x > 0, lambda: x * x, lambda: -x)
        _, x = tf.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x + i), (tf.constant(0), x))
        return x

    args = (tf.constant(3), tf.constant(4))
    assert int(auto(*args)) == int(manual(*args)) == 15
    assert _count_ops(auto, *args) == _count_ops(manual, *args)


def test_converted_while_graph_equals_hand_written():
    @tf.function
    def auto(x):
        while tf.reduce_sum(x) > 1:
            x = x / 2
        return x

    @tf.function(autograph=False)
    def manual(x):
        return tf.while_loop(lambda x: tf.reduce_sum(x) > 1, lambda x: (x / 2,), (x,))[0]

    x = tf.constant([4.0, 8.0])
    np.testing.assert_allclose(auto(x).numpy(), manual(x).numpy())
    # The loop test is evaluated once more to choose a graph loop, in a scratch graph:
    # nothing of it stays in the function's graph.
    assert _count_ops(auto, x) == _count_ops(manual, x) == 2


def test_converted_if_and_for_range_graphs_equal_hand_written():
    @tf.function
    def auto_if(x):
        if x > 0:
            x = x * x
        else:
            x = -x
        return x

    @tf.function(autograph=False)
    def manual_if(x):
        return tf.cond(x > 0, lambda: x * x, lambda: -x)

    @tf.function
    def auto_for(n):
        s = tf.constant(0)
        for i in tf.range(n):
            s = s + i
        return s

    @tf.function(autograph=False)
    def manual_for(n):
        return tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), (tf.constant(0), tf.constant(0)))[1]

    n = tf.constant(4)
    assert int(auto_if(n)) == int(manual_if(n)) == 16
    assert _count_ops(auto_if, n) == _count_ops(manual_if, n)
    assert int(auto_for(n)) == int(manual_for(n)) == 6
    assert _count_ops(auto_for, n) == _count_ops(manual_for, n)


def test_converted_dataset_loop_graph_equals_dataset_reduce():
    ds = tf.data.Dataset.range(5)

    @tf.function
    def auto():
        s = tf.constant(0, tf.int64)
        for e in ds:
            s = s + e
        return s

    @tf.function(autograph=False)
    def manual():
        return ds.reduce(tf.constant(0, tf.int64), lambda s, e: s + e)

    assert int(auto()) == int(manual()) == 10
    assert _count_ops(auto) == _count_ops(manual)


def _all_ops(f, *args):
    """The op types of the function's graph, those of every branch and loop body included
    (num_nodes counts the outer graph only)."""
    text = f.get_concrete_function(*args).graph.to_string()
    return collections.Counter(re.findall(r"^\s*\w+ = (\w+)\(", text, re.M))


def _runtime_bench():
    path = pathlib.Path(__file__).parents[3] / "bench" / "autograph_runtime.py"
    spec = importlib.util.spec_from_file_location("autograph_runtime", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("case", range(3))
def test_converted_graphs_equal_hand_written_in_branches_and_bodies(case):
    # The pairs bench/autograph_runtime.py times: whole graphs, branches and loop bodies
    # included, less the function's name line.
    _, auto, manual, args = _runtime_bench().CASES[case]
    np.testing.assert_equal(auto(*args).numpy(), manual(*args).numpy())
    assert _all_ops(auto, *args) == _all_ops(manual, *args)

    def text(f):
        return f.get_concrete_function(*args).graph.to_string().split("\n", 1)[1]
    assert text(auto) == text(manual)


def test_python_while_test_runs_once_per_iteration_while_tracing():
    calls = []

    @tf.function
    def f(x):
        k = 0
        while calls.append(k) or k < 3:
            x = x + 1
            k += 1
        return x

    assert int(f(tf.constant(0))) == 3
    assert calls == [0, 1, 2, 3]


def test_a_nested_generator_does_not_stop_converting_its_function():
    # The generator runs as written; the if around it still becomes a cond (a nested
    # function's yield, loops and declarations belong to it, not to the enclosing one).
    def f(x):
        def squares(n):
            for i in range(n):
                yield i * i

        if x > 0:
            x = x + sum(squares(3))
        return x

    assert "ag__.if_stmt" in tf.autograph.to_code(f)
    assert "for i in range(n):\n            yield (i * i)" in tf.autograph.to_code(f)
    g = tf.function(f)
    assert int(g(tf.constant(1))) == 6 and int(g(tf.constant(-1))) == -1


def test_python_range_of_a_tensor_is_kiln_range():
    # As TF's py_builtins.range_: a tensor bound makes range() a kiln.range, so the loop
    # is one graph loop; with Python bounds it stays Python's range (unrolled).
    @tf.function
    def total(n):
        s = tf.constant(0)
        for i in range(2, n, 3):
            s += i
        return s

    n = tf.constant(12)
    assert int(total(n)) == sum(range(2, 12, 3))
    assert _all_ops(total, n)["While"] == 1
    np.testing.assert_equal(tf.function(lambda n: range(n))(tf.constant(3)).numpy(), [0, 1, 2])

    def unrolled(n):
        s = tf.constant(0)
        for i in range(n):
            s += i
        return s
    assert int(tf.function(unrolled)(4)) == 6
    assert "While" not in _all_ops(tf.function(unrolled), 4)


def test_conversion_leaves_the_cycle_collector_as_it_found_it():
    # Conversion pauses the collector (its nodes hold no cycles); it must come back on,
    # also after a failed conversion, and stay off when the user turned it off.
    import gc

    def f(x):
        if x > 0:
            x = -x
        return x

    def g(x):
        return x

    assert gc.isenabled()
    tf.autograph.to_code(f)
    assert gc.isenabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec_globals = {}
        exec("def h(x):\n    return x\n", exec_globals)  # no source: the conversion fails
        assert conversion.convert(exec_globals["h"]) is exec_globals["h"]
    assert gc.isenabled()
    gc.disable()
    try:
        tf.autograph.to_code(g)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_len_of_a_tensor_is_its_first_dimension_static_or_dynamic():
    # TF's py_builtins.len_: a known first dimension is a Python int (the loop unrolls), an
    # unknown one the tensor tf.shape(x)[0] (one graph loop), where Python's len() fails.
    def total(x):
        s = tf.constant(0.0)
        for i in range(len(x)):
            s += x[i]
        return s

    dynamic = tf.function(total, input_signature=[tf.TensorSpec([None], tf.float32)])
    assert float(dynamic(tf.constant([1.0, 2.0, 3.0]))) == 6.0
    assert float(dynamic(tf.constant([4.0]))) == 4.0
    assert _all_ops(dynamic, tf.constant([1.0]))["While"] == 1
    static = tf.function(total)
    assert float(static(tf.constant([1.0, 2.0]))) == 3.0
    assert "While" not in _all_ops(static, tf.constant([1.0, 2.0]))
    assert int(tf.function(lambda x: len(x))(tf.zeros([5, 2]))) == 5
    with pytest.raises(ValueError, match=r"len requires a non-scalar tensor, got one of shape \(\)"):
        tf.function(lambda x: len(x))(tf.constant(1.0))


def test_int_float_max_min_of_tensors_are_tf_ops_in_converted_code():
    # TF's py_builtins: a traced tensor has no Python value, so int()/float() cast it and
    # max()/min() reduce; on Python values they stay Python's.
    def f(x, n):
        return int(x), float(n), max(x, 2.0), min(x, -3.0, 0.5), max(tf.stack([x, -x])), min(x), max(3, 4), int("7")

    out = tf.function(f)(tf.constant(-1.5), tf.constant(4))
    assert [o.dtype for o in out[:2]] == [tf.int32, tf.float32]
    assert [float(o) for o in out[:6]] == [-1.0, 4.0, 2.0, -3.0, 1.5, -1.5]
    assert out[6:] == (4, 7)

    def bad(x):
        return max(tf.zeros([2, 2]))

    with pytest.raises(ValueError, match="max\\(arg\\) currently support only tensor with rank 1, but got a tensor "
                                         "with rank 2"):
        tf.function(bad)(tf.constant(1.0))


def test_zip_of_datasets_is_one_dataset_loop():
    # As TF's py_builtins.zip_: zip of datasets is Dataset.zip, so the loop is one dataset
    # loop over the zipped dataset and the graph does not grow with the data.
    def weighted(xs, ws):
        s = tf.constant(0.0)
        for x, (w, flag) in zip(xs, ws):
            if flag:
                continue
            s += x * w
        return s

    def data(n):
        xs = tf.data.Dataset.from_tensor_slices(np.arange(n, dtype=np.float32))
        ws = tf.data.Dataset.from_tensor_slices((np.full(n + 1, 2, np.float32), np.arange(n + 1) % 3 == 0))
        return xs, ws

    f = tf.function(weighted)
    for n in (4, 50):
        assert float(f(*data(n))) == sum(2.0 * i for i in range(n) if i % 3)
    assert _count_ops(f, *data(4)) == _count_ops(f, *data(50))
    ops = _all_ops(f, *data(4))
    assert ops["StatefulWhile"] == 1 and ops["HostFunction"] == 2  # one loop; its opening pass takes both
    assert f.experimental_get_tracing_count() == 1
    # Eagerly, and over anything but datasets, zip is Python's.
    assert float(weighted(*data(4))) == float(f(*data(4)))
    py = tf.function(lambda xs, ws: weighted(xs, ws))
    assert float(py([1.0, 2.0, 3.0], [(2.0, False), (2.0, True), (2.0, False)])) == 8.0
    assert "While" not in _all_ops(py, [1.0, 2.0], [(2.0, False), (2.0, True)])


def test_enumerate_over_a_dataset_is_one_dataset_loop():
    # As TF's loop over dataset.enumerate(start): the count is carried in the dataset
    # loop (int64), so the graph does not grow with the data.
    def weighted(ds):
        s = tf.constant(0, tf.int64)
        for i, (x, y) in enumerate(ds, start=5):
            if i > 7:
                break
            s += i * tf.cast(x + y, tf.int64)
        return s

    xs, ys = list(range(1, 41)), list(range(10, 410, 10))
    small = tf.data.Dataset.from_tensor_slices((xs[:4], ys[:4]))
    large = tf.data.Dataset.from_tensor_slices((xs, ys))
    expected = sum(i * (x + y) for i, (x, y) in enumerate(zip(xs, ys), start=5) if i <= 7)
    f = tf.function(weighted)
    assert int(f(small)) == int(f(large)) == expected
    assert _count_ops(f, small) == _count_ops(f, large)


def test_break_in_a_loop_over_an_infinite_dataset_stops_pulling():
    # TF builds the loop with take_while: once the break is taken no element is pulled,
    # so a loop over an endless dataset (a generator, repeat()) ends.
    pulled = []

    def endless():
        i = 0
        while True:
            pulled.append(i)
            yield i
            i += 1

    @tf.function
    def sum_up_to(ds, limit):
        s = tf.constant(0, tf.int64)
        for x in ds:
            if x > limit:
                break
            s += x
        return s

    ds = tf.data.Dataset.from_generator(endless, output_signature=tf.TensorSpec([], tf.int64))
    assert int(sum_up_to(ds, tf.constant(3, tf.int64))) == 0 + 1 + 2 + 3
    assert pulled == [0, 1, 2, 3, 4]

    # The training-loop pattern: a step limit over a repeated dataset.
    @tf.function
    def steps(ds, n):
        total = tf.constant(0, tf.int64)
        for step, x in enumerate(ds.repeat()):
            if step >= n:
                break
            total += x
        return total

    assert int(steps(tf.data.Dataset.range(3), tf.constant(7, tf.int64))) == 0 + 1 + 2 + 0 + 1 + 2 + 0
    assert _count_ops(steps, tf.data.Dataset.range(3), tf.constant(7, tf.int64)) == \
        _count_ops(steps, tf.data.Dataset.range(30), tf.constant(70, tf.int64))
