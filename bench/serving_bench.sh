#!/usr/bin/env bash
# kiln-serve under load: requests/s and p50/p99 latency at concurrency 1, 8
# and 64, batching off and on, for the MNIST CNN of examples/mnist_train
# (trained a few steps on synthetic digits: the weights do not change the
# cost), one image per request, measured with wrk on 127.0.0.1; then the
# same image through the loaded signature in-process (bench_serve_call), whose
# median the REST median at concurrency 1 is compared with (the overhead).
# Prints the rows of bench/README.md's table.
#   bash bench/serving_bench.sh [seconds per run, default 10]
# The same loads over gRPC with bench_serve_grpc, when it is built.
# Needs ./build/kiln-serve (or the binary in $KILN_SERVE), ./build/examples/mnist_train,
# ./build/bench/bench_serve_call and Debian's wrk. bench_serve_json, when built, times
# the server's two readers of the REST body alone; bench_serve_overhead alternates a REST
# predict and the in-process call, pair by pair (robust to a load that drifts).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
server=
/usr/bin/python3 - "$work" <<'PY'
import json, sys, pathlib, numpy as np
root = pathlib.Path(sys.argv[1]) / "data"
root.mkdir()
def write_idx(path, a):
    a = np.ascontiguousarray(a, np.uint8)
    path.write_bytes(bytes([0, 0, 8, a.ndim]) + np.array(a.shape, ">i4").tobytes() + a.tobytes())
for prefix, n in (("train", 500), ("t10k", 100)):
    labels = np.arange(n) % 10
    images = np.zeros((n, 28, 28), np.uint8)
    images[np.arange(n), 2 + 2 * labels, :] = 255
    write_idx(root / f"{prefix}-images-idx3-ubyte", images)
    write_idx(root / f"{prefix}-labels-idx1-ubyte", labels)
image = (np.random.default_rng(0).random((1, 28, 28, 1))).round(4)
(pathlib.Path(sys.argv[1]) / "body.json").write_text(json.dumps({"instances": image.tolist()}))
PY
OMP_WAIT_POLICY=passive ./build/examples/mnist_train --data-dir "$work/data" --epochs 1 --max-steps 3 \
  --save "$work/models/mnist/1" >/dev/null
export KILN_SERVE_BODY="$work/body.json"
for batching in off on; do
  flags=()
  [ "$batching" = on ] && flags=(--enable_batching --max_batch_size=64 --batch_timeout_micros=1000
                                  --num_batch_threads=${KILN_BENCH_BATCH_THREADS:-1} --max_enqueued_batches=100)
  OMP_WAIT_POLICY=passive "${KILN_SERVE:-./build/kiln-serve}" --model_name=mnist --model_base_path="$work/models/mnist" \
    --rest_api_host=127.0.0.1 --rest_api_port=0 --port=0 "${flags[@]}" >"$work/port" 2>"$work/log" &
  server=$!
  for _ in $(seq 100); do grep -q Exporting "$work/port" 2>/dev/null && break; sleep 0.1; done
  port=$(sed -n 's/^Exporting.*:\([0-9]*\) \.\.\./\1/p' "$work/port")
  grpc_port=$(sed -n 's/^Running gRPC.*:\([0-9]*\) \.\.\./\1/p' "$work/port")
  for c in 1 8 64; do
    result=$(wrk -t$((c < 2 ? 1 : 2)) -c$c -d${secs}s --timeout 30s -s bench/serving_post.lua \
             "http://127.0.0.1:$port/v1/models/mnist:predict" | grep RESULT)
    echo "batching $batching concurrency $c: ${result#RESULT }"
    if [ "$batching$c" = off1 ]; then rest_p50=$(echo "$result" | sed -n 's/.*p50_ms \([0-9.]*\).*/\1/p'); fi
  done
  if [ "$batching" = off ] && [ -x ./build/bench/bench_serve_overhead ]; then
    paired=$(OMP_WAIT_POLICY=passive ./build/bench/bench_serve_overhead "$work/models/mnist/1" \
             "http://127.0.0.1:$port/v1/models/mnist:predict" "$work/body.json" 1000 | grep RESULT)
    echo "REST and in-process call alternated: ${paired#RESULT }"
  fi
  if [ -x ./build/bench/bench_serve_grpc ]; then
    for c in 1 8 64; do
      result=$(./build/bench/bench_serve_grpc "127.0.0.1:$grpc_port" mnist images "$secs" $c 1 28 28 1 | grep RESULT)
      echo "gRPC batching $batching concurrency $c: ${result#RESULT }"
      if [ "$batching$c" = off1 ]; then grpc_p50=$(echo "$result" | sed -n 's/.*p50_ms \([0-9.]*\).*/\1/p'); fi
    done
  fi
  kill -TERM $server
  wait $server
done
call=$(OMP_WAIT_POLICY=passive ./build/bench/bench_serve_call "$work/models/mnist/1" | grep RESULT)
if [ -x ./build/bench/bench_serve_json ]; then
  ./build/bench/bench_serve_json "$work/body.json" | sed 's/^RESULT /REST body reader: /'
fi
echo "in-process call: ${call#RESULT }"
call_p50=$(echo "$call" | sed -n 's/.*p50_us \([0-9.]*\).*/\1/p')
awk -v r="$rest_p50" -v c="$call_p50" 'BEGIN { printf "REST overhead at concurrency 1 (p50): %.0f us\n", r * 1000 - c }'
if [ -n "${grpc_p50:-}" ]; then
  awk -v r="$grpc_p50" -v c="$call_p50" 'BEGIN { printf "gRPC overhead at concurrency 1 (p50): %.0f us\n", r * 1000 - c }'
fi
