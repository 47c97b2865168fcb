"""tf.queue's four queues and tf.CriticalSection: order, batching, padding, priorities, shuffling,
blocking between threads, TF's errors on closed queues, and queue methods inside a tf.function."""
import threading

import numpy as np
import pytest

import kiln as tf


def test_fifo_order_size_and_single_component_results():
    q = tf.queue.FIFOQueue(3, tf.float32)
    q.enqueue(1.0)
    q.enqueue_many([[2.0, 3.0]])
    assert int(q.size()) == 3 and q.size().dtype == tf.int32
    out = q.dequeue()
    assert isinstance(out, tf.Tensor) and out.numpy() == 1.0
    np.testing.assert_array_equal(q.dequeue_many(2).numpy(), [2.0, 3.0])
    assert int(q.size()) == 0


def test_tuple_and_named_components():
    q = tf.queue.FIFOQueue(5, [tf.int32, tf.string], shapes=[[2], []])
    q.enqueue(([1, 2], "a"))
    q.enqueue_many(([[3, 4], [5, 6]], ["b", "c"]))
    nums, words = q.dequeue_many(3)
    np.testing.assert_array_equal(nums.numpy(), [[1, 2], [3, 4], [5, 6]])
    assert words.numpy().tolist() == [b"a", b"b", b"c"]

    named = tf.queue.FIFOQueue(2, [tf.float32, tf.int64], names=["x", "y"])
    named.enqueue({"x": 1.5, "y": 7})
    out = named.dequeue()
    assert set(out) == {"x", "y"} and out["y"].dtype == tf.int64 and int(out["y"]) == 7
    with pytest.raises(ValueError):
        named.enqueue((1.5, 7))
    with pytest.raises(ValueError, match="incompatible"):
        q.enqueue(([1, 2, 3], "d"))


def test_closed_queue_errors():
    q = tf.queue.FIFOQueue(4, tf.float32, name="my_queue")
    q.enqueue_many([[1.0, 2.0]])
    q.close()
    assert bool(q.is_closed())
    with pytest.raises(tf.errors.CancelledError, match="is closed"):
        q.enqueue(3.0)
    with pytest.raises(tf.errors.OutOfRangeError, match=r"insufficient elements \(requested 3, current size 2\)"):
        q.dequeue_many(3)
    np.testing.assert_array_equal(q.dequeue_up_to(3).numpy(), [1.0, 2.0])  # a short batch once closed
    with pytest.raises(tf.errors.OutOfRangeError, match="is closed and has insufficient elements"):
        q.dequeue()


def test_blocking_between_threads():
    q = tf.queue.FIFOQueue(2, tf.int32)
    got = []

    def consume():
        while True:
            try:
                got.append(int(q.dequeue()))
            except tf.errors.OutOfRangeError:
                return

    consumer = threading.Thread(target=consume)
    consumer.start()
    for i in range(10):  # more than the capacity: enqueue waits for the consumer
        q.enqueue(i)
    q.close()
    consumer.join(timeout=30)
    assert not consumer.is_alive()
    assert got == list(range(10))


def test_padding_fifo_queue_pads_to_the_longest():
    q = tf.queue.PaddingFIFOQueue(3, [tf.int32], shapes=[[None]])
    q.enqueue([[1]])
    q.enqueue([[2, 3, 4]])
    q.enqueue([[5, 6]])
    np.testing.assert_array_equal(q.dequeue_many(3).numpy(), [[1, 0, 0], [2, 3, 4], [5, 6, 0]])
    with pytest.raises(ValueError):
        tf.queue.PaddingFIFOQueue(3, [tf.int32], shapes=None)


def test_priority_queue_lowest_first():
    q = tf.queue.PriorityQueue(5, [tf.string], shapes=[[]])
    for priority, word in [(3, "c"), (1, "a"), (2, "b")]:
        q.enqueue((tf.constant(priority, tf.int64), word))
    priorities, words = q.dequeue_many(3)
    np.testing.assert_array_equal(priorities.numpy(), [1, 2, 3])
    assert words.numpy().tolist() == [b"a", b"b", b"c"]


def test_random_shuffle_queue_keeps_min_after_dequeue():
    tf.random.set_seed(3)
    q = tf.queue.RandomShuffleQueue(10, min_after_dequeue=2, dtypes=[tf.int32], seed=1)
    q.enqueue_many([np.arange(10, dtype=np.int32)])
    first = q.dequeue_many(8).numpy()
    assert int(q.size()) == 2
    got = []
    done = threading.Event()

    def take():  # would wait: only min_after_dequeue elements remain until the queue closes
        got.append(int(q.dequeue()))
        done.set()

    t = threading.Thread(target=take)
    t.start()
    assert not done.wait(0.3)
    q.close()
    t.join(timeout=30)
    rest = got + [int(q.dequeue())]
    assert sorted(first.tolist() + rest) == list(range(10))
    assert first.tolist() != list(range(8))  # shuffled


def test_queue_methods_inside_a_function_run_with_the_graph():
    q = tf.queue.FIFOQueue(10, [tf.float32, tf.int32], shapes=[[2], []])

    @tf.function
    def produce(x, i):
        q.enqueue((x, i))
        q.enqueue_many((tf.stack([x * 2.0, x * 3.0]), tf.stack([i + 1, i + 2])))
        return q.size()

    @tf.function
    def consume():
        first, index = q.dequeue()
        rest, indices = q.dequeue_many(2)
        assert first.shape.as_list() == [2] and rest.shape.as_list() == [2, 2]  # static shapes kept
        return first + tf.reduce_sum(rest, 0), index + tf.reduce_sum(indices)

    assert int(produce(tf.constant([1.0, 2.0]), tf.constant(5))) == 3
    assert int(produce(tf.constant([0.0, 1.0]), tf.constant(0))) == 6  # runs on every call
    total, indices = consume()
    np.testing.assert_allclose(total.numpy(), [6.0, 12.0])
    assert int(indices) == 18
    assert int(q.size()) == 3

    @tf.function
    def close_and_drain():
        q.close()
        return q.dequeue_up_to(5)[1], q.is_closed()

    drained, closed = close_and_drain()
    np.testing.assert_array_equal(drained.numpy(), [0, 1, 2])
    assert bool(closed)
    with pytest.raises(tf.errors.OutOfRangeError, match="is closed and has insufficient elements"):
        consume()


def test_critical_section_serializes_and_refuses_reentry():
    cs = tf.CriticalSection()
    v = tf.Variable(0)

    def bump():
        value = v.read_value()
        v.assign(value + 1)
        return v.read_value()

    threads = [threading.Thread(target=lambda: [cs.execute(bump) for _ in range(20)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert int(v.numpy()) == 80
    assert int(cs.execute(lambda: v + 1)) == 81
    with pytest.raises(ValueError, match="Attempting to lock a CriticalSection in which we are already running"):
        cs.execute(lambda: cs.execute(lambda: 1))
