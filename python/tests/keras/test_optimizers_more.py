"""Adadelta, Adamax, Nadam, Ftrl, Lion and Adafactor against float64 NumPy versions of Keras 2.15's update rules,
eagerly and inside a traced step."""
import numpy as np
import pytest

import kiln as tf

O = tf.keras.optimizers
GRADS = [np.array([[0.3, -1.2], [0.05, 2.0], [-0.7, 0.4]]), np.array([[-0.1, 0.5], [1.5, -0.2], [0.3, 0.3]]),
         np.array([[0.9, 0.0], [-0.4, 0.8], [0.2, -1.1]])]
START = np.array([[0.5, -0.25], [1.0, 0.75], [-1.5, 0.2]])


def adadelta(lr=0.001, rho=0.95, eps=1e-7):
    def run(x, grads):
        ag, ad = np.zeros_like(x), np.zeros_like(x)
        for g in grads:
            ag = rho * ag + (1 - rho) * g * g
            delta = -np.sqrt(ad + eps) / np.sqrt(ag + eps) * g
            ad = rho * ad + (1 - rho) * delta * delta
            x = x + lr * delta
        return x
    return run


def adamax(lr=0.001, b1=0.9, b2=0.999, eps=1e-7):
    def run(x, grads):
        m, u = np.zeros_like(x), np.zeros_like(x)
        for t, g in enumerate(grads, 1):
            m = b1 * m + (1 - b1) * g
            u = np.maximum(b2 * u, np.abs(g))
            x = x - lr / (1 - b1 ** t) * m / (u + eps)
        return x
    return run


def nadam(lr=0.001, b1=0.9, b2=0.999, eps=1e-7):
    def run(x, grads):
        m, v, prod = np.zeros_like(x), np.zeros_like(x), 1.0
        for t, g in enumerate(grads, 1):
            u_t = b1 * (1 - 0.5 * 0.96 ** (0.004 * t))
            u_next = b1 * (1 - 0.5 * 0.96 ** (0.004 * (t + 1)))
            prod_t = prod * u_t
            prod_next = prod_t * u_next
            m = m + (g - m) * (1 - b1)
            v = v + (g * g - v) * (1 - b2)
            m_hat = u_next * m / (1 - prod_next) + (1 - u_t) * g / (1 - prod_t)
            v_hat = v / (1 - b2 ** t)
            x = x - m_hat * lr / (np.sqrt(v_hat) + eps)
            prod = prod_t
        return x
    return run


def ftrl(lr=0.001, power=-0.5, init=0.1, l1=0.0, l2=0.0, shrink=0.0, beta=0.0):
    def run(x, grads):
        acc, lin = np.full_like(x, init), np.zeros_like(x)
        for g in grads:
            l2_reg = l2 + beta / (2 * lr)
            gu = g + 2 * shrink * x
            new = acc + g * g
            lin = lin + gu - (new ** -power - acc ** -power) / lr * x
            quad = new ** -power / lr + 2 * l2_reg
            x = (np.clip(lin, -l1, l1) - lin) / quad
            acc = new
        return x
    return run


def lion(lr=0.0001, b1=0.9, b2=0.99):
    def run(x, grads):
        m = np.zeros_like(x)
        for g in grads:
            x = x - lr * np.sign(b1 * m + (1 - b1) * g)
            m = b2 * m + (1 - b2) * g
        return x
    return run


def adafactor(lr=0.001, decay=-0.8, eps1=1e-30, eps2=1e-3, clip=1.0):
    def rms(a):
        return np.sqrt(np.mean(a * a))

    def run(x, grads):
        r, c, v = np.zeros(x.shape[:-1]), np.zeros(x.shape[:-2] + x.shape[-1:]), np.zeros_like(x)
        for t, g in enumerate(grads, 1):
            rho = min(lr, 1 / np.sqrt(t))
            alpha = max(eps2, rms(x)) * rho
            sq = g * g + eps1
            b2 = 1 - t ** decay
            if x.ndim >= 2:
                r = b2 * r + (1 - b2) * sq.mean(-1)
                c = b2 * c + (1 - b2) * sq.mean(-2)
                vt = (r / r.mean(-1, keepdims=True))[..., None] * c[..., None, :]
            else:
                v = b2 * v + (1 - b2) * sq
                vt = v
            u = g / np.sqrt(vt)
            u = u / max(1.0, rms(u) / clip)
            x = x - alpha * u
        return x
    return run


CASES = [
    (lambda: O.Adadelta(learning_rate=0.5), adadelta(lr=0.5)),
    (lambda: O.Adadelta(learning_rate=1.0, rho=0.8, epsilon=1e-3), adadelta(1.0, 0.8, 1e-3)),
    (lambda: O.Adamax(learning_rate=0.1), adamax(lr=0.1)),
    (lambda: O.Nadam(learning_rate=0.5, beta_1=0.5), nadam(lr=0.5, b1=0.5)),
    (lambda: O.Ftrl(learning_rate=0.1), ftrl(lr=0.1)),
    (lambda: O.Ftrl(learning_rate=0.2, l1_regularization_strength=0.05, l2_regularization_strength=0.1,
                    l2_shrinkage_regularization_strength=0.02, beta=0.3, learning_rate_power=-0.3),
     ftrl(0.2, -0.3, 0.1, 0.05, 0.1, 0.02, 0.3)),
    (lambda: O.Lion(learning_rate=0.01), lion(lr=0.01)),
    (lambda: O.Adafactor(learning_rate=0.1), adafactor(lr=0.1)),
]


@pytest.mark.parametrize("make,reference", CASES)
def test_update_rules_match_reference(make, reference):
    expected = reference(START.copy(), GRADS)
    for traced in (False, True):
        opt = make()
        var = tf.Variable(START.astype(np.float32))

        def step(g):
            opt.apply_gradients([(g, var)])

        run = tf.function(step) if traced else step
        for g in GRADS:
            run(tf.constant(g.astype(np.float32)))
        np.testing.assert_allclose(var.numpy(), expected, rtol=1e-4, atol=2e-5)
        assert int(opt.iterations.numpy()) == 3


def test_adafactor_vector_and_nadam_state():
    vec = START[:, 0].copy()
    grads = [g[:, 0] for g in GRADS]
    opt = O.Adafactor(learning_rate=0.2)
    var = tf.Variable(vec.astype(np.float32))
    for g in grads:
        opt.apply_gradients([(tf.constant(g.astype(np.float32)), var)])
    np.testing.assert_allclose(var.numpy(), adafactor(lr=0.2)(vec, grads), rtol=2e-5, atol=2e-6)
    nadam_opt = O.Nadam()
    v = tf.Variable([1.0])
    nadam_opt.apply_gradients([(tf.constant([0.5]), v)])
    assert any("u_product" in s.name for s in nadam_opt.variables)


@pytest.mark.parametrize("name,cls", [("adadelta", "Adadelta"), ("adamax", "Adamax"), ("nadam", "Nadam"),
                                      ("ftrl", "Ftrl"), ("lion", "Lion"), ("adafactor", "Adafactor")])
def test_by_name_config_round_trip_and_fit(name, cls):
    opt = O.get(name)
    assert type(opt).__name__ == cls and opt.name == cls
    config = opt.get_config()
    again = O.deserialize(O.serialize(opt))
    assert again.get_config() == config
    x = np.random.default_rng(1).normal(size=(32, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    model.compile(O.get({"class_name": cls, "config": dict(config, learning_rate=0.05)}), "mse")
    history = model.fit(x, y, epochs=5, verbose=0, batch_size=8)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_bad_arguments():
    with pytest.raises(ValueError, match="initial_accumulator_value"):
        O.Ftrl(initial_accumulator_value=-1.0)
    with pytest.raises(ValueError, match="learning_rate_power"):
        O.Ftrl(learning_rate_power=0.5)
    with pytest.raises(ValueError, match="Unknown optimizer: 'adamaxx'"):
        O.get("adamaxx")
