"""tf.nn's composites in a real loop: a module over conv1d, conv3d, max_pool3d, embedding_lookup, ctc_loss and
the sigmoid cross entropy trains with an optimizer (the loss falls), saves and loads as a SavedModel, and the
loaded function computes what the module does."""
import numpy as np

import kiln as tf

RNG = np.random.default_rng(31)


class Tagger(tf.Module):
    def __init__(self):
        super().__init__()
        self.table = tf.Variable(RNG.normal(size=(12, 3)).astype(np.float32) * 0.5)
        self.conv1 = tf.Variable(RNG.normal(size=(3, 3, 4)).astype(np.float32) * 0.3)
        self.conv3 = tf.Variable(RNG.normal(size=(2, 2, 2, 1, 2)).astype(np.float32) * 0.3)

    @tf.function(input_signature=[tf.TensorSpec([2, 6], tf.int32), tf.TensorSpec([2, 4, 4, 4, 1], tf.float32),
                                  tf.TensorSpec([2, 2], tf.int32), tf.TensorSpec([2, 6, 4], tf.float32)])
    def loss(self, ids, volume, labels, targets):
        frames = tf.nn.conv1d(tf.nn.embedding_lookup(self.table, ids, max_norm=2.0), self.conv1, 1, "SAME")
        pooled = tf.nn.max_pool3d(tf.nn.conv3d(volume, self.conv3, [1, 1, 1, 1, 1], "SAME"), 2, 2, "VALID")
        frames = frames + tf.reduce_mean(pooled)  # [2, 6, 4]: 6 frames of 4 classes (blank 0)
        ctc = tf.nn.ctc_loss(labels, frames, tf.constant([2, 1]), tf.constant([6, 5]), logits_time_major=False)
        tags = tf.nn.sigmoid_cross_entropy_with_logits(labels=targets, logits=frames)
        return tf.nn.compute_average_loss(ctc) + tf.reduce_mean(tags)


def test_trains_saves_and_loads(tmp_path):
    model = Tagger()
    args = (tf.constant(RNG.integers(0, 12, size=(2, 6)), tf.int32),
            tf.constant(RNG.normal(size=(2, 4, 4, 4, 1)).astype(np.float32)),
            tf.constant([[1, 3], [2, 0]], tf.int32),
            tf.constant(RNG.integers(0, 2, size=(2, 6, 4)).astype(np.float32)))
    optimizer = tf.keras.optimizers.Adam(0.05)
    first = float(model.loss(*args))
    for _ in range(15):
        with tf.GradientTape() as tape:
            value = model.loss(*args)
        grads = tape.gradient(value, model.trainable_variables)
        assert all(g is not None for g in grads)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    trained = float(model.loss(*args))
    assert trained < 0.8 * first
    tf.saved_model.save(model, str(tmp_path / "tagger"))
    loaded = tf.saved_model.load(str(tmp_path / "tagger"))
    np.testing.assert_allclose(float(loaded.loss(*args)), trained, rtol=1e-5)
