"""Helpers of the kiln.keras tests: synthetic MNIST files and golden files."""
import gzip
import os
import struct

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def write_idx(path, array):
    """An IDX file (the MNIST format), gzip-compressed: magic 0x0000, type 0x08 (uint8), rank, big-endian dims."""
    array = np.ascontiguousarray(array, dtype=np.uint8)
    header = struct.pack(">BBBB", 0, 0, 0x08, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + array.tobytes())


def synthetic_mnist(directory, train=400, test=100):
    """Digits whose class shows in their pixels (a bright row at 2 + 2 * label), as the C++ examples test writes
    them; the four files have the original MNIST names."""
    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(0)
    for prefix, n in (("train", train), ("t10k", test)):
        labels = (np.arange(n) % 10).astype(np.uint8)
        rng.shuffle(labels)
        images = (rng.uniform(0, 40, (n, 28, 28))).astype(np.uint8)
        images[np.arange(n), 2 + 2 * labels.astype(int), :] = 255
        write_idx(os.path.join(directory, f"{prefix}-images-idx3-ubyte.gz"), images)
        write_idx(os.path.join(directory, f"{prefix}-labels-idx1-ubyte.gz"), labels)
    return directory


def golden(name):
    """A golden file of the C++ tests (tests/golden) or of these tests (python/tests/keras/golden)."""
    for directory in (os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden"),
                      os.path.join(REPO, "tests", "golden")):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            with open(path) as f:
                return f.read()
    raise FileNotFoundError(name)


def run_example(*path, env=None, timeout=600):
    """Runs examples/python/<path> in its own process (this interpreter, this sys.path) and returns what it
    printed, stdout and stderr together; a non-zero exit fails the test with that output."""
    import subprocess
    import sys
    import tempfile
    # The programs make their scratch directories with tempfile, as the notebooks do, and leave them, or write
    # to "./": TMPDIR and the working directory are one directory that goes when the program ends.
    with tempfile.TemporaryDirectory(prefix="kiln_program_") as scratch:
        full_env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), PYTHONUNBUFFERED="1",
                        TMPDIR=scratch, **(env or {}))
        # Bytes, decoded here: text mode would turn the progress bar's carriage returns into newlines.
        result = subprocess.run([sys.executable, os.path.join(REPO, "examples", "python", *path)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=full_env, timeout=timeout,
                                cwd=scratch)
    out = result.stdout.decode("utf-8", errors="replace")
    assert result.returncode == 0, out
    return out


def without_progress(out):
    """fit's bar redraws in place (backspaces, then a carriage return): what a terminal shows of each line stays."""
    return "\n".join(line.replace("\b", "").split("\r")[-1].rstrip() if "\r" in line else line
                     for line in out.split("\n"))
