"""tf.distribute.MultiWorkerMirroredStrategy over kiln.distributed: run by ctest as
`mpirun -np N python3 python/mpi_tests/check_distribute_strategy.py` (PYTHONPATH=build/python), N = 2 and 3. Every
rank checks the same things against references computed in this process (one process training on the whole batch,
NumPy) and exits non-zero on a failure."""
import numpy as np

import kiln as tf
import kiln.distributed as kd

strategy = tf.distribute.MultiWorkerMirroredStrategy()
rank, size = strategy.cluster_resolver.task_id, strategy.num_replicas_in_sync
assert size >= 2, size
assert strategy.extended.worker_devices == (f"/job:worker/replica:0/task:{rank}/device:CPU:0",)

# ---- reduce, all_reduce, gather against NumPy, eager and in a tf.function -------------------------
mine = np.arange(6, dtype=np.float64).reshape(2, 3) * (rank + 1)
every = [np.arange(6, dtype=np.float64).reshape(2, 3) * (r + 1) for r in range(size)]


def replica_fn(x):
    ctx = tf.distribute.get_replica_context()
    assert ctx.num_replicas_in_sync == size
    return ctx.all_reduce(tf.distribute.ReduceOp.SUM, x), ctx.all_reduce("MEAN", x), ctx.replica_id_in_sync_group


for mode in ("eager", "function"):
    total, mean, rid = (strategy.run(replica_fn, args=(tf.constant(mine),)) if mode == "eager"
                        else tf.function(lambda x: strategy.run(replica_fn, args=(x,)))(tf.constant(mine)))
    np.testing.assert_allclose(total.numpy(), sum(every))
    np.testing.assert_allclose(mean.numpy(), sum(every) / size)
    assert int(rid) == rank
    with strategy.scope():
        reduce = strategy.reduce if mode == "eager" else tf.function(
            lambda op, v, axis: strategy.reduce(op, v, axis=axis))
        np.testing.assert_allclose(reduce(tf.distribute.ReduceOp.SUM, tf.constant(mine), None).numpy(), sum(every))
        np.testing.assert_allclose(reduce(tf.distribute.ReduceOp.MEAN, tf.constant(mine), 0).numpy(),
                                   np.concatenate(every).mean(axis=0))
        np.testing.assert_allclose(reduce(tf.distribute.ReduceOp.SUM, tf.constant(mine), 1).numpy(),
                                   sum(e.sum(axis=1) for e in every))
        np.testing.assert_allclose(strategy.gather(tf.constant(mine), axis=1).numpy(), np.concatenate(every, axis=1))

# ---- input: per-replica batch sizes, and this worker's slice of each global batch ------------------
seen = []


def dataset_fn(ctx):
    seen.append((ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.get_per_replica_batch_size(12)))
    return tf.data.Dataset.range(24).shard(ctx.num_input_pipelines, ctx.input_pipeline_id).batch(
        ctx.get_per_replica_batch_size(12))


batches = [b.numpy().tolist() for b in strategy.distribute_datasets_from_function(dataset_fn)]
assert seen == [(size, rank, 12 // size)], seen
assert batches[0] == list(range(rank, 24, size))[:12 // size], batches
rows = [b.numpy().tolist() for b in strategy.experimental_distribute_dataset(tf.data.Dataset.range(10).batch(5))]
split = np.array_split(np.arange(5), size)[rank].tolist()
assert rows == [split, [r + 5 for r in split]], rows

try:
    strategy.experimental_distribute_dataset(tf.data.Dataset.range(10))
    raise AssertionError("an unbatched dataset was split")
except ValueError as e:
    assert "batch the dataset first" in str(e), e

# ---- Keras: fit on N workers at global batch B = one process at batch B --------------------------
rng = np.random.RandomState(0)
x = rng.rand(60, 5).astype(np.float32)
y = (x @ rng.rand(5, 3)).argmax(axis=1).astype(np.int32)


def make_model():
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="tanh", input_shape=(5,)),
                                 tf.keras.layers.Dense(3)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.5),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model


# The reference: one process, no strategy, the whole batch, from the strategy's initial weights.
tf.keras.utils.set_random_seed(rank)  # each rank draws other weights: the strategy must start from rank 0's
with strategy.scope():
    model = make_model()
reference = make_model()  # outside the scope: this rank's own draw
own = strategy.gather(tf.constant(reference.weights[0].numpy()[None]), axis=0).numpy()
assert not np.array_equal(own[0], own[1])
started = strategy.gather(tf.constant(model.weights[0].numpy()[None]), axis=0).numpy()
assert all(np.array_equal(s, started[0]) for s in started)  # rank 0's initial values everywhere
reference.set_weights([w.numpy() for w in model.weights])

history = model.fit(x, y, batch_size=12, epochs=3, shuffle=False, verbose=0)
ref_history = reference.fit(x, y, batch_size=12, epochs=3, shuffle=False, verbose=0)
for w, ref in zip(model.weights, reference.weights):
    np.testing.assert_allclose(w.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)
np.testing.assert_allclose(history.history["loss"], ref_history.history["loss"], rtol=1e-5)
np.testing.assert_allclose(history.history["accuracy"], ref_history.history["accuracy"], rtol=1e-6)
np.testing.assert_allclose(model.evaluate(x, y, batch_size=12, verbose=0), reference.evaluate(x, y, batch_size=12,
                                                                                              verbose=0), rtol=1e-5)

# ---- a custom loop (the "Custom training with tf.distribute.Strategy" pattern) ----------------------
with strategy.scope():
    loop_model = make_model()
    optimizer = tf.keras.optimizers.SGD(0.5)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True,
                                                                reduction=tf.keras.losses.Reduction.NONE)
    train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()  # read summed over the ranks
ref_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
loop_ref = make_model()
loop_ref.set_weights([w.numpy() for w in loop_model.weights])  # already rank 0's on every rank
ref_opt = tf.keras.optimizers.SGD(0.5)
dist = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(12))


def train_step(inputs):
    images, labels = inputs
    with tf.GradientTape() as tape:
        predictions = loop_model(images, training=True)
        loss = tf.nn.compute_average_loss(loss_object(labels, predictions), global_batch_size=12)
    train_accuracy.update_state(labels, predictions)
    optimizer.apply_gradients(zip(tape.gradient(loss, loop_model.trainable_variables),
                                  loop_model.trainable_variables))
    return loss


@tf.function
def distributed_step(inputs):
    return strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(train_step, args=(inputs,)), axis=None)


losses = [float(distributed_step(batch)) for batch in dist]
ref_losses = []
for images, labels in tf.data.Dataset.from_tensor_slices((x, y)).batch(12):
    with tf.GradientTape() as tape:
        predictions = loop_ref(images, training=True)
        loss = tf.reduce_mean(loss_object(labels, predictions))
    ref_accuracy.update_state(labels, predictions)
    ref_opt.apply_gradients(zip(tape.gradient(loss, loop_ref.trainable_variables), loop_ref.trainable_variables))
    ref_losses.append(float(loss))
np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
np.testing.assert_allclose(float(train_accuracy.result()), float(ref_accuracy.result()))
assert float(train_accuracy.result()) > 0  # and the rank's own counts are still its own: read twice, same value
np.testing.assert_allclose(float(tf.function(train_accuracy.result)()), float(ref_accuracy.result()))
for w, ref in zip(loop_model.weights, loop_ref.weights):
    np.testing.assert_allclose(w.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)

# ---- an embedding's gradient, each rank looking up another row, is summed over the ranks ---------------
with strategy.scope():
    embedding = tf.keras.layers.Embedding(4, 2, embeddings_initializer="ones")
    embedding.build((None,))
    sgd = tf.keras.optimizers.SGD(1.0)


def embedding_step(ids):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(embedding(ids))
    sgd.apply_gradients(zip(tape.gradient(loss, embedding.trainable_variables), embedding.trainable_variables))


strategy.run(embedding_step, args=(tf.constant([rank % 4]),))
expected = np.ones((4, 2))
for r in range(size):
    expected[r % 4] -= 1.0
np.testing.assert_allclose(embedding.embeddings.numpy(), expected)

# ---- a dynamic loss scale: a non-finite gradient on one rank skips the step on every rank ------------
with strategy.scope():
    v = tf.Variable([1.0, 2.0])
    scaled = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.5))
for mode in ("eager", "function"):
    apply = (lambda g: strategy.run(lambda: scaled.apply_gradients([(g, v)])))
    apply = apply if mode == "eager" else tf.function(apply)
    before, scale = v.numpy(), float(scaled.loss_scale)
    apply(tf.constant([np.inf if rank == 1 else 1.0, 1.0]))
    np.testing.assert_array_equal(v.numpy(), before)
    assert float(scaled.loss_scale) == scale / 2
    apply(tf.constant([1.0, float(rank)]))  # summed: [size, size * (size - 1) / 2]
    np.testing.assert_allclose(v.numpy(), before - 0.5 * np.array([size, size * (size - 1) / 2]))

print(f"rank {rank}/{size}: tf.distribute.MultiWorkerMirroredStrategy ok")
kd.finalize()
