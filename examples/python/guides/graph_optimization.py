"""TensorFlow's guide "TensorFlow graph optimization with Grappler" (tensorflow/docs, site/en/guide/graph_optimization.ipynb @7c3650212), run on Kiln: the notebook's code cells in order, only the import changed
(`import kiln as tf`); a cell's last bare expression, which the notebook displays, goes through `display`
(marked "Kiln:"), which prints its repr as IPython does. The constant matrix is 32x32 instead of 2000x2000
(Kiln folds results of up to 1024 elements).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/guides/graph_optimization.py"""


def display(value):
    if value is not None:
        print(repr(value))

# ---- cell 7
import numpy as np
import timeit
import traceback
import contextlib


import kiln as tf

# ---- cell 9
@contextlib.contextmanager
def options(options):
  old_opts = tf.config.optimizer.get_experimental_options()
  tf.config.optimizer.set_experimental_options(options)
  try:
    yield
  finally:
    tf.config.optimizer.set_experimental_options(old_opts)

# ---- cell 12
def test_function_1():
  @tf.function
  def simple_function(input_arg):
    print('Tracing!')
    a = tf.constant(np.random.randn(32,32), dtype = tf.float32)  # Kiln: 2000x2000 in the guide
    c = a
    for n in range(50):
      c = c@a
    return tf.reduce_mean(c+input_arg)

  return simple_function

# ---- cell 14
with options({'constant_folding': False}):
  print(tf.config.optimizer.get_experimental_options())
  simple_function = test_function_1()
  # Trace once
  x = tf.constant(2.2)
  simple_function(x)
  print("Vanilla execution:", timeit.timeit(lambda: simple_function(x), number = 1), "s")

# ---- cell 16
with options({'constant_folding': True}):
  print(tf.config.optimizer.get_experimental_options())
  simple_function = test_function_1()
  # Trace once
  x = tf.constant(2.2)
  simple_function(x)
  print("Constant folded execution:", timeit.timeit(lambda: simple_function(x), number = 1), "s")

# ---- cell 18
def test_function_2():
  @tf.function
  def simple_func(input_arg):
    output = input_arg
    tf.debugging.check_numerics(output, "Bad!")
    return output
  return simple_func

# ---- cell 20
test_func = test_function_2()
p1 = tf.constant(float('inf'))
try:
  test_func(p1)
except tf.errors.InvalidArgumentError as e:
  traceback.print_exc(limit=2)

# ---- cell 23
with options({'debug_stripper': True}):
  test_func2 = test_function_2()
  p1 = tf.constant(float('inf'))
  try:
    test_func2(p1)
  except tf.errors.InvalidArgumentError as e:
    traceback.print_exc(limit=2)
