"""keras.utils.FeatureSpace (Keras 2.15): a dict of raw features -> one preprocessing layer each (Normalization,
Discretization, IntegerLookup, StringLookup, Hashing, Rescaling, Identity, or the user's), hashed crosses of
features (HashedCrossing), the categorical ones one-hot encoded (CategoryEncoding), all concatenated in the order
of their sorted names (crosses after) or returned as a dict. Built on the first call or get_inputs(), after
adapt(); saved in .keras files by its config (the preprocessors' vocabularies) and their weights."""
from .. import _C
from .. import dtypes as _dtypes
from . import backend
from ._layer import Layer


def _layers():
    from . import layers
    return layers


class Cross:
    """Features hashed together into crossing_dim bins, encoded as int or one_hot."""

    def __init__(self, feature_names, crossing_dim, output_mode="one_hot"):
        if output_mode not in {"int", "one_hot"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'int', 'one_hot'}. "
                             f"Received: output_mode={output_mode}")
        self.feature_names = tuple(feature_names)
        self.crossing_dim = crossing_dim
        self.output_mode = output_mode

    @property
    def name(self):
        return "_X_".join(self.feature_names)

    def get_config(self):
        return {"feature_names": self.feature_names, "crossing_dim": self.crossing_dim,
                "output_mode": self.output_mode}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Feature:
    """A feature's input dtype, its preprocessing layer, and how its output is encoded (int, one_hot, float)."""

    def __init__(self, dtype, preprocessor, output_mode):
        if output_mode not in {"int", "one_hot", "float"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'int', 'one_hot', 'float'}. "
                             f"Received: output_mode={output_mode}")
        self.dtype = dtype
        if isinstance(preprocessor, dict):
            preprocessor = _layers().deserialize(preprocessor)
        self.preprocessor = preprocessor
        self.output_mode = output_mode

    def get_config(self):
        from ._serialization import serialize_keras_object
        return {"dtype": self.dtype, "preprocessor": serialize_keras_object(self.preprocessor),
                "output_mode": self.output_mode}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _serialized(obj):
    from ._serialization import serialize_keras_object
    out = serialize_keras_object(obj)
    out["module"] = "keras.utils.feature_space"
    return out


def _deserialized(config):
    from ._serialization import deserialize_keras_object
    return deserialize_keras_object(config, module_objects={"Feature": Feature, "Cross": Cross})


def _named(kind, name):
    return f"{name or backend.unique_object_name(kind, zero_based=False)}_preprocessor"


def _cardinality(preprocessor):
    """How many values a categorical preprocessor's int output takes (what its one-hot vector needs)."""
    layers = _layers()
    if isinstance(preprocessor, (layers.IntegerLookup, layers.StringLookup)):
        return preprocessor.vocabulary_size()
    if isinstance(preprocessor, layers.CategoryEncoding):
        return preprocessor.num_tokens
    if isinstance(preprocessor, (layers.Discretization, layers.HashedCrossing, layers.Hashing)):
        return preprocessor.num_bins
    return None


class FeatureSpace(Layer):
    """One preprocessing and encoding for a dict of structured features; see the module's docstring."""

    # -- the feature kinds --
    @classmethod
    def cross(cls, feature_names, crossing_dim, output_mode="one_hot"):
        return Cross(feature_names, crossing_dim, output_mode=output_mode)

    @classmethod
    def feature(cls, dtype, preprocessor, output_mode):
        return Feature(dtype, preprocessor, output_mode)

    @classmethod
    def float(cls, name=None):  # noqa: A003 - Keras' name
        return Feature("float32", _layers().Identity(dtype="float32", name=_named("float", name)), "float")

    @classmethod
    def float_rescaled(cls, scale=1.0, offset=0.0, name=None):
        layer = _layers().Rescaling(scale=scale, offset=offset, name=_named("float_rescaled", name))
        return Feature("float32", layer, "float")

    @classmethod
    def float_normalized(cls, name=None):
        return Feature("float32", _layers().Normalization(axis=-1, name=_named("float_normalized", name)), "float")

    @classmethod
    def float_discretized(cls, num_bins, bin_boundaries=None, output_mode="one_hot", name=None):
        layer = _layers().Discretization(num_bins=num_bins, bin_boundaries=bin_boundaries,
                                         name=_named("float_discretized", name))
        return Feature("float32", layer, output_mode)

    @classmethod
    def integer_categorical(cls, max_tokens=None, num_oov_indices=1, output_mode="one_hot", name=None):
        layer = _layers().IntegerLookup(name=_named("integer_categorical", name), max_tokens=max_tokens,
                                        num_oov_indices=num_oov_indices)
        return Feature("int64", layer, output_mode)

    @classmethod
    def string_categorical(cls, max_tokens=None, num_oov_indices=1, output_mode="one_hot", name=None):
        layer = _layers().StringLookup(name=_named("string_categorical", name), max_tokens=max_tokens,
                                       num_oov_indices=num_oov_indices)
        return Feature("string", layer, output_mode)

    @classmethod
    def string_hashed(cls, num_bins, output_mode="one_hot", name=None):
        return Feature("string", _layers().Hashing(name=_named("string_hashed", name), num_bins=num_bins),
                       output_mode)

    @classmethod
    def integer_hashed(cls, num_bins, output_mode="one_hot", name=None):
        return Feature("int64", _layers().Hashing(name=_named("integer_hashed", name), num_bins=num_bins),
                       output_mode)

    # -- construction --
    def __init__(self, features, output_mode="concat", crosses=None, crossing_dim=32, hashing_dim=32,
                 num_discretization_bins=32):
        super().__init__(name=backend.unique_object_name("feature_space"))
        if not features:
            raise ValueError("The `features` argument cannot be None or empty.")
        self.crossing_dim = crossing_dim
        self.hashing_dim = hashing_dim
        self.num_discretization_bins = num_discretization_bins
        self.features = {name: self._standardize_feature(name, value) for name, value in features.items()}
        self.crosses = [self._standardize_cross(cross, set(features)) for cross in crosses or ()]
        self.crosses_by_name = {cross.name: cross for cross in self.crosses}
        if output_mode not in {"dict", "concat"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'dict', 'concat'}. "
                             f"Received: output_mode={output_mode}")
        self.output_mode = output_mode
        self.inputs = {name: _layers().Input(shape=(1,), dtype=feature.dtype, name=name)
                       for name, feature in self.features.items()}
        self.preprocessors = {name: feature.preprocessor for name, feature in self.features.items()}
        self.crossers = {cross.name: _layers().HashedCrossing(cross.crossing_dim, name=cross.name)
                         for cross in self.crosses}
        self.one_hot_encoders = {}
        self.encoded_features = None
        self.concat = None
        self.built = False
        self._is_adapted = False

    def _standardize_feature(self, name, feature):
        if isinstance(feature, Feature):
            return feature
        if isinstance(feature, dict):
            return _deserialized(feature)
        kinds = {"float": lambda: self.float(name=name), "float_normalized": lambda: self.float_normalized(name=name),
                 "float_rescaled": lambda: self.float_rescaled(name=name),
                 "float_discretized": lambda: self.float_discretized(self.num_discretization_bins, name=name),
                 "integer_categorical": lambda: self.integer_categorical(name=name),
                 "string_categorical": lambda: self.string_categorical(name=name),
                 "integer_hashed": lambda: self.integer_hashed(self.hashing_dim, name=name),
                 "string_hashed": lambda: self.string_hashed(self.hashing_dim, name=name)}
        if feature not in kinds:
            raise ValueError(f"Invalid feature type: {feature}")
        return kinds[feature]()

    def _standardize_cross(self, cross, names):
        if isinstance(cross, dict):
            cross = _deserialized(cross)
        if isinstance(cross, Cross):
            return cross
        if not self.crossing_dim:
            raise ValueError("When specifying `crosses`, the argument `crossing_dim` (dimensionality of the crossing "
                             "space) should be specified as well.")
        if any(key not in names for key in cross):
            raise ValueError("All features referenced in the `crosses` argument should be present in the `features` "
                             f"dict. Received unknown features: {cross}")
        return Cross(cross, crossing_dim=self.crossing_dim)

    # -- adapt and build --
    def _adaptable(self):
        out = []
        for name, preprocessor in self.preprocessors.items():
            layers = _layers()
            if isinstance(preprocessor, layers.Normalization) and preprocessor.input_mean is not None:
                continue
            if hasattr(preprocessor, "adapt"):
                out.append(name)
        return out

    def adapt(self, dataset):
        from ..data import Dataset
        if not isinstance(dataset, Dataset):
            raise ValueError(f"`adapt()` can only be called on a tf.data.Dataset. Received instead: {dataset} (of "
                             f"type {type(dataset)})")
        for name in self._adaptable():
            column = dataset.map(lambda x, name=name: x[name])
            rank = len(column.element_spec.shape)
            if rank == 0:
                column = column.batch(32)
            if rank in (0, 1):
                column = column.map(lambda x: _C.expand_dims(x, -1))
            self.preprocessors[name].adapt(column)
        self._is_adapted = True
        self.get_encoded_features()
        self.built = True

    def _check_if_adapted(self):
        if not self._is_adapted:
            if self._adaptable():
                raise ValueError("You need to call `.adapt(dataset)` on the FeatureSpace before you can start using "
                                 "it.")
            self._is_adapted = True

    def _check_if_built(self):
        if not self.built:
            self._check_if_adapted()
            self.get_encoded_features()
            self.built = True

    def get_inputs(self):
        self._check_if_built()
        return self.inputs

    def get_encoded_features(self):
        self._check_if_adapted()
        if self.encoded_features is None:
            self._make_encoders()
            self.encoded_features = self._encode(self.inputs)
        return self.encoded_features

    def _names(self):
        return sorted(self.features), sorted(self.crossers)

    def _specs(self):
        feature_names, cross_names = self._names()
        return [(n, self.features[n].output_mode, self.preprocessors[n]) for n in feature_names] + \
            [(n, self.crosses_by_name[n].output_mode, self.crossers[n]) for n in cross_names]

    def _make_encoders(self):
        """The one-hot encoders of the categorical features (their sizes known once adapted) and the concat."""
        for name, output_mode, preprocessor in self._specs():
            if output_mode != "one_hot":
                continue
            cardinality = _cardinality(preprocessor)
            if cardinality is None:
                raise ValueError(f"Feature '{name}' has `output_mode='one_hot'`. However it isn't a standard feature "
                                 "and the dimensionality of its output space is not known, thus it cannot be one-hot "
                                 "encoded. Try using `output_mode='int'`.")
            self.one_hot_encoders[name] = _layers().CategoryEncoding(num_tokens=cardinality, output_mode="multi_hot")
        if self.output_mode == "concat":
            self.concat = _layers().Concatenate(axis=-1)

    def _encode(self, features):
        """Preprocessed, crossed, one-hot encoded and merged features."""
        encoded = {name: self.preprocessors[name](features[name]) for name in features}
        for cross in self.crosses:
            encoded[cross.name] = self.crossers[cross.name]([encoded[n] for n in cross.feature_names])
        merged = {}
        for name, output_mode, _ in self._specs():
            feature = encoded[name]
            if output_mode == "one_hot":
                if not feature.dtype.is_integer:
                    raise ValueError(f"Feature '{name}' has `output_mode='one_hot'`. Thus its preprocessor should "
                                     f"return an int64 dtype. Instead it returns a {feature.dtype.name} dtype.")
                feature = self.one_hot_encoders[name](feature)
            if self.output_mode == "concat" and (feature.dtype.is_integer or feature.dtype == _dtypes.string):
                raise ValueError(f"Cannot concatenate features because feature '{name}' has not been encoded (it has "
                                 f"dtype {feature.dtype.name}). Consider using `output_mode='dict'`.")
            merged[name] = feature
        if self.output_mode == "dict":
            return merged
        return self.concat(list(merged.values()))

    def __call__(self, data):
        self._check_if_built()
        if not isinstance(data, dict):
            raise ValueError(f"A FeatureSpace can only be called with a dict. Received: data={data} (of type "
                             f"{type(data)}")
        from .._ops import convert_to_tensor
        data = {key: convert_to_tensor(value) for key, value in data.items()}
        unbatched = any(x.shape.rank == 0 for x in data.values())
        for name, x in data.items():
            if x.shape.rank == 0:
                data[name] = _C.reshape(x, [1, 1])
            elif x.shape.rank == 1:
                data[name] = _C.expand_dims(x, -1)
        out = self._encode(data)
        if not unbatched:
            return out
        if self.output_mode == "concat":
            return _C.squeeze(out, [0])
        return {name: _C.squeeze(x, [0]) if x.shape.rank == 2 and x.shape[0] == 1 else x for name, x in out.items()}

    # -- saving --
    def get_config(self):
        return {"features": {name: _serialized(f) for name, f in self.features.items()},
                "output_mode": self.output_mode, "crosses": [_serialized(c) for c in self.crosses],
                "crossing_dim": self.crossing_dim, "hashing_dim": self.hashing_dim,
                "num_discretization_bins": self.num_discretization_bins}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def get_build_config(self):
        return {name: feature.preprocessor.get_build_config() for name, feature in self.features.items()}

    def build_from_config(self, config):
        for name, build_config in config.items():
            if build_config:
                self.features[name].preprocessor.build_from_config(build_config)
        self._is_adapted = True

    def save(self, filepath):
        """Saves to a .keras file, which keras.models.load_model reads back."""
        from ._saving_lib import save_model
        save_model(self, filepath)
