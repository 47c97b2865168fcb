// The dtypes beyond the core ones in ONNX tensors: each round-trips through raw_data
// (what Kiln writes), and reads from the typed fields other writers use (float16/bfloat16
// bits and the narrow integers in int32_data, uint32/uint64 in uint64_data, complex as
// (re, im) pairs in float_data/double_data).
#include "test_util.h"

#include <complex>

#include "core/tensor_impl.h"
#include "kiln/complex_math.h"
#include "onnx/onnx_proto.h"

using namespace kiln;
using namespace kiln::testing;
namespace pb = kiln::onnx::pb;

namespace {

TEST(OnnxDtypes, EveryNewDtypeRoundTripsThroughRawData) {
  Tensor values = constant({1.5, -2.0, 3.0, 0.25});
  for (DType d : {DType::Float16, DType::BFloat16, DType::Int8, DType::Int16, DType::UInt16, DType::UInt32,
                  DType::UInt64, DType::Complex64, DType::Complex128}) {
    Tensor x = cast(is_integer(d) ? abs(values) : values, d);
    pb::TensorProto proto;
    kiln::onnx::to_tensor_proto(x, "x", proto);
    Tensor back = kiln::onnx::from_tensor_proto(proto, "x");
    EXPECT_EQ(back.dtype(), d) << dtype_name(d);
    EXPECT_TRUE(core::same_bits(back, x)) << dtype_name(d);
  }
}

TEST(OnnxDtypes, TypedFieldsAreRead) {
  pb::TensorProto p;
  p.add_dims(2);
  p.set_data_type(pb::TensorProto::FLOAT16);
  p.add_int32_data(0x3C00);  // 1.0
  p.add_int32_data(0xC000);  // -2.0
  EXPECT_EQ(cast(kiln::onnx::from_tensor_proto(p, "h"), DType::Float32).to_vector<float>(), (std::vector<float>{1.f, -2.f}));
  p.set_data_type(pb::TensorProto::BFLOAT16);
  p.set_int32_data(0, 0x3FC0);  // 1.5
  p.set_int32_data(1, 0xC080);  // -4.0
  EXPECT_EQ(cast(kiln::onnx::from_tensor_proto(p, "b"), DType::Float32).to_vector<float>(), (std::vector<float>{1.5f, -4.f}));
  p.set_data_type(pb::TensorProto::INT8);
  p.set_int32_data(0, -7);
  p.set_int32_data(1, 100);
  EXPECT_EQ(cast(kiln::onnx::from_tensor_proto(p, "i8"), DType::Int32).to_vector<int32_t>(), (std::vector<int32_t>{-7, 100}));
  p.clear_int32_data();
  p.set_data_type(pb::TensorProto::UINT64);
  p.add_uint64_data(uint64_t{1} << 63);
  p.add_uint64_data(5);
  EXPECT_EQ(kiln::onnx::from_tensor_proto(p, "u64").to_vector<uint64_t>(), (std::vector<uint64_t>{uint64_t{1} << 63, 5}));
  p.clear_uint64_data();
  p.set_data_type(pb::TensorProto::COMPLEX64);
  for (float v : {1.f, 2.f, -3.f, 0.5f}) p.add_float_data(v);
  Tensor z = kiln::onnx::from_tensor_proto(p, "c");
  EXPECT_EQ(z.to_vector<std::complex<float>>(),
            (std::vector<std::complex<float>>{{1.f, 2.f}, {-3.f, 0.5f}}));
  p.clear_float_data();
  p.add_float_data(1.f);  // half a complex number too few
  expect_error<InvalidArgument>([&] { kiln::onnx::from_tensor_proto(p, "c"); }, {"holds 1 values but its dims make 4"});
}

}  // namespace
