"""Keras' categorical preprocessing layers: CategoryEncoding, Discretization, StringLookup, IntegerLookup and
TextVectorization.

The lookups hold tf.lookup's hash table (kiln/lookup/_core.py); they and the text processing run in NumPy /
Python: eagerly directly, and inside a traced function (tf.data map, a fit step) as a host function (tf.py_function), which
runs the same Python each time the graph runs. CategoryEncoding and Discretization are engine ops."""
import collections
import re

import numpy as np

from .. import _C
from .. import dtypes as _dtypes
from ..errors import InvalidArgumentError
from ..lookup._core import HashTable, eager_value as _eager_value
from ..tensor_shape import TensorShape
from ._layer import Layer, _is_tensor

_OUTPUT_MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")


def _check_output_mode(value, allowed):
    if value not in allowed:
        raise ValueError(f"Unknown `output_mode` argument. Expected one of {list(allowed)}. Received: "
                         f"output_mode={value}")
    return value


def _no_sparse(layer, sparse, ragged=False):
    if sparse:
        raise NotImplementedError(f"kiln.keras.layers.{layer}: sparse=True is not supported (Kiln has no "
                                  "SparseTensor)")
    if ragged:
        raise NotImplementedError(f"kiln.keras.layers.{layer}: ragged=True is not supported (Kiln has no "
                                  "RaggedTensor)")


# ---- encoding (NumPy, shared by the lookups) ---------------------------------------------------------------------

def encode_numpy(indices, output_mode, depth, idf_weights=None):
    """Keras' encode_categorical_inputs on integer NumPy indices (negative ones are dropped): one_hot adds an axis
    unless the last is 1; multi_hot / count / tf_idf count each row (a rank-1 input is one sample)."""
    x = np.asarray(indices, dtype=np.int64)
    if x.ndim == 0:
        x = x.reshape(1)
    if output_mode == "one_hot" and x.shape[-1] != 1:
        x = x[..., None]
    if x.ndim > 2:
        raise ValueError(f"When output_mode is not `'int'`, maximum supported output rank is 2. Received "
                         f"output_mode {output_mode} and input shape {x.shape}, which would result in output rank "
                         f"{x.ndim}.")
    if np.any(x >= depth):
        raise InvalidArgumentError(f"Input values must be in the range 0 <= values < num_tokens with "
                                   f"num_tokens={depth}")
    rows = x.reshape(-1, x.shape[-1])
    out = np.zeros((rows.shape[0], depth), np.float32)
    for r, row in enumerate(rows):
        kept = row[row >= 0]
        np.add.at(out[r], kept, 1.0)
    if output_mode in ("one_hot", "multi_hot"):
        out = np.minimum(out, 1.0)
    if output_mode == "tf_idf":
        out = out * np.asarray(idf_weights, np.float32)
    return out.reshape(depth) if x.ndim == 1 else out


class _WholeInputs:
    """Keras converts a Python list given to these layers into one tensor (Layer.__call__ would take a list as a
    structure of separate inputs)."""

    def __call__(self, inputs, *args, **kwargs):
        if isinstance(inputs, (list, tuple)) and not any(type(v).__name__ == "KerasTensor" for v in inputs):
            from .._ops import convert_to_tensor
            inputs = convert_to_tensor(inputs)
        return Layer.__call__(self, inputs, *args, **kwargs)


def _run_numpy(fn, inputs, out_dtype, static_shape):
    """fn(NumPy value) -> NumPy array as a tensor: directly when eager, as a host function while tracing (with
    the static shape set by a reshape, as TF's layers set_shape)."""
    values = _eager_value(inputs)
    if values is not None:
        return _C.constant(np.asarray(fn(values)), out_dtype._enum)
    from ..function import py_function
    out = py_function(lambda t: np.asarray(fn(t.numpy())), [inputs], out_dtype)
    if static_shape is not None:
        dims = [-1 if d is None else d for d in TensorShape(static_shape).as_list()]
        if dims.count(-1) <= 1:
            out = _C.reshape(out, dims)
        elif TensorShape(static_shape) == TensorShape(inputs.shape):
            out = _C.reshape(out, _C.shape(inputs))
    return out


class CategoryEncoding(_WholeInputs, Layer):
    """Integer indices in [0, num_tokens) -> one_hot / multi_hot / count vectors (count_weights: the counts'
    weights per input)."""

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if output_mode == "binary":  # Keras' old name
            output_mode = "multi_hot"
        self.output_mode = _check_output_mode(output_mode, ("count", "one_hot", "multi_hot"))
        if num_tokens is None:
            raise ValueError("num_tokens must be set to use this layer. If the number of tokens is not known "
                             "beforehand, use the IntegerLookup layer instead.")
        if num_tokens < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        _no_sparse("CategoryEncoding", sparse)
        self.num_tokens = int(num_tokens)
        self.sparse = False

    def call(self, inputs, count_weights=None):
        x = inputs if inputs.dtype.is_integer else _C.cast(inputs, _dtypes.int64._enum)
        x = _C.cast(x, _dtypes.int64._enum)
        shape = TensorShape(x.shape)
        if shape.rank == 0:
            x = _C.reshape(x, [1])
            shape = TensorShape(x.shape)
        if self.output_mode == "one_hot" and shape[-1] != 1:
            x = _C.expand_dims(x, -1)
            shape = TensorShape(x.shape)
        if shape.rank > 2:
            raise ValueError(f"When output_mode is not `'int'`, maximum supported output rank is 2. Received "
                             f"output_mode {self.output_mode} and input shape {TensorShape(inputs.shape)}, which "
                             f"would result in output rank {shape.rank}.")
        values = _eager_value(x)
        if values is not None:
            if values.size and (values.min() < 0 or values.max() >= self.num_tokens):
                raise InvalidArgumentError(f"Input values must be in the range 0 <= values < num_tokens"
                                           f" with num_tokens={self.num_tokens}")
        # one_hot of every index (out-of-range ones give zero rows), summed over the sample's indices.
        hot = _C.one_hot(x, self.num_tokens, 1.0, 0.0, -1, self._dtype._enum)
        if count_weights is not None:
            weights = count_weights if _is_tensor(count_weights) else _C.constant(np.asarray(count_weights), None)
            hot = _C.multiply(hot, _C.expand_dims(_C.cast(weights, self._dtype._enum), -1))
        counts = _C.reduce_sum(hot, [-2], False)
        if self.output_mode in ("one_hot", "multi_hot") and count_weights is None:
            counts = _C.minimum(counts, 1.0)
        return counts

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        if not s:
            return TensorShape([self.num_tokens])
        if self.output_mode == "one_hot" and s[-1] != 1:
            return TensorShape(s + [self.num_tokens])
        return TensorShape(s[:-1] + [self.num_tokens])

    def get_config(self):
        config = super().get_config()
        config.update(num_tokens=self.num_tokens, output_mode=self.output_mode, sparse=self.sparse)
        return config


# ---- Discretization ------------------------------------------------------------------------------------------------

def _summarize(values, epsilon):
    """A quantile summary of sorted values: about 1 / epsilon evenly spaced values, each weighing the count it
    stands for (Keras' summarize)."""
    values = np.sort(np.reshape(values, [-1]))
    step_f = values.size * epsilon
    start, step = int(step_f), int(max(step_f, 1))
    picked = values[start::step]
    return np.stack([picked, np.full(picked.shape, max(step_f, 1))])


def _compress(summary, epsilon):
    """Re-buckets a summary at the cumulative-weight fractions epsilon, 2 epsilon, ..., 1 (linear interpolation)."""
    if summary.shape[1] * epsilon < 1:
        return summary
    targets = epsilon + np.arange(0.0, 1.0, epsilon)
    cumulative = np.cumsum(summary[1])
    fractions = cumulative / cumulative[-1]
    bins = np.interp(targets, fractions, summary[0])
    weights = np.diff(np.interp(targets, fractions, cumulative), prepend=0.0)
    return np.stack([bins, weights]).astype(np.float32)


class Discretization(_WholeInputs, Layer):
    """Buckets floats by bin_boundaries: index i when boundaries[i-1] <= x < boundaries[i] (as tf bucketize), or by
    num_bins boundaries that adapt() learns as approximate quantiles (epsilon); output_mode int, one_hot,
    multi_hot or count."""

    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int", sparse=False, **kwargs):
        super().__init__(**kwargs)
        self.output_mode = _check_output_mode(output_mode, ("int", "one_hot", "multi_hot", "count"))
        _no_sparse("Discretization", sparse)
        self.sparse = False
        if num_bins is not None and num_bins < 0:
            raise ValueError(f"`num_bins` must be greater than or equal to 0. You passed `num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError(f"Both `num_bins` and `bin_boundaries` should not be set. You passed `num_bins="
                             f"{num_bins}` and `bin_boundaries={bin_boundaries}`")
        self.bin_boundaries = None if bin_boundaries is None else [float(b) for b in bin_boundaries]
        self.num_bins = num_bins
        self.epsilon = epsilon
        if output_mode == "int":
            self._output_dtype = _dtypes.int64

    def adapt(self, data, batch_size=None, steps=None):
        from ._preprocessing import _batches
        if self.num_bins is None:
            raise ValueError("Cannot adapt a Discretization layer that has been initialized with `bin_boundaries`, "
                             "use `num_bins` instead. You passed `bin_boundaries` and `num_bins=None`.")
        summary = None
        for batch in _batches(data, batch_size, steps):
            part = _summarize(batch, self.epsilon)
            if summary is None:
                summary = part
            else:
                merged = np.concatenate([summary, part], axis=1)
                summary = _compress(merged[:, np.argsort(merged[0], kind="stable")], self.epsilon)
        if summary is None:
            raise ValueError("Discretization.adapt: the data has no samples")
        self.bin_boundaries = _compress(summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError("You need to either pass the `bin_boundaries` argument at construction time or call "
                             "`adapt(dataset)` before you can start using the `Discretization` layer.")
        x = inputs if inputs.dtype.is_floating else _C.cast(inputs, _dtypes.float64._enum)
        bounds = _C.cast(_C.constant(np.asarray(self.bin_boundaries, np.float64), None), x.dtype._enum)
        above = _C.cast(_C.greater_equal(_C.expand_dims(x, -1), bounds), _dtypes.int64._enum)
        index = _C.reduce_sum(above, [-1], False)
        if self.output_mode == "int":
            return index
        return CategoryEncoding(len(self.bin_boundaries) + 1, self.output_mode, dtype=self.dtype)(index)

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return TensorShape(input_shape)
        depth = (self.num_bins if self.bin_boundaries is None else len(self.bin_boundaries) + 1)
        return CategoryEncoding(depth, self.output_mode).compute_output_shape(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update(bin_boundaries=self.bin_boundaries, num_bins=self.num_bins, epsilon=self.epsilon,
                      output_mode=self.output_mode, sparse=self.sparse)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        bounds = config.pop("bin_boundaries", None)
        if bounds is not None and config.get("num_bins") is not None:
            layer = cls(**config)  # adapted: both are set, which __init__ refuses
            layer.bin_boundaries = bounds
            return layer
        return cls(bin_boundaries=bounds, **config)


# ---- IndexLookup -------------------------------------------------------------------------------------------------

def _as_token(value, string):
    if string:
        return value.decode("utf-8") if isinstance(value, bytes) else str(value)
    return int(value)


class _IndexLookup(_WholeInputs, Layer):
    """Tokens -> indices. Layout (int mode with a mask token): 0 the mask, then num_oov_indices OOV indices, then the
    vocabulary; other modes reserve no mask index and drop mask tokens."""

    _string = True

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]", vocabulary=None,
                 idf_weights=None, invert=False, output_mode="int", sparse=False, pad_to_max_tokens=False, **kwargs):
        kwargs.pop("vocabulary_dtype", None)
        kwargs.pop("encoding", None)
        kwargs.pop("has_input_vocabulary", None)
        super().__init__(**kwargs)
        if output_mode == "binary":
            output_mode = "multi_hot"
        self.output_mode = _check_output_mode(output_mode, _OUTPUT_MODES)
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"If set, `max_tokens` must be greater than 1. Received: max_tokens={max_tokens}")
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError(f"If pad_to_max_tokens is True, must set `max_tokens`. Received: max_tokens="
                             f"{max_tokens}")
        if num_oov_indices < 0:
            raise ValueError(f"`num_oov_indices` must be greater than or equal to 0. Received: num_oov_indices="
                             f"{num_oov_indices}")
        if invert and output_mode != "int":
            raise ValueError(f"`output_mode` must be `'int'` when `invert` is true. Received: output_mode="
                             f"{output_mode}")
        if output_mode == "tf_idf" and idf_weights is None and vocabulary is not None:
            raise ValueError("`idf_weights` must be set if output_mode is 'tf_idf' and a vocabulary is given")
        _no_sparse(type(self).__name__, sparse)
        self.max_tokens = max_tokens
        self.num_oov_indices = int(num_oov_indices)
        self.mask_token = mask_token
        self.oov_token = oov_token
        self.invert = bool(invert)
        self.pad_to_max_tokens = bool(pad_to_max_tokens)
        self.sparse = False
        self.input_vocabulary = vocabulary
        self.input_idf_weights = idf_weights
        self._tokens = []
        self._table = HashTable(_dtypes.int64)
        self._idf = None
        self._has_input_vocabulary = vocabulary is not None
        self._output_dtype = self._out_dtype()
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)

    # -- vocabulary --
    def _oov_start(self):
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def _token_start(self):
        return self._oov_start() + self.num_oov_indices

    def _special_tokens(self):
        special = [self.mask_token] if self._oov_start() else []
        return special + [self.oov_token] * self.num_oov_indices

    def get_vocabulary(self, include_special_tokens=True):
        tokens = list(self._tokens)
        return self._special_tokens() + tokens if include_special_tokens else tokens

    def vocabulary_size(self):
        return self._token_start() + len(self._tokens)

    def _depth(self):
        return self.max_tokens if self.pad_to_max_tokens else self.vocabulary_size()

    def set_vocabulary(self, vocabulary, idf_weights=None):
        if isinstance(vocabulary, str):
            with open(vocabulary, encoding="utf-8") as f:
                vocabulary = [line.rstrip("\n") for line in f]
        if _is_tensor(vocabulary):
            vocabulary = vocabulary.numpy()
        tokens = [_as_token(v, self._string) for v in np.asarray(vocabulary).reshape(-1).tolist()]
        special = self._special_tokens()
        found_special = tokens[:len(special)] == special and len(special) > 0
        if found_special:
            tokens = tokens[len(special):]
        repeated = [t for t, n in collections.Counter(tokens).items() if n > 1]
        if repeated:
            raise ValueError(f"The passed vocabulary has at least one repeated term. Please uniquify your dataset. "
                             f"The repeated terms are {repeated}")
        if self.mask_token is not None and self.mask_token in tokens:
            raise ValueError(f"Found reserved mask token at unexpected location in `vocabulary`. Note that passed "
                             f"`vocabulary` does not need to include the OOV and mask tokens. Either remove all mask "
                             f"and OOV tokens, or include them only at the start of the vocabulary in precisely this "
                             f"order: {special}. Received: mask_token={self.mask_token} at vocabulary index "
                             f"{tokens.index(self.mask_token)}")
        size = self._token_start() + len(tokens)
        if self.max_tokens is not None and size > self.max_tokens:
            raise ValueError(f"Attempted to set a vocabulary larger than the maximum vocab size. Received vocabulary "
                             f"size is {size}; `max_tokens` is {self.max_tokens}.")
        self._set_tokens(tokens)
        if self.output_mode == "tf_idf" and idf_weights is not None:
            idf = np.asarray(idf_weights.numpy() if _is_tensor(idf_weights) else idf_weights, np.float64).reshape(-1)
            if len(idf) != len(vocabulary):
                raise ValueError(f"`idf_weights` must be the same length as vocabulary. len(idf_weights) is "
                                 f"{len(idf)}; len(vocabulary) is {len(vocabulary)}")
            front = [] if found_special else [np.mean(idf)] * self._token_start()
            self._idf = np.concatenate([front, idf]).astype(np.float32)
        self._has_input_vocabulary = True

    def _set_tokens(self, tokens):
        self._tokens = tokens
        start = self._token_start()
        self._table = HashTable(_dtypes.int64)  # tf.lookup's table (kiln/lookup/_core.py)
        self._table.insert(np.asarray(tokens, dtype=object), np.arange(start, start + len(tokens), dtype=np.int64))

    # -- adapt --
    def _documents(self, data, steps=None):
        """The adapt data as documents (lists of tokens): a rank-1 input is one token per document."""
        def rows(array):
            array = np.asarray(array, dtype=object)
            if array.ndim == 0:
                return [[array.item()]]
            if array.ndim == 1:
                return [[v] for v in array.tolist()]
            return [list(np.asarray(r, dtype=object).reshape(-1)) for r in array]

        if _is_tensor(data) or isinstance(data, (np.ndarray, list, tuple)):
            yield from rows(data.numpy() if _is_tensor(data) else data)
            return
        for i, batch in enumerate(data):
            if steps is not None and i >= steps:
                break
            if isinstance(batch, tuple):
                batch = batch[0]
            yield from rows(batch.numpy() if _is_tensor(batch) else batch)

    def _tokenize(self, document):
        return [_as_token(v, self._string) for v in document]

    def adapt(self, data, batch_size=None, steps=None):
        if self._has_input_vocabulary:
            raise ValueError(f"Cannot adapt layer '{self.name}' after setting a static vocabulary via `vocabulary` "
                             "argument or `set_vocabulary()` method.")
        self._adapt_token_lists(self._tokenize(document) for document in self._documents(data, steps))

    def _adapt_token_lists(self, token_lists):
        """Learns the vocabulary (and the idf weights) from documents given as lists of tokens."""
        counts = collections.Counter()
        doc_counts = collections.Counter()
        documents = 0
        for tokens in token_lists:
            counts.update(tokens)
            doc_counts.update(set(tokens))
            documents += 1
        for special in (self.mask_token, self.oov_token):
            counts.pop(special, None)
        # Keras' order: by count, ties by the token, both descending.
        ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        if self.max_tokens:
            ranked = ranked[:max(self.max_tokens - self._token_start(), 0)]
        self._set_tokens([t for t, _ in ranked])
        if self.output_mode == "tf_idf":
            idf = np.log(1.0 + documents / (1.0 + np.asarray([doc_counts[t] for t in self._tokens], np.float64)))
            idf = np.concatenate([[idf.mean() if idf.size else 0.0] * self._token_start(), idf])
            if self.pad_to_max_tokens:
                idf = np.pad(idf, (0, self.max_tokens - idf.size))
            self._idf = idf.astype(np.float32)

    # -- call --
    def _oov_index(self, token):
        if self.num_oov_indices == 1:
            return self._oov_start()
        if self._string:  # tf.strings.to_hash_bucket_fast, as Keras
            from .._farmhash import hash_bucket_fast
            bucket = hash_bucket_fast(token, self.num_oov_indices)
        else:
            bucket = token % self.num_oov_indices
        return self._oov_start() + bucket

    def _lookup(self, values):
        flat = [_as_token(v, self._string and not self.invert)
                for v in np.asarray(values, dtype=object).reshape(-1).tolist()]
        if self.invert:
            vocab = self.get_vocabulary()
            out = [vocab[i] if 0 <= i < len(vocab) and i >= self._token_start() else
                   (self.mask_token if self.mask_token is not None and i == 0 else self.oov_token) for i in flat]
            return np.asarray([o.encode("utf-8") if isinstance(o, str) else o for o in out],
                              dtype=object if self._string else np.int64).reshape(np.shape(values))
        mask_value = 0 if self.output_mode == "int" else -1
        keys = np.asarray(flat, dtype=object)
        out = self._table.find(keys, -1)
        for i in np.flatnonzero(out == -1):
            token = flat[i]
            if self.mask_token is not None and token == self.mask_token:
                out[i] = mask_value
            elif self.num_oov_indices == 0:
                raise InvalidArgumentError(f"When `num_oov_indices=0` all inputs should be in "
                                           f"vocabulary, found OOV values {token!r}, consider setting "
                                           "`num_oov_indices=1`.")
            else:
                out[i] = self._oov_index(token)
        return out.reshape(np.shape(values))

    def _encode(self, values):
        indices = self._lookup(values)
        if self.output_mode == "int":
            return indices
        return encode_numpy(indices, self.output_mode, self._depth(), self._idf)

    def _out_dtype(self):
        if self.invert:
            return _dtypes.string if self._string else _dtypes.int64
        return _dtypes.int64 if self.output_mode == "int" else _dtypes.float32

    def call(self, inputs):
        if self.output_mode != "int" and not self.pad_to_max_tokens and not self._tokens and \
                not self._has_input_vocabulary:
            raise RuntimeError(f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, you must "
                               "set the layer's vocabulary before calling it. Either pass a `vocabulary` argument to "
                               "the layer, or call `adapt` with some sample data.")
        return _run_numpy(self._encode, inputs, self._out_dtype(), self.compute_output_shape(inputs.shape))

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return TensorShape(input_shape)
        s = TensorShape(input_shape).as_list()
        depth = self._depth()
        if self.output_mode == "one_hot" and (not s or s[-1] != 1):
            return TensorShape(s + [depth])
        if len(s) <= 1:
            return TensorShape([depth])
        return TensorShape(s[:-1] + [depth])

    def get_config(self):
        config = super().get_config()
        vocab = self.input_vocabulary
        if vocab is not None and not isinstance(vocab, str):
            vocab = np.asarray(vocab.numpy() if _is_tensor(vocab) else vocab).tolist()
            vocab = [v.decode("utf-8") if isinstance(v, bytes) else v for v in vocab]
        idf = self.input_idf_weights
        if idf is not None:
            idf = np.asarray(idf.numpy() if _is_tensor(idf) else idf).tolist()
        if vocab is None and self._tokens:
            # Adapted: Keras keeps the vocabulary in an asset file beside the config; Kiln writes it in the config.
            vocab = self.get_vocabulary()
            idf = None if self._idf is None else self._idf[:len(vocab)].tolist()
        config.update(invert=self.invert, max_tokens=self.max_tokens, num_oov_indices=self.num_oov_indices,
                      oov_token=self.oov_token, mask_token=self.mask_token, output_mode=self.output_mode,
                      sparse=self.sparse, pad_to_max_tokens=self.pad_to_max_tokens, vocabulary=vocab,
                      idf_weights=idf)
        return config


class StringLookup(_IndexLookup):
    """Strings -> integer indices (or one_hot / multi_hot / count / tf_idf vectors); invert=True maps back."""

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]", vocabulary=None,
                 idf_weights=None, encoding="utf-8", invert=False, output_mode="int", sparse=False,
                 pad_to_max_tokens=False, **kwargs):
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else "float32"
        self.encoding = encoding
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, idf_weights, invert,
                         output_mode, sparse, pad_to_max_tokens, **kwargs)

    def get_config(self):
        config = super().get_config()
        config.update(encoding=self.encoding)
        return config


class IntegerLookup(_IndexLookup):
    """Integers -> indices, as StringLookup (OOV token -1 by default; several OOV indices: value mod n)."""

    _string = False

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1, vocabulary=None,
                 vocabulary_dtype="int64", idf_weights=None, invert=False, output_mode="int", sparse=False,
                 pad_to_max_tokens=False, **kwargs):
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else "float32"
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"If `max_tokens` is set for `IntegerLookup`, it must be greater than 1. Received: "
                             f"max_tokens={max_tokens}.")
        if num_oov_indices < 0:
            raise ValueError(f"The value of `num_oov_indices` argument for `IntegerLookup` must >= 0. Received "
                             f"num_oov_indices={num_oov_indices}.")
        self.vocabulary_dtype = vocabulary_dtype
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, idf_weights, invert,
                         output_mode, sparse, pad_to_max_tokens, **kwargs)

    def get_config(self):
        config = super().get_config()
        config.update(vocabulary_dtype=self.vocabulary_dtype)
        return config


# ---- TextVectorization -------------------------------------------------------------------------------------------

_PUNCTUATION = re.compile(r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']')


class TextVectorization(_WholeInputs, Layer):
    """Strings -> standardized, split (and n-grammed) tokens -> a StringLookup with "" as its mask token: int
    sequences (padded with 0 to output_sequence_length, or to the longest in the batch), or multi_hot / count /
    tf_idf vectors."""

    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation", split="whitespace", ngrams=None,
                 output_mode="int", output_sequence_length=None, pad_to_max_tokens=False, vocabulary=None,
                 idf_weights=None, sparse=False, ragged=False, encoding="utf-8", **kwargs):
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else "float32"
        kwargs.pop("vocabulary_size", None)
        super().__init__(**kwargs)
        if output_mode == "binary":
            output_mode = "multi_hot"
        self.output_mode = _check_output_mode(output_mode, ("int", "multi_hot", "count", "tf_idf"))
        if standardize not in (None, "lower", "strip_punctuation", "lower_and_strip_punctuation") and \
                not callable(standardize):
            raise ValueError(f"Unkown value for `standardize` argument of layer {self.name}. If you want to use a "
                             "custom callable, make sure to pass it as a callable. Allowed values are: None, 'lower', "
                             f"'strip_punctuation', 'lower_and_strip_punctuation'. Received: standardize="
                             f"{standardize}")
        if split not in (None, "whitespace", "character") and not callable(split):
            raise ValueError(f"Unkown value for `split` argument of layer {self.name}. Allowed values are: None, "
                             f"'whitespace', 'character'. Received: split={split}")
        if ngrams is not None and not (isinstance(ngrams, int) and ngrams > 0 or isinstance(ngrams, tuple) and
                                       all(isinstance(n, int) and n > 0 for n in ngrams)):
            raise ValueError(f"`ngrams` must be None, an integer, or a tuple of integers. Received: ngrams={ngrams}")
        if output_mode != "int" and output_sequence_length is not None:
            raise ValueError(f"`output_sequence_length` must not be set if `output_mode` is not 'int'. Received "
                             f"output_sequence_length={output_sequence_length}.")
        _no_sparse("TextVectorization", sparse, ragged)
        self._standardize = standardize
        self._split = split
        self._ngrams = ngrams
        self._ngram_widths = None if ngrams is None else (tuple(range(1, ngrams + 1)) if isinstance(ngrams, int)
                                                          else tuple(ngrams))
        self._output_sequence_length = output_sequence_length
        self._max_tokens = max_tokens
        self._pad_to_max_tokens = pad_to_max_tokens
        self._encoding = encoding
        self._lookup_layer = StringLookup(max_tokens=max_tokens, vocabulary=vocabulary, idf_weights=idf_weights,
                                          pad_to_max_tokens=pad_to_max_tokens, mask_token="", output_mode=output_mode,
                                          name=f"{self.name}_lookup")

    # -- text processing (Python) --
    def _standardize_text(self, text):
        if callable(self._standardize):
            out = self._standardize(_C.constant(np.asarray([text.encode("utf-8")], dtype=object), None))
            out = out.numpy() if _is_tensor(out) else np.asarray(out)
            return _as_token(np.asarray(out).reshape(-1)[0], True)
        if self._standardize in ("lower", "lower_and_strip_punctuation"):
            text = text.lower()
        if self._standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
            text = _PUNCTUATION.sub("", text)
        return text

    def _split_text(self, text):
        if self._split is None:
            return [text]
        if self._split == "whitespace":
            return text.split()
        if self._split == "character":
            return list(text)
        out = self._split(_C.constant(np.asarray([text.encode("utf-8")], dtype=object), None))
        out = out.numpy() if _is_tensor(out) else np.asarray(out, dtype=object)
        return [_as_token(v, True) for v in np.asarray(out, dtype=object).reshape(-1).tolist()]

    def _ngram(self, tokens):
        if self._ngram_widths is None:
            return tokens
        out = []
        for n in self._ngram_widths:
            out += [" ".join(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]
        return out

    def _tokens(self, document):
        return self._ngram(self._split_text(self._standardize_text(_as_token(document, True))))

    def _document_list(self, values):
        values = np.asarray(values, dtype=object)
        if values.ndim == 2 and values.shape[-1] == 1:
            values = values[:, 0]
        if values.ndim > 1:
            raise ValueError(f"When using TextVectorization to tokenize strings, the input rank must be 1 or the last "
                             f"shape dimension must be 1. Received: inputs.shape={values.shape} with rank="
                             f"{values.ndim}")
        return values.reshape(-1).tolist(), values.ndim == 0

    # -- vocabulary --
    def adapt(self, data, batch_size=None, steps=None):
        if self._lookup_layer._has_input_vocabulary:
            raise ValueError(f"Cannot adapt layer '{self.name}' after setting a static vocabulary via `vocabulary` "
                             "argument or `set_vocabulary()` method.")
        documents = self._lookup_layer._documents(data, steps)
        self._lookup_layer._adapt_token_lists(self._tokens(value) for doc in documents for value in doc)

    def get_vocabulary(self, include_special_tokens=True):
        return self._lookup_layer.get_vocabulary(include_special_tokens)

    def vocabulary_size(self):
        return self._lookup_layer.vocabulary_size()

    def set_vocabulary(self, vocabulary, idf_weights=None):
        self._lookup_layer.set_vocabulary(vocabulary, idf_weights)

    # -- call --
    def _vectorize(self, values):
        docs, scalar = self._document_list(values)
        token_lists = [self._tokens(d) for d in docs]
        lookup = self._lookup_layer
        if self.output_mode != "int":
            out = np.stack([lookup._encode(np.asarray(t, dtype=object)) if t else
                            np.zeros(lookup._depth(), np.float32) for t in token_lists]) if token_lists else \
                np.zeros((0, lookup._depth()), np.float32)
            return out[0] if scalar else out
        length = self._output_sequence_length
        if length is None:
            length = max([len(t) for t in token_lists] + [0])
        out = np.zeros((len(token_lists), length), np.int64)
        for i, tokens in enumerate(token_lists):
            ids = lookup._lookup(np.asarray(tokens[:length], dtype=object)) if tokens else []
            out[i, :len(ids)] = ids
        return out[0] if scalar else out

    def call(self, inputs):
        if inputs.dtype != _dtypes.string:
            raise ValueError(f"TextVectorization expects string inputs, got {inputs.dtype.name}")
        if self.output_mode != "int" and not self._pad_to_max_tokens and not self._lookup_layer._tokens:
            raise RuntimeError(f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, you must "
                               "set the layer's vocabulary before calling it. Either pass a `vocabulary` argument to "
                               "the layer, or call `adapt` with some sample data.")
        out_dtype = _dtypes.int64 if self.output_mode == "int" else _dtypes.float32
        return _run_numpy(self._vectorize, inputs, out_dtype, self.compute_output_shape(inputs.shape))

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        batch = s[0] if s else None
        if self.output_mode == "int":
            return TensorShape([batch, self._output_sequence_length])
        return TensorShape([batch, self._lookup_layer._depth()])

    def get_config(self):
        config = super().get_config()
        lookup = self._lookup_layer.get_config()
        config.update(max_tokens=self._max_tokens,
                      standardize=self._standardize if not callable(self._standardize) else None,
                      split=self._split if not callable(self._split) else None, ngrams=self._ngrams,
                      output_mode=self.output_mode, output_sequence_length=self._output_sequence_length,
                      pad_to_max_tokens=self._pad_to_max_tokens, sparse=False, ragged=False,
                      vocabulary=lookup["vocabulary"], idf_weights=lookup["idf_weights"], encoding=self._encoding,
                      vocabulary_size=self.vocabulary_size())
        return config
