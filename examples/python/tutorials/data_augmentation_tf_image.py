"""TensorFlow's tutorial "Data augmentation", its `tf.image` parts, run on Kiln.

Provenance: tensorflow/docs, site/en/tutorials/images/data_augmentation.ipynb, commit
7c3650212740204359d4ceae481abc79345541be: the cells of "Data augmentation using tf.image" (from `visualize` to
the `augment` pipeline over `tf.data.experimental.Counter`), in order. Only the import differs (`import kiln as
tf`), and the data: tf_flowers (a download) becomes a few synthetic 240 x 320 RGB "flowers" of uint8 pixels,
and `visualize`, which plotted with matplotlib, prints each pair's shape, dtype and mean instead. The
`tf.random.Generator` variant at the notebook's end is left out (Kiln has no tf.random.Generator).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/tutorials/data_augmentation_tf_image.py"""
import numpy as np

import kiln as tf


def synthetic_flowers(count, seed):
    """uint8 [240, 320, 3] images: smooth colour waves with a bright disc (the 'flower'), and labels 0..4."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:240, 0:320].astype(np.float64)
    images = []
    for _ in range(count):
        fy, fx, phase = rng.uniform(0.01, 0.05, 3)
        cy, cx, r = rng.uniform(60, 180), rng.uniform(80, 240), rng.uniform(20, 50)
        waves = [np.sin(fy * y + fx * x + phase + k) for k in (0.0, 2.0, 4.0)]
        image = 0.5 + 0.35 * np.stack(waves, axis=-1)
        image[(y - cy) ** 2 + (x - cx) ** 2 < r * r] = [0.95, 0.85, 0.2]
        images.append(np.round(image * 255).astype(np.uint8))
    return np.stack(images), rng.integers(0, 5, count)


train_images, train_labels = synthetic_flowers(8, seed=0)
val_images, val_labels = synthetic_flowers(4, seed=1)
train_datasets = tf.data.Dataset.from_tensor_slices((train_images, train_labels))
val_ds = tf.data.Dataset.from_tensor_slices((val_images, val_labels))
test_ds = tf.data.Dataset.from_tensor_slices((val_images, val_labels))
train_ds = train_datasets

image, label = next(iter(train_ds))


def visualize(original, augmented):
  print("Original image", original.shape, original.dtype.name, round(float(tf.reduce_mean(
      tf.cast(original, tf.float32))), 4), "| Augmented image", augmented.shape, augmented.dtype.name,
      round(float(tf.reduce_mean(tf.cast(augmented, tf.float32))), 4))


flipped = tf.image.flip_left_right(image)
visualize(image, flipped)

grayscaled = tf.image.rgb_to_grayscale(image)
visualize(image, tf.squeeze(grayscaled))

saturated = tf.image.adjust_saturation(image, 3)
visualize(image, saturated)

bright = tf.image.adjust_brightness(image, 0.4)
visualize(image, bright)

cropped = tf.image.central_crop(image, central_fraction=0.5)
visualize(image, cropped)

rotated = tf.image.rot90(image)
visualize(image, rotated)

for i in range(3):
  seed = (i, 0)  # tuple of size (2,)
  stateless_random_brightness = tf.image.stateless_random_brightness(
      image, max_delta=0.95, seed=seed)
  visualize(image, stateless_random_brightness)

for i in range(3):
  seed = (i, 0)  # tuple of size (2,)
  stateless_random_contrast = tf.image.stateless_random_contrast(
      image, lower=0.1, upper=0.9, seed=seed)
  visualize(image, stateless_random_contrast)

for i in range(3):
  seed = (i, 0)  # tuple of size (2,)
  stateless_random_crop = tf.image.stateless_random_crop(
      image, size=[210, 300, 3], seed=seed)
  visualize(image, stateless_random_crop)

IMG_SIZE = 180
batch_size = 4
AUTOTUNE = tf.data.AUTOTUNE


def resize_and_rescale(image, label):
  image = tf.cast(image, tf.float32)
  image = tf.image.resize(image, [IMG_SIZE, IMG_SIZE])
  image = (image / 255.0)
  return image, label


def augment(image_label, seed):
  image, label = image_label
  image, label = resize_and_rescale(image, label)
  image = tf.image.resize_with_crop_or_pad(image, IMG_SIZE + 6, IMG_SIZE + 6)
  # Make a new seed.
  new_seed = tf.random.split(seed, num=1)[0, :]
  # Random crop back to the original size.
  image = tf.image.stateless_random_crop(
      image, size=[IMG_SIZE, IMG_SIZE, 3], seed=seed)
  # Random brightness.
  image = tf.image.stateless_random_brightness(
      image, max_delta=0.5, seed=new_seed)
  image = tf.clip_by_value(image, 0, 1)
  return image, label


# Create a `Counter` object and `Dataset.zip` it together with the training set.
counter = tf.data.experimental.Counter()
train_ds = tf.data.Dataset.zip((train_datasets, (counter, counter)))

train_ds = (
    train_ds
    .shuffle(1000)
    .map(augment, num_parallel_calls=AUTOTUNE)
    .batch(batch_size)
    .prefetch(AUTOTUNE)
)

val_ds = (
    val_ds
    .map(resize_and_rescale, num_parallel_calls=AUTOTUNE)
    .batch(batch_size)
    .prefetch(AUTOTUNE)
)

test_ds = (
    test_ds
    .map(resize_and_rescale, num_parallel_calls=AUTOTUNE)
    .batch(batch_size)
    .prefetch(AUTOTUNE)
)

for name, ds in (("train", train_ds), ("val", val_ds), ("test", test_ds)):
  for images, labels in ds:
    print(name, "batch", images.shape, images.dtype.name, "min", round(float(tf.reduce_min(images)), 4),
          "max", round(float(tf.reduce_max(images)), 4), "labels", labels.shape)
