"""keras.layers.DenseFeatures (Keras 2.15's v2 layer): a dict of raw features -> one float tensor, the dense
columns' outputs (tf.feature_column) flattened and concatenated in the order of the columns' names. It owns the
embedding columns' weights ("<layer>/<column>_embedding/embedding_weights"; a shared embedding's once)."""
import numpy as np

from .. import _C
from ..tensor_shape import TensorShape
from ._layer import Layer


class DenseFeatures(Layer):

    def __init__(self, feature_columns, trainable=True, name=None, partitioner=None, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        from ..feature_column._columns import CategoricalColumn, DenseColumn
        # A column is a namedtuple: one column is not a list of them.
        single = isinstance(feature_columns, (DenseColumn, CategoricalColumn)) or \
            not isinstance(feature_columns, (list, tuple))
        columns = [feature_columns] if single else list(feature_columns)
        if not columns:
            raise ValueError("Expected feature_columns to be iterable, found list.")
        for column in columns:
            if not isinstance(column, DenseColumn):
                raise ValueError(f"Items of feature_columns must be a DenseColumn. You can wrap a categorical column "
                                 f"with an embedding_column or indicator_column. Given: {column}")
        self._feature_columns = sorted(columns, key=lambda c: c.name)
        self._embeddings = {}
        self._supports_ragged_inputs = True

    def build(self, input_shape):
        for column in self._feature_columns:
            if hasattr(column, "_weights_spec"):
                name, shape, initializer, trainable = column._weights_spec()
                if name not in self._embeddings:
                    self._embeddings[name] = self.add_weight(name=name, shape=shape, initializer=initializer,
                                                             trainable=trainable and self.trainable)
        self.built = True

    def embedding_weights(self, column):
        return self._embeddings[column._weights_spec()[0]]

    def call(self, features, cols_to_output_tensors=None, training=None):
        if not isinstance(features, dict):
            raise ValueError(f"We expected a dictionary here. Instead we got: {features}")
        from ..feature_column._columns import _Cache
        cache = _Cache(features)
        outputs = []
        for column in self._feature_columns:
            tensor = column._dense(cache, self)
            outputs.append(tensor)
            if cols_to_output_tensors is not None:
                cols_to_output_tensors[column] = tensor
        return outputs[0] if len(outputs) == 1 else _C.concat(outputs, -1)

    def compute_output_shape(self, input_shape):
        batch = None
        for shape in (input_shape.values() if isinstance(input_shape, dict) else []):
            batch = TensorShape(shape).as_list()[0] if TensorShape(shape).rank else None
            break
        width = sum(int(np.prod(c.variable_shape.as_list())) for c in self._feature_columns)
        return TensorShape([batch, width])

    def get_config(self):
        from ..feature_column._columns import serialize_feature_column
        config = super().get_config()
        config.update(feature_columns=[serialize_feature_column(c) for c in self._feature_columns], partitioner=None)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ..feature_column._columns import deserialize_feature_column
        config = dict(config)
        config["feature_columns"] = [deserialize_feature_column(c, custom_objects) for c in config["feature_columns"]]
        return cls(**config)
