"""Shared by the kiln-serve tests: a saved model with three signatures,
kiln-serve started on free loopback ports (REST and gRPC) and stopped after
the test, and a gRPC client written as TF Serving's clients are."""
import importlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import threading
import time
import types
import urllib.error
import urllib.request

import numpy as np
import pytest

import kiln as tf

from built_tools import built_tool


def serve_binary():
    return built_tool("kiln-serve", "KILN_SERVE")


class Affine(tf.Module):
    """serving_default: x * w + 0.5; multi: two inputs, two outputs; echo: strings; dtypes: one
    input and output of each other dtype kiln-serve takes; ints: one int32 input; doubles: one
    float64 input, returned as it came."""

    def __init__(self, w):
        super().__init__()
        self.w = tf.Variable(w)

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def affine(self, x):
        return x * self.w + 0.5

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([None], tf.int32)])
    def multi(self, a, b):
        return a * 2.0, b + 1

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def echo(self, s):
        return tf.identity(s)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float64), tf.TensorSpec([None], tf.int64),
                                  tf.TensorSpec([None], tf.uint8), tf.TensorSpec([None], tf.bool)])
    def dtypes(self, d, i, u, b):
        return d * 2.0, i + 1, tf.identity(u), tf.logical_not(b)

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.int32)])
    def ints(self, n):
        return n * 3

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float64)])
    def doubles(self, d):
        return tf.identity(d)


def save(w, path):
    """Saves beside `path`, then renames into place: a version appears whole."""
    m = Affine(w)
    tmp = str(path) + ".tmp"
    tf.saved_model.save(m, tmp, signatures={"serving_default": m.affine, "multi": m.multi, "echo": m.echo,
                                          "dtypes": m.dtypes, "ints": m.ints,
                                          "doubles": m.doubles})
    os.rename(tmp, path)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("serving")
    for version, w in ((1, 2.0), (2, 3.0)):
        save(w, root / f"v{version}")
    return root


class Server:
    def __init__(self, base, tmp, *flags):
        """Serves model "m" from `base`, or (base None) the models `flags` configure."""
        self.log = open(tmp / f"server{len(list(tmp.glob('server*.log')))}.log", "w+")
        model = [] if base is None else ["--model_name=m", f"--model_base_path={base}"]
        self.proc = subprocess.Popen(
            [serve_binary(), *model, "--rest_api_host=127.0.0.1", "--rest_api_port=0", "--port=0", *flags],
            stdout=subprocess.PIPE, stderr=self.log, text=True,
            env=dict(os.environ, OMP_WAIT_POLICY="passive", OMP_NUM_THREADS="1"))
        grpc_line, line = self.proc.stdout.readline(), self.proc.stdout.readline()
        if not grpc_line.startswith("Running gRPC ModelServer at 127.0.0.1:") or \
                not line.startswith("Exporting HTTP/REST API at:127.0.0.1:"):
            self.proc.kill()
            raise AssertionError(f"kiln-serve did not start: {grpc_line!r} {line!r}\n{self.stderr()}")
        self.url = "http://127.0.0.1:" + line.split(":")[-1].split()[0]
        self.grpc_target = "127.0.0.1:" + grpc_line.split(":")[-1].split()[0]

    def stderr(self):
        self.log.seek(0)
        return self.log.read()

    def request(self, path, body=None, method=None):
        """(HTTP status, response text)."""
        data = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def predict(self, body, path="/v1/models/m:predict"):
        return self.request(path, body)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.log.close()


@pytest.fixture
def start(tmp_path):
    servers = []

    def start_server(base, *flags):
        servers.append(Server(base, tmp_path, *flags))
        return servers[-1]

    yield start_server
    for s in servers:
        s.stop()


def one_version(models, tmp_path, versions=(1,)):
    base = tmp_path / "base"
    base.mkdir()
    for v in versions:
        shutil.copytree(models / f"v{v}", base / str(v))
    return base


def concurrently(fns):
    results = [None] * len(fns)

    def run(i):
        results[i] = fns[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(fns))]
    for t in threads:
        t.start()
    return threads, results


def wait_for(predicate, what, timeout=15):
    end = time.time() + timeout
    while time.time() < end:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


_PROTO = pathlib.Path(__file__).resolve().parents[2] / "tools" / "serve" / "proto"
_MODULES = ["tensorflow.core.framework.tensor_pb2", "tensorflow.core.framework.types_pb2",
            "tensorflow.core.protobuf.meta_graph_pb2", "tensorflow_serving.apis.predict_pb2",
            "tensorflow_serving.apis.get_model_metadata_pb2", "tensorflow_serving.apis.get_model_status_pb2",
            "tensorflow_serving.apis.prediction_service_pb2_grpc", "tensorflow_serving.apis.model_service_pb2_grpc"]


@pytest.fixture(scope="module")
def tfs(tmp_path_factory):
    """TF Serving's generated modules, by their last name (predict_pb2, ...): the stubs are
    generated here from tools/serve/proto (grpc_tools when it is installed, else protoc with
    Debian's grpc_python_plugin)."""
    pytest.importorskip("grpc")
    out = tmp_path_factory.mktemp("stubs")
    protos = sorted(str(p.relative_to(_PROTO)) for p in _PROTO.rglob("*.proto"))
    args = [f"-I{_PROTO}", f"--python_out={out}", f"--grpc_python_out={out}", *protos]
    try:
        from grpc_tools import protoc  # noqa: F401
        cmd = [sys.executable, "-m", "grpc_tools.protoc", *args]
    except ImportError:
        plugin = shutil.which("grpc_python_plugin")
        if not plugin or not shutil.which("protoc"):
            pytest.skip("neither grpc_tools nor protoc with grpc_python_plugin is installed")
        cmd = ["protoc", f"--plugin=protoc-gen-grpc_python={plugin}", *args]
    subprocess.run(cmd, check=True)
    sys.path.insert(0, str(out))
    try:
        yield types.SimpleNamespace(**{m.rsplit(".", 1)[1]: importlib.import_module(m) for m in _MODULES})
    finally:  # the generated "tensorflow" package must not outlive these tests
        sys.path.remove(str(out))
        for name in [n for n in sys.modules if n.split(".")[0] in ("tensorflow", "tensorflow_serving")]:
            del sys.modules[name]


# NumPy dtypes and TF's DataType numbers (types.proto).
_DTYPES = {np.dtype(np.float32): 1, np.dtype(np.float64): 2, np.dtype(np.int32): 3, np.dtype(np.uint8): 4,
           np.dtype(np.int64): 9, np.dtype(np.bool_): 10}


def make_tensor_proto(tfs, value, dtype=None):
    """As tf.make_tensor_proto: NumPy values as tensor_content, bytes in string_val."""
    proto = tfs.tensor_pb2.TensorProto()
    a = np.asarray(value, dtype=dtype)
    for d in a.shape:
        proto.tensor_shape.dim.add().size = d
    if a.dtype.kind in "SUO":
        proto.dtype = 7
        proto.string_val.extend(v if isinstance(v, bytes) else str(v).encode() for v in a.ravel())
    else:
        proto.dtype = _DTYPES[a.dtype]
        proto.tensor_content = a.tobytes()
    return proto


def make_ndarray(proto):
    """As tf.make_ndarray, for the typed fields TF Serving answers with."""
    shape = [d.size for d in proto.tensor_shape.dim]
    np_dtype = {v: k for k, v in _DTYPES.items()}.get(proto.dtype)
    if proto.dtype == 7:
        return np.array(list(proto.string_val), dtype=object).reshape(shape)
    if proto.tensor_content:
        return np.frombuffer(proto.tensor_content, np_dtype).reshape(shape)
    field = {1: proto.float_val, 2: proto.double_val, 3: proto.int_val, 4: proto.int_val, 9: proto.int64_val,
             10: proto.bool_val}[proto.dtype]
    return np.array(list(field), np_dtype).reshape(shape)


class Client:
    """TF Serving's client code: a channel, the two stubs, one request per call."""

    def __init__(self, tfs, target):
        import grpc
        self.tfs = tfs
        self.channel = grpc.insecure_channel(target)
        self.predictions = tfs.prediction_service_pb2_grpc.PredictionServiceStub(self.channel)
        self.models = tfs.model_service_pb2_grpc.ModelServiceStub(self.channel)

    def predict(self, inputs, model="m", signature_name="", version=None, label=None, output_filter=(), timeout=10):
        request = self.tfs.predict_pb2.PredictRequest()
        request.model_spec.name = model
        request.model_spec.signature_name = signature_name
        if version is not None:
            request.model_spec.version.value = version
        if label is not None:
            request.model_spec.version_label = label
        for name, value in inputs.items():
            request.inputs[name].CopyFrom(value if isinstance(value, self.tfs.tensor_pb2.TensorProto)
                                          else make_tensor_proto(self.tfs, value))
        request.output_filter.extend(output_filter)
        return self.predictions.Predict(request, timeout=timeout)

    def error(self, call):
        """(gRPC status code name, details) of a call that must fail."""
        import grpc
        with pytest.raises(grpc.RpcError) as e:
            call()
        return e.value.code().name, e.value.details()

    def close(self):
        self.channel.close()


@pytest.fixture
def client(tfs):
    clients = []

    def connect(server):
        clients.append(Client(tfs, server.grpc_target))
        return clients[-1]

    yield connect
    for c in clients:
        c.close()
