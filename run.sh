#!/usr/bin/env bash
# The main job: installs what is needed, builds, and runs the main example.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/build.sh getting_started
./build/examples/getting_started "$@"
