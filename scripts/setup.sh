#!/usr/bin/env bash
# Installs everything Kiln needs from Debian packages, plus any package names
# given as arguments (other scripts' extra needs). Safe to re-run: it only
# calls apt when a package is missing.
set -euo pipefail

packages=(
  g++ cmake ninja-build ccache pkg-config
  libdnnl-dev ocl-icd-opencl-dev libfmt-dev nlohmann-json3-dev  # dnnl's CMake config requires OpenCL
  liblapack3 libblas3  # the linalg ops' kernels, loaded at their first use (OpenBLAS where installed)
  zlib1g-dev  # gzip-compressed IDX (MNIST) files
  dataset-fashion-mnist  # the full Fashion-MNIST as IDX files (mnist_train --dataset fashion)
  libgtest-dev libgmock-dev libbenchmark-dev
  # the Python package, for Debian's /usr/bin/python3
  python3-dev pybind11-dev python3-numpy python3-pytest python3-hypothesis libdlpack-dev
  # kiln::distributed (data-parallel training): Open MPI 4.1, mpirun for the tests
  libopenmpi-dev openmpi-bin
  # ONNX export/import: protobuf and ONNX's generated message classes and
  # checker (C++), the Python checker for the tests, ONNX's backend node tests
  libprotobuf-dev protobuf-compiler libonnx-dev python3-onnx libonnx-testdata
  python3-h5py  # kiln.keras: .weights.h5 and .keras files (save_weights, model.save)
  python3-pandas  # kiln.keras: ImageDataGenerator.flow_from_dataframe
  python3-icu  # kiln.strings: unicode_script (ICU's script codes, as TF)
  python3-matplotlib  # tests: the TF guides run as programs plot with it (headless, MPLBACKEND=Agg)
  python3-sklearn python3-seaborn python3-ipython  # tests: TF tutorials run as programs split and score data, plot it, and show IPython's Audio players
  python3-pydot graphviz  # kiln.keras: utils.plot_model / model_to_dot
  python3-protobuf python3-crcmod  # kiln.io: TF's messages (Example, Event, checkpoint protos); crcmod: fast CRC-32C
  python3-plyvel  # tests: LevelDB itself reads and writes the tables of checkpoint .index files
  python3-pip python3-setuptools python3-wheel python3-build python3-venv  # pip install ., the wheel
  libcpp-httplib-dev  # kiln-serve: TF Serving's REST API over cpp-httplib
  libgrpc++-dev protobuf-compiler-grpc python3-grpcio  # kiln-serve: TF Serving's gRPC API; the Python client in its tests
  libpng-dev libjpeg62-turbo-dev  # tf.image: decode_png/encode_png, decode_jpeg/encode_jpeg
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "setup: installing ${missing[*]}"
  # `env` puts the variable after sudo, which would drop it; as root sudo is empty.
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
