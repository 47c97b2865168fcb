"""tf.distribute in one process (pytest never starts MPI): the strategies' contexts, reduce/gather/run against
NumPy, eager and in a tf.function, distributed input, per-replica batch sizes, and variables and Keras models made
under a scope. Several workers: python/mpi_tests/check_distribute_strategy.py (ctest Mpi.PythonStrategy)."""
import logging

import numpy as np
import pytest

import kiln as tf
from toy_classifier import toy_data, toy_model
from kiln.distribute._input import slice_for_worker, worker_rows

# TF 2.15's tf.distribute and tf.distribute.experimental, and what Kiln leaves out (checked to be absent).
TF_2_15 = {
    "": ["CrossDeviceOps", "DistributedDataset", "DistributedIterator", "DistributedValues",
         "HierarchicalCopyAllReduce", "InputContext", "InputOptions", "InputReplicationMode", "MirroredStrategy",
         "MultiWorkerMirroredStrategy", "NcclAllReduce", "OneDeviceStrategy", "ParameterServerStrategy", "ReduceOp",
         "ReductionToOneDevice", "ReplicaContext", "RunOptions", "Server", "Strategy", "StrategyExtended",
         "TPUStrategy", "cluster_resolver", "coordinator", "experimental", "experimental_set_strategy",
         "get_replica_context", "get_strategy", "has_strategy", "in_cross_replica_context"],
    "experimental": ["CentralStorageStrategy", "CollectiveCommunication", "CollectiveHints",
                     "CommunicationImplementation", "CommunicationOptions", "MultiWorkerMirroredStrategy",
                     "ParameterServerStrategy", "PreemptionCheckpointHandler", "TPUStrategy", "TerminationConfig",
                     "ValueContext", "coordinator", "partitioners", "rpc"],
}
_CLUSTER = "no gRPC cluster runtime: Kiln's workers are MPI ranks (MultiWorkerMirroredStrategy under mpirun)"
LEFT_OUT = {
    "": {"ParameterServerStrategy": _CLUSTER, "Server": _CLUSTER, "cluster_resolver": _CLUSTER,
         "coordinator": _CLUSTER, "TPUStrategy": "no TPUs"},
    "experimental": {"ParameterServerStrategy": _CLUSTER, "coordinator": _CLUSTER, "rpc": _CLUSTER,
                     "partitioners": "variables are not sharded (one replica per process)",
                     "PreemptionCheckpointHandler": "no cluster preemption signals",
                     "TerminationConfig": "no cluster preemption signals", "TPUStrategy": "no TPUs"},
}


def strategies():
    return [tf.distribute.MirroredStrategy(), tf.distribute.OneDeviceStrategy("/cpu:0"),
            tf.distribute.MultiWorkerMirroredStrategy(), tf.distribute.get_strategy()]


@pytest.mark.parametrize("where", sorted(TF_2_15))
def test_names(where):
    module = tf.distribute if not where else getattr(tf.distribute, where)
    for name in TF_2_15[where]:
        assert hasattr(module, name) != (name in LEFT_OUT[where]), name
    assert tf.distribute.ReduceOp("SUM") is tf.distribute.ReduceOp.SUM


def test_contexts():
    default = tf.distribute.get_strategy()
    assert not tf.distribute.has_strategy() and not tf.distribute.in_cross_replica_context()
    assert tf.distribute.get_replica_context().strategy is default
    assert tf.distribute.get_replica_context().replica_id_in_sync_group == 0
    s = tf.distribute.MirroredStrategy()
    assert s.num_replicas_in_sync == 1
    assert s.extended.worker_devices == ("/job:localhost/replica:0/task:0/device:CPU:0",)
    with s.scope():
        assert tf.distribute.get_strategy() is s and tf.distribute.has_strategy()
        assert tf.distribute.in_cross_replica_context() and tf.distribute.get_replica_context() is None
        with s.scope():  # the same strategy nests
            assert tf.distribute.get_strategy() is s
        with pytest.raises(ValueError, match="Mixing different tf.distribute.Strategy objects"):
            with tf.distribute.OneDeviceStrategy("/cpu:0").scope():
                pass

        def fn():
            ctx = tf.distribute.get_replica_context()
            assert not tf.distribute.in_cross_replica_context()
            assert ctx.strategy is s and ctx.num_replicas_in_sync == 1
            with pytest.raises(RuntimeError, match="requires being in cross-replica context"):
                s.reduce("SUM", 1.0, axis=None)
            return ctx.merge_call(lambda strategy, v: (strategy is s, tf.distribute.in_cross_replica_context(), v),
                                  args=(3,))
        assert s.run(fn) == (True, True, 3)
    assert not tf.distribute.has_strategy()
    tf.distribute.experimental_set_strategy(s)
    try:
        assert tf.distribute.get_strategy() is s and tf.distribute.in_cross_replica_context()
    finally:
        tf.distribute.experimental_set_strategy(None)
    assert not tf.distribute.has_strategy()


@pytest.mark.parametrize("traced", [False, True])
def test_reduce_against_numpy(traced):
    rng = np.random.RandomState(1)
    value = rng.randn(4, 3)
    for s in strategies():
        def reduce(op, v, axis):
            return s.reduce(op, v, axis=axis)
        if traced:
            reduce = tf.function(reduce)
        x = tf.constant(value)
        np.testing.assert_allclose(reduce(tf.distribute.ReduceOp.SUM, x, None).numpy(), value)
        np.testing.assert_allclose(reduce(tf.distribute.ReduceOp.MEAN, x, None).numpy(), value)
        np.testing.assert_allclose(reduce("SUM", x, 0).numpy(), value.sum(axis=0))
        np.testing.assert_allclose(reduce("MEAN", x, 0).numpy(), value.mean(axis=0))
        np.testing.assert_allclose(reduce("mean", x, 1).numpy(), value.mean(axis=1))
        nested = reduce(tf.distribute.ReduceOp.SUM, {"a": x, "b": (x * 2.0,)}, 0)
        np.testing.assert_allclose(nested["b"][0].numpy(), 2 * value.sum(axis=0))
        np.testing.assert_allclose(s.gather(x, axis=1).numpy(), value)
        assert s.experimental_local_results(x)[0] is x
    with pytest.raises(ValueError, match="ReduceOp"):
        tf.distribute.MirroredStrategy().reduce("PROD", 1.0, axis=None)


@pytest.mark.parametrize("traced", [False, True])
def test_run_and_replica_collectives(traced):
    s = tf.distribute.MirroredStrategy()

    def replica_fn(x, scale=1.0):
        ctx = tf.distribute.get_replica_context()
        total = ctx.all_reduce(tf.distribute.ReduceOp.SUM, {"x": x * scale})
        return total["x"], ctx.all_reduce("MEAN", x), ctx.all_gather(x, axis=0), ctx.replica_id_in_sync_group

    def step(x):
        return s.run(replica_fn, args=(x,), kwargs={"scale": 2.0})
    if traced:
        step = tf.function(step)
    total, mean, gathered, rid = step(tf.constant([1.0, -2.0]))
    np.testing.assert_allclose(total.numpy(), [2.0, -4.0])
    np.testing.assert_allclose(mean.numpy(), [1.0, -2.0])
    np.testing.assert_allclose(gathered.numpy(), [1.0, -2.0])
    assert int(rid) == 0


def test_run_converts_control_flow_in_functions():
    s = tf.distribute.MirroredStrategy()

    def replica_fn(x):
        if tf.reduce_sum(x) > 0:  # a tensor condition: AutoGraph makes it a cond, as TF's run does
            return x * 2.0
        return -x

    f = tf.function(lambda x: s.run(replica_fn, args=(x,)))
    np.testing.assert_allclose(f(tf.constant([1.0, 2.0])).numpy(), [2.0, 4.0])
    np.testing.assert_allclose(f(tf.constant([-1.0, -2.0])).numpy(), [1.0, 2.0])


def test_input_context_per_replica_batch_size():
    ctx = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=1, num_replicas_in_sync=4)
    assert (ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync) == (2, 1, 4)
    assert ctx.get_per_replica_batch_size(64) == 16
    assert str(ctx) == "tf.distribute.InputContext(input pipeline id 1, total: 2)"
    with pytest.raises(ValueError, match="The `global_batch_size` 10 is not divisible by `num_replicas_in_sync` 4"):
        ctx.get_per_replica_batch_size(10)
    seen = []

    def dataset_fn(input_context):
        seen.append(input_context)
        return tf.data.Dataset.range(8).batch(input_context.get_per_replica_batch_size(4))

    dist = tf.distribute.MirroredStrategy().distribute_datasets_from_function(
        dataset_fn, tf.distribute.InputOptions(experimental_fetch_to_device=False))
    assert [b.numpy().tolist() for b in dist] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert (seen[0].num_input_pipelines, seen[0].input_pipeline_id, seen[0].num_replicas_in_sync) == (1, 0, 1)
    with pytest.raises(ValueError, match="must return a `tf.data.Dataset`"):
        tf.distribute.MirroredStrategy().distribute_datasets_from_function(lambda ctx: [1, 2])
    values = tf.distribute.MirroredStrategy().experimental_distribute_values_from_function(
        lambda ctx: (ctx.replica_id_in_sync_group, ctx.num_replicas_in_sync))
    assert values == (0, 1)


def test_worker_rows_split_as_numpy():
    for n in range(0, 13):
        for size in (1, 2, 3, 5):
            expected = np.array_split(np.arange(n), size)
            for rank in range(size):
                lo, hi = worker_rows(n, rank, size)
                assert list(range(lo, hi)) == expected[rank].tolist(), (n, size, rank)

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def rows(t):  # an unknown batch size: the bounds are computed in the graph
        return slice_for_worker(t, 1, 3)
    batch = np.arange(14, dtype=np.float32).reshape(7, 2)
    np.testing.assert_array_equal(rows(batch).numpy(), np.array_split(batch, 3)[1])
    np.testing.assert_array_equal(slice_for_worker(tf.constant(batch), 2, 3).numpy(), np.array_split(batch, 3)[2])


def test_distributed_dataset_eager_and_in_a_function():
    s = tf.distribute.MirroredStrategy()
    dist = s.experimental_distribute_dataset(tf.data.Dataset.range(10).batch(4))
    assert [b.numpy().tolist() for b in dist] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    it = iter(dist)
    assert it.get_next().numpy().tolist() == [0, 1, 2, 3]
    assert next(it).numpy().tolist() == [4, 5, 6, 7]
    assert it.element_spec == dist.element_spec
    assert int(dist.reduce(tf.constant(0, tf.int64), lambda acc, b: acc + tf.reduce_sum(b))) == 45

    @tf.function
    def total(dataset):
        acc = tf.constant(0, tf.int64)
        for batch in dataset:
            acc += s.reduce("SUM", s.run(lambda b: tf.reduce_sum(b * 2), args=(batch,)), axis=None)
        return acc
    assert int(total(dist)) == 90
    # One dataset loop in the graph, not the batches unrolled.
    assert total.experimental_get_tracing_count() == 1
    with pytest.raises(ValueError, match="must be a `tf.data.Dataset`"):
        s.experimental_distribute_dataset([1, 2, 3])


def test_device_arguments(caplog):
    several = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])  # made, as TF makes it, but not run
    assert several.num_replicas_in_sync == 2
    for use in (several.scope, lambda: several.run(lambda: 1), lambda: several.reduce("SUM", 1.0, axis=None),
                lambda: several.experimental_distribute_dataset(tf.data.Dataset.range(4).batch(2))):
        with pytest.raises(NotImplementedError, match="one replica per process"):
            with use():
                pass
    central = tf.distribute.experimental.CentralStorageStrategy()
    assert central.num_replicas_in_sync == 1 and central.run(lambda: 3) == 3
    with pytest.raises(ValueError, match="No duplicates allowed"):
        tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:0"])
    with caplog.at_level(logging.WARNING, logger="kiln"):
        s = tf.distribute.OneDeviceStrategy("/gpu:0")
    assert "CPU only" in caplog.text and s.num_replicas_in_sync == 1
    s = tf.distribute.MirroredStrategy(cross_device_ops=tf.distribute.HierarchicalCopyAllReduce())
    assert s.num_replicas_in_sync == 1
    with pytest.raises(ValueError, match="CrossDeviceOps"):
        tf.distribute.MirroredStrategy(cross_device_ops="nccl")


def test_multi_worker_outside_mpirun_is_one_worker():
    ring = tf.distribute.experimental.CommunicationImplementation.RING
    options = tf.distribute.experimental.CommunicationOptions(bytes_per_pack=1 << 20, timeout_seconds=30,
                                                              implementation=ring)
    s = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    assert s.num_replicas_in_sync == 1 and s._bucket_bytes == 1 << 20
    assert (s.cluster_resolver.task_type, s.cluster_resolver.task_id) == ("worker", 0)
    spec = s.cluster_resolver.cluster_spec()
    assert spec.as_dict() == {"worker": ["mpi-rank-0"]} and spec.jobs == ["worker"] and spec.num_tasks("worker") == 1
    assert s.extended.should_checkpoint
    with pytest.raises(NotImplementedError, match="MPI ranks"):
        tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=object())
    with pytest.raises(ValueError, match="bytes_per_pack must be non-negative"):
        tf.distribute.experimental.CommunicationOptions(bytes_per_pack=-1)
    old = tf.distribute.experimental.MultiWorkerMirroredStrategy(
        tf.distribute.experimental.CollectiveCommunication.NCCL)
    assert old.num_replicas_in_sync == 1


def test_scoped_variables_and_losses():
    s = tf.distribute.MirroredStrategy()
    with s.scope():
        v = tf.Variable([1.0, 2.0])
        assert s.extended.variable_created_in_scope(v)

    @tf.function
    def step():
        return s.run(lambda: v.assign_add([1.0, 1.0]))
    step()
    np.testing.assert_array_equal(v.numpy(), [2.0, 3.0])
    per_example = tf.constant([1.0, 2.0, 3.0, 6.0])
    with s.scope():
        got = s.run(lambda: tf.nn.compute_average_loss(per_example))
    assert float(got) == 3.0  # the batch times the replicas (1)


def _data():
    return toy_data()


def _model():
    return toy_model()


def test_keras_fit_under_a_scope_matches_fit_without():
    x, y = _data()
    s = tf.distribute.MirroredStrategy()
    with s.scope():
        model = _model()
    plain = _model()
    plain.set_weights(model.get_weights())
    assert model.distribute_strategy is s and plain.distribute_strategy is tf.distribute.get_strategy()
    history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    plain_history = plain.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    assert history.history == plain_history.history
    for a, b in zip(model.get_weights(), plain.get_weights()):
        np.testing.assert_array_equal(a, b)
    dist = s.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(16))
    assert model.evaluate(dist, verbose=0) == model.evaluate(x, y, batch_size=16, verbose=0)
    model.fit(dist, epochs=1, verbose=0)


def test_dataset_creator():
    x, y = _data()
    seen = []

    def dataset_fn(input_context):
        seen.append(input_context.num_replicas_in_sync)
        batch = input_context.get_per_replica_batch_size(16)
        return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(batch)

    with tf.distribute.MirroredStrategy().scope():
        model = _model()
    creator = tf.keras.utils.experimental.DatasetCreator(dataset_fn)
    history = model.fit(creator, epochs=2, steps_per_epoch=3, verbose=0)
    assert len(history.history["loss"]) == 2 and seen == [1]  # called once per fit
    assert len(model.evaluate(creator, steps=2, verbose=0)) == 2
    with pytest.raises(ValueError, match="`steps_per_epoch`, `validation_steps`, `steps`"):
        model.fit(creator, epochs=1, verbose=0)
    with pytest.raises(TypeError, match="must be a `callable`"):
        tf.keras.utils.experimental.DatasetCreator(3)
    with pytest.raises(TypeError, match="must return a Dataset"):
        tf.keras.utils.experimental.DatasetCreator(lambda ctx: [1])(tf.distribute.InputContext())


def test_losses_reducing_over_the_batch_are_refused_outside_compile():
    y, logits = tf.constant([0, 1]), tf.constant([[2.0, -1.0], [0.5, 0.3]])
    mean_loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    per_example = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True,
                                                                reduction=tf.keras.losses.Reduction.NONE)
    expected = float(mean_loss(y, logits))
    s = tf.distribute.MirroredStrategy()
    with s.scope():
        with pytest.raises(ValueError, match="Please use `tf.keras.losses.Reduction.SUM` or"):
            mean_loss(y, logits)
        with pytest.raises(ValueError, match="Reduction.NONE"):
            s.run(lambda: mean_loss(y, logits))
        got = s.run(lambda: tf.nn.compute_average_loss(per_example(y, logits)))
        assert abs(float(got) - expected) < 1e-6
        model = _model()
        model.compile(optimizer="sgd", loss=mean_loss, metrics=[tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True)])
    x, labels = _data()
    model.fit(x, labels, batch_size=16, epochs=1, verbose=0)  # compile's losses may reduce over the batch
    assert float(mean_loss(y, logits)) == expected  # outside every scope
