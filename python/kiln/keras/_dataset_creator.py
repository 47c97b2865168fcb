"""tf.keras.utils.experimental.DatasetCreator: a function of an InputContext that makes the dataset, which fit,
evaluate and predict call through the model's strategy (distribute_datasets_from_function)."""


class DatasetCreator:
    """Wraps dataset_fn(input_context) -> tf.data.Dataset; `input_options` (a tf.distribute.InputOptions) goes to
    the strategy. fit/evaluate/predict need steps_per_epoch / steps with it, as in Keras."""

    def __init__(self, dataset_fn, input_options=None):
        if not callable(dataset_fn):
            raise TypeError("`dataset_fn` for `DatasetCreator` must be a `callable`. Received: {}".format(dataset_fn))
        from ..distribute import InputOptions
        if input_options and not isinstance(input_options, InputOptions):
            raise TypeError("`input_options` for `DatasetCreator` must be a `tf.distribute.InputOptions`. Received: "
                            "{}".format(input_options))
        self.dataset_fn = dataset_fn
        self.input_options = input_options

    def __call__(self, *args, **kwargs):
        import kiln
        dataset = self.dataset_fn(*args, **kwargs)
        if not isinstance(dataset, kiln.data.Dataset):
            raise TypeError("The `callable` provided to `DatasetCreator` must return a Dataset. It returns "
                            f"{dataset}")
        return dataset
