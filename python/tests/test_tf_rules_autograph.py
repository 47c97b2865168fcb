"""TensorFlow 2.15's AutoGraph rule for loops over datasets (issue #39, group 6)."""
import numpy as np

import kiln as tf


def test_for_over_dataset_accumulating_python_float_keeps_shape_scalar():
    features = np.arange(15, dtype=np.float32).reshape(5, 3)
    labels = np.arange(5, dtype=np.float32).reshape(5, 1)
    ds = tf.data.Dataset.from_tensor_slices((features, labels)).batch(2)  # batches of 2, 2, 1
    shapes = []

    @tf.function
    def epoch(dataset):
        loss = 0.0
        steps = 0
        for x, y in dataset:
            loss += tf.reduce_mean(tf.square(tf.reduce_sum(x, axis=1, keepdims=True) - y))
            steps += 1
        shapes.append((loss.shape, steps.shape))
        return loss, steps

    loss, steps = epoch(ds)
    assert shapes == [((), ())]
    expected = sum(np.mean((features[i:i + 2].sum(1, keepdims=True) - labels[i:i + 2]) ** 2) for i in (0, 2, 4))
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-6)
    assert steps.numpy() == 3
    assert epoch.get_concrete_function(ds).outputs[0].shape == ()

    # The dataset from the enclosing scope, and a running mean: the same scalar state.
    @tf.function
    def mean_of_sums():
        total = 0.0
        count = 0.0
        for x, _ in ds:
            total += tf.reduce_sum(x)
            count += 1.0
        return total / count

    np.testing.assert_allclose(mean_of_sums().numpy(), features.sum() / 3, rtol=1e-6)
