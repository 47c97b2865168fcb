#!/usr/bin/env python3
"""Writes python/tests/data/tf_2_15_api.json, the public names of TensorFlow 2.15's tf.* modules, from TF's
API golden files (tensorflow/tools/api/golden/v2/tensorflow*.pbtxt of a TensorFlow checkout).

    python3 scripts/tf_api_catalogue.py GOLDEN_DIR [--newer] > python/tests/data/tf_2_15_api.json

From the v2.15.0 tag's golden files the output is exact. --newer is for golden files of a later TensorFlow:
it drops the names TF added after 2.15 and puts back the ones it removed since (the two lists below, read off
TF's RELEASE.md), which is how the stored catalogue was made (its "provenance" says from what).
tf.keras (python/tests/keras has Keras' own catalogue), tf.compat.v1 and tf.raw_ops (thousands of names,
left out of Kiln whole) are not listed name by name."""
import json
import os
import re
import sys

# The modules the catalogue lists, as "tf" and dotted paths under it.
MODULES = ("tf", "math", "nn", "linalg", "image", "io", "io.gfile", "strings", "data", "data.experimental", "random",
           "sparse", "ragged", "signal", "config", "debugging", "dtypes", "experimental", "summary", "train",
           "saved_model", "test", "compat", "errors", "sysconfig", "mixed_precision", "types", "types.experimental",
           "nest", "sets", "autodiff", "version", "autograph")

# --newer: names in a later TensorFlow's golden files that 2.15 lacks (RELEASE.md 2.16 to 2.21).
ADDED_AFTER_2_15 = {
    "tf": ["check_pinned", "conv2d_backprop_filter_v2", "conv2d_backprop_input_v2", "fftnd", "ifftnd", "rfftnd",
           "irfftnd", "ragged_fill_empty_rows", "ragged_fill_empty_rows_grad"],
    "signal": ["fftnd", "ifftnd", "rfftnd", "irfftnd"],
    "image": ["decode_webp"], "io": ["decode_webp"],
    "experimental": ["int2", "uint2"],
    "test": ["is_cpu_target_available"],
    "data.experimental": ["get_model_proto"],
}
# --newer: names 2.15 has that a later TensorFlow removed (tf.estimator: 2.16).
REMOVED_AFTER_2_15 = {"tf": ["estimator"]}
# Names TF has though its golden files do not list them (the compat.v1/v2 modules are documented apart).
UNLISTED = {"compat": ["v1", "v2"]}

_NAME = re.compile(r'^\s*name:\s*"([^"]+)"', re.M)
_PATH = re.compile(r'^path:\s*"([^"]+)"', re.M)


def module_names(text):
    """The member and member_method names of one tf_module golden file (None for a class's file)."""
    if "tf_module {" not in text:
        return None
    return sorted(set(_NAME.findall(text)))


def read_goldens(golden_dir):
    modules = {}
    for file in sorted(os.listdir(golden_dir)):
        if not (file.startswith("tensorflow") and file.endswith(".pbtxt")):
            continue
        with open(os.path.join(golden_dir, file), encoding="utf-8") as f:
            text = f.read()
        path, names = _PATH.search(text), module_names(text)
        if path is None or names is None:
            continue
        dotted = path.group(1)
        key = "tf" if dotted == "tensorflow" else dotted[len("tensorflow."):]
        if key in MODULES:
            modules[key] = names
    return modules


def adjust(modules, newer):
    for key, names in UNLISTED.items():
        modules[key] = sorted(set(modules.get(key, [])) | set(names))
    if newer:
        for key, names in ADDED_AFTER_2_15.items():
            modules[key] = [n for n in modules.get(key, []) if n not in names]
        for key, names in REMOVED_AFTER_2_15.items():
            modules[key] = sorted(set(modules.get(key, [])) | set(names))
    return modules


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    modules = adjust(read_goldens(argv[1]), "--newer" in argv)
    missing = [m for m in MODULES if m not in modules]
    if missing:
        sys.exit(f"no golden file for {missing} in {argv[1]}")
    json.dump({"provenance": f"scripts/tf_api_catalogue.py {' '.join(argv[1:])}", "modules": modules},
              sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv)
