"""kiln.version (tf.version): the TensorFlow release whose Python API Kiln follows."""
VERSION = "2.15.0"
GIT_VERSION = "v2.15.0-kiln"
COMPILER_VERSION = "kiln"
GRAPH_DEF_VERSION = 1286
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0
from ._version import __version__ as KILN_VERSION  # Kiln's own release (one source: CMakeLists.txt)  # noqa: E402
