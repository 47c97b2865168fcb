"""Hostile inputs from Python (issue #45): a tensor never changes after it is
made, whatever happens to the NumPy memory it came from, and odd or malicious
values (cycles, 100,000-deep nesting, broken DLPack headers, huge shapes and
ranges, a Ctrl-C mid-loop) raise TF's error classes instead of crashing or
hanging. References are NumPy copies taken before the source is changed."""
import ctypes
import gc
import os
import select
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import kiln as tf

DEEP = 100_000


def _deep(leaf, depth=DEEP):
    x = leaf
    for _ in range(depth):
        x = [x]
    return x


def _cyclic_list():
    x = [1.0]
    x.append(x)
    return x


def _cyclic_dict():
    x = {"a": 1.0}
    x["b"] = x
    return x


# ---- a tensor never changes after it is made ---------------------------------------

MAKERS = {
    "constant": tf.constant,
    "convert_to_tensor": tf.convert_to_tensor,
    "Variable": lambda a: tf.Variable(a),
}


@pytest.mark.parametrize("make", MAKERS.values(), ids=MAKERS.keys())
def test_writable_array_changed_after_conversion(make):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    expected = a.copy()
    t = make(a)
    a[0, 0] = 99
    a[1] += 5
    np.testing.assert_array_equal(t.numpy(), expected)


def test_writable_array_changed_after_assign_or_dataset():
    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    expected = a.copy()
    v = tf.Variable(np.zeros((3, 2), np.float32))
    v.assign(a)
    w = tf.Variable(np.zeros((3, 2), np.float32))
    w.assign_add(a)
    slices = tf.data.Dataset.from_tensor_slices(a)
    whole = tf.data.Dataset.from_tensors(a)
    a[:] = -1
    np.testing.assert_array_equal(v.numpy(), expected)
    np.testing.assert_array_equal(w.numpy(), expected)
    np.testing.assert_array_equal(np.stack([x.numpy() for x in slices]), expected)
    np.testing.assert_array_equal(next(iter(whole)).numpy(), expected)


def test_function_capturing_a_constant_sees_the_old_value():
    a = np.ones(4, np.float32)
    t = tf.constant(a)

    @tf.function
    def f():
        return t * 2.0

    np.testing.assert_array_equal(f().numpy(), np.full(4, 2.0, np.float32))
    a[0] = 99
    np.testing.assert_array_equal(f().numpy(), np.full(4, 2.0, np.float32))
    np.testing.assert_array_equal(t.numpy(), np.ones(4, np.float32))


def test_function_argument_array_changed_after_call():
    a = np.ones(3, np.float32)

    @tf.function
    def f(x):
        return x

    out = f(a)
    a[:] = 7
    np.testing.assert_array_equal(out.numpy(), np.ones(3, np.float32))


def test_read_only_array_that_owns_its_memory_is_copied():
    # Its owner may set writeable back to True.
    a = np.arange(4, dtype=np.int64)
    a.flags.writeable = False
    t = tf.constant(a)
    a.flags.writeable = True
    a[0] = 99
    np.testing.assert_array_equal(t.numpy(), np.arange(4, dtype=np.int64))


def test_read_only_view_of_writable_base_is_copied():
    base = np.arange(8, dtype=np.float64)
    view = base[2:6]
    view.flags.writeable = False
    t = tf.constant(view)
    base[:] = -1
    np.testing.assert_array_equal(t.numpy(), np.arange(2, 6, dtype=np.float64))


def test_memory_nobody_can_write_is_shared():
    # A Kiln tensor's own NumPy view and `bytes` never change: no copy.
    x = np.asarray(tf.constant(np.arange(5, dtype=np.float32)))
    assert np.shares_memory(np.asarray(tf.constant(x)), x)
    raw = np.arange(4, dtype=np.int32).tobytes()
    b = np.frombuffer(raw, np.int32)
    assert np.shares_memory(np.asarray(tf.constant(b)), b)
    np.testing.assert_array_equal(tf.constant(b).numpy(), np.arange(4, dtype=np.int32))
    # A writable array is not shared.
    a = np.arange(5, dtype=np.float32)
    assert not np.shares_memory(np.asarray(tf.constant(a)), a)


def test_array_deleted_after_use():
    a = np.linspace(0, 1, 1000).astype(np.float32)
    expected = a.copy()
    t = tf.constant(a)
    view = tf.constant(a[::3])
    del a
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), expected)
    np.testing.assert_array_equal(view.numpy(), expected[::3])
    np.testing.assert_allclose((t * 2.0).numpy(), expected * 2.0)


def test_memmap_closed_and_deleted_after_use(tmp_path):
    path = tmp_path / "data.bin"
    expected = np.arange(1024, dtype=np.float32)
    expected.tofile(path)
    mm = np.memmap(path, dtype=np.float32, mode="r+", shape=(1024,))
    t = tf.constant(mm)
    ro = np.memmap(path, dtype=np.float32, mode="r", shape=(1024,))
    t_ro = tf.constant(ro)  # read-only, but the file may change under it
    mm[:10] = -5  # written through the map, then the file goes
    mm.flush()
    del mm, ro
    gc.collect()
    os.remove(path)
    np.testing.assert_array_equal(t.numpy(), expected)
    np.testing.assert_array_equal(t_ro.numpy(), expected)
    assert float(tf.reduce_sum(t).numpy()) == float(expected.sum())


@pytest.mark.parametrize("array", [
    np.arange(6, dtype=">f4"),                                     # byte-swapped
    np.arange(6, dtype=">i8").reshape(2, 3),
    np.arange(12, dtype=np.float32)[::2],                          # strided
    np.arange(12, dtype=np.int32).reshape(3, 4)[:, 1:3],
    np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3)),
    np.frombuffer(bytearray(17), np.uint8, count=16, offset=1),  # writable bytearray
    np.zeros((0, 3), np.float32),
], ids=["swapped-f4", "swapped-i8", "strided", "column-slice", "fortran", "bytearray", "empty"])
def test_unusual_layouts_convert_by_value(array):
    expected = np.array(array, dtype=array.dtype.newbyteorder("="), copy=True)
    t = tf.constant(array)
    if array.flags.writeable and array.size:
        array[...] = 1  # the source changes; the tensor does not
    np.testing.assert_array_equal(t.numpy(), expected)
    assert t.shape == expected.shape


def test_unaligned_array():
    buf = np.zeros(4 * 5 + 1, np.uint8)
    a = buf[1:].view(np.float32)
    a[:] = [1, 2, 3, 4, 5]
    assert not a.flags.aligned
    t = tf.constant(a)
    a[:] = 0
    np.testing.assert_array_equal(t.numpy(), np.array([1, 2, 3, 4, 5], np.float32))


def test_object_arrays():
    with pytest.raises(TypeError):
        tf.constant(np.array([1, None], dtype=object))
    with pytest.raises(TypeError):
        tf.constant(np.array([object()], dtype=object))
    strings = tf.constant(np.array([b"a", "b"], dtype=object))
    assert strings.numpy().tolist() == [b"a", b"b"]


def test_keras_fit_batches_numpy_data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    first = model.evaluate(x, y, verbose=0)
    model.fit(x, y, batch_size=16, epochs=5, verbose=0)
    assert model.evaluate(x, y, verbose=0) < first / 4


# ---- DLPack ------------------------------------------------------------------------

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def _capsule(data, dims, ndim=None):
    """A float32 DLPack capsule over `data` (a NumPy array kept alive by the
    returned objects) with the given header; no deleter."""
    shape = (ctypes.c_int64 * max(1, len(dims)))(*dims)
    managed = _DLManagedTensor()
    managed.dl_tensor.data = data.ctypes.data
    managed.dl_tensor.device = _DLDevice(1, 0)  # kDLCPU
    managed.dl_tensor.ndim = len(dims) if ndim is None else ndim
    managed.dl_tensor.dtype = _DLDataType(2, 32, 1)  # kDLFloat, 32 bits
    managed.dl_tensor.shape = shape
    cap = _new_capsule(ctypes.addressof(managed), b"dltensor", None)
    return cap, (managed, shape, data)


@pytest.mark.parametrize("dims,ndim", [
    ([-1], None),
    ([4, -1], None),
    ([2**62, 2**62], None),       # the product overflows int64
    ([2**40, 2**40, 2**40], None),
    ([4], -1),                    # negative rank
    ([1] * 9, None),              # more dims than a tensor may have
])
def test_dlpack_bad_headers_raise(dims, ndim):
    data = np.ones(4, np.float32)
    cap, keep = _capsule(data, dims, ndim)
    with pytest.raises((ValueError, BufferError)):
        tf.experimental.dlpack.from_dlpack(cap)
    del keep


def test_dlpack_from_writable_producer_is_copied():
    data = np.arange(4, dtype=np.float32)
    cap, keep = _capsule(data, [4])
    t = tf.experimental.dlpack.from_dlpack(cap)
    data[:] = -1
    np.testing.assert_array_equal(t.numpy(), np.arange(4, dtype=np.float32))
    a = np.arange(3, dtype=np.float64)
    t2 = tf.experimental.dlpack.from_dlpack(a.__dlpack__())
    a[0] = 99
    np.testing.assert_array_equal(t2.numpy(), np.arange(3, dtype=np.float64))
    del keep


def test_dlpack_round_trip_through_kiln_shares():
    t = tf.constant(np.arange(6, dtype=np.int32).reshape(2, 3))
    back = tf.experimental.dlpack.from_dlpack(tf.experimental.dlpack.to_dlpack(t))
    np.testing.assert_array_equal(back.numpy(), t.numpy())
    assert np.shares_memory(np.asarray(back), np.asarray(t))


# ---- structures: cycles and deep nesting -------------------------------------------

@pytest.mark.parametrize("make", [_cyclic_list, _cyclic_dict, lambda: _deep(1.0)], ids=["list", "dict", "deep"])
def test_function_argument_cycles_and_depth(make):
    @tf.function
    def f(x):
        return tf.constant(1.0)

    with pytest.raises((RecursionError, ValueError)):
        f(make())
    assert float(f([1.0, 2.0]).numpy()) == 1.0  # still usable


def test_function_returning_deep_structure():
    @tf.function
    def f():
        return _deep(tf.constant(1.0))

    with pytest.raises((RecursionError, ValueError)):
        f()


def test_function_returning_cycle():
    @tf.function
    def f():
        x = [tf.constant(1.0)]
        x.append(x)
        return x

    with pytest.raises((RecursionError, ValueError)):
        f()


@pytest.mark.parametrize("make", [_cyclic_list, _cyclic_dict, lambda: _deep(1.0)], ids=["list", "dict", "deep"])
def test_nest_cycles_and_depth(make):
    s = make()
    for call in (lambda: tf.nest.flatten(s), lambda: tf.nest.map_structure(lambda v: v, s),
                 lambda: tf.nest.assert_same_structure(s, s)):
        with pytest.raises((RecursionError, ValueError)):
            call()
    assert tf.nest.flatten({"b": [2, 3], "a": 1}) == [1, 2, 3]


def test_constant_of_list_holding_itself():
    x = [tf.constant(1.0)]
    x.append(x)
    with pytest.raises((RecursionError, ValueError)):
        tf.constant(x)
    with pytest.raises((RecursionError, ValueError)):
        tf.constant(_cyclic_list())


def test_input_signature_structure_errors():
    with pytest.raises(ValueError):
        tf.function(lambda x: x, input_signature=[_deep(tf.TensorSpec([], tf.float32))])
    with pytest.raises(ValueError):
        tf.function(lambda x: x, input_signature=[_cyclic_list()])
    with pytest.raises(TypeError, match="TypeSpec"):
        tf.function(lambda x: x, input_signature=[[1]])
    with pytest.raises(TypeError):
        tf.function(lambda x: x, input_signature=5)
    f = tf.function(lambda x: x + 1.0, input_signature=[tf.TensorSpec([2], tf.float32)])
    np.testing.assert_array_equal(f(np.zeros(2, np.float32)).numpy(), np.ones(2, np.float32))


# ---- creation ops: sizes and argument types ----------------------------------------

def test_creation_shape_arguments():
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.zeros([2**64])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.ones([3, 2**63])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.fill([2**70], 1.0)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.zeros([2**40, 2**40])
    with pytest.raises(TypeError):
        tf.ones([2.5])
    with pytest.raises(TypeError):
        tf.zeros(["a"])
    # The other ops that take a shape: the same classes, never pybind's RuntimeError.
    with pytest.raises(TypeError):
        tf.reshape(tf.ones([4]), [2.5])
    with pytest.raises(TypeError):
        tf.random.uniform([2.5])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.random.normal([2**64])
    with pytest.raises(TypeError):
        tf.zeros(tf.constant([2.5]))  # a float tensor is no shape
    np.testing.assert_array_equal(tf.zeros(tf.constant([2, 3])).numpy(), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(tf.zeros(np.array([2, 3])).numpy(), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(tf.ones((np.int64(2),), tf.int32).numpy(), np.ones(2, np.int32))


RANGES = {
    "2**40": ((0, 2**40, 1), tf.errors.ResourceExhaustedError),
    "full-int64": ((-2**63, 2**63 - 1, 1), tf.errors.InvalidArgumentError),
    "delta-0": ((0, 5, 0), tf.errors.InvalidArgumentError),
}


@pytest.mark.parametrize("bounds,error", RANGES.values(), ids=RANGES.keys())
def test_huge_ranges_fail_fast(bounds, error):
    with pytest.raises(error):
        tf.range(*bounds)  # eager

    @tf.function
    def static():
        return tf.range(*bounds)

    @tf.function
    def dynamic(a, b, d):
        return tf.range(a, b, d)

    begin = time.monotonic()
    with pytest.raises(error):
        static()
    with pytest.raises(error):
        dynamic(*(tf.constant(v, tf.int64) for v in bounds))
    assert time.monotonic() - begin < 10


def test_dynamic_ranges_still_count():
    @tf.function
    def f(a, b, d):
        return tf.range(a, b, d)

    for bounds in [(1, 10, 3), (5, 0, -2), (0, 0, 1), (3, 1, 1)]:
        expected = np.arange(*bounds, dtype=np.int64)
        np.testing.assert_array_equal(f(*(tf.constant(v, tf.int64) for v in bounds)).numpy(), expected)
    np.testing.assert_allclose(f(tf.constant(1.0), tf.constant(2.0), tf.constant(0.25)).numpy(),
                               np.arange(1.0, 2.0, 0.25, dtype=np.float32))


# ---- interrupts --------------------------------------------------------------------

def test_keyboard_interrupt_during_eager_loop():
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    x = tf.constant(np.zeros(16, np.float32))
    interrupted = False
    begin = time.monotonic()
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        for _ in range(10_000_000):
            x = x + 1.0
    except KeyboardInterrupt:
        interrupted = True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert interrupted
    assert time.monotonic() - begin < 5
    steps = float(x.numpy()[0])  # the tensor is whole and usable
    np.testing.assert_array_equal(x.numpy(), np.full(16, steps, np.float32))


def _spinner():
    """A graph call that runs for hours given n = 2**62: a While of small ops, with a
    variable it updates. Returns the function and the variable."""
    count = tf.Variable(0, dtype=tf.int64)

    @tf.function
    def spin(n):
        def body(i, s):
            count.assign_add(1)
            return i + 1, s + 0.5
        return tf.while_loop(lambda i, s: i < n, body, [tf.constant(0, tf.int64), tf.constant(0.0)])

    spin(tf.constant(3, tf.int64))
    return spin, count


# A shell starts background jobs with SIGINT ignored, and Python keeps it so: the child
# and the tests below put Python's default handler back.
_CTRL_C_CHILD = f"""
import signal
import sys
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
import kiln as tf
from test_hostile_inputs import _spinner
from test_hostile_inputs import _signal_state
spin, count = _spinner()
print("ready", _signal_state(), flush=True)
try:
    spin(tf.constant(2**62, tf.int64))
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
# The function and its variable work as before.
before = int(count.numpy())
i, s = spin(tf.constant(5, tf.int64))
assert (int(i), float(s), int(count.numpy()) - before) == (5, 2.5, 5), (i, s, count)
print("usable", flush=True)
"""


def _signal_state():
    """This thread's blocked, ignored and caught signals and Python's SIGINT handler: what a
    failure of the tests below needs to be understood."""
    with open("/proc/thread-self/status") as f:
        lines = [line.strip() for line in f if line.startswith(("SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt"))]
    return lines + [repr(signal.getsignal(signal.SIGINT))]


@pytest.fixture
def default_sigint():
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def _read_until(proc, text, timeout, out=""):
    """The child's output `out` read so far, and more up to `text` (or all of it by EOF
    or `timeout`), read from the pipe's descriptor so nothing waits in a Python buffer."""
    out, deadline = out.encode(), time.monotonic() + timeout
    while text.encode() not in out:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
            break
        chunk = os.read(proc.stdout.fileno(), 4096)
        if not chunk:
            break
        out += chunk
    return out.decode()


def test_ctrl_c_stops_a_long_graph_call(tmp_path):
    # Before issue #45 the KeyboardInterrupt came when the graph finished (never, here).
    with open(tmp_path / "stderr", "w+") as err:
        proc = subprocess.Popen([sys.executable, "-c", _CTRL_C_CHILD], stdout=subprocess.PIPE, stderr=err)

        def stderr():
            err.seek(0)
            return err.read()

        try:
            out = _read_until(proc, "ready", 120)
            assert "ready" in out, stderr()
            time.sleep(0.5)  # well inside the call
            sent = time.monotonic()
            proc.send_signal(signal.SIGINT)
            out = _read_until(proc, "interrupted", 10, out)
            took = time.monotonic() - sent
            assert "interrupted" in out, (out, stderr())
            assert took < 2, took
            out = _read_until(proc, "usable", 60, out)
            assert "usable" in out, (out, stderr())
        finally:
            proc.kill()
            proc.wait()


def test_own_sigint_handler_is_left_alone():
    # A handler of the user's own ("stop after this epoch") cancels nothing: the call
    # finishes and the handler runs after it, as after any long call into C.
    spin, _ = _spinner()
    got = []
    old = signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
    try:
        timer = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        i, _ = spin(tf.constant(200_000, tf.int64))
        timer.join()
        for _ in range(100):  # the handler runs between bytecodes
            if got:
                break
            time.sleep(0.01)
    finally:
        signal.signal(signal.SIGINT, old)
    assert int(i) == 200_000
    assert got == [signal.SIGINT]


def test_graph_call_on_another_thread_is_not_cancelled(default_sigint):
    # Python raises KeyboardInterrupt in its main thread only: a worker's call goes on.
    spin, _ = _spinner()
    result = {}
    worker = threading.Thread(target=lambda: result.update(out=spin(tf.constant(200_000, tf.int64))))
    worker.start()
    interrupted = False
    try:
        time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)
    except KeyboardInterrupt:
        interrupted = True
    worker.join()
    assert interrupted, _signal_state()
    assert int(result["out"][0]) == 200_000


def test_ctrl_c_inside_py_function_is_a_keyboard_interrupt(default_sigint):
    # It stops the graph and comes out as itself, not as an InvalidArgumentError.
    def slow(x):
        for _ in range(200):
            time.sleep(0.01)
        return x

    @tf.function
    def in_graph(x):
        return tf.py_function(slow, [x], tf.float32) + 1.0

    for call in (lambda: in_graph(tf.constant(1.0)), lambda: tf.py_function(slow, [tf.constant(1.0)], tf.float32)):
        timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
        begin = time.monotonic()
        timer.start()
        try:
            call()
            raised = None
        except BaseException as e:  # noqa: B036 (a KeyboardInterrupt must not end the session)
            raised = e
        timer.join()
        assert isinstance(raised, KeyboardInterrupt), (repr(raised), _signal_state())
        assert time.monotonic() - begin < 1.5
    assert float(tf.function(lambda x: x + 1.0)(tf.constant(1.0)).numpy()) == 2.0
