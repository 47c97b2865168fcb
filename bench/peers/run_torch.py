"""Runs PyTorch workload groups and writes their figures as JSON.

    /usr/bin/python3 bench/peers/run_torch.py --out torch_conv.json [--quick] conv [mnist ...]

Threads: KILN_BENCH_THREADS (default 2), as for Kiln's benchmarks. The BLAS
is whatever the dynamic loader finds (bench/compare.sh points it at
OpenBLAS); the JSON says which one was mapped.
"""
import argparse
import json
import platform
import sys

import torch

import torch_workloads
from timing import loaded_blas, thread_count


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("groups", nargs="+", choices=sorted(torch_workloads.GROUPS))
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    args = parser.parse_args()

    torch.set_num_threads(thread_count())
    torch.mm(torch.ones(8, 8), torch.ones(8, 8))  # maps the BLAS library in
    figures = {}
    for group in args.groups:
        print("torch: %s" % group, file=sys.stderr, flush=True)
        figures.update(torch_workloads.GROUPS[group](args.quick))
    meta = {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "threads": torch.get_num_threads(),
        "blas": loaded_blas(),
    }
    with open(args.out, "w") as f:
        json.dump({"meta": meta, "figures": figures}, f, indent=1)


if __name__ == "__main__":
    main()
