"""tf.config.optimizer: TF's Grappler switches, reported as TF 2.15 reports them, and the ones with a Kiln
counterpart turn its graph passes off (seen in the ops a compiled call runs)."""
import numpy as np
import pytest

import kiln as tf


@pytest.fixture(autouse=True)
def restore_options():
    from kiln import _config_optimizer
    saved = dict(_config_optimizer._options)
    yield
    _config_optimizer._options.clear()
    tf.config.optimizer.set_experimental_options(saved)


def ops_run(fn, *args):
    import tempfile
    fn(*args)  # compiled at the first call
    tf.profiler.experimental.start(tempfile.mkdtemp())
    fn(*args)
    profile = tf.profiler.experimental.stop()
    return [e["op"] for e in profile.events() if e["kind"] == "graph"]


def constant_chain():
    a = np.arange(16, dtype=np.float32).reshape(4, 4) / 16

    @tf.function
    def f(x):
        c = tf.constant(a)
        return tf.reduce_mean(c @ c @ c + x)

    return f


def test_options_are_reported_as_tf_reports_them():
    from kiln import _config_optimizer
    _config_optimizer._options.clear()
    assert tf.config.optimizer.get_experimental_options() == {"disable_model_pruning": False,
                                                              "disable_meta_optimizer": False}
    tf.config.optimizer.set_experimental_options({"constant_folding": False, "debug_stripper": True})
    tf.config.optimizer.set_experimental_options({"min_graph_nodes": -1})  # updates, never clears
    assert list(tf.config.optimizer.get_experimental_options().items()) == [
        ("constant_folding", False), ("debug_stripper", True), ("disable_model_pruning", False),
        ("disable_meta_optimizer", False), ("min_graph_nodes", -1)]
    with pytest.raises(ValueError, match="Unknown graph optimizer option 'constant_fold'"):
        tf.config.optimizer.set_experimental_options({"constant_fold": False})
    with pytest.raises(TypeError, match="takes a bool"):
        tf.config.optimizer.set_experimental_options({"remapping": "off"})
    tf.config.optimizer.set_jit(True)
    assert tf.config.optimizer.get_jit() == "autoclustering"
    tf.config.optimizer.set_jit(False)
    assert tf.config.optimizer.get_jit() == ""


def test_constant_folding_switch_reaches_the_compiled_graph():
    x = tf.constant(0.5)
    folded = ops_run(constant_chain(), x)
    tf.config.optimizer.set_experimental_options({"constant_folding": False})
    unfolded_fn = constant_chain()
    unfolded = ops_run(unfolded_fn, x)
    assert not any("MatMul" in name for name in folded), folded
    assert any("MatMul" in name for name in unfolded), unfolded
    tf.config.optimizer.set_experimental_options({"constant_folding": True})
    assert not any("MatMul" in name for name in ops_run(constant_chain(), x))
    a = np.arange(16, dtype=np.float32).reshape(4, 4) / 16
    np.testing.assert_allclose(unfolded_fn(x).numpy(), np.mean(a @ a @ a + 0.5), rtol=1e-6)


def test_the_meta_optimizer_switch_turns_every_pass_off():
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    assert any("MatMul" in name for name in ops_run(constant_chain(), tf.constant(0.5)))
