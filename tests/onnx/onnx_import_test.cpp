// kiln::onnx::import_model: Kiln -> ONNX -> Kiln round trips (bitwise), hostile
// models (errors, never crashes), and ONNX's own backend node tests
// (Debian's libonnx-testdata) as the judge of the op mappings.
#include <sys/stat.h>

#include <map>
#include <set>

#include <fmt/format.h>

#include "bench/mnist_cnn.h"
#include "core/tensor_impl.h"
#include "kiln/onnx.h"
#include "onnx/exporter.h"
#include "onnx_samples.h"
#include "onnx_test_util.h"

using namespace kiln;
using namespace kiln::testing;
namespace fs = std::filesystem;

namespace {

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(OnnxImport, RoundTripIsBitwise) {
  Variable w(constant({0.5f, -1.f, 2.f, 3.f}), {.name = "w"});
  auto f = kiln::function([&](const Tensor& x) { return nn::softmax(relu(x * w.read_value() + 1.5f)); },
                          {.input_signature = std::vector<TensorSpec>{TensorSpec({None, 4})}});
  Tensor x = random::uniform({5, 4}, -2.f, 2.f, DType::Float32, 3);
  auto imported = kiln::onnx::import_model_from_string(kiln::onnx::export_to_string(only_trace(f), {.input_names = {"x"}}));
  ASSERT_EQ(imported.inputs().size(), 1u);
  EXPECT_EQ(imported.inputs()[0].name, "x");
  EXPECT_EQ(imported.inputs()[0].shape, Shape({None, 4}));  // the symbolic dim comes back unknown
  Tensor got = imported({{"x", x}}).at("output_0");
  EXPECT_TRUE(core::same_bits(got, f(x)));
}

TEST(OnnxImport, MnistCnnRoundTripIsBitwise) {
  nn::Sequential net("cnn");
  bench::add_mnist_cnn(net);
  auto serve = kiln::function([&](const Tensor& x) { return net(x); },
                              {.input_signature = std::vector<TensorSpec>{TensorSpec({None, 28, 28, 1})}});
  Tensor images = random::uniform({4, 28, 28, 1}, 0.f, 1.f, DType::Float32, 5);
  Tensor want = serve(images);
  std::string path = temp_path("mnist.onnx");
  kiln::onnx::export_(serve, path, {.input_names = {"images"}});
  auto imported = kiln::onnx::import_model(path);
  EXPECT_TRUE(core::same_bits(imported({{"images", images}}).at("output_0"), want));
  fs::remove(path);
}

TEST(OnnxImport, ControlFlowRoundTripIsBitwise) {
  auto f = kiln::function(
      [](const Tensor& x, const Tensor& n) { return control_flow_example(x, n, 1.5f); },
      {.input_signature = std::vector<TensorSpec>{TensorSpec({3}), TensorSpec({}, DType::Int32)}});
  auto imported = kiln::onnx::import_model_from_string(kiln::onnx::export_to_string(only_trace(f)));
  for (float sign : {1.f, -1.f})
    for (int n : {0, 1, 5}) {
      Tensor x = constant({1.f, -2.f, 3.5f}) * sign;
      Tensor got = imported({{"arg0", x}, {"arg1", constant(n)}}).at("output_0");
      EXPECT_TRUE(core::same_bits(got, f(x, constant(n)))) << sign << " " << n;
    }
}

// ---- Hostile models ------------------------------------------------------------
kiln::onnx::pb::ModelProto small_model() {
  auto f = kiln::function([](const Tensor& x) { return relu(x) + 1.f; },
                          {.input_signature = std::vector<TensorSpec>{TensorSpec({2})}});
  return parse_model(kiln::onnx::export_to_string(only_trace(f)));
}

std::string bytes_of(const kiln::onnx::pb::ModelProto& m) {
  std::string s;
  m.SerializeToString(&s);
  return s;
}

// Depthwise convolution goes out as a Conv with a group per channel and
// comes back as depthwise_conv2d; the nd ops as GatherND and ScatterND.
TEST(OnnxImport, DepthwiseConvAndNdOpsRoundTripsAreBitwise) {
  Tensor filter = random::uniform({3, 3, 3, 2}, -1.f, 1.f, DType::Float32, 7);
  auto depthwise = kiln::function([&](const Tensor& x) { return nn::depthwise_conv2d(x, filter, 2, "SAME"); },
                                  {.input_signature = std::vector<TensorSpec>{TensorSpec({None, 7, 6, 3})}});
  Tensor x = random::uniform({2, 7, 6, 3}, -1.f, 1.f, DType::Float32, 8);
  auto imported = kiln::onnx::import_model_from_string(
      kiln::onnx::export_to_string(only_trace(depthwise), {.input_names = {"x"}}));
  EXPECT_TRUE(core::same_bits(imported({{"x", x}}).at("output_0"), depthwise(x)));

  Tensor indices = constant({{2, 1}, {0, 0}, {1, 3}});
  auto nd = kiln::function(
      [&](const Tensor& t, const Tensor& updates) {
        Tensor gathered = gather_nd(t, indices);
        // Rows 0 and 1 both added to row 2 (a repeated index adds twice).
        Tensor rows = constant({{int64_t{2}}, {int64_t{2}}});
        return tensor_scatter_nd_update(t, indices, updates) + scatter_nd(indices, gathered * updates, t.shape()) +
               tensor_scatter_nd_add(t, rows, gather_nd(t, constant({{int64_t{0}}, {int64_t{1}}})));
      },
      {.input_signature = std::vector<TensorSpec>{TensorSpec({3, 4}), TensorSpec({3})}});
  Tensor t = random::uniform({3, 4}, -1.f, 1.f, DType::Float32, 9), updates = constant({5.f, 6.f, 7.f});
  Tensor want = nd(t, updates);
  std::string bytes = kiln::onnx::export_to_string(only_trace(nd), {.input_names = {"t", "updates"}});
  std::set<std::string> ops;
  const kiln::onnx::pb::ModelProto model = parse_model(bytes);
  for (const auto& node : model.graph().node()) ops.insert(node.op_type());
  EXPECT_TRUE(ops.count("GatherND") && ops.count("ScatterND")) << fmt::format("{}", fmt::join(ops, " "));
  auto back = kiln::onnx::import_model_from_string(bytes);
  EXPECT_TRUE(core::same_bits(back({{"t", t}, {"updates", updates}}).at("output_0"), want));
}

TEST(OnnxImport, RejectsTruncatedAndForeignFiles) {
  std::string good = bytes_of(small_model());
  for (std::size_t cut : {good.size() / 2, good.size() - 3, std::size_t{7}})
    expect_error<InvalidArgument>([&] { kiln::onnx::import_model_from_string(good.substr(0, cut), "cut.onnx"); },
                                  {"cut.onnx"});
  expect_error<InvalidArgument>([&] { kiln::onnx::import_model_from_string("{\"not\": \"onnx\"}", "j.onnx"); },
                                {"j.onnx: not an ONNX model"});
  expect_error<NotFound>([&] { kiln::onnx::import_model("/nonexistent/m.onnx"); }, {"cannot open '/nonexistent/m.onnx'"});
  expect_error<InvalidArgument>([&] { kiln::onnx::import_model("/tmp"); }, {"/tmp: not a regular file"});
  expect_error<InvalidArgument>([&] { kiln::onnx::import_model("/dev/zero"); }, {"/dev/zero: not a regular file"});
}

// The file is opened once and judged by what was opened: a FIFO with no
// writer is refused at once (opening it by name would block), a file past
// the size limit before a byte is read, a path through a file names why.
TEST(OnnxImport, RejectsFifosHugeFilesAndBadPathsWithoutReadingThem) {
  TempDir tmp;
  std::string fifo = tmp.path("model.fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_error<InvalidArgument>([&] { kiln::onnx::import_model(fifo); }, {fifo + ": not a regular file"});

  std::string huge = tmp.path("huge.onnx");  // sparse: no disk space taken
  { std::ofstream(huge).put('x'); }
  fs::resize_file(huge, (uint64_t{2} << 30) + 1);
  expect_error<InvalidArgument>([&] { kiln::onnx::import_model(huge); },
                                {huge + ": 2147483649 bytes, more than the limit of 2147483648"});

  std::string model = tmp.path("m.onnx");
  { std::ofstream(model, std::ios::binary) << bytes_of(small_model()); }
  expect_error<NotFound>([&] { kiln::onnx::import_model(model + "/x"); },
                         {"cannot open '" + model + "/x': Not a directory"});
  EXPECT_EQ(kiln::onnx::import_model(model).inputs().size(), 1u);
  std::string empty = tmp.path("empty.onnx");
  { std::ofstream(empty).flush(); }
  expect_error<InvalidArgument>([&] { kiln::onnx::import_model(empty); }, {empty + ":"});
}

TEST(OnnxImport, RejectsWrongTypesCyclesAndHugeDims) {
  kiln::onnx::pb::ModelProto m = small_model();
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      kiln::onnx::pb::TensorProto::STRING);
  expect_error<Unimplemented>([&] { kiln::onnx::import_model_from_string(bytes_of(m), "m"); },
                              {"element type STRING, which Kiln does not have"});

  m = small_model();  // a node reading its own output: a cycle
  kiln::onnx::pb::NodeProto& first = *m.mutable_graph()->mutable_node(0);
  first.set_input(0, first.output(0));
  expect_error<InvalidArgument>([&] { kiln::onnx::import_model_from_string(bytes_of(m), "m"); },
                                {"is not produced by an earlier node", "has a cycle"});

  m = small_model();
  kiln::onnx::pb::TensorProto& init = *m.mutable_graph()->mutable_initializer(0);
  init.add_dims(int64_t{1} << 40);
  expect_error<InvalidArgument>([&] { kiln::onnx::import_model_from_string(bytes_of(m), "m"); },
                                {"initializer 'const'", "bytes of raw_data"});
  init.clear_dims();
  init.add_dims(int64_t{1} << 62);
  expect_error<InvalidArgument>([&] { kiln::onnx::import_model_from_string(bytes_of(m), "m"); },
                                {"initializer 'const' has a dim of 4611686018427387904"});

  m = small_model();
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(-5);
  expect_error<InvalidArgument>([&] { kiln::onnx::import_model_from_string(bytes_of(m), "m"); },
                                {"input 'arg0' has a dim of -5"});

  m = small_model();
  m.mutable_graph()->mutable_node(0)->set_op_type("NoSuchOp");
  expect_error<Unimplemented>([&] { kiln::onnx::import_model_from_string(bytes_of(m), "m"); },
                              {"node 'relu_Relu' (NoSuchOp): Kiln has no op NoSuchOp"});

  m = small_model();
  m.mutable_opset_import(0)->set_version(99);
  expect_error<Unimplemented>([&] { kiln::onnx::import_model_from_string(bytes_of(m), "m"); }, {"opset 99 is newer"});

  // An axis out of range fails before the importer reads that dim of the shape.
  for (const char* op : {"Hardmax", "ArgMax"}) {
    m = small_model();
    kiln::onnx::pb::NodeProto& node = *m.mutable_graph()->mutable_node(0);
    node.set_op_type(op);
    kiln::onnx::set_attr(node, "axis", int64_t{100});  // past Shape::kMaxRank too
    kiln::onnx::set_attr(node, "select_last_index", int64_t{1});
    expect_error<InvalidArgument>([&] { kiln::onnx::import_model_from_string(bytes_of(m), "m"); },
                                  {fmt::format("({}): axis 100 is out of range for rank 1", op)});
  }

  m = small_model();  // Add of float and int64: Kiln's inference names the node
  m.mutable_graph()->mutable_initializer(0)->set_data_type(kiln::onnx::pb::TensorProto::INT32);
  expect_error<InvalidArgument>([&] { kiln::onnx::import_model_from_string(bytes_of(m), "m"); }, {"node 'add_Add' (Add)"});
}

// ---- ONNX's backend node tests ---------------------------------------------------
kiln::onnx::pb::TensorProto read_tensor(const fs::path& path) {
  kiln::onnx::pb::TensorProto t;
  t.ParseFromString(read_bytes(path));
  return t;
}

// ONNX's backend tests compare with rtol 1e-3, atol 1e-7.
bool close(const Tensor& want, const Tensor& got) {
  if (want.dtype() != got.dtype() || want.shape() != got.shape()) return false;
  if (!is_floating(want.dtype())) return core::same_bits(want, got);
  Tensor a = cast(want, DType::Float64), b = cast(got, DType::Float64);
  const double* x = core::data_of<double>(a);
  const double* y = core::data_of<double>(b);
  for (int64_t i = 0; i < a.size(); ++i) {
    if ((std::isnan(x[i]) && std::isnan(y[i])) || x[i] == y[i]) continue;  // NaNs, infinities
    if (!(std::abs(x[i] - y[i]) <= 1e-7 + 1e-3 * std::abs(x[i]))) return false;
  }
  return true;
}

enum class Verdict { Pass, Fail, Unsupported };

// Runs one test directory; `why` says what failed or what Kiln lacks.
Verdict run_node_test(const fs::path& dir, std::string& why) {
  kiln::onnx::pb::ModelProto model;
  if (!model.ParseFromString(read_bytes(dir / "model.onnx"))) {
    why = "unreadable model";
    return Verdict::Unsupported;
  }
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  for (const fs::path& set : sets) {
    std::vector<kiln::onnx::pb::TensorProto> inputs, outputs;
    for (int i = 0; fs::exists(set / fmt::format("input_{}.pb", i)); ++i) inputs.push_back(read_tensor(set / fmt::format("input_{}.pb", i)));
    for (int i = 0; fs::exists(set / fmt::format("output_{}.pb", i)); ++i) outputs.push_back(read_tensor(set / fmt::format("output_{}.pb", i)));
    // ONNX's test data writes bfloat16 values as UINT16 protos of the same bits (NumPy has no
    // bfloat16): read them as the model's bfloat16.
    auto as_declared = [](kiln::onnx::pb::TensorProto& t, const kiln::onnx::pb::ValueInfoProto& info) {
      if (t.data_type() == kiln::onnx::pb::TensorProto::UINT16 &&
          info.type().tensor_type().elem_type() == kiln::onnx::pb::TensorProto::BFLOAT16)
        t.set_data_type(kiln::onnx::pb::TensorProto::BFLOAT16);
    };
    for (std::size_t i = 0; i < inputs.size() && static_cast<int>(i) < model.graph().input_size(); ++i)
      as_declared(inputs[i], model.graph().input(static_cast<int>(i)));
    for (std::size_t i = 0; i < outputs.size() && static_cast<int>(i) < model.graph().output_size(); ++i)
      as_declared(outputs[i], model.graph().output(static_cast<int>(i)));
    std::optional<saved_model::LoadedSignature> sig;
    std::map<std::string, Tensor> feeds;
    try {
      try {
        sig = kiln::onnx::import_model_from_string(model.SerializeAsString(), dir.filename().string());
      } catch (const Unimplemented& e) {
        // Kiln fixes shapes, axes and pads when it builds a graph: with the
        // test's integer inputs (and Resize's scales) made initializers, the model may import.
        if (std::string(e.what()).find("Kiln needs it when it builds the graph") == std::string::npos) throw;
        kiln::onnx::pb::ModelProto fixed = model;
        auto* g = fixed.mutable_graph();
        for (std::size_t i = 0; i < inputs.size() && static_cast<int>(i) < g->input_size(); ++i) {
          int type = g->input(static_cast<int>(i)).type().tensor_type().elem_type();
          // shapes, axes, pads; and Resize's float scales
          if (type != kiln::onnx::pb::TensorProto::INT64 && type != kiln::onnx::pb::TensorProto::INT32 &&
              g->input(static_cast<int>(i)).name() != "scales")
            continue;
          kiln::onnx::pb::TensorProto init = inputs[i];
          init.set_name(g->input(static_cast<int>(i)).name());
          *g->add_initializer() = init;
        }
        sig = kiln::onnx::import_model_from_string(fixed.SerializeAsString(), dir.filename().string());
      }
      for (std::size_t i = 0; i < inputs.size() && i < static_cast<std::size_t>(model.graph().input_size()); ++i) {
        const std::string& name = model.graph().input(static_cast<int>(i)).name();
        for (const auto& info : sig->inputs())
          if (info.name == name) feeds[name] = kiln::onnx::from_tensor_proto(inputs[i], name);
      }
    } catch (const Unimplemented& e) {
      why = e.what();
      return Verdict::Unsupported;
    } catch (const std::exception& e) {
      why = e.what();
      return Verdict::Fail;
    }
    try {
      std::map<std::string, Tensor> got = (*sig)(feeds);
      for (std::size_t i = 0; i < outputs.size(); ++i) {
        const std::string& name = model.graph().output(static_cast<int>(i)).name();
        Tensor want = kiln::onnx::from_tensor_proto(outputs[i], name);
        if (!close(want, got.at(name))) {
          why = fmt::format("output '{}' differs", name);
          return Verdict::Fail;
        }
      }
    } catch (const std::exception& e) {
      why = e.what();
      return Verdict::Fail;
    }
  }
  return Verdict::Pass;
}

// The op (or the missing form) an Unimplemented message names.
std::string missing_what(const std::string& why) {
  if (auto p = why.find("Kiln has no op "); p != std::string::npos) return "op " + why.substr(p + 15);
  if (auto p = why.find("element type "); p != std::string::npos) return "dtype " + why.substr(p + 13, why.find(',', p) - p - 13);
  if (why.find("is not a tensor") != std::string::npos) return "sequence/optional values";
  if (auto p = why.find("domain '"); p != std::string::npos) return why.substr(p, why.find('\'', p + 8) - p + 1);
  if (auto p = why.find("): "); p != std::string::npos) {
    std::string op = why.substr(why.rfind('(', p) + 1, p - why.rfind('(', p) - 1);
    std::string rest = why.substr(p + 3);
    return op + ": " + rest.substr(0, std::min(rest.find(';'), std::size_t{60}));
  }
  return why.substr(0, 80);
}

TEST(OnnxImport, BackendNodeTests) {
  fs::path root = onnx_testdata_dir();
  if (!fs::exists(root)) GTEST_SKIP() << root << " is missing: install libonnx-testdata (scripts/setup.sh)";
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root)) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  int pass = 0, fail = 0;
  std::map<std::string, std::vector<std::string>> unsupported, failures;
  for (const fs::path& dir : dirs) {
    std::string why;
    switch (run_node_test(dir, why)) {
      case Verdict::Pass: ++pass; break;
      case Verdict::Fail: ++fail, failures[dir.filename().string()].push_back(why.substr(0, 160)); break;
      case Verdict::Unsupported: unsupported[missing_what(why)].push_back(dir.filename().string()); break;
    }
  }
  int lacking = 0;
  for (const auto& [what, tests] : unsupported) lacking += static_cast<int>(tests.size());
  std::string report = fmt::format(
      "ONNX backend node tests ({}): {} in all; {} use only ops and forms Kiln has, of which {} pass and {} fail; "
      "{} need what Kiln lacks\n",
      root.string(), dirs.size(), pass + fail, pass, fail, lacking);
  for (const auto& [test, whys] : failures) report += fmt::format("  FAIL {}: {}\n", test, whys[0]);
  std::vector<std::pair<std::size_t, std::string>> by_count;
  for (const auto& [what, tests] : unsupported) by_count.emplace_back(tests.size(), what);
  std::sort(by_count.rbegin(), by_count.rend());
  report += "Lacking, by what (tests):\n";
  for (const auto& [count, what] : by_count) report += fmt::format("  {} ({})\n", what, count);
  std::cout << report;
  // The figures of README's ONNX section; a drop is a regression.
  EXPECT_GE(pass, 684);
}

// PyTorch's grouped and depthwise convolutions as ONNX's test data has them
// (a Conv whose group count divides its input channels).
TEST(OnnxImport, PytorchConvertedGroupedConvolutions) {
  fs::path root = fs::path(onnx_testdata_dir()).parent_path() / "pytorch-converted";
  if (!fs::exists(root)) GTEST_SKIP() << root << " is missing: install libonnx-testdata (scripts/setup.sh)";
  for (const char* name : {"test_Conv2d_depthwise", "test_Conv2d_depthwise_padded", "test_Conv2d_depthwise_strided",
                           "test_Conv2d_depthwise_with_multiplier", "test_Conv2d_groups", "test_Conv2d_groups_thnn"}) {
    std::string why;
    EXPECT_EQ(run_node_test(root / name, why), Verdict::Pass) << name << ": " << why;
  }
}

}  // namespace
