"""The seeds' AutoGraph examples (TF's tf.function/AutoGraph guides) with
`import kiln as tf`, printing what the seeds show (eager tensors print with Kiln's
`kiln.Tensor(` prefix)."""
import numpy as np
import pytest

import kiln as tf


def test_square_if_positive(capfd):
    @tf.function
    def square_if_positive(x):
        if x > 0:
            x = x * x
        else:
            x = 0
        return x

    a = tf.constant(2)
    b = tf.constant(-2)
    print(square_if_positive(a), square_if_positive(b))
    out, _ = capfd.readouterr()
    assert out == ("kiln.Tensor(4, shape=(), dtype=int32) kiln.Tensor(0, shape=(), dtype=int32)\n")
    code = tf.autograph.to_code(square_if_positive.python_function)
    assert "ag__.if_stmt(x > 0, if_body, else_body, get_state, set_state, ('x',), 1)" in code


def test_while_reduce_sum_loop(capfd):
    @tf.function
    def f(x):
        while tf.reduce_sum(x) > 1:
            tf.print(x)
            x = tf.tanh(x)
        return x

    x0 = np.array([0.207458138, 0.250728369, 0.0565127134, 0.900473475, 0.92794323], np.float32)
    result = f(tf.constant(x0))
    _, err = capfd.readouterr()
    lines = err.splitlines()
    # The seed's run: 16 printed rows from this start, first and second as shown there.
    assert len(lines) == 16
    assert lines[0] == "[0.207458138 0.250728369 0.0565127134 0.900473475 0.92794323]"
    # tanh may differ from TF's in the last bit: the rows are compared as numbers.
    row = [float(v) for v in lines[1].strip("[]").split()]
    np.testing.assert_allclose(row, [0.204532236, 0.245603204, 0.0564526282, 0.716528356, 0.72963351], rtol=1e-6)
    np.testing.assert_allclose([float(v) for v in lines[15].strip("[]").split()],
                               [0.17336753, 0.196280882, 0.0556310043, 0.295379341, 0.296235502], rtol=1e-5)
    np.testing.assert_allclose(result.numpy(), [0.17165123, 0.19379847, 0.05557368, 0.2870784, 0.28786382],
                               rtol=1e-5)
    code = tf.autograph.to_code(f.python_function)
    assert "ag__.while_stmt(loop_test, loop_body, get_state, set_state, ('x',))" in code


def test_fizzbuzz(capfd):
    @tf.function
    def fizzbuzz(n):
        for i in tf.range(1, n + 1):
            print('Tracing for loop')
            if i % 15 == 0:
                print('Tracing fizzbuzz branch')
                tf.print('fizzbuzz')
            elif i % 3 == 0:
                print('Tracing fizz branch')
                tf.print('fizz')
            elif i % 5 == 0:
                print('Tracing buzz branch')
                tf.print('buzz')
            else:
                print('Tracing default branch')
                tf.print(i)

    print("first call:")
    fizzbuzz(tf.constant(5))
    out, err = capfd.readouterr()
    assert out == ("first call:\nTracing for loop\nTracing fizzbuzz branch\nTracing fizz branch\n"
                   "Tracing buzz branch\nTracing default branch\n")
    assert err == "1\n2\nfizz\n4\nbuzz\n"
    print("second call:")
    fizzbuzz(tf.constant(20))
    out, err = capfd.readouterr()
    assert out == "second call:\n"
    assert err.split() == ["1", "2", "fizz", "4", "buzz", "fizz", "7", "8", "fizz", "buzz", "11", "fizz", "13",
                           "14", "fizzbuzz", "16", "17", "fizz", "19", "buzz"]
    assert fizzbuzz.experimental_get_tracing_count() == 1


def rnn_step(inp, state):
    return inp + state


def test_dynamic_rnn_tensor_array():
    batch_size, seq_len, feature_size = 2, 3, 4

    @tf.function
    def dynamic_rnn(rnn_step, input_data, initial_state):
        # [batch, time, features] -> [time, batch, features]
        input_data = tf.transpose(input_data, [1, 0, 2])
        max_seq_len = input_data.shape[0]

        states = tf.TensorArray(tf.float32, size=max_seq_len)
        state = initial_state
        for i in tf.range(max_seq_len):
            state = rnn_step(input_data[i], state)
            states = states.write(i, state)
        return tf.transpose(states.stack(), [1, 0, 2])

    data = np.random.RandomState(0).uniform(size=[batch_size, seq_len, feature_size]).astype(np.float32)
    result = dynamic_rnn(rnn_step, tf.constant(data), tf.zeros([batch_size, feature_size]))
    assert result.shape.as_list() == [2, 3, 4]
    np.testing.assert_allclose(result.numpy(), np.cumsum(data, axis=1), rtol=1e-6)


def test_train_num_steps(capfd):
    def train_one_step():
        pass

    @tf.function
    def train(num_steps):
        print("Tracing with num_steps = {}".format(num_steps))
        for _ in tf.range(num_steps):
            train_one_step()

    train(num_steps=10)
    train(num_steps=20)
    out, _ = capfd.readouterr()
    assert out == "Tracing with num_steps = 10\nTracing with num_steps = 20\n"
    train(num_steps=tf.constant(10))
    train(num_steps=tf.constant(20))
    out, _ = capfd.readouterr()
    assert out.count("Tracing with num_steps = ") == 1
    assert "shape=(), dtype=int32)" in out


def _graph_size(f, *args):
    return len(f.get_concrete_function(*args).graph.as_graph_def().node)


def test_python_list_loop_unrolls(capfd):
    @tf.function
    def train(dataset):
        loss = tf.constant(0)
        for x, y in dataset:
            loss += tf.abs(y - x)  # Some dummy computation.
        return loss

    small_data = [(1, 1)] * 3
    big_data = [(1, 1)] * 10
    small, big = _graph_size(train, small_data), _graph_size(train, big_data)
    assert big > small  # the graph grows with the list
    assert int(train(big_data)) == 0


def test_dataset_loop_is_one_op():
    if not hasattr(tf, "data"):
        pytest.skip("needs kiln.data.Dataset (from_tensor_slices, reduce)")

    @tf.function
    def train(dataset):
        loss = tf.constant(0)
        for x, y in dataset:
            loss += tf.abs(y - x)
        return loss

    small = tf.data.Dataset.from_tensor_slices(([1, 2, 3], [1, 1, 1]))
    big = tf.data.Dataset.from_tensor_slices(([1] * 10 + [5], [1] * 10 + [1]))
    assert _graph_size(train, small) == _graph_size(train, big)  # the graph does not grow with the data
    assert int(train(small)) == 3
    assert int(train(big)) == 4
    # The guide's from_generator datasets: elements of unknown shape relax the loop state, as TF's
    # dataset loop does (it checks no shapes), and the graph is the same for both.
    def generated(pairs):
        return tf.data.Dataset.from_generator(lambda: pairs, (tf.int32, tf.int32))
    assert _graph_size(train, generated([(1, 1)] * 3)) == _graph_size(train, generated([(1, 1)] * 10))
    assert int(train(generated([(1, 4)] * 3))) == 9


def test_if_obj_v_is_none_python_fallback(capfd):
    class C:
        pass

    obj = C()
    obj.v = None

    @tf.function
    def g(x):
        if obj.v is None:
            obj.v = tf.Variable(1.0)
        return obj.v.assign_add(x)

    print(g(1.0))
    print(g(2.0))
    out, _ = capfd.readouterr()
    assert out == "kiln.Tensor(2.0, shape=(), dtype=float32)\nkiln.Tensor(4.0, shape=(), dtype=float32)\n"


def test_if_not_state_python_fallback(capfd):
    state = []

    @tf.function
    def fn(x):
        if not state:
            state.append(tf.Variable(2.0 * x))
            state.append(tf.Variable(state[0] * 3.0))
        return state[0] * x * state[1]

    print(fn(tf.constant(1.0)))
    print(fn(tf.constant(3.0)))
    out, _ = capfd.readouterr()
    assert out == "kiln.Tensor(12.0, shape=(), dtype=float32)\nkiln.Tensor(36.0, shape=(), dtype=float32)\n"
    assert len(state) == 2
