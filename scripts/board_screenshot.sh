#!/usr/bin/env bash
# Renders the HTML report of `kiln-cli board` in headless Chromium and checks the picture is not
# blank: trains examples/python/data_tensorboard.py (TensorBoard callback logs), writes the page
# with kiln-cli board (KILN_CLI, default build/kiln-cli), screenshots it, then checks the PNG has the page's background, ink, and the colours of the
# runs' curves. Not part of CI: it installs Debian's chromium (and python3-pil to read the PNG).
#   bash scripts/board_screenshot.sh [OUTDIR]      # PYTHONPATH defaults to build/python
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh chromium python3-pil
out=$(realpath -m "${1:-build/board_screenshot}")
mkdir -p "$out"
export PYTHONPATH="${PYTHONPATH:-$PWD/build/python}" OMP_WAIT_POLICY=passive
/usr/bin/python3 examples/python/data_tensorboard.py --workdir "$out"
# The example wrote the page in-process; kiln-cli board writes it again, as a user would.
"${KILN_CLI:-build/kiln-cli}" board "$out/logs" --out "$out/report.html" --title "Two moons (kiln-cli board)"
# No sandbox: the script may run as root in a container; the page is our own file.
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
  --window-size=1280,2400 --screenshot="$out/report.png" "file://$out/report.html" 2>"$out/chromium.log" || {
  cat "$out/chromium.log"; exit 1; }
/usr/bin/python3 - "$out/report.png" <<'PY'
import sys
import numpy as np
from PIL import Image

pixels = np.asarray(Image.open(sys.argv[1]).convert("RGB")).astype(int)
height, width, _ = pixels.shape
colours, counts = np.unique(pixels.reshape(-1, 3), axis=0, return_counts=True)
background = np.array([0xf5, 0xf5, 0xf5])  # the page's background (body style)
share = lambda rgb: counts[(np.abs(colours - rgb).sum(axis=1) <= 12)].sum() / counts.sum()
ink = ((pixels.sum(axis=2) < 200 * 3)).mean()  # text, axes and curves
# runs in order settings, train, validation take the palette's first three colours
run_colours = {"train": (0x00, 0x77, 0xbb), "validation": (0x00, 0x99, 0x88)}
print(f"screenshot {width}x{height}: {len(colours)} colours, background {share(background):.1%}, ink {ink:.2%}, "
      + ", ".join(f"{run} curve {share(np.array(c)):.3%}" for run, c in run_colours.items()))
assert len(colours) > 50, "the screenshot is (nearly) one colour: blank"
assert 0.05 < share(background) < 0.95, "the page's background is missing or fills everything"
assert ink > 0.005, "no text or lines drawn"
for run, c in run_colours.items():
    assert share(np.array(c)) > 0.0005, f"the {run} run's colour is not on the page"
print("board screenshot OK")
PY
echo "$out/report.png"
