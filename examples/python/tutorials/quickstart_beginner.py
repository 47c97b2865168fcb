"""TensorFlow's tutorial "TensorFlow 2 quickstart for beginners", run on Kiln.

Provenance: tensorflow/docs, site/en/tutorials/quickstart/beginner.ipynb, commit
7c3650212740204359d4ceae481abc79345541be (its code cells, in order). Only the import differs (`import kiln as
tf`); the cells that show a value in the notebook (`predictions`, `probability_model(x_test[:5])`, ...) print it.
`tf.keras.datasets.mnist.load_data()` reads the IDX files that `bash scripts/mnist_data.sh` writes to data/mnist
(or those in $KILN_MNIST_DIR; the tests point it at small synthetic ones).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/tutorials/quickstart_beginner.py"""
import kiln as tf
print("TensorFlow version:", tf.__version__)

mnist = tf.keras.datasets.mnist

(x_train, y_train), (x_test, y_test) = mnist.load_data()
x_train, x_test = x_train / 255.0, x_test / 255.0

model = tf.keras.models.Sequential([
  tf.keras.layers.Flatten(input_shape=(28, 28)),
  tf.keras.layers.Dense(128, activation='relu'),
  tf.keras.layers.Dropout(0.2),
  tf.keras.layers.Dense(10)
])

predictions = model(x_train[:1]).numpy()
print(repr(predictions))

print(repr(tf.nn.softmax(predictions).numpy()))

loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

print(repr(loss_fn(y_train[:1], predictions).numpy()))

model.compile(optimizer='adam',
              loss=loss_fn,
              metrics=['accuracy'])

model.fit(x_train, y_train, epochs=5)

print(model.evaluate(x_test,  y_test, verbose=2))

probability_model = tf.keras.Sequential([
  model,
  tf.keras.layers.Softmax()
])

print(probability_model(x_test[:5]))
