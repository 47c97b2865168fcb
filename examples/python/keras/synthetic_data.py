"""Stand-ins for downloads in the keras.io programs here: MNIST's arrays (uint8 [N, 28, 28] images, uint8
labels), synthetic, each class a bright block at a place of its own on noise, so models learn as on digits."""
import numpy as np


def mnist_like(train=1200, test=300, seed=0):
    """((x_train, y_train), (x_test, y_test)), as keras.datasets.mnist.load_data() returns them."""
    rng = np.random.default_rng(seed)

    def part(n):
        y = rng.integers(0, 10, n).astype("uint8")
        x = rng.integers(0, 150, (n, 28, 28)).astype("uint8")
        for i, k in enumerate(y):
            r, c = 2 + 8 * (k // 4) + rng.integers(0, 3), 2 + 6 * (k % 4) + rng.integers(0, 3)
            x[i, r:r + 5, c:c + 4] = 255
        return x, y
    return part(train), part(test)
