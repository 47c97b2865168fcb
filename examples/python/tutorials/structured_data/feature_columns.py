"""TensorFlow's tutorial "Classify structured data with feature columns", run on Kiln.

Provenance: tensorflow/docs, site/en/tutorials/structured_data/feature_columns.ipynb, commit
7c3650212740204359d4ceae481abc79345541be: its code cells in order. Only the imports differ (`import kiln as tf`,
`from kiln import feature_column`, `from kiln.keras import layers`); `!pip install sklearn` is left out
(scripts/setup.sh installs Debian's scikit-learn). The download, petfinder-mini.zip, is written
first as a small synthetic stand-in (600 rows, the real CSV's columns and values) where get_file(cache_dir='.')
keeps it, so get_file's line runs unchanged and extracts it. Cells that show a value print it.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/tutorials/structured_data/feature_columns.py"""
import os
import tempfile
import zipfile

import numpy as np


def prepare_download():
    rng = np.random.default_rng(0)
    os.chdir(tempfile.mkdtemp(prefix="feature_columns_"))
    os.makedirs("datasets")
    choices = {"Type": ["Cat", "Dog"], "Breed1": ["Tabby", "Domestic Medium Hair", "Mixed Breed", "Domestic Short Hair",
                                                  "Siamese", "Terrier", "Golden Retriever"],
               "Gender": ["Male", "Female"], "Color1": ["Black", "Brown", "Cream", "Gray", "Golden", "White"],
               "Color2": ["White", "No Color", "Brown", "Cream"], "MaturitySize": ["Small", "Medium", "Large"],
               "FurLength": ["Short", "Medium", "Long"], "Vaccinated": ["No", "Yes", "Not Sure"],
               "Sterilized": ["No", "Yes", "Not Sure"], "Health": ["Healthy", "Minor Injury"]}
    lines = ["Type,Age,Breed1,Gender,Color1,Color2,MaturitySize,FurLength,Vaccinated,Sterilized,Health,Fee,"
             "Description,PhotoAmt,AdoptionSpeed"]
    for i in range(600):
        row = {name: values[int(rng.integers(0, len(values)))] for name, values in choices.items()}
        age, photos = int(rng.integers(1, 60)), int(rng.integers(0, 10))
        # Young pets with photos are adopted (AdoptionSpeed < 4), so the model has something to learn.
        speed = 4 if age > 30 or photos < 2 else int(rng.integers(0, 4))
        lines.append(f"{row['Type']},{age},{row['Breed1']},{row['Gender']},{row['Color1']},{row['Color2']},"
                     f"{row['MaturitySize']},{row['FurLength']},{row['Vaccinated']},{row['Sterilized']},"
                     f"{row['Health']},{int(rng.choice([0, 0, 50, 100]))},\"A friendly pet, number {i}.\","
                     f"{photos},{speed}")
    with zipfile.ZipFile(os.path.join("datasets", "petfinder_mini.zip"), "w") as z:
        z.writestr("petfinder-mini/petfinder-mini.csv", "\n".join(lines) + "\n")


prepare_download()

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import kiln as tf  # noqa: E402

from kiln import feature_column  # noqa: E402
from kiln.keras import layers  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

import pathlib  # noqa: E402,F401

dataset_url = 'http://storage.googleapis.com/download.tensorflow.org/data/petfinder-mini.zip'
csv_file = 'datasets/petfinder-mini/petfinder-mini.csv'

tf.keras.utils.get_file('petfinder_mini.zip', dataset_url,
                        extract=True, cache_dir='.')
dataframe = pd.read_csv(csv_file)

print(dataframe.head())

# In the original dataset "4" indicates the pet was not adopted.
dataframe['target'] = np.where(dataframe['AdoptionSpeed']==4, 0, 1)

# Drop un-used columns.
dataframe = dataframe.drop(columns=['AdoptionSpeed', 'Description'])

train, test = train_test_split(dataframe, test_size=0.2)
train, val = train_test_split(train, test_size=0.2)
print(len(train), 'train examples')
print(len(val), 'validation examples')
print(len(test), 'test examples')


# A utility method to create a tf.data dataset from a Pandas Dataframe
def df_to_dataset(dataframe, shuffle=True, batch_size=32):
  dataframe = dataframe.copy()
  labels = dataframe.pop('target')
  ds = tf.data.Dataset.from_tensor_slices((dict(dataframe), labels))
  if shuffle:
    ds = ds.shuffle(buffer_size=len(dataframe))
  ds = ds.batch(batch_size)
  return ds


batch_size = 5 # A small batch sized is used for demonstration purposes
train_ds = df_to_dataset(train, batch_size=batch_size)
val_ds = df_to_dataset(val, shuffle=False, batch_size=batch_size)
test_ds = df_to_dataset(test, shuffle=False, batch_size=batch_size)

for feature_batch, label_batch in train_ds.take(1):
  print('Every feature:', list(feature_batch.keys()))
  print('A batch of ages:', feature_batch['Age'])
  print('A batch of targets:', label_batch )

# We will use this batch to demonstrate several types of feature columns
example_batch = next(iter(train_ds))[0]


# A utility method to create a feature column
# and to transform a batch of data
def demo(feature_column):
  feature_layer = layers.DenseFeatures(feature_column)
  print(feature_layer(example_batch).numpy())


photo_count = feature_column.numeric_column('PhotoAmt')
demo(photo_count)

age = feature_column.numeric_column('Age')
age_buckets = feature_column.bucketized_column(age, boundaries=[1, 3, 5])
demo(age_buckets)

animal_type = feature_column.categorical_column_with_vocabulary_list(
      'Type', ['Cat', 'Dog'])

animal_type_one_hot = feature_column.indicator_column(animal_type)
demo(animal_type_one_hot)

# Notice the input to the embedding column is the categorical column
# we previously created
breed1 = feature_column.categorical_column_with_vocabulary_list(
      'Breed1', dataframe.Breed1.unique())
breed1_embedding = feature_column.embedding_column(breed1, dimension=8)
demo(breed1_embedding)

breed1_hashed = feature_column.categorical_column_with_hash_bucket(
      'Breed1', hash_bucket_size=10)
demo(feature_column.indicator_column(breed1_hashed))

crossed_feature = feature_column.crossed_column([age_buckets, animal_type], hash_bucket_size=10)
demo(feature_column.indicator_column(crossed_feature))

feature_columns = []

# numeric cols
for header in ['PhotoAmt', 'Fee', 'Age']:
  feature_columns.append(feature_column.numeric_column(header))

# bucketized cols
age = feature_column.numeric_column('Age')
age_buckets = feature_column.bucketized_column(age, boundaries=[1, 2, 3, 4, 5])
feature_columns.append(age_buckets)

# indicator_columns
indicator_column_names = ['Type', 'Color1', 'Color2', 'Gender', 'MaturitySize',
                          'FurLength', 'Vaccinated', 'Sterilized', 'Health']
for col_name in indicator_column_names:
  categorical_column = feature_column.categorical_column_with_vocabulary_list(
      col_name, dataframe[col_name].unique())
  indicator_column = feature_column.indicator_column(categorical_column)
  feature_columns.append(indicator_column)

# embedding columns
breed1 = feature_column.categorical_column_with_vocabulary_list(
      'Breed1', dataframe.Breed1.unique())
breed1_embedding = feature_column.embedding_column(breed1, dimension=8)
feature_columns.append(breed1_embedding)

# crossed columns
age_type_feature = feature_column.crossed_column([age_buckets, animal_type], hash_bucket_size=100)
feature_columns.append(feature_column.indicator_column(age_type_feature))

feature_layer = tf.keras.layers.DenseFeatures(feature_columns)

batch_size = 32
train_ds = df_to_dataset(train, batch_size=batch_size)
val_ds = df_to_dataset(val, shuffle=False, batch_size=batch_size)
test_ds = df_to_dataset(test, shuffle=False, batch_size=batch_size)

model = tf.keras.Sequential([
  feature_layer,
  layers.Dense(128, activation='relu'),
  layers.Dense(128, activation='relu'),
  layers.Dropout(.1),
  layers.Dense(1)
])

model.compile(optimizer='adam',
              loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
              metrics=['accuracy'])

model.fit(train_ds,
          validation_data=val_ds,
          epochs=10)

loss, accuracy = model.evaluate(test_ds)
print("Accuracy", accuracy)
