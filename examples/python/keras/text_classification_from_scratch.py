"""keras.io's example "Text classification from scratch" (Keras 2 / tf.keras), run on Kiln.

Provenance: keras-team/keras-io, examples/nlp/text_classification_from_scratch.py, commit
01ae2db402523e96f804c6fc3b0a59582e6a671e (its code, prose left out). That revision imports Keras 3
(`import keras`); the tf.keras version differs only in its imports, so here: `import kiln as tf; from kiln
import keras; from kiln.keras import layers`. Changes for a small, offline run: instead of downloading
aclImdb_v1.tar.gz, a tiny synthetic aclImdb directory (train/pos, train/neg, train/unsup, test/pos, test/neg;
reviews drawn from sentiment word lists, with the `<br />` tags the real reviews have) is written to a temporary
directory, and the guide's `rm -r aclImdb/train/unsup` shell cell is done with shutil. Note: this revision passes
class_names=["pos", "neg"] for the training and validation sets but not for the test set, whose labels Keras infers
in alphabetical order (neg=0, pos=1): the test accuracy it prints is that of swapped labels, in Keras as here.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/keras/text_classification_from_scratch.py"""
import os
import shutil
import tempfile

import kiln as tf
from kiln import keras
import numpy as np
from kiln.keras import layers


def write_synthetic_imdb(root, train_per_class=200, test_per_class=50, seed=0):
    """aclImdb's layout with short generated reviews (the label decides the share of positive words)."""
    rng = np.random.default_rng(seed)
    good = "great wonderful superb moving brilliant loved enjoyable excellent".split()
    bad = "awful boring terrible dull waste worst poorly annoying".split()
    filler = "the movie film plot acting story was and it this a of characters scenes".split()
    for split, count in (("train", train_per_class), ("test", test_per_class)):
        for label in ("pos", "neg", "unsup") if split == "train" else ("pos", "neg"):
            os.makedirs(os.path.join(root, split, label))
            for i in range(count):
                words = []
                for _ in range(rng.integers(20, 60)):
                    r = rng.random()
                    mood = good if (label == "pos") == (r < 0.9) else bad
                    words.append(rng.choice(mood) if rng.random() < 0.5 else rng.choice(filler))
                text = " ".join(words[:10]).capitalize() + ".<br /><br />" + " ".join(words[10:]) + "!"
                with open(os.path.join(root, split, label, f"{i}_{rng.integers(1, 11)}.txt"), "w") as f:
                    f.write(text)


dataset_dir = os.path.join(tempfile.mkdtemp(prefix="text_classification_"), "aclImdb")
write_synthetic_imdb(dataset_dir)
print(sorted(os.listdir(dataset_dir)))                       # ls aclImdb
print(sorted(os.listdir(os.path.join(dataset_dir, "test"))))   # ls aclImdb/test
print(sorted(os.listdir(os.path.join(dataset_dir, "train"))))  # ls aclImdb/train
shutil.rmtree(os.path.join(dataset_dir, "train", "unsup"))     # rm -r aclImdb/train/unsup

batch_size = 32
train_dir = os.path.join(dataset_dir, "train")
test_dir = os.path.join(dataset_dir, "test")

raw_train_ds = keras.utils.text_dataset_from_directory(
    train_dir,
    batch_size=batch_size,
    validation_split=0.2,
    subset="training",
    seed=1337,
    class_names=["pos", "neg"],
)
raw_val_ds = keras.utils.text_dataset_from_directory(
    train_dir,
    batch_size=batch_size,
    validation_split=0.2,
    subset="validation",
    seed=1337,
    class_names=["pos", "neg"],
)
raw_test_ds = keras.utils.text_dataset_from_directory(test_dir, batch_size=batch_size)

print(f"Number of batches in raw_train_ds: {raw_train_ds.cardinality()}")
print(f"Number of batches in raw_val_ds: {raw_val_ds.cardinality()}")
print(f"Number of batches in raw_test_ds: {raw_test_ds.cardinality()}")

# It's important to take a look at your raw data to ensure your normalization
# and tokenization will work as expected. We can do that by taking a few
# examples from the training set and looking at them.
# This is one of the places where eager execution shines:
# we can just evaluate these tensors using .numpy()
# instead of needing to evaluate them in a Session/Graph context.
for text_batch, label_batch in raw_train_ds.take(1):
    for i in range(5):
        print(text_batch.numpy()[i])
        print(label_batch.numpy()[i])

import string
import re


# Having looked at our data above, we see that the raw text contains HTML break
# tags of the form '<br />'. These tags will not be removed by the default
# standardizer (which doesn't strip HTML). Because of this, we will need to
# create a custom standardization function.
def custom_standardization(input_data):
    lowercase = tf.strings.lower(input_data)
    stripped_html = tf.strings.regex_replace(lowercase, "<br />", " ")
    return tf.strings.regex_replace(
        stripped_html, f"[{re.escape(string.punctuation)}]", ""
    )


# Model constants.
max_features = 20000
embedding_dim = 128
sequence_length = 500

# Now that we have our custom standardization, we can instantiate our text
# vectorization layer. We are using this layer to normalize, split, and map
# strings to integers, so we set our 'output_mode' to 'int'.
# Note that we're using the default split function,
# and the custom standardization defined above.
# We also set an explicit maximum sequence length, since the CNNs later in our
# model won't support ragged sequences.
vectorize_layer = keras.layers.TextVectorization(
    standardize=custom_standardization,
    max_tokens=max_features,
    output_mode="int",
    output_sequence_length=sequence_length,
)

# Now that the vectorize_layer has been created, call `adapt` on a text-only
# dataset to create the vocabulary. You don't have to batch, but for very large
# datasets this means you're not keeping spare copies of the dataset in memory.

# Let's make a text-only dataset (no labels):
text_ds = raw_train_ds.map(lambda x, y: x)
# Let's call `adapt`:
vectorize_layer.adapt(text_ds)


def vectorize_text(text, label):
    text = tf.expand_dims(text, -1)
    return vectorize_layer(text), label


# Vectorize the data.
train_ds = raw_train_ds.map(vectorize_text)
val_ds = raw_val_ds.map(vectorize_text)
test_ds = raw_test_ds.map(vectorize_text)

# Do async prefetching / buffering of the data for best performance on GPU.
train_ds = train_ds.cache().prefetch(buffer_size=10)
val_ds = val_ds.cache().prefetch(buffer_size=10)
test_ds = test_ds.cache().prefetch(buffer_size=10)

# A integer input for vocab indices.
inputs = keras.Input(shape=(None,), dtype="int64")

# Next, we add a layer to map those vocab indices into a space of dimensionality
# 'embedding_dim'.
x = layers.Embedding(max_features, embedding_dim)(inputs)
x = layers.Dropout(0.5)(x)

# Conv1D + global max pooling
x = layers.Conv1D(128, 7, padding="valid", activation="relu", strides=3)(x)
x = layers.Conv1D(128, 7, padding="valid", activation="relu", strides=3)(x)
x = layers.GlobalMaxPooling1D()(x)

# We add a vanilla hidden layer:
x = layers.Dense(128, activation="relu")(x)
x = layers.Dropout(0.5)(x)

# We project onto a single unit output layer, and squash it with a sigmoid:
predictions = layers.Dense(1, activation="sigmoid", name="predictions")(x)

model = keras.Model(inputs, predictions)

# Compile the model with binary crossentropy loss and an adam optimizer.
model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])

epochs = 3

# Fit the model using the train and test datasets.
model.fit(train_ds, validation_data=val_ds, epochs=epochs)

model.evaluate(test_ds)

# A string input
inputs = keras.Input(shape=(1,), dtype="string")
# Turn strings into vocab indices
indices = vectorize_layer(inputs)
# Turn vocab indices into predictions
outputs = model(indices)

# Our end to end model
end_to_end_model = keras.Model(inputs, outputs)
end_to_end_model.compile(
    loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"]
)

# Test it with `raw_test_ds`, which yields raw strings
end_to_end_model.evaluate(raw_test_ds)
