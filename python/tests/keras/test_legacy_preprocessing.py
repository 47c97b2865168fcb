"""keras.preprocessing.text (Tokenizer, text_to_word_sequence, hashing_trick, one_hot), .sequence
(make_sampling_table, skipgrams, TimeseriesGenerator), .image.smart_resize, and keras.utils'
timeseries_dataset_from_array, checked against values worked out here by hand or in NumPy."""
import hashlib
import random

import numpy as np
import pytest

import kiln as tf

K = tf.keras
text = K.preprocessing.text
sequence = K.preprocessing.sequence

TEXTS = ["The cat sat on the mat.", "The dog ate my homework!", "My cat, my dog."]


def test_text_to_word_sequence_and_hashing():
    assert text.text_to_word_sequence("Hello, World! Hello-again\tnow") == ["hello", "world", "hello", "again", "now"]
    assert text.text_to_word_sequence("a|b c", filters="|", lower=False, split=" ") == ["a", "b", "c"]
    md5 = text.hashing_trick("cat dog cat", 10, hash_function="md5")
    want = [int(hashlib.md5(w.encode()).hexdigest(), 16) % 9 + 1 for w in ("cat", "dog", "cat")]
    assert md5 == want
    hashed = text.one_hot("a b c d e", 5)
    assert len(hashed) == 5 and all(1 <= h <= 4 for h in hashed)


def test_tokenizer_indexes_words_by_frequency():
    tok = text.Tokenizer()
    tok.fit_on_texts(TEXTS)
    # the: 3, my: 3, cat: 2, dog: 2, the rest 1; ties keep the order words were first seen in.
    assert list(tok.word_index)[:5] == ["the", "my", "cat", "dog", "sat"]
    assert tok.word_index["the"] == 1 and tok.index_word[2] == "my" and tok.document_count == 3
    assert tok.word_counts["the"] == 3 and tok.word_docs["my"] == 2 and tok.index_docs[1] == 2
    assert tok.texts_to_sequences(["the cat ate a fish"]) == [[1, 3, tok.word_index["ate"]]]
    assert tok.sequences_to_texts([[1, 3, 99]]) == ["the cat"]


def test_num_words_and_the_oov_token():
    tok = text.Tokenizer(num_words=4, oov_token="<OOV>")
    tok.fit_on_texts(TEXTS)
    assert tok.word_index["<OOV>"] == 1 and tok.word_index["the"] == 2 and tok.word_index["cat"] == 4
    # Indices >= num_words (and unknown words) become the OOV index.
    assert tok.texts_to_sequences(["my the cat zebra"]) == [[3, 2, 1, 1]]
    assert tok.sequences_to_texts([[3, 2, 5]]) == ["my the <OOV>"]


def test_sequences_to_matrix_modes():
    tok = text.Tokenizer()
    tok.fit_on_texts(TEXTS)
    seqs = [[1, 1, 2], []]
    n = len(tok.word_index) + 1
    binary = tok.sequences_to_matrix(seqs)
    assert binary.shape == (2, n) and binary[0, :3].tolist() == [0, 1, 1] and not binary[1].any()
    assert tok.sequences_to_matrix(seqs, "count")[0, :3].tolist() == [0, 2, 1]
    np.testing.assert_allclose(tok.sequences_to_matrix(seqs, "freq")[0, :3], [0, 2 / 3, 1 / 3])
    tfidf = tok.sequences_to_matrix(seqs, "tfidf")[0]
    np.testing.assert_allclose(tfidf[1], (1 + np.log(2)) * np.log(1 + 3 / (1 + 2)))
    np.testing.assert_allclose(tfidf[2], np.log(1 + 3 / (1 + 2)))
    np.testing.assert_array_equal(tok.texts_to_matrix(["my my the"], "count")[0, :3], [0, 1, 2])
    with pytest.raises(ValueError, match="Specify a dimension"):
        text.Tokenizer().sequences_to_matrix([[1]])
    with pytest.raises(TypeError, match="Unrecognized keyword arguments"):
        text.Tokenizer(num_wrds=3)


def test_tokenizer_json_round_trip_and_char_level():
    tok = text.Tokenizer(num_words=5, oov_token="?")
    tok.fit_on_texts(TEXTS)
    again = text.tokenizer_from_json(tok.to_json())
    assert again.word_index == tok.word_index and again.index_word == tok.index_word
    assert again.texts_to_sequences(TEXTS) == tok.texts_to_sequences(TEXTS)
    assert again.num_words == 5 and again.document_count == 3
    chars = text.Tokenizer(char_level=True)
    chars.fit_on_texts(["abba", "Ca"])
    assert list(chars.word_index) == ["a", "b", "c"]


def test_make_sampling_table_is_zipfs_subsampling():
    table = sequence.make_sampling_table(6, sampling_factor=0.01)
    rank = np.array([1, 1, 2, 3, 4, 5], dtype=float)
    f = 0.01 * (rank * (np.log(rank) + 0.577) + 0.5 - 1 / (12 * rank))
    np.testing.assert_allclose(table, np.minimum(1.0, np.sqrt(f)))


def test_skipgrams_pairs_each_word_with_its_window_and_negatives():
    seq = [3, 0, 5, 7, 2]
    couples, labels = sequence.skipgrams(seq, vocabulary_size=10, window_size=1, negative_samples=1.0, seed=4)
    positives = sorted(tuple(c) for c, label in zip(couples, labels) if label == 1)
    assert positives == [(2, 7), (5, 7), (7, 2), (7, 5)]  # 0 is padding: no pairs with it
    negatives = [c for c, label in zip(couples, labels) if label == 0]
    assert len(negatives) == 4 and all(c[0] in (5, 7, 2) and 1 <= c[1] <= 9 for c in negatives)
    draws = []
    for _ in range(2):  # the negatives come from Python's random, then `seed` shuffles: reproducible together
        random.seed(0)
        draws.append(sequence.skipgrams(seq, 10, window_size=1, negative_samples=1.0, seed=4))
    assert draws[0] == draws[1]
    _, onehot = sequence.skipgrams(seq, 10, window_size=1, negative_samples=0, categorical=True, shuffle=False)
    assert onehot == [[0, 1]] * 4


def test_timeseries_generator_batches_windows_and_targets():
    data = np.arange(20).reshape(10, 2)
    gen = sequence.TimeseriesGenerator(data, np.arange(10) * 10, length=3, sampling_rate=1, stride=2, batch_size=2)
    assert len(gen) == 2
    x, y = gen[0]
    np.testing.assert_array_equal(x, [data[0:3], data[2:5]])
    np.testing.assert_array_equal(y, [30, 50])
    x, y = gen[1]
    np.testing.assert_array_equal(y, [70, 90])
    rev = sequence.TimeseriesGenerator(data, np.arange(10), length=4, sampling_rate=2, reverse=True, batch_size=1)
    np.testing.assert_array_equal(rev[0][0][0], data[[2, 0]])
    with pytest.raises(ValueError, match="Data and targets have to be of same length"):
        sequence.TimeseriesGenerator(data, np.arange(9), length=3)


@pytest.mark.parametrize("kwargs", [dict(sequence_length=3), dict(sequence_length=2, sequence_stride=3),
                                    dict(sequence_length=3, sampling_rate=2), dict(sequence_length=2, start_index=2,
                                                                                   end_index=8)])
def test_timeseries_dataset_from_array_windows(kwargs):
    data = np.arange(30, dtype=np.float32).reshape(15, 2)
    targets = np.arange(15) * 10
    ds = K.utils.timeseries_dataset_from_array(data, targets, batch_size=4, **kwargs)
    xs, ys = zip(*[(x.numpy(), y.numpy()) for x, y in ds])
    x, y = np.concatenate(xs), np.concatenate(ys)
    start, end = kwargs.get("start_index", 0), kwargs.get("end_index", 15)
    rate, stride, length = kwargs.get("sampling_rate", 1), kwargs.get("sequence_stride", 1), kwargs["sequence_length"]
    positions = range(0, end - start - (length - 1) * rate, stride)
    np.testing.assert_array_equal(x, [data[start + p:start + p + length * rate:rate] for p in positions])
    np.testing.assert_array_equal(y, [targets[start + p] for p in positions])
    assert all(len(b) == 4 for b in xs[:-1])


def test_timeseries_dataset_shuffles_windows_reproducibly_and_checks_arguments():
    data = np.arange(40, dtype=np.float32)
    firsts = [np.concatenate([x.numpy()[:, 0] for x in K.utils.timeseries_dataset_from_array(
        data, None, 4, batch_size=5, shuffle=True, seed=3)]) for _ in range(2)]
    np.testing.assert_array_equal(firsts[0], firsts[1])
    assert sorted(firsts[0].tolist()) == list(range(37)) and firsts[0].tolist() != list(range(37))
    with pytest.raises(ValueError, match="`sampling_rate` must be higher than 0"):
        K.utils.timeseries_dataset_from_array(data, None, 4, sampling_rate=0)
    with pytest.raises(ValueError, match="`end_index` must be higher than `start_index`"):
        K.utils.timeseries_dataset_from_array(data, None, 4, start_index=5, end_index=3)


def test_smart_resize_crops_to_the_aspect_ratio_then_resizes():
    img = np.arange(6 * 4 * 1, dtype=np.float32).reshape(6, 4, 1)
    out = K.preprocessing.image.smart_resize(img, (2, 2))
    assert isinstance(out, np.ndarray) and out.shape == (2, 2, 1)
    # The central 4 x 4 window (rows 1..4), halved by bilinear resizing: 2 x 2 block means.
    window = img[1:5]
    np.testing.assert_allclose(out[..., 0], window.reshape(2, 2, 2, 2).mean((1, 3)))
    tensor_out = K.preprocessing.image.smart_resize(tf.constant(img[None]), (3, 2), interpolation="nearest")
    assert isinstance(tensor_out, tf.Tensor) and tensor_out.shape == (1, 3, 2, 1)
