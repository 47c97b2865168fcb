#!/usr/bin/python3
"""Instructions per call of compare.sh's Kiln workloads in two builds, counted by callgrind: the
check of "no engine change makes a workload slower" that this shared guest's noise and code layout
cannot move (perf-log, "Issue 43").

    bench/instruction_counts.py BEFORE_BUILD_DIR AFTER_BUILD_DIR [--out DIR] [--only NAME,...]

Each build dir holds bench/bench_eager, bench/bench_function and bench/bench_mnist (Release). Needs
Debian's valgrind. One thread (KILN_BENCH_THREADS=1); valgrind shows the CPU without AVX-512, so the
AVX2 paths are counted. The MNIST steps take tens of minutes under valgrind on a busy machine."""
import argparse
import os
import re
import subprocess
import sys

# name, binary, filter, the benchmark function, min_time, the repeated function, one-time part to leave out
WORKLOADS = [
    ("add", "bench_eager", "^BM_Dispatch_Add$", "BM_Dispatch_Add", 0.5,
     r"^kiln::operator\+\(kiln::Operand const&, kiln::Operand const&\)$", None, "a + b [1], eager"),
    ("mul", "bench_eager", "^BM_Dispatch_MulScalar$", "BM_Dispatch_MulScalar", 0.5,
     r"^kiln::operator\*\(kiln::Operand const&, kiln::Operand const&\)$", None, "a * 2 [1], eager"),
    ("tanh", "bench_eager", "^BM_Dispatch_Tanh$", "BM_Dispatch_Tanh", 0.5, r"^kiln::tanh\(", None,
     "tanh(a) [1], eager"),
    ("smallops", "bench_function", "^BM_SmallOps/16/", "BM_SmallOps", 0.5, r"kiln::runtime::run_eager\(", None,
     "1000 small ops [16], eager, per op"),
    ("smallops", None, None, None, None, r"kiln::exec::Plan::run\(", r"Graph::compiled\(",
     "1000 small ops [16], traced, per call"),
    ("muladd", "bench_eager", "^BM_Elementwise_EagerMulAdd/", "BM_Elementwise_EagerMulAdd", 0.2,
     r"^kiln::operator\*\(kiln::Operand const&, kiln::Operand const&\)$", None, "a * b [16M], eager"),
    ("muladdtr", "bench_function", "^BM_MulAdd16M_Traced/", "BM_MulAdd16M_Traced", 0.2,
     r"kiln::exec::Plan::run\(", r"Graph::compiled\(", "a*b+c [16M], traced, per call"),
    ("matmul", "bench_eager", "^BM_MatMul/1024/", "BM_MatMul", 0.05, r"^kiln::matmul\(", None,
     "matmul 1024^2, eager"),
    ("mnist50", "bench_mnist", "^BM_MnistStep/50/", "BM_MnistStep", 0.2, r"kiln::exec::Plan::run\(",
     r"Graph::compiled\(", "MNIST step b=50, traced"),
]


def run(build, out, name, binary, flt, function, min_time):
    env = dict(os.environ, KILN_BENCH_THREADS="1", GOMP_SPINCOUNT="1000")  # set: no re-exec under valgrind
    path = os.path.join(out, f"{os.path.basename(os.path.normpath(build))}.{name}.callgrind")
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={path}", f"--toggle-collect=*{function}(*",
                    os.path.join(build, "bench", binary), f"--benchmark_filter={flt}",
                    f"--benchmark_min_time={min_time}"], env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return path


def inclusive_and_calls(path):
    """{function: (calls, inclusive instructions)} from callgrind_annotate's caller tree."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--tree=caller", "--threshold=100", path],
                          capture_output=True, text=True, check=True).stdout
    found, calls = {}, 0
    for line in text.splitlines():
        caller = re.match(r"\s*[\d,]+ \([\s\d.]+%\)\s+<\s.*\(([\d,]+)x\)", line)
        if caller:
            calls += int(caller.group(1).replace(",", ""))
            continue
        function = re.match(r"\s*([\d,]+) \([\s\d.]+%\)\s+\*\s+\?*:?(.*?) \[", line)
        if function:
            found[function.group(2)] = (calls, int(function.group(1).replace(",", "")))
        if not line.strip():
            calls = 0
    return found


def per_call(found, pattern, one_time):
    calls, total = max((v for k, v in found.items() if re.search(pattern, k)), default=(0, 0))
    if one_time:
        total -= max((v[1] for k, v in found.items() if re.search(one_time, k)), default=0)
    return calls, total / calls if calls else float("nan")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--out", default="build/instruction_counts")
    p.add_argument("--only", help="comma-separated workload names (add, mul, tanh, smallops, ...)")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    wanted = set(a.only.split(",")) if a.only else None
    files = {}
    for name, binary, flt, function, min_time, *_ in WORKLOADS:
        if binary is None or (wanted and name not in wanted):
            continue
        for build in (a.before, a.after):
            print(f"counting {name} in {build}", file=sys.stderr)
            files[name, build] = inclusive_and_calls(run(build, a.out, name, binary, flt, function, min_time))
    print("| workload | calls (before / after) | instructions per call, before | after | after / before |")
    print("|---|---|---:|---:|---:|")
    for name, _, _, _, _, pattern, one_time, label in WORKLOADS:
        if (name, a.before) not in files:
            continue
        (cb, b), (ca, c) = (per_call(files[name, d], pattern, one_time) for d in (a.before, a.after))
        print(f"| {label} | {cb} / {ca} | {b:,.0f} | {c:,.0f} | {c / b:.4f} |")


if __name__ == "__main__":
    main()
