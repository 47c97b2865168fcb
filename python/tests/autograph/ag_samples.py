"""One small function per converter: test_converters.py checks each one's to_code
output against golden/<name>.txt and runs it eagerly and traced."""
import kiln as tf


def if_else(x):
    if x > 0:
        x = x * x
    else:
        x = 0
    return x


def if_elif_else(x):
    if x > 10:
        y = x - 10
    elif x > 0:
        y = x
    else:
        y = -x
    return y


def if_without_else(x):
    y = x
    if x < 0:
        y = -x
    return y


def while_loop(x):
    while tf.reduce_sum(x) > 1:
        x = tf.tanh(x)
    return x


def for_range(n):
    s = 0
    for i in tf.range(n):
        s += i
    return s


def for_break(n):
    s = 0
    for i in tf.range(n):
        if s > 10:
            break
        s += i
    return s


def while_continue(n):
    i = 0
    s = 0
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        s += i
    return s


def return_in_if(x):
    if x > 0:
        return x * 2
    return -x


def return_in_loop(xs):
    for x in xs:
        if x > 2:
            return x
    return -1


def logical(x, y):
    a = x > 0 and y > 0
    b = x > 0 or y > 0
    c = not x > 0
    return a, b, c


def conditional_expression(x):
    return x * 2 if x > 0 else -x


def assert_statement(x):
    assert x > 0, "x must be positive"
    return x + 1


def helper(x):
    if x > 0:
        return x
    return -x


def calls(x):
    y = helper(x)
    return tf.abs(y) + len([1, 2])


def nested_function(x):
    def inner(v):
        if v > 0:
            v = v + 1
        return v
    return inner(x) + (lambda u: u * 2 if u > 0 else u)(x)


def loop_options(n):
    v = tf.constant([0])
    for i in tf.range(n):
        tf.autograph.experimental.set_loop_options(shape_invariants=[(v, tf.TensorShape([None]))])
        v = tf.concat([v, [i]], 0)
    return v


def for_else(n):
    found = 0
    for i in tf.range(n):
        if i == 3:
            found = 1
            break
    else:
        found = -1
    return found
