"""Prints Kiln's and PyTorch's figures side by side, as a Markdown table, under
a description of the machine and the conditions of the run.

    /usr/bin/python3 bench/peers/table.py RESULTS_DIR [--load-before "1.0 0.5 0.2"] [--mode quick]

RESULTS_DIR holds kiln_*.json (Google Benchmark's JSON output),
torch_*.json (run_torch.py's output) and, in full mode, kiln_fashion.txt
(mnist_train's output), as bench/compare.sh writes them.
"""
import argparse
import glob
import json
import math
import os
import platform
import re
import subprocess
import time

TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def base_name(run_name):
    """'BM_SmallOps/1000000/iterations:2/real_time' -> 'BM_SmallOps/1000000' (min_time: too)."""
    return "/".join(p for p in run_name.split("/")
                    if not p.startswith(("iterations:", "min_time:", "repeats:"))
                    and p not in ("real_time", "manual_time"))


def load_kiln(paths):
    """{benchmark base name: result entry}; with repetitions the median wins."""
    runs, warnings = {}, []
    for path in paths:
        with open(path) as f:
            entries = json.load(f)["benchmarks"]
        for e in entries:
            if e.get("error_occurred"):
                warnings.append("%s: %s" % (e["name"], e.get("error_message", "error")))
                continue
            if "differs" in e.get("label", ""):
                warnings.append("%s: %s" % (e["name"], e["label"]))
            is_median = e.get("run_type") == "aggregate" and e.get("aggregate_name") == "median"
            if e.get("run_type") == "aggregate" and not is_median:
                continue
            name = base_name(e.get("run_name", e["name"]))
            if is_median or runs.get(name, {}).get("aggregate_name") != "median":
                runs[name] = e
    return runs, warnings


def load_torch(paths):
    figures, meta = {}, {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        figures.update(data["figures"])
        meta = data["meta"]
    return figures, meta


def kiln_time(name):
    """Real time per iteration, in seconds."""
    def get(runs):
        e = runs.get(name)
        return e["real_time"] * TIME_UNITS[e["time_unit"]] if e else math.nan
    return get


def kiln_counter(name, key, scale):
    def get(runs):
        e = runs.get(name)
        return e[key] * scale if e and key in e else math.nan
    return get


# workload | Kiln figure | PyTorch figure | unit ("s" or "calls"). Every figure is a time
# (or a call count), so lower is better and the ratio PyTorch / Kiln is
# Kiln's speedup.
ROWS = [
    ("eager `a + b`, [1] f32 (torch from Python)", kiln_time("BM_Dispatch_Add"), "dispatch.add", "s"),
    ("eager `a * 2`, [1] f32 (torch: `a * 2.0`)", kiln_time("BM_Dispatch_MulScalar"), "dispatch.mul_scalar", "s"),
    ("eager `tanh(a)`, [1] f32", kiln_time("BM_Dispatch_Tanh"), "dispatch.tanh", "s"),
    ("1000 small ops [16], eager", kiln_counter("BM_SmallOps/16", "eager_ms", 1e-3), "small_ops.16.eager", "s"),
    ("1000 small ops [16], graph (torch: jit.script)", kiln_counter("BM_SmallOps/16", "traced_ms", 1e-3),
     "small_ops.16.graph", "s"),
    ("1000 small ops [1M], eager", kiln_counter("BM_SmallOps/1000000", "eager_ms", 1e-3),
     "small_ops.1000000.eager", "s"),
    ("1000 small ops [1M], graph (torch: jit.script)", kiln_counter("BM_SmallOps/1000000", "traced_ms", 1e-3),
     "small_ops.1000000.graph", "s"),
    ("trace the 1000-op fn [16] until a steady call (torch: jit.trace + 2 calls)",
     kiln_counter("BM_TraceCost", "first_call_ms", 1e-3), "trace.to_steady", "s"),
    ("graph calls until tracing has paid for itself", kiln_counter("BM_TraceCost", "break_even_calls", 1.0),
     "trace.break_even_calls", "calls"),
    ("`a*b+c` 16M f32, eager", kiln_time("BM_Elementwise_EagerMulAdd"), "elementwise.eager", "s"),
    ("`a*b+c` 16M f32, graph (torch: jit.script)", kiln_time("BM_MulAdd16M_Traced"), "elementwise.graph", "s"),
    ("copy 16M f32 (reference: Kiln copy loop, torch `y.copy_(a)`)", kiln_time("BM_Elementwise_CopyLoop"),
     "elementwise.copy", "s"),
    ("matmul 1024x1024 f32 (Kiln oneDNN, torch BLAS)", kiln_time("BM_MatMul/1024"), "matmul.1024", "s"),
    ("conv 1x200x200x100, 100 3x3 filters, NHWC (torch channels_last)", kiln_time("BM_Conv2D_Seed"),
     "conv.eager", "s"),
    ("MNIST CNN train step b=50, eager", kiln_time("BM_MnistStep/50/0"), "mnist.50.eager", "s"),
    ("MNIST CNN train step b=50, graph (torch: jit.trace model)", kiln_time("BM_MnistStep/50/1"),
     "mnist.50.graph", "s"),
    ("MNIST CNN train step b=256, eager", kiln_time("BM_MnistStep/256/0"), "mnist.256.eager", "s"),
    ("MNIST CNN train step b=256, graph (torch: jit.trace model)", kiln_time("BM_MnistStep/256/1"),
     "mnist.256.graph", "s"),
    ("MNIST step b=50, graph, quiet (alternated with the next)",
     kiln_counter("BM_MnistStepContended/50", "traced_quiet_ms", 1e-3), "contention.graph.quiet", "s"),
    ("MNIST step b=50, graph, one core taken by a spinning process",
     kiln_counter("BM_MnistStepContended/50", "traced_busy_ms", 1e-3), "contention.graph.busy", "s"),
    ("MNIST step b=50, eager, one core taken by a spinning process",
     kiln_counter("BM_MnistStepContended/50", "eager_busy_ms", 1e-3), "contention.eager.busy", "s"),
]

# Each side's own graph-mode gain: its eager time over its graph time.
GAINS = [
    ("1000 small ops [16]", "small_ops.16"),
    ("1000 small ops [1M]", "small_ops.1000000"),
    ("`a*b+c` 16M f32", "elementwise"),
    ("MNIST CNN train step b=50", "mnist.50"),
    ("MNIST CNN train step b=256", "mnist.256"),
]


def fmt(value, unit):
    """Times (unit "s") in the unit that puts them between 1 and 1000."""
    if math.isnan(value):
        return "n/a"
    if unit == "s":
        unit = next((u for u, scale in TIME_UNITS.items() if value < 1000 * scale), "s")
        value /= TIME_UNITS[unit]
    return ("%.3g" % value if value < 100 else "%.0f" % value) + " " + unit.replace("us", "µs")


def ratio(peer, kiln):
    if math.isnan(peer) or math.isnan(kiln) or peer <= 0 or kiln <= 0:
        return "-"
    return "%.2f" % (peer / kiln)


def fashion_lines(results, peer):
    """The Fashion-MNIST epoch's table, when compare.sh ran it (full mode)."""
    path = os.path.join(results, "kiln_fashion.txt")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        text = f.read()
    epoch = re.search(r"^epoch 1: ([0-9.]+) s$", text, re.M)
    accuracy = re.search(r"^test accuracy: ([0-9.]+)%", text, re.M)
    k_epoch = float(epoch.group(1)) if epoch else math.nan
    k_acc = float(accuracy.group(1)) / 100 if accuracy else math.nan
    p_epoch, p_acc = peer.get("fashion.epoch", math.nan), peer.get("fashion.test_accuracy", math.nan)
    percent = lambda v: "n/a" if math.isnan(v) else "%.2f%%" % (100 * v)
    return [
        "",
        "| Fashion-MNIST, 1 epoch (60,000 images, batch 50, Adam) | Kiln (traced step) | PyTorch (eager) "
        "| PyTorch / Kiln |",
        "|---|---:|---:|---:|",
        "| seconds per epoch (input pipeline included) | %s | %s | %s |" % (
            fmt(k_epoch, "s"), fmt(p_epoch, "s"), ratio(p_epoch, k_epoch)),
        "| test accuracy (10,000 test images) | %s | %s | |" % (percent(k_acc), percent(p_acc)),
    ]


def machine_lines(meta, load_before, mode):
    lscpu = dict(line.split(":", 1) for line in subprocess.run(
        ["lscpu"], capture_output=True, text=True).stdout.splitlines() if ":" in line)
    get = lambda key: lscpu.get(key, "?").strip()
    commit = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "describe", "--always",
                             "--dirty"], capture_output=True, text=True).stdout.strip() or "?"
    with open("/proc/loadavg") as f:
        load_after = " ".join(f.read().split()[:3])
    blas = ", ".join(os.path.basename(os.path.dirname(p)) + "/" + os.path.basename(p) for p in meta.get("blas", []))
    return [
        "date:    %s, %s mode" % (time.strftime("%Y-%m-%d %H:%M %Z"), mode),
        "CPU:     %s, %s CPUs, %s thread(s) per core, hypervisor: %s" % (
            get("Model name"), get("CPU(s)"), get("Thread(s) per core"), get("Hypervisor vendor")),
        "kernel:  %s %s" % (platform.system(), platform.release()),
        "load:    %s before, %s after (1/5/15-minute load averages)" % (load_before or "?", load_after),
        "threads: %s for both (KILN_BENCH_THREADS), OMP_WAIT_POLICY=%s" % (
            meta.get("threads", "?"), os.environ.get("OMP_WAIT_POLICY", "(unset)")),
        "Kiln:    %s, Release; oneDNN for matmul and conv" % commit,
        "PyTorch: %s (Python %s); BLAS loaded: %s; OPENBLAS_NUM_THREADS=%s" % (
            meta.get("torch", "?"), meta.get("python", "?"), blas or "none",
            os.environ.get("OPENBLAS_NUM_THREADS", "(unset)")),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results")
    parser.add_argument("--load-before", default="")
    parser.add_argument("--mode", default="full")
    args = parser.parse_args()
    runs, warnings = load_kiln(sorted(glob.glob(os.path.join(args.results, "kiln_*.json"))))
    peer, meta = load_torch(sorted(glob.glob(os.path.join(args.results, "torch_*.json"))))

    print("\n".join("    " + line for line in machine_lines(meta, args.load_before, args.mode)))
    print()
    # Kiln's figure of each row, by the row's PyTorch figure name.
    row = {peer_key: kiln_get(runs) for _, kiln_get, peer_key, _ in ROWS}
    print("| workload | Kiln | PyTorch | PyTorch / Kiln |")
    print("|---|---:|---:|---:|")
    for label, _, peer_key, unit in ROWS:
        k, p = row[peer_key], peer.get(peer_key, math.nan)
        print("| %s | %s | %s | %s |" % (label, fmt(k, unit), fmt(p, unit), ratio(p, k)))
    print()
    print("| graph-mode gain (eager time / graph time) | Kiln | PyTorch |")
    print("|---|---:|---:|")
    for label, key in GAINS:
        k = row[key + ".eager"] / row[key + ".graph"]
        p = peer.get(key + ".eager", math.nan) / peer.get(key + ".graph", math.nan)
        print("| %s | %s | %s |" % (label, "n/a" if math.isnan(k) else "%.2fx" % k,
                                     "n/a" if math.isnan(p) else "%.2fx" % p))
    # Kiln's alone: eager and graph steps alternated in one process, the
    # median of each pair's eager / graph (less moved by the machine's load).
    alternated = kiln_counter("BM_MnistStepAlternating/eager/50", "pair_A/B", 1.0)(runs)
    if not math.isnan(alternated):
        print("| MNIST CNN train step b=50, eager and graph steps alternated | %.2fx | - |" % alternated)
    # Fair under contention: each side's graph step with one core taken over
    # the same step quiet, alternated in one process (2x is the fair share on 2 cores).
    busy = row["contention.graph.busy"] / row["contention.graph.quiet"]
    peer_busy = peer.get("contention.graph.busy", math.nan) / peer.get("contention.graph.quiet", math.nan)
    print("| MNIST step b=50, graph, slowdown with one core taken (fair: 2x on 2 cores) | %s | %s |" % (
        "n/a" if math.isnan(busy) else "%.2fx" % busy, "n/a" if math.isnan(peer_busy) else "%.2fx" % peer_busy))
    for line in fashion_lines(args.results, peer):
        print(line)
    for w in warnings:
        print("WARNING: " + w)


if __name__ == "__main__":
    main()
