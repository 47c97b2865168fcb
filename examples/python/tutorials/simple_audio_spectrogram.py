"""TensorFlow's tutorial "Simple audio recognition: Recognizing keywords", its spectrogram part, run on Kiln.

Provenance: tensorflow/docs, site/en/tutorials/audio/simple_audio.ipynb, commit
7c3650212740204359d4ceae481abc79345541be: the cells from `squeeze` to `make_spec_ds` and its first batch, in
order. Only the import differs (`import kiln as tf`), and the data: mini_speech_commands (a download read by
`audio_dataset_from_directory`) becomes a batch of synthetic one-second 16 kHz "words" (chirps and tones in
noise) shaped as that function yields them, (batch, 16000, 1) float32 with int32 labels. The plots and the
IPython audio player are left out. KILN_SPECTROGRAM_OUT, when set, names an .npz file that receives the first
waveform and its spectrogram, for the test to check against NumPy.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/tutorials/simple_audio_spectrogram.py"""
import os

import numpy as np

import kiln as tf

# Set the seed value for experiment reproducibility.
seed = 42
tf.random.set_seed(seed)
np.random.seed(seed)

label_names = np.array(['down', 'go', 'left', 'no', 'right', 'stop', 'up', 'yes'])


def synthetic_words(count, rng):
    """(count, 16000, 1) float32 in [-1, 1]: a chirp or tone per label, in a random window, over noise."""
    t = np.arange(16000) / 16000.0
    labels = rng.integers(0, len(label_names), count).astype(np.int32)
    audio = np.zeros([count, 16000], np.float32)
    for i, label in enumerate(labels):
        start, length = rng.uniform(0.0, 0.4), rng.uniform(0.3, 0.6)
        envelope = np.clip(np.minimum(t - start, start + length - t) * 20, 0, 1)
        pitch = 200.0 + 150.0 * label
        tone = np.sin(2 * np.pi * (pitch * t + 200.0 * label * t * t))
        audio[i] = 0.6 * envelope * tone + 0.02 * rng.standard_normal(16000)
    return audio[..., None], labels


waveforms, labels = synthetic_words(16, np.random.default_rng(seed))
train_ds = tf.data.Dataset.from_tensor_slices((waveforms, labels)).batch(8)


def squeeze(audio, labels):
  audio = tf.squeeze(audio, axis=-1)
  return audio, labels

train_ds = train_ds.map(squeeze, tf.data.AUTOTUNE)

for example_audio, example_labels in train_ds.take(1):
  print(example_audio.shape)
  print(example_labels.shape)


def get_spectrogram(waveform):
  # Convert the waveform to a spectrogram via a STFT.
  spectrogram = tf.signal.stft(
      waveform, frame_length=255, frame_step=128)
  # Obtain the magnitude of the STFT.
  spectrogram = tf.abs(spectrogram)
  # Add a `channels` dimension, so that the spectrogram can be used
  # as image-like input data with convolution layers (which expect
  # shape (`batch_size`, `height`, `width`, `channels`).
  spectrogram = spectrogram[..., tf.newaxis]
  return spectrogram


for i in range(3):
  label = label_names[example_labels[i]]
  waveform = example_audio[i]
  spectrogram = get_spectrogram(waveform)

  print('Label:', label)
  print('Waveform shape:', waveform.shape)
  print('Spectrogram shape:', spectrogram.shape)


def make_spec_ds(ds):
  return ds.map(
      map_func=lambda audio,label: (get_spectrogram(audio), label),
      num_parallel_calls=tf.data.AUTOTUNE)


train_spectrogram_ds = make_spec_ds(train_ds)

for example_spectrograms, example_spect_labels in train_spectrogram_ds.take(1):
  break

input_shape = example_spectrograms.shape[1:]
print('Input shape:', input_shape)

if os.environ.get("KILN_SPECTROGRAM_OUT"):
    np.savez(os.environ["KILN_SPECTROGRAM_OUT"], waveform=example_audio[0].numpy(),
             spectrogram=get_spectrogram(example_audio[0]).numpy(), batch=example_spectrograms.numpy())
