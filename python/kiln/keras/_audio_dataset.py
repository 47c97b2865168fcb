"""keras.utils.audio_dataset_from_directory (Keras 2.15's keras/utils/audio_dataset.py): .wav files under one
subdirectory per class, found and split by _dataset_utils' walk (the same order, shuffle and printed lines as
the image and text loaders), decoded when the dataset runs by tf.audio.decode_wav inside a map. Batches are
padded to their longest file unless `output_sequence_length` cuts or pads every file to one length."""

from ._dataset_utils import _labels_dataset, _split, indexed_directory

ALLOWED_FORMATS = (".wav",)


def _check_arguments(labels, label_mode, class_names, ragged, output_sequence_length, sampling_rate):
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple)):
            raise ValueError("The `labels` argument should be a list/tuple of integer labels, of the same size as "
                             "the number of audio files in the target directory. If you wish to infer the labels "
                             "from the subdirectory names in the target directory, pass `labels=\"inferred\"`. If "
                             "you wish to get a dataset that only contains audio samples (no labels), pass "
                             f"`labels=None`. Received: labels={labels}")
        if class_names:
            raise ValueError(f'You can only pass `class_names` if `labels="inferred"`. Received: labels={labels}, '
                             f"and class_names={class_names}")
    if label_mode not in {"int", "categorical", "binary", None}:
        raise ValueError('`label_mode` argument must be one of "int", "categorical", "binary", or None. '
                         f"Received: label_mode={label_mode}")
    if ragged and output_sequence_length is not None:
        raise ValueError("Cannot set both `ragged` and `output_sequence_length`")
    if sampling_rate is not None:
        if not isinstance(sampling_rate, int):
            raise ValueError(f"`sampling_rate` should have an integer value. Received: sampling_rate={sampling_rate}")
        if sampling_rate <= 0:
            raise ValueError(f"`sampling_rate` should be higher than 0. Received: sampling_rate={sampling_rate}")
        # Keras resamples with tensorflow_io, which Kiln's environment does not have (nor does a TF without it).
        raise ImportError("To use the argument `sampling_rate`, you should install tensorflow_io. You can install "
                          "it via `pip install tensorflow-io`.")


def _paths_and_labels_to_dataset(paths, labels, label_mode, num_classes, output_sequence_length, ragged):
    from .. import audio, data, io, ragged as ragged_module
    length = -1 if output_sequence_length is None else output_sequence_length
    ds = data.Dataset.from_tensor_slices(paths).map(
        lambda path: audio.decode_wav(contents=io.read_file(path), desired_samples=length)[0],
        num_parallel_calls=data.AUTOTUNE)
    if ragged:
        ds = ds.map(lambda x: ragged_module.RaggedTensor.from_tensor(x), num_parallel_calls=data.AUTOTUNE)
    if label_mode:
        ds = data.Dataset.zip((ds, _labels_dataset(labels, label_mode, num_classes)))
    return ds


def _prepare(ds, batch_size, shuffle, seed, class_names, output_sequence_length, ragged):
    from .. import data
    ds = ds.prefetch(data.AUTOTUNE)
    if batch_size is not None:
        if shuffle:
            ds = ds.shuffle(buffer_size=batch_size * 8, seed=seed)
        if output_sequence_length is None and not ragged:
            ds = ds.padded_batch(batch_size, padded_shapes=([None, None], []))
        else:
            ds = ds.batch(batch_size)
    elif shuffle:
        ds = ds.shuffle(buffer_size=1024, seed=seed)
    ds.class_names = class_names
    return ds


def audio_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, batch_size=32,
                                 sampling_rate=None, output_sequence_length=None, ragged=False, shuffle=True,
                                 seed=None, validation_split=None, subset=None, follow_links=False):
    """A dataset of (audio float32 [batch, samples, channels], label) batches from `directory/<class>/*.wav`."""
    _check_arguments(labels, label_mode, class_names, ragged, output_sequence_length, sampling_rate)
    paths, labels, label_mode, class_names, seed = indexed_directory(
        directory, labels, label_mode, class_names, shuffle, seed, validation_split, subset, follow_links,
        ALLOWED_FORMATS)

    def make(subset_name, what, shuffled):
        p, lab = _split(paths, labels, validation_split, subset_name)
        if not p:
            raise ValueError(f"No {what}audio files found in directory {directory}. Allowed format(s): "
                             f"{ALLOWED_FORMATS}")
        ds = _paths_and_labels_to_dataset(p, lab, label_mode, len(class_names or ()), output_sequence_length, ragged)
        return _prepare(ds, batch_size, shuffled, seed, class_names, output_sequence_length, ragged)

    if subset == "both":
        # The validation half is never shuffled.
        return make("training", "training ", shuffle), make("validation", "validation ", False)
    return make(subset, "", shuffle)
