"""TensorFlow's tutorial "Load CSV data", its tf.data parts, run on Kiln.

Provenance: tensorflow/docs, site/en/tutorials/load_data/csv.ipynb, commit
7c3650212740204359d4ceae481abc79345541be: its code cells from "Using tf.data / From a single file" to the end,
in order. Only the import differs (`import kiln as tf`). Left out: the cells before, which build pandas
DataFrames (pandas is not in Kiln's environment), the matplotlib plot, and `%%time` (the cells run without it);
the last fonts cell shows `fonts_dict` itself instead of `pd.DataFrame(fonts_dict)`. The three downloads are
written first as small synthetic stand-ins with the real files' columns: titanic's train.csv (in a temporary
$KERAS_HOME), Metro_Interstate_Traffic_Volume.csv.gz (600 rows) and fonts.zip (5 fonts of 30 glyphs, 412
columns), where get_file keeps them, so its lines run unchanged. Cells that show a value print it. The file is
csv_data.py, not csv.py, which would shadow Python's csv module.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/tutorials/load_data/csv_data.py"""
import gzip
import os
import tempfile
import zipfile

import numpy as np


def prepare_downloads():
    rng = np.random.default_rng(0)
    home = tempfile.mkdtemp(prefix="keras_home_")
    os.environ["KERAS_HOME"] = home
    os.makedirs(os.path.join(home, "datasets"))
    with open(os.path.join(home, "datasets", "train.csv"), "w") as f:
        f.write("survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone\n")
        for i in range(627):
            f.write(f"{i % 3 % 2},{'male' if i % 2 else 'female'},{20 + i % 40}.0,{i % 3},{i % 2},"
                    f"{7.25 + i % 50:.4f},{['First', 'Second', 'Third'][i % 3]},{'unknown' if i % 4 else 'C'},"
                    f"{['Southampton', 'Cherbourg'][i % 2]},{'y' if i % 3 else 'n'}\n")
    os.chdir(tempfile.mkdtemp(prefix="csv_tutorial_"))  # get_file(cache_dir='.') puts traffic/ and fonts/ here
    os.makedirs("traffic")
    rows = ["holiday,temp,rain_1h,snow_1h,clouds_all,weather_main,weather_description,date_time,traffic_volume"]
    for i in range(600):
        weather = ["Clouds", "Clear", "Rain"][i % 3]
        rows.append(f"{'None' if i % 24 else 'Columbus Day'},{rng.uniform(260, 300):.2f},{rng.uniform(0, 2):.2f},"
                    f"0.0,{rng.integers(0, 100)},{weather},{weather.lower()} sky,"
                    f"2012-10-{2 + i // 24:02d} {i % 24:02d}:00:00,{rng.integers(200, 7000)}")
    with gzip.open(os.path.join("traffic", "Metro_Interstate_Traffic_Volume.csv.gz"), "wt") as f:
        f.write("\n".join(rows) + "\n")
    os.makedirs("fonts")
    header = ("font,fontVariant,m_label,strength,italic,orientation,m_top,m_left,originalH,originalW,h,w,"
              + ",".join(f"r{r}c{c}" for r in range(20) for c in range(20)))
    with zipfile.ZipFile(os.path.join("fonts", "fonts.zip"), "w") as z:
        for font in ("AGENCY", "ARIAL", "BAITI", "CALIBRI", "COURIER"):
            lines = [header]
            for glyph in range(30):
                pixels = ",".join(str(v) for v in rng.integers(1, 256, 400))
                lines.append(f"{font},{font.lower()} regular,{65 + glyph},0.4,0,0.0,{glyph},{2 * glyph},"
                             f"{20 + glyph},{10 + glyph},20,20,{pixels}")
            z.writestr(f"{font}.csv", "\n".join(lines) + "\n")


prepare_downloads()

# ---- the tutorial ----------------------------------------------------------------------------
import kiln as tf

np.set_printoptions(precision=3, suppress=True)

titanic_file_path = tf.keras.utils.get_file("train.csv", "https://storage.googleapis.com/tf-datasets/titanic/train.csv")

titanic_csv_ds = tf.data.experimental.make_csv_dataset(
    titanic_file_path,
    batch_size=5, # Artificially small to make examples easier to show.
    label_name='survived',
    num_epochs=1,
    ignore_errors=True,)

for batch, label in titanic_csv_ds.take(1):
  for key, value in batch.items():
    print(f"{key:20s}: {value}")
  print()
  print(f"{'label':20s}: {label}")

traffic_volume_csv_gz = tf.keras.utils.get_file(
    'Metro_Interstate_Traffic_Volume.csv.gz', 
    "https://archive.ics.uci.edu/ml/machine-learning-databases/00492/Metro_Interstate_Traffic_Volume.csv.gz",
    cache_dir='.', cache_subdir='traffic')

traffic_volume_csv_gz_ds = tf.data.experimental.make_csv_dataset(
    traffic_volume_csv_gz,
    batch_size=256,
    label_name='traffic_volume',
    num_epochs=1,
    compression_type="GZIP")

for batch, label in traffic_volume_csv_gz_ds.take(1):
  for key, value in batch.items():
    print(f"{key:20s}: {value[:5]}")
  print()
  print(f"{'label':20s}: {label[:5]}")

for i, (batch, label) in enumerate(traffic_volume_csv_gz_ds.repeat(20)):
  if i % 40 == 0:
    print('.', end='')
print()

caching = traffic_volume_csv_gz_ds.cache().shuffle(1000)

for i, (batch, label) in enumerate(caching.shuffle(1000).repeat(20)):
  if i % 40 == 0:
    print('.', end='')
print()

snapshotting = traffic_volume_csv_gz_ds.snapshot('titanic.tfsnap').shuffle(1000)

for i, (batch, label) in enumerate(snapshotting.shuffle(1000).repeat(20)):
  if i % 40 == 0:
    print('.', end='')
print()

fonts_zip = tf.keras.utils.get_file(
    'fonts.zip',  "https://archive.ics.uci.edu/ml/machine-learning-databases/00417/fonts.zip",
    cache_dir='.', cache_subdir='fonts',
    extract=True)

import pathlib
font_csvs =  sorted(str(p) for p in pathlib.Path('fonts').glob("*.csv"))

print(font_csvs[:10])

print(len(font_csvs))

fonts_ds = tf.data.experimental.make_csv_dataset(
    file_pattern = "fonts/*.csv",
    batch_size=10, num_epochs=1,
    num_parallel_reads=20,
    shuffle_buffer_size=10000)

for features in fonts_ds.take(1):
  for i, (name, value) in enumerate(features.items()):
    if i>15:
      break
    print(f"{name:20s}: {value}")
print('...')
print(f"[total: {len(features)} features]")

import re

def make_images(features):
  image = [None]*400
  new_feats = {}

  for name, value in features.items():
    match = re.match('r(\d+)c(\d+)', name)
    if match:
      image[int(match.group(1))*20+int(match.group(2))] = value
    else:
      new_feats[name] = value

  image = tf.stack(image, axis=0)
  image = tf.reshape(image, [20, 20, -1])
  new_feats['image'] = image

  return new_feats

fonts_image_ds = fonts_ds.map(make_images)

for features in fonts_image_ds.take(1):
  break

print(features['image'].shape)

text = pathlib.Path(titanic_file_path).read_text()
lines = text.split('\n')[1:-1]

all_strings = [str()]*10
print(all_strings)

features = tf.io.decode_csv(lines, record_defaults=all_strings) 

for f in features:
  print(f"type: {f.dtype.name}, shape: {f.shape}")

print(lines[0])

titanic_types = [int(), str(), float(), int(), int(), float(), str(), str(), str(), str()]
print(titanic_types)

features = tf.io.decode_csv(lines, record_defaults=titanic_types) 

for f in features:
  print(f"type: {f.dtype.name}, shape: {f.shape}")

simple_titanic = tf.data.experimental.CsvDataset(titanic_file_path, record_defaults=titanic_types, header=True)

for example in simple_titanic.take(1):
  print([e.numpy() for e in example])

def decode_titanic_line(line):
  return tf.io.decode_csv(line, titanic_types)

manual_titanic = (
    # Load the lines of text
    tf.data.TextLineDataset(titanic_file_path)
    # Skip the header row.
    .skip(1)
    # Decode the line.
    .map(decode_titanic_line)
)

for example in manual_titanic.take(1):
  print([e.numpy() for e in example])

font_line = pathlib.Path(font_csvs[0]).read_text().splitlines()[1]
print(font_line)

num_font_features = font_line.count(',')+1
font_column_types = [str(), str()] + [float()]*(num_font_features-2)

print(font_csvs[0])

simple_font_ds = tf.data.experimental.CsvDataset(
    font_csvs, 
    record_defaults=font_column_types, 
    header=True)

for row in simple_font_ds.take(10):
  print(row[0].numpy())

font_files = tf.data.Dataset.list_files("fonts/*.csv")

print('Epoch 1:')
for f in list(font_files)[:5]:
  print("    ", f.numpy())
print('    ...')
print()

print('Epoch 2:')
for f in list(font_files)[:5]:
  print("    ", f.numpy())
print('    ...')

def make_font_csv_ds(path):
  return tf.data.experimental.CsvDataset(
    path, 
    record_defaults=font_column_types, 
    header=True)

font_rows = font_files.interleave(make_font_csv_ds,
                                  cycle_length=3)

fonts_dict = {'font_name':[], 'character':[]}

for row in font_rows.take(10):
  fonts_dict['font_name'].append(row[0].numpy().decode())
  fonts_dict['character'].append(chr(int(row[2].numpy())))

print(fonts_dict)

BATCH_SIZE=2048
fonts_ds = tf.data.experimental.make_csv_dataset(
    file_pattern = "fonts/*.csv",
    batch_size=BATCH_SIZE, num_epochs=1,
    num_parallel_reads=100)

for i,batch in enumerate(fonts_ds.take(20)):
  print('.',end='')

print()

fonts_files = tf.data.Dataset.list_files("fonts/*.csv")
fonts_lines = fonts_files.interleave(
    lambda fname:tf.data.TextLineDataset(fname).skip(1), 
    cycle_length=100).batch(BATCH_SIZE)

fonts_fast = fonts_lines.map(lambda x: tf.io.decode_csv(x, record_defaults=font_column_types))

for i,batch in enumerate(fonts_fast.take(20)):
  print('.',end='')

print()
