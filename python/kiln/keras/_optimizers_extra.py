"""The rest of Keras 2.15's optimizers, with its update rules (keras/optimizers/*.py, the 2.11+ versions):
Adadelta, Adamax, Nadam, Ftrl, Lion and Adafactor. The shared loop, clipping, weight decay and state are
optimizers.Optimizer's; `_step_rate` hands each update the learning rate and the step number."""
from .. import _C
from .. import dtypes as _dtypes
from .optimizers import Optimizer


class _StepOptimizer(Optimizer):
    """An optimizer whose update needs the step t (1 on the first update) as well as the learning rate."""

    def _step_rate(self, lr, step):
        return lr, _C.cast(step, lr.dtype._enum)


class Adadelta(_StepOptimizer):
    """acc_g = rho acc_g + (1 - rho) g^2; delta = -sqrt(acc_d + eps) / sqrt(acc_g + eps) g;
    acc_d = rho acc_d + (1 - rho) delta^2; var += lr delta."""

    _slot_names = ("accumulated_grad", "accumulated_delta_var")

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, name="Adadelta", **kwargs):
        self.rho, self.epsilon = float(rho), float(epsilon)
        super().__init__(name, learning_rate, **kwargs)

    def _apply_dense(self, grad, var, slots, rate):
        lr, _ = rate
        acc_g, acc_d = slots
        g2 = _C.add(_C.multiply(acc_g.read_value(), self.rho), _C.multiply(_C.square(grad), 1.0 - self.rho))
        acc_g.assign(g2)
        delta = _C.negative(_C.multiply(_C.divide(_C.sqrt(_C.add(acc_d.read_value(), self.epsilon)),
                                                  _C.sqrt(_C.add(g2, self.epsilon))), grad))
        acc_d.assign(_C.add(_C.multiply(acc_d.read_value(), self.rho), _C.multiply(_C.square(delta), 1.0 - self.rho)))
        var.assign_add(_C.multiply(lr, delta))

    def get_config(self):
        config = super().get_config()
        config.update(rho=self.rho, epsilon=self.epsilon)
        return config


class Adamax(_StepOptimizer):
    """m = b1 m + (1 - b1) g; u = max(b2 u, |g|); var -= lr / (1 - b1^t) * m / (u + eps)."""

    _slot_names = ("m", "u")

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="Adamax", **kwargs):
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        super().__init__(name, learning_rate, **kwargs)

    def _apply_dense(self, grad, var, slots, rate):
        lr, t = rate
        m, u = slots
        m_new = _C.add(m.read_value(), _C.multiply(_C.subtract(grad, m.read_value()), 1.0 - self.beta_1))
        m.assign(m_new)
        u_new = _C.maximum(_C.multiply(u.read_value(), self.beta_2), _C.abs(grad))
        u.assign(u_new)
        step = _C.divide(lr, _C.subtract(1.0, _C.pow(self.beta_1, t)))
        var.assign_sub(_C.divide(_C.multiply(step, m_new), _C.add(u_new, self.epsilon)))

    def get_config(self):
        config = super().get_config()
        config.update(beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon)
        return config


class Nadam(_StepOptimizer):
    """Adam with Nesterov momentum and Dozat's momentum schedule u_t = b1 (1 - 0.5 * 0.96^(0.004 t)); the product
    of the u_t so far is a variable of the optimizer ("u_product"), as Keras'."""

    _slot_names = ("m", "v")

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="Nadam", **kwargs):
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        self._u_product = None
        self._u_product_next = None
        super().__init__(name, learning_rate, **kwargs)

    def _step_rate(self, lr, step):
        if self._u_product is None:
            self._u_product = self._create_var("u_product", 1.0, _dtypes.float32)
        t = _C.cast(step, lr.dtype._enum)
        u_t = _C.multiply(self.beta_1, _C.subtract(1.0, _C.multiply(0.5, _C.pow(0.96, _C.multiply(0.004, t)))))
        u_next = _C.multiply(self.beta_1, _C.subtract(1.0, _C.multiply(0.5, _C.pow(0.96, _C.multiply(
            0.004, _C.add(t, 1.0))))))
        u_product_t = _C.multiply(_C.cast(self._u_product.read_value(), lr.dtype._enum), u_t)
        self._u_product_next = u_product_t
        return lr, t, u_t, u_next, u_product_t

    def apply_gradients(self, grads_and_vars, *args, **kwargs):
        out = super().apply_gradients(grads_and_vars, *args, **kwargs)
        if self._u_product_next is not None:
            self._u_product.assign(_C.cast(self._u_product_next, _dtypes.float32._enum))
            self._u_product_next = None
        return out

    @property
    def variables(self):
        extra = (self._u_product,) if self._u_product is not None else ()
        return super().variables + extra

    def _apply_dense(self, grad, var, slots, rate):
        lr, t, u_t, u_next, u_product_t = rate
        m, v = slots
        u_product_next = _C.multiply(u_product_t, u_next)
        m_new = _C.add(m.read_value(), _C.multiply(_C.subtract(grad, m.read_value()), 1.0 - self.beta_1))
        v_new = _C.add(v.read_value(), _C.multiply(_C.subtract(_C.square(grad), v.read_value()), 1.0 - self.beta_2))
        m.assign(m_new)
        v.assign(v_new)
        m_hat = _C.add(_C.divide(_C.multiply(u_next, m_new), _C.subtract(1.0, u_product_next)),
                       _C.divide(_C.multiply(_C.subtract(1.0, u_t), grad), _C.subtract(1.0, u_product_t)))
        v_hat = _C.divide(v_new, _C.subtract(1.0, _C.pow(self.beta_2, t)))
        var.assign_sub(_C.divide(_C.multiply(m_hat, lr), _C.add(_C.sqrt(v_hat), self.epsilon)))

    def get_config(self):
        config = super().get_config()
        config.update(beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon)
        return config


class Ftrl(_StepOptimizer):
    """Follow-the-regularized-leader (McMahan et al.) with Keras' l1, l2, l2 shrinkage and beta."""

    _slot_names = ("accumulators", "linears")

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 l2_shrinkage_regularization_strength=0.0, beta=0.0, name="Ftrl", **kwargs):
        if initial_accumulator_value < 0.0:
            raise ValueError("`initial_accumulator_value` needs to be positive or zero. Received: "
                             f"initial_accumulator_value={initial_accumulator_value}.")
        if learning_rate_power > 0.0:
            raise ValueError("`learning_rate_power` needs to be negative or zero. Received: "
                             f"learning_rate_power={learning_rate_power}.")
        for key, value in (("l1_regularization_strength", l1_regularization_strength),
                           ("l2_regularization_strength", l2_regularization_strength),
                           ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength)):
            if value < 0.0:
                raise ValueError(f"`{key}` needs to be positive or zero. Received: {key}={value}.")
        self.learning_rate_power = float(learning_rate_power)
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.l1_regularization_strength = float(l1_regularization_strength)
        self.l2_regularization_strength = float(l2_regularization_strength)
        self.l2_shrinkage_regularization_strength = float(l2_shrinkage_regularization_strength)
        self.beta = float(beta)
        super().__init__(name, learning_rate, **kwargs)

    def _create_state(self, variables):
        new = [v for v in variables if v._state_id() not in self._slots]
        super()._create_state(variables)
        for v in new:  # the accumulators start at initial_accumulator_value, the linears at 0
            with _C.init_scope():
                self._slots[v._state_id()][0].assign(_C.fill(v.shape.as_list(), self.initial_accumulator_value,
                                                             v.dtype._enum))

    def _apply_dense(self, grad, var, slots, rate):
        lr, _ = rate
        accum, linear = slots
        power = -self.learning_rate_power
        l2 = _C.add(_C.divide(self.beta, _C.multiply(2.0, lr)), self.l2_regularization_strength)
        x = var.read_value()
        grad_used = _C.add(grad, _C.multiply(2.0 * self.l2_shrinkage_regularization_strength, x))
        old = accum.read_value()
        new = _C.add(old, _C.square(grad))
        linear.assign_add(_C.subtract(grad_used, _C.multiply(_C.divide(_C.subtract(_C.pow(new, power),
                                                                                   _C.pow(old, power)), lr), x)))
        quadratic = _C.add(_C.divide(_C.pow(new, power), lr), _C.multiply(2.0, l2))
        lin = linear.read_value()
        l1 = self.l1_regularization_strength
        var.assign(_C.divide(_C.subtract(_C.clip(lin, -l1, l1), lin), quadratic))
        accum.assign(new)

    def get_config(self):
        config = super().get_config()
        config.update(learning_rate_power=self.learning_rate_power,
                      initial_accumulator_value=self.initial_accumulator_value,
                      l1_regularization_strength=self.l1_regularization_strength,
                      l2_regularization_strength=self.l2_regularization_strength,
                      l2_shrinkage_regularization_strength=self.l2_shrinkage_regularization_strength, beta=self.beta)
        return config


class Lion(_StepOptimizer):
    """Lion (Chen et al. 2023): var -= lr sign(b1 m + (1 - b1) g); m = b2 m + (1 - b2) g."""

    _slot_names = ("m",)

    def __init__(self, learning_rate=0.0001, beta_1=0.9, beta_2=0.99, name="Lion", **kwargs):
        if not 0 <= beta_1 <= 1:
            raise ValueError(f"`beta_1`={beta_1} must be between [0, 1].")
        self.beta_1, self.beta_2 = float(beta_1), float(beta_2)
        super().__init__(name, learning_rate, **kwargs)

    def _apply_dense(self, grad, var, slots, rate):
        lr, _ = rate
        m = slots[0]
        var.assign_sub(_C.multiply(lr, _C.sign(_C.add(_C.multiply(m.read_value(), self.beta_1),
                                                      _C.multiply(grad, 1.0 - self.beta_1)))))
        m.assign(_C.add(_C.multiply(m.read_value(), self.beta_2), _C.multiply(grad, 1.0 - self.beta_2)))

    def get_config(self):
        config = super().get_config()
        config.update(beta_1=self.beta_1, beta_2=self.beta_2)
        return config


def _rms(x):
    return _C.sqrt(_C.reduce_mean(_C.square(x), None, False))


class Adafactor(_StepOptimizer):
    """Adafactor (Shazeer & Stern): for a variable of rank >= 2 the second moment is factored into row and column
    means r and c of g^2 + eps1 (slots "r" [..., rows], "c" [..., cols]), else kept whole ("v"); the step is
    max(eps2, rms(var)) * min(lr, 1 / sqrt(t)) times the update clipped to rms clip_threshold."""

    def __init__(self, learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30, epsilon_2=1e-3, clip_threshold=1.0,
                 relative_step=True, name="Adafactor", **kwargs):
        self.beta_2_decay, self.epsilon_1, self.epsilon_2 = float(beta_2_decay), float(epsilon_1), float(epsilon_2)
        self.clip_threshold, self.relative_step = float(clip_threshold), bool(relative_step)
        self._slot_names = ("r", "c", "v")
        super().__init__(name, learning_rate, **kwargs)

    def _create_state(self, variables):
        if self._iterations is None:
            saved, self._slot_names = self._slot_names, ()
            super()._create_state(variables)
            self._slot_names = saved
        for var in variables:
            key = var._state_id()
            if key in self._slots:
                continue
            shape = var.shape.as_list()
            base = var.name.rsplit(":", 1)[0]
            shapes = (shape[:-1], shape[:-2] + shape[-1:], [0]) if len(shape) >= 2 else ([0], [0], shape)
            slots = []
            for slot_name, slot_shape in zip(self._slot_names, shapes):
                with _C.init_scope():
                    initial = _C.fill(slot_shape, 0.0, var.dtype._enum)
                slots.append(_C.Variable(initial, False, f"{self.name}/{base}/{slot_name}", None))
            self._slots[key] = slots

    def _apply_dense(self, grad, var, slots, rate):
        lr, t = rate
        r, c, v = slots
        rho = _C.minimum(lr, _C.rsqrt(t)) if self.relative_step else lr
        alpha = _C.multiply(_C.maximum(_rms(var.read_value()), self.epsilon_2), rho)
        squared = _C.add(_C.square(grad), self.epsilon_1)
        beta_2 = _C.subtract(1.0, _C.pow(t, self.beta_2_decay))
        if len(var.shape) >= 2:
            r_new = _C.add(_C.multiply(beta_2, r.read_value()),
                           _C.multiply(_C.subtract(1.0, beta_2), _C.reduce_mean(squared, [-1], False)))
            c_new = _C.add(_C.multiply(beta_2, c.read_value()),
                           _C.multiply(_C.subtract(1.0, beta_2), _C.reduce_mean(squared, [-2], False)))
            r.assign(r_new)
            c.assign(c_new)
            v_t = _C.multiply(_C.expand_dims(_C.divide(r_new, _C.reduce_mean(r_new, [-1], True)), -1),
                              _C.expand_dims(c_new, -2))
        else:
            v_t = _C.add(_C.multiply(beta_2, v.read_value()), _C.multiply(_C.subtract(1.0, beta_2), squared))
            v.assign(v_t)
        u = _C.divide(grad, _C.sqrt(v_t))
        u = _C.divide(u, _C.maximum(1.0, _C.divide(_rms(u), self.clip_threshold)))
        var.assign_sub(_C.multiply(alpha, u))

    def get_config(self):
        config = super().get_config()
        config.update(beta_2_decay=self.beta_2_decay, epsilon_1=self.epsilon_1, epsilon_2=self.epsilon_2,
                      clip_threshold=self.clip_threshold, relative_step=self.relative_step)
        return config
