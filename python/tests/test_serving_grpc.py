"""kiln-serve's gRPC API, through a client written as one is for TF Serving.

The stubs are generated from tools/serve/proto (serving_util's tfs fixture),
and the client builds its TensorProtos as tf.make_tensor_proto does
(tensor_content for NumPy arrays, string_val for bytes). Each test checks the gRPC answers against the REST API's, TF Serving's error
codes, and (with --model_config_file) several models, versions and labels."""
import json
import os
import shutil
import signal
import subprocess
import time

import numpy as np
import pytest

from serving_util import client, concurrently, make_ndarray, make_tensor_proto, models, one_version, start, tfs, \
    wait_for  # noqa: F401 (fixtures)

grpc = pytest.importorskip("grpc")

def _rest_rows(server, body, path="/v1/models/m:predict"):
    status, text = server.predict(body, path)
    assert status == 200, text
    return json.loads(text)


def test_predict_answers_as_rest_does(models, tmp_path, start, client):
    s = start(one_version(models, tmp_path))
    c = client(s)
    x = np.random.default_rng(0).standard_normal((3, 2)).astype(np.float32)
    r = c.predict({"x": x})
    assert list(r.outputs) == ["output_0"]
    assert (r.model_spec.name, r.model_spec.version.value, r.model_spec.signature_name) == ("m", 1, "serving_default")
    got = make_ndarray(r.outputs["output_0"])
    assert got.dtype == np.float32 and got.shape == (3, 2)
    assert r.outputs["output_0"].float_val  # TF Serving answers in the typed field
    rest = np.array(_rest_rows(s, {"instances": x.tolist()})["predictions"], np.float32)
    assert got.tobytes() == rest.tobytes()
    assert got.tobytes() == (x * np.float32(2) + np.float32(0.5)).tobytes()

    # The typed field in the request, one value repeated over the shape (as TF reads it), a version.
    proto = c.tfs.tensor_pb2.TensorProto(dtype=1)
    for d in (2, 2):
        proto.tensor_shape.dim.add().size = d
    proto.float_val.append(1.5)
    assert make_ndarray(c.predict({"x": proto}, version=1).outputs["output_0"]).tolist() == [[3.5, 3.5]] * 2

    # Two inputs and outputs, output_filter; strings as bytes.
    r = c.predict({"a": np.array([1.5, -1], np.float32), "b": np.array([2, -7], np.int32)}, signature_name="multi",
                  output_filter=["output_1"])
    assert list(r.outputs) == ["output_1"] and r.model_spec.signature_name == "multi"
    assert make_ndarray(r.outputs["output_1"]).tolist() == [3, -6]
    assert _rest_rows(s, {"signature_name": "multi", "inputs": {"a": [1.5, -1], "b": [2, -7]}})["outputs"][
        "output_1"] == [3, -6]
    r = c.predict({"s": np.array([b"h\xc3\xa9llo", b"\xff"], dtype=object)}, signature_name="echo")
    assert list(r.outputs["output_0"].string_val) == [b"h\xc3\xa9llo", b"\xff"]

    # Every other dtype, as tensor_content and in the typed fields, against REST.
    values = {"d": np.array([0.1, -2.5], np.float64), "i": np.array([2**40, -3], np.int64),
              "u": np.array([0, 255], np.uint8), "b": np.array([True, False])}
    want = {"output_0": values["d"] * 2, "output_1": values["i"] + 1, "output_2": values["u"],
            "output_3": ~values["b"]}
    rest = _rest_rows(s, {"signature_name": "dtypes", "inputs": {k: v.tolist() for k, v in values.items()}})["outputs"]
    typed = {k: make_tensor_proto(c.tfs, v) for k, v in values.items()}
    for k, field in (("d", "double_val"), ("i", "int64_val"), ("u", "int_val"), ("b", "bool_val")):
        typed[k].tensor_content = b""
        getattr(typed[k], field).extend(values[k].tolist())
    for inputs in (values, typed):
        r = c.predict(inputs, signature_name="dtypes")
        for k, v in want.items():
            got = make_ndarray(r.outputs[k])
            assert got.dtype == v.dtype and got.tolist() == v.tolist() == rest[k], k
    typed["u"].int_val[:] = [0, 256]
    assert c.error(lambda: c.predict(typed, signature_name="dtypes")) == (
        "INVALID_ARGUMENT", "Input 'u': 256 is out of uint8 range")

    # Counted as the REST API's calls are.
    metrics = s.request("/monitoring/prometheus/metrics")[1]
    assert ':tensorflow:serving:request_count{model_name="m",API="Predict",status="OK"} 9\n' in metrics


def test_metadata_and_status(models, tmp_path, start, client, tfs):
    s = start(one_version(models, tmp_path))
    c = client(s)
    request = tfs.get_model_metadata_pb2.GetModelMetadataRequest()
    request.model_spec.name = "m"
    request.metadata_field.append("signature_def")
    r = c.predictions.GetModelMetadata(request, timeout=10)
    assert (r.model_spec.name, r.model_spec.version.value) == ("m", 1)
    defs = tfs.get_model_metadata_pb2.SignatureDefMap()
    assert r.metadata["signature_def"].Unpack(defs)
    assert sorted(defs.signature_def) == ["doubles", "dtypes", "echo", "ints", "multi", "serving_default"]
    x = defs.signature_def["serving_default"].inputs["x"]
    assert x.dtype == 1 and [d.size for d in x.tensor_shape.dim] == [-1, 2] and not x.tensor_shape.unknown_rank
    assert defs.signature_def["multi"].outputs["output_1"].dtype == 3
    assert defs.signature_def["serving_default"].method_name == "tensorflow/serving/predict"
    # The same signatures as the REST metadata.
    rest = json.loads(s.request("/v1/models/m/metadata")[1])["metadata"]["signature_def"]["signature_def"]
    assert x.name == rest["serving_default"]["inputs"]["x"]["name"]
    request.metadata_field[:] = ["nope"]
    assert c.error(lambda: c.predictions.GetModelMetadata(request)) == (
        "INVALID_ARGUMENT", "Metadata field nope is not supported")

    status = tfs.get_model_status_pb2.GetModelStatusRequest()
    status.model_spec.name = "m"
    r = c.models.GetModelStatus(status, timeout=10)
    assert [(v.version, v.state, v.status.error_code, v.status.error_message) for v in r.model_version_status] == [
        (1, tfs.get_model_status_pb2.ModelVersionStatus.AVAILABLE, 0, "")]
    status.model_spec.name = "other"
    assert c.error(lambda: c.models.GetModelStatus(status)) == (
        "NOT_FOUND", "Could not find any versions of model other")


def test_errors_have_tf_serving_codes_and_the_server_keeps_serving(models, tmp_path, start, client):
    s = start(one_version(models, tmp_path), "--rest_api_max_body_bytes=4096")
    c = client(s)
    x = np.ones((1, 2), np.float32)
    assert c.error(lambda: c.predict({"x": x.astype(np.int32)})) == (
        "INVALID_ARGUMENT", "Expects arg[x] to be float but int32 is provided")
    code, msg = c.error(lambda: c.predict({"x": np.ones((1, 3), np.float32)}))
    assert code == "INVALID_ARGUMENT" and "shape (1, 3)" in msg and "(None, 2)" in msg
    assert c.error(lambda: c.predict({"x": x, "y": x})) == (
        "INVALID_ARGUMENT", "input size does not match signature: 2!=1 len({x,y}) != len({x}). Sent extra: {y}. "
                            "Missing but required: {}.")
    assert c.error(lambda: c.predict({"x": x}, signature_name="nope")) == (
        "FAILED_PRECONDITION", 'Serving signature key "nope" not found.')
    assert c.error(lambda: c.predict({"x": x}, model="other")) == (
        "NOT_FOUND", "Servable not found for request: Latest(other)")
    assert c.error(lambda: c.predict({"x": x}, version=7)) == (
        "NOT_FOUND", "Servable not found for request: Specific(m, 7)")
    assert c.error(lambda: c.predict({"x": x}, label="stable")) == (
        "INVALID_ARGUMENT", "Unrecognized servable version label: stable")
    assert c.error(lambda: c.predict({"x": x}, output_filter=["output_9"])) == (
        "INVALID_ARGUMENT", "output tensor alias not found in signature: output_9 Outputs expected to be in the set "
                            "{output_0}.")
    bad = make_tensor_proto(c.tfs, x)
    bad.tensor_content = bad.tensor_content[:-1]
    assert c.error(lambda: c.predict({"x": bad})) == (
        "INVALID_ARGUMENT", "Input 'x': tensor_content has 7 bytes, but shape (1, 2) of float needs 8")
    bomb = c.tfs.tensor_pb2.TensorProto(dtype=1)
    for d in (1 << 20, 1 << 20):
        bomb.tensor_shape.dim.add().size = d
    assert c.error(lambda: c.predict({"x": bomb})) == (
        "INVALID_ARGUMENT", "Input 'x' is larger than the server's limit of 4096 bytes")
    half = c.tfs.tensor_pb2.TensorProto(dtype=19)
    assert c.error(lambda: c.predict({"x": half}))[0] == "INVALID_ARGUMENT"
    # A message over the limit: gRPC's own RESOURCE_EXHAUSTED.
    assert c.error(lambda: c.predict({"x": np.ones((1000, 2), np.float32)}))[0] == "RESOURCE_EXHAUSTED"
    # Not a PredictRequest at all (grpc's generic API, raw bytes).
    raw = c.channel.unary_unary("/tensorflow.serving.PredictionService/Predict")
    assert c.error(lambda: raw(b"\xff\xff\xff\xff", timeout=10))[0] == "INTERNAL"
    assert make_ndarray(c.predict({"x": x}).outputs["output_0"]).tolist() == [[2.5, 2.5]]
    # Calls for a model the server has not are counted under no name (clients cannot grow the label sets).
    metrics = s.request("/monitoring/prometheus/metrics")[1]
    assert 'model_name="other"' not in metrics
    assert ':tensorflow:serving:request_count{model_name="",API="Predict",status="NOT_FOUND"} 1\n' in metrics


def test_overload_and_deadlines(models, tmp_path, start, client):
    s = start(one_version(models, tmp_path), "--enable_batching", "--max_batch_size=8",
              "--batch_timeout_micros=1500000", "--num_batch_threads=1", "--rest_api_max_pending_requests=2")
    c = client(s)
    x = np.ones((1, 2), np.float32)
    # The client's deadline ends the call while it waits for its batch.
    t0 = time.monotonic()
    assert c.error(lambda: c.predict({"x": x}, timeout=0.3))[0] == "DEADLINE_EXCEEDED"
    assert time.monotonic() - t0 < 1.2
    time.sleep(1.3)  # that request's batch runs and ends
    threads, results = concurrently([lambda: c.predict({"x": x}).outputs["output_0"].float_val[:]] * 2)
    time.sleep(0.3)  # both wait for the batch to fill or time out: the next is one too many
    assert c.error(lambda: c.predict({"x": x})) == (
        "RESOURCE_EXHAUSTED", "Too many requests: 2 predictions are already waiting")
    status, text = s.predict({"instances": [[1, 1]]})  # REST and gRPC share the limit
    assert status == 429, text
    for t in threads:
        t.join()
    assert results == [[2.5, 2.5]] * 2

    # SIGTERM: the gRPC call in flight (waiting for its batch) is answered, then the server exits 0.
    threads, results = concurrently([lambda: c.predict({"x": x}).outputs["output_0"].float_val[:]])
    time.sleep(0.3)
    s.proc.send_signal(signal.SIGTERM)
    threads[0].join()
    assert results == [[2.5, 2.5]]
    assert s.proc.wait(timeout=10) == 0


def test_fuzzed_requests_get_errors_not_crashes(models, tmp_path, start, client):
    s = start(one_version(models, tmp_path), "--rest_api_max_body_bytes=65536")
    c = client(s)
    rng = np.random.default_rng(44)
    request = c.tfs.predict_pb2.PredictRequest()
    request.model_spec.name = "m"
    request.inputs["x"].CopyFrom(make_tensor_proto(c.tfs, np.ones((2, 2), np.float32)))
    good = request.SerializeToString()
    raw = c.channel.unary_unary("/tensorflow.serving.PredictionService/Predict")
    codes = set()
    for i in range(300):
        b = bytearray(good)
        for _ in range(1 + i % 4):  # flip, insert or drop bytes
            op, at = rng.integers(3), int(rng.integers(len(b)))
            if op == 0:
                b[at] = int(rng.integers(256))
            elif op == 1:
                b.insert(at, int(rng.integers(256)))
            elif len(b) > 1:
                del b[at]
        try:
            raw(bytes(b), timeout=10)
            codes.add("OK")
        except grpc.RpcError as e:
            codes.add(e.code().name)
    assert codes <= {"OK", "INVALID_ARGUMENT", "INTERNAL", "NOT_FOUND", "FAILED_PRECONDITION"}, codes
    assert "INVALID_ARGUMENT" in codes
    # The REST parser, with JSON cut and spliced at random.
    body = json.dumps({"signature_name": "multi", "instances": [{"a": 1.5, "b": 2}, {"a": -1, "b": 7}]}).encode()
    statuses = set()
    for i in range(300):
        b = bytearray(body)
        at = int(rng.integers(len(b)))
        piece = rng.choice(list(b'[]{}",:0123456789.-eEtrufalsn \\'), int(rng.integers(1, 6)))
        piece = piece.astype(np.uint8).tobytes()  # the bytes themselves (not int64's eight each)
        b[at:at + int(rng.integers(0, 4))] = piece
        statuses.add(s.predict(bytes(b))[0])
    assert statuses <= {200, 400}, statuses
    assert 400 in statuses
    assert s.predict({"instances": [[1, 2]]}) == (200, '{"predictions": [[2.5, 4.5]]}')
    assert make_ndarray(c.predict({"x": np.zeros((1, 2), np.float32)}).outputs["output_0"]).tolist() == [[0.5, 0.5]]


def test_model_config_file_serves_several_models_versions_and_labels(models, tmp_path, start, client):
    bases = {}
    for name in ("a", "b", "c"):
        bases[name] = tmp_path / name
        bases[name].mkdir()
        for v in (1, 2):
            shutil.copytree(models / f"v{v}", bases[name] / str(v))
    config = tmp_path / "models.config"
    config.write_text(f"""
model_config_list {{
  config {{
    name: "a"
    base_path: "{bases['a']}"
    model_platform: "tensorflow"
    model_version_policy {{ specific {{ versions: 1 versions: 2 }} }}
    version_labels {{ key: "stable" value: 1 }}
    version_labels {{ key: "canary" value: 2 }}
  }}
  config {{ name: "b" base_path: "{bases['b']}" model_version_policy {{ latest {{ num_versions: 1 }} }} }}
  config {{ name: "c" base_path: "{bases['c']}" model_version_policy {{ all {{}} }} }}
}}
""")
    s = start(None, f"--model_config_file={config}", "--file_system_poll_wait_seconds=0.1")
    c = client(s)
    one = {"instances": [[1, 2]]}
    v1, v2 = [[2.5, 4.5]], [[3.5, 6.5]]
    assert _rest_rows(s, one, "/v1/models/a:predict")["predictions"] == v2  # the newest served
    assert _rest_rows(s, one, "/v1/models/a/labels/stable:predict")["predictions"] == v1
    assert _rest_rows(s, one, "/v1/models/a/labels/canary:predict")["predictions"] == v2
    assert _rest_rows(s, one, "/v1/models/a/versions/1:predict")["predictions"] == v1
    assert json.loads(s.request("/v1/models/a/labels/stable/metadata")[1])["model_spec"]["version"] == "1"
    assert [v["version"] for v in json.loads(s.request("/v1/models/a")[1])["model_version_status"]] == ["2", "1"]
    assert json.loads(s.request("/v1/models/a/labels/canary")[1])["model_version_status"][0]["version"] == "2"
    assert s.predict(one, "/v1/models/a/labels/beta:predict") == (
        400, '{"error":"Unrecognized servable version label: beta"}')
    # b: the latest version only; c: every version, and a third that appears.
    assert _rest_rows(s, one, "/v1/models/b:predict")["predictions"] == v2
    assert s.predict(one, "/v1/models/b/versions/1:predict")[0] == 404
    assert _rest_rows(s, one, "/v1/models/c/versions/1:predict")["predictions"] == v1
    shutil.copytree(models / "v1", tmp_path / "staging")
    os.rename(tmp_path / "staging", bases["c"] / "3")
    wait_for(lambda: s.predict(one, "/v1/models/c/versions/3:predict")[0] == 200, "version 3 of c")
    assert [v["state"] for v in json.loads(s.request("/v1/models/c")[1])["model_version_status"]] == ["AVAILABLE"] * 3

    # gRPC: the same models, versions and labels.
    x = np.array([[1, 2]], np.float32)
    for kwargs, want in (({"model": "a", "label": "stable"}, v1), ({"model": "a", "label": "canary"}, v2),
                         ({"model": "a"}, v2), ({"model": "c", "version": 1}, v1), ({"model": "b"}, v2)):
        r = c.predict({"x": x}, **kwargs)
        assert make_ndarray(r.outputs["output_0"]).tolist() == want, kwargs
        assert r.model_spec.name == kwargs["model"]
    assert c.predict({"x": x}, model="a", label="stable").model_spec.version.value == 1
    assert c.error(lambda: c.predict({"x": x}, model="b", version=1)) == (
        "NOT_FOUND", "Servable not found for request: Specific(b, 1)")
    metrics = s.request("/monitoring/prometheus/metrics")[1]
    assert ':tensorflow:serving:request_count{model_name="c",API="Predict",status="OK"} 3\n' in metrics


def test_bad_model_config_files_are_refused(tmp_path):
    from serving_util import serve_binary
    for text, want in (("model_config_list { config { name: 'a' base_path: '/x' nope: 1 } }",
                        'line 1 column 60: Message type "tensorflow.serving.ModelConfig" has no field named "nope".'),
                       ("model_config_list { }", "no model_config_list { config { ... } }"),
                       ("model_config_list { config { name: 'a' } }", "every config needs a name and a base_path"),
                       ("model_config_list { config { name: 'a' base_path: '/x' } config { name: 'a' base_path: '/y' } }",
                        "model 'a' is configured twice")):
        (tmp_path / "m.config").write_text(text)
        r = subprocess.run([serve_binary(), f"--model_config_file={tmp_path / 'm.config'}"], capture_output=True,
                           text=True)
        assert r.returncode == 2 and f"kiln-serve: --model_config_file: {want}\n" in r.stderr, r.stderr
    r = subprocess.run([serve_binary(), "--model_config_file=/nonexistent", "--model_name=m"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "exclude each other" in r.stderr


# Protobuf's wire format by hand, for the test below.
def _varint(n):
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _field(number, payload):  # a length-delimited field (wire type 2)
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _varint_field(number, value):  # wire type 0
    return _varint(number << 3) + _varint(value)


def _decode(data):
    """{field number: [values]}: ints for varints, bytes for length-delimited fields."""
    fields, i = {}, 0
    while i < len(data):
        key, shift = 0, 0
        while True:
            b = data[i]
            i += 1
            key |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        number, wire = key >> 3, key & 7
        value, shift = 0, 0
        while True:
            b = data[i]
            i += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        if wire == 2:
            value, i = data[i:i + value], i + value
        else:
            assert wire == 0, wire
        fields.setdefault(number, []).append(value)
    return fields


def test_the_wire_format_has_tf_servings_field_numbers(models, tmp_path, start, client):
    """A PredictRequest built byte by byte from the field numbers of TF Serving's predict.proto,
    model.proto and TF's tensor.proto / tensor_shape.proto (not from tools/serve/proto, which the
    other tests share with the server), and its response read the same way."""
    s = start(one_version(models, tmp_path))
    c = client(s)
    shape = _field(2, _varint_field(1, 1)) + _field(2, _varint_field(1, 2))   # TensorShapeProto.dim = 2, Dim.size = 1
    tensor = (_varint_field(1, 1)                                           # TensorProto.dtype = 1: DT_FLOAT (1)
              + _field(2, shape)                                            # tensor_shape = 2
              + _field(5, np.array([1, 2], "<f4").tobytes()))               # float_val = 5, packed
    spec = (_field(1, b"m")                                                 # ModelSpec.name = 1
            + _field(2, _varint_field(1, 1))                                # version = 2 (Int64Value.value = 1)
            + _field(3, b"serving_default"))                                # signature_name = 3
    request = _field(1, spec) + _field(2, _field(1, b"x") + _field(2, tensor))  # model_spec = 1, inputs = 2
    raw = c.channel.unary_unary("/tensorflow.serving.PredictionService/Predict")
    response = _decode(raw(request, timeout=10))
    spec = _decode(response[2][0])                                         # PredictResponse.model_spec = 2
    assert spec[1] == [b"m"] and _decode(spec[2][0]) == {1: [1]} and spec[3] == [b"serving_default"]
    entry = _decode(response[1][0])                                         # outputs = 1 (map entry: key 1, value 2)
    assert entry[1] == [b"output_0"]
    out = _decode(entry[2][0])
    assert out[1] == [1]                                                    # DT_FLOAT
    assert [_decode(d)[1] for d in _decode(out[2][0])[2]] == [[1], [2]]     # dims 1, 2
    assert np.frombuffer(out[5][0], "<f4").tolist() == [2.5, 4.5]          # float_val, packed

    # GetModelStatus: ModelVersionStatus.version = 1, state = 2 (AVAILABLE = 30), status = 3.
    status = c.channel.unary_unary("/tensorflow.serving.ModelService/GetModelStatus")
    versions = _decode(status(_field(1, _field(1, b"m")), timeout=10))[1]
    assert [(_decode(v)[1], _decode(v)[2]) for v in versions] == [([1], [30])]


def test_the_config_file_is_re_read(models, tmp_path, start, client):
    """--model_config_file_poll_wait_seconds: a model added, one removed, a label moved; a broken
    edit changes nothing."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        for v in (1, 2):
            shutil.copytree(models / f"v{v}", tmp_path / name / str(v))
    config = tmp_path / "models.config"

    def write(text):  # whole, as an editor's save (rename) leaves it
        (tmp_path / "new.config").write_text(text)
        os.rename(tmp_path / "new.config", config)

    def model(name, label_version):
        return (f'config {{ name: "{name}" base_path: "{tmp_path / name}" '
                f'model_version_policy {{ all {{}} }} version_labels {{ key: "stable" value: {label_version} }} }}')

    write(f"model_config_list {{ {model('a', 1)} }}")
    s = start(None, f"--model_config_file={config}", "--model_config_file_poll_wait_seconds=0.1")
    c = client(s)
    one = {"instances": [[1, 2]]}
    assert _rest_rows(s, one, "/v1/models/a/labels/stable:predict")["predictions"] == [[2.5, 4.5]]
    assert s.predict(one, "/v1/models/b:predict")[0] == 404
    write(f"model_config_list {{ {model('b', 2)} }}")
    wait_for(lambda: s.predict(one, "/v1/models/b:predict")[0] == 200, "model b")
    assert s.predict(one, "/v1/models/a:predict")[0] == 404
    assert _rest_rows(s, one, "/v1/models/b/labels/stable:predict")["predictions"] == [[3.5, 6.5]]
    # The label moves; the model's versions stay served throughout.
    write(f"model_config_list {{ {model('b', 1)} }}")
    wait_for(lambda: _rest_rows(s, one, "/v1/models/b/labels/stable:predict")["predictions"] == [[2.5, 4.5]],
             "the label to move")
    write("model_config_list { config { name: 'b' nope: 1 } }")
    wait_for(lambda: "keeping the models served" in s.stderr(), "the broken edit to be refused")
    x = np.array([[1, 2]], np.float32)
    assert make_ndarray(c.predict({"x": x}, model="b", label="stable").outputs["output_0"]).tolist() == [[2.5, 4.5]]


def test_rest_and_grpc_requests_share_a_batch(models, tmp_path, start, client):
    s = start(one_version(models, tmp_path), "--enable_batching", "--max_batch_size=3",
              "--batch_timeout_micros=5000000", "--num_batch_threads=1")
    c = client(s)
    t0 = time.monotonic()
    threads, results = concurrently([lambda: s.predict({"instances": [[1, 2]]}),
                                     lambda: make_ndarray(c.predict({"x": np.array([[3, 4], [5, 6]], np.float32)})
                                                          .outputs["output_0"]).tolist()])
    for t in threads:
        t.join()
    # Three rows fill the batch: answered at once, not after the 5 s timeout, in one model call.
    assert time.monotonic() - t0 < 4
    assert results == [(200, '{"predictions": [[2.5, 4.5]]}'), [[6.5, 8.5], [10.5, 12.5]]]
    metrics = s.request("/monitoring/prometheus/metrics")[1]
    assert ':tensorflow:serving:batching_session:batch_size_sum{model_name="m"} 3\n' in metrics
    assert ':tensorflow:serving:batching_session:batch_size_count{model_name="m"} 1\n' in metrics
