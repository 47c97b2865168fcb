"""TensorFlow's tutorial "keras/classification" (tensorflow/docs, site/en/tutorials/keras/classification.ipynb @7c36502), run on Kiln: the notebook's code cells in order, only the import changed
(`import kiln as tf`); a cell's last bare expression, which the notebook displays, goes through `display`
(marked "Kiln:"), which prints its repr as IPython does. The data: Fashion-MNIST (Debian's copy when Keras'
cache lacks it), a tenth of it.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/tutorials/classification.py"""


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
# TensorFlow and tf.keras
import kiln as tf

# Helper libraries
import numpy as np
import matplotlib.pyplot as plt

print(tf.__version__)

# ---- cell 9
fashion_mnist = tf.keras.datasets.fashion_mnist

(train_images, train_labels), (test_images, test_labels) = fashion_mnist.load_data()
train_images, train_labels = train_images[:6000], train_labels[:6000]  # Kiln: a tenth of the data, for the tests
test_images, test_labels = test_images[:2000], test_labels[:2000]

# ---- cell 11
class_names = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat',
               'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle boot']

# ---- cell 13
display((  # Kiln: shown, as the notebook displays it
train_images.shape
))

# ---- cell 15
display((  # Kiln: shown, as the notebook displays it
len(train_labels)
))

# ---- cell 17
display((  # Kiln: shown, as the notebook displays it
train_labels
))

# ---- cell 19
display((  # Kiln: shown, as the notebook displays it
test_images.shape
))

# ---- cell 21
display((  # Kiln: shown, as the notebook displays it
len(test_labels)
))

# ---- cell 23
plt.figure()
plt.imshow(train_images[0])
plt.colorbar()
plt.grid(False)
display((  # Kiln: shown, as the notebook displays it
plt.show()
))

# ---- cell 25
train_images = train_images / 255.0

test_images = test_images / 255.0

# ---- cell 27
plt.figure(figsize=(10,10))
for i in range(25):
    plt.subplot(5,5,i+1)
    plt.xticks([])
    plt.yticks([])
    plt.grid(False)
    plt.imshow(train_images[i], cmap=plt.cm.binary)
    plt.xlabel(class_names[train_labels[i]])
display((  # Kiln: shown, as the notebook displays it
plt.show()
))

# ---- cell 30
model = tf.keras.Sequential([
    tf.keras.layers.Flatten(input_shape=(28, 28)),
    tf.keras.layers.Dense(128, activation='relu'),
    tf.keras.layers.Dense(10)
])

# ---- cell 32
display((  # Kiln: shown, as the notebook displays it
model.compile(optimizer='adam',
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=['accuracy'])
))

# ---- cell 35
display((  # Kiln: shown, as the notebook displays it
model.fit(train_images, train_labels, epochs=10)
))

# ---- cell 38
test_loss, test_acc = model.evaluate(test_images,  test_labels, verbose=2)

print('\nTest accuracy:', test_acc)

# ---- cell 41
probability_model = tf.keras.Sequential([model, 
                                         tf.keras.layers.Softmax()])

# ---- cell 42
predictions = probability_model.predict(test_images)

# ---- cell 44
display((  # Kiln: shown, as the notebook displays it
predictions[0]
))

# ---- cell 46
display((  # Kiln: shown, as the notebook displays it
np.argmax(predictions[0])
))

# ---- cell 48
display((  # Kiln: shown, as the notebook displays it
test_labels[0]
))

# ---- cell 50
def plot_image(i, predictions_array, true_label, img):
  true_label, img = true_label[i], img[i]
  plt.grid(False)
  plt.xticks([])
  plt.yticks([])

  plt.imshow(img, cmap=plt.cm.binary)

  predicted_label = np.argmax(predictions_array)
  if predicted_label == true_label:
    color = 'blue'
  else:
    color = 'red'

  plt.xlabel("{} {:2.0f}% ({})".format(class_names[predicted_label],
                                100*np.max(predictions_array),
                                class_names[true_label]),
                                color=color)

def plot_value_array(i, predictions_array, true_label):
  true_label = true_label[i]
  plt.grid(False)
  plt.xticks(range(10))
  plt.yticks([])
  thisplot = plt.bar(range(10), predictions_array, color="#777777")
  plt.ylim([0, 1])
  predicted_label = np.argmax(predictions_array)

  thisplot[predicted_label].set_color('red')
  thisplot[true_label].set_color('blue')

# ---- cell 53
i = 0
plt.figure(figsize=(6,3))
plt.subplot(1,2,1)
plot_image(i, predictions[i], test_labels, test_images)
plt.subplot(1,2,2)
plot_value_array(i, predictions[i],  test_labels)
display((  # Kiln: shown, as the notebook displays it
plt.show()
))

# ---- cell 54
i = 12
plt.figure(figsize=(6,3))
plt.subplot(1,2,1)
plot_image(i, predictions[i], test_labels, test_images)
plt.subplot(1,2,2)
plot_value_array(i, predictions[i],  test_labels)
display((  # Kiln: shown, as the notebook displays it
plt.show()
))

# ---- cell 56
# Plot the first X test images, their predicted labels, and the true labels.
# Color correct predictions in blue and incorrect predictions in red.
num_rows = 5
num_cols = 3
num_images = num_rows*num_cols
plt.figure(figsize=(2*2*num_cols, 2*num_rows))
for i in range(num_images):
  plt.subplot(num_rows, 2*num_cols, 2*i+1)
  plot_image(i, predictions[i], test_labels, test_images)
  plt.subplot(num_rows, 2*num_cols, 2*i+2)
  plot_value_array(i, predictions[i], test_labels)
plt.tight_layout()
display((  # Kiln: shown, as the notebook displays it
plt.show()
))

# ---- cell 58
# Grab an image from the test dataset.
img = test_images[1]

print(img.shape)

# ---- cell 60
# Add the image to a batch where it's the only member.
img = (np.expand_dims(img,0))

print(img.shape)

# ---- cell 62
predictions_single = probability_model.predict(img)

print(predictions_single)

# ---- cell 63
plot_value_array(1, predictions_single[0], test_labels)
_ = plt.xticks(range(10), class_names, rotation=45)
display((  # Kiln: shown, as the notebook displays it
plt.show()
))

# ---- cell 65
display((  # Kiln: shown, as the notebook displays it
np.argmax(predictions_single[0])
))
