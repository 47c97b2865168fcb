"""The differential program tester, through Python (the C++ one is
tests/program_differential_test.cpp; docs/design-notes.md, "Tensor identity").

Random small programs over TF's differentiable ops, with operands from a tiny
pool of values so that equal values meet: a variable holding 2, the Python
literal 2.0, a NumPy scalar 2, a `tf.constant(2.0)`. For each program:
eager == traced bit for bit (target and gradients), gradients defined exactly
for the watched sources the target depends on (TF gives None otherwise), and
the float64 gradients equal central differences of the same program computed
by NumPy alone (an independent reference), skipping kinks (relu at 0, ties).

KILN_PROGRAMS=N (default 300) and KILN_PROGRAM_SEED=S (default 1) choose the
programs; a failure prints the seed that replays it.
"""
import os
import random

import numpy as np

import kiln as tf

POOL = [-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0]
SHAPES = [(), (3,), (2, 3)]
UNARY = ["neg", "square", "sin", "tanh", "sigmoid", "softplus", "abs", "relu", "elu", "selu", "reshape",
         "pow2", "identity"]
BINARY = ["add", "sub", "mul", "safe_div", "maximum", "minimum", "where", "cond", "while", "call"]
LITERAL = ["mul_literal", "radd_literal", "rsub_literal", "numpy_literal", "constant", "constant_numpy"]
OTHER = ["read", "sum", "mean", "max", "inner_grad"]
OPS = UNARY + BINARY + LITERAL + OTHER
SELU_SCALE, SELU_ALPHA = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717


def generate(seed):
    rng = random.Random(seed)
    sources = []  # (kind, shape, values, index of the constant a variable is made from or None)
    for i in range(rng.randint(2, 4)):
        kind = rng.choice(["trainable", "frozen", "watched", "unwatched"])
        shape = rng.choice(SHAPES)
        values, made_from = [rng.choice(POOL) for _ in range(int(np.prod(shape)))], None
        j = rng.randrange(i) if i else 0
        if kind in ("trainable", "frozen") and i and rng.random() < 1 / 3 and sources[j][0] in ("watched", "unwatched"):
            made_from, shape, values = j, sources[j][1], list(sources[j][2])  # tf.Variable(t) of a used t
        sources.append((kind, shape, values, made_from))
    shapes = [s[1] for s in sources]
    body = []
    for _ in range(rng.randint(10, 40)):
        n = len(shapes)
        pick = lambda: n - 1 - rng.randrange(min(n, 4)) if rng.random() < 0.5 else rng.randrange(n)  # noqa: E731
        op, a, b, lit = rng.choice(OPS), pick(), pick(), rng.choice(POOL)
        if op == "read":
            a = rng.randrange(len(sources))
            shapes.append(sources[a][1])
        elif op in ("constant", "constant_numpy", "sum"):
            shapes.append(())
        elif op in ("mean", "max"):
            shapes.append((3,) if len(shapes[a]) == 2 else ())
        elif op in BINARY:
            wide = max(shapes[a], shapes[b], key=len)
            if op == "call":
                shapes.append(shapes[a])
            shapes.append(wide)
        else:
            shapes.append(shapes[a])
        body.append((op, a, b, lit))
    return sources, body, rng.randrange(len(shapes))


@tf.function
def _called(a, b):
    return a, a * b + tf.sin(b)


def _run_body(body, second, values, variables, dtype):
    npd = np.float32 if dtype == tf.float32 else np.float64
    for op, a_i, b_i, lit in body:
        a, b = values[a_i], values[b_i]
        if op == "read":
            r = variables[a_i].read_value() if variables[a_i] is not None else values[a_i]
        elif op == "neg": r = -a
        elif op == "square": r = tf.square(a)
        elif op == "sin": r = tf.sin(a)
        elif op == "tanh": r = tf.tanh(a)
        elif op == "sigmoid": r = tf.sigmoid(a)
        elif op == "softplus": r = tf.nn.softplus(a)
        elif op == "abs": r = tf.abs(a)
        elif op == "relu": r = tf.nn.relu(a)
        elif op == "elu": r = tf.nn.elu(a)
        elif op == "selu": r = tf.nn.selu(a)
        elif op == "reshape": r = tf.reshape(a, a.shape)
        elif op == "identity": r = tf.identity(a)
        elif op == "pow2": r = (tf.square(a) + 0.5) ** 2
        elif op == "add": r = a + b
        elif op == "sub": r = a - b
        elif op == "mul": r = a * b
        elif op == "safe_div": r = a / (tf.square(b) + 1.0)
        elif op == "maximum": r = tf.maximum(a, b)
        elif op == "minimum": r = tf.minimum(a, b)
        elif op == "where": r = tf.where(a > lit + 0.25, a, b)  # thresholds off the pool
        elif op == "cond":
            r = tf.cond(tf.reduce_sum(a) > lit + 0.25, lambda: a * b + lit, lambda: tf.sin(a) - b)
        elif op == "while":
            c = tf.reduce_sum(b)
            _, r = tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 0.5 + tf.tanh(x) * c),
                                 (tf.constant(0), a))
        elif op == "call":
            first, r = _called(a, b)
            values.append(first)
        elif op == "mul_literal": r = a * lit
        elif op == "radd_literal": r = lit + a
        elif op == "rsub_literal": r = lit - a
        elif op == "numpy_literal": r = a * npd(lit)
        elif op == "constant": r = tf.constant(lit, dtype=dtype)
        elif op == "constant_numpy": r = tf.constant(np.array(lit, dtype=npd))
        elif op == "sum": r = tf.reduce_sum(a)
        elif op == "mean": r = tf.reduce_mean(a, axis=0 if len(a.shape) == 2 else None)
        elif op == "max": r = tf.reduce_max(a, axis=0 if len(a.shape) == 2 else None)
        elif op == "inner_grad":
            with tf.GradientTape() as inner:
                inner.watch(a)
                y = tf.reduce_sum(tf.sin(a) * a)
            r = inner.gradient(y, a)
        else:
            raise AssertionError(op)
        values.append(r)
    return tf.reduce_sum(values[-1]) + tf.reduce_sum(values[second])


def _on_a_kink(op, a, b, lit):
    """Whether the op sits exactly where it is not differentiable: there a
    smooth composition of non-smooth pieces can have a slope the tape cannot
    give (minimum(relu(x), x) at 0 is x, slope 1; the tape takes relu's side
    of the tie, 0, as TF does)."""
    if op in ("abs", "relu", "elu", "selu"):
        return bool(np.any(a == 0))
    if op == "where":
        return bool(np.any(a == lit + 0.25))
    if op == "cond":
        return bool(a.sum() == lit + 0.25)
    if op in ("maximum", "minimum"):
        return bool(np.any(a == b))
    if op == "max":
        groups = a.reshape(2, 3).T if a.ndim == 2 else [a.reshape(-1)]  # what each output reduces
        return any(len(set(g)) < len(g) for g in groups)
    return False


def _numpy_body(body, second, values, kinks=None):
    """The same program in NumPy float64: the independent reference (with
    `kinks`, a list that collects the ops sitting on a kink)."""
    values = [np.asarray(v, np.float64) for v in values]
    for op, a_i, b_i, lit in body:
        a, b = values[a_i], values[b_i]
        if kinks is not None and _on_a_kink(op, a, b, lit):
            kinks.append(op)
        if op in ("read", "reshape", "identity"): r = values[a_i]
        elif op == "neg": r = -a
        elif op == "square": r = a * a
        elif op == "sin": r = np.sin(a)
        elif op == "tanh": r = np.tanh(a)
        elif op == "sigmoid": r = 1 / (1 + np.exp(-a))
        elif op == "softplus": r = np.logaddexp(0, a)
        elif op == "abs": r = np.abs(a)
        elif op == "relu": r = np.maximum(a, 0)
        elif op == "elu": r = np.where(a > 0, a, np.expm1(np.minimum(a, 0)))
        elif op == "selu": r = SELU_SCALE * np.where(a > 0, a, SELU_ALPHA * np.expm1(np.minimum(a, 0)))
        elif op == "pow2": r = (a * a + 0.5) ** 2
        elif op == "add": r = a + b
        elif op == "sub": r = a - b
        elif op == "mul": r = a * b
        elif op == "safe_div": r = a / (b * b + 1)
        elif op == "maximum": r = np.maximum(a, b)
        elif op == "minimum": r = np.minimum(a, b)
        elif op == "where": r = np.where(a > lit + 0.25, a, b)
        elif op == "cond": r = a * b + lit if a.sum() > lit + 0.25 else np.sin(a) - b
        elif op == "while":
            c, r = b.sum(), a
            for _ in range(3):
                r = r * 0.5 + np.tanh(r) * c
        elif op == "call":
            values.append(a)
            r = a * b + np.sin(b)
        elif op in ("mul_literal", "numpy_literal"): r = a * lit
        elif op == "radd_literal": r = lit + a
        elif op == "rsub_literal": r = lit - a
        elif op in ("constant", "constant_numpy"): r = np.float64(lit)
        elif op == "sum": r = a.sum()
        elif op == "mean": r = a.mean(axis=0 if a.ndim == 2 else None)
        elif op == "max": r = a.max(axis=0 if a.ndim == 2 else None)
        elif op == "inner_grad": r = np.cos(a) * a + np.sin(a)
        values.append(np.asarray(r, np.float64))
    return float(values[-1].sum() + values[second].sum())


def _connected(sources, body, second):
    deps = [{i} for i in range(len(sources))]
    for op, a, b, _ in body:
        if op == "read": deps.append(set(deps[a]))
        elif op in ("constant", "constant_numpy"): deps.append(set())
        elif op == "call": deps += [set(deps[a]), deps[a] | deps[b]]
        elif op in BINARY: deps.append(deps[a] | deps[b])
        else: deps.append(set(deps[a]))
    return deps[-1] | deps[second]


def _run(program, dtype, traced):
    sources, body, second = program
    npd = np.float32 if dtype == tf.float32 else np.float64
    variables, constants = [], []
    for i, (kind, shape, vals, made_from) in enumerate(sources):
        # As users make them: a scalar from a Python float, a variable from a
        # tensor the program also uses.
        value = vals[0] if shape == () else np.array(vals, dtype=npd).reshape(shape)
        if made_from is not None:
            value = constants[made_from]
        if kind in ("trainable", "frozen"):
            variables.append(tf.Variable(value, trainable=kind == "trainable", name=f"v{i}", dtype=dtype))
            constants.append(tf.constant(0.0))
        else:
            variables.append(None)
            constants.append(tf.constant(value, dtype=dtype))

    def with_tape(*consts):
        with tf.GradientTape() as tape:
            first = []
            for i, (kind, _, _, _) in enumerate(sources):
                if variables[i] is not None:
                    first.append(variables[i].read_value())
                else:
                    if kind == "watched":
                        tape.watch(consts[i])
                    first.append(consts[i])
            target = _run_body(body, second, first, variables, dtype)
        # Unwatched constants are operands only: TF gives them a gradient where
        # they feed a recorded op directly, which central differences (through
        # every path) do not model.
        asked = [i for i, (kind, _, _, _) in enumerate(sources) if kind != "unwatched"]
        grads = tape.gradient(target, [variables[i] if variables[i] is not None else consts[i] for i in asked])
        full = [None] * len(sources)
        for i, g in zip(asked, grads):
            full[i] = g
        return target, full

    if not traced:
        return with_tape(*constants)
    defined = []

    @tf.function
    def step(*consts):
        target, grads = with_tape(*consts)
        defined[:] = [g is not None for g in grads]
        return [target] + [g if g is not None else tf.zeros_like(target) for g in grads]

    out = step(*constants)
    return out[0], [g if d else None for g, d in zip(out[1:], defined)]


def _same_bits(a, b):
    a, b = np.asarray(a.numpy()), np.asarray(b.numpy())
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def _close(a, b, dtype, nested):
    """Gradients eager and traced: the same bits, except through cond,
    while_loop or a function call, whose gradients sum a value's contributions
    inside the branch, loop or function first, an order the eager tape (one
    flat list) does not take (a few ulps apart)."""
    if not nested:
        return _same_bits(a, b)
    a, b = np.asarray(a.numpy(), np.float64), np.asarray(b.numpy(), np.float64)
    eps = 1e-5 if dtype == tf.float32 else 1e-13
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= eps * (1 + np.abs(a))))


def _central_differences(program, grads, failures):
    sources, body, second = program
    x = [list(s[2]) for s in sources]
    shaped = lambda: [np.array(v, np.float64).reshape(s[1]) for v, s in zip(x, sources)]  # noqa: E731
    kinks = []
    f0 = _numpy_body(body, second, shaped(), kinks)
    compared = 0
    for i, g in enumerate(grads):
        if g is None:
            continue
        flat = np.asarray(g.numpy(), np.float64).reshape(-1)
        for k, x0 in enumerate(list(x[i])):
            def at(h):
                x[i][k] = x0 + h
                f = _numpy_body(body, second, shaped())
                x[i][k] = x0
                return f
            h = 1e-4 * max(1.0, abs(x0))
            fp, fm, fp2, fm2 = at(h), at(-h), at(h / 4), at(-h / 4)
            central, central2 = (fp - fm) / (2 * h), (fp2 - fm2) / (h / 2)
            scale = 1 + abs(central)
            if _kink(f0, fp, fm, fp2, fm2, h, scale) or abs(central - central2) > 1e-2 * scale:
                continue  # a kink, or the slope changes faster than h resolves
            err = abs(central - central2) / 3 + 1e-7 * scale
            compared += 1
            if abs(flat[k] - central2) > 10 * err + 1e-6 * scale and not kinks:
                failures.append(f"float64 gradient of v{i} element {k}: tape {flat[k]} NumPy central "
                                f"differences {central2}")
    return compared


def _kink(f0, fp, fm, fp2, fm2, h, scale):
    """Whether x sits on a kink or a jump (relu or abs at 0, a tie of
    maximum, a cond's predicate flipping): where f is smooth the one-sided
    slopes differ by about f'' h, which shrinks with h; at a kink the
    difference stays."""
    gap = abs((fp - f0) - (f0 - fm)) / h
    gap2 = abs((fp2 - f0) - (f0 - fm2)) / (h / 4)
    return gap > 1e-8 * scale and gap2 > gap / 2


def _moderate(seed):
    attempt = 0
    while True:
        program = generate(seed + attempt * 1_000_003)
        sources, body, second = program
        with np.errstate(all="ignore"):
            f = _numpy_body(body, second, [np.array(s[2], np.float64).reshape(s[1]) for s in sources])
        if np.isfinite(f) and abs(f) < 1e4:
            return program
        attempt += 1


def check_program(seed):
    program = _moderate(seed)
    sources, body, second = program
    failures = []
    connected = _connected(sources, body, second)
    nested = any(op in ("while", "cond", "call") for op, _, _, _ in body)
    compared = 0
    for dtype in (tf.float64, tf.float32):
        try:
            et, eg = _run(program, dtype, traced=False)
            tt, tg = _run(program, dtype, traced=True)
        except Exception as e:  # noqa: BLE001  (reported with the program)
            failures.append(f"{dtype.name}: raised {type(e).__name__}: {e}")
            continue
        if not _same_bits(et, tt):
            failures.append(f"{dtype.name} target: eager {et.numpy()} traced {tt.numpy()}")
        for i, (kind, _, _, _) in enumerate(sources):
            expected = i in connected and kind in ("trainable", "watched")  # frozen: never watched
            if (eg[i] is not None) != expected or (tg[i] is not None) != expected:
                failures.append(f"{dtype.name} gradient of v{i}: expected {'a value' if expected else 'None'}, "
                                f"eager {eg[i]} traced {tg[i]}")
            elif expected and not _close(eg[i], tg[i], dtype, nested):
                failures.append(f"{dtype.name} gradient of v{i}: eager {eg[i].numpy()} traced {tg[i].numpy()}")
        if dtype == tf.float64 and not failures:
            compared = _central_differences(program, eg, failures)
    return program, failures, compared


def describe(program):
    sources, body, second = program
    lines = [f"  v{i} = {k} {s} {v}" + (f" (made from v{m})" if m is not None else "")
             for i, (k, s, v, m) in enumerate(sources)]
    n = len(sources)
    for op, a, b, lit in body:
        lines.append(f"  v{n} = {op}(v{a}, v{b}, {lit})")
        n += 2 if op == "call" else 1
    lines.append(f"  target = sum(v{n - 1}) + sum(v{second})")
    return "\n".join(lines)


def test_random_programs_agree_eager_traced_and_numpy():
    count = int(os.environ.get("KILN_PROGRAMS", "300"))
    first = int(os.environ.get("KILN_PROGRAM_SEED", "1"))
    failed, compared = [], 0
    for seed in range(first, first + count):
        program, failures, n = check_program(seed)
        compared += n
        if failures:
            failed.append(f"seed {seed} (replay: KILN_PROGRAMS=1 KILN_PROGRAM_SEED={seed}):\n{describe(program)}\n"
                          + "\n".join(failures))
    assert compared > count, "too few gradient elements were compared with NumPy"
    assert not failed, f"{len(failed)} of {count} programs failed:\n\n" + "\n\n".join(failed[:3])


def test_the_autodiff_guide_with_colliding_values():
    """TF's autodiff guide, with values that collide (issue: equal values
    shared one tensor in the eager tape)."""
    x = tf.Variable(2.0)
    with tf.GradientTape() as t:
        y = x * 2.0
    assert t.gradient(y, x).numpy() == 2.0
    with tf.GradientTape() as t:
        y = x ** 2
    assert t.gradient(y, x).numpy() == 4.0
    a, b = tf.Variable(3.0), tf.Variable(3.0, trainable=False)
    with tf.GradientTape() as t:
        y = a + b
    assert t.gradient(y, a).numpy() == 1.0
    x, y = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        t.watch(y)
        z = x * 2.0
    assert t.gradient(z, y) is None

    @tf.function
    def traced():
        v = tf.constant(2.0)
        with tf.GradientTape() as t:
            t.watch(v)
            w = v * 2.0 + v ** 2
        return t.gradient(w, v)
    assert traced().numpy() == 6.0


def test_selu_gradient_at_zero_is_scale():
    x = tf.constant([0.0, -0.0, 1.0, -1.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.nn.selu(x)
    g = t.gradient(y, x).numpy()
    np.testing.assert_allclose(g[:3], SELU_SCALE, rtol=1e-6)
    np.testing.assert_allclose(g[3], SELU_SCALE * SELU_ALPHA * np.exp(-1.0), rtol=1e-6)


def test_integer_pow_with_a_negative_exponent_raises():
    import pytest
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative integer powers"):
        tf.constant([2, 3]) ** tf.constant([1, -1])
