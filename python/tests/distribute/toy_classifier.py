"""The small two-class problem and Keras classifier the tf.distribute tests train."""
import numpy as np

import kiln as tf


def toy_data(n=48, features=4):
    """n rows of `features` uniform floats, labelled by whether their sum passes half the maximum."""
    x = np.random.RandomState(0).rand(n, features).astype(np.float32)
    return x, (x.sum(axis=1) > features / 2).astype(np.int32)


def toy_model(features=4, hidden=6, learning_rate=0.01):
    model = tf.keras.Sequential([tf.keras.layers.Dense(hidden, activation="relu", input_shape=(features,)),
                                 tf.keras.layers.Dense(2)])
    model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model
