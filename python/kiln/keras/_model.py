"""Keras' Model (subclassed and functional), with compile / fit / evaluate / predict and summary().

The training step (forward, loss, tape gradient, optimizer update, metric updates) is one
kiln.function, `model.train_function`, traced once per input signature and run as one graph on every
batch after that; evaluate and predict have their own traced `test_function` and
`predict_function`. What they iterate over comes from _data_adapter; a functional model's config
from _functional; Sequential is in _sequential (and importable from here, as before)."""
import logging
import warnings

import numpy as np

from .. import _C
from ..function import function as _function
from ..gradient import GradientTape
from ..tensor_shape import TensorShape
from . import callbacks as _callbacks
from . import losses as _losses
from . import metrics as _metrics
from . import optimizers as _optimizers
from . import _distribute_glue
from ._layer import Layer, _flatten, _is_tensor, _map
from ._compile_utils import (LossesContainer, MetricsContainer, _deserialize_losses, _deserialize_metrics,
                             _serialize_losses, _serialize_metrics)
from ._data_adapter import (_ClassWeighted, _as_numpy, _batch_samples, _is_array_structure, _make_data, _split,
                            pack_x_y_sample_weight, unpack_x_y_sample_weight)
from ._functional import _functional_config, _functional_from_config
from ._functional_network import FunctionalNetwork
from ._masking import get_mask, masked_weights


def _autograph_call(fn, *args):
    """Calls fn, converted by AutoGraph when it is the user's own code (an overridden train_step)."""
    from ..autograph import conversion
    return conversion.call_target(fn)(*args)


# ---- compile state ---------------------------------------------------------------------------

class _StepFunctions:
    """model.train_function, test_function and predict_function (None until made)."""

    def __init__(self):
        self.train = self.test = self.predict = None


class _Compiled:
    """What compile() sets; one attribute, so the variables of the optimizer and the metrics are not the
    model's."""

    def __init__(self, optimizer, loss, metrics, weighted_metrics, loss_weights, run_eagerly, output_names):
        self.optimizer = optimizer
        self.user_loss = loss
        self.compiled_loss = LossesContainer(loss, loss_weights, output_names)
        self.compiled_metrics = MetricsContainer(metrics, weighted_metrics, output_names,
                                                 loss=None if isinstance(loss, (list, dict, tuple)) else
                                                 _losses.get(loss))
        self.loss_tracker = self.compiled_loss._loss_metric
        self.run_eagerly = run_eagerly


# ---- Model ----------------------------------------------------------------------------------

class Model(FunctionalNetwork, Layer):
    """tf.keras.Model: subclass it (layers as attributes, the forward pass in `call`), or build it from the
    functional API: `Model(inputs, outputs)` with `inputs = kiln.keras.Input(shape)`."""

    def __init__(self, *args, **kwargs):
        inputs = kwargs.pop("inputs", None)
        outputs = kwargs.pop("outputs", None)
        if args:
            if len(args) > 2 or inputs is not None:
                raise TypeError("Model takes (inputs, outputs) positionally or as keywords")
            inputs = args[0]
            if len(args) == 2:
                outputs = args[1]
        name = kwargs.pop("name", None)
        trainable = kwargs.pop("trainable", True)
        dtype = kwargs.pop("dtype", None)
        if kwargs:
            raise TypeError(f"Keyword argument not understood: {sorted(kwargs)[0]!r}")
        Layer.__init__(self, trainable=trainable, name=name, dtype=dtype)
        self._compiled = None
        self._step_functions = _StepFunctions()
        self.history = None
        self.stop_training = False
        self._in_fit = False
        self._is_graph_network = False
        self._distribution_strategy = _distribute_glue.creation_strategy()  # the scope the model is made in
        if inputs is not None or outputs is not None:
            if inputs is None or outputs is None:
                raise ValueError("A functional Model needs both `inputs` and `outputs`")
            self._init_functional(inputs, outputs)

    # The traced steps live outside the instance's attributes, so kiln.saved_model (which saves every
    # kiln.function attribute) saves the model, not its training machinery.
    train_function = property(lambda self: self._step_functions.train,
                              lambda self, fn: setattr(self._step_functions, "train", fn))
    test_function = property(lambda self: self._step_functions.test,
                             lambda self, fn: setattr(self._step_functions, "test", fn))
    predict_function = property(lambda self: self._step_functions.predict,
                                lambda self, fn: setattr(self._step_functions, "predict", fn))

    # ---- layers, building, calling ----------------------------------------------------------------

    @property
    def layers(self):
        if self._is_graph_network:
            return list(self._fn_layers)
        out, seen = [], set()

        def visit(value):
            if isinstance(value, Layer):
                if id(value) not in seen:
                    seen.add(id(value))
                    out.append(value)
            elif isinstance(value, (list, tuple)):
                for v in value:
                    visit(v)
            elif isinstance(value, dict):
                for v in value.values():
                    visit(v)

        for key, value in vars(self).items():
            if key not in ("_compiled", "_layer_weights"):
                visit(value)
        return out

    def reset_states(self):
        """Resets the states of the stateful layers (stateful RNNs, nested models holding them)."""
        for layer in self.layers:
            if hasattr(layer, "reset_states") and getattr(layer, "stateful", False):
                layer.reset_states()

    def get_layer(self, name=None, index=None):
        layers = self.layers
        if index is not None:
            if len(layers) <= index:
                raise ValueError(f"Was asked to retrieve layer at index {index} but model only has {len(layers)} "
                                 "layers.")
            return layers[index]
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: {[layer.name for layer in layers]}.")

    def _maybe_build(self, input_shapes):
        if self.built:
            return
        if type(self).build is Model.build:
            # A subclassed model builds its layers as `call` first uses them.
            self.built = True
            self._build_input_shape = input_shapes
            return
        Layer._maybe_build(self, input_shapes)

    def build(self, input_shape):
        """Builds a subclassed model by calling it once on zeros of `input_shape` (unknown dims as 1)."""
        if self._is_graph_network:
            return
        if input_shape is None:
            raise ValueError("Input shape must be defined when calling `build()` on a `Model` subclass.")
        shapes = input_shape
        single = not (isinstance(shapes, (list, tuple)) and shapes and isinstance(shapes[0], (list, tuple, TensorShape)))
        shape_list = [TensorShape(shapes)] if single else [TensorShape(s) for s in shapes]
        zeros = [_C.zeros([1 if d is None else d for d in s.as_list()], self._dtype._enum) for s in shape_list]
        self.built = True
        self._build_input_shape = shape_list[0] if single else shape_list
        self(zeros[0] if single else zeros, training=False)

    def call(self, inputs, training=None, mask=None):
        if self._is_graph_network:
            return self._run_graph(inputs, training, mask)
        raise NotImplementedError(f"Model {type(self).__name__} has no call(): subclasses of kiln.keras.Model "
                                  "override `call(self, inputs, training=None)`, or build the model with "
                                  "kiln.keras.Model(inputs, outputs)")

    def compute_output_shape(self, input_shape):
        if self._is_graph_network:
            outs = [t.shape for t in _flatten(self._fn_outputs)]
            batch = TensorShape(input_shape)[0] if not isinstance(input_shape, list) else None
            outs = [TensorShape([batch] + s.as_list()[1:]) if s.rank else s for s in outs]
            return outs[0] if len(outs) == 1 else outs
        return Layer.compute_output_shape(self, input_shape)

    # ---- compile ----------------------------------------------------------------------------

    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None, weighted_metrics=None,
                run_eagerly=None, steps_per_execution=None, jit_compile=None, **kwargs):
        """Sets the optimizer, loss and metrics for fit/evaluate. `jit_compile` and `steps_per_execution` are
        accepted and ignored (the step is always one optimized graph)."""
        if kwargs:
            raise TypeError(f"Invalid keyword argument(s) in `compile()`: {tuple(sorted(kwargs))}. Valid keyword "
                            "arguments include \"cloning\", \"experimental_run_tf_function\", \"distribute\", "
                            "\"target_tensors\", or \"sample_weight_mode\".")
        for what, spec in (("metrics", metrics), ("weighted_metrics", weighted_metrics)):
            if isinstance(spec, (str, _metrics.Metric)) or (callable(spec) and not isinstance(spec, (list, dict))):
                raise TypeError(f"Type of `{what}` argument not understood. Expected a list or dictionary, found: "
                                f"{spec!r}")
        if isinstance(loss, (list, tuple)) and len(loss) == 1:
            loss = loss[0]
        if not isinstance(loss, (list, tuple, dict)):
            _losses.get(loss)  # an unknown name fails here, at compile, as in Keras
        self._compiled = _Compiled(self._get_optimizer(optimizer), loss, metrics, weighted_metrics, loss_weights,
                                   bool(run_eagerly), self._output_names())
        self.train_function = self.test_function = self.predict_function = None

    def _get_optimizer(self, optimizer):
        """Keras 2.15: under the mixed_float16 policy compile wraps the optimizer in a LossScaleOptimizer (float16
        gradients underflow without one); mixed_bfloat16 needs none."""
        from .mixed_precision import LossScaleOptimizer
        optimizer = _optimizers.get(optimizer)
        if self.dtype_policy.name == "mixed_float16" and not isinstance(optimizer, LossScaleOptimizer):
            optimizer = LossScaleOptimizer(optimizer)
        return optimizer

    def _assert_compiled(self, what):
        if self._compiled is None:
            raise RuntimeError(f"You must compile your model before {what}. Call `model.compile(optimizer, loss)`.")

    @property
    def distribute_strategy(self):
        """The tf.distribute strategy the model was made under (else the current one)."""
        from ..distribute import get_strategy
        return self.__dict__.get("_distribution_strategy") or get_strategy()

    @property
    def optimizer(self):
        return None if self._compiled is None else self._compiled.optimizer

    @optimizer.setter
    def optimizer(self, value):
        self._assert_compiled("setting its optimizer")
        self._compiled.optimizer = _optimizers.get(value)
        self.train_function = None

    @property
    def loss(self):
        return None if self._compiled is None else self._compiled.user_loss

    @property
    def compiled_loss(self):
        return None if self._compiled is None else self._compiled.compiled_loss

    @property
    def compiled_metrics(self):
        return None if self._compiled is None else self._compiled.compiled_metrics

    def _output_names(self):
        """The output layers' names (Keras' output_names), for per-output losses and metrics in a dict."""
        if not self._is_graph_network:
            return None
        names, counts = [], {}
        for t in _flatten(self._fn_outputs):  # Keras' uniquifying: a layer's second output is "<name>_1", ...
            name = proposal = t._node.layer.name
            while proposal in names:
                counts[name] = counts.get(name, 1)
                proposal = f"{name}_{counts[name]}"
                counts[name] += 1
            names.append(proposal)
        return names

    @property
    def output_names(self):
        return self._output_names()

    @property
    def run_eagerly(self):
        return bool(self._compiled and self._compiled.run_eagerly) or _C.functions_run_eagerly()

    @run_eagerly.setter
    def run_eagerly(self, value):
        self._assert_compiled("setting run_eagerly")
        self._compiled.run_eagerly = bool(value)
        self.train_function = self.test_function = self.predict_function = None

    @property
    def metrics(self):
        """Keras' order: the loss trackers ("loss", then one per output), the compiled metrics (once a step has
        built them), then the metrics the layers' add_metric made."""
        out = []
        if self._compiled is not None:
            out += self._compiled.compiled_loss.metrics or [self._compiled.loss_tracker]
            out += self._compiled.compiled_metrics.metrics
        for layer in self._sublayers():
            out += list(layer._added_metrics.values())
        return out

    @property
    def metrics_names(self):
        return [m.name for m in self.metrics]

    def reset_metrics(self):
        for m in self.metrics:
            m.reset_state()

    # ---- steps (each traced once per input signature) --------------------------------------

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
        """The compiled losses (weighted per output) plus the layers' losses (add_loss, regularizers); updates the
        loss trackers, as Keras' (compiled_loss(y, y_pred, sample_weight, regularization_losses=self.losses))."""
        return self._compiled.compiled_loss(y, y_pred, sample_weight, regularization_losses=self.losses)

    def compute_metrics(self, x, y, y_pred, sample_weight):
        mask = get_mask(y_pred) if _is_tensor(y_pred) else None
        mask_weight = None
        if mask is not None:
            # Keras weighs the metrics by the mask of the model's output (weighted metrics: times sample_weight).
            mask_weight = masked_weights(mask, None, y_pred)
            sample_weight = masked_weights(mask, sample_weight, y_pred)
        self._compiled.compiled_metrics.update_state(y, y_pred, sample_weight, mask_weight)
        return self.get_metrics_result()

    def get_metrics_result(self):
        return {m.name: m.result() for m in self.metrics}

    def train_step(self, data):
        """One training step: forward pass (training=True), loss, gradients, optimizer update, metrics."""
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred, sample_weight)
        variables = self.trainable_variables
        if variables:  # Keras: with nothing to train, the step only computes the loss and metrics
            # minimize, as Keras: a LossScaleOptimizer scales the loss on this tape and unscales the gradients.
            self.optimizer.minimize(loss, variables, tape=tape)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def test_step(self, data):
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        y_pred = self(x, training=False)
        self.compute_loss(x, y, y_pred, sample_weight)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def predict_step(self, data):
        x, _, _ = unpack_x_y_sample_weight(data)
        return self(x, training=False)

    def _make_function(self, attr, step, name):
        fn = getattr(self, attr)
        if fn is not None:
            return fn

        def run_step(data):
            return _autograph_call(step, data)
        run = _distribute_glue.in_replica_context(self.distribute_strategy, run_step)
        run.__name__ = name
        fn = run if self.run_eagerly else _function(run, autograph=False, name=name)
        setattr(self, attr, fn)
        return fn

    def make_train_function(self, force=False):
        """`model.train_function`: train_step as one kiln.function (data -> the metrics' results)."""
        if force:
            self.train_function = None
        return self._make_function("train_function", self.train_step, "train_function")

    def make_test_function(self, force=False):
        if force:
            self.test_function = None
        return self._make_function("test_function", self.test_step, "test_function")

    def make_predict_function(self, force=False):
        if force:
            self.predict_function = None
        return self._make_function("predict_function", self.predict_step, "predict_function")

    # ---- fit / evaluate / predict ------------------------------------------------------------------

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None, validation_batch_size=None, validation_freq=1,
            max_queue_size=10, workers=1, use_multiprocessing=False):
        """Trains for `epochs` epochs; returns a History whose `.history` maps "loss", each metric and their
        "val_" forms to one value per epoch. verbose: 0 silent, 1 a progress bar per epoch (redrawn on a
        terminal, a line per quarter of the epoch otherwise), 2 one line per epoch."""
        self._assert_compiled("training/testing")
        verbose = _verbosity(verbose)
        if validation_split and validation_data is None:
            if not _is_array_structure(x):
                raise ValueError("`validation_split` is only supported for Tensors or NumPy arrays, found: "
                                 f"(x={type(x).__name__}, y={type(y).__name__})")
            if not 0 < validation_split < 1:
                raise ValueError(f"validation_split must be in (0, 1), got {validation_split}")
            (x, y, sample_weight), validation_data = _split(x, y, sample_weight, validation_split)
        x, shard = _distribute_glue.input_for(self, x, steps_per_epoch, "steps_per_epoch")
        train = shard(_make_data(x, y, sample_weight, batch_size, shuffle, steps_per_epoch))
        if class_weight is not None:
            train = _ClassWeighted(train, class_weight)
        val = None
        validation_data, shard_val = _distribute_glue.input_for(self, validation_data, validation_steps,
                                                                "validation_steps")
        if validation_data is not None:
            if _is_array_structure(validation_data) or isinstance(validation_data, tuple):
                vx, vy, vsw = unpack_x_y_sample_weight(validation_data)
                if isinstance(validation_data, tuple) and not _is_array_structure(vx):
                    val = _make_data(validation_data, steps=validation_steps)
                else:
                    val = _make_data(vx, vy, vsw, validation_batch_size or batch_size, False, validation_steps)
            else:
                val = _make_data(validation_data, steps=validation_steps)
            val = shard_val(val)
        cbs = callbacks if isinstance(callbacks, _callbacks.CallbackList) else _callbacks.CallbackList(
            callbacks, add_history=True, add_progbar=verbose != 0, model=self, verbose=verbose, epochs=epochs,
            steps=train.steps)
        train_function = self.make_train_function()
        self.stop_training = False
        if hasattr(self.optimizer, "_create_state"):
            # The iteration count and learning-rate variables exist before the callbacks run, as in Keras (where
            # `optimizer.lr` is a variable from the start), so callbacks can read and set them.
            self.optimizer._create_state([])
        # Reading the figures waits for each step: only done when a callback looks at them (not History, nor a
        # verbose=2 progress bar).
        batch_logs_wanted = any(not isinstance(cb, _callbacks.History)
                                and getattr(cb, "_wants_batch_logs", lambda: True)() for cb in cbs)
        cbs.on_train_begin()
        # BackupAndRestore found a backup: go on from the epoch after the one it holds.
        initial_epoch = max(initial_epoch, self.__dict__.pop("_backup_resume_epoch", initial_epoch))
        logs = {}
        training_logs = None
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            run_val = val is not None and _validate_now(epoch, validation_freq)
            cbs.on_epoch_begin(epoch)
            raw, steps = None, 0
            for step, data in enumerate(train.batches(epoch)):
                cbs.on_train_batch_begin(step)
                raw = train_function(data)
                steps += 1
                # Reading the figures waits for the step: only done when a callback looks at them.
                logs = _to_floats(raw) if batch_logs_wanted else {}
                cbs._note_batch_samples(_batch_samples(data))
                cbs.on_train_batch_end(step, logs)
                if self.stop_training:
                    break
            if raw is None:
                if epoch > initial_epoch:
                    warnings.warn("Your input ran out of data; interrupting training. Make sure that your dataset or "
                                  "generator can generate at least `steps_per_epoch * epochs` batches.")
                    break
                raise ValueError("Unexpected result of `train_function` (Empty logs). The data gave no batches: "
                                 "check that x (or the dataset) is not empty and that steps_per_epoch is positive.")
            if train.steps is None:
                train.steps = steps  # learned from the first pass, as Keras does
                cbs.params["steps"] = steps
            epoch_logs = _to_floats(raw)
            if run_val:
                # Keras' fit validates through evaluate(callbacks=...): the callbacks' on_test_* hooks run.
                self._in_fit = True
                try:
                    val_logs = self._evaluate_loop(val, cbs)
                finally:
                    self._in_fit = False
                epoch_logs.update({"val_" + k: v for k, v in val_logs.items()})
            cbs.on_epoch_end(epoch, epoch_logs)
            training_logs = epoch_logs
            if self.stop_training:
                break
        cbs.on_train_end(training_logs)
        return self.history

    def _evaluate_loop(self, data, cbs):
        self.reset_metrics()
        test_function = self.make_test_function()
        cbs.on_test_begin()
        raw = None
        logs = {}
        for step, data_batch in enumerate(data.batches()):
            cbs.on_test_batch_begin(step)
            raw = test_function(data_batch)
            logs = _to_floats(raw)
            cbs._note_batch_samples(_batch_samples(data_batch))
            cbs.on_test_batch_end(step, logs)
        if raw is None:
            raise ValueError("Unexpected result of `test_function` (Empty logs): the data gave no batches")
        cbs.on_test_end(logs)
        return logs

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None, steps=None,
                 callbacks=None, max_queue_size=10, workers=1, use_multiprocessing=False, return_dict=False,
                 **kwargs):
        """The loss and metrics over the data (batches of 32 by default): a scalar when there are no metrics, a
        list in metrics_names' order, or a dict (return_dict=True). The callbacks get on_test_* hooks."""
        self._assert_compiled("training/testing")
        if sample_weight is not None and self._compiled.compiled_metrics._user_weighted is None:
            logging.getLogger("kiln.keras").warning(
                "`evaluate()` received a value for `sample_weight`, but `weighted_metrics` were not provided.  Did "
                "you mean to pass metrics to `weighted_metrics` in `compile()`?  If this is intentional you can pass "
                "`weighted_metrics=[]` to `compile()` in order to silence this warning.")
        x, shard = _distribute_glue.input_for(self, x, steps, "steps")
        data = shard(_make_data(x, y, sample_weight, batch_size, False, steps))
        verbose = _verbosity(verbose)
        cbs = callbacks if isinstance(callbacks, _callbacks.CallbackList) else _callbacks.CallbackList(
            callbacks, add_history=False, add_progbar=verbose != 0, model=self, verbose=verbose, epochs=1,
            steps=data.steps)
        logs = self._evaluate_loop(data, cbs)
        if return_dict:
            return logs
        values = [logs[name] for name in self.metrics_names if name in logs]
        return values[0] if len(values) == 1 else values

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None, max_queue_size=10, workers=1,
                use_multiprocessing=False):
        """The model's outputs for x (batches of 32 by default), as NumPy arrays. The callbacks get on_predict_*
        hooks; on_predict_batch_end's logs hold the batch's {"outputs": ...}."""
        x, _ = _distribute_glue.input_for(self, x, steps, "steps")  # every worker predicts all of x
        data = _make_data(x, None, None, batch_size, False, steps)
        predict_function = self.make_predict_function()
        verbose = _verbosity(verbose)
        cbs = callbacks if isinstance(callbacks, _callbacks.CallbackList) else _callbacks.CallbackList(
            callbacks, add_history=False, add_progbar=verbose != 0, model=self, verbose=verbose, epochs=1,
            steps=data.steps)
        cbs.on_predict_begin()
        outputs = []
        for step, batch in enumerate(data.batches()):
            cbs.on_predict_batch_begin(step)
            out = _map(lambda t: np.asarray(t), predict_function(batch))
            outputs.append(out)
            cbs._note_batch_samples(_batch_samples(batch))
            cbs.on_predict_batch_end(step, {"outputs": out})
        if not outputs:
            raise ValueError("Unexpected result of `predict_function` (Empty batch_outputs). Please use "
                             "`Model.compile(..., run_eagerly=True)`, or `tf.config.run_functions_eagerly(True)` for "
                             "more information of where went wrong, or file a issue/bug to `tf.keras`.")
        first = outputs[0]
        if isinstance(first, (list, tuple)):
            result = [np.concatenate([o[i] for o in outputs]) for i in range(len(first))]
        elif isinstance(first, dict):
            result = {k: np.concatenate([o[k] for o in outputs]) for k in first}
        else:
            result = np.concatenate(outputs)
        cbs.on_predict_end()
        return result

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, reset_metrics=True, return_dict=False):
        self._assert_compiled("training/testing")
        if reset_metrics:
            self.reset_metrics()
        logs = _to_floats(self.make_train_function()(pack_x_y_sample_weight(_map(_as_numpy, x), y, sample_weight)))
        return logs if return_dict else _logs_values(self, logs)

    def test_on_batch(self, x, y=None, sample_weight=None, reset_metrics=True, return_dict=False):
        self._assert_compiled("training/testing")
        if reset_metrics:
            self.reset_metrics()
        logs = _to_floats(self.make_test_function()(pack_x_y_sample_weight(_map(_as_numpy, x), y, sample_weight)))
        return logs if return_dict else _logs_values(self, logs)

    def predict_on_batch(self, x):
        out = self.make_predict_function()((_map(_as_numpy, x),))
        return _map(lambda t: np.asarray(t), out)

    # ---- summary ----------------------------------------------------------------------------

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False, show_trainable=False,
                layer_range=None):
        """Prints Keras 2.15's table: one row per layer (name (type), output shape, parameters, and what feeds it
        for a functional model that is not a chain), then the parameter counts and their memory."""
        if not self.built:
            raise ValueError("This model has not yet been built. Build the model first by calling `build()` or by "
                             "calling the model on a batch of data.")
        from ._summary import print_summary
        print_summary(self, line_length=line_length, positions=positions, print_fn=print_fn,
                      expand_nested=expand_nested, show_trainable=show_trainable, layer_range=layer_range)

    # ---- configs and saving -------------------------------------------------------------------

    def get_config(self):
        """A functional model: its layers, each with the layer calls that feed it ("inbound_nodes", Keras 2's
        [[layer name, node index, tensor index, kwargs], ...] per call), and its input and output layers. A
        subclassed model: its name and trainable flag (override get_config to save its arguments)."""
        if not self._is_graph_network:
            return {"name": self.name, "trainable": self.trainable}
        return _functional_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        if "layers" in config and "input_layers" in config:
            inputs, outputs, name, side = _functional_from_config(config, custom_objects)
            model = (Model if cls is Model else cls)(inputs=inputs, outputs=outputs, name=name)
            from ._functional_side import insert
            for out in side:  # the calls of model.add_loss / add_metric on symbolic tensors
                insert(model, out)
            return model
        return cls(**config)

    def _serialized_class_name(self):
        return "Functional" if self._is_graph_network and type(self) is Model else type(self).__name__

    def _serialized_module(self):
        if type(self) is Model:
            return "keras.src.engine.functional" if self._is_graph_network else "keras.src.engine.training"
        return type(self).__module__

    def get_build_config(self):
        if self._is_graph_network:
            return None
        return Layer.get_build_config(self)

    def build_from_config(self, config):
        shape = config.get("input_shape")
        if shape is not None and not self.built:
            from ._layer import _shape_from_lists
            self.build(_shape_from_lists(shape))

    def get_compile_config(self):
        """compile()'s arguments, serialized (saved in the .keras file, used by load_model to compile again)."""
        if self._compiled is None:
            return None
        from ._serialization import serialize_keras_object
        c = self._compiled
        return {"optimizer": serialize_keras_object(c.optimizer), "loss": _serialize_losses(c.user_loss),
                "metrics": _serialize_metrics(c.compiled_metrics._user_metrics),
                "loss_weights": c.compiled_loss._user_loss_weights,
                "weighted_metrics": _serialize_metrics(c.compiled_metrics._user_weighted),
                "run_eagerly": c.run_eagerly or None, "steps_per_execution": None, "jit_compile": None}

    def compile_from_config(self, config):
        from . import optimizers as _opt
        config = dict(config)
        optimizer = _opt.get(config.pop("optimizer", "rmsprop"))
        loss = config.pop("loss", None)
        loss = _deserialize_losses(loss)
        metrics = _deserialize_metrics(config.pop("metrics", None))
        weighted = _deserialize_metrics(config.pop("weighted_metrics", None))
        self.compile(optimizer=optimizer, loss=loss, metrics=metrics, weighted_metrics=weighted,
                     loss_weights=config.pop("loss_weights", None), run_eagerly=config.pop("run_eagerly", None))
        if self.built and self.trainable_variables:
            # Built now, as Keras 3 does, so the optimizer state saved beside the weights is restored too.
            self.optimizer.build(self.trainable_variables)

    def to_json(self, **kwargs):
        """The model's architecture as Keras' JSON ({"class_name", "config", "keras_version", "backend"})."""
        import json
        from ._saving_lib import KERAS_VERSION
        return json.dumps({"class_name": self._serialized_class_name(), "config": self.get_config(),
                           "keras_version": KERAS_VERSION, "backend": "tensorflow"}, **kwargs)

    def save(self, filepath, overwrite=True, save_format=None, **kwargs):
        """"m.keras": Keras v3's zip (config.json, metadata.json, model.weights.h5); "m.h5": Keras 2's HDF5; any
        other path: a SavedModel directory (kiln.saved_model, with a "serving_default" signature when the input
        shapes are known) that also holds the Keras files, so keras.models.load_model reads it back."""
        import os
        from . import _saving_lib
        filepath = os.fspath(filepath)
        if not overwrite and os.path.exists(filepath):
            raise FileExistsError(f"{filepath} exists and overwrite=False")
        if save_format == "keras" or filepath.endswith(".keras"):
            return _saving_lib.save_model(self, filepath)
        if save_format == "h5" or filepath.endswith((".h5", ".hdf5")):
            return _saving_lib.save_legacy_h5_model(self, filepath)
        return _saving_lib.save_saved_model_dir(self, filepath)

    def save_weights(self, filepath, overwrite=True, save_format=None, options=None):
        """".weights.h5": Keras v3's weights file; ".h5": Keras 2's layout; any other path (or save_format="tf"):
        a TF checkpoint with the model as its root (`<path>.index`, `<path>.data-00000-of-00001` and the
        directory's `checkpoint` file), as TF 2.15's Keras writes it."""
        import os
        from . import _saving_lib
        filepath = os.fspath(filepath)
        if filepath.endswith(".weights.h5"):
            kind = "keras"
        elif filepath.endswith((".h5", ".hdf5")) or save_format == "h5":
            kind = "h5"
        else:
            kind = "tf"
        exists = os.path.exists(filepath + ".index" if kind == "tf" else filepath)
        if not overwrite and exists:
            raise FileExistsError(f"{filepath} exists and overwrite=False")
        if kind == "h5":
            return _saving_lib.save_legacy_h5_weights(self, filepath)
        if kind == "keras":
            return _saving_lib.save_weights_only(self, filepath)
        from ..train import _checkpoint
        _checkpoint.Checkpoint(root=self).write(filepath)
        _checkpoint.update_checkpoint_state(os.path.dirname(filepath) or ".", filepath, [filepath])

    def load_weights(self, filepath, skip_mismatch=False, by_name=False, options=None):
        import os
        from . import _saving_lib
        filepath = os.fspath(filepath)
        if os.path.exists(filepath + ".index") and not filepath.endswith((".h5", ".keras")):
            # A TF checkpoint (save_weights without an extension): matched by object path; the status says how.
            from ..train import _checkpoint
            return _checkpoint.Checkpoint(root=self).read(filepath)
        if not os.path.exists(filepath):
            raise FileNotFoundError(f"Unable to open file (file {filepath!r} does not exist)")
        if filepath.endswith(".keras"):
            return _saving_lib.load_weights_only(self, filepath, skip_mismatch)
        import h5py
        with h5py.File(filepath, "r") as f:
            legacy = "layer_names" in f.attrs or "model_weights" in f
        if legacy:
            return _saving_lib.load_legacy_h5_weights(self, filepath, by_name, skip_mismatch)
        return _saving_lib.load_weights_only(self, filepath, skip_mismatch)


def _verbosity(verbose):
    if verbose == "auto":
        return 1
    if verbose not in (0, 1, 2):
        raise ValueError(f"verbose must be 0, 1, 2 or 'auto', got {verbose!r}")
    return int(verbose)


def _validate_now(epoch, freq):
    if isinstance(freq, int):
        return (epoch + 1) % freq == 0
    return (epoch + 1) in freq


def _to_floats(logs):
    return {k: float(v) for k, v in logs.items()}


def _logs_values(model, logs):
    values = [logs[name] for name in model.metrics_names if name in logs]
    return values[0] if len(values) == 1 else values


def __getattr__(name):
    # Sequential (in _sequential: it subclasses Model) is still importable from here, loaded on first use so
    # that either module may be imported first.
    if name == "Sequential":
        from ._sequential import Sequential
        return Sequential
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
