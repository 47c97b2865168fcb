#!/usr/bin/env bash
# Serving the seeds' MNIST CNN, Kiln's loaded saved model against onnxruntime
# (onnxruntime-node, CPU) on the ONNX export of the same model, in one run:
# batch 1 latency and batch 256 throughput, with the same thread count
# (THREADS, default 2) for both. The minimum over the calls is printed too:
# on a shared machine it is the figure other processes disturb least.
#   bash bench/onnx_serving.sh [THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."
threads="${1:-2}"
bash scripts/build.sh bench_onnx_serving >/dev/null
bash scripts/install_onnxruntime.sh
ort_dir=build/onnxruntime
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
OMP_NUM_THREADS="$threads" build/bench/bench_onnx_serving "$work"
ort_json=$(NODE_PATH="$ort_dir/node_modules" node bench/onnx_serving.js "$work" "$threads")
/usr/bin/python3 - "$work/kiln.json" "$ort_json" "$threads" <<'PY'
import json, sys
kiln, ort, threads = json.load(open(sys.argv[1])), json.loads(sys.argv[2]), sys.argv[3]
print(f"MNIST CNN serving, {threads} threads (load average {open('/proc/loadavg').read().split()[0]})")
print(f"{'':28}{'Kiln (saved model)':>20}{'onnxruntime':>14}{'Kiln vs ORT':>14}")
k, o = kiln["b1"], ort["b1"]
print(f"{'batch 1 latency, min':28}{k['min_ms']:>17.3f} ms{o['min_ms']:>11.3f} ms{o['min_ms'] / k['min_ms']:>13.2f}x")
print(f"{'batch 1 latency, median':28}{k['median_ms']:>17.3f} ms{o['median_ms']:>11.3f} ms{o['median_ms'] / k['median_ms']:>13.2f}x")
print(f"{'batch 1 latency, p90':28}{k['p90_ms']:>17.3f} ms{o['p90_ms']:>11.3f} ms{o['p90_ms'] / k['p90_ms']:>13.2f}x")
k, o = kiln["b256"], ort["b256"]
kt, ot = 256e3 / k["median_ms"], 256e3 / o["median_ms"]
print(f"{'batch 256 throughput':28}{kt:>13.0f} img/s{ot:>8.0f} img/s{kt / ot:>13.2f}x")
kt, ot = 256e3 / k["min_ms"], 256e3 / o["min_ms"]
print(f"{'batch 256 throughput, best':28}{kt:>13.0f} img/s{ot:>8.0f} img/s{kt / ot:>13.2f}x")
print(f"(ratios above 1 favour Kiln; outputs agree within {max(ort['b1']['max_abs_diff'], ort['b256']['max_abs_diff']):.1e})")
PY
