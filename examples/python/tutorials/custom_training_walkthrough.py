"""TensorFlow's tutorial "Custom training: walkthrough" (the penguin classifier), run on Kiln.

Provenance: tensorflow/docs, site/en/tutorials/customization/custom_training_walkthrough.ipynb, commit
7c3650212740204359d4ceae481abc79345541be (its code cells, in order). Only the import differs (`import kiln as
tf`), except for what needs packages Kiln's environment lacks: `tfds.load("penguins/processed", ...)` is replaced
by `load_penguins()`, which gives datasets of the same element types (4 float32 features scaled to [0, 1], an
int64 species label; 3 synthetic clusters, 330 penguins), and the pandas previews and matplotlib plots are left out.
Cells that show a value print it.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/tutorials/custom_training_walkthrough.py"""
import os
import kiln as tf
import numpy as np

print("TensorFlow version: {}".format(tf.__version__))


def load_penguins():
    """(test, train) datasets of (features, label), as tfds.load("penguins/processed", split=['train[:20%]',
    'train[20%:]'], as_supervised=True) gives them: culmen length, culmen depth, flipper length, body mass."""
    rng = np.random.default_rng(0)
    centers = np.array([[0.3, 0.7, 0.3, 0.3], [0.6, 0.7, 0.4, 0.3], [0.5, 0.3, 0.8, 0.7]], "float32")
    labels = rng.integers(0, 3, 330)
    features = np.clip(centers[labels] + rng.normal(0, 0.06, (330, 4)), 0, 1).astype("float32")
    ds = tf.data.Dataset.from_tensor_slices((features, labels.astype("int64")))
    return [ds.take(66), ds.skip(66)]


class_names = ['Adélie', 'Chinstrap', 'Gentoo']

ds_split = load_penguins()

ds_test = ds_split[0]
ds_train = ds_split[1]
assert isinstance(ds_test, tf.data.Dataset)

ds_train_batch = ds_train.batch(32)

features, labels = next(iter(ds_train_batch))

print(features)
print(labels)

model = tf.keras.Sequential([
  tf.keras.layers.Dense(10, activation=tf.nn.relu, input_shape=(4,)),  # input shape required
  tf.keras.layers.Dense(10, activation=tf.nn.relu),
  tf.keras.layers.Dense(3)
])

predictions = model(features)
print(predictions[:5])

print(tf.nn.softmax(predictions[:5]))

print("Prediction: {}".format(tf.math.argmax(predictions, axis=1)))
print("    Labels: {}".format(labels))

loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def loss(model, x, y, training):
  # training=training is needed only if there are layers with different
  # behavior during training versus inference (e.g. Dropout).
  y_ = model(x, training=training)

  return loss_object(y_true=y, y_pred=y_)


l = loss(model, features, labels, training=False)
print("Loss test: {}".format(l))


def grad(model, inputs, targets):
  with tf.GradientTape() as tape:
    loss_value = loss(model, inputs, targets, training=True)
  return loss_value, tape.gradient(loss_value, model.trainable_variables)


optimizer = tf.keras.optimizers.SGD(learning_rate=0.01)

loss_value, grads = grad(model, features, labels)

print("Step: {}, Initial Loss: {}".format(optimizer.iterations.numpy(),
                                          loss_value.numpy()))

optimizer.apply_gradients(zip(grads, model.trainable_variables))

print("Step: {},         Loss: {}".format(optimizer.iterations.numpy(),
                                          loss(model, features, labels, training=True).numpy()))

## Note: Rerunning this cell uses the same model parameters

# Keep results for plotting
train_loss_results = []
train_accuracy_results = []

num_epochs = 201

for epoch in range(num_epochs):
  epoch_loss_avg = tf.keras.metrics.Mean()
  epoch_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

  # Training loop - using batches of 32
  for x, y in ds_train_batch:
    # Optimize the model
    loss_value, grads = grad(model, x, y)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

    # Track progress
    epoch_loss_avg.update_state(loss_value)  # Add current batch loss
    # Compare predicted label to actual label
    # training=True is needed only if there are layers with different
    # behavior during training versus inference (e.g. Dropout).
    epoch_accuracy.update_state(y, model(x, training=True))

  # End epoch
  train_loss_results.append(epoch_loss_avg.result())
  train_accuracy_results.append(epoch_accuracy.result())

  if epoch % 50 == 0:
    print("Epoch {:03d}: Loss: {:.3f}, Accuracy: {:.3%}".format(epoch,
                                                                epoch_loss_avg.result(),
                                                                epoch_accuracy.result()))

test_accuracy = tf.keras.metrics.Accuracy()
ds_test_batch = ds_test.batch(10)

for (x, y) in ds_test_batch:
  # training=False is needed only if there are layers with different
  # behavior during training versus inference (e.g. Dropout).
  logits = model(x, training=False)
  prediction = tf.math.argmax(logits, axis=1, output_type=tf.int64)
  test_accuracy(prediction, y)

print("Test set accuracy: {:.3%}".format(test_accuracy.result()))

print(tf.stack([y,prediction],axis=1))

predict_dataset = tf.convert_to_tensor([
    [0.3, 0.8, 0.4, 0.5,],
    [0.4, 0.1, 0.8, 0.5,],
    [0.7, 0.9, 0.8, 0.4]
])

# training=False is needed only if there are layers with different
# behavior during training versus inference (e.g. Dropout).
predictions = model(predict_dataset, training=False)

for i, logits in enumerate(predictions):
  class_idx = tf.math.argmax(logits).numpy()
  p = tf.nn.softmax(logits)[class_idx]
  name = class_names[class_idx]
  print("Example {} prediction: {} ({:4.1f}%)".format(i, name, 100*p))
