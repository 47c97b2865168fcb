"""keras.backend's CTC functions (Keras 2.15) on tf.nn's CTC ops: ctc_label_dense_to_sparse, ctc_batch_cost
(keras.io's OCR examples' loss) and ctc_decode. y_pred holds probabilities (a softmax's output), [batch, time,
classes], the blank the last class, as Keras has it."""
import numpy as np

from .. import _ops
from .. import dtypes as _dtypes
from ..sparse_tensor import SparseTensor
from .backend import epsilon


def ctc_label_dense_to_sparse(labels, label_lengths):
    """The first label_lengths[i] entries of each row of labels, as a SparseTensor of labels' dense shape."""
    labels = _ops.convert_to_tensor(labels)
    lengths = _ops.cast(_ops.convert_to_tensor(label_lengths), _dtypes.int32)
    steps = _ops.shape(labels, out_type=_dtypes.int32)[1]
    kept = _ops.less(_ops.expand_dims(_ops.range(steps), 0), _ops.expand_dims(lengths, 1))
    indices = _ops.where(kept)
    return SparseTensor(indices, _ops.gather_nd(labels, indices), _ops.shape(labels, out_type=_dtypes.int64))


def _log_time_major(y_pred):
    return _ops.log(_ops.transpose(_ops.convert_to_tensor(y_pred), [1, 0, 2]) + epsilon())


def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """The CTC loss of each batch element, [batch, 1]: y_true [batch, max_label_length] labels, y_pred [batch,
    time, classes] probabilities, input_length and label_length [batch, 1]. A label longer than its input
    costs 0, as Keras' ignore_longer_outputs_than_inputs."""
    from .. import nn as _nn
    label_length = _ops.cast(_ops.squeeze(_ops.convert_to_tensor(label_length), axis=-1), _dtypes.int32)
    input_length = _ops.cast(_ops.squeeze(_ops.convert_to_tensor(input_length), axis=-1), _dtypes.int32)
    sparse = ctc_label_dense_to_sparse(y_true, label_length)
    sparse = SparseTensor(sparse.indices, _ops.cast(sparse.values, _dtypes.int32), sparse.dense_shape)
    loss = _nn.ctc_loss(labels=sparse, logits=_log_time_major(y_pred), label_length=None,
                        logit_length=input_length, logits_time_major=True, blank_index=-1)
    loss = _ops.where(_ops.greater(label_length, input_length), _ops.zeros_like(loss), loss)
    return _ops.expand_dims(loss, 1)


def _merge_repeats(sparse):
    """A decoded SparseTensor with consecutive equal labels of each row merged (TF1's beam merge_repeated)."""
    indices, values = sparse.indices.numpy(), sparse.values.numpy()
    keep = np.ones(len(values), bool)
    keep[1:] = ~((indices[1:, 0] == indices[:-1, 0]) & (values[1:] == values[:-1]))
    rows, kept = indices[keep, 0], values[keep]
    columns = np.zeros(len(kept), np.int64)
    for i in range(1, len(kept)):
        columns[i] = columns[i - 1] + 1 if rows[i] == rows[i - 1] else 0
    width = int(columns.max()) + 1 if len(kept) else 0
    return SparseTensor(np.stack([rows, columns], 1).astype(np.int64), kept,
                        [int(sparse.dense_shape.numpy()[0]), width])


def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1):
    """([top_paths dense [batch, time] int64 decodings, -1 past each one's end], their log probabilities):
    best path (greedy) or beam search over y_pred's probabilities."""
    from .. import nn as _nn
    from .. import sparse as _sparse
    y_pred = _ops.convert_to_tensor(y_pred)
    samples, steps = y_pred.shape[0], y_pred.shape[1]
    logits = _log_time_major(y_pred)
    input_length = _ops.cast(_ops.convert_to_tensor(input_length), _dtypes.int32)
    if greedy:
        decoded, log_prob = _nn.ctc_greedy_decoder(inputs=logits, sequence_length=input_length)
    else:
        decoded, log_prob = _nn.ctc_beam_search_decoder(inputs=logits, sequence_length=input_length,
                                                        beam_width=beam_width, top_paths=top_paths)
        decoded = [_merge_repeats(st) for st in decoded]
    dense = [_sparse.to_dense(SparseTensor(st.indices, st.values, [samples, steps]), default_value=-1)
             for st in decoded]
    return dense, log_prob
