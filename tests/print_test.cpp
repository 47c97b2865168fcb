// Printing tensors: NumPy's look for operator<< (what Python's print(t) shows
// for a TF tensor), tf.print's look for kiln::print, and the PrintV2 op.
//
// The golden files tests/golden/print_*.txt were checked against NumPy 1.24
// (str() of the same arrays, wrapped as TensorFlow wraps them) and against
// TensorFlow's Tensor::SummarizeValue for the tf.print texts.
#include "test_util.h"

#include <cmath>
#include <limits>
#include <sstream>

#include <kiln/function.h>
#include <kiln/variable.h>

#include "core/tensor_impl.h"
#include "schema/op_def.h"
#include "runtime/dispatch.h"
#include "runtime/format.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_golden;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

template <class T> std::vector<T> iota(int n, T scale = T(1)) {
  std::vector<T> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<T>(i) * scale;
  return v;
}

std::string lines(std::initializer_list<Tensor> tensors) {
  std::string out;
  for (const Tensor& t : tensors) out += to_string(t) + "\n";
  return out;
}

// kiln::print into a string.
template <class... Args> std::string printed(const Args&... args) {
  std::ostringstream os;
  PrintOptions options{.stream = &os};
  kiln::print(args..., options);
  return os.str();
}

schema::TensorType type(DType d, Shape s) { return {d, s}; }

}  // namespace

// ---- operator<< / to_string: TensorFlow's repr with NumPy's text --------------

TEST(PrintRepr, ExamplesFromTensorFlow) {
  EXPECT_EQ(to_string(constant(4)), "kiln.Tensor(4, shape=(), dtype=int32)");
  EXPECT_EQ(to_string(constant(2.2f)), "kiln.Tensor(2.2, shape=(), dtype=float32)");
  EXPECT_EQ(to_string(constant(1.0f)), "kiln.Tensor(1.0, shape=(), dtype=float32)");
  EXPECT_EQ(to_string(constant("aa")), "kiln.Tensor(b'aa', shape=(), dtype=string)");
  EXPECT_EQ(to_string(constant({4, 1})), "kiln.Tensor([4 1], shape=(2,), dtype=int32)");
  EXPECT_EQ(to_string(constant({{22.f, 22.f}, {23.f, 13.f}})),
            "kiln.Tensor(\n[[22. 22.]\n [23. 13.]], shape=(2, 2), dtype=float32)");
}

TEST(PrintRepr, StreamOperatorMatchesToString) {
  Tensor t = constant({{1.5, -2.0}, {0.25, 4.0}});
  std::ostringstream os;
  os << t;
  EXPECT_EQ(os.str(), to_string(t));
  EXPECT_EQ(os.str(), "kiln.Tensor(\n[[ 1.5  -2.  ]\n [ 0.25  4.  ]], shape=(2, 2), dtype=float64)");
}

TEST(PrintRepr, SymbolicAndNullTensors) {
  std::string traced;
  FunctionOptions o;
  o.input_signature = std::vector<TensorSpec>{TensorSpec({None, 2})};
  auto f = kiln::function([&](const Tensor& x) {
    Tensor y = x + x;
    traced = to_string(y);  // a C++ side effect: runs only while tracing
    return y;
  }, o);
  f(zeros({3, 2}));
  EXPECT_EQ(traced, "Tensor(\"add:0\", shape=(None, 2), dtype=float32)");
  EXPECT_EQ(to_string(Tensor()), "kiln.Tensor(null)");
}

TEST(PrintRepr, EmptyTensors) {
  EXPECT_EQ(to_string(zeros({0})), "kiln.Tensor([], shape=(0,), dtype=float32)");
  EXPECT_EQ(to_string(zeros({2, 0}, int32)), "kiln.Tensor([], shape=(2, 0), dtype=int32)");
}

TEST(PrintRepr, NumpyScalarText) {
  using runtime::numpy_scalar_str;
  EXPECT_EQ(numpy_scalar_str(1.1f), "1.1");
  EXPECT_EQ(numpy_scalar_str(1.1), "1.1");
  EXPECT_EQ(numpy_scalar_str(2.0), "2.0");
  EXPECT_EQ(numpy_scalar_str(1e-5f), "1e-05");
  EXPECT_EQ(numpy_scalar_str(1e-4), "0.0001");
  EXPECT_EQ(numpy_scalar_str(1e-4f), "1e-04");  // the float32 is just below 1e-4
  EXPECT_EQ(numpy_scalar_str(1e16), "1e+16");
  EXPECT_EQ(numpy_scalar_str(1e15), "1000000000000000.0");
  EXPECT_EQ(numpy_scalar_str(6131243519311872.0f), "6131243500000000.0");
  EXPECT_EQ(numpy_scalar_str(-0.0), "-0.0");
  EXPECT_EQ(numpy_scalar_str(1.5e300), "1.5e+300");
  EXPECT_EQ(numpy_scalar_str(std::nan("")), "nan");
  EXPECT_EQ(numpy_scalar_str(-kInf), "-inf");
}

TEST(PrintRepr, PythonBytesRepr) {
  using runtime::python_bytes_repr;
  EXPECT_EQ(python_bytes_repr("aa"), "b'aa'");
  EXPECT_EQ(python_bytes_repr(""), "b''");
  EXPECT_EQ(python_bytes_repr("it's"), "b\"it's\"");
  EXPECT_EQ(python_bytes_repr("it's \"x\""), "b'it\\'s \"x\"'");
  EXPECT_EQ(python_bytes_repr(std::string("a\\\n\t\r\0\x7f\xff", 8)), "b'a\\\\\\n\\t\\r\\x00\\x7f\\xff'");
}

TEST(PrintRepr, FloatPaddingAndPrecision) {
  EXPECT_EQ(runtime::numpy_str(constant({0.1f, 1.2345678f, 100.f})), "[  0.1         1.2345678 100.       ]");
  // Over 8 fractional digits: rounded to 8, trailing zeros dropped.
  EXPECT_EQ(runtime::numpy_str(constant({1.0 / 3, 0.5})), "[0.33333333 0.5       ]");
  // Large float32 integers print every digit down to the units.
  EXPECT_EQ(runtime::numpy_str(constant({58740792.f})), "[58740792.]");
  // Scientific: every mantissa gets the same number of digits.
  EXPECT_EQ(runtime::numpy_str(constant({1e-5, 1.5})), "[1.0e-05 1.5e+00]");
  EXPECT_EQ(runtime::numpy_str(constant({1.f, 1000.5f})), "[1.0000e+00 1.0005e+03]");
  EXPECT_EQ(runtime::numpy_str(constant({1e-300, 1e300})), "[1.e-300 1.e+300]");
  EXPECT_EQ(runtime::numpy_str(constant({kNaN, 1.5f, -kInf})), "[ nan  1.5 -inf]");
}

TEST(PrintRepr, GoldenScalars) {
  expect_golden("print_scalars.txt",
                lines({constant(4), constant(int64_t(-9000000000)), constant(uint8_t(255)),
                       constant(1.1f), constant(2.2f), constant(1.0f), constant(2.0), constant(0.1),
                       constant(1e-5f), constant(1e-4f), constant(1e-4), constant(1e16),
                       constant(123456789.0f), constant(-0.0), constant(kNaN), constant(-kInf, float64),
                       constant(true), constant(false), constant("aa"), constant("it's"),
                       constant(std::string("a\nb\x01"))}));
}

TEST(PrintRepr, GoldenInts) {
  expect_golden("print_ints.txt",
                lines({constant({4, 1}), constant({{1, 2}, {3, 4}}), constant({{-1, 20}, {300, -4000}}),
                       constant(iota<int32_t>(24), Shape{2, 3, 4}),
                       constant(std::vector<int64_t>{1, -9000000000}),
                       constant(std::vector<uint8_t>{0, 7, 255}),
                       constant(iota<int32_t>(16), Shape{2, 2, 2, 2}), constant({{{-5}}})}));
}

TEST(PrintRepr, GoldenFloats) {
  expect_golden(
      "print_floats.txt",
      lines({constant({{22.f, 22.f}, {23.f, 13.f}}), constant({1.5f, -2.25f, 3.f}),
             constant({0.1f, 1.2345678f, 100.f}), constant({1.0 / 3, 2.0 / 3, 1.0}),
             constant({-1.f, 0.5f, -0.25f}), constant(iota<float>(12, 0.5f), Shape{2, 2, 3}),
             constant({1e-5, 1.0}), constant({1e8f, 1.f}), constant({1.0, 1001.0}),
             constant({123456789.0f}), constant({0.00012345, 0.5}), constant({-0.0, 1.0}),
             constant({{3.14159265358979, -2.718281828459045}, {1e-3, 42.0}}),
             constant({0.1f, 0.2f, 0.3f}, float64)}));
}

TEST(PrintRepr, GoldenSpecialValuesBoolsStrings) {
  expect_golden(
      "print_special.txt",
      lines({constant({kNaN, 1.5f, -kInf}), constant(std::vector<double>{NAN, INFINITY}),
             constant({kNaN, 1e-7f}), constant({kNaN}), constant({true, false}),
             constant({{true, true}, {false, true}}), constant({true}), constant({"a", "bcd"}),
             constant({{"x", "it's"}, {"q\"", "\\"}}), zeros({0}), zeros({2, 0}, int32)}));
}

TEST(PrintRepr, GoldenSummarized) {
  std::vector<float> sevenths(2000);
  for (int i = 0; i < 2000; ++i) sevenths[i] = static_cast<float>(i) / 7.0f;
  expect_golden("print_summarized.txt",
                lines({constant(iota<int32_t>(2000)), constant(sevenths),
                       constant(iota<int32_t>(3000), Shape{10, 15, 20}),
                       constant(iota<double>(2000, 0.25), Shape{40, 50}),
                       constant(iota<int64_t>(1200), Shape{2, 3, 200}),
                       constant(iota<int32_t>(1600), Shape{2, 2, 2, 200}),
                       constant(iota<int32_t>(1001))}));
}

TEST(PrintRepr, GoldenLineWrapping) {
  std::vector<std::string> items;
  for (int i = 0; i < 30; ++i) items.push_back("item" + std::to_string(i));
  std::vector<bool> flags;
  for (int i = 0; i < 30; ++i) flags.push_back(i % 3 == 0);
  expect_golden("print_wrap.txt",
                lines({constant(iota<int32_t>(50)), constant(iota<float>(30, 1.5f)),
                       constant(iota<int32_t>(90, 1000), Shape{3, 30}), constant(items), constant(flags),
                       constant(iota<double>(24, 0.001), Shape{2, 12})}));
}

// ---- tf.print's text of a tensor ----------------------------------------------

TEST(PrintSummary, ValuesAsTfPrintShowsThem) {
  using runtime::summarize_value;
  EXPECT_EQ(summarize_value(constant({{22, 22}, {23, 13}}), 3), "[[22 22]\n [23 13]]");
  EXPECT_EQ(summarize_value(constant(1.1f), 3), "1.1");
  EXPECT_EQ(summarize_value(constant({0.7615941762924194f, 0.7615941762924194f}), 3),
            "[0.761594176 0.761594176]");
  EXPECT_EQ(summarize_value(range(10), 3), "[0 1 2 ... 7 8 9]");
  EXPECT_EQ(summarize_value(range(10), -1), "[0 1 2 3 4 5 6 7 8 9]");
  EXPECT_EQ(summarize_value(range(10), 1), "[0 ... 9]");
  EXPECT_EQ(summarize_value(range(6), 3), "[0 1 2 3 4 5]");
  EXPECT_EQ(summarize_value(constant({true, false}), 3), "[1 0]");
  EXPECT_EQ(summarize_value(constant({"a b", "it's\n"}), 3), "[\"a b\" \"it\\'s\\n\"]");
  EXPECT_EQ(summarize_value(constant("fizz"), 3), "\"fizz\"");
  // float64 takes %.15g when that reads back exactly, else %.17g.
  EXPECT_EQ(summarize_value(constant({0.1, 1.0 / 3, 1.2345678}), 3),
            "[0.1 0.33333333333333331 1.2345678]");
  EXPECT_EQ(summarize_value(constant({kNaN, -kInf, kInf, 0.f, -0.f}), -1), "[nan -inf inf 0 -0]");
  EXPECT_EQ(summarize_value(constant(std::vector<uint8_t>{0, 255}), 3), "[0 255]");
  EXPECT_EQ(summarize_value(constant(int64_t(-9000000000)), 3), "-9000000000");
  EXPECT_EQ(summarize_value(zeros({0}), 3), "[]");
}

TEST(PrintSummary, SummarizesEveryDimension) {
  // A dim longer than 2 * summarize shows its ends; the inner dim of 4 is
  // shown whole at summarize=2, as TensorFlow does.
  EXPECT_EQ(runtime::summarize_value(constant(iota<int32_t>(120), Shape{3, 4, 10}), 2),
            "[[[0 1 ... 8 9]\n  [10 11 ... 18 19]\n  [20 21 ... 28 29]\n  [30 31 ... 38 39]]\n\n"
            " [[40 41 ... 48 49]\n  [50 51 ... 58 59]\n  [60 61 ... 68 69]\n  [70 71 ... 78 79]]\n\n"
            " [[80 81 ... 88 89]\n  [90 91 ... 98 99]\n  [100 101 ... 108 109]\n  [110 111 ... 118 119]]]");
  EXPECT_EQ(runtime::summarize_value(constant(iota<int32_t>(150), Shape{5, 30}), 1),
            "[[0 ... 29]\n ...\n [120 ... 149]]");
  // TensorFlow caps the edge count at the number of elements.
  EXPECT_EQ(runtime::summarize_value(zeros({2, 0}), 3), "[\n ...]");
}

// ---- kiln::print ----------------------------------------------------------------

TEST(PrintFunction, JoinsArgumentsWithSpaceAndEndsWithNewline) {
  Tensor y = constant({{22.f, 22.f}, {23.f, 13.f}});
  EXPECT_EQ(printed("TF-PRINT: ", y), "TF-PRINT:  [[22 22]\n [23 13]]\n");
  EXPECT_EQ(printed("Executed with", constant(1)), "Executed with 1\n");
  EXPECT_EQ(printed(), "\n");
}

TEST(PrintFunction, CppValuesPrintAsPythonWouldShowThem) {
  EXPECT_EQ(printed(1, 2.5, true, int64_t(7), 1.1f, 0.1, 2.0, 'c', std::string("s")),
            "1 2.5 True 7 1.1 0.1 2.0 c s\n");
  EXPECT_EQ(printed("{} and {{", 3), "{} and {{ 3\n");
}

TEST(PrintFunction, StringTensors) {
  // A lone scalar string prints as it is; elsewhere strings are quoted.
  EXPECT_EQ(printed(constant("fizz")), "fizz\n");
  EXPECT_EQ(printed("fizz"), "fizz\n");
  EXPECT_EQ(printed("s:", constant("fizz")), "s: \"fizz\"\n");
  EXPECT_EQ(printed(constant({"a", "b"})), "[\"a\" \"b\"]\n");
}

TEST(PrintFunction, OptionsAnywhere) {
  std::ostringstream os;
  kiln::print(PrintOptions{.sep = ", ", .end = "!\n", .stream = &os}, "a", range(3), 4);
  EXPECT_EQ(os.str(), "a, [0 1 2], 4!\n");
  std::ostringstream os2;
  kiln::print(range(10), PrintOptions{.summarize = -1, .stream = &os2});
  kiln::print(range(10), PrintOptions{.summarize = 1, .stream = &os2});
  EXPECT_EQ(os2.str(), "[0 1 2 3 4 5 6 7 8 9]\n[0 ... 9]\n");
}

TEST(PrintFunction, ListsOfTensors) {
  EXPECT_EQ(printed(std::vector<Tensor>{constant({1, 2}), constant(3)}), "[[1 2], 3]\n");
}

TEST(PrintFunction, PrintsOnEveryCallOfAFunction) {
  std::ostringstream os;
  int traces = 0;
  auto f = kiln::function([&](const Tensor& x) {
    ++traces;
    kiln::print("Executed with", x, PrintOptions{.stream = &os});
    return x + 1;
  });
  f(constant({1, 2}));
  f(constant({3, 4}));
  EXPECT_EQ(traces, 1);
  EXPECT_EQ(os.str(), "Executed with [1 2]\nExecuted with [3 4]\n");
}

TEST(PrintFunction, VariablesPrintTheirCurrentValue) {
  std::ostringstream os;
  Variable v(constant(1.5f));
  auto f = kiln::function([&](const Tensor& x) {
    v.assign_add(x);
    kiln::print("Value of external_var:", v, PrintOptions{.stream = &os});
    return x;
  });
  f(constant(1.0f));
  f(constant(2.0f));
  kiln::print(v, PrintOptions{.stream = &os});
  EXPECT_EQ(os.str(), "Value of external_var: 2.5\nValue of external_var: 4.5\n4.5\n");
}

TEST(PrintFunction, DefaultsToStandardError) {
  ::testing::internal::CaptureStderr();
  kiln::print("loss:", constant(0.25f));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "loss: 0.25\n");
  ::testing::internal::CaptureStdout();
  kiln::print("out", PrintOptions{.stream = &std::cout});
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "out\n");
}

TEST(PrintFunction, GoldenMixedArguments) {
  std::string out;
  out += printed("TF-PRINT: ", constant({{22.f, 22.f}, {23.f, 13.f}}));
  out += printed(constant(1.1f));
  out += printed(constant({0.7615941762924194f, 0.7615941762924194f}));
  out += printed("range:", range(10), "end");
  out += printed("fizz");
  out += printed(constant("fizz"));
  out += printed("s:", constant({{"a", "b"}, {"c\td", "\xe2\x82\xac"}}));
  out += printed(1, 2.5, true, 1.1f, 0.1, int64_t(-3));
  out += printed(constant(iota<int32_t>(120), Shape{3, 4, 10}));
  out += printed(constant(iota<float>(2000, 0.5f)));
  out += printed(constant({true, false, true}));
  out += printed(constant({0.1, 1.0 / 3}), constant({kNaN, -kInf, kInf}));
  out += printed(constant(std::vector<uint8_t>{0, 255}), constant(std::vector<int64_t>{-9000000000}));
  out += printed(zeros({0}), zeros({2, 2}));
  expect_golden("print_tf_print.txt", out);
}

// ---- the PrintV2 op ---------------------------------------------------------------

namespace {

// Records ops instead of running them, as kiln::function's tracer does.
struct Recorder : detail::DispatchHandler {
  std::vector<std::string> ops;
  std::vector<int> num_inputs;
  std::vector<schema::Attrs> attrs;
  runtime::TensorList dispatch(const detail::OpDef& op, std::span<const Tensor> inputs,
                               schema::Attrs&& a, const SourceLocation&) override {
    ops.emplace_back(op.name);
    num_inputs.push_back(static_cast<int>(inputs.size()));
    attrs.push_back(a);
    return {};
  }
};

void infer_print(const schema::Attrs& attrs, std::vector<schema::TensorType> inputs) {
  const detail::OpDef& op = schema::OpRegistry::global().get("PrintV2");
  schema::InferContext c(op, std::span<const schema::TensorType>(inputs), attrs);
  op.infer(c);
  EXPECT_TRUE(c.outputs().empty());
}

schema::Attrs print_attrs(std::string tmpl, std::string stream = "stderr") {
  return schema::Attrs{{"template", std::move(tmpl)}, {"end", std::string("\n")},
                       {"summarize", int64_t(3)}, {"output_stream", std::move(stream)}};
}

}  // namespace

TEST(PrintOp, IsAStatefulOpWithoutOutputs) {
  const detail::OpDef& op = schema::OpRegistry::global().get("PrintV2");
  EXPECT_TRUE(op.is(schema::kStateful));
  ASSERT_NE(op.samples, nullptr);
  EXPECT_FALSE(op.samples().empty());
}

TEST(PrintOp, GoesThroughDispatchWithTensorsAsInputs) {
  Recorder recorder;
  std::ostringstream os;
  {
    runtime::DispatchHandlerGuard guard(&recorder);
    kiln::print("x: {", core::make_symbolic(DType::Float32, Shape{None}, nullptr, 0, nullptr), 2,
                PrintOptions{.sep = "|", .end = ";", .summarize = 5, .stream = &os});
  }
  ASSERT_EQ(recorder.ops.size(), 1u);
  EXPECT_EQ(recorder.ops[0], "PrintV2");
  EXPECT_EQ(recorder.num_inputs[0], 1);
  const schema::Attrs& a = recorder.attrs[0];
  EXPECT_EQ(a.get_string("template"), "x: {{|{}|2");
  EXPECT_EQ(a.get_string("end"), ";");
  EXPECT_EQ(a.get_int("summarize"), 5);
  EXPECT_EQ(a.get_string("output_stream"), "stream");
  EXPECT_TRUE(os.str().empty());  // nothing runs while recording
}

TEST(PrintOp, InferAcceptsUnknownShapes) {
  infer_print(print_attrs("{} and {}"), {type(DType::Float32, Shape{None, 2}),
                                         type(DType::String, Shape::unknown_rank())});
  infer_print(print_attrs("{{literal}}"), {});
  infer_print(print_attrs("{}", "stdout"), {type(DType::Bool, Shape{})});
}

TEST(PrintOp, InferErrors) {
  expect_error<InvalidArgument>([] { infer_print(print_attrs("{} {}"), {type(DType::Int32, Shape{2})}); },
                                {"PrintV2", "2 placeholders", "1 tensors"});
  expect_error<InvalidArgument>([] { infer_print(print_attrs("a { b"), {}); },
                                {"PrintV2", "unmatched brace", "a { b"});
  expect_error<InvalidArgument>([] { infer_print(print_attrs("x", "log(info)"), {}); },
                                {"PrintV2", "output_stream", "log(info)"});
  schema::Attrs bad_id = print_attrs("x", "stream");
  bad_id.set("stream_id", int64_t(1) << 40);
  expect_error<InvalidArgument>([&] { infer_print(bad_id, {}); },
                                {"PrintV2", "stream id", "not registered"});
}

TEST(PrintOp, KernelRunsEagerlyThroughTheRegistry) {
  std::ostringstream os;
  kiln::print("warm", PrintOptions{.stream = &os});  // registers the stream
  const detail::OpDef& op = schema::OpRegistry::global().get("PrintV2");
  schema::Attrs a = print_attrs("v={} w={}", "stream");
  // Same stream: the id it was registered under.
  Recorder recorder;
  {
    runtime::DispatchHandlerGuard guard(&recorder);
    kiln::print("warm", PrintOptions{.stream = &os});
  }
  a.set("stream_id", recorder.attrs[0].get_int("stream_id"));
  const Tensor in[] = {constant({1, 2}), constant(0.5)};
  runtime::TensorList out = runtime::run_eager(op, in, a);
  EXPECT_EQ(out.size(), 0u);
  EXPECT_EQ(os.str(), "warm\nv=[1 2] w=0.5\n");
}
