"""The TF messages Kiln reads and writes, with TF's package ("tensorflow"), names and
field numbers: example.proto and feature.proto (tf.train.Example), event.proto and
summary.proto (TensorBoard event files), tensor.proto, tensor_shape.proto,
versions.proto, tensor_bundle.proto and trackable_object_graph.proto (checkpoints).
Fields Kiln never sets are left out (protobuf skips unknown fields when parsing)."""
from ._proto import build as _build

_DATA_TYPES = [("DT_INVALID", 0), ("DT_FLOAT", 1), ("DT_DOUBLE", 2), ("DT_INT32", 3), ("DT_UINT8", 4),
               ("DT_INT16", 5), ("DT_INT8", 6), ("DT_STRING", 7), ("DT_COMPLEX64", 8), ("DT_INT64", 9),
               ("DT_BOOL", 10), ("DT_QINT8", 11), ("DT_QUINT8", 12), ("DT_QINT32", 13), ("DT_BFLOAT16", 14),
               ("DT_QINT16", 15), ("DT_QUINT16", 16), ("DT_UINT16", 17), ("DT_COMPLEX128", 18), ("DT_HALF", 19),
               ("DT_RESOURCE", 20), ("DT_VARIANT", 21), ("DT_UINT32", 22), ("DT_UINT64", 23)]

# google/protobuf/wrappers.proto's BoolValue (has_checkpoint_values), in Kiln's own pool.
_build("google/protobuf/wrappers.proto", "google.protobuf", messages={"BoolValue": [("value", 1, "bool")]})

_M = _build("kiln/tensorflow_messages.proto", "tensorflow", dependencies=["google/protobuf/wrappers.proto"], enums={
    "DataType": _DATA_TYPES,
    "DataClass": [("DATA_CLASS_UNKNOWN", 0), ("DATA_CLASS_SCALAR", 1), ("DATA_CLASS_TENSOR", 2),
                  ("DATA_CLASS_BLOB_SEQUENCE", 3)],
}, messages={
    # feature.proto, example.proto
    "BytesList": [("value", 1, "bytes", "repeated")],
    "FloatList": [("value", 1, "float", "repeated")],
    "Int64List": [("value", 1, "int64", "repeated")],
    "Feature": [("bytes_list", 1, "BytesList", "oneof:kind"), ("float_list", 2, "FloatList", "oneof:kind"),
                ("int64_list", 3, "Int64List", "oneof:kind")],
    "Features": [("feature", 1, "map<string,Feature>")],
    "FeatureList": [("feature", 1, "Feature", "repeated")],
    "FeatureLists": [("feature_list", 1, "map<string,FeatureList>")],
    "Example": [("features", 1, "Features")],
    "SequenceExample": [("context", 1, "Features"), ("feature_lists", 2, "FeatureLists")],
    # tensor_shape.proto, tensor.proto, versions.proto
    "TensorShapeProto": [("dim", 2, "TensorShapeProto.Dim", "repeated"), ("unknown_rank", 3, "bool")],
    "TensorShapeProto.Dim": [("size", 1, "int64"), ("name", 2, "string")],
    "TensorProto": [("dtype", 1, "enum:DataType"), ("tensor_shape", 2, "TensorShapeProto"),
                    ("version_number", 3, "int32"), ("tensor_content", 4, "bytes"),
                    ("float_val", 5, "float", "repeated"), ("double_val", 6, "double", "repeated"),
                    ("int_val", 7, "int32", "repeated"), ("string_val", 8, "bytes", "repeated"),
                    ("int64_val", 10, "int64", "repeated"), ("bool_val", 11, "bool", "repeated"),
                    ("half_val", 13, "int32", "repeated")],
    "VersionDef": [("producer", 1, "int32"), ("min_consumer", 2, "int32"), ("bad_consumers", 3, "int32", "repeated")],
    # summary.proto, event.proto
    "HistogramProto": [("min", 1, "double"), ("max", 2, "double"), ("num", 3, "double"), ("sum", 4, "double"),
                       ("sum_squares", 5, "double"), ("bucket_limit", 6, "double", "repeated"),
                       ("bucket", 7, "double", "repeated")],
    "SummaryMetadata": [("plugin_data", 1, "SummaryMetadata.PluginData"), ("display_name", 2, "string"),
                        ("summary_description", 3, "string"), ("data_class", 4, "enum:DataClass")],
    "SummaryMetadata.PluginData": [("plugin_name", 1, "string"), ("content", 2, "bytes")],
    "Summary": [("value", 1, "Summary.Value", "repeated")],
    "Summary.Value": [("tag", 1, "string"), ("node_name", 7, "string"), ("metadata", 9, "SummaryMetadata"),
                      ("simple_value", 2, "float", "oneof:value"),
                      ("obsolete_old_style_histogram", 3, "bytes", "oneof:value"),
                      ("image", 4, "Summary.Image", "oneof:value"),
                      ("histo", 5, "HistogramProto", "oneof:value"), ("tensor", 8, "TensorProto", "oneof:value")],
    "Summary.Image": [("height", 1, "int32"), ("width", 2, "int32"), ("colorspace", 3, "int32"),
                      ("encoded_image_string", 4, "bytes")],
    "SourceMetadata": [("writer", 1, "string")],
    "Event": [("wall_time", 1, "double"), ("step", 2, "int64"), ("source_metadata", 10, "SourceMetadata"),
              ("file_version", 3, "string", "oneof:what"), ("graph_def", 4, "bytes", "oneof:what"),
              ("summary", 5, "Summary", "oneof:what"), ("meta_graph_def", 9, "bytes", "oneof:what")],
    # tensor_bundle.proto (endianness: 0 little, 1 big), trackable_object_graph.proto
    "BundleHeaderProto": [("num_shards", 1, "int32"), ("endianness", 2, "int32"), ("version", 3, "VersionDef")],
    "BundleEntryProto": [("dtype", 1, "enum:DataType"), ("shape", 2, "TensorShapeProto"), ("shard_id", 3, "int32"),
                         ("offset", 4, "int64"), ("size", 5, "int64"), ("crc32c", 6, "fixed32")],
    "TrackableObjectGraph": [("nodes", 1, "TrackableObjectGraph.TrackableObject", "repeated")],
    "TrackableObjectGraph.TrackableObject": [
        ("children", 1, "TrackableObjectGraph.TrackableObject.ObjectReference", "repeated"),
        ("attributes", 2, "TrackableObjectGraph.TrackableObject.SerializedTensor", "repeated"),
        ("slot_variables", 3, "TrackableObjectGraph.TrackableObject.SlotVariableReference", "repeated"),
        ("has_checkpoint_values", 5, ".google.protobuf.BoolValue")],
    "TrackableObjectGraph.TrackableObject.ObjectReference": [("node_id", 1, "int32"), ("local_name", 2, "string")],
    "TrackableObjectGraph.TrackableObject.SerializedTensor": [("name", 1, "string"), ("full_name", 2, "string"),
                                                              ("checkpoint_key", 3, "string")],
    "TrackableObjectGraph.TrackableObject.SlotVariableReference": [
        ("original_variable_node_id", 1, "int32"), ("slot_name", 2, "string"), ("slot_variable_node_id", 3, "int32")],
})

BytesList, FloatList, Int64List = _M["BytesList"], _M["FloatList"], _M["Int64List"]
Feature, Features, FeatureList, FeatureLists = _M["Feature"], _M["Features"], _M["FeatureList"], _M["FeatureLists"]
Example, SequenceExample = _M["Example"], _M["SequenceExample"]
TensorShapeProto, TensorProto, VersionDef = _M["TensorShapeProto"], _M["TensorProto"], _M["VersionDef"]
HistogramProto, SummaryMetadata, Summary, Event = (_M["HistogramProto"], _M["SummaryMetadata"], _M["Summary"],
                                                   _M["Event"])
BundleHeaderProto, BundleEntryProto = _M["BundleHeaderProto"], _M["BundleEntryProto"]
TrackableObjectGraph = _M["TrackableObjectGraph"]

# TF's DataType numbers of Kiln's dtypes.
DATA_TYPE_OF = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6, "string": 7,
                "complex64": 8, "int64": 9, "bool": 10, "bfloat16": 14, "uint16": 17, "complex128": 18,
                "float16": 19, "uint32": 22, "uint64": 23}
DTYPE_NAME_OF = {v: k for k, v in DATA_TYPE_OF.items()}
