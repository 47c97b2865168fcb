"""A layer's saved-model round trip, the twin of tests/layer_saved_model_check.h: the layer called through a
tf.function whose input signature is `spec`, saved with it as "serving_default" and loaded back. The loaded
signature gives the function's values bitwise, on `x` and on each of `probes` (other shapes the signature
admits), and the loaded model holds the layer's variables, by name, with their values and trainability."""
import numpy as np

import kiln as tf


def check_layer_round_trip(layer, x, spec, directory, probes=()):
    serve = tf.function(lambda inputs: layer(inputs), input_signature=[spec])
    inputs = [x, *probes]
    want = [serve(v).numpy() for v in inputs]
    tf.saved_model.save(layer, str(directory), signatures=serve)
    loaded = tf.saved_model.load(str(directory))
    for v, w in zip(inputs, want):
        got = loaded.signatures["serving_default"](inputs=v)["output_0"].numpy()
        assert got.dtype == w.dtype and got.shape == w.shape
        np.testing.assert_array_equal(got, w)
    back = {v.name: v for v in loaded.variables}
    assert len(back) == len(loaded.variables)
    assert sorted(back) == sorted(v.name for v in layer.variables)
    for v in layer.variables:
        np.testing.assert_array_equal(back[v.name].numpy(), v.numpy())
        assert back[v.name].trainable == v.trainable
    return loaded
