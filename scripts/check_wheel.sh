#!/usr/bin/env bash
# The kiln wheel, end to end, as a user gets it:
#   bash scripts/check_wheel.sh [BUILD_DIR [PYTHON]]     (ctest: Python.Wheel)
# builds the wheel (setup.py: only kiln_python_ext, in BUILD_DIR's existing tree, so mostly ninja saying
# it is up to date), installs it into a fresh venv under BUILD_DIR (--system-site-packages, for Debian's
# NumPy and protobuf), imports kiln from outside the source tree and runs a tf.function and a
# GradientTape, uninstalls it and checks that nothing of it is left. Everything it writes is under
# BUILD_DIR/wheel_check; nothing is installed outside the venv.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build_dir=$(realpath "${1:-$src/build}")
python=${2:-/usr/bin/python3}
work=$build_dir/wheel_check
rm -rf "$work"
mkdir -p "$work"

# The build and pip run without the sanitizer runtime scripts/sanitize.sh preloads for the Python tests;
# only the smoke test (the interpreter loading a sanitized kiln._C) needs it.
preload=${LD_PRELOAD:-}
unset LD_PRELOAD PYTHONPATH
# pip sees no configuration, index or cache of this machine's: what it installs comes from the wheel and
# from the system's packages alone.
unset PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL
export PIP_CONFIG_FILE=/dev/null

step() {  # step NAME COMMAND...: runs the command, its output in a log shown only when it fails
  local log="$work/$1.log"
  shift
  if ! "$@" >"$log" 2>&1; then
    echo "check_wheel: failed: $*" >&2
    tail -n 60 "$log" >&2
    exit 1
  fi
}

step wheel env KILN_BUILD_DIR="$build_dir" "$python" -m build --wheel --no-isolation --outdir "$work/dist" "$src"
wheel=$(ls "$work"/dist/kiln-*.whl)
echo "wheel: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"

step venv "$python" -m venv --system-site-packages "$work/venv"
venv_python=$work/venv/bin/python
# --no-index: offline; the dependencies (numpy, protobuf) must be found among the system's packages.
step install "$venv_python" -m pip install --no-index --no-cache-dir "$wheel"
site=$("$venv_python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')

# A file, not stdin: AutoGraph converts functions from their source.
cat >"$work/smoke.py" <<'EOF'
import importlib.metadata
import os
import sys

import numpy as np

import kiln as tf

site = sys.argv[1]
assert os.path.dirname(os.path.dirname(tf.__file__)) == site, f"kiln imported from {tf.__file__}, not {site}"
assert tf._C.__file__.startswith(site), tf._C.__file__
meta = importlib.metadata.metadata("kiln")
assert meta["Name"] == "kiln" and meta["Version"] == tf.version.KILN_VERSION, (meta["Name"], meta["Version"], tf.version.KILN_VERSION)
assert meta["Requires-Python"] == ">=3.9", meta["Requires-Python"]
assert set(meta.get_all("Requires-Dist")) >= {"numpy", "protobuf"}, meta.get_all("Requires-Dist")

traces = []


@tf.function
def poly(x):
    traces.append(1)
    y = x * x
    if tf.reduce_sum(y) > 10.0:  # AutoGraph: a graph cond
        y = y - 1.0
    return y


x = tf.constant([1.0, 2.0, 3.0])
np.testing.assert_allclose(poly(x).numpy(), [0.0, 3.0, 8.0])
np.testing.assert_allclose(poly(tf.constant([1.0, 1.0, 1.0])).numpy(), [1.0, 1.0, 1.0])
assert len(traces) == 1, f"traced {len(traces)} times for one input signature"

v = tf.Variable([0.5, -2.0])
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.exp(v) * v)
np.testing.assert_allclose(tape.gradient(loss, v).numpy(), np.exp([0.5, -2.0]) * (1 + np.array([0.5, -2.0])),
                           rtol=1e-6)
print(f"import kiln {tf.version.KILN_VERSION} from {site}: tf.function and GradientTape ok")
EOF
cd "$work"  # not the source tree: `import kiln` must find the installed package
LD_PRELOAD=$preload "$venv_python" smoke.py "$site"

step uninstall "$venv_python" -m pip uninstall -y kiln
left=$(find "$site" -maxdepth 1 -iname 'kiln*')
if [ -n "$left" ] || "$venv_python" -c 'import kiln' 2>/dev/null; then
  echo "check_wheel: pip uninstall kiln left: ${left:-an importable kiln}" >&2
  exit 1
fi
echo "uninstalled: nothing of kiln left in the venv"
rm -rf "$work/venv"
