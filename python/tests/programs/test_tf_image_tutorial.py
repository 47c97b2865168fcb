"""TensorFlow's "Data augmentation" tutorial, its tf.image parts (examples/python/tutorials/
data_augmentation_tf_image.py), on synthetic flowers: it runs to the end in its own process, and, run again in
this one, each augmented image is checked against NumPy float64 computations of TF's formulas."""
import colorsys
import os
import re
import runpy

import numpy as np
import pytest

import kiln as tf
from keras_util import REPO, run_example

EXAMPLE = os.path.join(REPO, "examples", "python", "tutorials", "data_augmentation_tf_image.py")


def test_runs_and_prints_the_batches():
    out = run_example("tutorials", "data_augmentation_tf_image.py")
    pairs = re.findall(r"^Original image \(240, 320, 3\) uint8 [\d.]+ \| Augmented image (\([\d, ]+\)) uint8",
                       out, re.M)
    assert pairs == ["(240, 320, 3)", "(240, 320)", "(240, 320, 3)", "(240, 320, 3)", "(120, 160, 3)",
                     "(320, 240, 3)"] + ["(240, 320, 3)"] * 6 + ["(210, 300, 3)"] * 3
    batches = re.findall(r"^(train|val|test) batch \(4, 180, 180, 3\) float32 min ([\d.]+) max ([\d.]+)", out, re.M)
    assert [b[0] for b in batches] == ["train", "train", "val", "test"]
    assert all(0.0 <= float(lo) <= float(hi) <= 1.0 for _, lo, hi in batches)


@pytest.fixture(scope="module")
def program():
    return runpy.run_path(EXAMPLE, run_name="tutorial")


def test_each_augmentation_matches_numpy(program):
    image = program["image"].numpy()
    f = image.astype(np.float64) / 255.0
    np.testing.assert_array_equal(program["flipped"].numpy(), image[:, ::-1])
    np.testing.assert_array_equal(program["rotated"].numpy(), np.rot90(image, 1, axes=(0, 1)))
    np.testing.assert_array_equal(program["cropped"].numpy(), image[60:180, 80:240])
    gray = (f @ [0.2989, 0.5870, 0.1140]) * 255.5
    assert np.abs(program["grayscaled"].numpy()[..., 0].astype(int) - gray.astype(int)).max() <= 1
    bright = np.clip((f + 0.4) * 255.5, 0, 255).astype(np.uint8)
    assert np.abs(program["bright"].numpy().astype(int) - bright).max() <= 1
    hsv = np.array([colorsys.rgb_to_hsv(*p) for p in f.reshape(-1, 3)])
    hsv[:, 1] = np.clip(hsv[:, 1] * 3, 0, 1)
    saturated = np.array([colorsys.hsv_to_rgb(*p) for p in hsv]).reshape(image.shape)
    assert np.abs(program["saturated"].numpy().astype(int) - np.clip(saturated * 255.5, 0, 255).astype(int)).max() <= 1


def test_stateless_ops_repeat_for_a_seed(program):
    image = program["image"]
    crop = tf.image.stateless_random_crop(image, size=[210, 300, 3], seed=(2, 0)).numpy()
    np.testing.assert_array_equal(crop, program["stateless_random_crop"].numpy())
    full = image.numpy()
    assert any(np.array_equal(crop, full[i:i + 210, j:j + 300]) for i in range(31) for j in range(21))
    bright = tf.image.stateless_random_brightness(image, max_delta=0.95, seed=(2, 0)).numpy()
    np.testing.assert_array_equal(bright, program["stateless_random_brightness"].numpy())
    contrast = program["stateless_random_contrast"].numpy().astype(np.float64)
    # (x - mean) * factor + mean per channel: the factor is the same for every pixel and channel
    x = full.astype(np.float64) / 255
    centred = x - x.mean(axis=(0, 1))
    factor = np.median(((contrast + 0.5) / 255.5 - x.mean(axis=(0, 1)))[np.abs(centred) > 0.2] /
                       centred[np.abs(centred) > 0.2])
    assert 0.1 <= factor <= 0.9


def test_augment_pipeline_functions(program):
    image, label = program["train_images"][0], program["train_labels"][0]
    out, out_label = program["augment"]((tf.constant(image), tf.constant(label)), tf.constant([3, 3], tf.int64))
    assert out.shape == (180, 180, 3) and out.dtype == tf.float32 and int(out_label) == label
    again, _ = program["augment"]((tf.constant(image), tf.constant(label)), tf.constant([3, 3], tf.int64))
    np.testing.assert_array_equal(out.numpy(), again.numpy())
    resized, _ = program["resize_and_rescale"](tf.constant(image), label)
    expect = tf.image.resize(image.astype(np.float32), [180, 180]).numpy() / 255.0
    np.testing.assert_allclose(resized.numpy(), expect, rtol=1e-6)
