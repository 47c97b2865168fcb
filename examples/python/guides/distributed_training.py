"""TensorFlow's guide "distributed_training" (Distributed training with TensorFlow) (tensorflow/docs,
site/en/guide/distributed_training.ipynb @7c36502), run on Kiln: the notebook's code cells in order, only the import
changed (`import kiln as tf`); a cell's last bare expression, which the notebook displays, goes through `display`
(marked "Kiln:"), which prints its repr as IPython does. The guide's GPU and multi-worker cells run as written: Kiln
makes MirroredStrategy(devices=['/gpu:0', '/gpu:1']) as TF does on a machine without GPUs (with a warning; it would
refuse to run, one replica per process), MultiWorkerMirroredStrategy outside mpirun is one worker, and NCCL is
accepted (MPI does the work).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/guides/distributed_training.py"""


def display(value):
    if value is not None:
        print(repr(value))

# ---- cell 6
import kiln as tf

# ---- cell 9
mirrored_strategy = tf.distribute.MirroredStrategy()

# ---- cell 11
mirrored_strategy = tf.distribute.MirroredStrategy(devices=["/gpu:0", "/gpu:1"])

# ---- cell 13
mirrored_strategy = tf.distribute.MirroredStrategy(
    cross_device_ops=tf.distribute.HierarchicalCopyAllReduce())

# ---- cell 16
strategy = tf.distribute.MultiWorkerMirroredStrategy()

# ---- cell 18
communication_options = tf.distribute.experimental.CommunicationOptions(
    implementation=tf.distribute.experimental.CommunicationImplementation.NCCL)
strategy = tf.distribute.MultiWorkerMirroredStrategy(
    communication_options=communication_options)

# ---- cell 23
central_storage_strategy = tf.distribute.experimental.CentralStorageStrategy()

# ---- cell 28
default_strategy = tf.distribute.get_strategy()

# ---- cell 30
# In optimizer or other library code
# Get currently active strategy
strategy = tf.distribute.get_strategy()
display((  # Kiln: shown, as the notebook displays it
strategy.reduce("SUM", 1., axis=None)  # reduce some values
))

# ---- cell 32
if tf.config.list_physical_devices('GPU'):
  strategy = tf.distribute.MirroredStrategy()
else:  # Use the Default Strategy
  strategy = tf.distribute.get_strategy()

with strategy.scope():
  # Do something interesting
  print(tf.Variable(1.))

# ---- cell 36
mirrored_strategy = tf.distribute.MirroredStrategy()

with mirrored_strategy.scope():
  model = tf.keras.Sequential([
      tf.keras.layers.Dense(1, input_shape=(1,),
                            kernel_regularizer=tf.keras.regularizers.L2(1e-4))])
  model.compile(loss='mse', optimizer='sgd')

# ---- cell 38
dataset = tf.data.Dataset.from_tensors(([1.], [1.])).repeat(100).batch(10)
model.fit(dataset, epochs=2)
display((  # Kiln: shown, as the notebook displays it
model.evaluate(dataset)
))

# ---- cell 40
import numpy as np

inputs, targets = np.ones((100, 1)), np.ones((100, 1))
display((  # Kiln: shown, as the notebook displays it
model.fit(inputs, targets, epochs=2, batch_size=10)
))

# ---- cell 42
display((  # Kiln: shown, as the notebook displays it
mirrored_strategy.num_replicas_in_sync
))

# ---- cell 43
# Compute a global batch size using a number of replicas.
BATCH_SIZE_PER_REPLICA = 5
global_batch_size = (BATCH_SIZE_PER_REPLICA *
                     mirrored_strategy.num_replicas_in_sync)
dataset = tf.data.Dataset.from_tensors(([1.], [1.])).repeat(100)
dataset = dataset.batch(global_batch_size)

LEARNING_RATES_BY_BATCH_SIZE = {5: 0.1, 10: 0.15, 20:0.175}
learning_rate = LEARNING_RATES_BY_BATCH_SIZE[global_batch_size]

# ---- cell 47
with mirrored_strategy.scope():
  model = tf.keras.Sequential([
      tf.keras.layers.Dense(1, input_shape=(1,),
                            kernel_regularizer=tf.keras.regularizers.L2(1e-4))])
  optimizer = tf.keras.optimizers.SGD()

# ---- cell 49
dataset = tf.data.Dataset.from_tensors(([1.], [1.])).repeat(1000).batch(
    global_batch_size)
dist_dataset = mirrored_strategy.experimental_distribute_dataset(dataset)

# ---- cell 51
# Sets `reduction=NONE` to leave it to tf.nn.compute_average_loss() below.
loss_object = tf.keras.losses.BinaryCrossentropy(
  from_logits=True,
  reduction=tf.keras.losses.Reduction.NONE)

def train_step(inputs):
  features, labels = inputs

  with tf.GradientTape() as tape:
    predictions = model(features, training=True)
    per_example_loss = loss_object(labels, predictions)
    loss = tf.nn.compute_average_loss(per_example_loss)
    model_losses = model.losses
    if model_losses:
      loss += tf.nn.scale_regularization_loss(tf.add_n(model_losses))

  gradients = tape.gradient(loss, model.trainable_variables)
  optimizer.apply_gradients(zip(gradients, model.trainable_variables))
  return loss

@tf.function
def distributed_train_step(dist_inputs):
  per_replica_losses = mirrored_strategy.run(train_step, args=(dist_inputs,))
  return mirrored_strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses,
                         axis=None)

# ---- cell 54
for dist_inputs in dist_dataset:
  print(distributed_train_step(dist_inputs))

# ---- cell 56
iterator = iter(dist_dataset)
for _ in range(10):
  print(distributed_train_step(next(iterator)))
