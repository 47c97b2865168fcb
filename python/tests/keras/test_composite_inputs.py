"""Ragged and sparse inputs to Keras models (Input(ragged=True) / Input(sparse=True)): Embedding keeps the rows
ragged, the recurrent layers read each row to its length (checked row by row against the dense layer on that row
alone), Dense takes ragged rows and SparseTensors (against the dense equivalent), fit / predict batch and
shuffle them by rows, and the configs keep the flags. The Keras part of TF's ragged-tensor guide runs."""
import numpy as np
import pytest

import kiln as tf

K = tf.keras
L = K.layers
ROWS = [[11, 2, 3, 4], [5], [6, 7, 8, 9, 10]]


def ragged_ids():
    return tf.ragged.constant(ROWS, dtype=tf.int64)


def test_the_ragged_guide_model_trains_and_predicts():
    """TF's "Ragged tensors" guide, its Keras section (hashed words -> Embedding -> LSTM -> Dense)."""
    tf.keras.utils.set_random_seed(0)
    hashed_words = ragged_ids()
    is_question = tf.constant([1, 0, 1])
    keras_model = tf.keras.Sequential([
        tf.keras.layers.Input(shape=[None], dtype=tf.int64, ragged=True),
        tf.keras.layers.Embedding(1000, 16),
        tf.keras.layers.LSTM(32, use_bias=False),
        tf.keras.layers.Dense(32),
        tf.keras.layers.Activation(tf.nn.relu),
        tf.keras.layers.Dense(1)
    ])
    keras_model.compile(loss="binary_crossentropy", optimizer="rmsprop")
    history = keras_model.fit(hashed_words, is_question, epochs=5, verbose=0)
    assert len(history.history["loss"]) == 5 and np.isfinite(history.history["loss"]).all()
    predicted = keras_model.predict(hashed_words, verbose=0)
    assert predicted.shape == (3, 1)
    np.testing.assert_allclose(predicted, keras_model(hashed_words).numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("layer_class", [L.SimpleRNN, L.LSTM, L.GRU])
def test_a_recurrent_layer_reads_each_ragged_row_to_its_length(layer_class):
    embed = L.Embedding(20, 3)
    rnn = layer_class(4)
    sequences = layer_class(4, return_sequences=True)
    out = rnn(embed(ragged_ids())).numpy()
    seq_out = sequences(embed(ragged_ids()))
    assert isinstance(seq_out, tf.RaggedTensor)
    assert seq_out.row_lengths().numpy().tolist() == [4, 1, 5]
    traced = tf.function(lambda r: rnn(embed(r)))(ragged_ids()).numpy()
    for i, row in enumerate(ROWS):
        alone = embed(np.array([row]))
        np.testing.assert_allclose(out[i], rnn(alone).numpy()[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(traced[i], out[i], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(seq_out[i].numpy(), sequences(alone).numpy()[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="does not support unrolling"):
        layer_class(2, unroll=True)(embed(ragged_ids()))


def test_embedding_and_dense_keep_rows_ragged():
    embed, dense = L.Embedding(20, 3), L.Dense(2)
    e = embed(ragged_ids())
    assert isinstance(e, tf.RaggedTensor) and e.shape.as_list() == [3, None, 3]
    np.testing.assert_allclose(e.flat_values.numpy(), embed.embeddings.numpy()[np.concatenate(ROWS)])
    d = dense(e)
    kernel, bias = dense.get_weights()
    np.testing.assert_allclose(d.flat_values.numpy(), e.flat_values.numpy() @ kernel + bias, rtol=1e-5, atol=1e-6)
    assert d.row_lengths().numpy().tolist() == [4, 1, 5]


def test_sparse_inputs_feed_dense_as_their_dense_values():
    rng = np.random.default_rng(1)
    dense = np.where(rng.uniform(size=(12, 6)) < 0.3, rng.standard_normal((12, 6)), 0).astype(np.float32)
    sparse = tf.sparse.from_dense(dense)
    inputs = K.Input(shape=(6,), sparse=True)
    model = K.Model(inputs, L.Dense(3, activation="tanh")(L.Dense(4)(inputs)))
    np.testing.assert_allclose(model(sparse).numpy(), model(dense).numpy(), rtol=1e-5, atol=1e-6)
    model.compile(K.optimizers.SGD(0.1), "mse")
    targets = np.tanh(dense[:, :3])
    history = model.fit(sparse, targets, batch_size=5, epochs=20, shuffle=True, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    np.testing.assert_allclose(model.predict(sparse, batch_size=5, verbose=0), model(dense).numpy(), rtol=1e-5,
                               atol=1e-6)


def test_fit_batches_composites_by_rows():
    from kiln.keras._composite_rows import rows_of
    rows = rows_of(ragged_ids())
    assert len(rows) == 3 and rows.shape == (3, None)
    assert rows.take([2, 0]).to_list() == [ROWS[2], ROWS[0]]
    assert rows[1:].take([0]).to_list() == [ROWS[1]]
    dense = np.arange(12, dtype=np.float32).reshape(4, 3) * (np.arange(12).reshape(4, 3) % 2)
    picked = rows_of(tf.sparse.from_dense(dense)).take([3, 1])
    np.testing.assert_array_equal(tf.sparse.to_dense(picked).numpy(), dense[[3, 1]])


def test_input_flags_in_configs_and_files(tmp_path):
    inputs = K.Input(shape=(None,), dtype="int64", ragged=True)
    model = K.Model(inputs, L.GRU(3)(L.Embedding(20, 4)(inputs)))
    assert model.get_config()["layers"][0]["config"]["ragged"] is True
    model.save(tmp_path / "m.keras")
    loaded = K.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(loaded(ragged_ids()).numpy(), model(ragged_ids()).numpy(), rtol=1e-6)
    seq = K.Sequential([K.Input(shape=(4,), sparse=True), L.Dense(2)])
    assert seq.get_config()["layers"][0]["config"]["sparse"] is True
    with pytest.raises(ValueError, match="Cannot set both sparse and ragged to True"):
        K.Input(shape=(3,), sparse=True, ragged=True)
