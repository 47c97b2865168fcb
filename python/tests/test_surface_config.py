"""tf.config devices, threading and determinism, tf.device, Tensor.device, tf.version,
tf.executing_eagerly and tf.get_logger (issue #42)."""
import logging

import numpy as np
import pytest

import kiln as tf

CPU = "/job:localhost/replica:0/task:0/device:CPU:0"


def test_device_lists_name_the_cpu():
    cpus = tf.config.list_physical_devices("CPU")
    assert cpus == tf.config.list_physical_devices() == tf.config.experimental.list_physical_devices("CPU")
    assert cpus[0].name == "/physical_device:CPU:0" and cpus[0].device_type == "CPU"
    assert tf.config.list_physical_devices("GPU") == []
    assert tf.config.list_logical_devices("CPU")[0].name == "/device:CPU:0"
    assert tf.config.list_logical_devices("GPU") == []
    for gpu in tf.config.list_physical_devices("GPU"):  # the usual memory-growth loop runs zero times
        tf.config.experimental.set_memory_growth(gpu, True)
    with pytest.raises(ValueError):
        tf.config.experimental.set_memory_growth(cpus[0], True)


def test_threading_settings_round_trip_and_compute():
    before = tf.config.threading.get_intra_op_parallelism_threads()
    assert before == 0 and tf.config.threading.get_inter_op_parallelism_threads() == 0
    try:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(2)
        assert tf.config.threading.get_intra_op_parallelism_threads() == 1
        assert tf.config.threading.get_inter_op_parallelism_threads() == 2
        a = np.arange(200000, dtype=np.float64).reshape(400, 500)
        np.testing.assert_allclose(tf.reduce_sum(tf.constant(a), axis=0).numpy(), a.sum(0))
        with pytest.raises(ValueError):
            tf.config.threading.set_intra_op_parallelism_threads(-1)
    finally:
        tf.config.threading.set_intra_op_parallelism_threads(before)
        tf.config.threading.set_inter_op_parallelism_threads(0)


def test_op_determinism_flag():
    assert not tf.config.experimental.is_op_determinism_enabled()
    tf.config.experimental.enable_op_determinism()
    try:
        assert tf.config.experimental.is_op_determinism_enabled()
        x = tf.random.uniform([1000], seed=1) if hasattr(tf.random, "uniform") else tf.ones([1000])
        assert tf.reduce_sum(x).numpy() == tf.reduce_sum(x).numpy()
    finally:
        tf.config.experimental.disable_op_determinism()
    assert not tf.config.experimental.is_op_determinism_enabled()


def test_device_scope_and_tensor_device(caplog, monkeypatch):
    from kiln import _device
    monkeypatch.setattr(_device, "_warned", set())  # once per process: another test may have warned already
    with tf.device("/CPU:0"):
        x = tf.constant([1.0, 2.0]) * 2.0
    assert x.device == CPU
    assert tf.Variable(1.0).device == CPU
    with caplog.at_level(logging.WARNING, logger="kiln"):
        with tf.device("/GPU:0"):
            y = x + 1.0
        with tf.device("/job:localhost/replica:0/task:0/device:GPU:1"):
            y = y + 1.0
    assert y.device == CPU and y.numpy().tolist() == [4.0, 6.0]
    assert sum("CPU only" in r.getMessage() for r in caplog.records) == 1  # warned once per device type
    with tf.device(None):
        pass
    with pytest.raises(ValueError):
        with tf.device("/banana:0"):
            pass

    @tf.function
    def traced(t):
        with tf.device("/device:CPU:0"):
            out = t * 3.0
        assert out.device == ""  # a graph tensor has no placement of its own, as in TF
        return out
    assert traced(x).device == CPU


def test_versions_eager_flag_and_logger():
    assert tf.version.VERSION == "2.15.0" == tf.__version__
    assert tf.keras.__version__.startswith("2.15")
    assert isinstance(tf.version.GIT_VERSION, str) and tf.version.KILN_VERSION
    assert tf.executing_eagerly()
    seen = []

    @tf.function
    def f(t):
        seen.append(tf.executing_eagerly())
        return t + 1
    f(tf.constant(1))
    assert seen == [False]
    tf.config.run_functions_eagerly(True)
    try:
        f(tf.constant(2))
    finally:
        tf.config.run_functions_eagerly(False)
    assert seen == [False, True]
    logger = tf.get_logger()
    assert isinstance(logger, logging.Logger) and logger is tf.get_logger()
    level = logger.level
    logger.setLevel("ERROR")
    logger.setLevel(level)
