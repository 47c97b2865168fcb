"""kiln.sysconfig (tf.sysconfig): how this build was made. TF's answers point a C++ custom-op build at TF's
headers and library; Kiln's point at its own (include/kiln and the extension), and its build facts say CPU."""
import os as _os

from . import _C

CXX11_ABI_FLAG = 1  # Kiln builds with the C++11 ABI (GCC's default)
CXX_VERSION = 202002  # Kiln's headers are C++20 (TF 2.15's say 201703, C++17)
MONOLITHIC_BUILD = 0


def get_include():
    """The directory of Kiln's public C++ headers (its checkout's include/)."""
    package = _os.path.dirname(_os.path.abspath(__file__))
    return _os.path.normpath(_os.path.join(package, _os.pardir, _os.pardir, "include"))


def get_lib():
    """The directory of Kiln's Python extension (kiln/_C)."""
    return _os.path.dirname(_os.path.abspath(_C.__file__))


def get_compile_flags():
    return [f"-I{get_include()}", f"-D_GLIBCXX_USE_CXX11_ABI={CXX11_ABI_FLAG}", "-std=c++20"]


def get_link_flags():
    return [f"-L{get_lib()}"]


def get_build_info():
    """TF's build-info keys, with Kiln's values: a CPU build (no CUDA, cuDNN or ROCm)."""
    return {"is_cuda_build": False, "is_rocm_build": False, "is_tensorrt_build": False}
