"""TensorFlow's guide "random_numbers" (tensorflow/docs, site/en/guide/random_numbers.ipynb @7c36502), run on
Kiln: the notebook's code cells in order, only the import changed (`import kiln as tf`); a cell's last bare
expression, which the notebook displays, goes through `display` (marked "Kiln:"), which prints its repr as
IPython does.

Omitted cells: 32, 35, 37, 45-47, 49-51 (tf.distribute.MirroredStrategy) and 54-56 (a SavedModel of a generator
under MirroredStrategy): they run two or three replicas on virtual CPUs, and Kiln runs one replica per process.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/guides/random_numbers.py"""


def display(value):
    if value is not None:
        print(repr(value))

# ---- cell 6
import kiln as tf

# Creates some virtual devices (cpu:0, cpu:1, etc.) for using distribution strategy
physical_devices = tf.config.list_physical_devices("CPU")
display((  # Kiln: shown, as the notebook displays it
tf.config.experimental.set_virtual_device_configuration(
    physical_devices[0], [
        tf.config.experimental.VirtualDeviceConfiguration(),
        tf.config.experimental.VirtualDeviceConfiguration(),
        tf.config.experimental.VirtualDeviceConfiguration()
    ])
))

# ---- cell 8
g1 = tf.random.Generator.from_seed(1)
print(g1.normal(shape=[2, 3]))
g2 = tf.random.get_global_generator()
print(g2.normal(shape=[2, 3]))

# ---- cell 10
g1 = tf.random.Generator.from_seed(1, alg='philox')
print(g1.normal(shape=[2, 3]))

# ---- cell 12
g = tf.random.Generator.from_non_deterministic_state()
print(g.normal(shape=[2, 3]))

# ---- cell 14
g = tf.random.Generator.from_seed(1)
print(g.normal([]))
print(g.normal([]))
g.reset_from_seed(1)
print(g.normal([]))

# ---- cell 16
g = tf.random.Generator.from_seed(1)
print(g.normal([]))
new_gs = g.split(3)
for new_g in new_gs:
  print(new_g.normal([]))
print(g.normal([]))

# ---- cell 18
with tf.device("cpu"):  # change "cpu" to the device you want
  g = tf.random.get_global_generator().split(1)[0]  
  print(g.normal([]))  # use of g won't cause cross-device copy, unlike the global generator

# ---- cell 22
g = tf.random.Generator.from_seed(1)
@tf.function
def foo():
  return g.normal([])
print(foo())

# ---- cell 25
g = None
@tf.function
def foo():
  global g
  if g is None:
    g = tf.random.Generator.from_seed(1)
  return g.normal([])
print(foo())
print(foo())

# ---- cell 27
num_traces = 0
@tf.function
def foo(g):
  global num_traces
  num_traces += 1
  return g.normal([])
foo(tf.random.Generator.from_seed(1))
foo(tf.random.Generator.from_seed(2))
print(num_traces)

# ---- cell 29
num_traces = 0
@tf.function
def foo(v):
  global num_traces
  num_traces += 1
  return v.read_value()
foo(tf.Variable(1))
foo(tf.Variable(2))
print(num_traces)

# ---- cell 41
filename = "./checkpoint"
g = tf.random.Generator.from_seed(1)
cp = tf.train.Checkpoint(generator=g)
print(g.normal([]))

# ---- cell 42
cp.write(filename)
print("RNG stream from saving point:")
print(g.normal([]))
print(g.normal([]))

# ---- cell 43
cp.restore(filename)
print("RNG stream from restoring point:")
print(g.normal([]))
print(g.normal([]))

# ---- cell 59
print(tf.random.stateless_normal(shape=[2, 3], seed=[1, 2]))
print(tf.random.stateless_normal(shape=[2, 3], seed=[1, 2]))
