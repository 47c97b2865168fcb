"""TensorFlow's tutorial "Basic regression: Predict fuel efficiency" (tensorflow/docs, site/en/tutorials/keras/regression.ipynb @7c3650212), run on Kiln: the notebook's code cells in order, only the import changed
(`import kiln as tf`); a cell's last bare expression, which the notebook displays, goes through `display`
(marked "Kiln:"), which prints its repr as IPython does. The UCI file it downloads is replaced by a synthetic
stand-in with its format and columns (300 cars, UCI's has 398), written where `url` then points.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/tutorials/regression.py"""


def display(value):
    if value is not None:
        print(repr(value))

# ---- cell 2
#@title MIT License
#
# Copyright (c) 2017 François Chollet
#
# Permission is hereby granted, free of charge, to any person obtaining a
# copy of this software and associated documentation files (the "Software"),
# to deal in the Software without restriction, including without limitation
# the rights to use, copy, modify, merge, publish, distribute, sublicense,
# and/or sell copies of the Software, and to permit persons to whom the
# Software is furnished to do so, subject to the following conditions:
#
# The above copyright notice and this permission notice shall be included in
# all copies or substantial portions of the Software.
#
# THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
# IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
# FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL
# THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
# LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING
# FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
# DEALINGS IN THE SOFTWARE.

# ---- cell 6
# Use seaborn for pairplot.

# ---- cell 7
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

# Make NumPy printouts easier to read.
display((  # Kiln: shown, as the notebook displays it
np.set_printoptions(precision=3, suppress=True)
))

# ---- cell 8
import kiln as tf

from kiln import keras
from kiln.keras import layers

print(tf.__version__)

# ---- cell 11
# ---- Kiln: the synthetic stand-in for auto-mpg.data (whitespace-separated, '?' for a missing horsepower, the
# car's name after a tab), drawn from the real columns' ranges with fuel efficiency falling with weight and power.
import os
import tempfile


def _write_auto_mpg(path, cars=300):
    rng = np.random.default_rng(0)
    with open(path, "w") as f:
        for i in range(cars):
            cylinders = rng.choice([4, 6, 8], p=[0.5, 0.25, 0.25])
            displacement = cylinders * 45 + rng.normal(0, 15)
            horsepower = 40 + 0.3 * displacement + rng.normal(0, 8)
            weight = 1500 + 7 * displacement + rng.normal(0, 150)
            acceleration = 20 - horsepower / 30 + rng.normal(0, 1)
            year, origin = rng.integers(70, 83), rng.choice([1, 2, 3], p=[0.6, 0.2, 0.2])
            mpg = np.clip(48 - 0.006 * weight - 0.05 * horsepower + 0.6 * (year - 70) + rng.normal(0, 1.5), 9, 46)
            power = "?" if i % 50 == 7 else f"{horsepower:.1f}"
            f.write(f"{mpg:.1f}   {cylinders}   {displacement:.1f}      {power}      {weight:.1f}      "
                    f"{acceleration:.1f}   {year}  {origin}\t\"car {i}\"\n")


url = os.path.join(tempfile.mkdtemp(prefix="auto_mpg_"), "auto-mpg.data")
_write_auto_mpg(url)
# ---- Kiln: end of the stand-in
column_names = ['MPG', 'Cylinders', 'Displacement', 'Horsepower', 'Weight',
                'Acceleration', 'Model Year', 'Origin']

raw_dataset = pd.read_csv(url, names=column_names,
                          na_values='?', comment='\t',
                          sep=' ', skipinitialspace=True)

# ---- cell 12
dataset = raw_dataset.copy()
display((  # Kiln: shown, as the notebook displays it
dataset.tail()
))

# ---- cell 14
display((  # Kiln: shown, as the notebook displays it
dataset.isna().sum()
))

# ---- cell 16
dataset = dataset.dropna()

# ---- cell 18
dataset['Origin'] = dataset['Origin'].map({1: 'USA', 2: 'Europe', 3: 'Japan'})

# ---- cell 19
dataset = pd.get_dummies(dataset, columns=['Origin'], prefix='', prefix_sep='', dtype=float)
display((  # Kiln: shown, as the notebook displays it
dataset.tail()
))

# ---- cell 21
train_dataset = dataset.sample(frac=0.8, random_state=0)
test_dataset = dataset.drop(train_dataset.index)

# ---- cell 23
display((  # Kiln: shown, as the notebook displays it
sns.pairplot(train_dataset[['MPG', 'Cylinders', 'Displacement', 'Weight']], diag_kind='kde')
))

# ---- cell 25
display((  # Kiln: shown, as the notebook displays it
train_dataset.describe().transpose()
))

# ---- cell 27
train_features = train_dataset.copy()
test_features = test_dataset.copy()

train_labels = train_features.pop('MPG')
test_labels = test_features.pop('MPG')

# ---- cell 29
display((  # Kiln: shown, as the notebook displays it
train_dataset.describe().transpose()[['mean', 'std']]
))

# ---- cell 32
normalizer = tf.keras.layers.Normalization(axis=-1)

# ---- cell 34
display((  # Kiln: shown, as the notebook displays it
normalizer.adapt(np.array(train_features))
))

# ---- cell 36
print(normalizer.mean.numpy())

# ---- cell 38
first = np.array(train_features[:1])

with np.printoptions(precision=2, suppress=True):
  print('First example:', first)
  print()
  print('Normalized:', normalizer(first).numpy())

# ---- cell 42
horsepower = np.array(train_features['Horsepower'])

horsepower_normalizer = layers.Normalization(input_shape=[1,], axis=None)
display((  # Kiln: shown, as the notebook displays it
horsepower_normalizer.adapt(horsepower)
))

# ---- cell 44
horsepower_model = tf.keras.Sequential([
    horsepower_normalizer,
    layers.Dense(units=1)
])

display((  # Kiln: shown, as the notebook displays it
horsepower_model.summary()
))

# ---- cell 46
display((  # Kiln: shown, as the notebook displays it
horsepower_model.predict(horsepower[:10])
))

# ---- cell 48
display((  # Kiln: shown, as the notebook displays it
horsepower_model.compile(
    optimizer=tf.keras.optimizers.Adam(learning_rate=0.1),
    loss='mean_absolute_error')
))

# ---- cell 50
history = horsepower_model.fit(
    train_features['Horsepower'],
    train_labels,
    epochs=100,
    # Suppress logging.
    verbose=0,
    # Calculate validation results on 20% of the training data.
    validation_split = 0.2)

# ---- cell 52
hist = pd.DataFrame(history.history)
hist['epoch'] = history.epoch
display((  # Kiln: shown, as the notebook displays it
hist.tail()
))

# ---- cell 53
def plot_loss(history):
  plt.plot(history.history['loss'], label='loss')
  plt.plot(history.history['val_loss'], label='val_loss')
  plt.ylim([0, 10])
  plt.xlabel('Epoch')
  plt.ylabel('Error [MPG]')
  plt.legend()
  plt.grid(True)

# ---- cell 54
display((  # Kiln: shown, as the notebook displays it
plot_loss(history)
))

# ---- cell 56
test_results = {}

test_results['horsepower_model'] = horsepower_model.evaluate(
    test_features['Horsepower'],
    test_labels, verbose=0)

# ---- cell 58
x = tf.linspace(0.0, 250, 251)
y = horsepower_model.predict(x)

# ---- cell 59
def plot_horsepower(x, y):
  plt.scatter(train_features['Horsepower'], train_labels, label='Data')
  plt.plot(x, y, color='k', label='Predictions')
  plt.xlabel('Horsepower')
  plt.ylabel('MPG')
  plt.legend()

# ---- cell 60
display((  # Kiln: shown, as the notebook displays it
plot_horsepower(x, y)
))

# ---- cell 63
linear_model = tf.keras.Sequential([
    normalizer,
    layers.Dense(units=1)
])

# ---- cell 65
display((  # Kiln: shown, as the notebook displays it
linear_model.predict(train_features[:10])
))

# ---- cell 67
display((  # Kiln: shown, as the notebook displays it
linear_model.layers[1].kernel
))

# ---- cell 69
display((  # Kiln: shown, as the notebook displays it
linear_model.compile(
    optimizer=tf.keras.optimizers.Adam(learning_rate=0.1),
    loss='mean_absolute_error')
))

# ---- cell 70
history = linear_model.fit(
    train_features,
    train_labels,
    epochs=100,
    # Suppress logging.
    verbose=0,
    # Calculate validation results on 20% of the training data.
    validation_split = 0.2)

# ---- cell 72
display((  # Kiln: shown, as the notebook displays it
plot_loss(history)
))

# ---- cell 74
test_results['linear_model'] = linear_model.evaluate(
    test_features, test_labels, verbose=0)

# ---- cell 78
def build_and_compile_model(norm):
  model = keras.Sequential([
      norm,
      layers.Dense(64, activation='relu'),
      layers.Dense(64, activation='relu'),
      layers.Dense(1)
  ])

  model.compile(loss='mean_absolute_error',
                optimizer=tf.keras.optimizers.Adam(0.001))
  return model

# ---- cell 81
dnn_horsepower_model = build_and_compile_model(horsepower_normalizer)

# ---- cell 83
display((  # Kiln: shown, as the notebook displays it
dnn_horsepower_model.summary()
))

# ---- cell 85
history = dnn_horsepower_model.fit(
    train_features['Horsepower'],
    train_labels,
    validation_split=0.2,
    verbose=0, epochs=100)

# ---- cell 87
display((  # Kiln: shown, as the notebook displays it
plot_loss(history)
))

# ---- cell 89
x = tf.linspace(0.0, 250, 251)
y = dnn_horsepower_model.predict(x)

# ---- cell 90
display((  # Kiln: shown, as the notebook displays it
plot_horsepower(x, y)
))

# ---- cell 92
test_results['dnn_horsepower_model'] = dnn_horsepower_model.evaluate(
    test_features['Horsepower'], test_labels,
    verbose=0)

# ---- cell 95
dnn_model = build_and_compile_model(normalizer)
display((  # Kiln: shown, as the notebook displays it
dnn_model.summary()
))

# ---- cell 96
history = dnn_model.fit(
    train_features,
    train_labels,
    validation_split=0.2,
    verbose=0, epochs=100)

# ---- cell 97
display((  # Kiln: shown, as the notebook displays it
plot_loss(history)
))

# ---- cell 99
test_results['dnn_model'] = dnn_model.evaluate(test_features, test_labels, verbose=0)

# ---- cell 102
display((  # Kiln: shown, as the notebook displays it
pd.DataFrame(test_results, index=['Mean absolute error [MPG]']).T
))

# ---- cell 105
test_predictions = dnn_model.predict(test_features).flatten()

a = plt.axes(aspect='equal')
plt.scatter(test_labels, test_predictions)
plt.xlabel('True Values [MPG]')
plt.ylabel('Predictions [MPG]')
lims = [0, 50]
plt.xlim(lims)
plt.ylim(lims)
_ = plt.plot(lims, lims)

# ---- cell 107
error = test_predictions - test_labels
plt.hist(error, bins=25)
plt.xlabel('Prediction Error [MPG]')
_ = plt.ylabel('Count')

# ---- cell 109
display((  # Kiln: shown, as the notebook displays it
dnn_model.save('dnn_model.keras')
))

# ---- cell 111
reloaded = tf.keras.models.load_model('dnn_model.keras')

test_results['reloaded'] = reloaded.evaluate(
    test_features, test_labels, verbose=0)

# ---- cell 112
display((  # Kiln: shown, as the notebook displays it
pd.DataFrame(test_results, index=['Mean absolute error [MPG]']).T
))
