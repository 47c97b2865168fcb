"""Keras' implicit masks: Embedding(mask_zero=True) and Masking make them, layers carry them to the next layer
(Sequential, functional and subclassed models), and SimpleRNN / LSTM / GRU, GlobalAveragePooling1D,
MultiHeadAttention, the losses and the metrics consume them. The main check: a masked model on padded sequences
gives the outputs, loss and gradients of the same model run without masks on each sequence unpadded, eagerly and
traced (one trace), and hand-computed cases where the numbers are small."""
import numpy as np
import pytest

import kiln as tf

K = tf.keras
rng = np.random.default_rng(5)

# Three right-padded sequences of token ids (0 is padding) and their lengths.
IDS = np.array([[3, 1, 2, 0, 0], [1, 4, 0, 0, 0], [2, 2, 2, 2, 1]], np.int32)
LENGTHS = [3, 2, 5]
LABELS = np.array([[1, 0, 2, 0, 0], [2, 1, 0, 0, 0], [0, 1, 2, 1, 0]], np.int32)


def randn(*shape, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


# ---- making and carrying masks ---------------------------------------------------------------------

def test_embedding_with_mask_zero_makes_the_mask_and_the_next_layers_carry_it():
    embedding = K.layers.Embedding(5, 3, mask_zero=True)
    dense = K.layers.Dense(2)
    h = embedding(IDS)
    np.testing.assert_array_equal(h._keras_mask.numpy(), IDS != 0)
    np.testing.assert_array_equal(embedding.compute_mask(IDS).numpy(), IDS != 0)
    assert embedding.get_config()["mask_zero"] is True and embedding.supports_masking
    y = dense(h)
    np.testing.assert_array_equal(y._keras_mask.numpy(), IDS != 0)  # Dense passes it on
    assert K.layers.Flatten()(y)._keras_mask is None                 # a layer without masking drops it
    assert getattr(K.layers.Embedding(5, 3)(IDS), "_keras_mask") is None
    assert K.layers.GlobalAveragePooling1D()(y)._keras_mask is None  # consumed


def test_masking_zeroes_the_masked_steps_and_masks_them():
    x = np.array([[[1, 2], [0, 0], [0, 3]], [[0, 0], [0, 0], [5, 0]]], np.float32)
    y = K.layers.Masking(mask_value=0.0)(x)
    np.testing.assert_array_equal(y.numpy(), x)
    np.testing.assert_array_equal(y._keras_mask.numpy(), [[True, False, True], [False, False, True]])
    y = K.layers.Masking(mask_value=2.0)(np.array([[[2, 2], [2, 1]]], np.float32))
    np.testing.assert_array_equal(y.numpy(), [[[0, 0], [2, 1]]])
    np.testing.assert_array_equal(y._keras_mask.numpy(), [[False, True]])
    assert K.layers.Masking(mask_value=-1.0).get_config()["mask_value"] == -1.0


def test_a_custom_layer_supports_masking_by_overriding_compute_mask_and_receives_the_mask():
    seen = []

    class Shift(K.layers.Layer):
        def call(self, inputs, mask=None):
            seen.append(None if mask is None else np.asarray(mask))
            return inputs + 1.0

        def compute_mask(self, inputs, mask=None):
            return tf.logical_not(mask)

    h = K.layers.Embedding(5, 3, mask_zero=True)(IDS)
    layer = Shift()
    assert layer.supports_masking
    y = layer(h)
    np.testing.assert_array_equal(seen[-1], IDS != 0)
    np.testing.assert_array_equal(y._keras_mask.numpy(), IDS == 0)
    explicit = np.ones((3, 5), bool)
    layer(h, mask=explicit)  # an explicit mask wins over the one the input carries
    np.testing.assert_array_equal(seen[-1], explicit)


def test_a_layer_without_masking_refuses_a_mask_in_compute_mask():
    with pytest.raises(TypeError, match="does not support masking"):
        K.layers.Flatten().compute_mask(np.ones((2, 3)), np.ones((2, 3), bool))


# ---- recurrent layers --------------------------------------------------------------------------------

def padded_and_unpadded(layer_class, **options):
    """(model on the padded ids, the same layers on one unpadded sequence)."""
    embedding = K.layers.Embedding(5, 3, mask_zero=True)
    rnn = layer_class(4, **options)
    return K.Sequential([embedding, rnn]), (lambda ids: rnn(embedding(ids)))


@pytest.mark.parametrize("layer_class", [K.layers.SimpleRNN, K.layers.LSTM, K.layers.GRU])
@pytest.mark.parametrize("return_sequences", [False, True])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_masked_recurrent_layers_give_the_unpadded_outputs(layer_class, return_sequences, go_backwards):
    model, unpadded = padded_and_unpadded(layer_class, return_sequences=return_sequences,
                                          go_backwards=go_backwards)
    eager = model(IDS).numpy()
    traced = tf.function(lambda ids: model(ids))(IDS).numpy()
    np.testing.assert_array_equal(traced, eager)
    for b, n in enumerate(LENGTHS):
        alone = unpadded(IDS[b:b + 1, :n]).numpy()[0]
        if not return_sequences:
            close(eager[b], alone)
        elif not go_backwards:
            # Masked steps repeat the last output (Keras' backend.rnn).
            close(eager[b], np.concatenate([alone, np.repeat(alone[-1:], 5 - n, 0)]))
        else:
            # Backwards the padding comes first: the output is zeros until the first kept step.
            close(eager[b], np.concatenate([np.zeros((5 - n, 4), np.float32), alone]))


def test_masked_steps_keep_the_states_and_zero_output_for_mask_writes_zeros():
    x = randn(2, 4, 3)
    mask = np.array([[False, True, False, True], [True, True, True, False]])
    layer = K.layers.LSTM(2, return_sequences=True, return_state=True)
    seq, h, c = layer(x, mask=mask)
    seq = seq.numpy()
    np.testing.assert_array_equal(seq[0, 0], 0)          # nothing kept yet: zeros
    np.testing.assert_array_equal(seq[0, 2], seq[0, 1])  # a masked step repeats the last output
    np.testing.assert_array_equal(seq[1, 3], seq[1, 2])
    np.testing.assert_array_equal(h.numpy(), seq[:, -1])
    alone = [layer(x[b:b + 1, mask[b]], initial_state=None) for b in range(2)]
    for b in range(2):
        close(h.numpy()[b], alone[b][1].numpy()[0])
        close(c.numpy()[b], alone[b][2].numpy()[0])
    zeros = K.layers.LSTM(2, return_sequences=True, zero_output_for_mask=True)
    out = zeros(x, mask=mask).numpy()
    np.testing.assert_array_equal(out[~mask], 0)
    assert np.all(out[mask] != 0)


def test_unrolled_masked_recurrent_layer_equals_the_loop():
    embedding = K.layers.Embedding(5, 3, mask_zero=True)
    loop = K.layers.GRU(4, return_sequences=True)
    unrolled = K.layers.GRU(4, return_sequences=True, unroll=True)
    want = loop(embedding(IDS))
    unrolled(embedding(IDS))
    unrolled.set_weights(loop.get_weights())
    got = tf.function(lambda ids: unrolled(embedding(ids)))(IDS)
    close(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(want._keras_mask.numpy(), IDS != 0)


def test_a_bad_mask_is_named():
    with pytest.raises(ValueError, match=r"the mask must be \[batch, time\]"):
        K.layers.SimpleRNN(2)(randn(2, 3, 4), mask=np.ones((2, 3, 1), bool))


# ---- loss, gradients, fit -------------------------------------------------------------------------------

def tagger(**rnn_options):
    """Embedding(mask_zero) -> LSTM over the sequences -> Dense logits per step, and its layers."""
    layers = [K.layers.Embedding(5, 3, mask_zero=True), K.layers.LSTM(4, return_sequences=True, **rnn_options),
              K.layers.Dense(3)]
    return K.Sequential(layers), layers


LOSS = K.losses.SparseCategoricalCrossentropy(from_logits=True)


def unpadded_loss(layers):
    """The mean loss over every kept step, each sequence run alone without padding (no mask anywhere)."""
    total, count = 0.0, 0
    for b, n in enumerate(LENGTHS):
        h = tf.gather(layers[0].embeddings, IDS[b:b + 1, :n])  # the embedding's rows, without a mask
        logits = layers[2](layers[1](h))
        losses = K.losses.sparse_categorical_crossentropy(LABELS[b:b + 1, :n], logits, from_logits=True)
        total, count = total + tf.reduce_sum(losses), count + n
    return total / count


def test_the_loss_of_a_masked_output_is_the_mean_over_kept_steps():
    y_pred = tf.constant(randn(2, 3, 4))
    y_true = rng.integers(0, 4, (2, 3))
    mask = np.array([[True, True, False], [True, False, False]])
    y_pred._keras_mask = tf.constant(mask)
    per_step = K.losses.sparse_categorical_crossentropy(y_true, y_pred, from_logits=True).numpy()
    loss = K.losses.SparseCategoricalCrossentropy(from_logits=True)
    close(loss(y_true, y_pred), per_step[mask].mean())
    weights = np.array([2.0, 0.5], np.float32)
    close(loss(y_true, y_pred, sample_weight=weights), (per_step * weights[:, None])[mask].sum() / mask.sum())
    total = K.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum")
    close(total(y_true, y_pred), per_step[mask].sum())
    none = K.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    close(none(y_true, y_pred), per_step * mask)


@pytest.mark.parametrize("traced", [False, True])
def test_masked_loss_and_gradients_equal_the_unpadded_ones(traced):
    model, layers = tagger()
    model(IDS)

    def loss_and_grads(fn):
        def run():
            with tf.GradientTape() as tape:
                loss = fn()
            return loss, tape.gradient(loss, model.trainable_variables)
        return tf.function(run)() if traced else run()

    loss, grads = loss_and_grads(lambda: LOSS(LABELS, model(IDS)))
    want_loss, want_grads = loss_and_grads(lambda: unpadded_loss(layers))
    close(loss.numpy(), want_loss.numpy(), rtol=1e-6)
    for g, w in zip(grads, want_grads):
        close(tf.convert_to_tensor(g).numpy(), tf.convert_to_tensor(w).numpy(), rtol=1e-4, atol=1e-7)


def test_fit_with_masks_traces_once_and_weighs_loss_and_metrics_by_the_mask():
    model, layers = tagger()
    model.compile(optimizer=K.optimizers.SGD(0.1), loss=LOSS, metrics=["sparse_categorical_accuracy"])
    model(IDS)
    start_loss = float(unpadded_loss(layers))
    logits = model(IDS).numpy()
    kept = IDS != 0
    accuracy = (logits.argmax(-1) == LABELS)[kept].mean()
    logs = model.evaluate(IDS, LABELS, verbose=0, return_dict=True)
    close(logs["loss"], start_loss, rtol=1e-6)
    close(logs["sparse_categorical_accuracy"], accuracy, rtol=1e-6)
    history = model.fit(IDS, LABELS, batch_size=3, epochs=3, verbose=0, shuffle=False)
    close(history.history["loss"][0], start_loss, rtol=1e-6)
    assert history.history["loss"][2] < history.history["loss"][0]
    assert model.train_function.experimental_get_tracing_count() == 1
    close(model.evaluate(IDS, LABELS, verbose=0, return_dict=True)["loss"], float(unpadded_loss(layers)),
          rtol=1e-6)


# ---- functional and subclassed models --------------------------------------------------------------------

def test_a_functional_model_carries_masks_between_its_layers():
    inputs = K.Input((None,), dtype="int32")
    h = K.layers.Embedding(5, 3, mask_zero=True)(inputs)
    h = K.layers.GRU(4, return_sequences=True)(h)
    outputs = K.layers.Dense(2)(h)
    model = K.Model(inputs, outputs)
    sequential = K.Sequential(model.layers[1:])
    y = model(IDS)
    np.testing.assert_array_equal(y.numpy(), sequential(IDS).numpy())
    np.testing.assert_array_equal(y._keras_mask.numpy(), IDS != 0)
    np.testing.assert_array_equal(tf.function(lambda ids: model(ids))(IDS).numpy(), y.numpy())

    # A mask given to a functional model is its inputs' mask.
    inputs = K.Input((None, 3))
    gru = K.layers.GRU(2)
    model = K.Model(inputs, gru(inputs))
    x, mask = randn(3, 5, 3), IDS != 0
    np.testing.assert_array_equal(model(x, mask=mask).numpy(), gru(x, mask=mask).numpy())
    assert not np.allclose(model(x).numpy(), gru(x, mask=mask).numpy())


def test_a_subclassed_model_passes_masks_as_tf_does():
    class Classifier(K.Model):
        def __init__(self):
            super().__init__()
            self.embedding = K.layers.Embedding(5, 3, mask_zero=True)
            self.lstm = K.layers.LSTM(4)
            self.out = K.layers.Dense(2)

        def call(self, inputs):
            return self.out(self.lstm(self.embedding(inputs)))

    model = Classifier()
    y = model(IDS).numpy()
    for b, n in enumerate(LENGTHS):
        close(y[b], model.out(model.lstm(tf.gather(model.embedding.embeddings, IDS[b:b + 1, :n]))).numpy()[0])


# ---- GlobalAveragePooling1D ---------------------------------------------------------------------------------

def test_global_average_pooling_1d_averages_the_kept_steps():
    x = np.arange(24, dtype=np.float32).reshape(2, 4, 3)
    mask = np.array([[True, False, True, False], [True, True, True, True]])
    pool = K.layers.GlobalAveragePooling1D()
    close(pool(x).numpy(), x.mean(1))
    close(pool(x, mask=mask).numpy(), [x[0, [0, 2]].mean(0), x[1].mean(0)])
    keep = K.layers.GlobalAveragePooling1D(keepdims=True)
    assert keep(x, mask=mask).shape == (2, 1, 3) and keep.compute_output_shape((None, 4, 3)).as_list() == [None, 1, 3]
    model = K.Sequential([K.layers.Embedding(5, 3, mask_zero=True), K.layers.GlobalAveragePooling1D()])
    y = model(IDS).numpy()
    table = model.layers[0].embeddings.numpy()
    for b, n in enumerate(LENGTHS):
        close(y[b], table[IDS[b, :n]].mean(0))
    np.testing.assert_array_equal(tf.function(lambda ids: model(ids))(IDS).numpy(), y)


# ---- MultiHeadAttention ----------------------------------------------------------------------------------------

def test_attention_over_masked_inputs_equals_attention_over_the_unpadded_ones():
    embedding = K.layers.Embedding(5, 4, mask_zero=True)
    attention = K.layers.MultiHeadAttention(num_heads=2, key_dim=3)
    h = embedding(IDS)
    y = attention(h, h)
    np.testing.assert_array_equal(y._keras_mask.numpy(), IDS != 0)  # the query's mask
    traced = tf.function(lambda ids: attention(embedding(ids), embedding(ids)))(IDS)
    np.testing.assert_array_equal(traced.numpy(), y.numpy())
    for b, n in enumerate(LENGTHS):
        alone = tf.gather(embedding.embeddings, IDS[b:b + 1, :n])
        close(y.numpy()[b, :n], attention(alone, alone).numpy()[0])


def test_attention_combines_the_query_value_and_key_masks_with_the_attention_mask():
    attention = K.layers.MultiHeadAttention(num_heads=1, key_dim=2)
    q, v = randn(2, 3, 4), randn(2, 4, 4)
    query_mask = np.array([[True, True, False], [True, True, True]])
    value_mask = np.array([[True, False, True, True], [True, True, True, False]])
    key_mask = np.array([[True, True, True, False], [False, True, True, True]])
    attention_mask = rng.uniform(size=(2, 3, 4)) > 0.2
    _, scores = attention(q, v, key=v, attention_mask=attention_mask, query_mask=query_mask, value_mask=value_mask,
                          key_mask=key_mask, return_attention_scores=True)
    combined = attention_mask & query_mask[:, :, None] & value_mask[:, None, :] & key_mask[:, None, :]
    _, want = attention(q, v, key=v, attention_mask=combined, return_attention_scores=True)
    np.testing.assert_array_equal(scores.numpy(), want.numpy())
    # The same masks carried by the inputs.
    qt, vt, kt = tf.identity(q), tf.identity(v), tf.identity(v)
    qt._keras_mask, vt._keras_mask, kt._keras_mask = (tf.constant(m) for m in (query_mask, value_mask, key_mask))
    _, carried = attention(qt, vt, key=kt, attention_mask=attention_mask, return_attention_scores=True)
    np.testing.assert_array_equal(carried.numpy(), want.numpy())


@pytest.mark.parametrize("traced", [False, True])
def test_an_attention_classifier_on_padded_sequences_has_the_unpadded_loss_and_gradients(traced):
    """Embedding(mask_zero) -> self-attention -> masked mean -> Dense: the padding changes nothing."""
    embedding = K.layers.Embedding(5, 4, mask_zero=True)
    attention = K.layers.MultiHeadAttention(num_heads=2, key_dim=3)
    pool, classify = K.layers.GlobalAveragePooling1D(), K.layers.Dense(2)
    labels = np.array([1, 0, 1])

    def padded():
        h = embedding(IDS)
        return LOSS(labels, classify(pool(attention(h, h))))

    def unpadded():
        logits = []
        for b, n in enumerate(LENGTHS):
            h = tf.gather(embedding.embeddings, IDS[b:b + 1, :n])
            logits.append(classify(pool(attention(h, h))))
        return LOSS(labels, tf.concat(logits, 0))

    padded()
    variables = embedding.trainable_variables + attention.trainable_variables + classify.trainable_variables

    def loss_and_grads(fn):
        def run():
            with tf.GradientTape() as tape:
                loss = fn()
            return loss, tape.gradient(loss, variables)
        return tf.function(run)() if traced else run()

    loss, grads = loss_and_grads(padded)
    want_loss, want_grads = loss_and_grads(unpadded)
    close(loss.numpy(), want_loss.numpy(), rtol=1e-6)
    for g, w in zip(grads, want_grads):
        close(tf.convert_to_tensor(g).numpy(), tf.convert_to_tensor(w).numpy(), rtol=1e-4, atol=1e-7)


def test_a_loss_traced_with_int64_numpy_labels():
    # Labels that become constants of the traced graph skip the eager range check (regression).
    loss = tf.function(lambda: LOSS(np.array([1, 0], np.int64), tf.constant(randn(2, 3))))
    assert np.isfinite(float(loss()))


def test_a_masked_tagger_saves_and_loads(tmp_path):
    _, layers = tagger()
    model = K.Sequential([K.Input((None,), dtype="int32")] + layers)  # any length
    serve = tf.function(lambda ids: model(ids), input_signature=[tf.TensorSpec([None, None], tf.int32)])
    tf.saved_model.save(model, str(tmp_path / "m"), signatures=serve)
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    longer = np.concatenate([IDS, np.zeros((3, 2), np.int32)], 1)  # more padding changes nothing
    got = loaded.signatures["serving_default"](ids=longer)["output_0"].numpy()
    np.testing.assert_array_equal(got[:, :5], model(IDS).numpy())
    np.testing.assert_array_equal(got, model(longer).numpy())


@pytest.mark.parametrize("traced", [False, True])
def test_batch_normalization_takes_the_statistics_of_the_kept_steps(traced):
    """Keras 2.12: masked, the batch mean and variance (and so the moving ones) are those of the kept positions,
    the positions an unpadded batch would hold."""
    x = randn(3, 5, 2)
    kept = IDS != 0
    masked, plain = K.layers.BatchNormalization(momentum=0.5), K.layers.BatchNormalization(momentum=0.5)

    def run(layer, inputs, mask=None):
        call = (lambda: layer(inputs, training=True, mask=mask))
        return (tf.function(call)() if traced else call()).numpy()

    got = run(masked, x, kept)
    want = run(plain, x[kept][None])  # [1, kept positions, features]
    np.testing.assert_allclose(got[kept], want[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(masked.moving_mean.numpy(), plain.moving_mean.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(masked.moving_variance.numpy(), plain.moving_variance.numpy(), rtol=1e-5)
    # Carried by the inputs: an Embedding's mask reaches it.
    embedding = K.layers.Embedding(5, 2, mask_zero=True)
    norm = K.layers.BatchNormalization()
    y = norm(embedding(IDS), training=True)
    np.testing.assert_array_equal(y._keras_mask.numpy(), kept)
    np.testing.assert_allclose(y.numpy()[kept].mean(0), 0, atol=1e-5)


def test_masking_before_an_lstm_gives_the_unpadded_predictions_and_fits():
    x = randn(4, 5, 3)
    lengths = [5, 3, 1, 4]
    for b, n in enumerate(lengths):
        x[b, n:] = 0.0
    model = K.Sequential([K.layers.Masking(mask_value=0.0, input_shape=(5, 3)), K.layers.LSTM(4), K.layers.Dense(1)])
    lstm, dense = model.layers[1:]
    predicted = model.predict(x, verbose=0)  # traced (predict_function)
    for b, n in enumerate(lengths):
        close(predicted[b], dense(lstm(x[b:b + 1, :n])).numpy()[0])
    model.compile(optimizer=K.optimizers.SGD(0.1), loss="mse")
    y = randn(4, 1)
    history = model.fit(x, y, epochs=3, batch_size=4, verbose=0)
    assert history.history["loss"][2] < history.history["loss"][0]
    assert model.train_function.experimental_get_tracing_count() == 1
