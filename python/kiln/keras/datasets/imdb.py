"""kiln.keras.datasets.imdb: load_data and get_word_index as Keras 2.15's. imdb.npz (x_train, y_train, x_test,
y_test: 25,000 reviews each as lists of word ranks, labels 0 / 1) from Keras' origin, checked against Keras' sha256;
the training then the test reviews shuffled by one np.random.RandomState(seed), each marked with start_char and its
words offset by index_from, reviews of maxlen words or more dropped, words outside [skip_top, num_words) made
oov_char. The sequences come back as object arrays of lists, the labels as the file's integers."""
import numpy as np

from . import _word_sequences as _seq

FILE_HASH = "69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f"
WORD_INDEX_HASH = "bfafd718b763782e994055a2d397834f"


def load_data(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113, start_char=1, oov_char=2,
              index_from=3, **kwargs):
    from .._file_utils import get_file
    num_words = _seq.num_words_argument(num_words, kwargs, ".")
    path = get_file(path, origin=_seq.ORIGIN + "imdb.npz", file_hash=FILE_HASH)
    with np.load(path, allow_pickle=True) as f:
        x_train, labels_train = f["x_train"], f["y_train"]
        x_test, labels_test = f["x_test"], f["y_test"]

    rng = np.random.RandomState(seed)  # one generator: the test set's order follows the training set's draw
    x_train, labels_train = _seq.shuffled(rng, x_train, labels_train)
    x_test, labels_test = _seq.shuffled(rng, x_test, labels_test)

    x_train = _seq.mark_and_offset(x_train, start_char, index_from)
    x_test = _seq.mark_and_offset(x_test, start_char, index_from)
    if maxlen:
        x_train, labels_train = _seq.remove_long(maxlen, x_train, labels_train)
        x_test, labels_test = _seq.remove_long(maxlen, x_test, labels_test)
        if not x_train or not x_test:
            raise ValueError(f"After filtering for sequences shorter than maxlen={str(maxlen)}, no sequence was "
                             "kept. Increase maxlen.")

    # The vocabulary is cut over both sets at once (num_words=None: the largest index of either). As lists: Keras'
    # `x_train + x_test` would add two untouched arrays element by element (start_char=None, index_from=0).
    xs = _seq.cut_vocabulary(list(x_train) + list(x_test), num_words, skip_top, oov_char)
    labels = np.concatenate([labels_train, labels_test])
    idx = len(x_train)
    return (_seq.sequence_array(xs[:idx]), labels[:idx]), (_seq.sequence_array(xs[idx:]), labels[idx:])


def get_word_index(path="imdb_word_index.json"):
    """{word: rank} (1 the most frequent); load_data's indices are these + index_from."""
    return _seq.word_index(path, "imdb_word_index.json", WORD_INDEX_HASH)
