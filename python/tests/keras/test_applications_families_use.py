"""Using the ConvNeXt, EfficientNetV2, NASNet, RegNet and ResNetRS applications: the preprocessing (in the model,
against the formulas Keras documents), get_config/from_config, .keras save and load, eager == traced, Keras'
weight file names and argument errors. Small models of each family come from the families' module-level builders
(Keras' ConvNeXt, EfficientNetV2, NASNet, RegNet, ResNetRS functions), which the named variants call."""
import os

import numpy as np
import pytest

import kiln as tf

K = tf.keras
A = K.applications
MEAN = np.array([0.485, 0.456, 0.406])
STD = np.array([0.229, 0.224, 0.225])


def _tiny(family, **kwargs):
    """A few-thousand-parameter model of the family on 32 x 32 inputs, through the family's own code paths."""
    common = dict(weights=None, input_shape=(32, 32, 3), classes=5, classifier_activation=None)
    common.update(kwargs)
    if family == "convnext":
        return A.convnext.ConvNeXt([1, 1, 1, 1], [8, 16, 24, 32], drop_path_rate=0.1, model_name="small_convnext",
                                   **common)
    if family == "efficientnet_v2":
        blocks = [dict(kernel_size=3, num_repeat=1, input_filters=8, output_filters=8, expand_ratio=1, se_ratio=0,
                       strides=1, conv_type=1),
                  dict(kernel_size=3, num_repeat=2, input_filters=8, output_filters=16, expand_ratio=4, se_ratio=0,
                       strides=2, conv_type=1),
                  dict(kernel_size=3, num_repeat=2, input_filters=16, output_filters=24, expand_ratio=4,
                       se_ratio=0.25, strides=2, conv_type=0)]
        common.setdefault("model_name", "efficientnetv2-b0")
        return A.efficientnet_v2.EfficientNetV2(1.0, 1.0, 32, blocks_args=blocks, **common)
    if family == "nasnet":
        common.pop("classifier_activation")
        return A.nasnet.NASNet(penultimate_filters=96, num_blocks=1, stem_block_filters=8, skip_reduction=False,
                               classifier_activation=None, **common)
    if family == "regnet":
        return A.regnet.RegNet((1, 2, 1, 1), (8, 16, 24, 32), 8, "Y", 224, model_name="small_regnet", **common)
    assert family == "resnet_rs"
    common.setdefault("model_name", "small_resnet_rs")
    return A.resnet_rs.ResNetRS(50, block_args=[{"input_filters": 4, "num_repeats": 1},
                                                {"input_filters": 8, "num_repeats": 2}],
                                drop_connect_rate=0.2, **common)


FAMILIES = ["convnext", "efficientnet_v2", "nasnet", "regnet", "resnet_rs"]


def _images(n=2, size=32, seed=0):
    return np.random.default_rng(seed).uniform(0, 255, (n, size, size, 3)).astype(np.float32)


def _output_of(model, layer_name, x):
    return K.Model(model.inputs, model.get_layer(layer_name).output)(x).numpy()


def test_in_model_preprocessing_follows_keras_formulas():
    x = _images()
    # ConvNeXt: (x - 255 * ImageNet mean) / (255 * ImageNet deviation)
    got = _output_of(_tiny("convnext"), "small_convnext_prestem_normalization", x)
    np.testing.assert_allclose(got, (x - 255 * MEAN) / (255 * STD), rtol=1e-5, atol=1e-5)
    # EfficientNetV2 B*: x / 255 standardized; S, M and L: x / 128 - 1
    got = _output_of(_tiny("efficientnet_v2"), "normalization", x)
    np.testing.assert_allclose(got, (x / 255 - MEAN) / STD, rtol=1e-5, atol=1e-5)
    K.backend.clear_session()
    got = _output_of(_tiny("efficientnet_v2", model_name="efficientnetv2-s"), "rescaling", x)
    np.testing.assert_allclose(got, x / 128 - 1, rtol=1e-6, atol=1e-6)
    # RegNet: x / 255; ResNetRS: x / 255 standardized
    np.testing.assert_allclose(_output_of(_tiny("regnet"), "small_regnet_prestem_rescaling", x), x / 255, rtol=1e-6)
    got = _output_of(_tiny("resnet_rs"), "normalization", x)
    np.testing.assert_allclose(got, (x / 255 - MEAN) / STD, rtol=1e-5, atol=1e-5)
    # without it the stem takes the input as it is
    plain = _tiny("regnet", include_preprocessing=False)
    assert plain.layers[1].name == "small_regnet_stem_conv"


def test_preprocess_input_functions():
    x = _images()
    for module in (A.convnext, A.efficientnet_v2, A.regnet, A.resnet_rs):
        assert module.preprocess_input(x) is x  # the models preprocess themselves
    np.testing.assert_allclose(A.nasnet.preprocess_input(x.copy()), x / 127.5 - 1, rtol=1e-6)  # mode "tf"
    np.testing.assert_allclose(A.nasnet.preprocess_input(tf.constant(x)).numpy(), x / 127.5 - 1, rtol=1e-6)
    for module in (A.convnext, A.efficientnet_v2, A.nasnet, A.regnet, A.resnet_rs):
        with pytest.raises(ValueError, match=r"Found array with shape: \(1, 3\)"):
            module.decode_predictions(np.zeros((1, 3)))


@pytest.mark.parametrize("family", FAMILIES)
def test_config_round_trip_save_load_and_eager_equals_traced(family, tmp_path):
    K.utils.set_random_seed(7)
    model = _tiny(family)
    x = _images(seed=1)
    eager = model(x).numpy()
    assert eager.shape == (2, 5) and np.isfinite(eager).all()
    traced = tf.function(lambda images: model(images, training=False))(tf.constant(x)).numpy()
    np.testing.assert_allclose(traced, eager, rtol=1e-5, atol=1e-5)
    rebuilt = K.Model.from_config(model.get_config())
    assert [layer.name for layer in rebuilt.layers] == [layer.name for layer in model.layers]
    assert rebuilt.count_params() == model.count_params()
    rebuilt.set_weights(model.get_weights())
    np.testing.assert_allclose(rebuilt(x).numpy(), eager, rtol=1e-5, atol=1e-5)
    path = str(tmp_path / "model.keras")
    model.save(path)
    loaded = K.models.load_model(path)
    assert [type(layer).__name__ for layer in loaded.layers] == [type(layer).__name__ for layer in model.layers]
    np.testing.assert_allclose(loaded(x).numpy(), eager, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("family", FAMILIES)
def test_fit_lowers_the_loss(family):
    """Training runs through every layer's gradient (grouped convolutions, LayerScale, squeeze-excite, ...)."""
    K.utils.set_random_seed(11)
    model = _tiny(family)
    x = _images(n=8, seed=2)
    y = np.arange(8) % 5
    model.compile(optimizer=K.optimizers.Adam(1e-2),
                  loss=K.losses.SparseCategoricalCrossentropy(from_logits=True))
    before = model.evaluate(x, y, verbose=0)
    model.fit(x, y, epochs=4, batch_size=8, verbose=0)
    assert model.evaluate(x, y, verbose=0) < before


def test_convnext_layers_save_under_keras_module_and_drop_paths_in_training():
    model = _tiny("convnext")
    config = [entry for entry in model.get_config()["layers"] if entry["class_name"] == "LayerScale"][0]
    assert config["module"] == "keras.src.applications.convnext" and config["config"]["projection_dim"] == 8
    depth = model.get_layer("small_convnext_stage_3_block_0_stochastic_depth")
    assert depth.get_config()["drop_path_rate"] == pytest.approx(0.1)
    ones = tf.ones((64, 1, 1, 4))
    np.testing.assert_array_equal(depth(ones).numpy(), ones.numpy())
    K.utils.set_random_seed(5)
    kept = depth(ones, training=True).numpy()[:, 0, 0, 0]
    # whole samples dropped, the kept ones scaled by 1 / 0.9
    assert np.all((kept == 0) | np.isclose(kept, 1 / 0.9)) and 0 < (kept == 0).sum() < 32


def test_imagenet_weights_come_from_keras_cache_under_keras_names(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    expected = {"convnext": "small_convnext_notop.h5", "efficientnet_v2": "efficientnetv2-b0_notop.h5",
                "regnet": "small_regnet_notop.h5"}
    for family, name in expected.items():
        with pytest.raises(Exception, match=name):
            _tiny(family, weights="imagenet", include_top=False, classes=1000)
    with pytest.raises(Exception, match="nasnet_mobile_no_top.h5"):
        A.NASNetMobile(include_top=False, input_shape=(32, 32, 3))
    with pytest.raises(Exception, match="resnet-rs-50-i160_notop.h5"):
        A.resnet_rs.ResNetRS(50, block_args=[{"input_filters": 4, "num_repeats": 1}], model_name="resnet-rs-50",
                             include_top=False, input_shape=(32, 32, 3))
    # a file of Keras' name there is loaded
    K.utils.set_random_seed(3)
    source = A.RegNetX002(weights=None, include_top=False, input_shape=(32, 32, 3))
    os.makedirs(tmp_path / "models")
    source.save_weights(str(tmp_path / "models" / "regnetx002_notop.h5"))
    loaded = A.RegNetX002(include_top=False, input_shape=(32, 32, 3))
    for a, b in zip(source.weights, loaded.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    # nested Sequentials and LayerScale weights too; ResNetRS's "imagenet" is its largest-input file
    for family, name in (("convnext", "small_convnext_notop.h5"), ("resnet_rs", "resnet-rs-50-i160_notop.h5")):
        model_name = {"resnet_rs": "resnet-rs-50"}.get(family)
        extra = {"model_name": model_name} if model_name else {}
        source = _tiny(family, include_top=False, **extra)
        source.save_weights(str(tmp_path / "models" / name))
        loaded = _tiny(family, include_top=False, weights="imagenet", **extra)
        x = _images(seed=4)
        np.testing.assert_allclose(loaded(x).numpy(), source(x).numpy(), rtol=1e-6, atol=1e-6)


def test_resnet_rs_stochastic_depth_grows_by_group():
    model = _tiny("resnet_rs")
    # Keras: drop_connect_rate * (group + 2) / (groups + 1), passed to Dropout as its rate
    rates = {layer.name: layer.rate for layer in model.layers if layer.name.endswith("_drop")}
    assert rates == pytest.approx({"BlockGroup2__block_0__drop": 0.2 * 2 / 3, "BlockGroup3__block_0__drop": 0.2 * 3 / 3,
                                   "BlockGroup3__block_1__drop": 0.2 * 3 / 3})


def test_bad_arguments_raise_keras_errors():
    with pytest.raises(ValueError, match=r"available \['imagenet-i160'\] \(default=highest\)"):
        A.ResNetRS50(weights="imagenet-i999")
    with pytest.raises(ValueError, match="`classes` should be 1000"):
        A.ResNetRS101(weights="imagenet-i192", classes=10)
    with pytest.raises(ValueError, match="must be a multiple of 24"):
        A.nasnet.NASNet(input_shape=(32, 32, 3), penultimate_filters=100, weights=None)
    with pytest.raises(ValueError, match="input_shape argument must be static"):
        A.NASNetMobile(input_shape=(None, None, 3), include_top=False)
    with pytest.raises(NotImplementedError, match="Block type `Z` not recognized"):
        A.regnet.RegNet((1, 1, 1, 1), (8, 16, 24, 32), 8, "Z", 224, weights=None)
    with pytest.raises(ValueError, match="`classes` should be 1000"):
        A.ConvNeXtTiny(classes=10)
    with pytest.raises(ValueError, match="Input size must be at least 32x32"):
        A.EfficientNetV2B0(weights=None, include_top=False, input_shape=(16, 16, 3))
    with pytest.raises(ValueError, match="Only `None` and `softmax` activations are allowed"):
        A.regnet.RegNet((1, 1, 1, 1), (8, 16, 24, 32), 8, "X", 224, weights="imagenet", input_shape=(224, 224, 3),
                        classifier_activation="relu")
