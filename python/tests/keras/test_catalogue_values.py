"""Values of the losses, metrics, initializers, activations, constraints and regularizers added for Keras 2.15's
catalogues, against NumPy float64 versions of Keras' documented formulas (and the examples of its docstrings),
eagerly and inside tf.function."""
import math

import numpy as np
import pytest

import kiln as tf

K = tf.keras
RNG = np.random.default_rng(0)
EPS = 1e-7


def both(fn, *args):
    """fn(*args) eagerly and traced, as NumPy; asserts they agree."""
    tensors = [tf.constant(a) for a in args]
    eager = fn(*tensors).numpy()
    traced = tf.function(lambda *t: fn(*t))(*tensors).numpy()
    np.testing.assert_allclose(traced, eager, rtol=1e-6, atol=1e-7)
    return eager


# ---- losses -----------------------------------------------------------------------------------------------------

Y_TRUE = RNG.uniform(0.1, 2.0, (4, 3)).astype(np.float32)
Y_PRED = RNG.uniform(0.1, 2.0, (4, 3)).astype(np.float32)
LABELS01 = (RNG.uniform(size=(4, 3)) > 0.5).astype(np.float32)
PROBS = RNG.uniform(0.05, 0.95, (4, 3)).astype(np.float32)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


REFERENCES = {
    "mean_absolute_percentage_error": lambda t, p: 100 * np.mean(np.abs(t - p) / np.maximum(np.abs(t), EPS), -1),
    "mean_squared_logarithmic_error": lambda t, p: np.mean((np.log1p(np.maximum(p, EPS)) -
                                                            np.log1p(np.maximum(t, EPS))) ** 2, -1),
    "huber": lambda t, p: np.mean(np.where(np.abs(p - t) <= 1, 0.5 * (p - t) ** 2, np.abs(p - t) - 0.5), -1),
    "log_cosh": lambda t, p: np.mean(np.log(np.cosh(p - t)), -1),
    "poisson": lambda t, p: np.mean(p - t * np.log(p + EPS), -1),
    "kl_divergence": lambda t, p: np.sum(np.clip(t, EPS, 1) * np.log(np.clip(t, EPS, 1) / np.clip(p, EPS, 1)), -1),
    "cosine_similarity": lambda t, p: -np.sum(t * p, -1) / np.linalg.norm(t, axis=-1) / np.linalg.norm(p, axis=-1),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_regression_losses_match_formulas(name):
    fn = getattr(K.losses, name)
    got = both(fn, Y_TRUE, Y_PRED)
    np.testing.assert_allclose(got, REFERENCES[name](Y_TRUE.astype(np.float64), Y_PRED.astype(np.float64)),
                               rtol=1e-5, atol=1e-6)
    loss = K.losses.get(name)
    assert float(loss(Y_TRUE, Y_PRED).numpy()) == pytest.approx(float(np.mean(got)), rel=1e-5)


def test_hinge_losses_convert_binary_labels():
    signed = 2 * LABELS01 - 1
    x = Y_PRED - 1.0
    np.testing.assert_allclose(both(K.losses.hinge, LABELS01, x), np.mean(np.maximum(1 - signed * x, 0), -1),
                               rtol=1e-6)
    np.testing.assert_allclose(both(K.losses.squared_hinge, signed, x),
                               np.mean(np.maximum(1 - signed * x, 0) ** 2, -1), rtol=1e-6)
    onehot = np.eye(3, dtype=np.float32)[[0, 2, 1, 1]]
    pos = np.sum(onehot * x, -1)
    neg = np.max((1 - onehot) * x, -1)
    np.testing.assert_allclose(both(K.losses.categorical_hinge, onehot, x), np.maximum(neg - pos + 1, 0), rtol=1e-6)
    # Keras' docstring: Huber with delta=1.0 on [[0, 1], [0, 0]] vs [[0.6, 0.4], [0.4, 0.6]] -> 0.155
    assert float(K.losses.Huber()([[0., 1.], [0., 0.]], [[0.6, 0.4], [0.4, 0.6]]).numpy()) == pytest.approx(0.155)


def test_focal_crossentropies():
    gamma, alpha = 2.0, 0.25
    t, p = LABELS01.astype(np.float64), PROBS.astype(np.float64)
    pc = np.clip(p, EPS, 1 - EPS)
    bce = -(t * np.log(pc + EPS) + (1 - t) * np.log(1 - pc + EPS))
    p_t = t * p + (1 - t) * (1 - p)
    expected = np.mean((1 - p_t) ** gamma * bce, -1)
    np.testing.assert_allclose(both(K.losses.binary_focal_crossentropy, LABELS01, PROBS), expected, rtol=1e-5)
    balanced = K.losses.binary_focal_crossentropy(LABELS01, PROBS, apply_class_balancing=True).numpy()
    weight = t * alpha + (1 - t) * (1 - alpha)
    np.testing.assert_allclose(balanced, np.mean(weight * (1 - p_t) ** gamma * bce, -1), rtol=1e-5)
    logits = np.log(PROBS / (1 - PROBS))
    from_logits = K.losses.BinaryFocalCrossentropy(from_logits=True, reduction="none")(LABELS01, logits).numpy()
    np.testing.assert_allclose(from_logits, expected, rtol=1e-4)
    onehot = np.eye(3, dtype=np.float32)[[0, 2, 1, 1]]
    probs = PROBS / PROBS.sum(-1, keepdims=True)
    q = np.clip(probs.astype(np.float64), EPS, 1 - EPS)
    cfc = np.sum(alpha * (1 - q) ** gamma * -onehot * np.log(q), -1)
    np.testing.assert_allclose(both(K.losses.categorical_focal_crossentropy, onehot, probs), cfc, rtol=1e-5)


def test_loss_objects_reduce_and_round_trip():
    loss = K.losses.Huber(delta=0.5, reduction="sum")
    got = float(loss(Y_TRUE, Y_PRED).numpy())
    err = Y_PRED.astype(np.float64) - Y_TRUE
    ref = np.sum(np.mean(np.where(np.abs(err) <= 0.5, 0.5 * err ** 2, 0.5 * np.abs(err) - 0.125), -1))
    assert got == pytest.approx(ref, rel=1e-5)
    again = K.losses.deserialize(K.losses.serialize(loss)) if isinstance(K.losses.serialize(loss), dict) else \
        K.losses.Huber.from_config(loss.get_config())
    assert again.get_config() == loss.get_config() and again.delta == 0.5
    model = K.Sequential([K.Input((3,)), K.layers.Dense(3)])
    model.compile("sgd", "log_cosh")
    history = model.fit(Y_TRUE, Y_PRED, epochs=3, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


# ---- metrics ------------------------------------------------------------------------------------------------------

def confusion(y_true, y_pred, threshold, weights=None):
    w = np.ones_like(y_pred) if weights is None else weights
    pos = y_pred > threshold
    lab = y_true > 0.5
    return (np.sum(w * (pos & lab)), np.sum(w * (pos & ~lab)), np.sum(w * (~pos & ~lab)), np.sum(w * (~pos & lab)))


def test_confusion_metrics_precision_recall():
    y_true = (RNG.uniform(size=50) > 0.4).astype(np.float32)
    y_pred = RNG.uniform(size=50).astype(np.float32)
    w = RNG.uniform(0.5, 2, 50).astype(np.float32)
    tp, fp, tn, fn = confusion(y_true, y_pred, 0.5, w)
    for cls, want in ((K.metrics.TruePositives, tp), (K.metrics.FalsePositives, fp),
                      (K.metrics.TrueNegatives, tn), (K.metrics.FalseNegatives, fn)):
        m = cls()
        m.update_state(y_true[:20], y_pred[:20], w[:20])
        m.update_state(y_true[20:], y_pred[20:], w[20:])
        assert float(m.result().numpy()) == pytest.approx(want, rel=1e-5)
    p = K.metrics.Precision(thresholds=[0.3, 0.5, 0.8])
    r = K.metrics.Recall(thresholds=[0.3, 0.5, 0.8])
    step = tf.function(lambda a, b: (p.update_state(a, b), r.update_state(a, b)))
    step(tf.constant(y_true), tf.constant(y_pred))
    for i, th in enumerate([0.3, 0.5, 0.8]):
        tp, fp, tn, fn = confusion(y_true, y_pred, th)
        assert p.result().numpy()[i] == pytest.approx(tp / (tp + fp), rel=1e-5)
        assert r.result().numpy()[i] == pytest.approx(tp / (tp + fn), rel=1e-5)
    # Keras' docstrings
    m = K.metrics.Precision()
    m.update_state([0, 1, 1, 1], [1, 0, 1, 1])
    assert float(m.result().numpy()) == pytest.approx(2 / 3)
    m = K.metrics.Precision(top_k=2)
    m.update_state([0, 0, 1, 1], [1, 1, 1, 1])
    assert float(m.result().numpy()) == pytest.approx(0.0)
    m = K.metrics.Recall(class_id=1)
    m.update_state([[0, 1], [0, 1], [1, 0]], [[0.2, 0.9], [0.7, 0.2], [0.6, 0.8]])
    assert float(m.result().numpy()) == pytest.approx(0.5)
    assert float(K.metrics.Recall()(tf.constant([0., 0.]), tf.constant([0., 0.])).numpy()) == 0.0


def auc_reference(y_true, y_pred, curve, num_thresholds=200):
    inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    thresholds = [-EPS] + inner + [1 + EPS]
    counts = np.array([confusion(y_true, y_pred, t) for t in thresholds], np.float64)
    tp, fp, tn, fn = counts.T
    with np.errstate(divide="ignore", invalid="ignore"):
        if curve == "ROC":
            x = np.nan_to_num(fp / (fp + tn))
            y = np.nan_to_num(tp / (tp + fn))
            return np.sum((x[:-1] - x[1:]) * (y[:-1] + y[1:]) / 2)
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        dp = p[:-1] - p[1:]
        slope = np.where(dp > 0, dtp / np.where(dp > 0, dp, 1), 0)
        intercept = tp[1:] - slope * p[1:]
        ratio = np.where((p[:-1] > 0) & (p[1:] > 0), p[:-1] / np.where(p[1:] > 0, p[1:], 1), 1)
        denom = tp[1:] + fn[1:]
        inc = np.where(denom > 0, slope * (dtp + intercept * np.log(ratio)) / np.where(denom > 0, denom, 1), 0)
        return np.sum(inc)


def test_auc_roc_and_pr():
    y_true = (RNG.uniform(size=200) > 0.5).astype(np.float32)
    y_pred = np.clip(y_true * 0.3 + RNG.uniform(size=200) * 0.7, 0, 1).astype(np.float32)
    for curve in ("ROC", "PR"):
        m = K.metrics.AUC(curve=curve)
        m.update_state(y_true, y_pred)
        assert float(m.result().numpy()) == pytest.approx(auc_reference(y_true, y_pred, curve), rel=1e-4)
    m = K.metrics.AUC(num_thresholds=3)  # Keras' docstring: 0.75
    m.update_state([0, 0, 1, 1], [0, 0.5, 0.3, 0.9])
    assert float(m.result().numpy()) == pytest.approx(0.75)
    exact = K.metrics.AUC(num_thresholds=2000)
    exact.update_state(y_true, y_pred)
    pos, neg = y_pred[y_true == 1], y_pred[y_true == 0]
    mann_whitney = np.mean(pos[:, None] > neg[None, :])
    assert float(exact.result().numpy()) == pytest.approx(mann_whitney, abs=2e-3)


def test_at_constraint_metrics_documented_examples():
    cases = [(K.metrics.SensitivityAtSpecificity(0.5), 0.5), (K.metrics.SpecificityAtSensitivity(0.5), 0.66666667),
             (K.metrics.PrecisionAtRecall(0.5), 0.5), (K.metrics.RecallAtPrecision(0.8), 0.5)]
    data = {"SensitivityAtSpecificity": ([0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8]),
            "SpecificityAtSensitivity": ([0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8]),
            "PrecisionAtRecall": ([0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8]),
            "RecallAtPrecision": ([0, 0, 1, 1], [0, 0.5, 0.3, 0.9])}
    for metric, want in cases:
        y_true, y_pred = data[type(metric).__name__]
        metric.update_state(y_true, y_pred)
        assert float(metric.result().numpy()) == pytest.approx(want, rel=1e-5), type(metric).__name__


def test_iou_metrics():
    t = np.array([0, 0, 1, 1, 2, 2, 2])
    p = np.array([0, 1, 1, 1, 2, 0, 2])
    cm = np.zeros((3, 3))
    np.add.at(cm, (t, p), 1)
    iou = np.diag(cm) / (cm.sum(0) + cm.sum(1) - np.diag(cm))
    m = K.metrics.MeanIoU(num_classes=3)
    m.update_state(t, p)
    assert float(m.result().numpy()) == pytest.approx(iou.mean(), rel=1e-6)
    m = K.metrics.IoU(num_classes=3, target_class_ids=[0, 2])
    m.update_state(t, p)
    assert float(m.result().numpy()) == pytest.approx(iou[[0, 2]].mean(), rel=1e-6)
    m = K.metrics.MeanIoU(num_classes=2)  # Keras' docstring (weighted): 0.23809525
    m.update_state([0, 0, 1, 1], [0, 1, 0, 1], sample_weight=[0.3, 0.3, 0.3, 0.1])
    assert float(m.result().numpy()) == pytest.approx(0.23809525, rel=1e-5)
    m = K.metrics.BinaryIoU(target_class_ids=[0, 1], threshold=0.3)  # docstring: 0.33333
    m.update_state([0, 1, 0, 1], [0.1, 0.2, 0.4, 0.7])
    assert float(m.result().numpy()) == pytest.approx(1 / 3, rel=1e-5)
    m = K.metrics.OneHotMeanIoU(num_classes=3)  # Keras docstring: (0 + 0 + 0.1 / 0.7) / 3
    m.update_state(np.eye(3)[[2, 0, 1, 0]], [[0.2, 0.3, 0.5], [0.1, 0.2, 0.7], [0.5, 0.3, 0.1], [0.1, 0.4, 0.5]],
                   sample_weight=[0.1, 0.2, 0.3, 0.4])
    assert float(m.result().numpy()) == pytest.approx(0.1 / 0.7 / 3, rel=1e-5)  # printed rounded there


def test_r2_and_f1_scores():
    y_true = RNG.normal(size=(30, 2)).astype(np.float32)
    y_pred = (y_true + RNG.normal(scale=0.5, size=(30, 2))).astype(np.float32)
    m = K.metrics.R2Score()
    m.update_state(y_true[:10], y_pred[:10])
    m.update_state(y_true[10:], y_pred[10:])
    t, p = y_true.astype(np.float64), y_pred.astype(np.float64)
    r2 = 1 - ((t - p) ** 2).sum(0) / ((t - t.mean(0)) ** 2).sum(0)
    assert float(m.result().numpy()) == pytest.approx(r2.mean(), rel=1e-4)
    raw = K.metrics.R2Score(class_aggregation=None)
    raw.update_state(y_true, y_pred)
    np.testing.assert_allclose(raw.result().numpy(), r2, rtol=1e-4)
    assert float(K.metrics.R2Score()([[1.], [4.], [3.]], [[2.], [4.], [4.]]).numpy()) == pytest.approx(0.57142854)
    labels = np.eye(3)[[0, 1, 2, 2, 1, 0, 0]].astype(np.float32)
    scores = RNG.uniform(size=(7, 3)).astype(np.float32)
    predicted = np.eye(3)[scores.argmax(1)]
    tp = (predicted * labels).sum(0)
    fp = (predicted * (1 - labels)).sum(0)
    fn = ((1 - predicted) * labels).sum(0)
    prec, rec = tp / (tp + fp + EPS), tp / (tp + fn + EPS)
    with np.errstate(invalid="ignore"):
        f1 = np.nan_to_num(2 * prec * rec / (prec + rec))
    m = K.metrics.F1Score()
    m.update_state(labels, scores)
    np.testing.assert_allclose(m.result().numpy(), f1, rtol=1e-5, atol=1e-6)
    macro = K.metrics.F1Score(average="macro")
    macro.update_state(labels, scores)
    assert float(macro.result().numpy()) == pytest.approx(f1.mean(), rel=1e-5, abs=1e-6)
    fb = K.metrics.FBetaScore(beta=2.0, threshold=0.5)  # Keras' docstring values
    fb.update_state(np.array([[1, 1, 1], [1, 0, 0], [1, 1, 0]], np.int32),
                    np.array([[0.2, 0.6, 0.7], [0.2, 0.6, 0.6], [0.6, 0.8, 0.0]], np.float32))
    np.testing.assert_allclose(fb.result().numpy(), [0.3846154, 0.90909094, 0.8333334], rtol=1e-5)


def test_mean_wrappers_and_topk():
    y_pred = np.array([[0.1, 0.9, 0.8], [0.05, 0.95, 0]], np.float32)
    m = K.metrics.TopKCategoricalAccuracy(k=1)  # Keras' docstring: 0.5
    m.update_state([[0, 0, 1], [0, 1, 0]], y_pred)
    assert float(m.result().numpy()) == 0.5
    m = K.metrics.SparseTopKCategoricalAccuracy(k=1)
    m.update_state([2, 1], y_pred)
    assert float(m.result().numpy()) == 0.5
    assert float(K.metrics.SparseTopKCategoricalAccuracy(k=2)([2, 1], y_pred).numpy()) == 1.0
    rmse = K.metrics.RootMeanSquaredError()
    rmse.update_state(Y_TRUE, Y_PRED)
    assert float(rmse.result().numpy()) == pytest.approx(np.sqrt(np.mean((Y_TRUE - Y_PRED) ** 2)), rel=1e-5)
    cos = K.metrics.CosineSimilarity(axis=1)  # docstring: 0.49999997
    cos.update_state([[0., 1.], [1., 1.]], [[1., 0.], [1., 1.]])
    assert float(cos.result().numpy()) == pytest.approx(0.5, rel=1e-5)
    mre = K.metrics.MeanRelativeError(normalizer=[1, 3, 2, 3])  # docstring: 1.25
    mre.update_state([1, 3, 2, 3], [2, 4, 6, 8])
    assert float(mre.result().numpy()) == pytest.approx(1.25)
    mt = K.metrics.MeanTensor()
    mt.update_state([0, 1, 2, 3])
    mt.update_state([4, 5, 6, 7])
    np.testing.assert_allclose(mt.result().numpy(), [2, 3, 4, 5])
    model = K.Sequential([K.Input((3,)), K.layers.Dense(3, activation="softmax")])
    model.compile("adam", "categorical_crossentropy", metrics=["top_k_categorical_accuracy", K.metrics.AUC(),
                                                               K.metrics.Precision(), "mape"])
    logs = model.fit(PROBS, np.eye(3)[[0, 1, 2, 0]], epochs=1, verbose=0).history
    assert {"top_k_categorical_accuracy", "auc", "precision", "mape"} <= set(logs)


# ---- initializers, activations, constraints, regularizers -------------------------------------------------------

def test_normal_initializers():
    values = K.initializers.TruncatedNormal(mean=1.0, stddev=2.0, seed=3)((200, 100)).numpy()
    assert np.all(np.abs(values - 1.0) <= 4.0 + 1e-6)
    assert values.std() == pytest.approx(2.0 * 0.8796, rel=0.03)  # a normal truncated at 2 sigma
    np.testing.assert_array_equal(K.initializers.TruncatedNormal(seed=3)((5, 4)).numpy(),
                                  K.initializers.TruncatedNormal(seed=3)((5, 4)).numpy())
    for cls, scale in ((K.initializers.GlorotNormal, 2.0 / (300 + 100)), (K.initializers.HeNormal, 2.0 / 300),
                       (K.initializers.LecunNormal, 1.0 / 300)):
        w = cls(seed=1)((300, 100)).numpy()
        assert w.std() == pytest.approx(math.sqrt(scale), rel=0.03), cls.__name__
        assert np.abs(w).max() <= 2 * math.sqrt(scale) / 0.8796 + 1e-6
    np.testing.assert_array_equal(K.initializers.Identity(gain=2.0)((2, 3)).numpy(), 2 * np.eye(2, 3))
    with pytest.raises(ValueError, match="2D matrices"):
        K.initializers.Identity()((2, 2, 2))


def test_new_activations():
    x = np.linspace(-4, 4, 17).astype(np.float32)
    np.testing.assert_allclose(both(K.activations.hard_sigmoid, x), np.clip(0.2 * x + 0.5, 0, 1), rtol=1e-6)
    np.testing.assert_allclose(both(K.activations.mish, x), x * np.tanh(np.log1p(np.exp(x))), rtol=1e-5, atol=1e-6)
    assert K.activations.deserialize("mish") is K.activations.mish
    assert K.layers.Dense(2, activation="hard_sigmoid").get_config()["activation"] == "hard_sigmoid"


def test_radial_constraint_and_orthogonal_regularizer():
    w = np.arange(5 * 5 * 2 * 1, dtype=np.float32).reshape(5, 5, 2, 1)
    out = K.constraints.RadialConstraint()(tf.constant(w)).numpy()
    k = w[:, :, 0, 0]
    # Keras' construction for size 5: centre kernel[1, 1], first ring kernel[2, 2], second ring kernel[3, 3].
    expected = np.full((5, 5), k[3, 3])
    expected[1:4, 1:4] = k[2, 2]
    expected[2, 2] = k[1, 1]
    np.testing.assert_array_equal(out[:, :, 0, 0], expected)
    even = K.constraints.RadialConstraint()(tf.constant(w[:4, :4])).numpy()[:, :, 1, 0]
    k = w[:4, :4, 1, 0]
    expected = np.full((4, 4), k[3, 3])
    expected[1:3, 1:3] = k[1, 1]
    np.testing.assert_array_equal(even, expected)
    x = RNG.normal(size=(4, 6)).astype(np.float32)
    for mode, mat in (("rows", x), ("columns", x.T)):
        unit = mat / np.linalg.norm(mat, axis=1, keepdims=True)
        prod = np.abs(unit @ unit.T)
        n = mat.shape[0]
        expected = 0.05 * 0.5 * (prod.sum() - np.trace(prod)) / (n * (n - 1) / 2)
        got = float(K.regularizers.OrthogonalRegularizer(factor=0.05, mode=mode)(tf.constant(x)).numpy())
        assert got == pytest.approx(expected, rel=1e-5)
    assert K.regularizers.get("orthogonal_regularizer").get_config() == {"factor": pytest.approx(0.01), "mode": "rows"}
