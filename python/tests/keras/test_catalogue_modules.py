"""The rest of tf.keras 2.15's public namespaces (layers, callbacks, utils, backend, models, saving, preprocessing,
datasets, applications, optimizers.schedules / legacy, layers.experimental), listed from Keras 2.15's API golden
files (keras/api/golden/v2), against kiln.keras; what Kiln leaves out is listed with the reason and checked to be
absent, so neither list drifts silently. (initializers, losses, metrics and the other catalogues: test_catalogue.)"""
import functools

import pytest

import kiln as tf

KERAS_2_15 = {}
KERAS_2_15.update({
    "applications": [
        "ConvNeXtBase", "ConvNeXtLarge", "ConvNeXtSmall", "ConvNeXtTiny", "ConvNeXtXLarge", "DenseNet121",
        "DenseNet169", "DenseNet201", "EfficientNetB0", "EfficientNetB1", "EfficientNetB2", "EfficientNetB3",
        "EfficientNetB4", "EfficientNetB5", "EfficientNetB6", "EfficientNetB7", "EfficientNetV2B0",
        "EfficientNetV2B1", "EfficientNetV2B2", "EfficientNetV2B3", "EfficientNetV2L", "EfficientNetV2M",
        "EfficientNetV2S", "InceptionResNetV2", "InceptionV3", "MobileNet", "MobileNetV2", "MobileNetV3Large",
        "MobileNetV3Small", "NASNetLarge", "NASNetMobile", "RegNetX002", "RegNetX004", "RegNetX006", "RegNetX008",
        "RegNetX016", "RegNetX032", "RegNetX040", "RegNetX064", "RegNetX080", "RegNetX120", "RegNetX160",
        "RegNetX320", "RegNetY002", "RegNetY004", "RegNetY006", "RegNetY008", "RegNetY016", "RegNetY032",
        "RegNetY040", "RegNetY064", "RegNetY080", "RegNetY120", "RegNetY160", "RegNetY320", "ResNet101",
        "ResNet101V2", "ResNet152", "ResNet152V2", "ResNet50", "ResNet50V2", "ResNetRS101", "ResNetRS152",
        "ResNetRS200", "ResNetRS270", "ResNetRS350", "ResNetRS420", "ResNetRS50", "VGG16", "VGG19", "Xception",
        "convnext", "densenet", "efficientnet", "efficientnet_v2", "imagenet_utils", "inception_resnet_v2",
        "inception_v3", "mobilenet", "mobilenet_v2", "mobilenet_v3", "nasnet", "regnet", "resnet", "resnet50",
        "resnet_rs", "resnet_v2", "vgg16", "vgg19", "xception"],
    "backend": [
        "abs", "all", "any", "arange", "argmax", "argmin", "backend", "batch_dot", "batch_flatten",
        "batch_get_value", "batch_normalization", "batch_set_value", "bias_add", "binary_crossentropy",
        "binary_focal_crossentropy", "cast", "cast_to_floatx", "categorical_crossentropy",
        "categorical_focal_crossentropy", "clear_session", "clip", "concatenate", "constant", "conv1d", "conv2d",
        "conv2d_transpose", "conv3d", "cos", "count_params", "ctc_batch_cost", "ctc_decode",
        "ctc_label_dense_to_sparse", "cumprod", "cumsum", "depthwise_conv2d", "dot", "dropout", "dtype", "elu",
        "epsilon", "equal", "eval", "exp", "expand_dims", "experimental", "eye", "flatten", "floatx", "foldl",
        "foldr", "function", "gather", "get_uid", "get_value", "gradients", "greater", "greater_equal",
        "hard_sigmoid", "image_data_format", "in_test_phase", "in_top_k", "in_train_phase", "int_shape",
        "is_keras_tensor", "is_sparse", "l2_normalize", "learning_phase", "learning_phase_scope", "less",
        "less_equal", "local_conv1d", "local_conv2d", "log", "manual_variable_initialization", "map_fn", "max",
        "maximum", "mean", "min", "minimum", "moving_average_update", "name_scope", "ndim",
        "normalize_batch_in_training", "not_equal", "one_hot", "ones", "ones_like", "permute_dimensions",
        "placeholder", "pool2d", "pool3d", "pow", "print_tensor", "prod", "random_bernoulli", "random_binomial",
        "random_normal", "random_normal_variable", "random_uniform", "random_uniform_variable", "relu", "repeat",
        "repeat_elements", "reset_uids", "reshape", "resize_images", "resize_volumes", "reverse", "rnn", "round",
        "separable_conv2d", "set_epsilon", "set_floatx", "set_image_data_format", "set_learning_phase", "set_value",
        "shape", "sigmoid", "sign", "sin", "softmax", "softplus", "softsign", "sparse_categorical_crossentropy",
        "spatial_2d_padding", "spatial_3d_padding", "sqrt", "square", "squeeze", "stack", "std", "stop_gradient",
        "sum", "switch", "tanh", "temporal_padding", "tile", "to_dense", "transpose", "truncated_normal", "update",
        "update_add", "update_sub", "var", "variable", "zeros", "zeros_like"],
    "callbacks": [
        "BackupAndRestore", "BaseLogger", "CSVLogger", "Callback", "CallbackList", "EarlyStopping", "History",
        "LambdaCallback", "LearningRateScheduler", "ModelCheckpoint", "ProgbarLogger", "ReduceLROnPlateau",
        "RemoteMonitor", "SidecarEvaluatorModelExport", "TensorBoard", "TerminateOnNaN", "experimental"],
    "datasets": [
        "boston_housing", "cifar10", "cifar100", "fashion_mnist", "imdb", "mnist", "reuters"],
    "layers": [
        "AbstractRNNCell", "Activation", "ActivityRegularization", "Add", "AdditiveAttention", "AlphaDropout",
        "Attention", "Average", "AveragePooling1D", "AveragePooling2D", "AveragePooling3D", "AvgPool1D",
        "AvgPool2D", "AvgPool3D", "BatchNormalization", "Bidirectional", "CategoryEncoding", "CenterCrop",
        "Concatenate", "Conv1D", "Conv1DTranspose", "Conv2D", "Conv2DTranspose", "Conv3D", "Conv3DTranspose",
        "ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D", "Convolution1D", "Convolution1DTranspose", "Convolution2D",
        "Convolution2DTranspose", "Convolution3D", "Convolution3DTranspose", "Cropping1D", "Cropping2D",
        "Cropping3D", "Dense", "DenseFeatures", "DepthwiseConv1D", "DepthwiseConv2D", "Discretization", "Dot",
        "Dropout", "ELU", "EinsumDense", "Embedding", "Flatten", "GRU", "GRUCell", "GaussianDropout",
        "GaussianNoise", "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D",
        "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D",
        "GlobalMaxPool3D", "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D", "GroupNormalization",
        "HashedCrossing", "Hashing", "Identity", "Input", "InputLayer", "InputSpec", "IntegerLookup", "LSTM",
        "LSTMCell", "Lambda", "Layer", "LayerNormalization", "LeakyReLU", "LocallyConnected1D",
        "LocallyConnected2D", "Masking", "MaxPool1D", "MaxPool2D", "MaxPool3D", "MaxPooling1D", "MaxPooling2D",
        "MaxPooling3D", "Maximum", "Minimum", "MultiHeadAttention", "Multiply", "Normalization", "PReLU", "Permute",
        "RNN", "RandomBrightness", "RandomContrast", "RandomCrop", "RandomFlip", "RandomHeight", "RandomRotation",
        "RandomTranslation", "RandomWidth", "RandomZoom", "ReLU", "RepeatVector", "Rescaling", "Reshape",
        "Resizing", "SeparableConv1D", "SeparableConv2D", "SeparableConvolution1D", "SeparableConvolution2D",
        "SimpleRNN", "SimpleRNNCell", "Softmax", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D",
        "SpectralNormalization", "StackedRNNCells", "StringLookup", "Subtract", "TextVectorization",
        "ThresholdedReLU", "TimeDistributed", "UnitNormalization", "UpSampling1D", "UpSampling2D", "UpSampling3D",
        "Wrapper", "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D", "add", "average", "concatenate",
        "deserialize", "dot", "experimental", "maximum", "minimum", "multiply", "serialize", "subtract"],
    "layers.experimental": [
        "EinsumDense", "RandomFourierFeatures", "SyncBatchNormalization", "preprocessing"],
    "layers.experimental.preprocessing": [
        "CategoryEncoding", "CenterCrop", "Discretization", "HashedCrossing", "Hashing", "IntegerLookup",
        "Normalization", "PreprocessingLayer", "RandomContrast", "RandomCrop", "RandomFlip", "RandomHeight",
        "RandomRotation", "RandomTranslation", "RandomWidth", "RandomZoom", "Rescaling", "Resizing", "StringLookup",
        "TextVectorization"],
    "models": [
        "Model", "Sequential", "clone_model", "experimental", "load_model", "model_from_config", "model_from_json",
        "model_from_yaml", "save_model"],
    "optimizers.legacy": [
        "Adadelta", "Adagrad", "Adam", "Adamax", "Ftrl", "Nadam", "Optimizer", "RMSprop", "SGD"],
    "optimizers.schedules": [
        "CosineDecay", "CosineDecayRestarts", "ExponentialDecay", "InverseTimeDecay", "LearningRateSchedule",
        "PiecewiseConstantDecay", "PolynomialDecay", "deserialize", "serialize"],
    "preprocessing": [
        "image", "image_dataset_from_directory", "sequence", "text", "text_dataset_from_directory",
        "timeseries_dataset_from_array"],
    "preprocessing.image": [
        "DirectoryIterator", "ImageDataGenerator", "Iterator", "NumpyArrayIterator", "apply_affine_transform",
        "apply_brightness_shift", "apply_channel_shift", "array_to_img", "img_to_array", "load_img",
        "random_brightness", "random_channel_shift", "random_rotation", "random_shear", "random_shift",
        "random_zoom", "save_img", "smart_resize"],
    "preprocessing.sequence": [
        "TimeseriesGenerator", "make_sampling_table", "pad_sequences", "skipgrams"],
    "preprocessing.text": [
        "Tokenizer", "hashing_trick", "one_hot", "text_to_word_sequence", "tokenizer_from_json"],
    "saving": [
        "custom_object_scope", "deserialize_keras_object", "get_custom_objects", "get_registered_name",
        "get_registered_object", "load_model", "register_keras_serializable", "save_model", "serialize_keras_object"],
    "utils": [
        "CustomObjectScope", "FeatureSpace", "GeneratorEnqueuer", "OrderedEnqueuer", "Progbar", "Sequence",
        "SequenceEnqueuer", "SidecarEvaluator", "StepsPerExecutionTuner", "TimedThread", "array_to_img",
        "audio_dataset_from_directory", "custom_object_scope", "deserialize_keras_object",
        "disable_interactive_logging", "enable_interactive_logging", "experimental", "get_custom_objects",
        "get_file", "get_registered_name", "get_registered_object", "get_source_inputs",
        "image_dataset_from_directory", "img_to_array", "is_interactive_logging_enabled", "legacy", "load_img",
        "model_to_dot", "normalize", "pack_x_y_sample_weight", "pad_sequences", "plot_model",
        "register_keras_serializable", "save_img", "serialize_keras_object", "set_random_seed", "split_dataset",
        "text_dataset_from_directory", "timeseries_dataset_from_array", "to_categorical", "to_ordinal",
        "unpack_x_y_sample_weight", "warmstart_embedding_matrix"],
})

LEFT_OUT = {}  # every public name of Keras 2.15 is in Kiln


def _module(path):
    return functools.reduce(getattr, path.split("."), tf.keras)


@pytest.mark.parametrize("path", sorted(KERAS_2_15))
def test_every_public_name_exists_or_is_left_out_with_a_reason(path):
    module = _module(path)
    left_out = LEFT_OUT.get(path, {})
    missing = [n for n in KERAS_2_15[path] if not hasattr(module, n) and n not in left_out]
    assert missing == [], f"tf.keras.{path} lacks {missing}"
    now_there = [n for n in left_out if hasattr(module, n)]
    assert now_there == [], f"tf.keras.{path} has {now_there} now: take them out of LEFT_OUT"
    assert set(left_out) <= set(KERAS_2_15[path])
