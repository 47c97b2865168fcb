"""The steps imdb and reuters (Keras 2.15) take on their word-index sequences, in Keras' order: shuffle with
np.random.RandomState(seed), mark and offset the words, drop long sequences, then cut the vocabulary."""
import json
import logging

import numpy as np

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def num_words_argument(num_words, kwargs, message_end):
    """Keras' old `nb_words` spelling, with its warning; any other keyword is a TypeError."""
    if "nb_words" in kwargs:
        logging.warning("The `nb_words` argument in `load_data` has been renamed `num_words`.")
        num_words = kwargs.pop("nb_words")
    if kwargs:
        raise TypeError(f"Unrecognized keyword arguments: {str(kwargs)}{message_end}")
    return num_words


def shuffled(rng, *arrays):
    """The arrays reordered by one permutation: rng.shuffle of np.arange(len), as Keras draws it."""
    indices = np.arange(len(arrays[0]))
    rng.shuffle(indices)
    return tuple(a[indices] for a in arrays)


def mark_and_offset(sequences, start_char, index_from):
    """Each word index + index_from, behind start_char when it is not None (Keras offsets nothing when start_char
    is None and index_from is 0)."""
    if start_char is not None:
        return [[start_char] + [w + index_from for w in x] for x in sequences]
    if index_from:
        return [[w + index_from for w in x] for x in sequences]
    return sequences


def remove_long(maxlen, sequences, labels):
    """Only the sequences shorter than maxlen (Keras' _remove_long_seq: len(x) < maxlen), as lists."""
    kept = [(x, y) for x, y in zip(sequences, labels) if len(x) < maxlen]
    return [x for x, _ in kept], [y for _, y in kept]


def cut_vocabulary(sequences, num_words, skip_top, oov_char):
    """Words outside [skip_top, num_words) become oov_char, or go when oov_char is None. Without num_words,
    Keras' bound is the largest index present, itself excluded."""
    if not num_words:
        num_words = max(max(x) for x in sequences)
    if oov_char is not None:
        return [[w if skip_top <= w < num_words else oov_char for w in x] for x in sequences]
    return [[w for w in x if skip_top <= w < num_words] for x in sequences]


def sequence_array(sequences):
    """Keras' np.array(list, dtype="object"): one list per row (a 2-D array when every sequence has one length)."""
    return np.array(sequences, dtype="object")


def word_index(path, origin_name, file_hash):
    """The word -> index dict of Keras' JSON file `origin_name`, cached as `path` (fetched to Keras' cache and
    checked against Keras' md5 when missing)."""
    from .._file_utils import get_file
    with open(get_file(path, origin=ORIGIN + origin_name, file_hash=file_hash)) as f:
        return json.load(f)
