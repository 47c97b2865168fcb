"""Files written by real TensorFlow (tests/data/tf, see its PROVENANCE.md): TFRecord
files of tf.train.Example (plain and GZIP) and TensorBundle checkpoints read by Kiln
with the values TF wrote, restored into the same models built with Kiln; and Kiln's
own writers giving TF's bytes for the same content."""
import csv
import gzip
import pathlib

import numpy as np
import pytest

import kiln as tf
from kiln.train import _bundle, _table

DATA = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "tf"
PENGUIN_KEYS = ["culmen_length_mm", "culmen_depth_mm", "flipper_length_mm", "body_mass_g"]
PENGUIN_SPEC = dict({k: tf.io.FixedLenFeature([], tf.float32) for k in PENGUIN_KEYS},
                    species=tf.io.FixedLenFeature([], tf.int64))
VALUE = "/.ATTRIBUTES/VARIABLE_VALUE"


def penguin_records():
    return tf.data.TFRecordDataset(str(DATA / "tfx_penguin" / "data_tfrecord-00000-of-00001.gz"),
                                   compression_type="GZIP")


def penguin_batch():
    return next(iter(penguin_records().batch(1000).map(lambda r: tf.io.parse_example(r, PENGUIN_SPEC))))


# --- TFRecord ---------------------------------------------------------------------

def test_plain_record_written_by_tf_python():
    path = str(DATA / "rust_record" / "expected.tfrecord")
    assert [r.numpy() for r in tf.data.TFRecordDataset(path)] == [b"The Quick Brown Fox"]
    assert list(tf.io.tf_record_iterator(path)) == [b"The Quick Brown Fox"]


def test_kiln_writer_gives_tf_bytes(tmp_path):
    out = str(tmp_path / "fox.tfrecord")
    with tf.io.TFRecordWriter(out) as w:
        w.write(b"The Quick Brown Fox")
    assert open(out, "rb").read() == (DATA / "rust_record" / "expected.tfrecord").read_bytes()


def test_gzip_examples_are_the_csv_rows():
    """ExampleGen's GZIP file: every Example equals a row of the CSV it came from (as
    float32), with the features TF wrote and no others."""
    batch = penguin_batch()
    assert sorted(batch) == sorted(PENGUIN_KEYS + ["species"])
    assert batch["species"].shape == [100]
    assert np.bincount(batch["species"].numpy()).tolist() == [47, 22, 31]
    with open(DATA / "tfx_penguin" / "penguins_processed.csv") as f:
        rows = {tuple(np.float32(float(r[k])) for k in PENGUIN_KEYS) + (int(r["species"]),)
                for r in csv.DictReader(f)}
    got = zip(*[batch[k].numpy() for k in PENGUIN_KEYS], batch["species"].numpy())
    assert all(tuple(g[:4]) + (int(g[4]),) in rows for g in got)
    first = tf.train.Example.FromString(next(iter(penguin_records())).numpy())
    assert first.features.feature["body_mass_g"].float_list.value[0] == pytest.approx(0.2569444477558136)
    assert first.features.feature["species"].int64_list.value[:] == [0]


def test_gzip_file_rewritten_by_kiln_has_tf_framing(tmp_path):
    src = DATA / "tfx_penguin" / "data_tfrecord-00000-of-00001.gz"
    out = str(tmp_path / "copy.gz")
    with tf.io.TFRecordWriter(out, tf.io.TFRecordOptions(compression_type="GZIP")) as w:
        for record in penguin_records():
            w.write(record.numpy())
    assert gzip.decompress(open(out, "rb").read()) == gzip.decompress(src.read_bytes())


def test_plain_mnist_examples_parse_in_a_pipeline():
    spec = {"image_class": tf.io.FixedLenFeature([], tf.int64),
            "image_floats": tf.io.FixedLenFeature([784], tf.float32)}
    ds = (tf.data.TFRecordDataset(str(DATA / "tfx_mnist" / "mnist_first3.tfrecord"))
          .map(lambda r: tf.io.parse_single_example(r, spec)).batch(3))
    batch = next(iter(ds))
    assert batch["image_class"].numpy().tolist() == [9, 3, 6]
    pixels = (batch["image_floats"].numpy().astype(np.float64) + 0.5) * 255  # TFX wrote pixel / 255 - 0.5
    assert pixels.shape == (3, 784)
    assert np.allclose(pixels, np.round(pixels), atol=1e-4) and pixels.min() == 0 and pixels.max() == 255
    assert ((pixels > 0).sum(axis=1)).tolist() == [140, 168, 194]
    for record, image in zip(tf.data.TFRecordDataset(str(DATA / "tfx_mnist" / "mnist_first3.tfrecord")),
                             batch["image_floats"].numpy()):  # protobuf's own parse agrees
        proto = tf.train.Example.FromString(record.numpy()).features.feature["image_floats"]
        np.testing.assert_array_equal(np.array(proto.float_list.value, np.float32), image)
    sparse = tf.io.parse_single_example(next(iter(tf.data.TFRecordDataset(
        str(DATA / "tfx_mnist" / "mnist_first3.tfrecord")))), {"image_floats": tf.io.VarLenFeature(tf.float32)})
    assert sparse["image_floats"].dense_shape.numpy().tolist() == [784]


# --- checkpoints ------------------------------------------------------------------

def test_list_and_load_variables_of_a_tf_module():
    prefix = str(DATA / "rust_module_ckpt" / "variables")
    names = dict(tf.train.list_variables(prefix))
    assert names["w" + VALUE] == [1] and names["b" + VALUE] == [1]
    assert "_CHECKPOINTABLE_OBJECT_GRAPH" in names
    assert tf.train.load_variable(prefix, "b" + VALUE).tolist() == [0.0]  # tf.zeros([1])
    assert -1.0 <= tf.train.load_variable(prefix, "w" + VALUE)[0] <= 1.0  # random.uniform(-1, 1)
    assert tf.train.load_variable(prefix, "optimizer/learning_rate" + VALUE) == pytest.approx(0.5)
    assert tf.train.load_variable(prefix, "optimizer/iter" + VALUE) == 0
    reader = tf.train.load_checkpoint(prefix)
    assert reader.get_variable_to_dtype_map()["optimizer/iter" + VALUE] == tf.int64


def test_checkpoint_restores_a_tf_module_into_a_kiln_module():
    class LinearRegression(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(tf.zeros([1]), name="w")
            self.b = tf.Variable(tf.ones([1]), name="b")

    model = LinearRegression()
    prefix = str(DATA / "rust_module_ckpt" / "variables")
    status = tf.train.Checkpoint(model).restore(prefix)
    assert model.w.numpy() == tf.train.load_variable(prefix, "w" + VALUE)
    assert model.b.numpy().tolist() == [0.0]
    with pytest.raises(AssertionError, match="optimizer"):  # the SGD's hyperparameters stay unmatched
        status.assert_consumed()
    status.expect_partial()


def single_input_model():
    return tf.keras.Sequential([
        tf.keras.layers.Dense(5, activation="relu", kernel_initializer="random_normal", name="test_in",
                              input_dim=5),
        tf.keras.layers.Dense(5, activation="relu"),
        tf.keras.layers.Dense(1, activation="sigmoid", name="test_out")])


def test_one_adam_step_of_a_tf_keras_model_is_consistent():
    """The rust example trained one Adam step on x=[.1 .. .5], y=1: the slots are
    m = 0.1 g and v = 0.001 g^2, the step moved each weight by lr * sign(g), and undoing
    the step gives the model whose loss and accuracy the metrics recorded."""
    prefix = str(DATA / "rust_keras_ckpt" / "variables")

    def load(name):
        return tf.train.load_variable(prefix, name).astype(np.float64)

    assert load("optimizer/iter" + VALUE) == 1
    assert load("optimizer/learning_rate" + VALUE) == pytest.approx(0.001)
    x = np.array([[0.1, 0.2, 0.3, 0.4, 0.5]])
    before = []
    for i in range(3):
        layer = []
        for part in ("kernel", "bias"):
            key = f"layer_with_weights-{i}/{part}"
            m = load(f"{key}/.OPTIMIZER_SLOT/optimizer/m" + VALUE)
            v = load(f"{key}/.OPTIMIZER_SLOT/optimizer/v" + VALUE)
            g = m / 0.1
            np.testing.assert_allclose(g * g, v / 0.001, rtol=1e-4)
            layer.append(load(key + VALUE) + 0.001 * g / (np.sqrt(v / 0.001) + 1e-7))
        before.append(layer)
    hidden = x
    for kernel, bias in before[:2]:
        hidden = np.maximum(hidden @ kernel + bias, 0)
    p0 = 1 / (1 + np.exp(-(hidden @ before[2][0] + before[2][1])))[0, 0]
    assert load("keras_api/metrics/0/total" + VALUE) == pytest.approx(-np.log(p0), rel=1e-4)
    assert load("keras_api/metrics/1/total" + VALUE) == float(p0 > 0.5)
    # The first kernel's gradient is x times each unit's error: its columns scale with x.
    g0 = load("layer_with_weights-0/kernel/.OPTIMIZER_SLOT/optimizer/m" + VALUE)
    live = np.abs(g0[0]) > 0
    np.testing.assert_allclose(g0[:, live] / g0[0, live], np.tile(x.T / 0.1, (1, live.sum())), rtol=1e-5)


def test_tf_keras_checkpoint_restores_into_a_kiln_model():
    prefix = str(DATA / "rust_keras_ckpt" / "variables")
    model = single_input_model()
    tf.train.Checkpoint(model).restore(prefix).expect_partial()
    for i, layer in enumerate(model.layers):
        np.testing.assert_array_equal(layer.kernel.numpy(),
                                      tf.train.load_variable(prefix, f"layer_with_weights-{i}/kernel" + VALUE))
        np.testing.assert_array_equal(layer.bias.numpy(),
                                      tf.train.load_variable(prefix, f"layer_with_weights-{i}/bias" + VALUE))
    other = single_input_model()
    other.load_weights(prefix)
    x = np.array([[0.1, 0.2, 0.3, 0.4, 0.5]], np.float32)
    np.testing.assert_array_equal(other(x).numpy(), model(x).numpy())
    assert 0.5 < float(model(x).numpy()[0, 0]) < 0.501  # one step up from p0 ~ 0.5


def test_tfx_penguin_classifier_restored_into_kiln_classifies_tf_written_examples():
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),
                                 tf.keras.layers.Dense(8, activation="relu"),
                                 tf.keras.layers.Dense(3)])
    tf.train.Checkpoint(model).restore(str(DATA / "tfx_keras_ckpt" / "variables")).expect_partial()
    batch = penguin_batch()
    features = tf.stack([batch[k] for k in PENGUIN_KEYS], axis=1)
    predicted = np.argmax(model(features).numpy(), axis=1)
    assert (predicted == batch["species"].numpy()).mean() == pytest.approx(0.96)


@pytest.mark.parametrize("folder", ["tfx_keras_ckpt", "rust_keras_ckpt", "rust_module_ckpt"])
def test_kiln_bundle_writer_gives_tf_entries_and_index_bytes(folder, tmp_path):
    """Each tensor rewritten by Kiln has TF's entry (dtype, shape, size, masked CRC-32C,
    the object graph's string layout included), and TF's own entries laid out by Kiln's
    table builder give TF's index file byte for byte."""
    prefix = str(DATA / folder / "variables")
    theirs = _bundle.BundleReader(prefix)
    _bundle.write(str(tmp_path / "copy"), {k: theirs.get(k) for k in theirs.entries})
    ours = _bundle.BundleReader(str(tmp_path / "copy"))
    assert sorted(ours.entries) == sorted(theirs.entries)
    for key, entry in theirs.entries.items():
        mine = ours.entries[key]
        assert (mine.dtype, mine.shape, mine.size, mine.crc32c) == (entry.dtype, entry.shape, entry.size,
                                                                    entry.crc32c), key
    index = (DATA / folder / "variables.index").read_bytes()
    assert _table.build(list(_table.read(index).items())) == index


def test_kiln_checkpoint_of_the_same_model_uses_tf_keys(tmp_path):
    """The model restored from TF's file and written by Kiln has TF's keys for every
    variable the two share, with the same values, and TF's keys read back into a fresh
    Kiln model give the same predictions."""
    theirs = str(DATA / "rust_keras_ckpt" / "variables")
    model = single_input_model()
    tf.train.Checkpoint(model).restore(theirs).expect_partial()
    mine = tf.train.Checkpoint(model).write(str(tmp_path / "mine"))
    their_keys = {k for k, _ in tf.train.list_variables(theirs) if k.startswith("layer_with_weights")
                  and ".OPTIMIZER_SLOT" not in k}
    my_keys = {k for k, _ in tf.train.list_variables(mine)}
    assert len(their_keys) == 6 and their_keys <= my_keys
    for key in their_keys:
        np.testing.assert_array_equal(tf.train.load_variable(mine, key), tf.train.load_variable(theirs, key))
    fresh = single_input_model()
    tf.train.Checkpoint(fresh).read(mine).assert_existing_objects_matched()
    x = np.array([[0.1, 0.2, 0.3, 0.4, 0.5]], np.float32)
    np.testing.assert_array_equal(fresh(x).numpy(), model(x).numpy())


def test_tf1_name_based_checkpoint_restores_by_variable_name():
    """A TF 1 checkpoint (2017, no object graph): read by name, its index laid out as TF's,
    and restored by TF 2's name-based fallback (variables matched by name, with TF's warning)."""
    prefix = str(DATA / "rust_tf1_ckpt" / "variables")
    assert tf.train.list_variables(prefix) == [("b", [1]), ("w", [1])]
    w = tf.train.load_variable(prefix, "w")
    assert tf.train.load_variable(prefix, "b").tolist() == [0.0] and -1.0 <= w[0] <= 1.0
    index = (DATA / "rust_tf1_ckpt" / "variables.index").read_bytes()
    assert _table.build(list(_table.read(index).items())) == index

    class Regression(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable([5.0], name="w")
            self.b = tf.Variable([5.0], name="b")
            self.other = tf.Variable(1.0, name="other")

    model = Regression()
    with pytest.warns(UserWarning, match="name-based"):
        status = tf.train.Checkpoint(model).restore(prefix)
    assert model.w.numpy().tolist() == w.tolist() and model.b.numpy().tolist() == [0.0]
    with pytest.raises(AssertionError, match="name-based checkpoint"):
        status.assert_consumed()
    with pytest.raises(AssertionError, match="other"):
        status.assert_existing_objects_matched()
    status.expect_partial()
