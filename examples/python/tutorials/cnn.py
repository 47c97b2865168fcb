"""TensorFlow's tutorial "images/cnn" (tensorflow/docs, site/en/tutorials/images/cnn.ipynb @7c36502), run on Kiln: the notebook's code cells in order, only the import changed
(`import kiln as tf`); a cell's last bare expression, which the notebook displays, goes through `display`
(marked "Kiln:"), which prints its repr as IPython does. The data: CIFAR-10 from Keras' cache (or its origin), a
tenth of the training images and of the test images.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/tutorials/cnn.py"""


def display(value):
    if value is not None:
        print(repr(value))

# ---- cell 6
import kiln as tf

from kiln.keras import datasets, layers, models
import matplotlib.pyplot as plt

# ---- cell 8
(train_images, train_labels), (test_images, test_labels) = datasets.cifar10.load_data()
train_images, train_labels = train_images[:5000], train_labels[:5000]  # Kiln: a tenth of the data, for the tests
test_images, test_labels = test_images[:1000], test_labels[:1000]

# Normalize pixel values to be between 0 and 1
train_images, test_images = train_images / 255.0, test_images / 255.0

# ---- cell 10
class_names = ['airplane', 'automobile', 'bird', 'cat', 'deer',
               'dog', 'frog', 'horse', 'ship', 'truck']

plt.figure(figsize=(10,10))
for i in range(25):
    plt.subplot(5,5,i+1)
    plt.xticks([])
    plt.yticks([])
    plt.grid(False)
    plt.imshow(train_images[i])
    # The CIFAR labels happen to be arrays, 
    # which is why you need the extra index
    plt.xlabel(class_names[train_labels[i][0]])
display((  # Kiln: shown, as the notebook displays it
plt.show()
))

# ---- cell 13
model = models.Sequential()
model.add(layers.Conv2D(32, (3, 3), activation='relu', input_shape=(32, 32, 3)))
model.add(layers.MaxPooling2D((2, 2)))
model.add(layers.Conv2D(64, (3, 3), activation='relu'))
model.add(layers.MaxPooling2D((2, 2)))
display((  # Kiln: shown, as the notebook displays it
model.add(layers.Conv2D(64, (3, 3), activation='relu'))
))

# ---- cell 15
display((  # Kiln: shown, as the notebook displays it
model.summary()
))

# ---- cell 18
model.add(layers.Flatten())
model.add(layers.Dense(64, activation='relu'))
display((  # Kiln: shown, as the notebook displays it
model.add(layers.Dense(10))
))

# ---- cell 20
display((  # Kiln: shown, as the notebook displays it
model.summary()
))

# ---- cell 23
model.compile(optimizer='adam',
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=['accuracy'])

history = model.fit(train_images, train_labels, epochs=10, 
                    validation_data=(test_images, test_labels))

# ---- cell 25
plt.plot(history.history['accuracy'], label='accuracy')
plt.plot(history.history['val_accuracy'], label = 'val_accuracy')
plt.xlabel('Epoch')
plt.ylabel('Accuracy')
plt.ylim([0.5, 1])
plt.legend(loc='lower right')

test_loss, test_acc = model.evaluate(test_images,  test_labels, verbose=2)

# ---- cell 26
print(test_acc)
