"""ImageDataGenerator.flow_from_dataframe's iterator (Keras 2.15's DataFrameIterator): the images a pandas data
frame names (column x_col, paths relative to `directory`), their labels from y_col as `class_mode` says
(class names for "categorical" / "binary" / "sparse", values for "raw", several columns for "multi_output")
and optional sample weights from weight_col. Rows whose file is missing or not an image are dropped when
validate_filenames is on (with Keras' warning)."""
import collections
import os
import warnings

import numpy as np

from ._image_data_generator import BatchFromFiles


def validate_filename(filename, white_list_formats):
    """Whether `filename` is an existing file with an image extension."""
    return filename.lower().endswith(white_list_formats) and os.path.isfile(filename)


class DataFrameIterator(BatchFromFiles):
    allowed_class_modes = {"binary", "categorical", "input", "multi_output", "raw", "sparse", None}

    def __init__(self, dataframe, directory=None, image_data_generator=None, x_col="filename", y_col="class",
                 weight_col=None, target_size=(256, 256), color_mode="rgb", classes=None, class_mode="categorical",
                 batch_size=32, shuffle=True, seed=None, data_format="channels_last", save_to_dir=None,
                 save_prefix="", save_format="png", subset=None, interpolation="nearest", keep_aspect_ratio=False,
                 dtype="float32", validate_filenames=True):
        self._set_processing_attrs(image_data_generator, target_size, color_mode, data_format, save_to_dir,
                                   save_prefix, save_format, subset, interpolation, keep_aspect_ratio)
        df = dataframe.copy()
        self.directory = directory or ""
        self.class_mode = class_mode
        self.dtype = dtype
        self._check_params(df, x_col, y_col, weight_col, classes)
        if validate_filenames:
            df = self._filter_valid_filepaths(df, x_col)
        labelled = class_mode not in ("input", "multi_output", "raw", None)
        if labelled:
            df, classes = self._filter_classes(df, y_col, classes)
            self.class_indices = dict(zip(classes, range(len(classes))))
        if self.split:
            count = len(df)
            df = df.iloc[int(self.split[0] * count):int(self.split[1] * count), :]
        if labelled:
            self.classes = self.get_classes(df, y_col)
        self.filenames = df[x_col].tolist()
        self._sample_weight = df[weight_col].values if weight_col else None
        if class_mode == "multi_output":
            self._targets = [np.array(df[col].tolist()) for col in y_col]
        if class_mode == "raw":
            self._targets = df[y_col].values
        self.samples = len(self.filenames)
        validated = "validated" if validate_filenames else "non-validated"
        if labelled:
            print(f"Found {self.samples} {validated} image filenames belonging to {len(classes)} classes.")
        else:
            print(f"Found {self.samples} {validated} image filenames.")
        self._filepaths = [os.path.join(self.directory, name) for name in self.filenames]
        super().__init__(self.samples, batch_size, shuffle, seed)

    def _check_params(self, df, x_col, y_col, weight_col, classes):
        """Keras' checks of the columns against class_mode, with its messages."""
        mode = self.class_mode
        if mode not in self.allowed_class_modes:
            raise ValueError(f"Invalid class_mode: {mode}; expected one of: {self.allowed_class_modes}")
        if mode == "multi_output" and not isinstance(y_col, list):
            raise TypeError(f'If class_mode="{mode}", y_col must be a list. Received {type(y_col).__name__}.')
        if not all(df[x_col].apply(lambda x: isinstance(x, str))):
            raise TypeError(f"All values in column x_col={x_col} must be strings.")
        if mode in {"binary", "sparse"} and not all(df[y_col].apply(lambda x: isinstance(x, str))):
            raise TypeError(f'If class_mode="{mode}", y_col="{y_col}" column values must be strings.')
        if mode == "binary":
            if classes and len(set(classes)) != 2:
                raise ValueError(f'If class_mode="binary" there must be 2 classes. {len(set(classes))} class/es '
                                 "were given.")
            if not classes and df[y_col].nunique() != 2:
                raise ValueError(f'If class_mode="binary" there must be 2 classes. Found {df[y_col].nunique()} '
                                 "classes.")
        if mode == "categorical" and not all(df[y_col].apply(lambda x: isinstance(x, (str, list, tuple)))):
            raise TypeError(f'If class_mode="{mode}", y_col="{y_col}" column values must be type string, list or '
                            "tuple.")
        if classes and mode in {"input", "multi_output", "raw", None}:
            warnings.warn(f'`classes` will be ignored given the class_mode="{mode}"')
        if weight_col and not issubclass(df[weight_col].dtype.type, np.number):
            raise TypeError(f"Column weight_col={weight_col} must be numeric.")

    def get_classes(self, df, y_col):
        """Each row's class index, or list of them (a multi-label row)."""
        return [[self.class_indices[c] for c in label] if isinstance(label, (list, tuple))
                else self.class_indices[label] for label in df[y_col]]

    @staticmethod
    def _filter_classes(df, y_col, classes):
        """The rows with a class among `classes` (a multi-label row keeps the ones listed), and the classes: as
        given (duplicates dropped), else every class found, sorted."""
        df = df.copy()

        def keep(labels):
            if isinstance(labels, (list, tuple)):
                return [c for c in labels if c in classes] or None
            if isinstance(labels, str):
                return labels if labels in classes else None
            raise TypeError(f"Expect string, list or tuple but found {type(labels)} in {y_col} column ")

        if classes:
            classes = list(collections.OrderedDict.fromkeys(classes).keys())
            df[y_col] = df[y_col].apply(keep)
        else:
            found = set()
            for v in df[y_col]:
                if isinstance(v, (list, tuple)):
                    found.update(v)
                else:
                    found.add(v)
            classes = sorted(found)
        return df.dropna(subset=[y_col]), classes

    def _filter_valid_filepaths(self, df, x_col):
        paths = df[x_col].map(lambda name: os.path.join(self.directory, name))
        mask = paths.apply(validate_filename, args=(self.white_list_formats,))
        invalid = int((~mask).sum())
        if invalid:
            warnings.warn(f'Found {invalid} invalid image filename(s) in x_col="{x_col}". These filename(s) will be '
                          "ignored.")
        return df[mask]

    @property
    def filepaths(self):
        return self._filepaths

    @property
    def labels(self):
        return self._targets if self.class_mode in {"multi_output", "raw"} else self.classes

    @property
    def sample_weight(self):
        return self._sample_weight
