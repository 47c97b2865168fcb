#!/usr/bin/env bash
# Fuzzes the saved-model loader (or the ONNX importer, or the WAV reader) with
# libFuzzer for a bounded time:
#   bash scripts/fuzz_loader.sh [SECONDS=60] [fuzz_saved_model | fuzz_onnx | fuzz_wav]
# Builds Kiln with clang (AddressSanitizer + UndefinedBehaviorSanitizer +
# coverage) into ./build-fuzz, then runs the target on a working copy of its
# seeds (tests/fuzz_corpus/saved_model, onnx or wav) in
# build-fuzz/corpus_<target>. A crash, a sanitizer report or an exception other
# than kiln::Error fails the run and leaves the input in build-fuzz/crash-*
# (replay: ./build-fuzz/<target> build-fuzz/crash-...).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
target="${2:-fuzz_saved_model}"
case "$target" in
  fuzz_saved_model) seeds=tests/fuzz_corpus/saved_model; dict=(-dict=tests/fuzz_corpus/saved_model.dict) ;;
  fuzz_onnx) seeds=tests/fuzz_corpus/onnx; dict=() ;;
  fuzz_wav) seeds=tests/fuzz_corpus/wav; dict=() ;;
  *) echo "unknown target $target" >&2; exit 2 ;;
esac

# clang 16 (clang 14 lacks std::source_location), its libFuzzer runtime and
# its OpenMP runtime, from Debian.
bash scripts/setup.sh clang-16 libclang-rt-16-dev libomp-16-dev

export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++-16 \
  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DKILN_FUZZ=ON -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_BENCH=OFF -DKILN_BUILD_EXAMPLES=OFF >/dev/null
ninja -C build-fuzz -j2 "$target"

mkdir -p "build-fuzz/corpus_$target"
cp -n "$seeds"/* "build-fuzz/corpus_$target/" 2>/dev/null || true
# Leaks are not the loader's business here (the op registry lives forever).
ASAN_OPTIONS=detect_leaks=0 "./build-fuzz/$target" -max_total_time="$seconds" -rss_limit_mb=4096 \
  -max_len=65536 -timeout=10 "${dict[@]}" -artifact_prefix=build-fuzz/ -print_final_stats=1 "build-fuzz/corpus_$target"
