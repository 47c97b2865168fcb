"""TensorFlow's guide "tf.data: Build TensorFlow input pipelines", run on Kiln.

Provenance: tensorflow/docs, site/en/guide/data.ipynb, commit 7c3650212740204359d4ceae481abc79345541be (its code
cells, in order). Only the import differs (`import kiln as tf`). Left out: the cells that need packages Kiln's
environment lacks (pandas, matplotlib, scipy: the DataFrame and plot cells, the image-rotation ones),
and the image sections (ImageDataGenerator, decode_jpeg: no flower photos here).
The FSNS test file the TFRecord cells download is a stand-in of 12 Examples with the features they read.
The files the guide downloads with tf.keras.utils.get_file (the Iliad translations, titanic's train.csv,
creditcard.zip, Fashion-MNIST) are written first, small and synthetic, into a Keras cache in a temporary
$KERAS_HOME, so get_file finds them there and the guide's own lines run unchanged. Cells that show a value
print it; `%%writefile missing.csv` is a plain file write.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/guides/data.py"""
import gzip
import os
import tempfile
import zipfile

import numpy as np


def prepare_keras_cache():
    """Stand-ins for the downloads, in $KERAS_HOME/datasets as get_file keeps them."""
    home = tempfile.mkdtemp(prefix="keras_home_")
    os.environ["KERAS_HOME"] = home
    datasets = os.path.join(home, "datasets")
    os.makedirs(os.path.join(datasets, "fashion-mnist"))
    rng = np.random.default_rng(0)
    words = "sing goddess the wrath of achilles peleus son that brought countless ills upon the achaeans".split()
    for name in ("cowper.txt", "derby.txt", "butler.txt"):
        with open(os.path.join(datasets, name), "w") as f:
            for i in range(40):
                f.write(f"{name[:-4]} {i}: " + " ".join(rng.choice(words, 6)) + "\n")
    with open(os.path.join(datasets, "train.csv"), "w") as f:
        f.write("survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone\n")
        for i in range(627):
            f.write(f"{i % 3 % 2},{'male' if i % 2 else 'female'},{20 + i % 40}.0,{i % 3},{i % 2},"
                    f"{7.25 + i % 50:.4f},{['First', 'Second', 'Third'][i % 3]},{'unknown' if i % 4 else 'C'},"
                    f"{['Southampton', 'Cherbourg'][i % 2]},{'y' if i % 3 else 'n'}\n")
    rows = ["Time," + ",".join(f"V{i}" for i in range(1, 29)) + ",Amount,Class"]
    for i in range(3000):
        positive = int(rng.random() < 0.02)
        values = rng.normal(positive, 1.0, 28)
        rows.append(f"{float(i)}," + ",".join(f"{v:.6f}" for v in values) + f",{rng.uniform(0, 200):.2f},{positive}")
    with zipfile.ZipFile(os.path.join(datasets, "creditcard.zip"), "w") as z:
        z.writestr("creditcard.csv", "\n".join(rows) + "\n")
    for prefix, n in (("train", 600), ("t10k", 100)):
        labels = rng.integers(0, 10, n).astype(np.uint8)
        images = rng.integers(0, 80, (n, 28, 28)).astype(np.uint8)
        for i, k in enumerate(labels):
            images[i, 2 + 2 * k] = 255
        with gzip.open(os.path.join(datasets, "fashion-mnist", f"{prefix}-labels-idx1-ubyte.gz"), "wb") as f:
            f.write(b"\0\0\x08\x01" + n.to_bytes(4, "big") + labels.tobytes())
        with gzip.open(os.path.join(datasets, "fashion-mnist", f"{prefix}-images-idx3-ubyte.gz"), "wb") as f:
            f.write(b"\0\0\x08\x03" + n.to_bytes(4, "big") + (28).to_bytes(4, "big") * 2 + images.tobytes())
    write_fsns_stand_in(os.path.join(datasets, "fsns.tfrec"))
    os.chdir(tempfile.mkdtemp(prefix="data_guide_"))  # missing.csv and /tmp/my_ckpt's stand-in go here


def write_fsns_stand_in(path):
    """12 tf.train.Examples shaped like FSNS's test file: a PNG street-sign strip and its text."""
    import kiln
    names = ["Rue Perreyon", "Avenue Foch", "Rue de la Paix", "Quai Voltaire"]
    with kiln.io.TFRecordWriter(path) as writer:
        for i in range(12):
            pixels = np.full((15, 60, 3), 40 * (i % 6), np.uint8)
            feature = {
                "image/encoded": kiln.train.Feature(bytes_list=kiln.train.BytesList(
                    value=[kiln.image.encode_png(pixels).numpy()])),
                "image/format": kiln.train.Feature(bytes_list=kiln.train.BytesList(value=[b"PNG"])),
                "image/text": kiln.train.Feature(bytes_list=kiln.train.BytesList(
                    value=[names[i % len(names)].encode()])),
                "image/width": kiln.train.Feature(int64_list=kiln.train.Int64List(value=[60])),
            }
            example = kiln.train.Example(features=kiln.train.Features(feature=feature))
            writer.write(example.SerializeToString())


prepare_keras_cache()

# ---- the guide -------------------------------------------------------------------------------
import kiln as tf

import pathlib
import os
import numpy as np

np.set_printoptions(precision=4)

dataset = tf.data.Dataset.from_tensor_slices([8, 3, 0, 8, 2, 1])
print(dataset)

for elem in dataset:
  print(elem.numpy())

it = iter(dataset)

print(next(it).numpy())

print(dataset.reduce(0, lambda state, value: state + value).numpy())

dataset1 = tf.data.Dataset.from_tensor_slices(tf.random.uniform([4, 10]))

print(dataset1.element_spec)

dataset2 = tf.data.Dataset.from_tensor_slices(
   (tf.random.uniform([4]),
    tf.random.uniform([4, 100], maxval=100, dtype=tf.int32)))

print(dataset2.element_spec)

dataset3 = tf.data.Dataset.zip((dataset1, dataset2))

print(dataset3.element_spec)

# Dataset containing a sparse tensor.
dataset4 = tf.data.Dataset.from_tensors(tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4]))

print(dataset4.element_spec)

# Use value_type to see the type of value represented by the element spec
print(dataset4.element_spec.value_type)

dataset1 = tf.data.Dataset.from_tensor_slices(
    tf.random.uniform([4, 10], minval=1, maxval=10, dtype=tf.int32))

print(dataset1)

for z in dataset1:
  print(z.numpy())

dataset2 = tf.data.Dataset.from_tensor_slices(
   (tf.random.uniform([4]),
    tf.random.uniform([4, 100], maxval=100, dtype=tf.int32)))

print(dataset2)

dataset3 = tf.data.Dataset.zip((dataset1, dataset2))

print(dataset3)

for a, (b,c) in dataset3:
  print('shapes: {a.shape}, {b.shape}, {c.shape}'.format(a=a, b=b, c=c))

train, test = tf.keras.datasets.fashion_mnist.load_data()

images, labels = train
images = images/255

dataset = tf.data.Dataset.from_tensor_slices((images, labels))
print(dataset)


def count(stop):
  i = 0
  while i<stop:
    yield i
    i += 1


for n in count(5):
  print(n)

ds_counter = tf.data.Dataset.from_generator(count, args=[25], output_types=tf.int32, output_shapes = (), )

for count_batch in ds_counter.repeat().batch(10).take(10):
  print(count_batch.numpy())


def gen_series():
  i = 0
  while True:
    size = np.random.randint(0, 10)
    yield i, np.random.normal(size=(size,))
    i += 1


for i, series in gen_series():
  print(i, ":", str(series))
  if i > 5:
    break

ds_series = tf.data.Dataset.from_generator(
    gen_series,
    output_types=(tf.int32, tf.float32),
    output_shapes=((), (None,)))

print(ds_series)

ds_series_batch = ds_series.shuffle(20).padded_batch(10)

ids, sequence_batch = next(iter(ds_series_batch))
print(ids.numpy())
print()
print(sequence_batch.numpy())

# Creates a dataset that reads all of the examples from two files.
fsns_test_file = tf.keras.utils.get_file("fsns.tfrec", "https://storage.googleapis.com/download.tensorflow.org/data/fsns-20160927/testdata/fsns-00000-of-00001")

dataset = tf.data.TFRecordDataset(filenames = [fsns_test_file])
print(dataset)

raw_example = next(iter(dataset))
parsed = tf.train.Example.FromString(raw_example.numpy())

print(parsed.features.feature['image/text'])

directory_url = 'https://storage.googleapis.com/download.tensorflow.org/data/illiad/'
file_names = ['cowper.txt', 'derby.txt', 'butler.txt']

file_paths = [
    tf.keras.utils.get_file(file_name, directory_url + file_name)
    for file_name in file_names
]

dataset = tf.data.TextLineDataset(file_paths)

for line in dataset.take(5):
  print(line.numpy())

files_ds = tf.data.Dataset.from_tensor_slices(file_paths)
lines_ds = files_ds.interleave(tf.data.TextLineDataset, cycle_length=3)

for i, line in enumerate(lines_ds.take(9)):
  if i % 3 == 0:
    print()
  print(line.numpy())

titanic_file = tf.keras.utils.get_file("train.csv", "https://storage.googleapis.com/tf-datasets/titanic/train.csv")
titanic_lines = tf.data.TextLineDataset(titanic_file)

for line in titanic_lines.take(10):
  print(line.numpy())


def survived(line):
  return tf.not_equal(tf.strings.substr(line, 0, 1), "0")


survivors = titanic_lines.skip(1).filter(survived)

for line in survivors.take(10):
  print(line.numpy())

titanic_file = tf.keras.utils.get_file("train.csv", "https://storage.googleapis.com/tf-datasets/titanic/train.csv")

titanic_batches = tf.data.experimental.make_csv_dataset(
    titanic_file, batch_size=4,
    label_name="survived")

for feature_batch, label_batch in titanic_batches.take(1):
  print("'survived': {}".format(label_batch))
  print("features:")
  for key, value in feature_batch.items():
    print("  {!r:20s}: {}".format(key, value))

titanic_batches = tf.data.experimental.make_csv_dataset(
    titanic_file, batch_size=4,
    label_name="survived", select_columns=['class', 'fare', 'survived'])

for feature_batch, label_batch in titanic_batches.take(1):
  print("'survived': {}".format(label_batch))
  for key, value in feature_batch.items():
    print("  {!r:20s}: {}".format(key, value))

titanic_types  = [tf.int32, tf.string, tf.float32, tf.int32, tf.int32, tf.float32, tf.string, tf.string, tf.string, tf.string]
dataset = tf.data.experimental.CsvDataset(titanic_file, titanic_types , header=True)

for line in dataset.take(10):
  print([item.numpy() for item in line])

with open("missing.csv", "w") as f:  # %%writefile missing.csv
  f.write("1,2,3,4\n,2,3,4\n1,,3,4\n1,2,,4\n1,2,3,\n,,,\n")

# Creates a dataset that reads all of the records from two CSV files, each with
# four float columns which may have missing values.

record_defaults = [999,999,999,999]
dataset = tf.data.experimental.CsvDataset("missing.csv", record_defaults)
dataset = dataset.map(lambda *items: tf.stack(items))
print(dataset)

for line in dataset:
  print(line.numpy())

# Creates a dataset that reads all of the records from two CSV files with
# headers, extracting float data from columns 2 and 4.
record_defaults = [999, 999] # Only provide defaults for the selected columns
dataset = tf.data.experimental.CsvDataset("missing.csv", record_defaults, select_cols=[1, 3])
dataset = dataset.map(lambda *items: tf.stack(items))
print(dataset)

for line in dataset:
  print(line.numpy())

inc_dataset = tf.data.Dataset.range(100)
dec_dataset = tf.data.Dataset.range(0, -100, -1)
dataset = tf.data.Dataset.zip((inc_dataset, dec_dataset))
batched_dataset = dataset.batch(4)

for batch in batched_dataset.take(4):
  print([arr.numpy() for arr in batch])

print(batched_dataset)

batched_dataset = dataset.batch(7, drop_remainder=True)
print(batched_dataset)

dataset = tf.data.Dataset.range(100)
dataset = dataset.map(lambda x: tf.fill([tf.cast(x, tf.int32)], x))
dataset = dataset.padded_batch(4, padded_shapes=(None,))

for batch in dataset.take(2):
  print(batch.numpy())
  print()

titanic_file = tf.keras.utils.get_file("train.csv", "https://storage.googleapis.com/tf-datasets/titanic/train.csv")
titanic_lines = tf.data.TextLineDataset(titanic_file)

epochs = 3
dataset = titanic_lines.batch(128)

for epoch in range(epochs):
  for batch in dataset:
    print(batch.shape)
  print("End of epoch: ", epoch)

lines = tf.data.TextLineDataset(titanic_file)
counter = tf.data.experimental.Counter()

dataset = tf.data.Dataset.zip((counter, lines))
dataset = dataset.shuffle(buffer_size=100)
dataset = dataset.batch(20)
print(dataset)

n,line_batch = next(iter(dataset))
print(n.numpy())

dataset = tf.data.Dataset.zip((counter, lines))
shuffled = dataset.shuffle(buffer_size=100).batch(10).repeat(2)

print("Here are the item ID's near the epoch boundary:\n")
for n, line_batch in shuffled.skip(60).take(5):
  print(n.numpy())

dataset = tf.data.Dataset.zip((counter, lines))
shuffled = dataset.repeat(2).shuffle(buffer_size=100).batch(10)

print("Here are the item ID's near the epoch boundary:\n")
for n, line_batch in shuffled.skip(55).take(15):
  print(n.numpy())

fsns_test_file = tf.keras.utils.get_file("fsns.tfrec", "https://storage.googleapis.com/download.tensorflow.org/data/fsns-20160927/testdata/fsns-00000-of-00001")
dataset = tf.data.TFRecordDataset(filenames = [fsns_test_file])
print(dataset)

raw_example = next(iter(dataset))

def tf_parse(eg):
  example = tf.io.parse_example(
      eg[tf.newaxis], {
          'image/encoded': tf.io.FixedLenFeature(shape=(), dtype=tf.string),
          'image/text': tf.io.FixedLenFeature(shape=(), dtype=tf.string)
      })
  return example['image/encoded'][0], example['image/text'][0]

img, txt = tf_parse(raw_example)
print(txt.numpy())
print(repr(img.numpy()[:20]), "...")

decoded = dataset.map(tf_parse)
print(decoded)

image_batch, text_batch = next(iter(decoded.batch(10)))
print(image_batch.shape)

range_ds = tf.data.Dataset.range(100000)

batches = range_ds.batch(10, drop_remainder=True)

for batch in batches.take(5):
  print(batch.numpy())


def dense_1_step(batch):
  # Shift features and labels one step relative to each other.
  return batch[:-1], batch[1:]


predict_dense_1_step = batches.map(dense_1_step)

for features, label in predict_dense_1_step.take(3):
  print(features.numpy(), " => ", label.numpy())

batches = range_ds.batch(15, drop_remainder=True)


def label_next_5_steps(batch):
  return (batch[:-5],   # Inputs: All except the last 5 steps
          batch[-5:])   # Labels: The last 5 steps


predict_5_steps = batches.map(label_next_5_steps)

for features, label in predict_5_steps.take(3):
  print(features.numpy(), " => ", label.numpy())

feature_length = 10
label_length = 3

features = range_ds.batch(feature_length, drop_remainder=True)
labels = range_ds.batch(feature_length).skip(1).map(lambda labels: labels[:label_length])

predicted_steps = tf.data.Dataset.zip((features, labels))

for features, label in predicted_steps.take(5):
  print(features.numpy(), " => ", label.numpy())

window_size = 5

windows = range_ds.window(window_size, shift=1)
for sub_ds in windows.take(5):
  print(sub_ds)

for x in windows.flat_map(lambda x: x).take(30):
  print(x.numpy(), end=' ')
print()


def sub_to_batch(sub):
  return sub.batch(window_size, drop_remainder=True)


for example in windows.flat_map(sub_to_batch).take(5):
  print(example.numpy())


def make_window_dataset(ds, window_size=5, shift=1, stride=1):
  windows = ds.window(window_size, shift=shift, stride=stride)

  def sub_to_batch(sub):
    return sub.batch(window_size, drop_remainder=True)

  windows = windows.flat_map(sub_to_batch)
  return windows


ds = make_window_dataset(range_ds, window_size=10, shift = 5, stride=3)

for example in ds.take(10):
  print(example.numpy())

dense_labels_ds = ds.map(dense_1_step)

for inputs,labels in dense_labels_ds.take(3):
  print(inputs.numpy(), "=>", labels.numpy())

zip_path = tf.keras.utils.get_file(
    origin='https://storage.googleapis.com/download.tensorflow.org/data/creditcard.zip',
    fname='creditcard.zip',
    extract=True)

csv_path = zip_path.replace('.zip', '.csv')

creditcard_ds = tf.data.experimental.make_csv_dataset(
    csv_path, batch_size=1024, label_name="Class",
    # Set the column types: 30 floats and an int.
    column_defaults=[float()]*30+[int()])


def count(counts, batch):
  features, labels = batch
  class_1 = labels == 1
  class_1 = tf.cast(class_1, tf.int32)

  class_0 = labels == 0
  class_0 = tf.cast(class_0, tf.int32)

  counts['class_0'] += tf.reduce_sum(class_0)
  counts['class_1'] += tf.reduce_sum(class_1)

  return counts


counts = creditcard_ds.take(10).reduce(
    initial_state={'class_0': 0, 'class_1': 0},
    reduce_func = count)

counts = np.array([counts['class_0'].numpy(),
                   counts['class_1'].numpy()]).astype(np.float32)

fractions = counts/counts.sum()
print(fractions)

negative_ds = (
  creditcard_ds
    .unbatch()
    .filter(lambda features, label: label==0)
    .repeat())
positive_ds = (
  creditcard_ds
    .unbatch()
    .filter(lambda features, label: label==1)
    .repeat())

for features, label in positive_ds.batch(10).take(1):
  print(label.numpy())

balanced_ds = tf.data.Dataset.sample_from_datasets(
    [negative_ds, positive_ds], [0.5, 0.5]).batch(10)

for features, labels in balanced_ds.take(10):
  print(labels.numpy())


def class_func(features, label):
  return label


resample_ds = (
    creditcard_ds
    .unbatch()
    .rejection_resample(class_func, target_dist=[0.5,0.5],
                        initial_dist=fractions)
    .batch(10))

balanced_ds = resample_ds.map(lambda extra_label, features_and_label: features_and_label)

for features, labels in balanced_ds.take(10):
  print(labels.numpy())

range_ds = tf.data.Dataset.range(20)

iterator = iter(range_ds)
ckpt = tf.train.Checkpoint(step=tf.Variable(0), iterator=iterator)
manager = tf.train.CheckpointManager(ckpt, '/tmp/my_ckpt', max_to_keep=3)

print([next(iterator).numpy() for _ in range(5)])

save_path = manager.save()

print([next(iterator).numpy() for _ in range(5)])

ckpt.restore(manager.latest_checkpoint)

print([next(iterator).numpy() for _ in range(5)])

train, test = tf.keras.datasets.fashion_mnist.load_data()

images, labels = train
images = images/255.0
labels = labels.astype(np.int32)

fmnist_train_ds = tf.data.Dataset.from_tensor_slices((images, labels))
fmnist_train_ds = fmnist_train_ds.shuffle(5000).batch(32)

model = tf.keras.Sequential([
  tf.keras.layers.Flatten(),
  tf.keras.layers.Dense(10)
])

model.compile(optimizer='adam',
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=['accuracy'])

model.fit(fmnist_train_ds, epochs=2)

model.fit(fmnist_train_ds.repeat(), epochs=2, steps_per_epoch=20)

loss, accuracy = model.evaluate(fmnist_train_ds)
print("Loss :", loss)
print("Accuracy :", accuracy)

loss, accuracy = model.evaluate(fmnist_train_ds.repeat(), steps=10)
print("Loss :", loss)
print("Accuracy :", accuracy)

predict_ds = tf.data.Dataset.from_tensor_slices(images).batch(32)
result = model.predict(predict_ds, steps = 10)
print(result.shape)

result = model.predict(fmnist_train_ds, steps = 10)
print(result.shape)
