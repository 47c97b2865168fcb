"""PyTorch versions of the workloads Kiln's benchmarks time (bench/*.cpp).

Each group returns {figure name: value}; times are in seconds. The names are
the ones bench/peers/table.py pairs with Kiln's Google Benchmark results.
"""
import gzip
import os
import statistics
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from timing import alternate, busy_cores, busy_core_count, elapsed

BIG = 1 << 24  # 16M float32 elements, 64 MiB per array (bench_eager's kBig)


def dispatch(quick):
    """Per-op cost of tiny eager ops from Python, loop overhead included
    (about 10 ns of the total): what a torch user pays per op."""
    ops = 20_000 if quick else 100_000
    a = torch.ones(1)
    b = torch.ones(1)
    loop = range(ops)

    def add():
        for _ in loop:
            a + b

    def mul_scalar():  # the Python float becomes a 0-d tensor on each call
        for _ in loop:
            a * 2.0

    def tanh():
        for _ in loop:
            torch.tanh(a)

    times = alternate({"add": add, "mul_scalar": mul_scalar, "tanh": tanh}, rounds=5 if quick else 9)
    return {"dispatch." + name: t / ops for name, t in times.items()}


def chain(x: torch.Tensor) -> torch.Tensor:
    """bench_function's small_ops: 250 x 4 elementwise ops = 1000 ops."""
    for _ in range(250):
        x = x * 1.0001
        x = x + 0.001
        x = torch.tanh(x)
        x = x * 0.9999
    return x


def small_ops(quick):
    """The 1000-op chain eagerly and as TorchScript (jit.script keeps the
    loop; the profiling executor optimizes on the second call, so timing
    starts after three)."""
    scripted = torch.jit.script(chain)
    figures = {}
    for n in (16, 1_000_000):
        x = torch.rand(n)
        expected = chain(x)
        for _ in range(2):  # profiling, then optimizing call
            scripted(x)
        assert torch.allclose(scripted(x), expected, rtol=1e-5, atol=1e-6)
        tiny = n <= 1024
        rounds = (7 if quick else 21) if tiny else (3 if quick else 5)
        times = alternate({"eager": lambda: chain(x), "graph": lambda: scripted(x)},
                          rounds=rounds, calls=10 if tiny else 1, warmup=2 if tiny else 0)
        for name, t in times.items():
            figures["small_ops.%d.%s" % (n, name)] = t
    return figures


def trace_cost(quick):
    """What it costs to turn the 1000-op chain ([16]) into a graph that runs at
    full speed: torch.jit.trace (check_trace=False, the cheaper setting), then
    the first call (profiling) and the second (optimization). A new Python
    function object each time, so no cache of torch.jit can hit."""
    x = torch.rand(16)
    builds, firsts, seconds = [], [], []
    graph = None
    for _ in range(3 if quick else 7):
        def fresh(v):
            return chain(v)
        t_build, graph = elapsed(lambda: torch.jit.trace(fresh, (x,), check_trace=False))
        builds.append(t_build)
        firsts.append(elapsed(lambda: graph(x))[0])
        seconds.append(elapsed(lambda: graph(x))[0])
    steady = alternate({"graph": lambda: graph(x), "eager": lambda: chain(x)}, rounds=21, warmup=2)
    build, first, second = (statistics.median(v) for v in (builds, firsts, seconds))
    to_steady = build + first + second
    eager, graph_call = steady["eager"], steady["graph"]
    saving = eager - graph_call
    return {
        "trace.to_steady": to_steady,
        "trace.build": build,
        "trace.eager": eager,
        "trace.steady": graph_call,
        # The extra time of the warm-up calls over running them eagerly,
        # repaid at `saving` per later call (bench_function's break_even_calls).
        "trace.break_even_calls": (to_steady - 2 * eager) / saving if saving > 0 else float("nan"),
    }


def mul_add(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    return a * b + c


def elementwise(quick):
    """a*b+c on 16M floats eagerly and as TorchScript, beside an in-place
    copy of 16M floats (the memory-bandwidth reference)."""
    a, b, c = (torch.rand(BIG) for _ in range(3))
    y = torch.empty(BIG)
    scripted = torch.jit.script(mul_add)
    assert torch.equal(scripted(a, b, c), a * b + c)
    with torch.no_grad():
        times = alternate({"eager": lambda: a * b + c, "graph": lambda: scripted(a, b, c),
                           "copy": lambda: y.copy_(a)}, rounds=5 if quick else 11, warmup=3)
    return {"elementwise." + name: t for name, t in times.items()}


def matmul(quick):
    """1024 x 1024 float32 matmul with a new output each call, as Kiln's
    BM_MatMul (torch.mm goes to the BLAS)."""
    a, b = torch.rand(1024, 1024), torch.rand(1024, 1024)
    times = alternate({"mm": lambda: torch.mm(a, b)}, rounds=5 if quick else 11, warmup=2)
    return {"matmul.1024": times["mm"]}


def conv(quick):
    """The seeds' conv in torch's channels_last layout (TF's NHWC):
    [1,100,200,200] with 100 3x3 filters, VALID."""
    x = torch.rand(1, 100, 200, 200).contiguous(memory_format=torch.channels_last)
    w = (torch.rand(100, 100, 3, 3) - 0.5).contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        assert F.conv2d(x, w).shape == (1, 100, 198, 198)
        times = alternate({"eager": lambda: F.conv2d(x, w)}, rounds=5 if quick else 11, warmup=3)
    return {"conv.eager": times["eager"]}


def mnist_model():
    """The seeds' CNN, in torch's default NCHW layout."""
    return nn.Sequential(
        nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(7 * 7 * 64, 1024), nn.ReLU(), nn.Linear(1024, 10))


def training_step(model, images, labels):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        return loss
    return step


def mnist(quick):
    """One training step (forward, loss, backward, Adam) on random data at
    batch 50 and 256: eager, and with the model as a jit.trace graph
    (autograd then differentiates the graph)."""
    figures = {}
    for batch in (50, 256):
        torch.manual_seed(0)
        images = torch.rand(batch, 1, 28, 28)
        labels = torch.randint(0, 10, (batch,))
        eager_model = mnist_model()
        graph_model = mnist_model()
        graph_model.load_state_dict(eager_model.state_dict())
        graph_model = torch.jit.trace(graph_model, (images,))
        eager_step = training_step(eager_model, images, labels)
        graph_step = training_step(graph_model, images, labels)
        first = (float(eager_step()), float(graph_step()))
        assert abs(first[0] - first[1]) < 1e-4, first
        times = alternate({"eager": eager_step, "graph": graph_step}, rounds=5 if quick else 15, warmup=3)
        for name, t in times.items():
            figures["mnist.%d.%s" % (batch, name)] = t
    return figures


def contention(quick):
    """The batch-50 step quiet, then with busy_core_count() spinning
    processes, alternated (as BM_MnistStepContended): medians of each."""
    torch.manual_seed(0)
    images = torch.rand(50, 1, 28, 28)
    labels = torch.randint(0, 10, (50,))
    eager_model = mnist_model()
    graph_model = torch.jit.trace(mnist_model(), (images,))
    steps = {"graph": training_step(graph_model, images, labels), "eager": training_step(eager_model, images, labels)}
    for step in steps.values():
        step()
    samples = {"%s.%s" % (name, load): [] for name in steps for load in ("quiet", "busy")}
    with busy_cores(busy_core_count()) as set_busy:
        for _ in range(8 if quick else 30):
            for load in ("quiet", "busy"):
                set_busy(load == "busy")
                for name, step in steps.items():
                    t, _ = elapsed(step)
                    samples["%s.%s" % (name, load)].append(t)
        set_busy(False)
    return {"contention." + key: statistics.median(s) for key, s in samples.items()}


FASHION_DIR = "/usr/share/datasets/fashion-mnist"  # Debian's dataset-fashion-mnist


def read_idx(name):
    """A gzip-compressed IDX file of FASHION_DIR as a uint8 array of its dims."""
    with gzip.open(os.path.join(FASHION_DIR, name), "rb") as f:
        data = f.read()
    rank = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * rank).reshape(dims)


def fashion_images(name):
    """[N, 1, 28, 28] float32 in [0, 1], as Kiln's IDX reader scales them."""
    return torch.from_numpy(read_idx(name).astype(np.float32) / 255.0).unsqueeze(1)


def fashion(quick):
    """One epoch of `mnist_train --dataset fashion --epochs 1`: the seeds' CNN,
    Adam 1e-3, batch 50, the 60,000 training images reshuffled, the input
    pipeline in the epoch's wall time; then the test accuracy on the 10,000
    test images. Eager, as PyTorch users train."""
    torch.manual_seed(1)
    train_x, train_y = fashion_images("train-images-idx3-ubyte.gz"), torch.from_numpy(
        read_idx("train-labels-idx1-ubyte.gz").astype(np.int64))
    test_x, test_y = fashion_images("t10k-images-idx3-ubyte.gz"), torch.from_numpy(
        read_idx("t10k-labels-idx1-ubyte.gz").astype(np.int64))
    model = mnist_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batch = 50
    start = time.perf_counter()
    order = torch.randperm(len(train_x))
    for first in range(0, len(train_x) - batch + 1, batch):
        rows = order[first:first + batch]
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(train_x[rows]), train_y[rows]).backward()
        optimizer.step()
    epoch = time.perf_counter() - start
    with torch.no_grad():
        correct = sum(int((model(test_x[i:i + 500]).argmax(1) == test_y[i:i + 500]).sum())
                      for i in range(0, len(test_x), 500))
    return {"fashion.epoch": epoch, "fashion.test_accuracy": correct / len(test_x)}


GROUPS = {
    "dispatch": dispatch,
    "small_ops": small_ops,
    "trace": trace_cost,
    "elementwise": elementwise,
    "matmul": matmul,
    "conv": conv,
    "mnist": mnist,
    "contention": contention,
    "fashion": fashion,
}
