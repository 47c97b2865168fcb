"""keras.backend's CTC functions against a brute-force sum over every alignment (blank: the last class)."""
import itertools

import numpy as np

import kiln as tf
from kiln import keras

K = keras.backend


def collapse(path, blank):
    out = []
    for k, c in enumerate(path):
        if c != blank and (k == 0 or c != path[k - 1]):
            out.append(c)
    return out


def brute_force_nll(probs, label, length):
    blank = probs.shape[-1] - 1
    total = 0.0
    for path in itertools.product(range(probs.shape[-1]), repeat=length):
        if collapse(path, blank) == list(label):
            total += np.prod([probs[t, c] for t, c in enumerate(path)])
    return -np.log(total)


def test_ctc_batch_cost_is_the_negative_log_likelihood():
    rng = np.random.default_rng(7)
    p = rng.random((3, 5, 4))
    p /= p.sum(-1, keepdims=True)
    labels = np.array([[1, 2, 0], [0, 0, 0], [2, 2, 1]])
    label_length, input_length = np.array([[2], [1], [3]]), np.array([[5], [4], [5]])
    loss = K.ctc_batch_cost(labels, p.astype(np.float32), input_length, label_length).numpy()
    assert loss.shape == (3, 1)
    for b in range(3):
        expect = brute_force_nll(p[b] + 1e-7, labels[b, :label_length[b, 0]], input_length[b, 0])
        np.testing.assert_allclose(loss[b, 0], expect, rtol=1e-4)
    # A label longer than its input costs 0 (Keras' ignore_longer_outputs_than_inputs).
    assert K.ctc_batch_cost(labels, p.astype(np.float32), np.array([[1], [4], [5]]), label_length).numpy()[0, 0] == 0


def test_ctc_label_dense_to_sparse_and_decode():
    st = K.ctc_label_dense_to_sparse(tf.constant([[1, 2, 0], [3, 0, 0]]), tf.constant([2, 1]))
    assert st.indices.numpy().tolist() == [[0, 0], [0, 1], [1, 0]] and st.values.numpy().tolist() == [1, 2, 3]
    assert st.dense_shape.numpy().tolist() == [2, 3]
    blank = 3
    p = np.full((1, 6, 4), 0.01, np.float32)
    for t, c in enumerate([1, 1, blank, 1, 2, blank]):
        p[0, t, c] = 0.97
    (greedy,), log_prob = K.ctc_decode(p, np.array([6]))
    assert greedy.numpy().tolist() == [[1, 1, 2, -1, -1, -1]]  # repeats merged, blanks dropped, -1 padding
    np.testing.assert_allclose(log_prob.numpy(), [[-6 * np.log(0.97 + 1e-7)]], rtol=1e-5)
    (beam,), _ = K.ctc_decode(p, np.array([6]), greedy=False, beam_width=8)
    assert beam.numpy().tolist() == [[1, 2, -1, -1, -1, -1]]  # TF1's beam decoder merges repeated labels too
