#!/usr/bin/env bash
# Runs Kiln's ONNX exports in onnxruntime (an independent runtime) and
# compares the outputs with Kiln's: every op sample of the registry that has
# an ONNX form, a function of If and Loop, and the seeds' MNIST CNN. onnxruntime comes from npm
# (onnxruntime-node, CPU only: --ignore-scripts skips its optional CUDA
# download) into build/onnxruntime/, ignored by git. Not part of ctest: it
# needs the npm registry.
#   bash scripts/onnxruntime_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh onnx_export_samples
bash scripts/install_onnxruntime.sh
ort_dir=build/onnxruntime
cases=build/onnxruntime/cases
rm -rf "$cases"
build/tests/onnx_export_samples "$cases"
NODE_PATH="$ort_dir/node_modules" node scripts/onnxruntime_check.js "$cases"
