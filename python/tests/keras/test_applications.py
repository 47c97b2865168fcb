"""tf.keras.applications: Keras' architectures (parameter counts from keras.io's applications table and TF's
transfer-learning tutorial), layer names and weight order, weights files, and the pre/post-processing."""
import json
import os

import numpy as np
import pytest

import kiln as tf

K = tf.keras
A = K.applications


def _counts(model):
    trainable = sum(int(np.prod(w.shape.as_list())) for w in model.trainable_weights)
    return model.count_params(), trainable


def test_resnet50_matches_keras_table_names_and_weight_order():
    model = A.ResNet50(weights=None)
    assert model.name == "resnet50" and _counts(model) == (25636712, 25583592)  # keras.io: 25.6M parameters
    assert len(model.layers) == 177 and model.output_shape == (None, 1000)
    names = [layer.name for layer in model.layers]
    # Keras orders a functional model's layers by depth: a block's shortcut convolution comes after its second conv.
    assert names[0].startswith("input_") and names[1:20] == [
        "conv1_pad", "conv1_conv", "conv1_bn", "conv1_relu", "pool1_pad", "pool1_pool", "conv2_block1_1_conv",
        "conv2_block1_1_bn", "conv2_block1_1_relu", "conv2_block1_2_conv", "conv2_block1_2_bn", "conv2_block1_2_relu",
        "conv2_block1_0_conv", "conv2_block1_3_conv", "conv2_block1_0_bn", "conv2_block1_3_bn", "conv2_block1_add",
        "conv2_block1_out", "conv2_block2_1_conv"]
    assert names[-3:] == ["conv5_block3_out", "avg_pool", "predictions"]
    weights = [w.name for w in model.weights]
    assert weights[:8] == ["conv1_conv/kernel:0", "conv1_conv/bias:0", "conv1_bn/gamma:0", "conv1_bn/beta:0",
                           "conv1_bn/moving_mean:0", "conv1_bn/moving_variance:0", "conv2_block1_1_conv/kernel:0",
                           "conv2_block1_1_conv/bias:0"]
    assert weights[-2:] == ["predictions/kernel:0", "predictions/bias:0"] and len(weights) == 320


def test_mobilenet_v2_matches_keras_table_and_tf_tutorial():
    model = A.MobileNetV2(weights=None)
    assert model.name == "mobilenetv2_1.00_224" and _counts(model) == (3538984, 3504872)  # keras.io: 3.5M
    assert len(model.layers) == 156
    # TF's transfer-learning tutorial: MobileNetV2((160, 160, 3), include_top=False) has 154 layers, 2,257,984
    # parameters of which 34,112 non-trainable, and turns a batch into (batch, 5, 5, 1280) features.
    base = A.MobileNetV2(input_shape=(160, 160, 3), include_top=False, weights=None)
    assert len(base.layers) == 154 and _counts(base) == (2257984, 2223872) and base.output_shape == (None, 5, 5, 1280)
    assert base.name == "mobilenetv2_1.00_160"
    names = [layer.name for layer in base.layers]
    assert names[1:9] == ["Conv1", "bn_Conv1", "Conv1_relu", "expanded_conv_depthwise", "expanded_conv_depthwise_BN",
                          "expanded_conv_depthwise_relu", "expanded_conv_project", "expanded_conv_project_BN"]
    assert "block_1_pad" in names and "block_2_add" in names and names[-3:] == ["Conv_1", "Conv_1_bn", "out_relu"]
    assert [w.name for w in base.get_layer("block_1_depthwise").weights] == ["block_1_depthwise/depthwise_kernel:0"]
    half = A.MobileNetV2(alpha=0.5, input_shape=(96, 96, 3), weights=None, classes=10, classifier_activation=None)
    assert half.name == "mobilenetv2_0.50_96" and half.output_shape == (None, 10)
    assert half.get_layer("Conv1").weights[0].shape == (3, 3, 3, 16)


def test_include_top_pooling_classes_and_input_tensor():
    assert A.ResNet50(include_top=False, weights=None, input_shape=(64, 64, 3)).output_shape == (None, 2, 2, 2048)
    pooled = A.ResNet50(include_top=False, weights=None, input_shape=(64, 64, 3), pooling="max")
    assert pooled.output_shape == (None, 2048) and pooled.layers[-1].name == "max_pool"
    assert A.MobileNetV2(include_top=False, weights=None, input_shape=(32, 32, 3), pooling="avg").output_shape == \
        (None, 1280)
    small = A.ResNet50(weights=None, input_shape=(32, 32, 3), classes=3)
    assert small.output_shape == (None, 3) and small.count_params() == 25636712 - 997 * 2049
    inputs = K.Input((48, 48, 3))
    model = A.MobileNetV2(input_tensor=inputs, include_top=False, weights=None)
    assert model.inputs[0] is inputs and model.name == "mobilenetv2_1.00_None"  # Keras names it so too


def test_bad_arguments_raise_keras_errors(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="`classes` should be 1000"):
        A.ResNet50(weights="imagenet", classes=10)
    with pytest.raises(ValueError, match="The `weights` argument should be either"):
        A.MobileNetV2(weights="no/such/file.h5")
    with pytest.raises(ValueError, match="Input size must be at least 32x32"):
        A.ResNet50(include_top=False, weights=None, input_shape=(16, 16, 3))
    with pytest.raises(ValueError, match="you should specify a static `input_shape`"):
        A.ResNet50(weights=None, input_shape=(None, None, 3))
    with pytest.raises(ValueError, match="alpha must be one of"):
        A.MobileNetV2(alpha=0.6)
    with pytest.raises(ValueError, match="Unknown argument"):
        A.ResNet50(weights=None, depth=3)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(Exception, match="resnet50_weights_tf_dim_ordering_tf_kernels_notop.h5"):
        A.ResNet50(include_top=False, input_shape=(32, 32, 3))


@pytest.mark.parametrize("suffix", [".h5", ".weights.h5"])
def test_weights_path_loads_a_keras_weights_file(tmp_path, suffix):
    K.utils.set_random_seed(1)
    source = A.MobileNetV2(alpha=0.35, input_shape=(32, 32, 3), include_top=False, weights=None, pooling="avg")
    x = np.random.default_rng(0).uniform(-1, 1, (2, 32, 32, 3)).astype("float32")
    path = str(tmp_path / f"mobilenet{suffix}")
    source.save_weights(path)
    loaded = A.MobileNetV2(alpha=0.35, input_shape=(32, 32, 3), include_top=False, weights=path, pooling="avg")
    for a, b in zip(source.weights, loaded.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_allclose(loaded.predict(x, verbose=0), source.predict(x, verbose=0), rtol=1e-6, atol=1e-6)


def test_imagenet_weights_come_from_keras_cache(tmp_path, monkeypatch):
    # Keras' cache stands in for the download: the file of Keras' name is read from $KERAS_HOME/models.
    K.utils.set_random_seed(2)
    source = A.ResNet50(include_top=False, weights=None, input_shape=(32, 32, 3))
    os.makedirs(tmp_path / "models")
    source.save_weights(str(tmp_path / "models" / "resnet50_weights_tf_dim_ordering_tf_kernels_notop.h5"))
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    loaded = A.ResNet50(include_top=False, input_shape=(32, 32, 3))
    np.testing.assert_array_equal(loaded.get_layer("conv5_block3_3_bn").moving_variance.numpy(),
                                  source.get_layer("conv5_block3_3_bn").moving_variance.numpy())


def test_preprocess_input_modes():
    rng = np.random.default_rng(3)
    images = rng.uniform(0, 255, (2, 4, 4, 3))
    expected_caffe = images[..., ::-1] - np.array([103.939, 116.779, 123.68])
    out = A.resnet50.preprocess_input(images.astype("float32").copy())
    np.testing.assert_allclose(out, expected_caffe, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(A.mobilenet_v2.preprocess_input(images.copy()), images / 127.5 - 1, rtol=1e-12)
    torch = A.imagenet_utils.preprocess_input(images.copy(), mode="torch")
    np.testing.assert_allclose(torch, (images / 255 - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225], rtol=1e-12)
    # channels_first: the channel axis is 1 (0 for one image)
    first = np.moveaxis(images, -1, 1)
    np.testing.assert_allclose(A.resnet.preprocess_input(first.copy(), data_format="channels_first"),
                               np.moveaxis(expected_caffe, -1, 1), rtol=1e-12)
    # integer images become float32; tensors give tensors with the same values
    assert A.resnet50.preprocess_input(images.astype("uint8")).dtype == np.float32
    tensor = A.resnet50.preprocess_input(tf.constant(images, tf.float32))
    np.testing.assert_allclose(tensor.numpy(), expected_caffe, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(A.mobilenet_v2.preprocess_input(tf.constant(images)).numpy(), images / 127.5 - 1)
    with pytest.raises(ValueError, match="Expected mode to be one of"):
        A.imagenet_utils.preprocess_input(images, mode="keras")


def test_decode_predictions_reads_the_class_index_from_keras_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    monkeypatch.setattr(A.imagenet_utils, "_CLASS_INDEX", None)
    os.makedirs(tmp_path / "models")
    index = {str(i): [f"n{i:08d}", f"class_{i}"] for i in range(1000)}
    with open(tmp_path / "models" / "imagenet_class_index.json", "w") as f:
        json.dump(index, f)
    preds = np.zeros((2, 1000), np.float32)
    preds[0, [5, 7, 9]] = [0.2, 0.5, 0.3]
    preds[1, 999] = 1.0
    decoded = A.resnet50.decode_predictions(preds, top=3)
    assert [(c, n) for c, n, _ in decoded[0]] == [("n00000007", "class_7"), ("n00000009", "class_9"),
                                                  ("n00000005", "class_5")]
    assert decoded[0][0][2] == pytest.approx(0.5) and decoded[1][0][:2] == ("n00000999", "class_999")
    with pytest.raises(ValueError, match=r"Found array with shape: \(2, 10\)"):
        A.mobilenet_v2.decode_predictions(np.zeros((2, 10)))


@pytest.mark.parametrize("make, params, convs", [(K.applications.VGG16, 14_714_688, 13),
                                                 (K.applications.VGG19, 20_024_384, 16)])
def test_vgg_matches_keras_table_and_names(make, params, convs):
    """Keras' documented sizes without the top; the top on a small input: fc1 from the 1 x 1 x 512 features."""
    base = make(include_top=False, weights=None, input_shape=(32, 32, 3))
    assert base.count_params() == params
    names = [layer.name for layer in base.layers]
    assert names[1:4] == ["block1_conv1", "block1_conv2", "block1_pool"] and names[-1] == "block5_pool"
    assert sum(isinstance(layer, K.layers.Conv2D) for layer in base.layers) == convs
    assert base.output_shape == (None, 1, 1, 512)
    top = make(weights=None, input_shape=(32, 32, 3), classes=10)
    assert [layer.name for layer in top.layers][-4:] == ["flatten", "fc1", "fc2", "predictions"]
    assert top.count_params() == params + 512 * 4096 + 4096 + 4096 * 4096 + 4096 + 4096 * 10 + 10
    pooled = make(include_top=False, weights=None, input_shape=(64, 64, 3), pooling="avg")
    assert pooled.output_shape == (None, 512)
    x = np.random.default_rng(0).uniform(0, 255, (1, 32, 32, 3)).astype(np.float32)
    np.testing.assert_allclose(K.applications.vgg16.preprocess_input(x.copy()),
                               x[..., ::-1] - np.array([103.939, 116.779, 123.68], np.float32), rtol=1e-6)


def test_resnet50_v2_matches_keras_table_and_names():
    model = K.applications.ResNet50V2(weights=None)
    assert model.count_params() == 25_613_800
    names = [layer.name for layer in model.layers]
    assert names[1:5] == ["conv1_pad", "conv1_conv", "pool1_pad", "pool1_pool"]
    assert "conv2_block1_preact_bn" in names and names[-4:] == ["post_bn", "post_relu", "avg_pool", "predictions"]
    assert model.output_shape == (None, 1000)
    small = K.applications.ResNet101V2(include_top=False, weights=None, input_shape=(64, 64, 3), pooling="max")
    assert small.output_shape == (None, 2048)
    x = np.full((1, 2, 2, 3), 255.0, np.float32)
    np.testing.assert_allclose(K.applications.resnet_v2.preprocess_input(x.copy()), np.ones_like(x))


def test_mobilenet_matches_keras_table_and_names():
    model = K.applications.MobileNet(weights=None)
    assert model.count_params() == 4_253_864 and model.name == "mobilenet_1.00_224"
    names = [layer.name for layer in model.layers]
    assert names[1:4] == ["conv1", "conv1_bn", "conv1_relu"] and "conv_pad_12" in names
    assert names[-4:] == ["dropout", "conv_preds", "reshape_2", "predictions"]
    half = K.applications.MobileNet(input_shape=(128, 128, 3), alpha=0.5, include_top=False, weights=None,
                                    pooling="avg")
    assert half.output_shape == (None, 512) and half.name == "mobilenet_0.50_128"
    with pytest.raises(ValueError, match="depth multiplier must be 1"):
        K.applications.MobileNet(depth_multiplier=2)


def test_densenet121_matches_keras_table_and_names():
    model = K.applications.DenseNet121(weights=None)
    assert model.count_params() == 8_062_504
    names = [layer.name for layer in model.layers]
    assert "conv1/conv" in names and "conv2_block6_concat" in names and "pool4_pool" in names
    assert names[-4:] == ["bn", "relu", "avg_pool", "predictions"]
    assert model.get_layer("conv1/conv").weights[0].name == "conv1/conv/kernel:0"
    small = K.applications.DenseNet169(include_top=False, weights=None, input_shape=(64, 64, 3), pooling="avg")
    assert small.output_shape == (None, 1664)


def test_xception_matches_keras_table_and_names():
    model = K.applications.Xception(weights=None)
    assert model.count_params() == 22_910_480 and model.input_shape == (None, 299, 299, 3)
    names = [layer.name for layer in model.layers]
    assert names[1:4] == ["block1_conv1", "block1_conv1_bn", "block1_conv1_act"]
    assert "block12_sepconv3_bn" in names and names[-2:] == ["avg_pool", "predictions"]
    assert K.applications.Xception(include_top=False, weights=None, input_shape=(71, 71, 3)).output_shape == \
        (None, 3, 3, 2048)


def test_inception_v3_matches_keras_table_and_names():
    model = K.applications.InceptionV3(weights=None)
    assert model.count_params() == 23_851_784 and model.input_shape == (None, 299, 299, 3)
    names = [layer.name for layer in model.layers]
    for name in ("mixed0", "mixed3", "mixed7", "mixed9_0", "mixed9_1", "mixed10"):
        assert name in names
    assert model.get_layer("mixed7").output_shape == (None, 17, 17, 768)
    assert model.get_layer("mixed10").output_shape == (None, 8, 8, 2048)


def test_inception_resnet_v2_matches_keras_table_and_names():
    model = K.applications.InceptionResNetV2(weights=None)
    assert model.count_params() == 55_873_736
    names = [layer.name for layer in model.layers]
    for name in ("mixed_5b", "block35_10_mixed", "mixed_6a", "block17_20_conv", "mixed_7a", "block8_10_conv",
                 "conv_7b", "conv_7b_ac"):
        assert name in names
    assert "block8_10_ac" not in names  # the last block has no activation
    assert model.get_layer("conv_7b_ac").output_shape == (None, 8, 8, 1536)


def test_mobilenet_v3_matches_keras_tables_and_names():
    small = K.applications.MobileNetV3Small(weights=None)
    assert small.count_params() == 2_554_968 and small.name == "MobilenetV3small"
    large = K.applications.MobileNetV3Large(weights=None)
    assert large.count_params() == 5_507_432
    names = [layer.name for layer in large.layers]
    for name in ("conv", "conv/BatchNorm", "expanded_conv/depthwise", "expanded_conv_3/squeeze_excite/AvgPool",
                 "expanded_conv_14/project/BatchNorm", "conv_1", "conv_2", "logits", "predictions"):
        assert name in names
    x = np.full((1, 224, 224, 3), 127.5, np.float32)
    assert K.applications.mobilenet_v3.preprocess_input(x) is x  # the model rescales its inputs itself
    minimal = K.applications.MobileNetV3Small(weights=None, minimalistic=True, include_top=False, pooling="avg",
                                              input_shape=(96, 96, 3))
    assert minimal.output_shape == (None, 576)


def test_efficientnet_matches_keras_tables_and_names():
    b0 = K.applications.EfficientNetB0(weights=None)
    assert b0.count_params() == 5_330_571 and b0.name == "efficientnetb0"
    names = [layer.name for layer in b0.layers]
    for name in ("stem_conv", "block1a_se_excite", "block2b_drop", "block2b_add", "block7a_project_bn", "top_conv",
                 "top_dropout", "predictions"):
        assert name in names
    assert K.applications.EfficientNetB1(weights=None).count_params() == 7_856_239
    b3 = K.applications.EfficientNetB3(include_top=False, weights=None, input_shape=(64, 64, 3), pooling="avg")
    assert b3.output_shape == (None, 1536)
    x = np.zeros((1, 8, 8, 3), np.float32)
    assert K.applications.efficientnet.preprocess_input(x) is x
