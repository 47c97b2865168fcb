"""TensorFlow 2.15's public tf.* names, module by module (python/tests/data/tf_2_15_api.json, from TF's API golden
files: its "provenance" says which, and scripts/tf_api_catalogue.py remakes it), against kiln: each name is there
or listed in LEFT_OUT with the reason, and a left-out name must really be absent, so neither list drifts silently.
tf.keras has its own catalogue (python/tests/keras/test_catalogue*.py); tf.compat.v1 (a thin subset in Kiln) and
tf.raw_ops are not listed name by name."""
import functools
import json
import os
import sys

import pytest

import kiln as tf

_HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_HERE, "data", "tf_2_15_api.json"), encoding="utf-8") as _f:
    TF_2_15 = json.load(_f)["modules"]

ENGINE_OP = ("an op Kiln's engine lacks (a C++ OpDef with kernel and gradient), with no composition of Kiln's ops "
             "that keeps TF's accuracy")
SPECIAL = "a special function Kiln's engine lacks (needs a C++ OpDef: series or continued fractions, and gradient)"
QUANTIZED = ("a quantized dtype: the engine has no quantized element type, so a DType Kiln could not make tensors of "
             "would fail where TF works")
LINEAR_OPERATOR = "tf.linalg.LinearOperator and its family are not written (dense linalg functions are)"
GRAPH_V1 = "TF 1's graph building (GraphDef, Session-era API): Kiln traces tf.function into its own graphs"
DATA_MORE = "tf.data.experimental transformation not written (Dataset's own methods cover most)"
BOXES = "box op not written (non-max suppression, crop_and_resize and draw_bounding_boxes are)"
CODEC = "image codec not in Kiln (PNG and JPEG are)"
PROTO = "TF protocol-buffer codec op (descriptor pools) not written"
EXTENSION = "extension types (tf.experimental.ExtensionType and its batch/dispatch API) are not in Kiln"
DISPATCH = "TF's API dispatch registry (for extension types) is not in Kiln: ragged/sparse dispatch is built in"
CLUSTER = "multi-worker clusters (gRPC servers, ClusterSpec): Kiln's distribution is kiln.distributed over MPI"
FLOAT8 = "8-bit float (and 4-bit integer) dtypes: the engine has no such element type"
PYTHON_ARGUMENT = ("Kiln's tf.function takes IndexedSlices, Optional and TensorArray arguments as Python values "
                   "(a trace per value, their tensors captured), not as composites of a TypeSpec: no spec to give "
                   "input_signature")
SAVED_FILES = ("TF's SavedModel file layout (saved_model.pb, variables/, assets/): Kiln's is saved_model.json and "
               "variables.safetensors, so TF's file names would point at files Kiln does not write")

LEFT_OUT = {
    "tf": {
        "RegisterGradient": "a Kiln op's gradient lives in its C++ OpDef; TF 2 registers gradients only for op types "
                            "without one (custom kernels, which Kiln cannot load)",
        "no_gradient": "marks op types as not differentiable in TF's Python registry; Kiln's op definitions say so",
        "graph_util": "import_graph_def and friends read GraphDef protobufs, which Kiln's graphs are not",
        "estimator": "tf.estimator (TF 1's Estimator API, removed in TF 2.16) is not in Kiln",
        "lite": "TFLite's converter and interpreter (a FlatBuffer model format and runtime) are not in Kiln; "
                "Kiln exports ONNX (kiln.onnx)",
        "mlir": "MLIR conversion of TF graphs: Kiln's graphs are its own IR, not TF's MLIR dialects",
        "tpu": "TPU devices and their embedding API: Kiln runs on the CPU",
        "xla": "XLA compilation (jit_compile): Kiln compiles traces with its own passes and fused kernels",
        "quantization": "fake-quantization ops (quantization-aware training) are not in Kiln's engine",
        "qint8": QUANTIZED, "qint16": QUANTIZED, "qint32": QUANTIZED, "quint8": QUANTIZED, "quint16": QUANTIZED,
        "variant": "the variant dtype (TF's opaque DT_VARIANT tensors: lists, datasets, optionals): Kiln keeps "
                   "those as Python or engine objects, not tensors",
        "IndexedSlicesSpec": PYTHON_ARGUMENT, "OptionalSpec": PYTHON_ARGUMENT, "TensorArraySpec": PYTHON_ARGUMENT,
        "matrix_square_root": "tf.linalg.sqrtm (a Schur-method op) is not written",
        "conv": "TF's generic N-D convolution entry (batch_dims, groups) is not written; tf.nn's convolutions are",
        "extract_volume_patches": "3-D patch extraction is not written (tf.image.extract_patches is)",
        "fingerprint": "TF's Fingerprint op (FarmHash of each row's bytes) is not written",
        "import_graph_def": GRAPH_V1,
        "load_library": "TF custom-op shared libraries cannot load into Kiln's engine",
        "load_op_library": "TF custom-op shared libraries cannot load into Kiln's engine",
        "nondifferentiable_batch_function": "server-side request batching of a function is not in Kiln "
                                            "(kiln-serve batches requests itself)",
        "random_index_shuffle": "TF's random index permutation op is not written",
        "register_tensor_conversion_function": "tf.convert_to_tensor has no user conversion registry in Kiln",
        "variable_creator_scope": "variable creator hooks are not in Kiln",
    },
    "config": {
        "experimental_connect_to_cluster": CLUSTER, "experimental_connect_to_host": CLUSTER,
    },
    "data": {
        "IteratorSpec": "a dataset iterator passes into tf.function as an argument, but input_signature takes no "
                        "spec of one in Kiln (not written)",
        "NumpyIterator": "Dataset.as_numpy_iterator's class is not exported under this name",
    },
    "data.experimental": {
        **{name: DATA_MORE for name in (
            "Reducer", "group_by_reducer", "pad_to_cardinality", "enable_debug_mode", "make_batched_features_dataset",
            "AutotuneAlgorithm", "DatasetInitializer", "index_table_from_dataset",
            "table_from_dataset")},
        "service": "the tf.data service (dispatcher and worker servers) is not in Kiln",
        "ServiceOptions": "the tf.data service is not in Kiln",
        "distributed_save": "the tf.data service is not in Kiln",
        "SHARD_HINT": "distributed auto-sharding hints: Kiln shards nothing automatically",
        "copy_to_device": "Kiln has one device: no device-to-device dataset copies",
        "prefetch_to_device": "Kiln has one device: no device-to-device dataset copies",
        "from_variant": "datasets are not variant tensors in Kiln",
        "to_variant": "datasets are not variant tensors in Kiln",
        "make_saveable_from_iterator": "TF 1 saveables; tf.train.Checkpoint saves iterators in Kiln",
    },
    "debugging": {
        "experimental": "tf.debugging.experimental (the debugger v2 dumps) is not in Kiln",
        "enable_traceback_filtering": "Kiln does not filter its frames out of tracebacks",
        "disable_traceback_filtering": "Kiln does not filter its frames out of tracebacks",
        "is_traceback_filtering_enabled": "Kiln does not filter its frames out of tracebacks",
        "get_log_device_placement": "Kiln has one device and does not log op placement",
        "set_log_device_placement": "Kiln has one device and does not log op placement",
    },
    "dtypes": {
        "qint8": QUANTIZED, "qint16": QUANTIZED, "qint32": QUANTIZED, "quint8": QUANTIZED, "quint16": QUANTIZED,
        "QUANTIZED_DTYPES": QUANTIZED,
        "variant": "the variant dtype is not in Kiln (see tf.variant)",
        "experimental": FLOAT8,
    },
    "experimental": {
        **{name: EXTENSION for name in ("BatchableExtensionType", "ExtensionType", "ExtensionTypeBatchEncoder",
                                        "ExtensionTypeSpec", "StructuredTensor", "extension_type")},
        **{name: DISPATCH for name in ("dispatch_for_api", "dispatch_for_binary_elementwise_apis",
                                       "dispatch_for_binary_elementwise_assert_apis",
                                       "dispatch_for_unary_elementwise_apis", "unregister_dispatch_for")},
        **{name: FLOAT8 for name in ("float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
                                     "float8_e5m2fnuz", "int4", "uint4")},
        "dtensor": "DTensor (meshes and layouts over many devices) is not in Kiln",
        "enable_strict_mode": "TF's strict mode for deprecated APIs is not in Kiln",
        "register_filesystem_plugin": "file systems are local only in Kiln (no plugin loading)",
        "tensorrt": "TensorRT (NVIDIA GPUs) is not in Kiln",
    },
    "image": {
        **{name: BOXES for name in ("extract_glimpse", "generate_bounding_box_proposals",
                                    "sample_distorted_bounding_box", "stateless_sample_distorted_bounding_box")},
        "decode_bmp": CODEC, "decode_gif": CODEC,
    },
    "io": {
        "SparseFeature": "parse_example's SparseFeature is not written (VarLen, FixedLen and Ragged are)",
        "decode_bmp": CODEC, "decode_gif": CODEC,
        "decode_proto": PROTO, "encode_proto": PROTO,
        "parse_sequence_example": "SequenceExample parsing is not written (Example parsing is)",
        "parse_single_sequence_example": "SequenceExample parsing is not written (Example parsing is)",
        "write_graph": GRAPH_V1,
    },
    "linalg": {
        **{name: LINEAR_OPERATOR for name in TF_2_15["linalg"] if name.startswith("LinearOperator")},
        "experimental": "tf.linalg.experimental (conjugate_gradient) is not written",
        "logm": "matrix logarithm (complex Schur) is not written",
        "sqrtm": "matrix square root (Schur method) is not written",
    },
    "math": {
        "erfc": ENGINE_OP,
        **{name: SPECIAL for name in ("bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "betainc", "erfcinv",
                                      "erfinv", "igamma", "igammac", "ndtri", "polygamma", "zeta")},
        "special": SPECIAL + " (tf.math.special: Bessel, Dawson, Fresnel, spence)",
        "sobol_sample": "Sobol sequences are not written",
    },
    "mixed_precision": {"experimental": "TF 1's mixed-precision graph rewrite and LossScale classes; TF 2 code uses "
                                        "tf.keras.mixed_precision, which Kiln has"},
    "ragged": {
        "cross": "feature crosses of ragged inputs are not written",
        "cross_hashed": "feature crosses of ragged inputs are not written",
    },
    "saved_model": {
        **{name: SAVED_FILES for name in (
            "ASSETS_DIRECTORY", "ASSETS_KEY", "DEBUG_DIRECTORY", "DEBUG_INFO_FILENAME_PB", "SAVED_MODEL_FILENAME_PB",
            "SAVED_MODEL_FILENAME_PBTXT", "SAVED_MODEL_SCHEMA_VERSION", "VARIABLES_DIRECTORY", "VARIABLES_FILENAME")},
        "Asset": "SavedModel assets (files copied with the model) are not in Kiln's format",
        "experimental": "tf.saved_model.experimental (fingerprints, TrackableResource, VariablePolicy) is not written",
    },
    "sparse": {
        "cross": "feature crosses are not written",
        "cross_hashed": "feature crosses are not written",
        "sampled_addmm": "sampled dense-dense matrix products (CSR-style) are not written",
    },
    "strings": {
        "format": "not written (tf.strings.join and as_string cover simple cases)",
    },
    "summary": {
        "audio": "audio summaries are not written (scalars, images, histograms and text are)",
        "graph": "graph summaries need TF's GraphDef, which Kiln does not write",
        "trace_on": "the trace summaries record TF's GraphDef and profiler: Kiln's profiler is kiln.profiler",
        "trace_off": "the trace summaries record TF's GraphDef and profiler: Kiln's profiler is kiln.profiler",
        "trace_export": "the trace summaries record TF's GraphDef and profiler: Kiln's profiler is kiln.profiler",
    },
    "test": {
        "Benchmark": "TF's benchmark runner is not in Kiln",
        "benchmark_config": "TF's benchmark runner is not in Kiln",
        "assert_equal_graph_def": GRAPH_V1,
        "create_local_cluster": CLUSTER,
        "experimental": "tf.test.experimental (sync_devices) is not in Kiln",
    },
    "train": {
        "CheckpointView": "not written (tf.train.list_variables reads a checkpoint's contents)",
        "TrackableView": "not written",
        "ClusterDef": CLUSTER, "ClusterSpec": CLUSTER, "JobDef": CLUSTER, "ServerDef": CLUSTER,
        "Coordinator": "TF 1 thread coordination for queue runners (tf.queue is being written)",
        "experimental": "tf.train.experimental (PythonState, sharding policies) is not written",
    },
    "types.experimental": {
        "AtomicFunction": "TF's internal function layers are not Kiln's (PolymorphicFunction and "
                          "ConcreteFunction are)",
        "FunctionType": "TF's function type system is not Kiln's: trace keys are (docs/architecture.md)",
        "TraceType": "TF's function type system is not Kiln's: trace keys are (docs/architecture.md)",
        "SupportsTracingProtocol": "TF's function type system is not Kiln's: trace keys are (docs/architecture.md)",
        "distributed": "tf.types.experimental.distributed (Mirrored, PerReplica) is not in Kiln",
    },
}


def _module(path):
    return tf if path == "tf" else functools.reduce(getattr, path.split("."), tf)


@pytest.mark.parametrize("path", sorted(TF_2_15))
def test_every_public_name_exists_or_is_left_out_with_a_reason(path):
    module = _module(path)
    left_out = LEFT_OUT.get(path, {})
    where = "tf" if path == "tf" else f"tf.{path}"
    missing = [n for n in TF_2_15[path] if not hasattr(module, n) and n not in left_out]
    assert missing == [], f"{where} lacks {missing}"
    now_there = [n for n in left_out if hasattr(module, n)]
    assert now_there == [], f"{where} has {now_there} now: take them out of LEFT_OUT"
    assert set(left_out) <= set(TF_2_15[path]), f"LEFT_OUT[{path!r}] names what TF 2.15 lacks"
    assert all(isinstance(r, str) and len(r) > 10 for r in left_out.values())


def test_left_out_lists_only_catalogued_modules():
    assert set(LEFT_OUT) <= set(TF_2_15)


def test_the_catalogue_is_big_enough_to_mean_something():
    assert len(TF_2_15["tf"]) > 280 and len(TF_2_15["math"]) > 120 and len(TF_2_15["nn"]) > 80
    for name in ("keras", "raw_ops", "estimator"):
        assert name in TF_2_15["tf"]


def test_the_generator_reads_golden_files(tmp_path):
    sys.path.insert(0, os.path.join(_HERE, os.pardir, os.pardir, "scripts"))
    try:
        import tf_api_catalogue as catalogue
    finally:
        sys.path.pop(0)
    (tmp_path / "tensorflow.sets.pbtxt").write_text(
        'path: "tensorflow.sets"\ntf_module {\n  member_method {\n    name: "union"\n    argspec: "args=[]"\n  }\n'
        '  member_method {\n    name: "difference"\n    argspec: "args=[]"\n  }\n}\n')
    (tmp_path / "tensorflow.-d-type.pbtxt").write_text('path: "tensorflow.DType"\ntf_class {\n  member {\n'
                                                       '    name: "name"\n  }\n}\n')
    (tmp_path / "tensorflow.test.pbtxt").write_text(
        'path: "tensorflow.test"\ntf_module {\n  member_method {\n    name: "is_cpu_target_available"\n  }\n'
        '  member_method {\n    name: "main"\n  }\n}\n')
    modules = catalogue.adjust(catalogue.read_goldens(str(tmp_path)), newer=True)
    assert modules["sets"] == ["difference", "union"]
    assert modules["test"] == ["main"]  # added after 2.15: dropped
    assert "DType" not in modules and modules["compat"] == ["v1", "v2"]
