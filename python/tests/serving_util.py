"""Shared by the kiln-serve tests: a saved model with three signatures, and
kiln-serve started on free loopback ports (REST and gRPC), stopped after
the test."""
import json
import os
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

import kiln as tf

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def serve_binary():
    path = os.environ.get("KILN_SERVE") or os.path.join(_REPO, "build", "kiln-serve")
    if not os.path.exists(path):
        pytest.skip("kiln-serve is not built (set KILN_SERVE)")
    return path


class Affine(tf.Module):
    """serving_default: x * w + 0.5; multi: two inputs, two outputs; echo: strings."""

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


def save(w, path):
    """Saves beside `path`, then renames into place: a version appears whole."""
    m = Affine(w)
    tmp = str(path) + ".tmp"
    tf.saved_model.save(m, tmp, signatures={"serving_default": m.affine, "multi": m.multi, "echo": m.echo})
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
