"""kiln-serve: Kiln saved models over TensorFlow Serving's REST API.

Each test starts the server on a free loopback port, talks to it with urllib
and checks the exact JSON that TF Serving's API documents: status, metadata,
predict in the row and columnar formats, errors with TF's HTTP codes (the
server keeps serving after each), dynamic batching, the 429 overload answer,
a version dropped in while serving (and then a broken one), and SIGTERM
draining the requests in flight."""
import json
import os
import shutil
import signal
import subprocess
import time

import numpy as np

import kiln as tf

from serving_util import serve_binary as _serve_binary

from serving_util import Server, concurrently as _concurrently, models, one_version as _one_version, start, \
    wait_for as _wait_for  # noqa: F401 (fixtures)


def test_status_metadata_and_predict(models, tmp_path, start):
    s = start(_one_version(models, tmp_path))
    assert s.request("/v1/models/m") == (200, json.dumps(
        {"model_version_status": [{"version": "1", "state": "AVAILABLE",
                                   "status": {"error_code": "OK", "error_message": ""}}]}, indent=1))
    assert json.loads(s.request("/v1/models/m/versions/1")[1])["model_version_status"][0]["version"] == "1"

    status, text = s.request("/v1/models/m/metadata")
    assert status == 200
    meta = json.loads(text)
    assert meta["model_spec"] == {"name": "m", "signature_name": "", "version": "1"}
    sigs = meta["metadata"]["signature_def"]["signature_def"]
    assert sorted(sigs) == ["doubles", "dtypes", "echo", "ints", "multi", "serving_default"]
    assert sigs["serving_default"]["inputs"]["x"]["dtype"] == "DT_FLOAT"
    assert sigs["serving_default"]["inputs"]["x"]["tensor_shape"] == {
        "dim": [{"size": "-1", "name": ""}, {"size": "2", "name": ""}], "unknown_rank": False}
    assert sigs["multi"]["outputs"]["output_1"]["dtype"] == "DT_INT32"
    assert sigs["serving_default"]["method_name"] == "tensorflow/serving/predict"

    # Row format, one unnamed input and output: the rows come back as a list.
    assert s.predict({"instances": [[1, 2], [3, 4.25]]}) == (200, '{"predictions": [[2.5, 4.5], [6.5, 9.0]]}')
    # Named instances, and the columnar format.
    assert s.predict({"instances": [{"x": [1, 2]}]}) == (200, '{"predictions": [[2.5, 4.5]]}')
    assert s.predict({"inputs": [[1, 2]]}) == (200, '{"outputs": [[2.5, 4.5]]}')
    assert s.predict({"inputs": {"x": [[0, 0]]}}) == (200, '{"outputs": [[0.5, 0.5]]}')
    assert s.predict({"inputs": [[1, 2]]}, "/v1/models/m/versions/1:predict") == (200, '{"outputs": [[2.5, 4.5]]}')
    # float32 results in their shortest form, as NumPy prints them.
    x = np.float32(0.1)
    got = json.loads(s.predict({"instances": [[0.1, 1e-3]]})[1])["predictions"][0]
    want = [x * np.float32(2) + np.float32(0.5), np.float32(1e-3) * np.float32(2) + np.float32(0.5)]
    assert s.predict({"instances": [[0.1, 1e-3]]})[1] == \
        '{"predictions": [[%s, %s]]}' % tuple(str(np.float32(v)) for v in want)
    assert np.array(got, np.float32).tolist() == np.array(want, np.float32).tolist()

    # A body past 8 KiB sent as a form (curl -d's and urllib's content type): httplib's own
    # form limit must not apply.
    status, text = s.predict({"instances": [[1, 2]] * 1500})
    assert status == 200 and json.loads(text)["predictions"] == [[2.5, 4.5]] * 1500

    # Several inputs and outputs: rows are objects, columns a dict.
    assert s.predict({"signature_name": "multi", "instances": [{"a": 1.5, "b": 2}, {"a": -1, "b": -7}]}) == (
        200, '{"predictions": [{"output_0": 3.0, "output_1": 3}, {"output_0": -2.0, "output_1": -6}]}')
    assert s.predict({"signature_name": "multi", "inputs": {"a": [1.0], "b": [2]}}) == (
        200, '{"outputs": {"output_0": [2.0], "output_1": [3]}}')
    # Strings, and {"b64": ...} for bytes (bytes that are not UTF-8 come back as b64).
    assert s.predict({"signature_name": "echo", "instances": ["héllo", {"b64": "YQ=="}, {"b64": "/w=="}]}) == (
        200, '{"predictions": ["héllo", "a", {"b64": "/w=="}]}')


def test_bad_requests_get_tf_serving_errors_and_the_server_keeps_serving(models, tmp_path, start):
    s = start(_one_version(models, tmp_path), "--rest_api_max_body_bytes=4096")

    def error(status_body):
        status, text = status_body
        return status, json.loads(text)["error"]

    status, msg = error(s.predict(b"{\"instances\": [1, 2"))
    assert status == 400 and msg.startswith("JSON Parse error")
    assert error(s.predict({"instances": [[1, 2], ["a", 2]]})) == (
        400, "Failed to process element: 1 of 'instances' list. Error: Invalid argument: "
             'JSON Value: "a" Type: String is not of expected type: float')
    assert error(s.predict({"inputs": [[1, True]]})) == (
        400, "JSON Value: true Type: Bool is not of expected type: float")
    status, msg = error(s.predict({"instances": [[1, 2, 3]]}))
    assert status == 400 and "shape (1, 3)" in msg and "(None, 2)" in msg
    status, msg = error(s.predict({"instances": [[1, 2], [3]]}))
    assert status == 400 and "rectangular" in msg
    assert error(s.predict({"signature_name": "multi", "instances": [{"a": 1.0, "b": 1.5}]})) == (
        400, "Failed to process element: 0 key: b of 'instances' list. Error: Invalid argument: "
             "JSON Value: 1.5 Type: Number is not of expected type: int32")
    assert error(s.predict({"signature_name": "multi", "inputs": {"a": [1.0], "b": [2**40]}})) == (
        400, "1099511627776 is out of int32 range")
    assert error(s.predict({"signature_name": "multi", "instances": [{"a": 1.0, "b": 1}, {"a": 1.0}]})) == (
        400, "Failed to process element: 1 of 'instances' list. JSON object: {\"a\":1.0} must only have keys: a,b")
    assert error(s.predict({"signature_name": "multi", "instances": [1.0]})) == (
        400, "instances is a plain list, but expecting list of objects as multiple input tensors required as per "
             "tensorinfo_map")
    assert error(s.predict({"signature_name": "multi", "inputs": {"a": [1.0]}})) == (
        400, "Missing named input: b in 'inputs' object.")
    assert error(s.predict({"instance": [[1, 2]]})) == (400, "Missing 'inputs' or 'instances' key")
    assert error(s.predict({"instances": [[1, 2]], "inputs": [[1, 2]]}))[0] == 400
    assert error(s.predict({"instances": []})) == (400, "No values in 'instances' array")
    assert error(s.predict({"signature_name": "nope", "instances": [[1, 2]]})) == (
        400, 'Serving signature key "nope" not found.')
    assert error(s.predict({"instances": [[1, 2]]}, "/v1/models/other:predict")) == (
        404, "Servable not found for request: Latest(other)")
    assert error(s.predict({"instances": [[1, 2]]}, "/v1/models/m/versions/7:predict")) == (
        404, "Servable not found for request: Specific(m, 7)")
    assert error(s.request("/v1/models/m/versions/7")) == (404, "Could not find version 7 of model m")
    assert error(s.predict({"instances": [[1, 2]]}, "/v1/models/m:classify"))[0] == 501
    assert error(s.request("/v1/nothing/here")) == (400, "Malformed request: GET /v1/nothing/here")
    assert error(s.predict(b'{"instances": ' + b"[" * 2000 + b"]" * 2000 + b"}")) == (
        400, "JSON Parse error: nested deeper than 64 levels at offset: 77")
    huge = b'{"instances": [' + b"[1, 2], " * 2000 + b"[1, 2]]}"
    assert error(s.predict(huge)) == (413, "Request body is larger than the server's limit")
    # Still serving, and the failures are counted by code.
    assert s.predict({"instances": [[1, 2]]}) == (200, '{"predictions": [[2.5, 4.5]]}')
    status, metrics = s.request("/monitoring/prometheus/metrics")
    assert status == 200
    assert ':tensorflow:serving:request_count{model_name="m",API="Predict",status="OK"} 1\n' in metrics
    assert ':tensorflow:serving:request_count{model_name="m",API="Predict",status="INVALID_ARGUMENT"} 14\n' in metrics
    assert ':tensorflow:serving:request_count{model_name="m",API="Predict",status="FAILED_PRECONDITION"} 1\n' in metrics
    assert ':tensorflow:serving:request_latency_count{model_name="m",API="Predict"} ' in metrics


def test_number_lists_read_directly_answer_as_the_full_json_reader(models, tmp_path, start):
    """kiln-serve reads a body of number lists straight into the tensor (numeric_body.h) and any
    other body through a JSON document: each pair below, one body of each kind, must get the same
    answer, and what the direct reader refuses gets the full reader's error."""
    s = start(_one_version(models, tmp_path))
    same = [  # (read directly, read through the document: an escape or an extra key)
        (b'{"instances":[[1,2],[3,4.25]]}', b'{"instances": [[1, 2], [3, 4.25]], "x": 0}'),
        (b' {\n "instances" : [ [ 1e0 , 2E+0 ] , [-0, 0.5e-1] ] ,\t"signature_name":"serving_default"}\r\n',
         b'{"signature_name": "serving_\\u0064efault", "instances": [[1, 2], [0, 0.05]]}'),
        (b'{"inputs": [[0.1, 16777217], [1e38, -1e-50]]}',
         b'{"inputs": [[0.1, 16777217], [1e38, -1e-50]], "x": 0}'),
        (b'{"signature_name": "ints", "instances": [[1, -2], [2147483647, 0]]}',
         b'{"signature_name": "\\u0069nts", "instances": [[1, -2], [2147483647, 0]]}'),
    ]
    for direct, full in same:
        a, b = s.predict(direct), s.predict(full)
        assert a == b and a[0] == 200, (direct, a, b)
    x = np.array([[0.1, 16777217], [1e38, -1e-50]], np.float32)
    got = np.array(json.loads(s.predict(same[2][0])[1])["outputs"], np.float32)
    assert got.tolist() == (x * np.float32(2) + np.float32(0.5)).tolist()
    assert s.predict(same[3][0]) == (200, '{"predictions": [[3, -6], [2147483645, 0]]}')  # int32 wraps, as TF's

    def error(body):
        status, text = s.predict(body)
        return status, json.loads(text)["error"]

    for bad in (b"[[01, 2]]", b"[[1., 2]]", b"[[.5, 2]]", b"[[+1, 2]]", b"[[NaN, 2]]", b"[[1e400, 2]]",
                b"[[1, 2]] x"):
        status, msg = error(b'{"instances": ' + bad + b"}")
        assert status == 400 and msg.startswith("JSON Parse error"), (bad, msg)
    assert error({"signature_name": "ints", "instances": [[1, 2.0]]}) == (
        400, "Failed to process element: 0 of 'instances' list. Error: Invalid argument: "
             "JSON Value: 2.0 Type: Number is not of expected type: int32")
    assert error({"signature_name": "ints", "inputs": [[1, 2**31]]}) == (400, "2147483648 is out of int32 range")
    assert error({"instances": [[1, 2], [3, 4, 5]]})[1].endswith("the nested lists are not rectangular")
    assert error({"instances": [[1, 2], 3]})[1].endswith("the nested lists are not rectangular")
    assert error({"instances": [[[1, 2]]]})[1] == (
        "Input 'x' has shape (1, 1, 2), which does not fit the signature's (None, 2)")
    assert error({"instances": [[1, 2]], "inputs": [[1, 2]]})[1] == (
        "Not formatted correctly expecting only one of 'inputs' or 'instances' keys exist")
    assert error({"instances": 3})[1] == "Excepting 'instances' to be an list/array"

    # float64 read exactly: each number as Python reads it, in every spelling (up to 17 digits,
    # exponents, past 19 digits, subnormal, powers past 1e22), read directly and through the document.
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.standard_normal(40) * 10.0 ** rng.integers(-30, 30, 40), rng.random(20),
                        [0.1, 2.0 ** 53 + 2, 5e-324, 1.7976931348623157e300, 123456789012345678901234.5]])
    texts = [repr(v) for v in x] + ["%.6g" % v for v in x] + ["%.3e" % v for v in x] + ["%.25f" % v for v in x[:20]]
    texts += ["0.000001234", "-0.0", "1E+22", "1e23", "9007199254740993", "12345678901234567890", "0e400"]
    body = ('{"signature_name": "doubles", "instances": [%s]}' % ", ".join(texts)).encode()
    direct, full = s.predict(body), s.predict(b'{"x": 0, ' + body[1:])
    assert direct == full and direct[0] == 200, (direct, full)
    assert json.loads(direct[1])["predictions"] == [float(t) for t in texts]

    # Number-list bodies cut and spliced at random, each also sent with an extra first key (which
    # only the full reader takes): the same status, and the same answer when it is 200.
    rng = np.random.default_rng(4)
    body = b'{"instances": [[1.5, -2], [0.25, 3e1]], "signature_name": "serving_default"}'
    statuses = set()
    for i in range(300):
        b = bytearray(body)
        at = int(rng.integers(1, len(b)))
        if i % 2:  # a digit or a space for one byte: often still valid
            b[at:at + 1] = rng.choice(list(b"0123456789 "), 1).astype(np.uint8).tobytes()
        else:
            piece = rng.choice(list(b'[]{}",:0123456789.-+eE \n'), int(rng.integers(1, 5)))
            b[at:at + int(rng.integers(0, 4))] = piece.astype(np.uint8).tobytes()
        direct, full = s.predict(bytes(b)), s.predict(b'{"x": 0, ' + bytes(b[1:]))
        assert direct[0] == full[0] and (direct[0] != 200 or direct == full), (bytes(b), direct, full)
        statuses.add(direct[0])
    assert statuses == {200, 400}, statuses


def test_batching_joins_concurrent_requests_and_bounds_the_queue(models, tmp_path, start):
    params = tmp_path / "batching.txt"  # TF Serving's text BatchingParameters
    params.write_text("max_batch_size { value: 8 }\nbatch_timeout_micros { value: 600000 }\n"
                      "num_batch_threads { value: 1 }\n")
    s = start(_one_version(models, tmp_path), "--enable_batching", f"--batching_parameters_file={params}",
              "--rest_api_max_pending_requests=4")
    rows = [[[i, 10 * i]] * (1 + i % 2) for i in range(4)]  # 1, 2, 1, 2 rows
    threads, results = _concurrently([lambda r=r: s.predict({"instances": r}) for r in rows])
    time.sleep(0.25)  # the four wait for the batch to fill or time out
    assert s.predict({"instances": [[1, 2]]}) == (
        429, '{"error":"Too many requests: 4 predictions are already waiting"}')
    for t in threads:
        t.join()
    for r, (status, text) in zip(rows, results):
        assert status == 200, text
        assert json.loads(text)["predictions"] == [[2 * a + 0.5, 2 * b + 0.5] for a, b in r]
    metrics = s.request("/monitoring/prometheus/metrics")[1]
    # Six rows from four requests in fewer than four calls of the model.
    assert ':tensorflow:serving:batching_session:batch_size_sum{model_name="m"} 6\n' in metrics
    calls = int(metrics.split(':tensorflow:serving:batching_session:batch_size_count{model_name="m"} ')[1].split()[0])
    assert calls < 4
    # A request larger than a batch is refused.
    status, text = s.predict({"instances": [[1, 2]] * 9})
    assert (status, json.loads(text)) == (400, {"error": "Task size 9 is larger than maximum input batch size 8"})

    # SIGTERM: the request in flight (waiting for its batch) is answered, then the server exits 0.
    threads, results = _concurrently([lambda: s.predict({"instances": [[1, 1]]})])
    time.sleep(0.2)
    s.proc.send_signal(signal.SIGTERM)
    threads[0].join()
    assert results[0] == (200, '{"predictions": [[2.5, 2.5]]}')
    assert s.proc.wait(timeout=10) == 0


def test_several_batch_threads_answer_each_request_with_its_rows(models, tmp_path, start):
    # Two batch threads (each calling the model on its share of the cores), 24 concurrent
    # requests of 1-3 rows: every request gets its own rows back, and the queue's waits are counted.
    s = start(_one_version(models, tmp_path), "--enable_batching", "--max_batch_size=8",
              "--batch_timeout_micros=20000", "--num_batch_threads=2")
    rows = [[[i, -i]] * (1 + i % 3) for i in range(24)]
    threads, results = _concurrently([lambda r=r: s.predict({"instances": r}) for r in rows])
    for t in threads:
        t.join()
    for r, (status, text) in zip(rows, results):
        assert status == 200, text
        assert json.loads(text)["predictions"] == [[2 * a + 0.5, 2 * b + 0.5] for a, b in r]
    metrics = s.request("/monitoring/prometheus/metrics")[1]
    assert ':tensorflow:serving:batching_session:batch_size_sum{model_name="m"} 48\n' in metrics
    assert ':tensorflow:serving:batching_session:queuing_latency_count{model_name="m"} 24\n' in metrics


def test_a_new_version_is_swapped_in_and_a_broken_one_refused(models, tmp_path, start):
    base = _one_version(models, tmp_path)
    s = start(base, "--file_system_poll_wait_seconds=0.1", "--max_num_load_retries=0")
    assert s.predict({"instances": [[1, 2]]}) == (200, '{"predictions": [[2.5, 4.5]]}')
    shutil.copytree(models / "v2", tmp_path / "staging")
    os.rename(tmp_path / "staging", base / "2")

    def serving(version):
        status, text = s.request("/v1/models/m/versions/%d" % version)
        return status == 200 and json.loads(text)["model_version_status"][0]["state"] == "AVAILABLE"

    _wait_for(lambda: serving(2), "version 2")
    assert s.predict({"instances": [[1, 2]]}) == (200, '{"predictions": [[3.5, 6.5]]}')
    assert s.predict({"instances": [[1, 2]]}, "/v1/models/m/versions/1:predict")[0] == 404
    assert json.loads(s.request("/v1/models/m/versions/1")[1])["model_version_status"][0]["state"] == "END"

    # A broken version 3: refused with its error, version 2 keeps serving.
    shutil.copytree(models / "v1", tmp_path / "broken")
    (tmp_path / "broken" / "saved_model.json").write_text("{not json")
    os.rename(tmp_path / "broken", base / "3")

    def refused():
        status, text = s.request("/v1/models/m/versions/3")
        return status == 200 and json.loads(text)["model_version_status"][0]["state"] == "END"

    _wait_for(refused, "version 3 to be refused")
    v3 = json.loads(s.request("/v1/models/m/versions/3")[1])["model_version_status"][0]["status"]
    assert v3["error_code"] == "INVALID_ARGUMENT" and "saved_model.json" in v3["error_message"]
    assert "Loading servable: {name: m version: 3} failed" in s.stderr()
    assert s.predict({"instances": [[1, 2]]}) == (200, '{"predictions": [[3.5, 6.5]]}')
    assert serving(2)


def test_no_version_yet_then_one_appears(models, tmp_path, start):
    base = tmp_path / "empty"
    base.mkdir()
    s = start(base, "--file_system_poll_wait_seconds=0.1")
    status, text = s.predict({"instances": [[1, 2]]})
    assert (status, json.loads(text)) == (404, {"error": "Servable not found for request: Latest(m)"})
    shutil.copytree(models / "v1", base / "5")
    _wait_for(lambda: s.predict({"instances": [[1, 2]]})[0] == 200, "version 5")
    assert s.predict({"instances": [[1, 2]]}) == (200, '{"predictions": [[2.5, 4.5]]}')


def test_bad_flags_are_refused(tmp_path):
    r = subprocess.run([_serve_binary(), "--model_name=m"], capture_output=True, text=True)
    assert r.returncode == 2 and "missing --model_base_path" in r.stderr
    r = subprocess.run([_serve_binary(), "--model_name=m", "--model_base_path=x", "--max_batch_size=0"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--max_batch_size: '0' is not an integer >= 1" in r.stderr
    (tmp_path / "p.txt").write_text("max_batch_size { value: 4 }\nmax_batch_sizes: 3\n")
    r = subprocess.run([_serve_binary(), "--model_name=m", "--model_base_path=x",
                        f"--batching_parameters_file={tmp_path / 'p.txt'}"], capture_output=True, text=True)
    assert r.returncode == 2 and "expected 'name { value: N }' entries" in r.stderr


def test_requests_in_flight_finish_on_the_version_they_started_on(models, tmp_path, start):
    base = _one_version(models, tmp_path)
    s = start(base, "--file_system_poll_wait_seconds=0.05", "--enable_batching", "--max_batch_size=2",
              "--batch_timeout_micros=3000000")
    # Alone in a batch of two, this request waits 3 s on version 1 (0.5 s to get there on a loaded machine)...
    threads, results = _concurrently([lambda: s.predict({"instances": [[1, 2]]})])
    time.sleep(0.5)
    shutil.copytree(models / "v2", tmp_path / "staging")
    os.rename(tmp_path / "staging", base / "2")
    _wait_for(lambda: s.request("/v1/models/m/versions/2")[0] == 200 and
              '"AVAILABLE"' in s.request("/v1/models/m/versions/2")[1], "version 2", timeout=10)
    assert threads[0].is_alive(), "the request ended before version 2 was swapped in"
    # ... and is answered by it though version 2 now serves.
    threads[0].join()
    assert results[0] == (200, '{"predictions": [[2.5, 4.5]]}')
    threads, results = _concurrently([lambda: s.predict({"instances": [[1, 2]]})] * 2)
    for t in threads:
        t.join()
    assert results == [(200, '{"predictions": [[3.5, 6.5]]}')] * 2


class _Halves(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def halve(self, x):
        return tf.cast(x / 2, tf.float16)


def test_dtypes_kiln_serve_cannot_write_are_refused_by_name(tmp_path, start):
    """A float16 output is an error naming the dtype (HTTP 501, UNIMPLEMENTED), never an empty or made-up value."""
    m = _Halves()
    tf.saved_model.save(m, str(tmp_path / "halves" / "1"), signatures={"serving_default": m.halve})
    s = start(tmp_path / "halves")
    status, body = s.predict({"instances": [1.0, 3.0]})
    assert status == 501 and "does not serve half tensors" in json.loads(body)["error"], (status, body)
