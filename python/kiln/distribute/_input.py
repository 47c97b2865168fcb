"""tf.distribute's input side: InputContext (what distribute_datasets_from_function's function is told),
ValueContext, and DistributedDataset / DistributedIterator, whose elements are this worker's per-replica
batches."""


def _k():
    import kiln
    return kiln


class InputContext:
    """tf.distribute.InputContext: this input pipeline among the workers' (one per worker) and the replica count."""

    def __init__(self, num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1):
        self._num_input_pipelines = num_input_pipelines
        self._input_pipeline_id = input_pipeline_id
        self._num_replicas_in_sync = num_replicas_in_sync

    @property
    def num_replicas_in_sync(self):
        return self._num_replicas_in_sync

    @property
    def input_pipeline_id(self):
        return self._input_pipeline_id

    @property
    def num_input_pipelines(self):
        return self._num_input_pipelines

    def get_per_replica_batch_size(self, global_batch_size):
        """global_batch_size / num_replicas_in_sync (ValueError unless it divides evenly)."""
        if global_batch_size % self._num_replicas_in_sync != 0:
            raise ValueError(f"The `global_batch_size` {global_batch_size!r} is not divisible by "
                             f"`num_replicas_in_sync` {self._num_replicas_in_sync!r} ")
        return global_batch_size // self._num_replicas_in_sync

    def __str__(self):
        return f"tf.distribute.InputContext(input pipeline id {self._input_pipeline_id}, total: " \
               f"{self._num_input_pipelines})"


class ValueContext:
    """tf.distribute.experimental.ValueContext: the replica a value is made for."""

    def __init__(self, replica_id_in_sync_group=0, num_replicas_in_sync=1):
        self._replica_id_in_sync_group = replica_id_in_sync_group
        self._num_replicas_in_sync = num_replicas_in_sync

    @property
    def num_replicas_in_sync(self):
        return self._num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self):
        return self._replica_id_in_sync_group

    def __str__(self):
        return f"tf.distribute.ValueContext(replica id {self._replica_id_in_sync_group},  total replicas in sync: " \
               f"{self._num_replicas_in_sync})"


def worker_rows(n, rank, size):
    """[lo, hi) of worker `rank`'s rows of a batch of n split over `size` workers: the first n % size workers take
    one more (TF's rebatching of a global batch into per-replica ones)."""
    base, extra = n // size, n % size
    lo = rank * base + min(rank, extra)
    return lo, lo + base + (1 if rank < extra else 0)


def slice_for_worker(t, rank, size):
    """Worker `rank`'s rows of the batch `t` (a tensor, traced or eager, or an array)."""
    tf = _k()
    if not isinstance(t, tf.Tensor):
        lo, hi = worker_rows(len(t), rank, size)
        return t[lo:hi]
    n = t.shape[0] if t.shape.rank and t.shape[0] is not None else None
    if n is not None:
        lo, hi = worker_rows(int(n), rank, size)
        return t[lo:hi]
    n = tf.shape(t)[0]
    base, extra = n // size, n % size
    lo = rank * base + tf.minimum(rank, extra)
    rows = base + tf.cast(rank < extra, n.dtype)
    # Rows by index: Kiln's t[lo:hi] and tf.slice take bounds known while tracing only.
    return tf.gather(t, tf.range(lo, lo + rows))


class DistributedIterator:
    """tf.distribute.DistributedIterator: this worker's per-replica batches."""

    def __init__(self, iterator, element_spec):
        self._iterator = iterator
        self._element_spec = element_spec

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._iterator)

    def get_next(self):
        return next(self._iterator)

    def get_next_as_optional(self):
        return self._iterator.get_next_as_optional()

    @property
    def element_spec(self):
        return self._element_spec


class DistributedDataset:
    """tf.distribute.DistributedDataset: iterate it (eagerly, or in a tf.function's for loop, which becomes one
    dataset loop) for this worker's per-replica batches; pass it to strategy.run or Keras' fit."""

    def __init__(self, local_dataset, strategy):
        self._kiln_dataset = local_dataset   # what AutoGraph's for loops and Keras iterate
        self._strategy = strategy

    def __iter__(self):
        return DistributedIterator(iter(self._kiln_dataset), self.element_spec)

    @property
    def element_spec(self):
        return self._kiln_dataset.element_spec

    def reduce(self, initial_state, reduce_fn):
        """reduce_fn over this worker's batches (tf.data's reduce)."""
        return self._kiln_dataset.reduce(initial_state, reduce_fn)

    def cardinality(self):
        return self._kiln_dataset.cardinality()

    def __repr__(self):
        return f"<DistributedDataset element_spec={self.element_spec}>"
