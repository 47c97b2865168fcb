#!/usr/bin/env bash
# The main job: installs what is needed, fetches the MNIST digits, builds,
# and trains the seeds' CNN with a traced training step (examples/mnist_train).
# Arguments go to mnist_train (e.g. --epochs 1, --eager, --batch-size 256).
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/build.sh mnist_train
bash scripts/mnist_data.sh data/mnist
./build/examples/mnist_train --data-dir data/mnist "$@"
