"""keras.utils' threaded helpers (Keras 2.15): TimedThread (on_interval every `interval` seconds in a thread),
and the enqueuers that read batches ahead on worker threads: OrderedEnqueuer (a Sequence, in order, epoch after
epoch, calling on_epoch_end between them) and GeneratorEnqueuer (a generator); SequenceEnqueuer is their base.
Threads only: use_multiprocessing=True is refused."""
import queue
import random
import threading
from concurrent.futures import ThreadPoolExecutor


class TimedThread:
    def __init__(self, interval, **kwargs):
        self.interval = interval
        self.daemon = kwargs.pop("daemon", True)
        self.thread_kwargs = kwargs
        self.thread = None
        self.thread_stop_event = None

    def _call_on_interval(self):
        while not self.thread_stop_event.is_set():
            self.on_interval()
            self.thread_stop_event.wait(self.interval)

    def start(self):
        """Starts the thread (unless it runs already)."""
        if self.thread and self.thread.is_alive():
            return
        self.thread_stop_event = threading.Event()
        self.thread = threading.Thread(target=self._call_on_interval, daemon=self.daemon, **self.thread_kwargs)
        self.thread.start()

    def stop(self):
        if self.thread_stop_event:
            self.thread_stop_event.set()

    def is_alive(self):
        return self.thread.is_alive() if self.thread else False

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *args, **kwargs):
        self.stop()

    def on_interval(self):
        raise NotImplementedError("Runs every x interval seconds. Needs to be implemented in subclasses of "
                                  "`TimedThread`")


class SequenceEnqueuer:
    """Batches read ahead by `workers` threads into a queue of max_queue_size; get() yields them."""

    def __init__(self, sequence, use_multiprocessing=False):
        if use_multiprocessing:
            raise NotImplementedError("kiln.keras.utils enqueuers run on threads: use_multiprocessing=True is not "
                                      "supported")
        self.sequence = sequence
        self.use_multiprocessing = False
        self.workers = 0
        self.queue = None
        self.run_thread = None
        self.stop_signal = None

    def is_running(self):
        return self.stop_signal is not None and not self.stop_signal.is_set()

    def start(self, workers=1, max_queue_size=10):
        self.workers = max(int(workers), 1)
        self.queue = queue.Queue(max_queue_size)
        self.stop_signal = threading.Event()
        self.run_thread = threading.Thread(target=self._run, daemon=True)
        self.run_thread.start()

    def _put(self, item):
        """Queues item unless stopped first; whether it was queued."""
        while not self.stop_signal.is_set():
            try:
                self.queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def stop(self, timeout=None):
        if self.stop_signal is None:
            return
        self.stop_signal.set()
        if self.run_thread is not None:
            self.run_thread.join(timeout)
        self.run_thread = None

    def get(self):
        """Yields the batches (re-raising a worker's error) until stopped or the data ends."""
        while self.is_running() or (self.queue is not None and not self.queue.empty()):
            try:
                item = self.queue.get(timeout=0.1)
            except queue.Empty:
                if self.run_thread is None or not self.run_thread.is_alive():
                    return
                continue
            if item is _END:
                return
            yield item.result()

    def _run(self):
        raise NotImplementedError


_END = object()


class OrderedEnqueuer(SequenceEnqueuer):
    """A Sequence's batches in order (shuffled per epoch with shuffle), epoch after epoch."""

    def __init__(self, sequence, use_multiprocessing=False, shuffle=False):
        super().__init__(sequence, use_multiprocessing)
        self.shuffle = shuffle

    def _run(self):
        with ThreadPoolExecutor(self.workers) as pool:
            while not self.stop_signal.is_set():
                order = list(range(len(self.sequence)))
                if self.shuffle:
                    random.shuffle(order)
                for i in order:
                    if not self._put(pool.submit(self.sequence.__getitem__, i)):
                        return
                self.sequence.on_epoch_end()


class GeneratorEnqueuer(SequenceEnqueuer):
    """A generator's items, read ahead on one thread (a generator cannot be shared), until it ends."""

    def __init__(self, generator, use_multiprocessing=False, random_seed=None):
        super().__init__(generator, use_multiprocessing)
        self.random_seed = random_seed

    def _run(self):
        class Done:
            def __init__(self, value):
                self.value = value

            def result(self):
                return self.value

        class Failed(Done):
            def result(self):
                raise self.value

        try:
            for item in self.sequence:
                if not self._put(Done(item)):
                    return
        except Exception as error:  # noqa: BLE001 - handed to the consumer, as Keras re-raises it in get()
            self._put(Failed(error))
        self._put(_END)
