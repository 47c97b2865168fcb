#!/usr/bin/env bash
# Configures (Release, Ninja, ccache) and builds Kiln into ./build.
# Extra arguments are ninja targets (default: everything).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# ccache hits across checkouts (a CI clone reuses a developer's cache).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build "$@"
