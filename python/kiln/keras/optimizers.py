"""kiln.keras.optimizers: SGD (momentum, Nesterov), Adam, AdamW, RMSprop and Adagrad with Keras'
arguments and defaults; every optimizer takes Keras 2.11's `clipnorm`, `clipvalue`, `global_clipnorm`,
`weight_decay` (decoupled: var -= var * weight_decay * lr before the update) and a learning-rate
schedule (`schedules`). As the C++ kiln::nn optimizers (src/nn/optimizers.cpp): the state (`iterations`, the
learning rate as a variable, slots named "Adam/dense/kernel/m:0") is created on the first
apply_gradients for every variable given; a gradient of None skips its variable; every check
happens before any state changes. Adam updates each variable with the engine's fused ApplyAdam op
(TF's ResourceApplyAdam formula, bias correction folded into the step's rate)."""
from .. import _C
from .. import dtypes as _dtypes
from ..module import Module
from ..tensor_shape import TensorShape
from . import schedules
from ._layer import variable_constraint

_UNSUPPORTED = ("use_ema", "jit_compile")


def _norm(t):
    return _C.sqrt(_C.reduce_sum(_C.square(t), None, False))


def _clip_gradients(grads, clipnorm, global_clipnorm, clipvalue):
    """Keras' order: each gradient by its norm (tf.clip_by_norm), all by their global norm
    (tf.clip_by_global_norm), then by value; None gradients stay None."""
    if clipnorm is not None:
        grads = [g if g is None else _C.multiply(g, _C.divide(clipnorm, _C.maximum(_norm(g), clipnorm)))
                 for g in grads]
    if global_clipnorm is not None:
        squares = None
        for g in grads:
            if g is not None:
                sq = _C.cast(_C.reduce_sum(_C.square(g), None, False), _dtypes.float32._enum)
                squares = sq if squares is None else _C.add(squares, sq)
        total = _C.sqrt(squares)
        scale = _C.divide(global_clipnorm, _C.maximum(total, global_clipnorm))
        grads = [g if g is None else _C.multiply(g, _C.cast(scale, g.dtype._enum)) for g in grads]
    if clipvalue is not None:
        grads = [g if g is None else _C.clip(g, -clipvalue, clipvalue) for g in grads]
    return grads


class Optimizer(Module):
    """The shared part: state, checks and the loop over variables; subclasses give the update."""

    _slot_names = ()
    _slot_initial_value = 0.0

    def __init__(self, name, learning_rate=0.001, **kwargs):
        if "lr" in kwargs:  # the TF 2.0-era name, as in the seeds' `Adam(lr=...)`
            learning_rate = kwargs.pop("lr")
        self.clipnorm, self.clipvalue, self.global_clipnorm, self.weight_decay = (
            None if kwargs.get(k) is None else float(kwargs.pop(k))
            for k in ("clipnorm", "clipvalue", "global_clipnorm", "weight_decay"))
        for k in ("clipnorm", "clipvalue", "global_clipnorm", "weight_decay"):
            kwargs.pop(k, None)
        if self.clipnorm is not None and self.global_clipnorm is not None:
            raise ValueError("At most one of `clipnorm` and `global_clipnorm` can be set. Received: "
                             f"clipnorm={self.clipnorm}, global_clipnorm={self.global_clipnorm}.")
        for k in ("clipnorm", "clipvalue", "global_clipnorm", "weight_decay"):
            if getattr(self, k) is not None and not getattr(self, k) >= 0:
                raise ValueError(f"{name}: {k} must be >= 0, got {getattr(self, k)}")
        for k in list(kwargs):
            if k in _UNSUPPORTED:
                if kwargs[k] not in (None, False, 0):
                    raise NotImplementedError(f"kiln.keras.optimizers.{type(self).__name__}: {k} is not supported")
                kwargs.pop(k)
            elif k in ("decay", "amsgrad", "ema_momentum", "ema_overwrite_frequency"):
                if kwargs[k] not in (None, False, 0, 0.0, 0.99):
                    raise NotImplementedError(f"kiln.keras.optimizers.{type(self).__name__}: {k}={kwargs[k]!r} is "
                                              "not supported")
                kwargs.pop(k)
        if kwargs:
            raise TypeError(f"Unexpected keyword argument passed to optimizer: {sorted(kwargs)[0]}")
        Module.__init__(self, name)
        if not isinstance(learning_rate, schedules.LearningRateSchedule):
            if callable(learning_rate):
                raise NotImplementedError("kiln.keras.optimizers: learning_rate must be a number or a "
                                          "kiln.keras.optimizers.schedules.LearningRateSchedule")
            learning_rate = float(learning_rate)
            if not learning_rate >= 0:
                raise ValueError(f"{name}: learning_rate must be >= 0, got {learning_rate}")
        # As given: a schedule, or a number that is the "learning_rate" variable's initial value; once
        # that variable exists it is the rate (the setter, a user's assign or a restore change it).
        self._learning_rate = learning_rate
        self._iterations = None
        self._learning_rate_var = None
        self._slots = {}  # variable state id -> [slot variables]

    # ---- state -----------------------------------------------------------------------------

    @property
    def _schedule(self):
        lr = self._learning_rate
        return lr if isinstance(lr, schedules.LearningRateSchedule) else None

    @property
    def learning_rate(self):
        """The schedule when given one; else the rate (a float32 variable once the first update has run)."""
        if self._schedule is None and self._learning_rate_var is not None:
            return self._learning_rate_var
        return self._learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        if isinstance(value, schedules.LearningRateSchedule):
            raise NotImplementedError(f"{self.name}: a schedule can only be given to the constructor")
        if self._schedule is not None:
            raise TypeError("This optimizer was created with a `LearningRateSchedule` object as its `learning_rate` "
                            "constructor argument, hence its learning rate is not settable. If you need the learning "
                            "rate to be settable, you should instantiate the optimizer with a float `learning_rate` "
                            "argument.")
        value = float(value)
        if not value >= 0:
            raise ValueError(f"{self.name}: learning_rate must be >= 0, got {value}")
        if self._learning_rate_var is not None:
            self._learning_rate_var.assign(_C.constant(value, _dtypes.float32._enum))
        else:
            self._learning_rate = value

    lr = learning_rate

    @property
    def iterations(self):
        """The number of updates applied (an int64 variable once the first update has run; 0 before)."""
        if self._iterations is None:
            return _C.constant(0, _dtypes.int64._enum)
        return self._iterations

    def _create_var(self, name, value, dtype):
        with _C.init_scope():
            init = _C.constant(value, dtype._enum) if not isinstance(value, _C.Tensor) else value
        return _C.Variable(init, False, f"{self.name}/{name}", None)

    def _create_state(self, variables):
        if self._iterations is None:
            self._iterations = self._create_var("iter", 0, _dtypes.int64)
            initial = self._learning_rate
            if self._schedule is not None:
                with _C.init_scope():
                    initial = _C.cast(self._schedule(0), _dtypes.float32._enum)
            self._learning_rate_var = self._create_var("learning_rate", initial, _dtypes.float32)
        if not self._slot_names:
            return
        for var in variables:
            key = var._state_id()
            if key in self._slots:
                continue
            # "dense/kernel:0" -> slot "Adam/dense/kernel/m:0" (Keras' names).
            base = var.name.rsplit(":", 1)[0]
            slots = []
            for slot_name in self._slot_names:
                with _C.init_scope():
                    initial = _C.fill(var.shape.as_list(), self._slot_initial_value, var.dtype._enum)
                slots.append(_C.Variable(initial, False, f"{self.name}/{base}/{slot_name}", None))
            self._slots[key] = slots

    def build(self, var_list):
        """Creates the state for `var_list` now (it is otherwise made by the first apply_gradients)."""
        self._create_state(list(var_list))

    def get_slot(self, var, slot_name):
        slots = self._slots.get(var._state_id())
        if slots is None or slot_name not in self._slot_names:
            raise KeyError(f"{self.name}: no slot {slot_name!r} for variable {var.name}")
        return slots[self._slot_names.index(slot_name)]

    def get_slot_names(self):
        return list(self._slot_names)

    @property
    def variables(self):
        out = []
        if self._iterations is not None:
            out += [self._iterations, self._learning_rate_var]
        for slots in self._slots.values():
            out += slots
        return tuple(out)

    # ---- updates ---------------------------------------------------------------------------

    def apply_gradients(self, grads_and_vars, name=None, experimental_aggregate_gradients=True,
                        skip_gradients_aggregation=False):
        """Applies one update per (gradient, variable) pair; returns the iterations variable."""
        pairs = list(grads_and_vars)
        if not pairs:  # Keras 2.11+: nothing to apply is a no-op
            return self.iterations
        who = f"{self.name}.apply_gradients"
        for i, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"{who}: expected (gradient, variable) pairs, item {i} is {pair!r}")
        grads = [g for g, _ in pairs]
        variables = [v for _, v in pairs]
        any_grad = False
        for i, (g, v) in enumerate(pairs):
            if not isinstance(v, _C.Variable):
                raise TypeError(f"{who}: item {i}'s variable is {type(v).__name__}, not a kiln.Variable")
            if not v.dtype.is_floating:
                raise ValueError(f"{who}: variable {i} ('{v.name}') is {v.dtype.name}; only float32 and float64 "
                                 "variables train")
            if g is None:
                continue
            any_grad = True
            if not isinstance(g, _C.Tensor):
                grads[i] = g = _C.constant(g, v.dtype._enum)
            if g.dtype != v.dtype or not v.shape.is_compatible_with(TensorShape(g.shape)):
                raise ValueError(f"{who}: gradient {i} is {g.dtype.name} {g.shape} but variable '{v.name}' is "
                                 f"{v.dtype.name} {v.shape}")
        if not any_grad:
            raise ValueError(f"No gradients provided for any variable: ({', '.join(repr(v.name) for v in variables)},)."
                             " Provided `grads_and_vars` is "
                             f"({', '.join(f'({g}, {v.name!r})' for g, v in pairs)},).")
        if experimental_aggregate_gradients and not skip_gradients_aggregation:
            from ._distribute_glue import aggregate_gradients
            grads = aggregate_gradients(grads)  # summed over the replicas in a strategy's replica context
        self._create_state(variables)
        grads = _clip_gradients(grads, self.clipnorm, self.global_clipnorm, self.clipvalue)
        iterations = self._iterations.read_value()
        step = _C.add(iterations, 1)
        if self._schedule is not None:
            # The schedule at the count before this update (Keras'); the variable shows the rate used.
            self._learning_rate_var.assign(_C.cast(self._schedule(iterations), _dtypes.float32._enum))
        lr = self._learning_rate_var.read_value()
        rates = {}  # the step's rate in each variable dtype, computed once
        for g, v in zip(grads, variables):
            if g is None:
                continue
            d = v.dtype
            lr_d = _C.cast(lr, d._enum)
            if self.weight_decay:
                v.assign_sub(_C.multiply(v.read_value(), _C.multiply(lr_d, self.weight_decay)))
            rate = rates.get(d.name)
            if rate is None:
                rate = rates[d.name] = self._step_rate(lr_d, step)
            self._apply_dense(g, v, self._slots.get(v._state_id(), ()), rate)
            constraint = variable_constraint(v)
            if constraint is not None:
                # Keras projects a constrained weight right after its update (kernel_constraint=...).
                v.assign(constraint(v.read_value()))
        self._iterations.assign_add(1)
        return self._iterations

    def minimize(self, loss, var_list, grad_loss=None, name=None, tape=None):
        """Gradients of `loss` (a tensor recorded by `tape`, or a callable) for var_list, then apply_gradients."""
        from ..gradient import GradientTape
        if callable(var_list):
            var_list = var_list()
        var_list = list(var_list)
        if tape is None:
            if not callable(loss):
                raise ValueError("`tape` is required when a `Tensor` loss is passed. Received: loss="
                                 f"{loss!r}, tape=None.")
            with GradientTape() as tape:
                loss = loss()
        grads = tape.gradient(loss, var_list, grad_loss)
        return self.apply_gradients(zip(grads, var_list))

    def _step_rate(self, lr, step):
        return lr

    def _apply_dense(self, grad, var, slots, rate):
        raise NotImplementedError

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        for key in ("loss_scale_factor", "gradient_accumulation_steps"):
            # Keras 3 writes these into every optimizer's config; unset, they change nothing.
            if config.get(key, None) is None:
                config.pop(key, None)
        if isinstance(config.get("learning_rate"), dict):
            from ._serialization import deserialize_keras_object
            config["learning_rate"] = deserialize_keras_object(
                config["learning_rate"], module_objects={k: v for k, v in vars(schedules).items()
                                                         if isinstance(v, type)}, custom_objects=custom_objects)
        return cls(**config)

    def get_config(self):
        if self._schedule is not None:
            learning_rate = {"class_name": type(self._schedule).__name__, "config": self._schedule.get_config()}
        elif self._learning_rate_var is not None:
            learning_rate = float(self._learning_rate_var.numpy())
        else:
            learning_rate = self._learning_rate
        config = {"name": self.name, "learning_rate": learning_rate}
        config.update(clipnorm=self.clipnorm, clipvalue=self.clipvalue, global_clipnorm=self.global_clipnorm,
                      weight_decay=self.weight_decay)
        return config

    def __repr__(self):
        return f"<kiln.keras.optimizers.{type(self).__name__} object '{self.name}'>"


class SGD(Optimizer):
    """var -= lr * grad; with momentum: v = momentum * v - lr * grad; var += v (Nesterov: var += momentum * v -
    lr * grad)."""

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD", **kwargs):
        if not 0 <= momentum <= 1:
            raise ValueError(f"`momentum` must be between [0, 1]. Received: momentum={momentum} (of type "
                             f"{type(momentum)}).")
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)
        self._slot_names = ("momentum",) if momentum else ()
        super().__init__(name, learning_rate, **kwargs)

    def _apply_dense(self, grad, var, slots, lr):
        if not self._slot_names:
            var.assign_sub(_C.multiply(lr, grad))
            return
        velocity = slots[0]
        v = _C.subtract(_C.multiply(velocity.read_value(), self.momentum), _C.multiply(lr, grad))
        velocity.assign(v)
        if self.nesterov:
            var.assign_add(_C.subtract(_C.multiply(v, self.momentum), _C.multiply(lr, grad)))
        else:
            var.assign_add(v)

    def get_config(self):
        config = super().get_config()
        config.update(momentum=self.momentum, nesterov=self.nesterov)
        return config


class Adam(Optimizer):
    """Adam (Kingma & Ba) as Keras': m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
    var -= lr sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + epsilon)."""

    _slot_names = ("m", "v")

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, name="Adam",
                 **kwargs):
        if amsgrad:
            raise NotImplementedError("kiln.keras.optimizers.Adam: amsgrad is not supported")
        if not (0 <= beta_1 < 1 and 0 <= beta_2 < 1):
            raise ValueError(f"{name}: beta_1 and beta_2 must be in [0, 1), got {beta_1} and {beta_2}")
        if not epsilon > 0:
            raise ValueError(f"{name}: epsilon must be > 0, got {epsilon}")
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        super().__init__(name, learning_rate, **kwargs)

    def _step_rate(self, lr, step):
        t = _C.cast(step, lr.dtype._enum)
        return _C.divide(_C.multiply(lr, _C.sqrt(_C.subtract(1, _C.pow(self.beta_2, t)))),
                         _C.subtract(1, _C.pow(self.beta_1, t)))

    def _apply_dense(self, grad, var, slots, alpha):
        # One fused pass over var, m and v (the composite formula's bits).
        _C.apply_adam(var, slots[0], slots[1], grad, alpha, self.beta_1, self.beta_2, self.epsilon)

    def get_config(self):
        config = super().get_config()
        config.update(beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon, amsgrad=False)
        return config


class RMSprop(Optimizer):
    """Keras' RMSprop: ms = rho ms + (1 - rho) g^2; without momentum var -= lr g / (sqrt(ms) + epsilon); with
    momentum mom = momentum mom + lr g / sqrt(ms + epsilon), var -= mom. Centered, ms less the square of
    mg = rho mg + (1 - rho) g (the gradients' running mean) stands for ms in both (TF's centered RMSProp)."""

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, name="RMSprop",
                 **kwargs):
        self.rho, self.momentum, self.epsilon, self.centered = float(rho), float(momentum), float(epsilon), \
            bool(centered)
        self._slot_names = ("rms",) + (("momentum",) if momentum else ()) + (("mg",) if centered else ())
        super().__init__(name, learning_rate, **kwargs)

    def _apply_dense(self, grad, var, slots, lr):
        rms = slots[0]
        ms = _C.add(_C.multiply(rms.read_value(), self.rho), _C.multiply(_C.square(grad), 1.0 - self.rho))
        rms.assign(ms)
        if self.centered:
            mg_slot = slots[-1]
            mg = _C.add(_C.multiply(mg_slot.read_value(), self.rho), _C.multiply(grad, 1.0 - self.rho))
            mg_slot.assign(mg)
            ms = _C.subtract(ms, _C.square(mg))
        if self.momentum:
            mom = slots[1]
            m = _C.add(_C.multiply(mom.read_value(), self.momentum),
                       _C.divide(_C.multiply(lr, grad), _C.sqrt(_C.add(ms, self.epsilon))))
            mom.assign(m)
            var.assign_sub(m)
        else:
            var.assign_sub(_C.divide(_C.multiply(lr, grad), _C.add(_C.sqrt(ms), self.epsilon)))

    def get_config(self):
        config = super().get_config()
        config.update(rho=self.rho, momentum=self.momentum, epsilon=self.epsilon, centered=self.centered)
        return config


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): var -= var * weight_decay * lr, then Adam's step."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, name="AdamW", **kwargs):
        if weight_decay is None:
            raise ValueError("Argument `weight_decay` must be a float. Received: weight_decay=None")
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, name, weight_decay=weight_decay, **kwargs)


class Adagrad(Optimizer):
    """Keras' Adagrad: acc += g^2 (acc starts at initial_accumulator_value); var -= lr g / sqrt(acc + epsilon)."""

    _slot_names = ("accumulator",)

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, name="Adagrad", **kwargs):
        if not initial_accumulator_value >= 0:
            raise ValueError(f"{name}: initial_accumulator_value must be >= 0, got {initial_accumulator_value}")
        self._slot_initial_value = float(initial_accumulator_value)
        self.epsilon = float(epsilon)
        super().__init__(name, learning_rate, **kwargs)

    def _apply_dense(self, grad, var, slots, lr):
        acc = slots[0]
        acc.assign_add(_C.square(grad))
        var.assign_sub(_C.divide(_C.multiply(lr, grad), _C.sqrt(_C.add(acc.read_value(), self.epsilon))))

    def get_config(self):
        config = super().get_config()
        config.update(initial_accumulator_value=self._slot_initial_value, epsilon=self.epsilon)
        return config


from ._optimizers_extra import Adadelta, Adafactor, Adamax, Ftrl, Lion, Nadam  # noqa: E402

_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop, "adagrad": Adagrad, "adadelta": Adadelta,
            "adafactor": Adafactor, "adamax": Adamax, "ftrl": Ftrl, "lion": Lion, "nadam": Nadam}


def get(identifier):
    """An optimizer from a name ("adam", "sgd", "nadam", ... with Keras' defaults) or an Optimizer."""
    if isinstance(identifier, Optimizer):
        return identifier
    if hasattr(identifier, "inner_optimizer") and hasattr(identifier, "apply_gradients"):
        return identifier  # a mixed_precision.LossScaleOptimizer
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier.lower())
        if cls is None:
            raise ValueError(f"Unknown optimizer: '{identifier}'. Known optimizer names: "
                             f"{', '.join(sorted(_BY_NAME))}; or pass a kiln.keras.optimizers.Optimizer object.")
        return cls()
    if isinstance(identifier, type) and issubclass(identifier, Optimizer):
        return identifier()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}")


class legacy:  # noqa: N801 - tf.keras.optimizers.legacy is a module in TF
    Optimizer = Optimizer
    SGD = SGD
    Adam = Adam
    RMSprop = RMSprop
    Adagrad = Adagrad
    Adadelta = Adadelta
    Adamax = Adamax
    Ftrl = Ftrl
    Nadam = Nadam


def serialize(optimizer):
    from ._serialization import serialize_keras_object
    return serialize_keras_object(optimizer)


def deserialize(config, custom_objects=None):
    from ._serialization import deserialize_keras_object
    table = dict(_BY_NAME)
    table.update({cls.__name__: cls for cls in _BY_NAME.values()})
    from ._mixed_precision_loss_scale import LossScaleOptimizer
    table["LossScaleOptimizer"] = LossScaleOptimizer
    if isinstance(config, dict) and config.get("class_name", "").lower() in _BY_NAME and \
            config["class_name"] not in table:
        config = dict(config, class_name=_BY_NAME[config["class_name"].lower()].__name__)
    return deserialize_keras_object(config, module_objects=table, custom_objects=custom_objects,
                                    printable_module_name="optimizer")
