"""keras.utils.text_dataset_from_directory and image_dataset_from_directory (Keras 2.15's
keras/utils/dataset_utils.py rules): one class per subdirectory (alphabetical, or `class_names`' order),
files walked in sorted order, shuffled with NumPy's RandomState(seed) before the validation split (the last
`int(validation_split * n)` files), the same printed lines ("Found 6 files belonging to 2 classes.")."""
import os

import numpy as np

_IMAGE_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")


def _check_validation_split(validation_split, subset, shuffle, seed):
    if validation_split and not 0 < validation_split < 1:
        raise ValueError(f"`validation_split` must be between 0 and 1, received: {validation_split}")
    if (validation_split or subset) and not (validation_split and subset):
        raise ValueError("If `subset` is set, `validation_split` must be set, and inversely.")
    if subset not in ("training", "validation", "both", None):
        raise ValueError(f'`subset` must be either "training", "validation" or "both", received: {subset}')
    if validation_split and shuffle and seed is None:
        raise ValueError("If using `validation_split` and shuffling the data, you must provide a `seed` argument, "
                         "to make sure that there is no overlap between the training and validation subset.")


def _valid_files(directory, follow_links, formats):
    for root, _, files in sorted(os.walk(directory, followlinks=follow_links), key=lambda x: x[0]):
        for fname in sorted(files):
            if fname.lower().endswith(formats):
                yield root, fname


def index_directory(directory, labels, formats, class_names=None, shuffle=True, seed=None, follow_links=False):
    """(file paths, int32 labels or None, class names), shuffled together when `shuffle`."""
    if not os.path.isdir(directory):
        raise ValueError(f"Could not find directory {directory}")
    if labels == "inferred":
        subdirs = [d for d in sorted(os.listdir(directory)) if os.path.isdir(os.path.join(directory, d))]
        if class_names is not None:
            if not set(class_names).issubset(set(subdirs)):
                raise ValueError("The `class_names` passed did not match the names of the subdirectories of the "
                                 f"target directory. Expected: {subdirs}, but received: {class_names}")
            subdirs = list(class_names)
        class_names = subdirs
    else:
        subdirs = [""]
    class_indices = {name: i for i, name in enumerate(class_names or [])}
    filenames, label_list = [], []
    for subdir in subdirs:
        dirpath = os.path.join(directory, subdir)
        for root, fname in _valid_files(dirpath, follow_links, formats):
            filenames.append(os.path.join(subdir, os.path.relpath(os.path.join(root, fname), dirpath))
                             if subdir else os.path.relpath(os.path.join(root, fname), directory))
            label_list.append(class_indices.get(subdir, 0))
    if labels == "inferred":
        labels = np.asarray(label_list, dtype="int32")
        print(f"Found {len(filenames)} files belonging to {len(class_names)} classes.")
    elif labels is None:
        print(f"Found {len(filenames)} files.")
    else:
        if len(labels) != len(filenames):
            raise ValueError("Expected the lengths of `labels` to match the number of files in the target "
                             f"directory. len(labels) is {len(labels)} while we found {len(filenames)} files "
                             f"in directory {directory}.")
        labels = np.asarray(labels)
        class_names = [str(label) for label in sorted(set(labels.tolist()))] if class_names is None else class_names
        print(f"Found {len(filenames)} files belonging to {len(class_names)} classes.")
    paths = [os.path.join(directory, f) for f in filenames]
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(paths)
        if labels is not None:
            np.random.RandomState(seed).shuffle(labels)
    return paths, labels, class_names


def _split(samples, labels, validation_split, subset):
    if not validation_split:
        return samples, labels
    num_val = int(validation_split * len(samples))
    if subset == "training":
        print(f"Using {len(samples) - num_val} files for training.")
        return samples[:-num_val], None if labels is None else labels[:-num_val]
    print(f"Using {num_val} files for validation.")
    return samples[-num_val:], None if labels is None else labels[-num_val:]


def _labels_dataset(labels, label_mode, num_classes):
    from .. import data, _ops
    ds = data.Dataset.from_tensor_slices(np.asarray(labels, dtype="int32"))
    if label_mode == "binary":
        return ds.map(lambda x: _ops.expand_dims(_ops.cast(x, "float32"), axis=-1))
    if label_mode == "categorical":
        return ds.map(lambda x: _ops.one_hot(x, num_classes))
    return ds


def _check_labels(labels, label_mode):
    if labels not in ("inferred", None) and not isinstance(labels, (list, tuple)):
        raise ValueError("`labels` argument should be a list/tuple of integer labels, of the same size as the "
                         "number of files in the target directory. If you wish to infer the labels from the "
                         "subdirectory names in the target directory, pass `labels=\"inferred\"`. If you wish to "
                         f"get a dataset that only contains text/images (no labels), pass `labels=None`. "
                         f"Received: labels={labels}")
    if label_mode not in {"int", "categorical", "binary", None}:
        raise ValueError('`label_mode` argument must be one of "int", "categorical", "binary", or None. '
                         f"Received: label_mode={label_mode}")


def indexed_directory(directory, labels, label_mode, class_names, shuffle, seed, validation_split, subset,
                      follow_links, formats):
    """The steps every *_dataset_from_directory shares once its arguments are checked: the split checked, the seed
    drawn, the files and labels indexed. Returns (paths, labels, label_mode, class_names, seed)."""
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    _check_validation_split(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, class_names = index_directory(directory, labels, formats, class_names, shuffle, seed,
                                                 follow_links)
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError(f'When passing `label_mode="binary"`, there must be exactly 2 class_names. Received: '
                         f"class_names={class_names}")
    return paths, labels, label_mode, class_names, seed


def _from_directory(directory, labels, label_mode, class_names, batch_size, shuffle, seed, validation_split,
                    subset, follow_links, formats, kind, load):
    from .. import data
    _check_labels(labels, label_mode)
    paths, labels, label_mode, class_names, seed = indexed_directory(
        directory, labels, label_mode, class_names, shuffle, seed, validation_split, subset, follow_links, formats)

    def make(subset_name):
        p, lab = _split(paths, labels, validation_split, subset_name)
        if not p:
            raise ValueError(f"No {kind} files found in directory {directory}. Allowed formats: {formats}")
        ds = load(p)
        if label_mode is not None:
            ds = data.Dataset.zip((ds, _labels_dataset(lab, label_mode, len(class_names))))
        if batch_size is not None:
            if shuffle:
                ds = ds.shuffle(buffer_size=batch_size * 8, seed=seed)
            ds = ds.batch(batch_size)
        elif shuffle:
            ds = ds.shuffle(buffer_size=1024, seed=seed)
        ds = ds.prefetch(data.AUTOTUNE)
        ds.class_names = class_names
        ds.file_paths = p
        return ds

    if subset == "both":
        return make("training"), make("validation")
    return make(subset)


def text_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, batch_size=32,
                                max_length=None, shuffle=True, seed=None, validation_split=None, subset=None,
                                follow_links=False):
    """A dataset of (text, label) batches from `directory/<class>/*.txt`; each text is the file's bytes (cut to
    `max_length` bytes), read when the dataset runs."""
    from .. import data, io

    def load(paths):
        ds = data.Dataset.from_tensor_slices(paths).map(io.read_file)
        if max_length is not None:
            from ..function import py_function
            from .. import dtypes
            ds = ds.map(lambda t: py_function(lambda v: v.numpy()[:max_length], [t], dtypes.string))
        return ds

    return _from_directory(directory, labels, label_mode, class_names, batch_size, shuffle, seed, validation_split,
                           subset, follow_links, (".txt",), "text", load)


def image_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None,
                                 color_mode="rgb", batch_size=32, image_size=(256, 256), shuffle=True, seed=None,
                                 validation_split=None, subset=None, interpolation="bilinear", follow_links=False,
                                 crop_to_aspect_ratio=False):
    """A dataset of (image, label) batches from `directory/<class>/*.{png,jpg,...}`: float32 images of
    `image_size` with 1, 3 or 4 channels. Kiln decodes and resizes them with PIL when the dataset is made (no
    tf.image decoders yet), so the images are held in memory."""
    from .. import data
    from ._image_utils import load_img, img_to_array
    if color_mode not in ("grayscale", "rgb", "rgba"):
        raise ValueError(f'`color_mode` must be one of {{"rgb", "rgba", "grayscale"}}. Received: '
                         f"color_mode={color_mode}")
    interpolation = {"area": "box"}.get(interpolation, interpolation)

    def load(paths):
        images = np.stack([img_to_array(load_img(p, color_mode=color_mode, target_size=tuple(image_size),
                                                 interpolation=interpolation,
                                                 keep_aspect_ratio=crop_to_aspect_ratio)) for p in paths])
        return data.Dataset.from_tensor_slices(images.astype("float32"))

    return _from_directory(directory, labels, label_mode, class_names, batch_size, shuffle, seed, validation_split,
                           subset, follow_links, _IMAGE_FORMATS, "image", load)
