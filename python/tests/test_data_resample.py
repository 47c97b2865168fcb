"""Dataset.rejection_resample (and tf.data.experimental.rejection_resample): (class, element) pairs whose class
frequencies follow the target distribution, with the initial distribution given or estimated."""
import numpy as np
import pytest

import kiln as tf


def _skewed(n=4000, seed=0):
    labels = (np.random.default_rng(seed).random(n) < 0.1).astype(np.int64)  # 10% ones
    return tf.data.Dataset.from_tensor_slices((np.arange(n, dtype=np.float32), labels))


def _share_of_ones(ds, count):
    pairs = list(ds.take(count))
    for cls, (_, label) in pairs:
        assert int(cls) == int(label)  # the class value comes first, the element after
    return np.mean([int(c) for c, _ in pairs])


def test_resample_to_balanced_with_initial_dist():
    ds = _skewed().rejection_resample(lambda x, y: y, target_dist=[0.5, 0.5], initial_dist=[0.9, 0.1], seed=1)
    assert ds.element_spec[0] == tf.TensorSpec([], tf.int64)
    assert 0.4 < _share_of_ones(ds, 1000) < 0.6


def test_resample_with_an_estimated_distribution_and_the_experimental_form():
    ds = _skewed().apply(tf.data.experimental.rejection_resample(lambda x, y: y, target_dist=[0.7, 0.3], seed=2))
    assert 0.2 < _share_of_ones(ds, 1000) < 0.4


def test_resample_already_on_target_is_the_data():
    ds = _skewed(100).rejection_resample(lambda x, y: y, target_dist=[0.9, 0.1], initial_dist=[0.9, 0.1])
    assert len(list(ds)) == 100
    with pytest.raises(ValueError, match="same shape"):
        _skewed(10).rejection_resample(lambda x, y: y, target_dist=[0.5, 0.5], initial_dist=[1.0])
