"""RandomHeight / RandomWidth: the drawn size (truncated factor * size) and the pixels of tf.image.resize at that
size (bilinear and nearest, up and down), eager and traced (the axis None while tracing), the seed's sequence,
nothing in inference, configs and Keras' errors."""
import numpy as np
import pytest

import kiln as tf

L = tf.keras.layers
rng = np.random.default_rng(12)
IMAGES = rng.uniform(0, 255, (2, 7, 9, 3)).astype(np.float32)


@pytest.mark.parametrize("cls, axis", [(L.RandomHeight, 1), (L.RandomWidth, 2)])
@pytest.mark.parametrize("factor", [(0.5, 0.5), (-0.4, -0.4), (0.99, 0.99)])
@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_a_fixed_factor_resizes_as_tf_image_resize(cls, axis, factor, method):
    layer = cls(factor, interpolation=method)
    out = layer(IMAGES, training=True).numpy()
    size = [7, 9]
    size[axis - 1] = int(np.float32(1.0 + factor[0]) * size[axis - 1])
    want = tf.image.resize(IMAGES, size, method=method).numpy()
    assert out.shape == want.shape
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-3)
    traced = tf.function(lambda x: layer(x, training=True))
    np.testing.assert_allclose(traced(IMAGES).numpy(), want, rtol=1e-5, atol=1e-3)
    concrete = traced.get_concrete_function(tf.TensorSpec([2, 7, 9, 3]))
    assert concrete.outputs[0].shape.as_list()[axis] is None


def test_draws_follow_the_seed_and_inference_leaves_the_images():
    layer, again = L.RandomWidth((-0.5, 0.5), seed=5), L.RandomWidth((-0.5, 0.5), seed=5)
    widths = [layer(IMAGES, training=True).shape[2] for _ in range(6)]
    assert widths == [again(IMAGES, training=True).shape[2] for _ in range(6)] and len(set(widths)) > 1
    assert all(4 <= w < 14 for w in widths)  # int(9 * f), f in [0.5, 1.5)
    ints = IMAGES.astype(np.int32)
    np.testing.assert_array_equal(np.asarray(L.RandomHeight(0.3)(ints, training=False)), ints)
    single = L.RandomWidth((1.0, 1.0))(IMAGES[0], training=True)
    assert single.shape == (7, 18, 3)
    assert L.RandomHeight(0.2).compute_output_shape((None, 7, 9, 3)) == (None, None, 9, 3)


def test_config_and_errors():
    layer = L.RandomHeight((-0.2, 0.3), interpolation="nearest", seed=1)
    config = layer.get_config()
    assert config["factor"] == (-0.2, 0.3) and config["interpolation"] == "nearest" and config["seed"] == 1
    assert L.RandomHeight.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="cannot have an upper bound lesser than the lower bound"):
        L.RandomWidth((0.3, 0.1))
    with pytest.raises(ValueError, match="must have values larger than -1"):
        L.RandomHeight((-1.5, 0.1))
