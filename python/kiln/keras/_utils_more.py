"""More of keras.utils (Keras 2.15): timeseries_dataset_from_array, to_ordinal, get_source_inputs and the
interactive-logging switch that decides whether fit's progress goes to stdout or to Python's logging."""
import logging

import numpy as np

_INTERACTIVE_LOGGING = [True]


def enable_interactive_logging():
    """Progress bars and messages go to stdout (the default)."""
    _INTERACTIVE_LOGGING[0] = True


def disable_interactive_logging():
    """Progress bars and messages go to Python's logging (INFO) instead of stdout."""
    _INTERACTIVE_LOGGING[0] = False


def is_interactive_logging_enabled():
    return _INTERACTIVE_LOGGING[0]


def print_msg(message, line_break=True):
    """Keras' io_utils.print_msg: stdout when interactive logging is on, else logging.info."""
    import sys
    if _INTERACTIVE_LOGGING[0]:
        sys.stdout.write(message + ("\n" if line_break else ""))
        sys.stdout.flush()
    else:
        logging.info(message)


def to_ordinal(y, num_classes=None, dtype="float32"):
    """Ordinal regression targets: class k becomes k ones then zeros, num_classes - 1 columns."""
    y = np.array(y, dtype="int")
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = tuple(shape[:-1])
    y = y.ravel()
    if not num_classes:
        num_classes = int(np.max(y)) + 1
    ordinal = (np.arange(num_classes - 1)[None, :] < y[:, None]).astype(dtype)
    return ordinal.reshape(shape + (num_classes - 1,))


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """keras.utils' form of the fit-data packing: a lone x that is no tuple stays as it is (fit's internal packing
    always makes a tuple)."""
    from ._data_adapter import pack_x_y_sample_weight as pack
    if y is None and not isinstance(x, tuple):
        return x
    return pack(x, y, sample_weight)


def get_source_inputs(tensor, layer=None, node_index=None):
    """The Input tensors a Keras tensor is computed from, each once, in the order the graph reaches them."""
    from ._layer import InputLayer, KerasTensor, _flatten
    out, seen = [], set()

    def visit(t):
        node = getattr(t, "_node", None)
        if node is None or isinstance(node.layer, InputLayer):
            if id(t) not in seen:
                seen.add(id(t))
                out.append(t)
            return
        for parent in _flatten([node.inputs, list(node.args), node.kwargs]):
            if isinstance(parent, KerasTensor):
                visit(parent)

    visit(tensor)
    return out


def _check_windows(data, sequence_stride, sampling_rate, start_index, end_index):
    n = len(data)
    if start_index:
        if start_index < 0:
            raise ValueError(f"`start_index` must be 0 or greater. Received: start_index={start_index}")
        if start_index >= n:
            raise ValueError(f"`start_index` must be lower than the length of the data. Received: "
                             f"start_index={start_index}, for data of length {n}")
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError(f"`end_index` must be higher than `start_index`. Received: start_index={start_index}, "
                             f"and end_index={end_index} ")
        if end_index >= n:
            raise ValueError(f"`end_index` must be lower than the length of the data. Received: "
                             f"end_index={end_index}, for data of length {n}")
        if end_index <= 0:
            raise ValueError(f"`end_index` must be higher than 0. Received: end_index={end_index}")
    for name, value in (("sampling_rate", sampling_rate), ("sequence_stride", sequence_stride)):
        if value <= 0:
            raise ValueError(f"`{name}` must be higher than 0. Received: {name}={value}")
        if value >= n:
            raise ValueError(f"`{name}` must be lower than the length of the data. Received: {name}={value}, for "
                             f"data of length {n}")


def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1, sampling_rate=1,
                                  batch_size=128, shuffle=False, seed=None, start_index=None, end_index=None):
    """A dataset of sliding windows over `data` (rows start_index .. end_index): window i holds the rows
    p_i + k * sampling_rate for k < sequence_length, p_i = i * sequence_stride; with targets, paired with
    targets[p_i] (counted from start_index). The windows are gathered when the dataset is iterated."""
    from .. import data as _data
    import kiln as tf
    _check_windows(data, sequence_stride, sampling_rate, start_index, end_index)
    start_index = start_index or 0
    end_index = len(data) if end_index is None else end_index
    count = end_index - start_index - (sequence_length - 1) * sampling_rate
    if targets is not None:
        count = min(count, len(targets))
    positions = np.arange(0, count, sequence_stride, dtype="int32" if count < 2147483647 else "int64")
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(positions)
    steps = tf.constant(np.asarray(data)[start_index:end_index])
    offsets = tf.constant(np.arange(0, sequence_length * sampling_rate, sampling_rate, dtype=positions.dtype))
    dataset = _data.Dataset.from_tensor_slices(positions)
    if targets is None:
        dataset = dataset.map(lambda p: tf.gather(steps, p + offsets))
    else:
        labels = tf.constant(np.asarray(targets)[start_index:end_index])
        dataset = dataset.map(lambda p: (tf.gather(steps, p + offsets), tf.gather(labels, p)))
    if batch_size is not None:
        if shuffle:
            dataset = dataset.shuffle(buffer_size=batch_size * 8, seed=seed)
        return dataset.batch(batch_size)
    return dataset.shuffle(buffer_size=1024, seed=seed) if shuffle else dataset


def _split_sizes(left_size, right_size, total):
    """Keras' split sizes: ints are counts, floats fractions of `total`, None the rest; its checks and messages."""
    kinds = (int, float)
    if left_size is not None and type(left_size) not in kinds:
        raise TypeError(f"Invalid `left_size` Type. Expected: int or float or None, Received: "
                        f"type(left_size)={type(left_size)}.  ")
    if right_size is not None and type(right_size) not in kinds:
        raise TypeError(f"Invalid `right_size` Type. Expected: int or float or None,Received: "
                        f"type(right_size)={type(right_size)}.")
    if left_size == 0 and right_size == 0:
        raise ValueError("Both `left_size` and `right_size` are zero. At least one of the split sizes must be "
                         "non-zero.")
    for name, size in (("left_size", left_size), ("right_size", right_size)):
        if (type(size) is int and not 0 < size < total) or (type(size) is float and not 0 < size < 1):
            raise ValueError(f"`{name}` should be either a positive integer smaller than {total}, or a float within "
                             f"the range `[0, 1]`. Received: {name}={size}")
    if type(left_size) is float and type(right_size) is float and left_size + right_size > 1:
        raise ValueError("The sum of `left_size` and `right_size` is greater than 1. It must be less than or equal "
                         "to 1.")

    def count(size):
        return round(size * total) if type(size) is float else size
    left, right = count(left_size), count(right_size)
    left = total - right if left is None else left
    right = total - left if right is None else right
    if left + right > total:
        raise ValueError(f"The sum of `left_size` and `right_size` should be smaller than the {total}. Received: "
                         f"left_size + right_size = {left + right}and total_length = {total}")
    for split, side in ((left, "left"), (right, "right")):
        if split == 0:
            raise ValueError(f"With `dataset` of length={total}, `left_size`={left} and `right_size`={right}.Resulting "
                             f"{side} side dataset split will be empty. Adjust any of the aforementioned parameters")
    return int(left), int(right)


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None):
    """Two datasets of the samples of `dataset` (an array, a tuple / list of arrays of one length, or a dataset of
    samples): the first left_size and the last right_size, after a shuffle with Python's random and `seed` when
    asked (Keras' rule, so a seed picks Keras' split)."""
    import random
    from .. import data as _data
    if right_size is None and left_size is None:
        raise ValueError("At least one of the `left_size` or `right_size` must be specified. Received: "
                         "left_size=None and right_size=None")
    if isinstance(dataset, np.ndarray):
        samples, rebuild = list(dataset), np.asarray
    elif isinstance(dataset, (list, tuple)):
        arrays = [np.asarray(a) for a in dataset]
        if len({len(a) for a in arrays}) != 1:
            raise ValueError("Received a list of NumPy arrays with different lengths.")
        samples = list(zip(*arrays))

        def rebuild(rows):
            return tuple(np.asarray(column) for column in zip(*rows))
    elif isinstance(dataset, _data.Dataset):
        samples = [tuple(np.asarray(v) for v in e) if isinstance(e, tuple) else np.asarray(e)
                   for e in dataset.as_numpy_iterator()]

        def rebuild(rows):
            return tuple(np.asarray(c) for c in zip(*rows)) if rows and isinstance(rows[0], tuple) else \
                np.asarray(rows)
    else:
        raise TypeError("The `dataset` argument must be either a `tf.data.Dataset` object or a list/tuple of arrays. "
                        f"Received: dataset={dataset} of type {type(dataset)}")
    if shuffle:
        random.seed(random.randint(0, int(1e6)) if seed is None else seed)
        random.shuffle(samples)
    left, right = _split_sizes(left_size, right_size, len(samples))
    return (_data.Dataset.from_tensor_slices(rebuild(samples[:left])),
            _data.Dataset.from_tensor_slices(rebuild(samples[-right:])))


def warmstart_embedding_matrix(base_vocabulary, new_vocabulary, base_embeddings, new_embeddings_initializer="uniform"):
    """An embedding matrix for new_vocabulary: the rows of base_embeddings for the tokens both vocabularies hold,
    new_embeddings_initializer's draws for the others."""
    import kiln as tf
    from . import initializers

    def as_list(vocab):
        if isinstance(vocab, (tf.Tensor,)):
            vocab = list(vocab.numpy())
        elif isinstance(vocab, (np.ndarray, tuple, list)):
            vocab = list(vocab)
        elif isinstance(vocab, str):
            with open(vocab) as f:
                vocab = f.read().splitlines()
        else:
            raise ValueError("Vocabulary is expected to be either a NumPy array, list, 1D tensor or a vocabulary text "
                             f"file. Instead type {type(vocab)} was received.")
        if not vocab:
            raise ValueError("Vocabulary is expected to be either a NumPy array, list, 1D tensor or a vocabulary text "
                             "file with at least one token. Received 0 instead.")
        return vocab

    base, new = as_list(base_vocabulary), as_list(new_vocabulary)
    base_embeddings = tf.convert_to_tensor(base_embeddings)
    matrix = initializers.get(new_embeddings_initializer)(shape=(len(new), base_embeddings.shape[1]),
                                                         dtype=base_embeddings.dtype)
    where = {token: i for i, token in enumerate(base)}
    pairs = [(where[token], i) for i, token in enumerate(new) if token in where]
    if pairs:
        old_rows, new_rows = zip(*pairs)
        matrix = tf.tensor_scatter_nd_update(matrix, tf.expand_dims(tf.constant(new_rows), 1),
                                             tf.gather(base_embeddings, list(old_rows)))
    return matrix
