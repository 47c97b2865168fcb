"""Mixed precision (Keras 2.15): a mixed_bfloat16 layer casts its floating inputs to bfloat16, reads its float32
weights as bfloat16 (AutoCastVariable) and outputs bfloat16; values against NumPy references that round inputs and
weights to bfloat16 and accumulate in float32; eager = traced; gradients reach the float32 variables; configs and
.keras files keep the policy."""
import os
import warnings

import numpy as np
import pytest

import kiln as tf

K = tf.keras
MP = tf.keras.mixed_precision


@pytest.fixture(autouse=True)
def _reset_policy():
    yield
    MP.set_global_policy(None)


def to_bf16(a):
    """float32 values rounded to the nearest bfloat16 (ties to even), as float32."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32)


def matmul_f32(a, b):
    """Products of bf16 values are exact in float32; the sums are float32's (here exact in float64, then once
    rounded: within float32's rounding of any order, far below a bf16 step)."""
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def conv_valid(x, f):
    """NHWC x HWIO, stride 1, VALID, in float64."""
    kh, kw = f.shape[:2]
    oh, ow = x.shape[1] - kh + 1, x.shape[2] - kw + 1
    out = np.zeros((x.shape[0], oh, ow, f.shape[3]))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nhwc,co->nhwo", x[:, i:i + oh, j:j + ow, :].astype(np.float64), f[i, j].astype(np.float64))
    return out.astype(np.float32)


def assert_bf16_close(got, want, steps=1):
    """Within `steps` bfloat16 steps (8-bit mantissa: 2^-8 relative), measured against the larger of the element and
    a 64th of the largest magnitude (sums that cancel)."""
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    scale = max(float(np.abs(want).max()), 1e-30)
    tol = steps * 2.0 ** -8 * np.maximum(np.abs(want), scale / 64)
    assert np.all(np.abs(got - want) <= tol), np.abs(got - want).max()


def test_policies_and_layer_dtypes():
    policy = MP.Policy("mixed_bfloat16")
    assert (policy.name, policy.compute_dtype, policy.variable_dtype) == ("mixed_bfloat16", "bfloat16", "float32")
    assert MP.Policy("mixed_float16").compute_dtype == "float16"
    assert MP.Policy("float64").compute_dtype == MP.Policy("float64").variable_dtype == "float64"
    with pytest.raises(TypeError, match="must be a string, not a DType"):
        MP.Policy(tf.float32)
    with pytest.raises(ValueError, match="have been removed from TensorFlow"):
        MP.Policy("infer_float32_vars")
    MP.set_global_policy("mixed_bfloat16")
    assert repr(MP.global_policy()) == '<Policy "mixed_bfloat16">'
    dense = K.layers.Dense(3)
    assert (dense.dtype_policy.name, dense.compute_dtype, dense.variable_dtype, dense.dtype) == \
        ("mixed_bfloat16", "bfloat16", "float32", "float32")
    assert K.layers.Dense(3, dtype="float64").dtype_policy.name == "float64"
    assert K.layers.Dense(3, dtype=MP.Policy("float32")).compute_dtype == "float32"
    with pytest.raises(ValueError, match="floating-point policies"):
        MP.set_global_policy("int32")
    MP.set_global_policy(None)
    assert K.layers.Dense(1).dtype_policy.name == "float32"


def test_dense_under_mixed_bfloat16_against_numpy():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 40)).astype(np.float32)
    layer = K.layers.Dense(24, dtype="mixed_bfloat16", bias_initializer="random_normal")
    y = layer(x)
    assert y.dtype == tf.bfloat16
    assert layer.kernel.dtype == tf.float32 and layer.bias.dtype == tf.float32 and \
        isinstance(layer.kernel, tf.Variable)
    kernel, bias = layer.kernel.numpy(), layer.bias.numpy()
    assert kernel.dtype == np.float32
    want = to_bf16(to_bf16(matmul_f32(to_bf16(x), to_bf16(kernel))) + to_bf16(bias))  # MatMul, then BiasAdd
    assert_bf16_close(tf.cast(y, tf.float32).numpy(), want, steps=2)
    # Traced: the same kernels, the same bits.
    traced = tf.function(lambda v: layer(v))(tf.constant(x))
    np.testing.assert_array_equal(tf.cast(traced, tf.float32).numpy(), tf.cast(y, tf.float32).numpy())


def test_conv2d_under_mixed_bfloat16_against_numpy():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 9, 8, 3)).astype(np.float32)
    layer = K.layers.Conv2D(5, 3, dtype="mixed_bfloat16", use_bias=False)
    y = layer(x)
    assert y.dtype == tf.bfloat16 and y.shape == (2, 7, 6, 5)
    want = to_bf16(conv_valid(to_bf16(x), to_bf16(layer.kernel.numpy())))
    assert_bf16_close(tf.cast(y, tf.float32).numpy(), want)
    traced = tf.function(lambda v: layer(v))(tf.constant(x))
    np.testing.assert_array_equal(tf.cast(traced, tf.float32).numpy(), tf.cast(y, tf.float32).numpy())


def test_gradients_reach_the_float32_variables():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(8, 12)).astype(np.float32)
    g = rng.normal(size=(8, 6)).astype(np.float32)
    layer = K.layers.Dense(6, dtype="mixed_bfloat16")
    layer.build((None, 12))

    def grads(inputs):
        with tf.GradientTape() as tape:
            y = layer(inputs)
            loss = tf.reduce_sum(tf.cast(y, tf.float32) * g)
        return tape.gradient(loss, [layer.kernel, layer.bias])

    d_kernel, d_bias = grads(tf.constant(x))
    assert d_kernel.dtype == tf.float32 and d_bias.dtype == tf.float32  # through the Cast to the variables
    g16 = to_bf16(g)  # the output gradient meets the bf16 MatMul in bf16
    assert_bf16_close(d_kernel.numpy(), to_bf16(matmul_f32(to_bf16(x).T, g16)))
    assert_bf16_close(d_bias.numpy(), g16.sum(0), steps=2)
    traced = tf.function(grads)(tf.constant(x))
    np.testing.assert_array_equal(traced[0].numpy(), d_kernel.numpy())
    np.testing.assert_array_equal(traced[1].numpy(), d_bias.numpy())


def test_autocast_variable_reads_as_the_compute_dtype_inside_call():
    seen = {}

    class Probe(K.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight("w", (input_shape[-1], 2))
            self.keep = self.add_weight("keep", (2,), experimental_autocast=False)

        def call(self, inputs):
            seen.update(w=self.w.dtype, keep=self.keep.dtype, read=self.w.read_value().dtype, inputs=inputs.dtype)
            return tf.matmul(inputs, self.w) + tf.cast(self.keep, inputs.dtype)

    layer = Probe(dtype="mixed_bfloat16")
    out = layer(np.ones((1, 3), np.float32))
    assert seen == {"w": tf.bfloat16, "keep": tf.float32, "read": tf.bfloat16, "inputs": tf.bfloat16}
    assert out.dtype == tf.bfloat16
    assert type(layer.w).__name__ == "AutoCastVariable" and type(layer.keep) is tf.Variable
    assert layer.w.dtype == tf.float32 and layer.w.true_dtype == tf.float32  # outside call
    assert repr(layer.w).startswith("<AutoCastVariable 'probe/w:0' shape=(3, 2) dtype=float32 "
                                    "dtype_to_cast_to=float32, numpy=")
    # A float32 layer keeps plain variables and computes in float32.
    plain = K.layers.Dense(2)
    assert plain(np.ones((1, 3), np.float32)).dtype == tf.float32 and type(plain.kernel) is tf.Variable


def test_functional_model_output_dtypes_follow_the_guide():
    MP.set_global_policy("mixed_bfloat16")
    inputs = K.Input(shape=(12,))
    assert inputs.dtype == tf.float32  # inputs stay floatx()
    dense = K.layers.Dense(8, activation="relu")
    x = dense(inputs)
    assert x.dtype == tf.bfloat16 and dense.kernel.dtype == tf.float32
    logits = K.layers.Dense(4)(x)
    outputs = K.layers.Activation("softmax", dtype="float32")(logits)
    assert logits.dtype == tf.bfloat16 and outputs.dtype == tf.float32
    model = K.Model(inputs, outputs)
    y = model(np.ones((2, 12), np.float32))
    assert y.dtype == tf.float32
    np.testing.assert_allclose(y.numpy().sum(1), 1.0, rtol=1e-6)


def test_batch_normalization_keeps_float32_parameters_and_statistics():
    layer = K.layers.BatchNormalization(dtype="mixed_bfloat16", momentum=0.5)
    x = np.random.default_rng(3).normal(2.0, 3.0, size=(64, 4)).astype(np.float32)
    y = layer(x, training=True)
    assert y.dtype == tf.bfloat16
    for v in (layer.gamma, layer.beta, layer.moving_mean, layer.moving_variance):
        assert v.dtype == tf.float32 and type(v) is tf.Variable
    # Statistics of the bf16 inputs, computed in float32 (Keras casts 16-bit inputs up).
    xb = to_bf16(x).astype(np.float64)
    np.testing.assert_allclose(layer.moving_mean.numpy(), 0.5 * xb.mean(0), rtol=1e-5)
    normalized = (xb - xb.mean(0)) / np.sqrt(xb.var(0) + 1e-3)
    assert_bf16_close(tf.cast(y, tf.float32).numpy(), to_bf16(normalized.astype(np.float32)))


def test_mixed_bfloat16_model_trains_and_saves(tmp_path):
    MP.set_global_policy("mixed_bfloat16")
    rng = np.random.default_rng(4)
    x = rng.normal(size=(256, 6)).astype(np.float32)
    y = (x @ rng.normal(size=(6, 1)) > 0).astype(np.float32)
    tf.random.set_seed(3)
    model = K.Sequential([K.Input((6,)), K.layers.Dense(16, activation="relu"),
                          K.layers.Dense(1), K.layers.Activation("sigmoid", dtype="float32")])
    model.compile(K.optimizers.Adam(0.02), "binary_crossentropy", metrics=["accuracy"])
    assert not isinstance(model.optimizer, MP.LossScaleOptimizer)  # only mixed_float16 wraps
    history = model.fit(x, y, epochs=20, batch_size=32, verbose=0)
    assert history.history["accuracy"][-1] > 0.9
    assert all(v.dtype == tf.float32 for v in model.trainable_variables)
    config = model.layers[0].get_config()
    assert config["dtype"] == {"module": "keras.mixed_precision", "class_name": "Policy",
                               "config": {"name": "mixed_bfloat16"}, "registered_name": None}
    assert model.layers[2].get_config()["dtype"] == "float32"
    path = os.path.join(tmp_path, "mixed.keras")
    model.save(path)
    MP.set_global_policy(None)
    loaded = K.models.load_model(path)
    assert [layer.dtype_policy.name for layer in loaded.layers] == ["mixed_bfloat16", "mixed_bfloat16", "float32"]
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_mixed_bfloat16_warns_only_without_bf16_instructions():
    MP._checked.discard("mixed_bfloat16")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        MP.Policy("mixed_bfloat16")
        MP.Policy("mixed_bfloat16")
    mine = [w for w in caught if "AVX512_BF16" in str(w.message)]
    assert len(mine) == (0 if MP.bfloat16_kernels_available() else 1)
    if "ONEDNN_MAX_CPU_ISA" not in os.environ and "DNNL_MAX_CPU_ISA" not in os.environ:  # which may lower it
        with open("/proc/cpuinfo") as f:
            flags = f.read()
        assert MP.bfloat16_kernels_available() == ("avx512_bf16" in flags or "amx_bf16" in flags)


def test_dense_under_mixed_float16_against_numpy():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(8, 20)).astype(np.float32)
    layer = K.layers.Dense(6, dtype="mixed_float16", use_bias=False)
    y = layer(x)
    assert y.dtype == tf.float16 and layer.kernel.dtype == tf.float32
    # float16 computes through float32 on the CPU: inputs and weights rounded, one rounding of the product.
    x16, w16 = x.astype(np.float16).astype(np.float32), layer.kernel.numpy().astype(np.float16).astype(np.float32)
    want = matmul_f32(x16, w16).astype(np.float16)
    # (equal here; one float16 step allowed where float32's sum order could tip a rounding)
    np.testing.assert_allclose(y.numpy().astype(np.float32), want.astype(np.float32), rtol=2.0 ** -10, atol=1e-6)


def test_without_bf16_instructions_mixed_bfloat16_warns_and_computes_in_float32():
    # ONEDNN_MAX_CPU_ISA hides AVX512_BF16 from oneDNN: the float32 path, the same values within bf16's steps.
    import subprocess
    import sys
    program = (
        "import warnings, numpy as np, kiln as tf\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    tf.keras.mixed_precision.set_global_policy('mixed_bfloat16')\n"
        "print(sum('AVX512_BF16' in str(w.message) for w in caught))\n"
        "print(tf.keras.mixed_precision.bfloat16_kernels_available())\n"
        "layer = tf.keras.layers.Dense(3, kernel_initializer='ones', use_bias=False)\n"
        "y = layer(np.full((2, 4), 0.5, np.float32))\n"
        "print(y.dtype.name, y.numpy().tolist())\n")
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX512_CORE")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split("\n")[:3] == ["1", "False", "bfloat16 [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]"]


def test_mixed_bfloat16_training_step_follows_float32():
    """A traced conv-relu-pool-dense step under mixed_bfloat16 (the fused bf16 pool gradient with its relu and bias
    sums, Adam widening bf16 gradients) against the same step in float32: the gradients within what rounding each
    layer's inputs to bf16 gives, and Adam's first update (lr * g / (|g| + eps)) equal where the gradient is not near
    zero."""
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 1, (16, 8, 8, 1)).astype(np.float32)
    y = rng.integers(0, 10, 16).astype(np.int32)
    init = K.initializers.GlorotUniform

    def step_of(policy):
        MP.set_global_policy(policy)
        try:
            model = K.Sequential([
                K.layers.Conv2D(16, 3, padding="same", activation="relu", input_shape=(8, 8, 1),
                                kernel_initializer=init(seed=1), bias_initializer=K.initializers.Constant(0.05)),
                K.layers.MaxPool2D(2), K.layers.Flatten(),
                K.layers.Dense(32, activation="relu", kernel_initializer=init(seed=2)),
                K.layers.Dense(10, kernel_initializer=init(seed=3)), K.layers.Softmax(dtype="float32")])
        finally:
            MP.set_global_policy(None)
        optimizer = K.optimizers.Adam(1e-3)
        loss_fn = K.losses.SparseCategoricalCrossentropy()

        @tf.function
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return grads
        before = [v.numpy() for v in model.trainable_variables]
        grads = [g.numpy() for g in step(x, y)]
        after = [v.numpy() for v in model.trainable_variables]
        assert all(g.dtype == np.float32 for g in grads)  # the variables' dtype
        return grads, [a - b for a, b in zip(after, before)]

    grads16, deltas16 = step_of("mixed_bfloat16")
    grads32, deltas32 = step_of("float32")
    assert np.linalg.norm(grads16[-1] - grads32[-1]) <= 0.01 * np.linalg.norm(grads32[-1])
    for g16, g32, d16, d32 in zip(grads16, grads32, deltas16, deltas32):
        scale = np.abs(g32).max()
        assert scale > 0
        # Rounded relu outputs move some relu masks and pooling maxima (ties made by rounding): a few
        # percent in the convolutions' gradients (measured 0.4-6%), 0.2-0.4% in the last layer's.
        assert np.linalg.norm(g16 - g32) <= 0.1 * np.linalg.norm(g32)
        clear = np.abs(g32) > 0.2 * scale
        assert clear.any()
        np.testing.assert_allclose(d16[clear], d32[clear], rtol=1e-3)
