"""depthwise_conv2d (float32, MobileNet's 3x3 layers) against PyTorch's grouped conv2d, in one run.

    PYTHONPATH=build/python /usr/bin/python3 bench/depthwise_conv.py [--rounds 3] [--seconds 1]

Each case times, per side, the forward convolution and the forward with both gradients (input and
filter), Kiln's as a traced kiln.function (tf.nn.depthwise_conv2d on NHWC; oneDNN's grouped
primitives), PyTorch's eagerly (torch.nn.functional.conv2d with groups=C on NCHW, its native
layout, under no_grad for the forward). The sides alternate for --rounds rounds, so both see the same
machine; each figure is the median over rounds of per-round medians, and the ratio is Kiln's time
over PyTorch's. Threads: KILN_BENCH_THREADS (default 2) for both."""
import argparse
import os
import statistics

THREADS = os.environ.get("KILN_BENCH_THREADS", "2")
os.environ.setdefault("OMP_NUM_THREADS", THREADS)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import kiln as tf  # noqa: E402
from python_mnist_step import median_ms  # noqa: E402

# (batch, height, width, channels, stride): MobileNet v1's depthwise layers at batch 16.
CASES = [(16, 112, 112, 32, 1), (16, 56, 56, 128, 1), (16, 28, 28, 256, 2), (16, 14, 14, 512, 1)]


def kiln_side(x, f, stride):
    xk, fk = tf.constant(x), tf.constant(f)
    forward = tf.function(lambda a, b: tf.nn.depthwise_conv2d(a, b, stride, "SAME"))

    @tf.function
    def both(a, b):
        with tf.GradientTape() as tape:
            tape.watch([a, b])
            loss = tf.reduce_sum(tf.nn.depthwise_conv2d(a, b, stride, "SAME"))
        return tape.gradient(loss, [a, b])

    return (lambda: forward(xk, fk).numpy()), (lambda: [g.numpy() for g in both(xk, fk)])


def torch_side(x, f, stride):
    channels = x.shape[3]
    xt = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
    ft = torch.from_numpy(np.ascontiguousarray(f.transpose(2, 3, 0, 1).reshape(-1, 1, *f.shape[:2])))

    def forward():
        with torch.no_grad():
            return torch.nn.functional.conv2d(xt, ft, stride=stride, padding=1, groups=channels)

    def both():
        a, b = xt.clone().requires_grad_(), ft.clone().requires_grad_()
        torch.nn.functional.conv2d(a, b, stride=stride, padding=1, groups=channels).sum().backward()
        return a.grad, b.grad

    return forward, both


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.0)
    args = parser.parse_args()
    torch.set_num_threads(int(THREADS))
    print(f"threads {THREADS}, {args.rounds} rounds; ms per call (median), ratio = Kiln / PyTorch")
    print(f"{'input (NHWC), 3x3':<24}{'stride':>7}{'fwd Kiln':>10}{'torch':>8}{'ratio':>7}"
          f"{'fwd+bwd Kiln':>14}{'torch':>8}{'ratio':>7}")
    for n, h, w, c, stride in CASES:
        rng = np.random.default_rng(0)
        x = rng.standard_normal((n, h, w, c)).astype(np.float32)
        f = rng.standard_normal((3, 3, c, 1)).astype(np.float32)
        # Same values both sides (odd sizes: TF's SAME pads 1 on each side for 3x3 stride 1; at
        # stride 2 on even sizes TF pads only after, so torch's padding=1 is checked on values).
        sides = {"kiln": kiln_side(x, f, stride), "torch": torch_side(x, f, stride)}
        want = sides["kiln"][0]()
        got = sides["torch"][0]().numpy().transpose(0, 2, 3, 1)
        same_window = got.shape == want.shape and np.allclose(got, want, atol=1e-3)
        rounds = {key: ([], []) for key in sides}
        for _ in range(args.rounds):
            for key, (fwd, both) in sides.items():
                rounds[key][0].append(median_ms(fwd, args.seconds, min_runs=5))
                rounds[key][1].append(median_ms(both, args.seconds, min_runs=5))
        k_f, k_b = (statistics.median(v) for v in rounds["kiln"])
        t_f, t_b = (statistics.median(v) for v in rounds["torch"])
        note = "" if same_window else "  (torch pads both sides: its windows differ at stride 2)"
        print(f"{str((n, h, w, c)):<24}{stride:>7}{k_f:>10.2f}{t_f:>8.2f}{k_f / t_f:>7.2f}"
              f"{k_b:>14.2f}{t_b:>8.2f}{k_b / t_b:>7.2f}{note}")


if __name__ == "__main__":
    main()
