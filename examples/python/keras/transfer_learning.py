"""keras.io's guide "Transfer learning & fine-tuning" (tf.keras, Keras 2), run on Kiln.

Provenance: keras-team/keras-io, guides/transfer_learning.py, commit 0a57de48c864d63b80083820e8988368ee5c3149 (its
code, prose left out; `import kiln as tf; from kiln import keras`). The first half (the `trainable` API) is the
guide's code. The end-to-end example needs ImageNet weights and the cats-vs-dogs dataset, which Kiln cannot
download: here the base is `keras.applications.ResNet50(weights=None)` (the guide's Xception is not in Kiln;
ResNet's identity shortcuts carry a signal through random weights) on 32x32 synthetic two-class images (bright
top halves against bright bottom halves), with the guide's steps unchanged: augmentation, Rescaling, the frozen
base called with `training=False`, a new top, then fine-tuning of the whole model at a low learning rate.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/keras/transfer_learning.py"""
import numpy as np
import kiln as tf
from kiln import keras

# ---- Freezing layers: understanding the `trainable` attribute (the guide's code) ------------------------------

layer = keras.layers.Dense(3)
layer.build((None, 4))  # Create the weights

print("weights:", len(layer.weights))
print("trainable_weights:", len(layer.trainable_weights))
print("non_trainable_weights:", len(layer.non_trainable_weights))

layer = keras.layers.BatchNormalization()
layer.build((None, 4))  # Create the weights

print("weights:", len(layer.weights))
print("trainable_weights:", len(layer.trainable_weights))
print("non_trainable_weights:", len(layer.non_trainable_weights))

layer = keras.layers.Dense(3)
layer.build((None, 4))  # Create the weights
layer.trainable = False  # Freeze the layer

print("weights:", len(layer.weights))
print("trainable_weights:", len(layer.trainable_weights))
print("non_trainable_weights:", len(layer.non_trainable_weights))

# Make a model with 2 layers
layer1 = keras.layers.Dense(3, activation="relu")
layer2 = keras.layers.Dense(3, activation="sigmoid")
model = keras.Sequential([keras.Input(shape=(3,)), layer1, layer2])

# Freeze the first layer
layer1.trainable = False

# Keep a copy of the weights of layer1 for later reference
initial_layer1_weights_values = layer1.get_weights()

# Train the model
model.compile(optimizer="adam", loss="mse")
model.fit(np.random.random((2, 3)), np.random.random((2, 3)))

# Check that the weights of layer1 have not changed during training
final_layer1_weights_values = layer1.get_weights()
np.testing.assert_allclose(initial_layer1_weights_values[0], final_layer1_weights_values[0])
np.testing.assert_allclose(initial_layer1_weights_values[1], final_layer1_weights_values[1])

inner_model = keras.Sequential(
    [
        keras.Input(shape=(3,)),
        keras.layers.Dense(3, activation="relu"),
        keras.layers.Dense(3, activation="relu"),
    ]
)

model = keras.Sequential(
    [
        keras.Input(shape=(3,)),
        inner_model,
        keras.layers.Dense(3, activation="sigmoid"),
    ]
)

model.trainable = False  # Freeze the outer model

assert inner_model.trainable == False  # All layers in `model` are now frozen  # noqa: E712
assert inner_model.layers[0].trainable == False  # `trainable` is propagated recursively  # noqa: E712

# ---- The end-to-end example, on synthetic images ---------------------------------------------------------------

keras.utils.set_random_seed(7)
rng = np.random.default_rng(7)


def synthetic_images(n):
    """32x32 RGB images in [0, 255]: label 1 has a brighter top half, label 0 a brighter bottom half."""
    labels = rng.integers(0, 2, n)
    images = rng.uniform(0, 120, (n, 32, 32, 3))
    for image, label in zip(images, labels):
        half = image[:16] if label else image[16:]
        half += 120
    return images.astype("float32"), labels.astype("float32")


x_train, y_train = synthetic_images(96)
x_val, y_val = synthetic_images(32)
train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(16)
validation_ds = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(16)

data_augmentation = keras.Sequential([keras.layers.RandomFlip("horizontal"), keras.layers.RandomRotation(0.1)])

base_model = keras.applications.ResNet50(
    weights=None,  # the guide loads ImageNet weights here
    input_shape=(32, 32, 3),
    include_top=False,
)

# Freeze the base_model
base_model.trainable = False

# Create new model on top
inputs = keras.Input(shape=(32, 32, 3))
x = data_augmentation(inputs)  # Apply random data augmentation

# Pre-trained weights require that input be scaled from (0, 255) to a range of (-1., +1.)
scale_layer = keras.layers.Rescaling(scale=1 / 127.5, offset=-1)
x = scale_layer(x)

# The base model contains batchnorm layers. We want to keep them in inference mode
# when we unfreeze the base model for fine-tuning, so we make sure that the
# base_model is running in inference mode here.
x = base_model(x, training=False)
x = keras.layers.GlobalAveragePooling2D()(x)
x = keras.layers.Dropout(0.2)(x)  # Regularize with dropout
outputs = keras.layers.Dense(1)(x)
model = keras.Model(inputs, outputs)

model.summary()

model.compile(
    optimizer=keras.optimizers.Adam(),
    loss=keras.losses.BinaryCrossentropy(from_logits=True),
    metrics=[keras.metrics.BinaryAccuracy()],
)

epochs = 20
frozen_bn = base_model.get_layer("conv1_bn").get_weights()
model.fit(train_ds, epochs=epochs, validation_data=validation_ds, verbose=2)
# The frozen base did not move, its BatchNormalization statistics included.
for before, after in zip(frozen_bn, base_model.get_layer("conv1_bn").get_weights()):
    np.testing.assert_array_equal(before, after)
print("frozen base unchanged: True")

# Unfreeze the base_model. Note that it keeps running in inference mode
# since we passed `training=False` when calling it. This means that
# the batchnorm layers will not update their batch statistics.
base_model.trainable = True
model.summary()

model.compile(
    optimizer=keras.optimizers.Adam(1e-5),  # Low learning rate
    loss=keras.losses.BinaryCrossentropy(from_logits=True),
    metrics=[keras.metrics.BinaryAccuracy()],
)

epochs = 3  # the guide's 10, shortened: each epoch trains all of ResNet50
conv_before = base_model.get_layer("conv1_conv").get_weights()[0]
model.fit(train_ds, epochs=epochs, validation_data=validation_ds, verbose=2)
moving_mean = base_model.get_layer("conv1_bn").get_weights()[2]
conv_after = base_model.get_layer("conv1_conv").get_weights()[0]
print("fine-tuning moved the base:", not np.array_equal(conv_before, conv_after))
print("batchnorm statistics kept (training=False):", np.array_equal(moving_mean, frozen_bn[2]))
loss, accuracy = model.evaluate(validation_ds, verbose=0)
print(f"validation accuracy: {accuracy:.2f}")
