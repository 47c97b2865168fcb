"""TensorFlow's tutorial "distribute/keras" (Distributed training with Keras) (tensorflow/docs,
site/en/tutorials/distribute/keras.ipynb @7c36502), run on Kiln: the notebook's code cells in order, only the import
changed (`import kiln as tf`); a cell's last bare expression, which the notebook displays, goes through `display`
(marked "Kiln:"), which prints its repr as IPython does. tensorflow_datasets is not in Kiln's environment: the
`tfds` below (marked "Kiln:") gives tfds.load('mnist', ...)'s datasets from keras.datasets.mnist (the tests point
$KILN_MNIST_DIR at a small synthetic MNIST).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/tutorials/distribute/keras.py"""


def display(value):
    if value is not None:
        print(repr(value))

# ---- cell 6
# Kiln: in place of `import tensorflow_datasets as tfds`, tfds.load(name='mnist', with_info=True,
# as_supervised=True): ({'train', 'test'} datasets of (uint8 image (28, 28, 1), int64 label)), and the info's
# split sizes.
import types
import numpy as np


def _tfds_load(name, with_info=False, as_supervised=False):
    assert name == 'mnist' and as_supervised
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
    datasets = {split: tf.data.Dataset.from_tensor_slices((x[..., None], y.astype(np.int64)))
                for split, x, y in (('train', x_train, y_train), ('test', x_test, y_test))}
    info = types.SimpleNamespace(splits={'train': types.SimpleNamespace(num_examples=len(y_train)),
                                         'test': types.SimpleNamespace(num_examples=len(y_test))})
    return (datasets, info) if with_info else datasets


tfds = types.SimpleNamespace(load=_tfds_load)
import kiln as tf

import os

# Load the TensorBoard notebook extension.

# ---- cell 7
print(tf.__version__)

# ---- cell 10
datasets, info = tfds.load(name='mnist', with_info=True, as_supervised=True)

mnist_train, mnist_test = datasets['train'], datasets['test']

# ---- cell 13
strategy = tf.distribute.MirroredStrategy()

# ---- cell 14
print('Number of devices: {}'.format(strategy.num_replicas_in_sync))

# ---- cell 17
# You can also do info.splits.total_num_examples to get the total
# number of examples in the dataset.

num_train_examples = info.splits['train'].num_examples
num_test_examples = info.splits['test'].num_examples

BUFFER_SIZE = 10000

BATCH_SIZE_PER_REPLICA = 64
BATCH_SIZE = BATCH_SIZE_PER_REPLICA * strategy.num_replicas_in_sync

# ---- cell 19
def scale(image, label):
  image = tf.cast(image, tf.float32)
  image /= 255

  return image, label

# ---- cell 21
train_dataset = mnist_train.map(scale).cache().shuffle(BUFFER_SIZE).batch(BATCH_SIZE)
eval_dataset = mnist_test.map(scale).batch(BATCH_SIZE)

# ---- cell 24
with strategy.scope():
  model = tf.keras.Sequential([
      tf.keras.layers.Conv2D(32, 3, activation='relu', input_shape=(28, 28, 1)),
      tf.keras.layers.MaxPooling2D(),
      tf.keras.layers.Flatten(),
      tf.keras.layers.Dense(64, activation='relu'),
      tf.keras.layers.Dense(10)
  ])

  model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                optimizer=tf.keras.optimizers.Adam(learning_rate=0.001),
                metrics=['accuracy'])

# ---- cell 28
# Define the checkpoint directory to store the checkpoints.
checkpoint_dir = './training_checkpoints'
# Define the name of the checkpoint files.
checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt_{epoch:04d}.weights.h5")

# ---- cell 29
# Define a function for decaying the learning rate.
# You can define any decay function you need.
def decay(epoch):
  if epoch < 3:
    return 1e-3
  elif epoch >= 3 and epoch < 7:
    return 1e-4
  else:
    return 1e-5

# ---- cell 30
# Define a callback for printing the learning rate at the end of each epoch.
class PrintLR(tf.keras.callbacks.Callback):
  def on_epoch_end(self, epoch, logs=None):
    print('\nLearning rate for epoch {} is {}'.format(epoch + 1, model.optimizer.learning_rate.numpy()))

# ---- cell 31
# Put all the callbacks together.
callbacks = [
    tf.keras.callbacks.TensorBoard(log_dir='./logs'),
    tf.keras.callbacks.ModelCheckpoint(filepath=checkpoint_prefix,
                                       save_weights_only=True),
    tf.keras.callbacks.LearningRateScheduler(decay),
    PrintLR()
]

# ---- cell 34
EPOCHS = 12

display((  # Kiln: shown, as the notebook displays it
model.fit(train_dataset, epochs=EPOCHS, callbacks=callbacks)
))

# ---- cell 36
# Check the checkpoint directory.

# ---- cell 38
import pathlib
latest_checkpoint = sorted(pathlib.Path(checkpoint_dir).glob('*'))[-1]

model.load_weights(latest_checkpoint)

eval_loss, eval_acc = model.evaluate(eval_dataset)

print('Eval loss: {}, Eval accuracy: {}'.format(eval_loss, eval_acc))

# ---- cell 40


# ---- cell 42


# ---- cell 45
path = 'my_model.keras'

# ---- cell 46
display((  # Kiln: shown, as the notebook displays it
model.save(path)
))

# ---- cell 48
unreplicated_model = tf.keras.models.load_model(path)

unreplicated_model.compile(
    loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    optimizer=tf.keras.optimizers.Adam(),
    metrics=['accuracy'])

eval_loss, eval_acc = unreplicated_model.evaluate(eval_dataset)

print('Eval loss: {}, Eval Accuracy: {}'.format(eval_loss, eval_acc))

# ---- cell 50
with strategy.scope():
  replicated_model = tf.keras.models.load_model(path)
  replicated_model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                           optimizer=tf.keras.optimizers.Adam(),
                           metrics=['accuracy'])

  eval_loss, eval_acc = replicated_model.evaluate(eval_dataset)
  print ('Eval loss: {}, Eval Accuracy: {}'.format(eval_loss, eval_acc))
