#!/usr/bin/env bash
# Installs the built Kiln into a scratch prefix, then configures, builds and
# runs a separate project that uses find_package(Kiln).
set -euo pipefail
build_dir=$1
work=$2
rm -rf "$work"
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
# The consumer is compiled with the build's flags: a sanitizer build's library
# needs the sanitizer runtime linked in (scripts/sanitize.sh).
flags=$(sed -n 's/^CMAKE_CXX_FLAGS:STRING=//p' "$build_dir/CMakeCache.txt")
cmake -S "$(dirname "$0")" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_FLAGS="$flags" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/consumer"
