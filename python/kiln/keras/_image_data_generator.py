"""keras.preprocessing.image.ImageDataGenerator (Keras 2.15; deprecated there, still widely used): batches of
images from arrays (`flow`) or from a directory of class folders (`flow_from_directory`), each image randomly
transformed (rotation, shifts, shear, zoom, channel and brightness shifts, flips) and then standardized
(`rescale`, sample-wise or feature-wise centering and scaling, ZCA whitening, after `fit` for the feature-wise
statistics). The iterators are `keras.utils.Sequence`s: fit/evaluate/predict take them as they are."""
import os
import threading
import warnings

import numpy as np

from . import backend
from ._image_transforms import (apply_affine_transform, apply_brightness_shift, apply_channel_shift,
                                flip_axis)
from ._sequence_utils import Sequence

_IMAGE_FORMATS = ("png", "jpg", "jpeg", "bmp", "ppm", "tif", "tiff")


class Iterator(Sequence):
    """Batches of indices into `n` samples: shuffled each epoch when `shuffle`, reproducible with `seed` (the
    seed plus the number of batches drawn seeds NumPy before each batch, as in Keras)."""
    white_list_formats = _IMAGE_FORMATS

    def __init__(self, n, batch_size, shuffle, seed):
        self.n = n
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle = shuffle
        self.batch_index = 0
        self.total_batches_seen = 0
        self.lock = threading.Lock()
        self.index_array = None
        self.index_generator = self._flow_index()

    def _set_index_array(self):
        self.index_array = np.random.permutation(self.n) if self.shuffle else np.arange(self.n)

    def __getitem__(self, idx):
        if idx >= len(self):
            raise ValueError(f"Asked to retrieve element {idx}, but the Sequence has length {len(self)}")
        if self.seed is not None:
            np.random.seed(self.seed + self.total_batches_seen)
        self.total_batches_seen += 1
        if self.index_array is None:
            self._set_index_array()
        return self._get_batches_of_transformed_samples(
            self.index_array[self.batch_size * idx:self.batch_size * (idx + 1)])

    def __len__(self):
        return (self.n + self.batch_size - 1) // self.batch_size

    def on_epoch_end(self):
        self._set_index_array()

    def reset(self):
        self.batch_index = 0

    def _flow_index(self):
        self.reset()
        while True:
            if self.seed is not None:
                np.random.seed(self.seed + self.total_batches_seen)
            if self.batch_index == 0:
                self._set_index_array()
            current = 0 if self.n == 0 else (self.batch_index * self.batch_size) % self.n
            self.batch_index = self.batch_index + 1 if self.n > current + self.batch_size else 0
            self.total_batches_seen += 1
            yield self.index_array[current:current + self.batch_size]

    def __iter__(self):
        return self

    def __next__(self):
        return self.next()

    def next(self):
        with self.lock:
            index_array = next(self.index_generator)
        return self._get_batches_of_transformed_samples(index_array)

    def _get_batches_of_transformed_samples(self, index_array):
        raise NotImplementedError

    def _transformed(self, x):
        gen = self.image_data_generator
        if gen is None:
            return x
        x = gen.apply_transform(x, gen.get_random_transform(x.shape))
        return gen.standardize(x)

    def _save(self, batch_x, index_array, hash_range):
        if not self.save_to_dir:
            return
        from ._image_utils import array_to_img
        for x, j in zip(batch_x, index_array):
            name = f"{self.save_prefix}_{j}_{np.random.randint(hash_range)}.{self.save_format}"
            array_to_img(x, self.data_format, scale=True).save(os.path.join(self.save_to_dir, name))


class NumpyArrayIterator(Iterator):
    """Batches (x, y[, sample_weight]) of arrays, x transformed by the generator."""

    def __init__(self, x, y, image_data_generator, batch_size=32, shuffle=False, sample_weight=None, seed=None,
                 data_format=None, save_to_dir=None, save_prefix="", save_format="png", subset=None,
                 ignore_class_split=False, dtype=None):
        data_format = data_format or backend.image_data_format()
        self.dtype = dtype or backend.floatx()
        x_misc = []
        if isinstance(x, (tuple, list)):
            if not isinstance(x[1], list):
                x_misc = [np.asarray(x[1])]
            else:
                x_misc = [np.asarray(xx) for xx in x[1]]
            x = x[0]
            for xx in x_misc:
                if len(x) != len(xx):
                    raise ValueError("All of the arrays in `x` should have the same length. Found a pair with: "
                                     f"len(x[0]) = {len(x)}, len(x[?]) = {len(xx)}")
        if y is not None and len(x) != len(y):
            raise ValueError("`x` (images tensor) and `y` (labels) should have the same length. Found: "
                             f"x.shape = {np.asarray(x).shape}, y.shape = {np.asarray(y).shape}")
        if sample_weight is not None and len(x) != len(sample_weight):
            raise ValueError("`x` (images tensor) and `sample_weight` should have the same length. Found: "
                             f"x.shape = {np.asarray(x).shape}, sample_weight.shape = "
                             f"{np.asarray(sample_weight).shape}")
        if subset is not None:
            if subset not in {"training", "validation"}:
                raise ValueError(f"Invalid subset name: {subset}; expected 'training' or 'validation'.")
            split = int(len(x) * image_data_generator._validation_split)
            if y is not None and not ignore_class_split and \
                    not np.array_equal(np.unique(y[:split]), np.unique(y[split:])):
                raise ValueError("Training and validation subsets have different number of classes after the split. "
                                 "If your numpy arrays are sorted by the label, you might want to shuffle them.")
            part = slice(None, split) if subset == "validation" else slice(split, None)
            x = x[part]
            x_misc = [np.asarray(xx[part]) for xx in x_misc]
            if y is not None:
                y = y[part]
            if sample_weight is not None:
                sample_weight = sample_weight[part]
        self.x = np.asarray(x, dtype=self.dtype)
        self.x_misc = x_misc
        if self.x.ndim != 4:
            raise ValueError("Input data in `NumpyArrayIterator` should have rank 4. You passed an array with shape "
                             f"{self.x.shape}")
        channels_axis = 3 if data_format == "channels_last" else 1
        if self.x.shape[channels_axis] not in {1, 3, 4}:
            warnings.warn(f'NumpyArrayIterator is set to use the data format convention "{data_format}" (channels on '
                          f"axis {channels_axis}), i.e. expected either 1, 3, or 4 channels on axis {channels_axis}. "
                          f"However, it was passed an array with shape {self.x.shape} "
                          f"({self.x.shape[channels_axis]} channels).")
        self.y = np.asarray(y) if y is not None else None
        self.sample_weight = np.asarray(sample_weight) if sample_weight is not None else None
        self.image_data_generator = image_data_generator
        self.data_format = data_format
        self.save_to_dir = save_to_dir
        self.save_prefix = save_prefix
        self.save_format = save_format
        super().__init__(self.x.shape[0], batch_size, shuffle, seed)

    def _get_batches_of_transformed_samples(self, index_array):
        batch_x = np.zeros((len(index_array),) + self.x.shape[1:], dtype=self.dtype)
        for i, j in enumerate(index_array):
            batch_x[i] = self._transformed(self.x[j].astype(self.dtype))
        self._save(batch_x, index_array, 10000)
        miscs = [xx[index_array] for xx in self.x_misc]
        output = (batch_x if not miscs else [batch_x] + miscs,)
        if self.y is None:
            return output[0]
        output += (self.y[index_array],)
        if self.sample_weight is not None:
            output += (self.sample_weight[index_array],)
        return output


def _files_in(directory, follow_links):
    """(folder, file name) of every image file under `directory`, in sorted order."""
    for root, _, files in sorted(os.walk(directory, followlinks=follow_links), key=lambda entry: entry[0]):
        for name in sorted(files):
            if name.lower().endswith(".tiff"):
                warnings.warn('Using ".tiff" files with multiple bands will cause distortion. Please verify your '
                              "output.")
            if name.lower().endswith(_IMAGE_FORMATS):
                yield root, name


class BatchFromFiles(Iterator):
    """What the iterators over image files share (Keras' BatchFromFilesMixin): the loading settings, and batches
    of the images (loaded, resized, transformed, standardized) with their labels as `class_mode` says, and the
    sample weights when there are some."""

    def _set_processing_attrs(self, image_data_generator, target_size, color_mode, data_format, save_to_dir,
                              save_prefix, save_format, subset, interpolation, keep_aspect_ratio):
        self.image_data_generator = image_data_generator
        self.target_size = tuple(target_size)
        self.keep_aspect_ratio = keep_aspect_ratio
        if color_mode not in {"rgb", "rgba", "grayscale"}:
            raise ValueError(f'Invalid color mode: {color_mode}; expected "rgb", "rgba", or "grayscale".')
        self.color_mode = color_mode
        self.data_format = data_format
        depth = {"rgb": 3, "rgba": 4, "grayscale": 1}[color_mode]
        self.image_shape = (self.target_size + (depth,) if self.data_format == "channels_last"
                            else (depth,) + self.target_size)
        self.save_to_dir, self.save_prefix, self.save_format = save_to_dir, save_prefix, save_format
        self.interpolation = interpolation
        if subset is None:
            split = None
        elif subset in ("validation", "training"):
            fraction = image_data_generator._validation_split
            split = (0, fraction) if subset == "validation" else (fraction, 1)
        else:
            raise ValueError(f'Invalid subset name: {subset};expected "training" or "validation"')
        self.split, self.subset = split, subset

    @property
    def sample_weight(self):
        return None

    def _get_batches_of_transformed_samples(self, index_array):
        from ._image_utils import img_to_array, load_img
        batch_x = np.zeros((len(index_array),) + self.image_shape, dtype=self.dtype)
        filepaths = self.filepaths
        for i, j in enumerate(index_array):
            img = load_img(filepaths[j], color_mode=self.color_mode, target_size=self.target_size,
                           interpolation=self.interpolation, keep_aspect_ratio=self.keep_aspect_ratio)
            batch_x[i] = self._transformed(img_to_array(img, data_format=self.data_format))
        self._save(batch_x, index_array, 10 ** 7)
        if self.class_mode == "input":
            batch_y = batch_x.copy()
        elif self.class_mode in {"binary", "sparse"}:
            batch_y = np.asarray([self.classes[j] for j in index_array], dtype=self.dtype)
        elif self.class_mode == "categorical":
            # A sample's class index, or a list of them (a multi-label data frame row), set to one.
            batch_y = np.zeros((len(batch_x), len(self.class_indices)), dtype=self.dtype)
            for i, j in enumerate(index_array):
                batch_y[i, self.classes[j]] = 1.0
        elif self.class_mode == "multi_output":
            batch_y = [output[index_array] for output in self.labels]
        elif self.class_mode == "raw":
            batch_y = self.labels[index_array]
        else:
            return batch_x
        if self.sample_weight is None:
            return batch_x, batch_y
        return batch_x, batch_y, self.sample_weight[index_array]


class DirectoryIterator(BatchFromFiles):
    """Batches of images read from `directory`'s class folders (one folder per class, in sorted order unless
    `classes` names them), resized to `target_size`; the labels as `class_mode` says."""
    allowed_class_modes = {"categorical", "binary", "sparse", "input", None}

    def __init__(self, directory, image_data_generator, target_size=(256, 256), color_mode="rgb", classes=None,
                 class_mode="categorical", batch_size=32, shuffle=True, seed=None, data_format=None,
                 save_to_dir=None, save_prefix="", save_format="png", follow_links=False, subset=None,
                 interpolation="nearest", keep_aspect_ratio=False, dtype=None):
        self._set_processing_attrs(image_data_generator, target_size, color_mode,
                                   data_format or backend.image_data_format(), save_to_dir, save_prefix, save_format,
                                   subset, interpolation, keep_aspect_ratio)
        self.dtype = dtype or backend.floatx()
        split = self.split
        if class_mode not in self.allowed_class_modes:
            raise ValueError(f"Invalid class_mode: {class_mode}; expected one of: {self.allowed_class_modes}")
        self.directory = directory
        self.class_mode = class_mode
        if not classes:
            classes = [d for d in sorted(os.listdir(directory)) if os.path.isdir(os.path.join(directory, d))]
        self.num_classes = len(classes)
        self.class_indices = dict(zip(classes, range(len(classes))))
        self.filenames, labels = [], []
        for name in classes:
            folder = os.path.join(directory, name)
            files = list(_files_in(folder, follow_links))
            if split:
                files = files[int(split[0] * len(files)):int(split[1] * len(files))]
            for root, fname in files:
                labels.append(self.class_indices[name])
                self.filenames.append(os.path.join(name, os.path.relpath(os.path.join(root, fname), folder)))
        self.samples = len(self.filenames)
        self.classes = np.asarray(labels, dtype="int32")
        print(f"Found {self.samples} images belonging to {self.num_classes} classes.")
        self._filepaths = [os.path.join(directory, f) for f in self.filenames]
        super().__init__(self.samples, batch_size, shuffle, seed)

    @property
    def filepaths(self):
        return self._filepaths

    @property
    def labels(self):
        return self.classes


class ImageDataGenerator:
    """Generates batches of augmented image data (Keras' arguments and defaults)."""

    def __init__(self, featurewise_center=False, samplewise_center=False, featurewise_std_normalization=False,
                 samplewise_std_normalization=False, zca_whitening=False, zca_epsilon=1e-6, rotation_range=0,
                 width_shift_range=0.0, height_shift_range=0.0, brightness_range=None, shear_range=0.0,
                 zoom_range=0.0, channel_shift_range=0.0, fill_mode="nearest", cval=0.0, horizontal_flip=False,
                 vertical_flip=False, rescale=None, preprocessing_function=None, data_format=None,
                 validation_split=0.0, interpolation_order=1, dtype=None):
        data_format = data_format or backend.image_data_format()
        self.featurewise_center = featurewise_center
        self.samplewise_center = samplewise_center
        self.featurewise_std_normalization = featurewise_std_normalization
        self.samplewise_std_normalization = samplewise_std_normalization
        self.zca_whitening = zca_whitening
        self.zca_epsilon = zca_epsilon
        self.rotation_range = rotation_range
        self.width_shift_range = width_shift_range
        self.height_shift_range = height_shift_range
        self.shear_range = shear_range
        self.channel_shift_range = channel_shift_range
        self.fill_mode = fill_mode
        self.cval = cval
        self.horizontal_flip = horizontal_flip
        self.vertical_flip = vertical_flip
        self.rescale = rescale
        self.preprocessing_function = preprocessing_function
        self.dtype = dtype or backend.floatx()
        self.interpolation_order = interpolation_order
        if data_format not in {"channels_last", "channels_first"}:
            raise ValueError('`data_format` should be `"channels_last"` (channel after row and column) or '
                             f'`"channels_first"` (channel before row and column). Received: {data_format}')
        self.data_format = data_format
        self.channel_axis, self.row_axis, self.col_axis = (3, 1, 2) if data_format == "channels_last" else (1, 2, 3)
        if validation_split and not 0 < validation_split < 1:
            raise ValueError(f"`validation_split` must be strictly between 0 and 1.  Received: {validation_split}")
        self._validation_split = validation_split
        self.mean = self.std = self.zca_whitening_matrix = None
        if isinstance(zoom_range, (float, int)):
            self.zoom_range = [1 - zoom_range, 1 + zoom_range]
        elif len(zoom_range) == 2 and all(isinstance(v, (float, int)) for v in zoom_range):
            self.zoom_range = [zoom_range[0], zoom_range[1]]
        else:
            raise ValueError(f"`zoom_range` should be a float or a tuple or list of two floats. Received: "
                             f"{zoom_range}")
        if zca_whitening:
            if not featurewise_center:
                self.featurewise_center = True
                warnings.warn("This ImageDataGenerator specifies `zca_whitening`, which overrides setting of "
                              "`featurewise_center`.")
            if featurewise_std_normalization:
                self.featurewise_std_normalization = False
                warnings.warn("This ImageDataGenerator specifies `zca_whitening` which overrides setting of"
                              "`featurewise_std_normalization`.")
        if featurewise_std_normalization and not featurewise_center:
            self.featurewise_center = True
            warnings.warn("This ImageDataGenerator specifies `featurewise_std_normalization`, which overrides setting "
                          "of `featurewise_center`.")
        if samplewise_std_normalization and not samplewise_center:
            self.samplewise_center = True
            warnings.warn("This ImageDataGenerator specifies `samplewise_std_normalization`, which overrides setting "
                          "of `samplewise_center`.")
        if brightness_range is not None and (not isinstance(brightness_range, (tuple, list))
                                             or len(brightness_range) != 2):
            raise ValueError(f"`brightness_range should be tuple or list of two floats. Received: {brightness_range}")
        self.brightness_range = brightness_range

    def flow(self, x, y=None, batch_size=32, shuffle=True, sample_weight=None, seed=None, save_to_dir=None,
             save_prefix="", save_format="png", ignore_class_split=False, subset=None):
        return NumpyArrayIterator(x, y, self, batch_size=batch_size, shuffle=shuffle, sample_weight=sample_weight,
                                  seed=seed, data_format=self.data_format, save_to_dir=save_to_dir,
                                  save_prefix=save_prefix, save_format=save_format,
                                  ignore_class_split=ignore_class_split, subset=subset, dtype=self.dtype)

    def flow_from_directory(self, directory, target_size=(256, 256), color_mode="rgb", classes=None,
                            class_mode="categorical", batch_size=32, shuffle=True, seed=None, save_to_dir=None,
                            save_prefix="", save_format="png", follow_links=False, subset=None,
                            interpolation="nearest", keep_aspect_ratio=False):
        return DirectoryIterator(directory, self, target_size=target_size, color_mode=color_mode,
                                 keep_aspect_ratio=keep_aspect_ratio, classes=classes, class_mode=class_mode,
                                 data_format=self.data_format, batch_size=batch_size, shuffle=shuffle, seed=seed,
                                 save_to_dir=save_to_dir, save_prefix=save_prefix, save_format=save_format,
                                 follow_links=follow_links, subset=subset, interpolation=interpolation,
                                 dtype=self.dtype)

    def flow_from_dataframe(self, dataframe, directory=None, x_col="filename", y_col="class", weight_col=None,
                            target_size=(256, 256), color_mode="rgb", classes=None, class_mode="categorical",
                            batch_size=32, shuffle=True, seed=None, save_to_dir=None, save_prefix="",
                            save_format="png", subset=None, interpolation="nearest", validate_filenames=True,
                            **kwargs):
        """Batches of the images a pandas data frame lists (_dataframe_iterator.py); Keras' legacy arguments
        (has_ext, sort, drop_duplicates, class_mode="other") warn as there."""
        from ._dataframe_iterator import DataFrameIterator
        for legacy, message in (("has_ext", "has_ext is deprecated, filenames in the dataframe have to match the "
                                            "exact filenames in disk."),
                                ("sort", "sort is deprecated, batches will be created in thesame order than the "
                                         "filenames provided if shuffleis set to False."),
                                ("drop_duplicates", "drop_duplicates is deprecated, you can drop duplicates by "
                                                    "using the pandas.DataFrame.drop_duplicates method.")):
            if legacy in kwargs:
                warnings.warn(message, DeprecationWarning)
        if class_mode == "other":
            warnings.warn('`class_mode` "other" is deprecated, please use `class_mode` "raw".', DeprecationWarning)
            class_mode = "raw"
        return DataFrameIterator(dataframe, directory, self, x_col=x_col, y_col=y_col, weight_col=weight_col,
                                 target_size=target_size, color_mode=color_mode, classes=classes,
                                 class_mode=class_mode, data_format=self.data_format, batch_size=batch_size,
                                 shuffle=shuffle, seed=seed, save_to_dir=save_to_dir, save_prefix=save_prefix,
                                 save_format=save_format, subset=subset, interpolation=interpolation,
                                 validate_filenames=validate_filenames, dtype=self.dtype)

    def standardize(self, x):
        """The standardization steps, in place on x where it can: preprocessing_function, rescale, sample-wise
        then feature-wise centering and scaling, ZCA whitening."""
        if self.preprocessing_function:
            x = self.preprocessing_function(x)
        if self.rescale:
            x *= self.rescale
        if self.samplewise_center:
            x -= np.mean(x, keepdims=True)
        if self.samplewise_std_normalization:
            x /= np.std(x, keepdims=True) + 1e-6
        for flag, stat, what in ((self.featurewise_center, self.mean, "featurewise_center"),
                                 (self.featurewise_std_normalization, self.std, "featurewise_std_normalization")):
            if flag and stat is None:
                warnings.warn(f"This ImageDataGenerator specifies `{what}`, but it hasn't been fit on any training "
                              "data. Fit it first by calling `.fit(numpy_data)`.")
        if self.featurewise_center and self.mean is not None:
            x -= self.mean
        if self.featurewise_std_normalization and self.std is not None:
            x /= self.std + 1e-6
        if self.zca_whitening:
            if self.zca_whitening_matrix is not None:
                flat = x.reshape(-1, np.prod(x.shape[-3:]))
                x = np.reshape(flat @ self.zca_whitening_matrix, x.shape)
            else:
                warnings.warn("This ImageDataGenerator specifies `zca_whitening`, but it hasn't been fit on any "
                              "training data. Fit it first by calling `.fit(numpy_data)`.")
        return x

    def get_random_transform(self, img_shape, seed=None):
        """The random parameters of one image's transform, drawn from NumPy's global generator in Keras' order."""
        rows, cols = img_shape[self.row_axis - 1], img_shape[self.col_axis - 1]
        if seed is not None:
            np.random.seed(seed)
        theta = np.random.uniform(-self.rotation_range, self.rotation_range) if self.rotation_range else 0
        tx = _shift(self.height_shift_range, rows)
        ty = _shift(self.width_shift_range, cols)
        shear = np.random.uniform(-self.shear_range, self.shear_range) if self.shear_range else 0
        if self.zoom_range[0] == 1 and self.zoom_range[1] == 1:
            zx, zy = 1, 1
        else:
            zx, zy = np.random.uniform(self.zoom_range[0], self.zoom_range[1], 2)
        flip_horizontal = (np.random.random() < 0.5) * self.horizontal_flip
        flip_vertical = (np.random.random() < 0.5) * self.vertical_flip
        channel_shift = None
        if self.channel_shift_range != 0:
            channel_shift = np.random.uniform(-self.channel_shift_range, self.channel_shift_range)
        brightness = None
        if self.brightness_range is not None:
            brightness = np.random.uniform(self.brightness_range[0], self.brightness_range[1])
        return {"theta": theta, "tx": tx, "ty": ty, "shear": shear, "zx": zx, "zy": zy,
                "flip_horizontal": flip_horizontal, "flip_vertical": flip_vertical,
                "channel_shift_intensity": channel_shift, "brightness": brightness}

    def apply_transform(self, x, transform_parameters):
        """One image (3-D) transformed by the given parameters (get_random_transform's keys)."""
        p = transform_parameters
        row_axis, col_axis, channel_axis = self.row_axis - 1, self.col_axis - 1, self.channel_axis - 1
        x = apply_affine_transform(x, p.get("theta", 0), p.get("tx", 0), p.get("ty", 0), p.get("shear", 0),
                                   p.get("zx", 1), p.get("zy", 1), row_axis=row_axis, col_axis=col_axis,
                                   channel_axis=channel_axis, fill_mode=self.fill_mode, cval=self.cval,
                                   order=self.interpolation_order)
        if p.get("channel_shift_intensity") is not None:
            x = apply_channel_shift(x, p["channel_shift_intensity"], channel_axis)
        if p.get("flip_horizontal", False):
            x = flip_axis(x, col_axis)
        if p.get("flip_vertical", False):
            x = flip_axis(x, row_axis)
        if p.get("brightness") is not None:
            x = apply_brightness_shift(x, p["brightness"], False)
        return x

    def random_transform(self, x, seed=None):
        return self.apply_transform(x, self.get_random_transform(x.shape, seed))

    def fit(self, x, augment=False, rounds=1, seed=None):
        """The feature-wise statistics (per-channel mean and std, the ZCA matrix) of sample images (rescaled
        first; over `rounds` augmented copies when `augment`)."""
        x = np.asarray(x, dtype=self.dtype)
        if x.ndim != 4:
            raise ValueError(f"Input to `.fit()` should have rank 4. Got array with shape: {x.shape}")
        if x.shape[self.channel_axis] not in {1, 3, 4}:
            warnings.warn(f'Expected input to be images (as Numpy array) following the data format convention '
                          f'"{self.data_format}" (channels on axis {self.channel_axis}), i.e. expected either 1, 3 '
                          f"or 4 channels on axis {self.channel_axis}. However, it was passed an array with shape "
                          f"{x.shape} ({x.shape[self.channel_axis]} channels).")
        if seed is not None:
            np.random.seed(seed)
        x = np.copy(x)
        if self.rescale:
            x *= self.rescale
        if augment:
            ax = np.zeros((rounds * x.shape[0],) + x.shape[1:], dtype=self.dtype)
            for r in range(rounds):
                for i in range(x.shape[0]):
                    ax[i + r * x.shape[0]] = self.random_transform(x[i])
            x = ax
        shape = [1, 1, 1]
        shape[self.channel_axis - 1] = x.shape[self.channel_axis]
        if self.featurewise_center:
            self.mean = np.reshape(np.mean(x, axis=(0, self.row_axis, self.col_axis)), shape)
            x -= self.mean
        if self.featurewise_std_normalization:
            self.std = np.reshape(np.std(x, axis=(0, self.row_axis, self.col_axis)), shape)
            x /= self.std + 1e-6
        if self.zca_whitening:
            n = len(x)
            u, s, _ = np.linalg.svd(np.reshape(x, (n, -1)).T, full_matrices=False)
            self.zca_whitening_matrix = (u * (np.sqrt(n) / (s + self.zca_epsilon))) @ u.T


def _shift(shift_range, size):
    """A shift in pixels: a float range is a fraction of `size` (below 1) or pixels; ints and lists are choices."""
    if not shift_range:
        return 0
    try:  # a list of choices, or an int (choices of -n..n-1 times a random sign, as Keras draws them)
        shift = np.random.choice(shift_range)
        shift *= np.random.choice([-1, 1])
    except ValueError:  # a float
        shift = np.random.uniform(-shift_range, shift_range)
    if np.max(shift_range) < 1:
        shift *= size
    return shift
