#!/usr/bin/env bash
# Installs onnxruntime-node (CPU only: --ignore-scripts skips its install
# script, whose only job is the optional CUDA download) from npm into
# build/onnxruntime/node_modules, ignored by git, once. Used by
# scripts/onnxruntime_check.sh and bench/onnx_serving.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
ort_dir=build/onnxruntime
if [ ! -d "$ort_dir/node_modules/onnxruntime-node" ]; then
  mkdir -p "$ort_dir"
  npm install --prefix "$ort_dir" --no-audit --no-fund --ignore-scripts --no-save onnxruntime-node@1 >/dev/null
fi
