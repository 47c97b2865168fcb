"""tf.nn's connectionist temporal classification: ctc_loss as the forward algorithm in log space, composed of
differentiable ops one time step at a time (so its gradient is autodiff's: mathematically TF's softmax minus the
posterior occupancy, computed through the recursion rather than by TF's closed form); ctc_greedy_decoder,
ctc_beam_search_decoder, collapse_repeated and ctc_unique_labels on the host (NumPy), their outputs integer and
not differentiable."""
import numpy as np

from . import _C, _ops, dtypes as _dtypes
from . import math as _math
from . import sparse_ops as _sparse_ops
from . import errors as _errors
from ._array_ops import _tensor
from .sparse_tensor import SparseTensor


def _host(fn, inputs, tout, shapes):
    """fn(*numpy arrays) -> tuple of arrays: run now when every input has a value, else as a py_function whose
    outputs are given `shapes` (reshape dims, -1 for the one known only at run time)."""
    if any(t._is_symbolic for t in inputs):
        from .function import py_function
        outs = py_function(lambda *a: fn(*[x.numpy() for x in a]), inputs, tout)
        return [_ops.reshape(o, s) for o, s in zip(outs, shapes)]
    return [_ops.constant(v, d) for v, d in zip(fn(*[t.numpy() for t in inputs]), tout)]


# ---- the loss ------------------------------------------------------------------------------

def _logsumexp(stacked, axis):
    """log(sum(exp(x))) over `axis` that stays -inf, with a zero (not NaN) gradient, where every term is -inf."""
    peak = _ops.stop_gradient(_ops.reduce_max(stacked, axis, keepdims=True))
    peak = _ops.where(_ops.equal(peak, float("-inf")), _ops.zeros_like(peak), peak)
    total = _ops.reduce_sum(_ops.exp(_ops.subtract(stacked, peak)), axis)
    empty = _ops.equal(total, 0.0)
    safe = _ops.where(empty, _ops.ones_like(total), total)
    value = _ops.add(_ops.log(safe), _ops.squeeze(peak, [axis]))
    return _ops.where(empty, _ops.fill(_ops.shape(value), _ops.cast(float("-inf"), value.dtype)), value)


def _shift(alpha, by, minus_inf):
    """alpha [batch, S] moved `by` places along S, -inf coming in."""
    pad = _ops.fill([alpha.shape[0], by], minus_inf)
    return _ops.concat([pad, alpha[:, :-by]], 1)


def _dense_ctc(labels, label_length, logits, logit_length, blank):
    """-log p(labels | logits): labels [batch, L], logits [T, batch, classes], time-major, blank any class."""
    steps, batch, classes = logits.shape.as_list()
    if None in (steps, batch, classes):
        raise ValueError(f"kiln.nn.ctc_loss needs the logits' shape known while tracing, got {logits.shape}")
    max_label = labels.shape[1]
    extended = 2 * max_label + 1
    dtype = logits.dtype
    log_probs = _C.log_softmax(logits, -1)
    # The extended label sequence: blank, l1, blank, l2, ..., blank; its log probabilities [T, batch, S] by one-hot.
    labels = _ops.cast(labels, _dtypes.int32)
    blanks = _ops.fill([batch, max_label], _ops.constant(blank, _dtypes.int32))
    ext = _ops.reshape(_ops.stack([blanks, labels], 2), [batch, 2 * max_label])
    ext = _ops.concat([ext, _ops.fill([batch, 1], _ops.constant(blank, _dtypes.int32))], 1)
    ext_log_probs = _ops.einsum("tbc,bsc->tbs", log_probs, _ops.one_hot(ext, classes, dtype=dtype))
    # A label may be reached from two places back when it differs from the label before it (no blank skipped
    # between equal labels).
    differs = _ops.not_equal(ext[:, 2:], ext[:, :-2])
    odd = np.arange(2, extended) % 2 == 1
    skip = _ops.concat([_ops.fill([batch, 2], False), _ops.logical_and(differs, _ops.constant(odd[None, :]))], 1)
    minus_inf = _ops.cast(float("-inf"), dtype)
    start = np.full(extended, -np.inf)
    start[:2] = 0.0
    alpha = _ops.add(_ops.cast(_ops.constant(start[None, :]), dtype), ext_log_probs[0])
    logit_length = _ops.cast(logit_length, _dtypes.int32)
    for t in range(1, steps):
        candidates = _ops.stack([alpha, _shift(alpha, 1, minus_inf),
                                 _ops.where(skip, _shift(alpha, 2, minus_inf), _ops.fill([batch, extended],
                                                                                         minus_inf))], 2)
        stepped = _ops.add(_logsumexp(candidates, 2), ext_log_probs[t])
        # a sequence that has ended keeps its alpha
        alpha = _ops.where(_ops.reshape(_ops.less(t, logit_length), [batch, 1]), stepped, alpha)
    # The paths end on the last label or on the blank after it.
    last = _ops.multiply(_ops.cast(label_length, _dtypes.int32), 2)
    ends = _ops.logical_or(_ops.one_hot(last, extended, True, False, dtype=_dtypes.bool),
                           _ops.one_hot(_ops.subtract(last, 1), extended, True, False, dtype=_dtypes.bool))
    log_likelihood = _logsumexp(_ops.where(ends, alpha, _ops.fill([batch, extended], minus_inf)), 1)
    return _ops.negative(log_likelihood)


def _sparse_labels_to_dense(labels, batch):
    """(dense labels, each row's length): a SparseTensor's labels are left-aligned, so a row's length is its count."""
    rows = _ops.cast(labels.indices[:, 0], _dtypes.int32)
    length = _math.unsorted_segment_sum(_ops.ones_like(rows), rows, batch)
    return _sparse_ops.to_dense(labels), length


def ctc_loss(labels, logits, label_length, logit_length, logits_time_major=True, unique=None, blank_index=None,
             name=None):
    """The CTC negative log likelihood per sequence, [batch]: labels dense [batch, max_label_length] with
    label_length, or a SparseTensor (label_length None, and then blank_index is required); logits
    [frames, batch, classes] ([batch, frames, classes] unless logits_time_major) are unnormalized. blank_index
    defaults to 0 for dense labels; a negative one counts from num_classes. A label sequence the frames cannot
    hold gives inf. `unique` (a speed-up hint in TF) is accepted and not needed."""
    logits = _tensor(logits)
    if logits.shape.rank != 3:
        raise ValueError(f"logits must be 3-D [frames, batch, num_classes], got shape {logits.shape}")
    if not logits_time_major:
        logits = _ops.transpose(logits, [1, 0, 2])
    classes, batch = logits.shape[2], logits.shape[1]
    if isinstance(labels, SparseTensor):
        if blank_index is None:
            raise ValueError("Argument `blank_index` must be provided when `labels` is a `SparseTensor`.")
        labels, label_length = _sparse_labels_to_dense(labels, batch)
    else:
        if label_length is None:
            raise ValueError("Argument `label_length` must be provided when `labels` is a dense tensor.")
        labels = _tensor(labels)
        blank_index = 0 if blank_index is None else blank_index
    blank_index = int(blank_index)
    if blank_index < 0:
        blank_index += classes
    if not 0 <= blank_index < classes:
        raise ValueError(f"blank_index {blank_index} is out of range for {classes} classes")
    return _dense_ctc(labels, _tensor(label_length), logits, _tensor(logit_length), blank_index)


# ---- decoding and label helpers (host) ------------------------------------------------------

def _greedy(inputs, lengths, merge_repeated, blank):
    steps, batch, _ = inputs.shape
    best = inputs.argmax(-1)
    indices, values = [], []
    neg_sum = np.zeros((batch, 1), inputs.dtype)
    longest = 0
    for b in range(batch):
        previous, count = -1, 0
        for t in range(int(lengths[b])):
            c = int(best[t, b])
            neg_sum[b, 0] -= inputs[t, b, c]
            if c != blank and not (merge_repeated and c == previous):
                indices.append((b, count))
                values.append(c)
                count += 1
            previous = c
        longest = max(longest, count)
    return (np.array(indices, np.int64).reshape(-1, 2), np.array(values, np.int64),
            np.array([batch, longest], np.int64), neg_sum)


def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True, blank_index=None):
    """The best class of each frame, repeats merged (unless merge_repeated is False) and blanks dropped:
    ([SparseTensor [batch, longest decoding] of int64 classes], -sum of each sequence's best logits [batch, 1]).
    blank_index defaults to num_classes - 1; a negative one counts from num_classes."""
    inputs = _tensor(inputs)
    if inputs.shape.rank != 3:
        raise ValueError(f"inputs must be 3-D [max_time, batch_size, num_classes], got shape {inputs.shape}")
    classes = inputs.shape[2]
    blank = classes - 1 if blank_index is None else int(blank_index)
    if blank < 0:
        blank += classes
    lengths = _ops.cast(_tensor(sequence_length), _dtypes.int32)
    idx, val, shape, neg = _host(lambda x, n: _greedy(x, n, bool(merge_repeated), blank), [inputs, lengths],
                                 [_dtypes.int64, _dtypes.int64, _dtypes.int64, inputs.dtype],
                                 [[-1, 2], [-1], [2], [inputs.shape[1], 1]])
    return [SparseTensor(idx, val, shape)], neg


def _log_add(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    return max(a, b) + np.log1p(np.exp(-abs(a - b)))


def _beam_search(inputs, lengths, beam_width, top_paths):
    """Prefix beam search per sequence: each prefix keeps the log probability of its alignments ending in a
    blank and in its last label; the beam_width likeliest prefixes survive each frame. The blank is the last
    class."""
    steps, batch, classes = inputs.shape
    blank = classes - 1
    shifted = inputs - inputs.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    found, scores = [], np.full((batch, top_paths), -np.inf, inputs.dtype)
    for b in range(batch):
        beams = {(): (0.0, -np.inf)}
        for t in range(int(lengths[b])):
            lp = log_probs[t, b].astype(np.float64)
            grown = {}

            def add(prefix, blank_end, label_end):
                old = grown.get(prefix, (-np.inf, -np.inf))
                grown[prefix] = (_log_add(old[0], blank_end), _log_add(old[1], label_end))

            for prefix, (p_blank, p_label) in beams.items():
                add(prefix, _log_add(p_blank, p_label) + lp[blank], -np.inf)
                if prefix:
                    add(prefix, -np.inf, p_label + lp[prefix[-1]])  # the last label repeated
                for c in range(classes - 1):
                    # a repeat of the last label is a new one only after a blank
                    before = p_blank if prefix and prefix[-1] == c else _log_add(p_blank, p_label)
                    add(prefix + (c,), -np.inf, before + lp[c])
            ranked = sorted(grown.items(), key=lambda kv: -_log_add(*kv[1]))
            beams = dict(ranked[:beam_width])
        ranked = sorted(beams.items(), key=lambda kv: -_log_add(*kv[1]))[:top_paths]
        found.append([prefix for prefix, _ in ranked])
        for k, (_, p) in enumerate(ranked):
            scores[b, k] = _log_add(*p)
    outputs = []
    for k in range(top_paths):
        indices, values, longest = [], [], 0
        for b in range(batch):
            if k < len(found[b]):
                path = found[b][k]
                indices += [(b, i) for i in range(len(path))]
                values += list(path)
                longest = max(longest, len(path))
        outputs += [np.array(indices, np.int64).reshape(-1, 2), np.array(values, np.int64),
                    np.array([batch, longest], np.int64)]
    return (*outputs, scores)


def ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1):
    """The top_paths likeliest labelings by prefix beam search over the softmax of inputs ([max_time, batch,
    num_classes] logits, the blank the last class): ([top_paths SparseTensors of int64 labels], the
    labelings' log probabilities [batch, top_paths], each summed over the alignments the beam kept)."""
    inputs = _tensor(inputs)
    if inputs.shape.rank != 3:
        raise ValueError(f"inputs must be 3-D [max_time, batch_size, num_classes], got shape {inputs.shape}")
    beam_width, top_paths = int(beam_width), int(top_paths)
    if top_paths < 1 or top_paths > beam_width:
        raise _errors.InvalidArgumentError(f"top_paths must be in [1, beam_width={beam_width}], got {top_paths}")
    lengths = _ops.cast(_tensor(sequence_length), _dtypes.int32)
    tout = [_dtypes.int64] * (3 * top_paths) + [inputs.dtype]
    shapes = [[-1, 2], [-1], [2]] * top_paths + [[inputs.shape[1], top_paths]]
    out = _host(lambda x, n: _beam_search(x, n, beam_width, top_paths), [inputs, lengths], tout, shapes)
    return [SparseTensor(*out[3 * k:3 * k + 3]) for k in range(top_paths)], out[-1]


def _collapse(labels, lengths):
    batch = labels.shape[0]
    rows = []
    for b in range(batch):
        row = labels[b, :int(lengths[b])]
        keep = np.ones(len(row), bool)
        keep[1:] = row[1:] != row[:-1]
        rows.append(row[keep])
    width = max((len(r) for r in rows), default=0)
    out = np.zeros((batch, width), labels.dtype)
    for b, r in enumerate(rows):
        out[b, :len(r)] = r
    return out, np.array([len(r) for r in rows], np.int32)


def collapse_repeated(labels, seq_length, name=None):
    """(labels with each run of a repeated label merged into one, padded with 0 to the longest result; the new
    lengths): labels [batch, max_length] of which the first seq_length of each row count."""
    labels = _tensor(labels)
    return tuple(_host(_collapse, [labels, _ops.cast(_tensor(seq_length), _dtypes.int32)],
                       [labels.dtype, _dtypes.int32], [[labels.shape[0], -1], [labels.shape[0]]]))


def _unique_rows(labels):
    uniq = np.zeros(labels.shape, np.int64)
    idx = np.zeros(labels.shape, np.int32)
    for b, row in enumerate(labels):
        seen = {}
        for i, v in enumerate(row.tolist()):
            idx[b, i] = seen.setdefault(v, len(seen))
        uniq[b, :len(seen)] = list(seen)
    return uniq, idx


def ctc_unique_labels(labels, name=None):
    """(each row's distinct labels in order of first appearance, padded with 0, int64; each label's index among
    them, int32), for labels [batch, max_label_length]."""
    labels = _tensor(labels)
    dims = [-1 if d is None else d for d in labels.shape.as_list()]
    return tuple(_host(_unique_rows, [labels], [_dtypes.int64, _dtypes.int32], [dims, dims]))
