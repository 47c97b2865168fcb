#!/usr/bin/env bash
# Kiln beside PyTorch on this machine, in one run: installs Debian's PyTorch
# and OpenBLAS, builds Kiln's Release benchmarks, runs each workload group on
# both sides one after the other (so both see the same machine load) and
# prints one table under a description of the machine.
#
#   bench/compare.sh [--quick] [--threads N] [--out DIR]
#
#   --quick      fewer samples: about 1 minute of benchmarks instead of 2-3,
#                and no Fashion-MNIST epoch (2 busy cores; the first run also
#                builds Kiln)
#   --threads N  threads for both sides (default: $KILN_BENCH_THREADS, else 2)
#   --out DIR    where the JSON results, logs and table.md go, relative to the
#                repository root (default build/compare)
#
# OMP_WAIT_POLICY or GOMP_SPINCOUNT, when set, applies to both sides (both use
# libgomp); unset, each side runs with its own default (Kiln's short spin,
# design notes "Threads and contention"; libgomp's for torch).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
threads="${KILN_BENCH_THREADS:-2}"
out=build/compare
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --threads) threads="$2"; shift ;;
    --out) out="$2"; shift ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

bash scripts/setup.sh python3-torch python3-numpy libopenblas0-pthread
bash scripts/build.sh bench_eager bench_function bench_mnist mnist_train

export KILN_BENCH_THREADS="$threads"
# Debian's python3 (the one with python3-torch), not a python3 earlier on PATH.
py=/usr/bin/python3
# torch goes through libblas.so.3; this picks OpenBLAS whatever the system's
# BLAS alternative is, with one OpenBLAS thread so that its pthreads do not
# compete with torch's OpenMP threads for the cores.
openblas=(env "LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
          OPENBLAS_NUM_THREADS=1)
# Full mode: Kiln's figures are the medians of 3 repetitions (torch's are
# medians of their samples); quick mode takes one short run of each.
if ((quick)); then
  mode=quick; kiln_flags=(--benchmark_min_time=0.1); mnist_flags=(--benchmark_min_time=0.5); torch_mode=(--quick)
else
  mode=full; kiln_flags=(--benchmark_repetitions=3); mnist_flags=(--benchmark_repetitions=3); torch_mode=()
fi

mkdir -p "$out"
rm -f "$out"/kiln_*.json "$out"/kiln_*.log "$out"/kiln_*.txt "$out"/torch_*.json "$out"/torch_*.log "$out/table.md"
read -r l1 l5 l15 _ < /proc/loadavg

# group NAME BINARY:FILTER...: Kiln's benchmarks of the group, then torch's.
# Filters match whole names: options add "/real_time" or "/manual_time".
group() {
  local name="$1" spec binary filter i=0
  shift
  echo "== $name"
  for spec in "$@"; do
    binary="${spec%%:*}" filter="${spec#*:}"
    local flags=("${kiln_flags[@]}")
    [ "$binary" = bench_mnist ] && flags=("${mnist_flags[@]}")
    "build/bench/$binary" --benchmark_filter="$filter" "${flags[@]}" \
      --benchmark_out="$out/kiln_${name}_$i.json" --benchmark_out_format=json > "$out/kiln_${name}_$i.log" 2>&1 ||
      { echo "compare.sh: $binary failed, see $out/kiln_${name}_$i.log" >&2; exit 1; }
    [ -s "$out/kiln_${name}_$i.json" ] || { echo "compare.sh: $binary ran nothing for '$filter'" >&2; exit 1; }
    i=$((i + 1))
  done
  "${openblas[@]}" "$py" bench/peers/run_torch.py "${torch_mode[@]}" --out "$out/torch_$name.json" "$name" \
    2> "$out/torch_$name.log" || { echo "compare.sh: torch failed, see $out/torch_$name.log" >&2; exit 1; }
}

group dispatch 'bench_eager:^BM_Dispatch_(Add|MulScalar|Tanh)$'
group small_ops 'bench_function:^BM_SmallOps/'
group trace 'bench_function:^BM_TraceCost/'
group elementwise 'bench_eager:^BM_Elementwise_(EagerMulAdd|CopyLoop)/' 'bench_function:^BM_MulAdd16M_Traced/'
group matmul 'bench_eager:^BM_MatMul/1024/'
group conv 'bench_eager:^BM_Conv2D_Seed/'
# The step's graph-mode gain once more with eager and graph steps alternated
# in one process, so that both see the same load (the separate runs above can
# fall in different phases of a busy machine).
group mnist 'bench_mnist:^BM_MnistStep/' 'bench_mnist:^BM_MnistStepAlternating/eager/50'
# Fair under contention: the step quiet and with KILN_BENCH_BUSY (default: half
# the cores) spinning processes, alternated in one process on each side.
group contention 'bench_mnist:^BM_MnistStepContended/'
# Full mode: one Fashion-MNIST epoch on each side (about a minute each on 2
# idle cores), Kiln's printed figures kept in kiln_fashion.txt.
if ((!quick)); then
  echo "== fashion"
  OMP_NUM_THREADS="$threads" build/examples/mnist_train --dataset fashion --epochs 1 > "$out/kiln_fashion.txt" 2>&1 ||
    { echo "compare.sh: mnist_train failed, see $out/kiln_fashion.txt" >&2; exit 1; }
  "${openblas[@]}" "$py" bench/peers/run_torch.py --out "$out/torch_fashion.json" fashion \
    2> "$out/torch_fashion.log" || { echo "compare.sh: torch failed, see $out/torch_fashion.log" >&2; exit 1; }
fi

echo
"${openblas[@]}" "$py" bench/peers/table.py "$out" --load-before "$l1 $l5 $l15" --mode "$mode" | tee "$out/table.md"
