"""keras.io's example "Simple MNIST convnet" (Keras 2 / tf.keras), run on Kiln.

Provenance: keras-team/keras-io, examples/vision/mnist_convnet.py, commit
02cfe8063b505adc073986c91729f22039f77ad0 (its code, prose left out). Only the import differs (`from kiln import
keras`); for a small offline run, synthetic digits of MNIST's shapes and dtypes (uint8 28x28 images, uint8
labels; each class a bright block at its own place on noise) replace `keras.datasets.mnist.load_data()`
(1,200 + 300 samples), and 3 epochs replace 15.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/keras/mnist_convnet.py"""
import numpy as np
from kiln import keras
from kiln.keras import layers


from synthetic_data import mnist_like  # noqa: E402 - the download's stand-in


def load_data():
    """MNIST's arrays, synthetic (synthetic_data.py beside this file)."""
    return mnist_like(1200, 300)


# Model / data parameters
num_classes = 10
input_shape = (28, 28, 1)

# Load the data and split it between train and test sets
(x_train, y_train), (x_test, y_test) = load_data()

# Scale images to the [0, 1] range
x_train = x_train.astype("float32") / 255
x_test = x_test.astype("float32") / 255
# Make sure images have shape (28, 28, 1)
x_train = np.expand_dims(x_train, -1)
x_test = np.expand_dims(x_test, -1)
print("x_train shape:", x_train.shape)
print(x_train.shape[0], "train samples")
print(x_test.shape[0], "test samples")


# convert class vectors to binary class matrices
y_train = keras.utils.to_categorical(y_train, num_classes)
y_test = keras.utils.to_categorical(y_test, num_classes)

model = keras.Sequential(
    [
        keras.Input(shape=input_shape),
        layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Flatten(),
        layers.Dropout(0.5),
        layers.Dense(num_classes, activation="softmax"),
    ]
)

model.summary()

batch_size = 128
epochs = 3  # the example trains 15

model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])

model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, validation_split=0.1)

score = model.evaluate(x_test, y_test, verbose=0)
print("Test loss:", score[0])
print("Test accuracy:", score[1])
