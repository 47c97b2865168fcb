"""dir(tf.nn) against TensorFlow 2.15's public tf.nn: every TF name is either in Kiln's tf.nn or listed below as a
known gap, so nothing goes missing silently; and every name Kiln adds to tf.nn is TF's."""
import inspect

import kiln as tf

# The public names of tf.nn in TensorFlow 2.15 (https://www.tensorflow.org/versions/r2.15/api_docs/python/tf/nn:
# three classes, the `experimental` module with general_dropout and stateless_dropout, and the functions),
# cross-checked against the r2.4/r2.5 "Module: tf.nn" pages (the same list less the later approx_max_k,
# approx_min_k and isotonic_regression) and the r2.15 pages of single functions (signatures, and
# fused_batch_norm being tf.compat.v1.nn's only).
TF_2_15_NN = {
    "RNNCellDeviceWrapper", "RNNCellDropoutWrapper", "RNNCellResidualWrapper", "experimental",
    "all_candidate_sampler", "approx_max_k", "approx_min_k", "atrous_conv2d", "atrous_conv2d_transpose",
    "avg_pool", "avg_pool1d", "avg_pool2d", "avg_pool3d", "batch_norm_with_global_normalization",
    "batch_normalization", "bias_add", "collapse_repeated", "compute_accidental_hits", "compute_average_loss",
    "conv1d", "conv1d_transpose", "conv2d", "conv2d_transpose", "conv3d", "conv3d_transpose", "conv_transpose",
    "convolution", "crelu", "ctc_beam_search_decoder", "ctc_greedy_decoder", "ctc_loss", "ctc_unique_labels",
    "depth_to_space", "depthwise_conv2d", "depthwise_conv2d_backprop_filter", "depthwise_conv2d_backprop_input",
    "dilation2d", "dropout", "elu", "embedding_lookup", "embedding_lookup_sparse", "erosion2d",
    "fixed_unigram_candidate_sampler", "fractional_avg_pool", "fractional_max_pool", "gelu", "in_top_k",
    "isotonic_regression", "l2_loss", "l2_normalize", "leaky_relu", "learned_unigram_candidate_sampler",
    "local_response_normalization", "log_poisson_loss", "log_softmax", "log_uniform_candidate_sampler", "lrn",
    "max_pool", "max_pool1d", "max_pool2d", "max_pool3d", "max_pool_with_argmax", "moments", "nce_loss",
    "normalize_moments", "pool", "relu", "relu6", "safe_embedding_lookup_sparse", "sampled_softmax_loss",
    "scale_regularization_loss", "selu", "separable_conv2d", "sigmoid", "sigmoid_cross_entropy_with_logits",
    "silu", "softmax", "softmax_cross_entropy_with_logits", "softplus", "softsign", "space_to_batch",
    "space_to_depth", "sparse_softmax_cross_entropy_with_logits", "sufficient_statistics", "swish", "tanh",
    "top_k", "uniform_candidate_sampler", "weighted_cross_entropy_with_logits", "weighted_moments",
    "with_space_to_batch", "zero_fraction",
}

# TF 2.15 names Kiln's tf.nn does not have yet, each a deliberate, listed gap: none left. A name taken out of
# Kiln must be listed here.
KNOWN_GAPS = set()


def _public(module):
    return {n for n in dir(module) if not n.startswith("_") and not inspect.ismodule(getattr(module, n))} | (
        {"experimental"} if hasattr(module, "experimental") else set())


def test_every_tf_name_is_present_or_a_listed_gap():
    missing = TF_2_15_NN - _public(tf.nn) - KNOWN_GAPS
    assert not missing, f"tf.nn names neither in Kiln nor in KNOWN_GAPS: {sorted(missing)}"


def test_listed_gaps_are_really_missing():
    filled = KNOWN_GAPS & _public(tf.nn)
    assert not filled, f"names now in kiln.nn: take them off KNOWN_GAPS: {sorted(filled)}"
    assert KNOWN_GAPS <= TF_2_15_NN


def test_kiln_adds_no_names_of_its_own():
    extra = _public(tf.nn) - TF_2_15_NN
    assert not extra, f"kiln.nn exposes names TF 2.15's tf.nn lacks: {sorted(extra)}"


def test_aliases_as_tf():
    assert tf.nn.swish is tf.nn.silu and tf.nn.lrn is tf.nn.local_response_normalization
    assert tf.nn.top_k is tf.math.top_k and tf.nn.in_top_k is tf.math.in_top_k


def test_signatures_follow_tf():
    expected = {
        "sigmoid_cross_entropy_with_logits": ["labels", "logits", "name"],
        "weighted_cross_entropy_with_logits": ["labels", "logits", "pos_weight", "name"],
        "log_poisson_loss": ["targets", "log_input", "compute_full_loss", "name"],
        "compute_average_loss": ["per_example_loss", "sample_weight", "global_batch_size"],
        "scale_regularization_loss": ["regularization_loss"],
        "embedding_lookup": ["params", "ids", "max_norm", "name"],
        "embedding_lookup_sparse": ["params", "sp_ids", "sp_weights", "combiner", "max_norm", "name",
                                    "allow_fast_lookup"],
        "safe_embedding_lookup_sparse": ["embedding_weights", "sparse_ids", "sparse_weights", "combiner",
                                         "default_id", "max_norm", "name", "allow_fast_lookup"],
        "conv1d": ["input", "filters", "stride", "padding", "data_format", "dilations", "name"],
        "conv3d": ["input", "filters", "strides", "padding", "data_format", "dilations", "name"],
        "max_pool3d": ["input", "ksize", "strides", "padding", "data_format", "name"],
        "crelu": ["features", "axis", "name"],
        "pool": ["input", "window_shape", "pooling_type", "strides", "padding", "data_format", "dilations", "name"],
        "ctc_loss": ["labels", "logits", "label_length", "logit_length", "logits_time_major", "unique",
                     "blank_index", "name"],
        "nce_loss": ["weights", "biases", "labels", "inputs", "num_sampled", "num_classes", "num_true",
                     "sampled_values", "remove_accidental_hits", "name"],
        "isotonic_regression": ["inputs", "decreasing", "axis"],
        "local_response_normalization": ["input", "depth_radius", "bias", "alpha", "beta", "name"],
        "separable_conv2d": ["input", "depthwise_filter", "pointwise_filter", "strides", "padding", "data_format",
                             "dilations", "name"],
    }
    for name, params in expected.items():
        assert list(inspect.signature(getattr(tf.nn, name)).parameters) == params, name
