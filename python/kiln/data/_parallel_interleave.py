"""interleave(num_parallel_calls=N or AUTOTUNE): the open datasets are read ahead on threads.

Every one of the `cycle_length` open datasets keeps one element in flight on a pool of N
threads (a dataset is read by one thread at a time), while the consumer takes them in the
sequential interleave's order: `block_length` from each in turn, an exhausted dataset
replaced by the next input element's, in the order they ran out. Inputs are opened, and the
map function called, on the consumer's thread. deterministic=False takes from whichever open
dataset has an element ready first (TF's "sloppy" interleave)."""
import concurrent.futures as futures

_END = object()


def parallel_interleave(ds, open_dataset, cycle_length, block_length, workers, deterministic):
    """The pass function of a PyDataset interleaving `open_dataset(element)` over the elements of `ds`."""

    def open_pass():
        pool = futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kiln-interleave")
        inputs = iter(ds)
        slots = [None] * cycle_length  # [iterator, future of its next element]
        end_of_input = False

        def fill(index):
            nonlocal end_of_input
            if end_of_input:
                return
            element = next(inputs, None)
            if element is None:
                end_of_input = True
                return
            iterator = iter(open_dataset(element))
            slots[index] = [iterator, pool.submit(next, iterator, _END)]

        def take(index):
            """The slot's next element, or _END (the slot is refilled from the input)."""
            iterator, future = slots[index]
            value = future.result()
            if value is _END:
                slots[index] = None
                fill(index)
            else:
                slots[index][1] = pool.submit(next, iterator, _END)
            return value

        try:
            for index in range(cycle_length):
                fill(index)
            index, taken = 0, 0
            while any(slot is not None for slot in slots):
                if not deterministic:
                    ready = futures.wait([s[1] for s in slots if s is not None],
                                         return_when=futures.FIRST_COMPLETED)[0]
                    index = next(i for i, s in enumerate(slots) if s is not None and s[1] in ready)
                elif slots[index] is None:
                    index, taken = (index + 1) % cycle_length, 0
                    continue
                value = take(index)
                if value is _END:
                    index, taken = (index + 1) % cycle_length, 0
                    continue
                yield value
                taken += 1
                if taken == block_length:
                    index, taken = (index + 1) % cycle_length, 0
        finally:
            for slot in slots:
                if slot is not None:
                    slot[1].cancel()
            pool.shutdown(wait=True)

    return open_pass
