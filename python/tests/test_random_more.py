"""tf.random beyond normal/uniform: Generator, the stateless draws, truncated_normal, categorical, gamma,
poisson, the candidate samplers, and tf.config's logical CPUs. Distributions are checked with fixed seeds
against closed forms (means, variances, Kolmogorov-Smirnov distances with generous bounds)."""
import math
import os

import numpy as np
import pytest

import kiln as tf

N = 20000


def normal_cdf(x):
    return 0.5 * (1.0 + np.vectorize(math.erf)(np.asarray(x, np.float64) / math.sqrt(2.0)))


def ks_distance(samples, cdf):
    """The largest gap between the samples' empirical CDF and `cdf` (about 1.36 / sqrt(n) at 5%)."""
    x = np.sort(np.asarray(samples, np.float64).reshape(-1))
    n = x.size
    f = cdf(x)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


KS_BOUND = 2.0 / math.sqrt(N)


# ---- Generator ------------------------------------------------------------------------------------------------

def test_generator_normal_is_standard_normal():
    x = tf.random.Generator.from_seed(11).normal([N]).numpy()
    assert x.dtype == np.float32 and x.shape == (N,)
    assert abs(x.mean()) < 0.03 and abs(x.std() - 1) < 0.03
    assert ks_distance(x, normal_cdf) < KS_BOUND


def test_generator_normal_mean_stddev_and_float64():
    x = tf.random.Generator.from_seed(2).normal([N], mean=3.0, stddev=0.5, dtype=tf.float64)
    assert x.dtype == tf.float64
    assert abs(x.numpy().mean() - 3.0) < 0.02 and abs(x.numpy().std() - 0.5) < 0.02


def test_generator_uniform_floats_and_ints():
    g = tf.random.Generator.from_seed(3)
    u = g.uniform([N], minval=-2.0, maxval=6.0).numpy()
    assert u.min() >= -2.0 and u.max() < 6.0
    assert ks_distance(u, lambda v: (v + 2.0) / 8.0) < KS_BOUND
    k = g.uniform([N], minval=3, maxval=8, dtype=tf.int32)
    assert k.dtype == tf.int32 and set(np.unique(k.numpy())) == {3, 4, 5, 6, 7}
    assert np.all(np.abs(np.bincount(k.numpy())[3:] / N - 0.2) < 0.02)
    full = g.uniform([1000], minval=None, maxval=None, dtype=tf.int64).numpy()
    assert full.min() < -2 ** 60 and full.max() > 2 ** 60  # the whole int64 range
    assert g.uniform_full_int([3]).dtype == tf.uint64


def test_generator_truncated_normal_and_binomial():
    g = tf.random.Generator.from_seed(4)
    x = g.truncated_normal([N], mean=1.0, stddev=2.0).numpy()
    assert x.min() >= 1.0 - 4.0 and x.max() <= 1.0 + 4.0
    # The variance of a standard normal truncated to [-2, 2]: 1 - 2 * 2 phi(2) / (Phi(2) - Phi(-2)).
    phi2 = math.exp(-2.0) / math.sqrt(2 * math.pi)
    std = 2.0 * math.sqrt(1 - 4 * phi2 / (1 - 2 * float(normal_cdf(-2.0))))
    assert abs(x.std() - std) < 0.04 and abs(x.mean() - 1.0) < 0.04
    b = g.binomial([N, 2], counts=[10.0, 20.0], probs=[0.8])
    assert b.dtype == tf.int32 and b.shape == (N, 2)
    assert np.allclose(b.numpy().mean(axis=0), [8.0, 16.0], atol=0.1)
    assert np.allclose(b.numpy().var(axis=0), [1.6, 3.2], rtol=0.1)


def test_generator_state_is_tf_layout_and_advances_by_the_draws():
    g = tf.random.Generator.from_seed(1234)
    assert isinstance(g.state, tf.Variable) and g.state.dtype == tf.int64
    assert g.state.numpy().tolist() == [1234, 0, 0] and g.algorithm == tf.random.Algorithm.PHILOX.value
    g.normal(shape=(2, 3))
    assert g.state.numpy().tolist() == [1234 + 6 * 256, 0, 0]  # TF's advance: 256 a value
    assert int(g.key.numpy()) == 0
    h = tf.random.Generator.from_seed(1234)
    h.skip(6)
    assert h.state.numpy().tolist() == g.state.numpy().tolist()  # skip(n) == a draw of n values
    assert tf.random.Generator.from_seed(5, alg="threefry").state.shape == (2,)
    assert tf.random.create_rng_state(1234, "philox").numpy().tolist() == [1234, 0, 0]
    assert tf.random.create_rng_state([12, 34], "threefry").numpy().tolist() == [12, 34]
    assert tf.random.create_rng_state(2 ** 64 + 5, 1).numpy().tolist() == [5, 1, 0]


def test_counter_carries_into_its_high_word():
    g = tf.random.Generator.from_state([-1, 0, 7], tf.random.Algorithm.PHILOX)  # counter low = 2**64 - 1
    g.skip(1)
    assert g.state.numpy().tolist() == [255, 1, 7]


def test_same_seed_same_numbers_and_reset_reproduces():
    a = tf.random.Generator.from_seed(1)
    b = tf.random.Generator.from_seed(1)
    first = [a.normal([3]).numpy() for _ in range(3)]
    assert all(np.array_equal(x, b.normal([3]).numpy()) for x in first)
    assert not np.array_equal(first[0], first[1])  # each draw new values
    a.reset_from_seed(1)
    assert np.array_equal(a.normal([3]).numpy(), first[0])
    a.reset([1, 0, 0])
    assert np.array_equal(a.normal([3]).numpy(), first[0])
    c = tf.random.Generator.from_key_counter(key=0, counter=[1, 0], alg="philox")
    assert np.array_equal(c.normal([3]).numpy(), first[0])
    c.reset_from_key_counter(key=0, counter=[1, 0])
    assert np.array_equal(c.normal([3]).numpy(), first[0])
    d = tf.random.Generator(copy_from=a)
    assert np.array_equal(d.normal([3]).numpy(), a.normal([3]).numpy())


def test_split_gives_independent_generators_and_advances_the_parent():
    g = tf.random.Generator.from_seed(1)
    before = g.state.numpy().copy()
    children = g.split(3)
    assert len(children) == 3 and not np.array_equal(g.state.numpy(), before)
    draws = [c.normal([N]).numpy() for c in children] + [g.normal([N]).numpy()]
    for i in range(len(draws)):
        for j in range(i + 1, len(draws)):
            assert abs(np.corrcoef(draws[i], draws[j])[0, 1]) < 0.03
    again = tf.random.Generator.from_state(before, "philox").split(3)
    assert np.array_equal(again[0].normal([N]).numpy(), draws[0])  # splitting is deterministic too
    seeds = tf.random.Generator.from_seed(9).make_seeds(4)
    assert seeds.shape == (2, 4) and seeds.dtype == tf.int64 and np.all(seeds.numpy()[1] == 0)


def test_generator_in_tf_function_advances_per_call_and_matches_eager():
    eager = tf.random.Generator.from_seed(7)
    traced = tf.random.Generator.from_seed(7)

    @tf.function
    def draw():
        return traced.normal([2]), traced.uniform([], 0, 10, dtype=tf.int32)

    for _ in range(3):
        x, k = draw()
        assert np.array_equal(x.numpy(), eager.normal([2]).numpy())
        assert int(k) == int(eager.uniform([], 0, 10, dtype=tf.int32))
    assert traced.state.numpy().tolist() == eager.state.numpy().tolist() == [7 + 9 * 256, 0, 0]


def test_concurrent_draws_never_share_a_state():
    import threading
    g = tf.random.Generator.from_seed(3)
    drawn = []

    def worker():
        for _ in range(50):
            drawn.append(float(g.normal([])))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(drawn)) == 200 and g.state.numpy().tolist() == [3 + 200 * 256, 0, 0]


def test_generator_seeds_a_dataset_map():
    """The data augmentation tutorial's pattern: rng.make_seeds inside Dataset.map, one pair per element."""
    rng = tf.random.Generator.from_seed(123, alg="philox")

    def seeded(x):
        return x, rng.make_seeds(2)[0]

    ds = tf.data.Dataset.range(4).map(seeded)
    seeds = [tuple(s.numpy().tolist()) for _, s in ds]
    assert len(set(seeds)) == 4 and rng.state.numpy().tolist() == [123 + 4 * 2 * 256, 0, 0]


def test_generator_made_inside_tf_function_on_first_trace():
    made = []

    @tf.function
    def draw():
        if not made:
            made.append(tf.random.Generator.from_seed(1))
        return made[0].normal([])

    a, b = draw(), draw()
    ref = tf.random.Generator.from_seed(1)
    assert float(a) == float(ref.normal([])) and float(b) == float(ref.normal([]))


def test_draws_of_shapes_known_only_at_run_time():
    g = tf.random.Generator.from_seed(1)

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def draw(x):
        return (g.normal(tf.shape(x)), tf.random.stateless_uniform(tf.shape(x), seed=[1, 2]),
                g.uniform([tf.shape(x)[0]], 0, 5, dtype=tf.int32))

    a, b, c = draw(tf.zeros([4, 3]))
    assert a.shape == b.shape == (4, 3) and c.shape == (4,)
    assert np.array_equal(b.numpy(), tf.random.stateless_uniform([4, 3], seed=[1, 2]).numpy())
    assert np.array_equal(a.numpy(), tf.random.Generator.from_seed(1).normal([4, 3]).numpy())
    assert g.state.numpy().tolist() == [1 + 16 * 256, 0, 0]


def test_global_generator():
    g = tf.random.get_global_generator()
    assert g is tf.random.get_global_generator() and g.normal([2, 3]).shape == (2, 3)
    mine = tf.random.Generator.from_seed(3)
    tf.random.set_global_generator(mine)
    try:
        assert tf.random.get_global_generator() is mine
    finally:
        tf.random.set_global_generator(g)
    assert tf.random.experimental.Generator is tf.random.Generator


def test_global_generator_refused_under_op_determinism_until_set():
    from kiln import random_generator
    saved = random_generator._global[0]
    random_generator._global[0] = None
    tf.config.experimental.enable_op_determinism()
    try:
        with pytest.raises(RuntimeError, match="set_global_generator"):
            tf.random.get_global_generator()
        mine = tf.random.Generator.from_seed(1)
        tf.random.set_global_generator(mine)
        assert tf.random.get_global_generator() is mine
    finally:
        tf.config.experimental.disable_op_determinism()
        random_generator._global[0] = saved


def test_generator_checkpoint_round_trip(tmp_path):
    g = tf.random.Generator.from_seed(1)
    g.normal([])
    cp = tf.train.Checkpoint(generator=g)
    path = cp.write(str(tmp_path / "ckpt"))
    assert ("generator/_state_var/.ATTRIBUTES/VARIABLE_VALUE", [3]) in tf.train.list_variables(path)
    after_save = [g.normal([2]).numpy() for _ in range(2)]
    cp.restore(path)
    assert all(np.array_equal(x, g.normal([2]).numpy()) for x in after_save)
    fresh = tf.random.Generator.from_seed(99)
    tf.train.Checkpoint(generator=fresh).restore(path)
    assert np.array_equal(fresh.normal([2]).numpy(), after_save[0])


def test_generator_argument_errors():
    with pytest.raises(ValueError, match="Unknown algorithm name"):
        tf.random.Generator.from_seed(1, alg="mersenne")
    with pytest.raises(TypeError):
        tf.random.Generator.from_seed(1, alg=1.5)
    with pytest.raises(ValueError, match=r"Shapes \(2,\) and \(3,\) are incompatible"):
        tf.random.Generator.from_state([1, 2], "philox")
    with pytest.raises(ValueError, match="incompatible"):
        tf.random.Generator.from_key_counter(key=1, counter=[1, 2, 3], alg="philox")
    with pytest.raises(ValueError, match="both `None` or both"):
        tf.random.Generator.from_seed(1).uniform([2], maxval=None, dtype=tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.random.Generator.from_seed(1).uniform([2], minval=5, maxval=5, dtype=tf.int32)


# ---- stateless -------------------------------------------------------------------------------------------------

def test_stateless_same_seed_same_values_and_eager_equals_traced():
    calls = {
        "normal": lambda s: tf.random.stateless_normal([4, 3], seed=s),
        "uniform": lambda s: tf.random.stateless_uniform([5], seed=s, minval=1.0, maxval=2.0),
        "uniform_int": lambda s: tf.random.stateless_uniform([5], seed=s, minval=-3, maxval=3, dtype=tf.int64),
        "full_int": lambda s: tf.random.stateless_uniform([5], seed=s, minval=None, maxval=None, dtype=tf.int32),
        "truncated": lambda s: tf.random.stateless_truncated_normal([6], seed=s),
        "categorical": lambda s: tf.random.stateless_categorical([[0.0, 1.0, 2.0]], 7, seed=s),
        "binomial": lambda s: tf.random.stateless_binomial([3], seed=s, counts=[5.0], probs=[0.5]),
        "poisson": lambda s: tf.random.stateless_poisson([3], seed=s, lam=4.0),
        "gamma": lambda s: tf.random.stateless_gamma([3, 2], seed=s, alpha=[1.0, 2.0]),
        "split": lambda s: tf.random.experimental.stateless_split(s, num=3),
        "fold_in": lambda s: tf.random.experimental.stateless_fold_in(s, 5),
        "shuffle": lambda s: tf.random.experimental.stateless_shuffle(tf.reshape(tf.range(20), [10, 2]), s),
        "ptn": lambda s: tf.random.stateless_parameterized_truncated_normal([4], seed=s, minvals=0.0),
    }
    seed = tf.constant([1, 2])
    for name, call in calls.items():
        eager = call(seed).numpy()
        assert np.array_equal(eager, call(seed).numpy()), name
        assert np.array_equal(eager, tf.function(call)(seed).numpy()), name
        if name != "split":  # split's seeds have the seed's dtype
            assert np.array_equal(eager, call(tf.constant([1, 2], tf.int64)).numpy()), name  # int32 = int64 seed
        other = call(tf.constant([1, 3])).numpy()
        assert not np.array_equal(eager, other), name


def test_stateless_normal_and_uniform_distributions():
    x = tf.random.stateless_normal([N], seed=[4, 5], mean=1.0, stddev=2.0, dtype=tf.float64)
    assert x.dtype == tf.float64 and ks_distance((x.numpy() - 1.0) / 2.0, normal_cdf) < KS_BOUND
    u = tf.random.stateless_uniform([N], seed=[4, 5], dtype=tf.float16).numpy()
    assert u.dtype == np.float16 and u.min() >= 0 and u.max() < 1
    assert ks_distance(u, lambda v: v) < KS_BOUND + 1e-3  # float16 rounding
    t = tf.random.stateless_truncated_normal([N], seed=[4, 5]).numpy()
    assert np.abs(t).max() <= 2.0
    # The truncated normal's CDF on [-2, 2].
    lo = float(normal_cdf(-2.0))
    assert ks_distance(t, lambda v: (normal_cdf(v) - lo) / (1 - 2 * lo)) < KS_BOUND


def test_stateless_categorical_frequencies():
    logits = np.log([[0.1, 0.2, 0.7], [0.5, 0.5, 1e-30]]).astype(np.float32)
    draws = tf.random.stateless_categorical(logits, N, seed=[1, 1])
    assert draws.dtype == tf.int64 and draws.shape == (2, N)
    d = draws.numpy()
    assert np.allclose(np.bincount(d[0], minlength=3) / N, [0.1, 0.2, 0.7], atol=0.015)
    assert np.allclose(np.bincount(d[1], minlength=3) / N, [0.5, 0.5, 0.0], atol=0.015)
    assert tf.random.stateless_categorical(logits, 3, seed=[1, 1], dtype=tf.int32).dtype == tf.int32


def test_stateless_binomial_poisson_gamma_moments():
    b = tf.random.stateless_binomial([N, 2], seed=[123, 456], counts=[10.0, 20.0], probs=[0.8])
    assert b.dtype == tf.int32 and np.allclose(b.numpy().mean(axis=0), [8.0, 16.0], atol=0.1)
    p = tf.random.stateless_poisson([N, 2], seed=[1, 2], lam=[1.5, 30.0], dtype=tf.float32).numpy()
    assert p.dtype == np.float32
    assert np.allclose(p.mean(axis=0), [1.5, 30.0], rtol=0.03) and np.allclose(p.var(axis=0), [1.5, 30.0], rtol=0.08)
    alpha, beta = np.array([[0.5], [3.0]], np.float32), np.array([[2.0, 4.0]], np.float32)
    g = tf.random.stateless_gamma([N, 2, 2], seed=[12, 34], alpha=alpha, beta=beta).numpy()
    assert g.shape == (N, 2, 2) and g.min() > 0
    assert np.allclose(g.mean(axis=0), alpha / beta, rtol=0.05)
    assert np.allclose(g.var(axis=0), alpha / beta ** 2, rtol=0.12)


def test_stateless_parameterized_truncated_normal_bounds():
    x = tf.random.stateless_parameterized_truncated_normal(
        [N, 3], seed=[3, 4], means=[0.0, 5.0, 0.0], stddevs=[1.0, 2.0, 1.0], minvals=[-1.0, 5.0, 6.0],
        maxvals=[1.0, 6.0, 7.0]).numpy()
    assert x.shape == (N, 3)
    assert np.all(x.min(axis=0) >= [-1.0, 5.0, 6.0]) and np.all(x.max(axis=0) <= [1.0, 6.0, 7.0])
    assert abs(x[:, 0].mean()) < 0.02 and x[:, 2].mean() < 6.3  # the far tail piles up near its low end


def test_stateless_split_fold_in_index_shuffle():
    seeds = tf.random.split([1, 2], num=3)
    assert seeds.shape == (3, 2) and seeds.dtype == tf.int32
    assert len({tuple(s) for s in seeds.numpy().tolist()}) == 3
    assert tf.random.experimental.stateless_split(tf.constant([1, 2], tf.int64)).dtype == tf.int64
    folded = tf.random.fold_in([1, 2], 3)
    assert folded.shape == (2,) and int(folded[1]) == 3
    other = tf.random.experimental.stateless_fold_in([1, 2], 4).numpy()
    assert other[0] == folded.numpy()[0] and other[1] == 4  # TF's construction: [draw from seed, data]
    perm = tf.random.experimental.index_shuffle(tf.range(10), [1, 2, 3], 9).numpy()
    assert sorted(perm.tolist()) == list(range(10)) and perm.tolist() != list(range(10))
    assert int(tf.random.experimental.index_shuffle(4, [1, 2, 3], 9)) == perm[4]


def test_stateless_shuffle_permutes_rows():
    value = tf.reshape(tf.range(40), [20, 2])
    out = tf.random.experimental.stateless_shuffle(value, seed=[5, 6]).numpy()
    assert out.shape == (20, 2) and sorted(out[:, 0].tolist()) == list(range(0, 40, 2))
    assert np.all(out[:, 1] == out[:, 0] + 1) and out[:, 0].tolist() != list(range(0, 40, 2))
    traced = tf.function(lambda v: tf.random.experimental.stateless_shuffle(v, seed=[5, 6]),
                         input_signature=[tf.TensorSpec([None, 2], tf.int32)])
    assert np.array_equal(traced(value).numpy(), out)  # rows known only at run time


def test_stateless_seed_and_argument_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"seed must have shape \[2\], not \[3\]"):
        tf.random.stateless_normal([2], seed=[1, 2, 3])
    with pytest.raises(TypeError, match="int32, int64"):
        tf.random.stateless_normal([2], seed=[1.0, 2.0])
    with pytest.raises(ValueError, match="Shape must be"):
        tf.function(lambda s: tf.random.stateless_uniform([2], seed=s))(tf.constant([1, 2, 3]))
    with pytest.raises(ValueError, match="both `None` or both non-`None`"):
        tf.random.stateless_uniform([2], seed=[1, 2], maxval=5, minval=None, dtype=tf.int32)
    with pytest.raises(ValueError, match="Invalid dtype for bounded"):
        tf.random.stateless_uniform([2], seed=[1, 2], minval=0, maxval=5, dtype=tf.uint32)
    with pytest.raises(ValueError, match="Invalid dtype"):
        tf.random.stateless_normal([2], seed=[1, 2], dtype=tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="minval < maxval"):
        tf.random.stateless_uniform([2], seed=[1, 2], minval=3, maxval=3, dtype=tf.int32)
    with pytest.raises(ValueError, match="matrix"):
        tf.random.stateless_categorical([0.0, 1.0], 2, seed=[1, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape \[3\]"):
        tf.random.experimental.index_shuffle(1, [1, 2], 5)


# ---- op-seeded extras -----------------------------------------------------------------------------------------

def test_truncated_normal_categorical_gamma_poisson_follow_tf_seed_rules():
    draws = {
        "truncated": lambda: tf.random.truncated_normal([N], mean=1.0, stddev=0.5, seed=3),
        "categorical": lambda: tf.random.categorical(tf.math.log([[0.25, 0.75]]), 2000, seed=3),
        "gamma": lambda: tf.random.gamma([N], alpha=[2.0, 9.0], beta=3.0, seed=3),
        "poisson": lambda: tf.random.poisson([N], lam=[2.0, 7.0], seed=3),
    }
    for name, draw in draws.items():
        tf.random.set_seed(5)
        a, b = draw().numpy(), draw().numpy()
        tf.random.set_seed(5)
        assert np.array_equal(a, draw().numpy()), name  # the sequence reproduces under the global seed
        assert not np.array_equal(a, b), name  # each call new values
    tf.random.set_seed(5)
    t = draws["truncated"]().numpy()
    assert t.min() >= 0.0 and t.max() <= 2.0 and abs(t.mean() - 1.0) < 0.02
    c = draws["categorical"]().numpy()
    assert c.dtype == np.int64 and c.shape == (1, 2000) and abs(c.mean() - 0.75) < 0.04
    g = draws["gamma"]().numpy()
    assert g.shape == (N, 2) and np.allclose(g.mean(axis=0), [2.0 / 3.0, 3.0], rtol=0.04)
    p = draws["poisson"]().numpy()
    assert p.shape == (N, 2) and p.dtype == np.float32 and np.allclose(p.mean(axis=0), [2.0, 7.0], rtol=0.04)


def test_categorical_frequencies_and_run_time_batch():
    logits = tf.constant([[-np.inf, 0.0, math.log(3.0)], [5.0, 5.0, 5.0]])
    d = tf.random.categorical(logits, N, seed=4).numpy()
    assert np.allclose(np.bincount(d[0], minlength=3) / N, [0.0, 0.25, 0.75], atol=0.015)
    assert np.allclose(np.bincount(d[1], minlength=3) / N, [1 / 3] * 3, atol=0.015)
    traced = tf.function(lambda lg: tf.random.categorical(lg, 5, dtype=tf.int32),
                         input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    out = traced(tf.constant([[0.0, -np.inf, -np.inf]] * 4))
    assert out.dtype == tf.int32 and out.shape == (4, 5) and np.all(out.numpy() == 0)


def test_op_seeded_extras_trace():
    @tf.function
    def draw():
        return (tf.random.truncated_normal([3, 2], seed=1), tf.random.categorical([[0.0, 0.0, 0.0]], 4),
                tf.random.gamma([5], 2.0), tf.random.poisson([2, 3], [1.0, 4.0], dtype=tf.int32))

    t, c, g, p = draw()
    assert t.shape == (3, 2) and c.shape == (1, 4) and g.shape == (5,) and p.shape == (2, 3, 2)
    assert p.dtype == tf.int32 and np.all(np.abs(t.numpy()) <= 2.0)
    assert not np.array_equal(draw()[0].numpy(), t.numpy())  # a traced op draws anew on every run


# ---- candidate samplers ---------------------------------------------------------------------------------------

def test_uniform_and_log_uniform_candidate_samplers():
    true = tf.constant([[1, 2], [3, 4]], tf.int64)
    sampled, true_expected, sampled_expected = tf.random.uniform_candidate_sampler(
        true, num_true=2, num_sampled=5, unique=False, range_max=10, seed=1)
    assert sampled.dtype == tf.int64 and sampled.shape == (5,) and true_expected.shape == (2, 2)
    assert np.allclose(true_expected.numpy(), 0.5) and np.allclose(sampled_expected.numpy(), 0.5)  # 5 * 1/10
    sampled, true_expected, _ = tf.random.log_uniform_candidate_sampler(
        true, num_true=2, num_sampled=8, unique=True, range_max=1000, seed=2)
    assert len(set(sampled.numpy().tolist())) == 8 and sampled.numpy().max() < 1000
    p1 = math.log(3 / 2) / math.log(1001)
    assert true_expected.numpy()[0, 0] >= 1 - (1 - p1) ** 8 - 1e-6  # at least num_sampled tries
    many, _, expected = tf.random.log_uniform_candidate_sampler(true, 2, 20000, False, 50, seed=3)
    freq = np.bincount(many.numpy(), minlength=50) / 20000
    p = np.log((np.arange(50) + 2) / (np.arange(50) + 1)) / np.log(51)
    assert np.allclose(freq, p, atol=0.01)
    assert np.allclose(expected.numpy(), 20000 * p[many.numpy()], rtol=1e-4)


def test_fixed_learned_and_all_candidate_samplers(tmp_path):
    true = [[0], [3]]
    sampled, _, expected = tf.random.fixed_unigram_candidate_sampler(
        true, 1, 4000, False, 5, unigrams=[1, 1, 2, 4], num_reserved_ids=1, seed=4)
    freq = np.bincount(sampled.numpy(), minlength=5) / 4000
    assert freq[0] == 0 and np.allclose(freq[1:], [0.125, 0.125, 0.25, 0.5], atol=0.03)
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a,1\nb,1\nc,2\nd,4\n")
    sampled, _, _ = tf.random.fixed_unigram_candidate_sampler(true, 1, 4, True, 4, vocab_file=str(vocab),
                                                              distortion=0.0)
    assert sorted(sampled.numpy().tolist()) == [0, 1, 2, 3]
    sampled, _, _ = tf.random.learned_unigram_candidate_sampler(true, 1, 3, True, 10)
    assert len(set(sampled.numpy().tolist())) == 3
    sampled, true_expected, sampled_expected = tf.random.all_candidate_sampler(true, 1, 6, True)
    assert sampled.numpy().tolist() == list(range(6)) and np.all(true_expected.numpy() == 1)
    assert sampled_expected.shape == (6,)
    with pytest.raises(tf.errors.InvalidArgumentError, match="range is too small"):
        tf.random.uniform_candidate_sampler(true, 1, 11, True, 10)


def test_candidate_sampler_traces():
    @tf.function
    def draw(classes):
        return tf.random.log_uniform_candidate_sampler(classes, 1, 4, True, 100)

    sampled, true_expected, sampled_expected = draw(tf.constant([[1], [2], [3]], tf.int64))
    assert sampled.shape == (4,) and true_expected.shape == (3, 1) and sampled_expected.shape == (4,)


# ---- tf.config's logical CPUs ---------------------------------------------------------------------------------

@pytest.fixture
def logical_cpus():
    from kiln import config
    saved = config._cpu_configuration[0]
    config._cpu_configuration[0] = None
    yield
    config._cpu_configuration[0] = saved


def test_virtual_cpu_devices(logical_cpus):
    cpu = tf.config.list_physical_devices("CPU")[0]
    assert tf.config.get_logical_device_configuration(cpu) is None
    tf.config.experimental.set_virtual_device_configuration(
        cpu, [tf.config.experimental.VirtualDeviceConfiguration()] * 3)
    names = [d.name for d in tf.config.list_logical_devices("CPU")]
    assert names == ["/device:CPU:0", "/device:CPU:1", "/device:CPU:2"]
    assert tf.config.get_logical_device_configuration(cpu) == [tf.config.LogicalDeviceConfiguration()] * 3
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 3)  # the same
    with pytest.raises(RuntimeError, match="cannot be modified"):
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    with tf.device("cpu:1"):
        assert float(tf.constant(2.0) * 2) == 4.0


def test_virtual_cpu_configuration_errors(logical_cpus):
    cpu = tf.config.list_physical_devices("CPU")[0]
    with pytest.raises(ValueError, match="memory limit on CPU"):
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration(memory_limit=10)])
    with pytest.raises(ValueError, match="Unrecognized device"):
        tf.config.set_logical_device_configuration("GPU:0", [tf.config.LogicalDeviceConfiguration()])
    assert len(tf.config.list_logical_devices("CPU")) == 1
