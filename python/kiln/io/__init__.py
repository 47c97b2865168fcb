"""kiln.io (tf.io): TFRecord files and tf.train.Example parsing. The messages are TF's
protos built with python3-protobuf (_messages.py), the framing TF's (_tfrecord.py)."""
from ._tfrecord import TFRecordWriter, TFRecordOptions, TFRecordCompressionType, tf_record_iterator  # noqa: F401
from ._parsing import (FixedLenFeature, FixedLenSequenceFeature, RaggedFeature, VarLenFeature,  # noqa: F401
                       parse_example, parse_single_example)
from ._files import read_file, write_file, gfile, match_filenames_once, matching_files  # noqa: F401
from ._codecs import decode_csv, decode_raw, parse_tensor, serialize_tensor  # noqa: F401
from ._bytes_codecs import decode_base64, decode_compressed, encode_base64  # noqa: F401
from ..image import decode_image, decode_jpeg, decode_png, encode_jpeg, encode_png, is_jpeg  # noqa: F401,E402
from ..image import decode_and_crop_jpeg, extract_jpeg_shape  # noqa: F401,E402
from ._sparse_wire import deserialize_many_sparse, serialize_many_sparse, serialize_sparse  # noqa: F401,E402
from ._json_example import decode_json_example  # noqa: F401,E402
