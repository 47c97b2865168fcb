"""tf.keras.applications' ConvNeXt, EfficientNetV2, NASNet, RegNet and ResNetRS families.

Provenance of the expected numbers: NASNet's parameter counts are keras.io's applications table (exact), the
EfficientNetV2 ones its table's millions; every other count, and every layer count, is worked out below from the
architecture Keras 2.15 defines (keras/applications/<family>.py: its configs, block structure and layer list),
independently of Kiln's code, so a wrong width, a missing layer or an extra bias fails. The smallest variants are
built and checked whole; the other variants run the same builder on their Keras config, so their configs are
compared with Keras' and their counts follow from the counters (building all 55 takes minutes and gigabytes;
one deep variant per family that adds a code path is built for its count, with a fast initializer)."""
import math

import pytest

import kiln as tf

K = tf.keras
A = K.applications


@pytest.fixture
def fast_init(monkeypatch):
    """Uniform draws in place of the (host-side, slower) truncated normal of the VarianceScaling initializers."""
    from kiln.keras import initializers
    monkeypatch.setattr(initializers, "_truncated_normal",
                        lambda shape, mean, stddev, dtype, seed: tf.random.uniform(list(shape), -stddev, stddev, dtype))


def _bn(c):
    return 4 * c  # gamma, beta, moving mean, moving variance


# ---------------------------------------------------------------------------------------------------- ConvNeXt
CONVNEXT = {"Tiny": ((3, 3, 9, 3), (96, 192, 384, 768)), "Small": ((3, 3, 27, 3), (96, 192, 384, 768)),
            "Base": ((3, 3, 27, 3), (128, 256, 512, 1024)), "Large": ((3, 3, 27, 3), (192, 384, 768, 1536)),
            "XLarge": ((3, 3, 27, 3), (256, 512, 1024, 2048))}


def convnext_params(depths, dims, classes=1000):
    """Stem conv 4x4 + LayerNorm; per stage a LayerNorm + 2x2 conv (after the first) and blocks of a 7x7 depthwise
    conv (groups = channels, with bias), LayerNorm, Dense 4d, Dense d, LayerScale gamma; head LayerNorm + Dense."""
    n = 16 * 3 * dims[0] + dims[0] + 2 * dims[0]
    for i, (depth, d) in enumerate(zip(depths, dims)):
        if i:
            n += 2 * dims[i - 1] + 4 * dims[i - 1] * d + d
        n += depth * (49 * d + d + 2 * d + (d * 4 * d + 4 * d) + (4 * d * d + d) + d)
    return n + 2 * dims[-1] + dims[-1] * classes + classes


def convnext_layers(depths):
    # input, prestem normalization, stem + 3 downsampling Sequentials, 8 per block (with the add), head gap/LN/dense
    return 1 + 1 + 4 + 8 * sum(depths) + 3


def test_convnext_tiny_matches_keras_architecture_names_and_shapes(fast_init):
    model = A.ConvNeXtTiny(weights=None)
    depths, dims = CONVNEXT["Tiny"]
    assert model.name == "convnext_tiny" and model.count_params() == convnext_params(depths, dims) == 28_589_128
    assert len(model.layers) == convnext_layers(depths) == 153 and model.output_shape == (None, 1000)
    names = [layer.name for layer in model.layers]
    assert names[1:12] == [
        "convnext_tiny_prestem_normalization", "convnext_tiny_stem", "convnext_tiny_stage_0_block_0_depthwise_conv",
        "convnext_tiny_stage_0_block_0_layernorm", "convnext_tiny_stage_0_block_0_pointwise_conv_1",
        "convnext_tiny_stage_0_block_0_gelu", "convnext_tiny_stage_0_block_0_pointwise_conv_2",
        "convnext_tiny_stage_0_block_0_layer_scale", "convnext_tiny_stage_0_block_0_identity", "tf.__operators__.add",
        "convnext_tiny_stage_0_block_1_depthwise_conv"]
    assert names[-3:] == ["convnext_tiny_head_gap", "convnext_tiny_head_layernorm", "convnext_tiny_head_dense"]
    stem = model.get_layer("convnext_tiny_stem")
    assert isinstance(stem, K.Sequential) and [layer.name for layer in stem.layers] == [
        "convnext_tiny_stem_conv", "convnext_tiny_stem_layernorm"]
    assert [w.name for w in model.get_layer("convnext_tiny_stage_3_block_2_layer_scale").weights] == [
        "convnext_tiny_stage_3_block_2_layer_scale/gamma:0"]
    assert model.get_layer("convnext_tiny_stage_1_block_0_depthwise_conv").weights[0].shape == (7, 7, 1, 192)
    base = A.ConvNeXtTiny(weights=None, include_top=False, input_shape=(64, 64, 3))
    # Keras ends the model without the top in a LayerNormalization, pooled or not.
    assert base.output_shape == (None, 2, 2, 768) and isinstance(base.layers[-1], K.layers.LayerNormalization)
    small = A.convnext.ConvNeXt([1, 1, 1, 1], [8, 16, 24, 32], include_top=False, weights=None,
                                input_shape=(32, 32, 3), pooling="max")
    assert small.output_shape == (None, 32) and isinstance(small.layers[-2], K.layers.GlobalMaxPooling2D)


def _default(function, argument):
    import inspect
    return inspect.signature(function).parameters[argument].default


def test_convnext_variants_pass_keras_configs():
    assert A.convnext._CONFIGS == {variant.lower(): config for variant, config in CONVNEXT.items()}
    for variant in CONVNEXT:
        assert _default(getattr(A, f"ConvNeXt{variant}"), "model_name") == f"convnext_{variant.lower()}"
    assert {variant: convnext_params(*config) for variant, config in CONVNEXT.items()} == {
        "Tiny": 28_589_128, "Small": 50_223_688, "Base": 88_591_464, "Large": 197_767_336, "XLarge": 350_196_968}


# ---------------------------------------------------------------------------------------------- EfficientNetV2
def _stage(k, r, i, o, e, se, s, fused):
    return k, r, i, o, e, se, s, fused


_V2_B = [_stage(3, 1, 32, 16, 1, 0, 1, 1), _stage(3, 2, 16, 32, 4, 0, 2, 1), _stage(3, 2, 32, 48, 4, 0, 2, 1),
         _stage(3, 3, 48, 96, 4, .25, 2, 0), _stage(3, 5, 96, 112, 6, .25, 1, 0), _stage(3, 8, 112, 192, 6, .25, 2, 0)]
EFFICIENTNET_V2 = {  # Keras' DEFAULT_BLOCKS_ARGS, (width, depth) and keras.io's parameter count in millions
    "B0": (_V2_B, 1.0, 1.0, 7.2), "B1": (_V2_B, 1.0, 1.1, 8.2), "B2": (_V2_B, 1.1, 1.2, 10.2),
    "B3": (_V2_B, 1.2, 1.4, 14.5),
    "S": ([_stage(3, 2, 24, 24, 1, 0, 1, 1), _stage(3, 4, 24, 48, 4, 0, 2, 1), _stage(3, 4, 48, 64, 4, 0, 2, 1),
           _stage(3, 6, 64, 128, 4, .25, 2, 0), _stage(3, 9, 128, 160, 6, .25, 1, 0),
           _stage(3, 15, 160, 256, 6, .25, 2, 0)], 1.0, 1.0, 21.6),
    "M": ([_stage(3, 3, 24, 24, 1, 0, 1, 1), _stage(3, 5, 24, 48, 4, 0, 2, 1), _stage(3, 5, 48, 80, 4, 0, 2, 1),
           _stage(3, 7, 80, 160, 4, .25, 2, 0), _stage(3, 14, 160, 176, 6, .25, 1, 0),
           _stage(3, 18, 176, 304, 6, .25, 2, 0), _stage(3, 5, 304, 512, 6, .25, 1, 0)], 1.0, 1.0, 54.4),
    "L": ([_stage(3, 4, 32, 32, 1, 0, 1, 1), _stage(3, 7, 32, 64, 4, 0, 2, 1), _stage(3, 7, 64, 96, 4, 0, 2, 1),
           _stage(3, 10, 96, 192, 4, .25, 2, 0), _stage(3, 19, 192, 224, 6, .25, 1, 0),
           _stage(3, 25, 224, 384, 6, .25, 2, 0), _stage(3, 7, 384, 640, 6, .25, 1, 0)], 1.0, 1.0, 119.0),
}


def efficientnet_v2_counts(variant, classes=1000):
    """(parameters, layers) of Keras' EfficientNetV2<variant> with the top."""
    stages, width, depth, _ = EFFICIENTNET_V2[variant]

    def rf(f):
        return int(max(8, int(f * width + 4) // 8 * 8))

    params, n_layers = 0, 3 if variant.startswith("B") else 2  # input, rescaling (B: and normalization)
    params += 9 * 3 * rf(stages[0][2]) + _bn(rf(stages[0][2]))
    n_layers += 3
    first = True
    for k, r, cin, cout, e, se, s, fused in stages:
        cin, cout = rf(cin), rf(cout)
        for j in range(int(math.ceil(depth * r))):
            if j:
                cin, s = cout, 1
            f = cin * e
            if fused:
                if e != 1:
                    params += k * k * cin * f + _bn(f) + f * cout + _bn(cout)
                    n_layers += 5  # expand conv/bn/activation, project conv/bn
                else:
                    params += k * k * cin * cout + _bn(cout)
                    n_layers += 3  # project conv/bn/activation
            else:
                if e != 1:
                    params += cin * f + _bn(f)
                    n_layers += 3
                reduced = max(1, int(cin * se))
                params += 9 * f + _bn(f) + (f * reduced + reduced) + (reduced * f + f) + f * cout + _bn(cout)
                n_layers += 3 + 5 + 2  # depthwise conv/bn/activation, 5 squeeze-excite layers, project conv/bn
            if s == 1 and cin == cout:
                n_layers += 1 + (0 if first else 1)  # add, and the dropout (none at rate 0: the first block)
            first = False
    top = rf(1280)
    params += cout * top + _bn(top) + top * classes + classes
    return params, n_layers + 3 + 3  # top conv/bn/activation, avg_pool/top_dropout/predictions


def test_efficientnet_v2_b0_matches_keras_architecture_names_and_shapes(fast_init):
    model = A.EfficientNetV2B0(weights=None)
    params, n_layers = efficientnet_v2_counts("B0")
    assert model.name == "efficientnetv2-b0" and model.count_params() == params == 7_200_312
    assert round(params / 1e6, 1) == EFFICIENTNET_V2["B0"][3] and len(model.layers) == n_layers == 273
    names = [layer.name for layer in model.layers]
    assert names[1:7] == ["rescaling", "normalization", "stem_conv", "stem_bn", "stem_activation",
                          "block1a_project_conv"]
    for name in ("block2a_expand_conv", "block2b_drop", "block2b_add", "block4a_dwconv2", "block4a_se_excite",
                 "block6h_project_bn", "top_conv", "top_dropout", "predictions"):
        assert name in names
    assert "block1a_add" not in names  # 32 -> 16 channels: no residual
    assert model.input_shape == (None, 224, 224, 3) and model.output_shape == (None, 1000)
    base = A.EfficientNetV2B0(weights=None, include_top=False, input_shape=(64, 64, 3))
    assert base.output_shape == (None, 2, 2, 1280) and base.layers[-1].name == "top_activation"
    assert A.EfficientNetV2B0(weights=None, include_top=False, input_shape=(32, 32, 3), pooling="avg").output_shape \
        == (None, 1280)


def test_efficientnet_v2_variants_pass_keras_configs_and_match_keras_table():
    for variant, (stages, width, depth, millions) in EFFICIENTNET_V2.items():
        blocks = A.efficientnet_v2._BLOCKS[variant.lower()]
        assert [(b["kernel_size"], b["num_repeat"], b["input_filters"], b["output_filters"], b["expand_ratio"],
                 b["se_ratio"], b["strides"], b["conv_type"]) for b in blocks] == stages
        assert A.efficientnet_v2._VARIANTS[variant][:2] == (width, depth)
        assert round(efficientnet_v2_counts(variant)[0] / 1e6, 1) == millions  # keras.io's table


def test_efficientnet_v2_s_parameter_count(fast_init):
    params, n_layers = efficientnet_v2_counts("S")
    model = A.EfficientNetV2S(weights=None, input_shape=(32, 32, 3), include_top=False)
    assert model.count_params() + 1280 * 1000 + 1000 == params == 21_612_360
    assert len(model.layers) == n_layers - 3 and model.layers[1].get_config()["offset"] == -1


# ------------------------------------------------------------------------------------------------------- NASNet
def nasnet_layers(normal, reduction, factorized_adjust, projection_adjust):
    """Keras' cells: a normal cell has 42 layers (ReLU-conv-BN of the input, 5 separable blocks of 6, 3 average
    poolings, 5 adds, the concat), a reduction cell 48 (4 of its 5 separable blocks strided, so padded: 7; a
    padding, 2 max and 2 average poolings); adjusting the previous output adds 9 (halving the size) or 3
    (projecting the channels); plus input, stem conv/BN, final ReLU, pooling and predictions."""
    return 6 + 42 * normal + 48 * reduction + 9 * factorized_adjust + 3 * projection_adjust


def test_nasnet_mobile_matches_keras_table_names_and_shapes(fast_init):
    model = A.NASNetMobile(weights=None)
    assert model.name == "NASNet" and model.count_params() == 5_326_716  # keras.io
    assert model.input_shape == (None, 224, 224, 3) and model.output_shape == (None, 1000)
    # 12 normal and 4 reduction cells; the cells after a reduction halve the previous output (stem_2, normal 0,
    # 5 and 9), the other 11 adjusted ones project its channels.
    assert len(model.layers) == nasnet_layers(12, 4, 4, 11) == 771
    assert sum(isinstance(layer, K.layers.SeparableConv2D) for layer in model.layers) == 2 * 5 * 16
    names = [layer.name for layer in model.layers]
    for name in ("stem_conv1", "stem_bn1", "reduction_conv_1_stem_1", "separable_conv_1_pad_reduction_left1_stem_1",
                 "adjust_avg_pool_2_stem_2", "adjust_bn_0", "normal_concat_12", "reduction_add4_reduce_8",
                 "adjust_conv_projection_reduce_4", "normal_add_5_3", "predictions"):
        assert name in names
    assert "normal_conv_1_13" not in names
    base = A.NASNetMobile(weights=None, include_top=False, input_shape=(64, 64, 3), pooling="avg")
    assert base.output_shape == (None, 1056)


def test_nasnet_large_matches_keras_table(fast_init):
    model = A.NASNetLarge(weights=None, include_top=False, input_shape=(64, 64, 3))
    # skip_reduction: the cell after each reduction sees the pre-reduction output and halves it.
    assert len(model.layers) == nasnet_layers(18, 4, 4, 17) - 2
    assert model.count_params() + 4032 * 1000 + 1000 == 88_949_818  # keras.io
    assert model.output_shape == (None, 2, 2, 4032)


# ------------------------------------------------------------------------------------------------------- RegNet
REGNET = {  # Keras' MODEL_CONFIGS: depths, widths, group width
    "X002": ((1, 1, 4, 7), (24, 56, 152, 368), 8), "X004": ((1, 2, 7, 12), (32, 64, 160, 384), 16),
    "X006": ((1, 3, 5, 7), (48, 96, 240, 528), 24), "X008": ((1, 3, 7, 5), (64, 128, 288, 672), 16),
    "X016": ((2, 4, 10, 2), (72, 168, 408, 912), 24), "X032": ((2, 6, 15, 2), (96, 192, 432, 1008), 48),
    "X040": ((2, 5, 14, 2), (80, 240, 560, 1360), 40), "X064": ((2, 4, 10, 1), (168, 392, 784, 1624), 56),
    "X080": ((2, 5, 15, 1), (80, 240, 720, 1920), 120), "X120": ((2, 5, 11, 1), (224, 448, 896, 2240), 112),
    "X160": ((2, 6, 13, 1), (256, 512, 896, 2048), 128), "X320": ((2, 7, 13, 1), (336, 672, 1344, 2520), 168),
    "Y002": ((1, 1, 4, 7), (24, 56, 152, 368), 8), "Y004": ((1, 3, 6, 6), (48, 104, 208, 440), 8),
    "Y006": ((1, 3, 7, 4), (48, 112, 256, 608), 16), "Y008": ((1, 3, 8, 2), (64, 128, 320, 768), 16),
    "Y016": ((2, 6, 17, 2), (48, 120, 336, 888), 24), "Y032": ((2, 5, 13, 1), (72, 216, 576, 1512), 24),
    "Y040": ((2, 6, 12, 2), (128, 192, 512, 1088), 64), "Y064": ((2, 7, 14, 2), (144, 288, 576, 1296), 72),
    "Y080": ((2, 4, 10, 1), (168, 448, 896, 2016), 56), "Y120": ((2, 5, 11, 1), (224, 448, 896, 2240), 112),
    "Y160": ((2, 4, 11, 1), (224, 448, 1232, 3024), 112), "Y320": ((2, 5, 12, 1), (232, 696, 1392, 3712), 232),
}


def regnet_counts(variant, classes=1000):
    """(parameters, layers): stem 3x3 conv + BN; per block 1x1, grouped 3x3 (group width channels per group) and
    1x1 convs without bias, each with BN, a 1x1 strided skip conv + BN in the first block of a stage, Y blocks a
    squeeze-excite of int(input channels / 4); head GAP + Dense."""
    depths, widths, group_width = REGNET[variant]
    y = variant.startswith("Y")
    params, n_layers, cin = 27 * 32 + _bn(32), 2 + 3, 32  # input, rescaling, stem conv/bn/relu
    for depth, w in zip(depths, widths):
        for i in range(depth):
            c = cin if i == 0 else w
            groups = max(1, w // group_width)  # Keras' Conv2D takes 0 groups as 1 (RegNetX080's first stage)
            params += c * w + _bn(w) + 9 * (w // groups) * w + _bn(w) + w * w + _bn(w)
            n_layers += 10  # 3 convs + 3 BNs, 2 ReLUs, the add, the exit ReLU
            if i == 0:
                params += cin * w + _bn(w)
                n_layers += 2
            if y:
                se = int(c * 0.25)
                params += w * se + se + se * w + w
                n_layers += 4  # pooling, 2 convs, the multiply
        cin = w
    return params + cin * classes + classes, n_layers + 2


def test_regnet_x002_and_y002_match_keras_architecture_names_and_shapes(fast_init):
    x002 = A.RegNetX002(weights=None)
    params, n_layers = regnet_counts("X002")
    assert x002.name == "regnetx002" and x002.count_params() == params == 2_705_640
    assert len(x002.layers) == n_layers == 145
    names = [layer.name for layer in x002.layers]
    assert names[1:5] == ["regnetx002_prestem_rescaling", "regnetx002_stem_conv", "regnetx002_stem_bn",
                          "regnetx002_stem_relu"]
    for name in ("regnetx002_Stage_0_XBlock_0_skip_1x1", "regnetx002_Stage_3_XBlock_6_conv_3x3_bn",
                 "regnetx002_Stage_3_XBlock_6_exit_relu", "tf.__operators__.add_12"):
        assert name in names
    # Keras names the head after a counter and gives its Dense no activation (classifier_activation unused).
    assert names[-2:] == ["1_head_gap", "1head_dense"] and x002.layers[-1].get_config()["activation"] == "linear"
    assert x002.get_layer("regnetx002_Stage_1_XBlock_0_conv_3x3").get_config()["groups"] == 56 // 8
    y002 = A.RegNetY002(weights=None, include_top=False, input_shape=(64, 64, 3))
    params, n_layers = regnet_counts("Y002")
    assert y002.count_params() == params - 368 * 1000 - 1000 and len(y002.layers) == n_layers - 2
    assert "regnety002_Stage_2_YBlock_3_squeeze_and_excite_excite" in [layer.name for layer in y002.layers]
    assert "tf.math.multiply_12" in [layer.name for layer in y002.layers]
    assert y002.output_shape == (None, 2, 2, 368)
    assert A.RegNetY002(weights=None, include_top=False, input_shape=(32, 32, 3), pooling="avg").output_shape == \
        (None, 368)


def test_regnet_variants_pass_keras_configs():
    assert A.regnet._CONFIGS == {variant.lower(): config for variant, config in REGNET.items()}
    for variant in REGNET:
        assert _default(getattr(A, f"RegNet{variant}"), "model_name") == f"regnet{variant.lower()}"


def test_regnet_x080_takes_zero_groups_as_one(fast_init):
    # 80 channels in groups of 120: Keras' Conv2D gets groups=0 and makes it 1.
    params, n_layers = regnet_counts("X080")
    model = A.RegNetX080(weights=None, include_top=False, input_shape=(32, 32, 3))
    assert model.count_params() + 1920 * 1000 + 1000 == params and len(model.layers) == n_layers - 2
    assert model.get_layer("regnetx080_Stage_0_XBlock_0_conv_3x3").get_config()["groups"] == 1


# ----------------------------------------------------------------------------------------------------- ResNetRS
RESNET_RS = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3), 152: (3, 8, 36, 3), 200: (3, 24, 36, 3), 270: (4, 29, 53, 4),
             350: (4, 36, 72, 4), 420: (4, 44, 87, 4)}  # Keras' BLOCK_ARGS


def resnet_rs_counts(depth, classes=1000):
    """(parameters, layers): a stem of four 3x3 convs (32, 32, 64, 64) with BN; bottleneck blocks (1x1, 3x3, 1x1 x4
    convs without bias, BN each, squeeze-excite to `filters` channels with biases) with a projection (1x1 conv +
    BN, average-pooled first in strided groups) in each group's first block; dropout on the residual (depths >=
    200) and before the top."""
    params = 27 * 32 + _bn(32) + 9 * 32 * 32 + _bn(32) + 9 * 32 * 64 + _bn(64) + 9 * 64 * 64 + _bn(64)
    n_layers, cin = 3 + 14, 64  # input, rescaling, normalization; stem: 4 x conv/bn/act, 2 paddings
    for g, (filters, repeats) in enumerate(zip((64, 128, 256, 512), RESNET_RS[depth])):
        for i in range(repeats):
            f, c = filters, cin if i == 0 else 4 * filters
            params += c * f + _bn(f) + 9 * f * f + _bn(f) + f * 4 * f + _bn(4 * f)
            params += (4 * f * f + f) + (f * 4 * f + 4 * f)  # squeeze-excite
            n_layers += 15 + (1 if depth >= 200 else 0)
            if i == 0:
                params += c * 4 * f + _bn(4 * f)
                n_layers += 2 if g == 0 else 4  # strided groups: the pooling, and the padding of the 3x3 conv
        cin = 4 * filters
    return params + 2048 * classes + classes, n_layers + 3


def test_resnet_rs50_matches_keras_architecture_names_and_shapes(fast_init):
    model = A.ResNetRS50(weights=None)
    params, n_layers = resnet_rs_counts(50)
    assert model.name == "resnet-rs-50" and model.count_params() == params == 35_745_288
    assert len(model.layers) == n_layers == 274 and model.output_shape == (None, 1000)
    names = [layer.name for layer in model.layers]
    assert names[1:4] == ["rescaling", "normalization", "zero_padding2d"]
    for name in ("stem_1_stem_conv_1", "stem_1_stem_act_4", "BlockGroup2__block_0__projection_conv",
                 "BlockGroup2__block_0_batch_norm_1", "BlockGroup3__block_0__projection_pooling",
                 "BlockGroup5__block_2__se_se_excite", "BlockGroup5__block_2__output_act", "top_dropout",
                 "predictions"):
        assert name in names
    assert not any(name.endswith("_drop") for name in names)  # ResNetRS50's drop_connect_rate is 0
    small = A.resnet_rs.ResNetRS(50, block_args=[{"input_filters": 4, "num_repeats": 1}], weights=None,
                                 include_top=False, input_shape=(64, 64, 3), pooling="max")
    assert small.output_shape == (None, 16) and small.layers[-1].name == "max_pool"


def test_resnet_rs_variants_pass_keras_configs():
    assert A.resnet_rs._DEPTHS == RESNET_RS
    # Keras' ResNetRS<depth>: (drop_connect_rate, dropout_rate), and the inputs of its ImageNet weights
    assert A.resnet_rs._RATES == {50: (0.0, 0.25), 101: (0.0, 0.25), 152: (0.0, 0.25), 200: (0.1, 0.25),
                                  270: (0.1, 0.25), 350: (0.1, 0.4), 420: (0.1, 0.4)}
    assert A.resnet_rs._WEIGHT_SIZES == {50: (160,), 101: (160, 192), 152: (192, 224, 256), 200: (256,),
                                         270: (256,), 350: (256, 320), 420: (320,)}
    assert [resnet_rs_counts(depth)[0] for depth in RESNET_RS] == [
        35_745_288, 63_724_296, 86_773_256, 93_386_248, 130_104_520, 164_268_360, 192_262_216]
