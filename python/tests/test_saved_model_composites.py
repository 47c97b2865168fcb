"""RaggedTensors and SparseTensors across tf.saved_model: restored functions take and return composites (as
their component tensors underneath), and serving signatures take a composite argument's components as named
inputs `x`, `x_1`, ... (TF 2.15 flattens a composite input the same way) and give composite outputs back."""
import numpy as np

import kiln as tf


class Grower(tf.Module):
    def __init__(self):
        self.v = tf.Variable(100.0)

    @tf.function
    def grow(self, x):
        return x * self.v

    @tf.function(input_signature=[tf.SparseTensorSpec([2, 3], tf.float32)])
    def densify(self, s):
        return tf.sparse.to_dense(s) * self.v

    @tf.function(input_signature=[{"ids": tf.RaggedTensorSpec([None, None], tf.int64),
                                   "scale": tf.TensorSpec([], tf.float32, name="scale")}])
    def nested(self, features):
        return tf.cast(features["ids"], tf.float32) * features["scale"]


def test_restored_functions_take_and_return_composites(tmp_path):
    m = Grower()
    m.grow.get_concrete_function(tf.RaggedTensorSpec(shape=[None, None], dtype=tf.float32))
    m.grow.get_concrete_function(tf.TensorSpec([None], tf.float32))
    tf.saved_model.save(m, str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    out = loaded.grow(tf.ragged.constant([[1.0, 4.0, 3.0], [2.0]]))
    assert isinstance(out, tf.RaggedTensor) and out.to_list() == [[100.0, 400.0, 300.0], [200.0]]
    assert loaded.grow(tf.constant([1.0, 2.0])).numpy().tolist() == [100.0, 200.0]  # the dense trace
    dense = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]], np.float32)
    assert loaded.densify(tf.sparse.from_dense(dense)).numpy().tolist() == (dense * 100).tolist()
    ids = tf.ragged.constant([[1, 2], [3]], dtype=tf.int64)
    nested = loaded.nested({"ids": ids, "scale": 0.5})
    assert nested.to_list() == [[0.5, 1.0], [1.5]]


class Doubler(tf.Module):
    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.float32)])
    def f(self, x):
        return {"doubled": x * 2.0, "total": tf.reduce_sum(x.flat_values)}


def test_a_serving_signature_takes_a_composites_components(tmp_path):
    m = Doubler()
    tf.saved_model.save(m, str(tmp_path), signatures=m.f)
    sig = tf.saved_model.load(str(tmp_path)).signatures["serving_default"]
    assert repr(sig.structured_input_signature) == (
        "((), {'x': TensorSpec(shape=(None,), dtype=tf.float32, name='x'), "
        "'x_1': TensorSpec(shape=(None,), dtype=tf.int64, name='x_1')})")
    assert repr(sig.structured_outputs["doubled"]) == \
        "RaggedTensorSpec(TensorShape([None, None]), tf.float32, 1, tf.int64)"
    rt = tf.ragged.constant([[1.0, 2.0], [3.0]])
    out = sig(x=rt.flat_values, x_1=rt.row_splits)
    assert sorted(out) == ["doubled", "total"]
    assert out["doubled"].to_list() == [[2.0, 4.0], [6.0]] and out["total"].numpy() == 6.0
