"""kiln.keras.datasets.reuters: load_data, get_word_index and get_label_names as Keras 2.15's. reuters.npz (x: the
11,228 newswires as lists of word ranks, y: their topics of 46) from Keras' origin, checked against Keras' sha256;
shuffled by np.random.RandomState(seed), each marked with start_char and its words offset by index_from, wires of
maxlen words or more dropped, words outside [skip_top, num_words) made oov_char, then split: the first
int(n * (1 - test_split)) for training."""
import numpy as np

from . import _word_sequences as _seq

FILE_HASH = "d6586e694ee56d7a4e65172e12b3e987c03096cb01eab99753921ef915959916"
WORD_INDEX_HASH = "4d44cc38712099c9e383dc6e5f11a921"

# The 46 topics, index = label (Keras' list).
_LABEL_NAMES = (
    "cocoa", "grain", "veg-oil", "earn", "acq", "wheat", "copper", "housing", "money-supply", "coffee", "sugar",
    "trade", "reserves", "ship", "cotton", "carcass", "crude", "nat-gas", "cpi", "money-fx", "interest", "gnp",
    "meal-feed", "alum", "oilseed", "gold", "tin", "strategic-metal", "livestock", "retail", "ipi", "iron-steel",
    "rubber", "heat", "jobs", "lei", "bop", "zinc", "orange", "pet-chem", "dlr", "gas", "silver", "wpi", "hog",
    "lead")


def load_data(path="reuters.npz", num_words=None, skip_top=0, maxlen=None, test_split=0.2, seed=113, start_char=1,
              oov_char=2, index_from=3, **kwargs):
    from .._file_utils import get_file
    num_words = _seq.num_words_argument(num_words, kwargs, "")
    path = get_file(path, origin=_seq.ORIGIN + "reuters.npz", file_hash=FILE_HASH)
    with np.load(path, allow_pickle=True) as f:
        xs, labels = f["x"], f["y"]

    xs, labels = _seq.shuffled(np.random.RandomState(seed), xs, labels)
    xs = _seq.mark_and_offset(xs, start_char, index_from)
    if maxlen:
        xs, labels = _seq.remove_long(maxlen, xs, labels)
    xs = _seq.cut_vocabulary(xs, num_words, skip_top, oov_char)

    idx = int(len(xs) * (1 - test_split))
    return ((_seq.sequence_array(xs[:idx]), np.array(labels[:idx])),
            (_seq.sequence_array(xs[idx:]), np.array(labels[idx:])))


def get_word_index(path="reuters_word_index.json"):
    """{word: rank}; load_data's indices are these + index_from (0 padding, 1 start, 2 out of vocabulary)."""
    return _seq.word_index(path, "reuters_word_index.json", WORD_INDEX_HASH)


def get_label_names():
    """The topic names, as a tuple indexed by label."""
    return _LABEL_NAMES
