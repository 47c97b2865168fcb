#!/usr/bin/env bash
# Every test: installs what is needed, builds everything, runs ctest.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j2
