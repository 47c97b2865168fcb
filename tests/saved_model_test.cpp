// Saved models: the seed's DemoModule, round trips of every op of the
// registry and of control flow, object trees, signatures, atomic saves.
#include "saved_model_test.h"

#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <kiln/saved_model.h>
#include <nlohmann/json.hpp>

#include "core/tensor_impl.h"
#include "function/traced_graph.h"
#include "trace/tracing_context.h"
#include "io/file_util.h"
#include "schema/op_def.h"
#include "runtime/dispatch.h"
#include "test_util.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;
using kiln::testing::TempDir;
namespace sm = kiln::saved_model;

namespace {

auto make_addprint(const Variable& x) {
  return kiln::function(
      [x](const Tensor& a) {
        x.assign_add(a);
        kiln::print(x);
        return x.read_value();
      },
      FunctionOptions{.input_signature = std::vector<TensorSpec>{TensorSpec({}, float32)}, .name = "addprint"});
}

}  // namespace

// The seed: DemoModule(init 1.0).addprint(5) -> 6, (50) -> 56; saved and
// loaded, addprint(5) gives 61 and the state keeps moving.
TEST(SavedModel, DemoModuleSeedRoundTrip) {
  TempDir tmp;
  Variable x(constant(1.f), {.name = "demo_module/Variable:0"});
  auto addprint = make_addprint(x);
  ::testing::internal::CaptureStderr();
  expect_tensor<float>(addprint(constant(5.f)), {}, {6.f});
  expect_tensor<float>(addprint(constant(50.f)), {}, {56.f});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "6\n56\n");

  sm::Object demo;
  demo.add("x", x).add("addprint", addprint);
  sm::save(demo, tmp.path("demo_model"), {{"serving_default", {addprint, {"a"}}}});

  sm::Loaded demo2 = sm::load(tmp.path("demo_model"));
  ::testing::internal::CaptureStderr();
  expect_tensor<float>(demo2.function("addprint")(constant(5.f)), {}, {61.f});
  expect_tensor<float>(demo2.function("addprint")(constant(5.f)), {}, {66.f});
  std::map<std::string, Tensor> out = demo2.signature("serving_default")({{"a", constant(4.f)}});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "61\n66\n70\n");
  ASSERT_EQ(out.size(), 1u);
  expect_tensor<float>(out.at("output_0"), {}, {70.f});
  // The loaded variable is the one the functions update; the original is
  // independent of it.
  expect_tensor<float>(demo2.variable("x").read_value(), {}, {70.f});
  EXPECT_EQ(demo2.variable("x").name(), "demo_module/Variable:0");
  EXPECT_TRUE(demo2.variable("x").trainable());
  expect_tensor<float>(x.read_value(), {}, {56.f});
  ASSERT_EQ(demo2.variables().size(), 1u);

  const sm::LoadedSignature& sig = demo2.signature("serving_default");
  ASSERT_EQ(sig.inputs().size(), 1u);
  EXPECT_EQ(sig.inputs()[0].name, "a");
  EXPECT_EQ(sig.inputs()[0].tensor_name, "serving_default_a:0");
  EXPECT_EQ(sig.outputs()[0].name, "output_0");
  EXPECT_EQ(sig.outputs()[0].dtype, float32);
  EXPECT_EQ(sig.outputs()[0].shape, Shape{});
}

// Output names given to a signature (TF's: the keys of a returned dict) are
// the loaded signature's; repeated or miscounted names are refused.
TEST(SavedModel, SignatureOutputsTakeTheNamesGiven) {
  TempDir tmp;
  auto two = kiln::function([](const Tensor& a) { return std::vector<Tensor>{a * 2.f, a + 1.f}; });
  (void)two(constant(1.f));
  sm::Object root;
  root.add("two", two);
  sm::save(root, tmp.path("named"), {{"serving_default", {two, {"a"}, {"doubled", "plus_one"}}}});
  const sm::Loaded loaded = sm::load(tmp.path("named"));
  std::map<std::string, Tensor> out = loaded.signature("serving_default")({{"a", constant(3.f)}});
  ASSERT_EQ(out.size(), 2u);
  expect_tensor<float>(out.at("doubled"), {}, {6.f});
  expect_tensor<float>(out.at("plus_one"), {}, {4.f});
  EXPECT_THROW(sm::save(root, tmp.path("repeated"), {{"serving_default", {two, {"a"}, {"x", "x"}}}}), InvalidArgument);
  EXPECT_THROW(sm::save(root, tmp.path("one"), {{"serving_default", {two, {"a"}, {"x"}}}}), InvalidArgument);
}

// The weights file is standard safetensors: header length, JSON, raw data.
TEST(SavedModel, VariablesFileIsStandardSafetensors) {
  TempDir tmp;
  Variable w(constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}), {.name = "w"});
  Variable steps(constant(int64_t{7}), {.name = "steps", .trainable = false});
  sm::Object root;
  root.add("w", w).add("steps", steps);
  sm::save(root, tmp.path("m"));
  std::string bytes = kiln::testing::read_bytes(tmp.path("m") + "/variables.safetensors");
  ASSERT_GE(bytes.size(), 8u);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  auto header = nlohmann::json::parse(bytes.substr(8, n));
  EXPECT_EQ(header["w"]["dtype"], "F32");
  EXPECT_EQ(header["w"]["shape"], nlohmann::json::array({2, 3}));
  EXPECT_EQ(header["w"]["data_offsets"], nlohmann::json::array({0, 24}));
  EXPECT_EQ(header["steps"]["dtype"], "I64");
  EXPECT_EQ(header["steps"]["data_offsets"], nlohmann::json::array({24, 32}));
  float third;
  std::memcpy(&third, bytes.data() + 8 + n + 8, 4);
  EXPECT_EQ(third, 3.f);
  EXPECT_EQ(bytes.size(), 8 + n + 32);

  sm::Loaded m = sm::load(tmp.path("m"));
  expect_tensor<float>(m.variable("w").read_value(), {2, 3}, {1, 2, 3, 4, 5, 6});
  expect_tensor<int64_t>(m.variable("steps").read_value(), {}, {7});
  EXPECT_FALSE(m.variable("steps").trainable());
}

// A tree of objects: children with variables and functions, a variable
// shared by two objects (restored once), a function of a child.
TEST(SavedModel, ObjectTreeRoundTrip) {
  TempDir tmp;
  Variable kernel(constant({{1.f, 0.f}, {0.f, 2.f}}), {.name = "dense/kernel:0"});
  Variable bias(constant({0.5f, -0.5f}), {.name = "dense/bias:0"});
  auto dense = kiln::function([kernel, bias](const Tensor& x) { return matmul(x, kernel) + bias; },
                              {.name = "dense"});
  dense(constant({{1.f, 1.f}}));
  dense(constant({{1.f, 1.f}, {2.f, 2.f}, {3.f, 3.f}}));  // relaxed: a second trace with batch None
  ASSERT_EQ(dense.concrete_functions().size(), 2u);

  sm::Object layer;
  layer.add("kernel", kernel).add("bias", bias).add("call", dense);
  sm::Object inner;
  inner.add("bias_again", bias);
  layer.add("inner", inner);
  sm::Object root;
  root.add("dense", layer);
  sm::save(root, tmp.path("tree"),
           {{"serving_default", {dense.get_concrete_function(TensorSpec({None, 2})), {"x"}}}});

  sm::Loaded m = sm::load(tmp.path("tree"));
  const sm::LoadedObject& d = m.child("dense");
  EXPECT_EQ(d.own_variables().size(), 2u);
  EXPECT_EQ(d.child("inner").variable("bias_again").state(), d.variable("bias").state());
  EXPECT_EQ(m.variables().size(), 2u);
  EXPECT_EQ(d.function("call").concrete_functions().size(), 2u);
  expect_tensor<float>(d.function("call")(constant({{1.f, 2.f}})), {1, 2}, {1.5f, 3.5f});
  expect_tensor<float>(d.function("call")(constant({{1.f, 2.f}, {0.f, 0.f}})), {2, 2}, {1.5f, 3.5f, 0.5f, -0.5f});
  expect_error<InvalidArgument>([&] { d.function("call")(constant({1.f, 2.f})); },
                                {"loaded function 'call'", "no saved trace takes (float32 (2,))"});
  expect_error<NotFound>([&] { m.child("dense").function("cal"); }, {"no function named 'cal'", "call"});
  expect_error<NotFound>([&] { m.signature("serve"); }, {"no signature named 'serve'", "serving_default"});
}

namespace {

// A traced function applying `op` to the sample: tensor inputs are
// parameters, resource inputs (variables) are captured.
ConcreteFunction trace_sample(const detail::OpDef& op, const schema::OpSample& sample) {
  auto graph = std::make_shared<graph::Graph>(std::string(op.name));
  trace::TracingContext ctx(graph);
  std::vector<Tensor> inputs;
  detail::Flattener key(true);
  for (std::size_t i = 0; i < sample.inputs.size(); ++i) {
    const Tensor& in = sample.inputs[i];
    if (in.dtype() == DType::Resource) {
      inputs.push_back(in);
    } else {
      inputs.push_back(ctx.add_parameter({in.dtype(), in.shape()}, fmt::format("arg{}", i)));
      key.spec(TensorSpec(in.shape(), in.dtype()));
    }
  }
  {
    runtime::DispatchHandlerGuard guard(&ctx);
    schema::Attrs attrs = sample.attrs;
    for (const Tensor& t : runtime::dispatch(op, inputs, std::move(attrs), SourceLocation::current()))
      graph->results().push_back(ctx.value_of(t));
  }
  graph->verify();
  auto impl = std::make_shared<detail::TracedGraph>();
  impl->name = std::string(op.name);
  impl->graph = graph;
  impl->plan = std::make_unique<exec::Plan>(graph);
  impl->key = std::move(key.key);
  return ConcreteFunction(impl);
}

// core::same_bits, but a resource output matches any handle of its shape: the
// loaded model's variables are new ones, with handles of their own.
bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.dtype() == DType::Resource) return b.dtype() == DType::Resource && a.shape() == b.shape();
  return core::same_bits(a, b);
}

}  // namespace

// Every op of the registry, on every sample, saved in one model and loaded
// back, gives the bits the op gives eagerly (random ops: dtype and shape).
TEST(SavedModel, EveryRegistryOpRoundTrips) {
  TempDir tmp;
  struct Case {
    const detail::OpDef* op;
    std::string name;
    std::vector<Tensor> args;  // the non-resource inputs
    std::vector<Tensor> eager;
  };
  std::vector<Case> cases;
  sm::Object root;
  for (const detail::OpDef* op : schema::OpRegistry::global().all()) {
    if (op->is(schema::kGraphOnly) || op->name == "HostFunction") continue;
    std::vector<schema::OpSample> samples = op->samples();
    for (std::size_t k = 0; k < samples.size(); ++k) {
      Case c{op, fmt::format("{}_{}", op->name, k), {}, {}};
      ConcreteFunction f = trace_sample(*op, samples[k]);
      for (const Tensor& t : samples[k].inputs)
        if (t.dtype() != DType::Resource) c.args.push_back(t);
      std::vector<Tensor> args = samples[k].inputs;
      ::testing::internal::CaptureStderr();  // print ops
      runtime::TensorList eager = runtime::run_eager(*op, args, samples[k].attrs);
      ::testing::internal::GetCapturedStderr();
      c.eager.assign(eager.begin(), eager.end());
      root.add(c.name, f);
      cases.push_back(std::move(c));
    }
  }
  ASSERT_GT(cases.size(), 100u);
  sm::save(root, tmp.path("every_op"));
  sm::Loaded m = sm::load(tmp.path("every_op"));
  int compared = 0;
  for (const Case& c : cases) {
    ::testing::internal::CaptureStderr();
    Outputs out;
    try {
      out = m.function(c.name).call(c.args);
    } catch (const std::exception& e) {
      ::testing::internal::GetCapturedStderr();
      ADD_FAILURE() << c.name << ": " << e.what();
      continue;
    }
    ::testing::internal::GetCapturedStderr();
    ASSERT_EQ(out.size(), c.eager.size()) << c.name;
    bool random = c.op->name.rfind("Random", 0) == 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (random) {
        EXPECT_EQ(out[i].dtype(), c.eager[i].dtype()) << c.name;
        EXPECT_EQ(out[i].shape(), c.eager[i].shape()) << c.name;
      } else {
        EXPECT_TRUE(same_bits(out[i], c.eager[i])) << c.name << " output " << i;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 100);
}

// Control flow: a while loop whose body holds a cond and updates a variable
// (StatefulWhile, StatefulIf), a TensorArray in a loop, a function called
// from another (Call) — nested graphs saved once and reloaded.
TEST(SavedModel, ControlFlowRoundTrip) {
  TempDir tmp;
  Variable total(constant(0), {.name = "total"});
  auto collatz = kiln::function(
      [total](const Tensor& n) {
        auto [x, steps] = kiln::while_loop(
            [](const Tensor& x, const Tensor&) { return x != 1; },
            [total](const Tensor& x, const Tensor& steps) {
              Tensor next = kiln::cond(x % 2 == 0, [&] { return floordiv(x, 2); }, [&] { return 3 * x + 1; });
              total.assign_add(1);
              return std::tuple<Tensor, Tensor>{next, steps + 1};
            },
            std::tuple<Tensor, Tensor>{n, constant(0)});
        return steps;
      },
      {.input_signature = std::vector<TensorSpec>{TensorSpec({}, int32)}, .name = "collatz"});
  auto squares = kiln::function(
      [](const Tensor& n) {
        TensorArray ta(float32, 0, {.dynamic_size = true});
        auto out = kiln::for_range(0, n, 1, ta, [](const Tensor& i, const TensorArray& ta) {
          Tensor f = cast(i, float32);
          return ta.write(i, f * f);
        });
        return out.stack();
      },
      {.input_signature = std::vector<TensorSpec>{TensorSpec({}, int32)}, .name = "squares"});
  auto inner = kiln::function([](const Tensor& x) { return x * 2.f + 1.f; }, {.name = "inner"});
  auto outer = kiln::function([&inner](const Tensor& x) { return inner(x) - inner(x * x); }, {.name = "outer"});
  expect_tensor<int32_t>(collatz(constant(6)), {}, {8});
  expect_tensor<int32_t>(total.read_value(), {}, {8});
  expect_tensor<float>(squares(constant(4)), {4}, {0, 1, 4, 9});
  expect_tensor<float>(outer(constant({1.f, 3.f})), {2}, {0.f, -12.f});
  ASSERT_NE(collatz.concrete_functions()[0].graph().to_string().find("StatefulWhile"), std::string::npos);
  ASSERT_NE(outer.concrete_functions()[0].graph().to_string().find("Call"), std::string::npos);

  sm::Object root;
  root.add("total", total).add("collatz", collatz).add("squares", squares).add("outer", outer);
  sm::save(root, tmp.path("cf"), {{"collatz", {collatz, {"n"}}}});
  sm::Loaded m = sm::load(tmp.path("cf"));
  expect_tensor<int32_t>(m.function("collatz")(constant(27)), {}, {111});
  expect_tensor<int32_t>(m.variable("total").read_value(), {}, {8 + 111});
  expect_tensor<int32_t>(m.signature("collatz")({{"n", constant(1)}}).at("output_0"), {}, {0});
  expect_tensor<float>(m.function("squares")(constant(5)), {5}, {0, 1, 4, 9, 16});
  expect_tensor<float>(m.function("outer")(constant({1.f, 3.f})), {2}, {0.f, -12.f});
  // The loaded graph prints as the original did.
  EXPECT_EQ(m.function("collatz").concrete_functions()[0].graph().to_string(),
            collatz.concrete_functions()[0].graph().to_string());
  EXPECT_EQ(m.function("outer").concrete_functions()[0].graph().to_dot(),
            outer.concrete_functions()[0].graph().to_dot());
}

// A function that captures a variable missing from the tree and an eager
// tensor: both saved with the function.
TEST(SavedModel, CapturedVariablesAndConstants) {
  TempDir tmp;
  Variable hidden(constant(10.f), {.name = "hidden"});
  Tensor scale = constant({1.f, 2.f, 3.f});
  Tensor words = constant({"a", "b"});
  auto f = kiln::function([&](const Tensor& x) {
    hidden.assign_add(1.f);
    return std::tuple<Tensor, Tensor>{x * scale + hidden, words};
  });
  f(constant({0.f, 0.f, 0.f}));
  sm::Object root;
  root.add("f", f);
  sm::save(root, tmp.path("cap"));
  sm::Loaded m = sm::load(tmp.path("cap"));
  Outputs out = m.function("f")(constant({1.f, 1.f, 1.f}));
  expect_tensor<float>(out[0], {3}, {13.f, 14.f, 15.f});
  expect_tensor<std::string>(out[1], {2}, {"a", "b"});
  ASSERT_EQ(m.all_functions().size(), 1u);
  EXPECT_TRUE(m.variables().empty());  // not in the tree, but restored for the function
  m.function("f")(constant({0.f, 0.f, 0.f}));
  expect_tensor<float>(m.function("f")(constant({0.f, 0.f, 0.f}))[0], {3}, {14.f, 14.f, 14.f});
}

// Tree names that are also names variables.safetensors uses for itself (its
// "__metadata__" entry, the "_constants/N" of captured constants) do not
// collide with them.
TEST(SavedModel, TreeNamesDoNotCollideWithReservedKeys) {
  TempDir tmp;
  Variable meta(constant(1.f), {.name = "meta"});
  Variable zero(constant(2.f), {.name = "zero"});
  Tensor scale = constant({3.f, 4.f});
  auto f = kiln::function([&](const Tensor& x) { return x * scale + zero; });
  f(constant({1.f, 1.f}));
  sm::Object constants;
  constants.add("0", zero);
  sm::Object root;
  root.add("__metadata__", meta).add("_constants", constants).add("f", f);
  sm::save(root, tmp.path("m"));
  sm::Loaded m = sm::load(tmp.path("m"));
  expect_tensor<float>(m.variable("__metadata__").read_value(), {}, {1.f});
  expect_tensor<float>(m.child("_constants").variable("0").read_value(), {}, {2.f});
  expect_tensor<float>(m.function("f")(constant({1.f, 2.f})), {2}, {5.f, 10.f});
}

// Saving over an existing model replaces it; a failed save leaves the old
// model complete; a directory that is not a saved model is never replaced.
TEST(SavedModel, SaveIsAtomicAndReplacesModels) {
  TempDir tmp;
  std::string dir = tmp.path("model");
  Variable v(constant(1.f), {.name = "v"});
  sm::Object root;
  root.add("v", v);
  sm::save(root, dir);
  v.assign(constant(2.f));
  sm::save(root, dir);  // over the old one
  expect_tensor<float>(sm::load(dir).variable("v").read_value(), {}, {2.f});

  v.assign(constant(3.f));
  io::testing::fail_after_files(1);  // the weights get written, then the save fails
  expect_error<Error>([&] { sm::save(root, dir); }, {"injected failure"});
  expect_tensor<float>(sm::load(dir).variable("v").read_value(), {}, {2.f});

  auto cb = kiln::function([](const Tensor& x) {
    return kiln::host_function([](const std::vector<Tensor>& in) { return in; }, {x}, {float32})[0];
  });
  cb(constant(1.f));
  sm::Object bad;
  bad.add("v", v).add("cb", cb);
  expect_error<Unimplemented>([&] { sm::save(bad, dir); }, {"host_function", "cannot hold"});
  expect_tensor<float>(sm::load(dir).variable("v").read_value(), {}, {2.f});
  // No temporary directories are left behind.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(dir).parent_path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);

  std::string other = tmp.path("photos");
  std::filesystem::create_directories(other);
  kiln::testing::write_bytes(other + "/cat.jpg", "meow");
  expect_error<FailedPrecondition>([&] { sm::save(root, other); }, {"holds no saved model", "refusing"});
  EXPECT_EQ(kiln::testing::read_bytes(other + "/cat.jpg"), "meow");
  sm::save(root, tmp.path("new/nested/dir/"));  // parents are created
  expect_tensor<float>(sm::load(tmp.path("new/nested/dir")).variable("v").read_value(), {}, {3.f});
}

TEST(SavedModel, SaveErrorsNameWhatCannotBeSaved) {
  TempDir tmp;
  auto untraced = kiln::function([](const Tensor& x) { return x; });
  expect_error<FailedPrecondition>([&] { sm::Signature s(untraced); }, {"has not been traced yet"});
  auto twice = kiln::function([](const Tensor& x) { return x; }, {.exact_shapes = true});
  twice(constant(1.f));
  twice(constant(1));
  expect_error<FailedPrecondition>([&] { sm::Signature s(twice); }, {"has 2 traces"});
  Variable text(constant("hi"), {.name = "text"});
  sm::Object root;
  root.add("text", text);
  expect_error<Unimplemented>([&] { sm::save(root, tmp.path("s")); }, {"variable 'text' is string"});
  sm::Object dup;
  dup.add("a", Variable(constant(1.f))).add("a", Variable(constant(2.f)));
  expect_error<InvalidArgument>([&] { sm::save(dup, tmp.path("d")); }, {"two members named 'a'"});
  auto id = kiln::function([](const Tensor& x) { return x; });
  id(constant(1.f));
  expect_error<InvalidArgument>([&] { sm::save(sm::Object{}, tmp.path("n"), {{"s", {id, {"a", "b"}}}}); },
                                {"signature 's' names 2 inputs but its function takes 1"});
  EXPECT_FALSE(std::filesystem::exists(tmp.path("s")));
}

// A loaded signature checks its named inputs.
TEST(SavedModel, SignatureChecksNamedInputs) {
  TempDir tmp;
  auto f = kiln::function([](const Tensor& a, const Tensor& b) { return std::tuple<Tensor, Tensor>{a + b, a * b}; },
                          {.input_signature = std::vector<TensorSpec>{TensorSpec({None}, float32), TensorSpec({None}, float32)}});
  f(constant({1.f}), constant({2.f}));
  sm::save(sm::Object{}, tmp.path("m"), {{"serving_default", {f, {"a", "b"}}}});
  sm::Loaded m = sm::load(tmp.path("m"));
  const sm::LoadedSignature& sig = m.signature("serving_default");
  auto out = sig({{"a", constant({1.f, 2.f})}, {"b", constant({3.f, 4.f})}});
  expect_tensor<float>(out.at("output_0"), {2}, {4.f, 6.f});
  expect_tensor<float>(out.at("output_1"), {2}, {3.f, 8.f});
  expect_error<InvalidArgument>([&] { sig({{"a", constant({1.f})}}); }, {"input 'b' (float32 (None,)) is missing"});
  expect_error<InvalidArgument>([&] { sig({{"a", constant({1.f})}, {"b", constant({1})}}); },
                                {"input 'b' must be a float32 (None,) tensor, got int32 (1,)"});
  expect_error<InvalidArgument>([&] { sig({{"a", constant({1.f})}, {"b", constant({1.f})}, {"c", constant(1.f)}}); },
                                {"no input named 'c'", "inputs: a, b"});
}

namespace {

// The seed's DemoModule as a kiln::Module.
struct DemoModule : kiln::Module {
  explicit DemoModule(const Tensor& init) : kiln::Module("demo_module"), x(add_variable("x", init)) {}
  DemoModule(DemoModule&&) = delete;
  Variable x;
  Method<Tensor(const Tensor&)> addprint = method<Tensor(const Tensor&)>(
      [this](const Tensor& a) {
        x.assign_add(a);
        kiln::print(x);
        return x.read_value();
      },
      {.input_signature = std::vector<TensorSpec>{TensorSpec({}, float32)}});
};

}  // namespace

TEST(SavedModel, ModuleSeedRoundTrip) {
  TempDir tmp;
  DemoModule demo(constant(1.f));
  ::testing::internal::CaptureStderr();
  demo.addprint(constant(5.f));
  demo.addprint(constant(50.f));
  ::testing::internal::GetCapturedStderr();
  sm::save(demo, tmp.path("demo_model"), {{"serving_default", {demo.addprint, {"a"}}}});
  sm::Loaded demo2 = sm::load(tmp.path("demo_model"));
  EXPECT_EQ(demo2.variable("x").name(), "demo_module/x:0");
  ::testing::internal::CaptureStderr();
  expect_tensor<float>(demo2.signature("serving_default")({{"a", constant(5.f)}}).at("output_0"), {}, {61.f});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "61\n");
  // With the method on the object, as demo2.addprint in the seed.
  sm::Object obj = sm::module_object(demo);
  obj.add("addprint", demo.addprint);
  sm::save(obj, tmp.path("demo_model"));
  ::testing::internal::CaptureStderr();
  expect_tensor<float>(sm::load(tmp.path("demo_model")).function("addprint")(constant(5.f)), {}, {61.f});
  ::testing::internal::GetCapturedStderr();
}

namespace {

// The seed's DemoModule with a named method, as tf.Module's tf.function
// attributes: saving the module saves the method without listing it, and the
// spec's name names the signature's input.
struct NamedDemoModule : kiln::Module {
  NamedDemoModule() : kiln::Module("demo_module"), x(add_variable("x", constant(1.f))) {}
  NamedDemoModule(NamedDemoModule&&) = delete;
  Variable x;
  Method<Tensor(const Tensor&)> addprint = method<Tensor(const Tensor&)>(
      "addprint",
      [this](const Tensor& a) {
        x.assign_add(a);
        return x.read_value();
      },
      {.input_signature = std::vector<TensorSpec>{TensorSpec({}, float32, "a")}});
  std::shared_ptr<nn::Dense> dense = track(std::make_shared<nn::Dense>(2, nn::DenseOptions{.seed = 1}));
  Method<Tensor(const Tensor&)> forward = method<Tensor(const Tensor&)>(
      "forward", [this](const Tensor& v) { return (*dense)(v); });
};

}  // namespace

TEST(SavedModel, NamedModuleMethodsAreSavedWithoutListing) {
  TempDir tmp;
  NamedDemoModule demo;
  ASSERT_EQ(demo.methods().size(), 2u);
  EXPECT_EQ(demo.methods()[0].name, "addprint");
  EXPECT_EQ(demo.addprint.options().name, "addprint");
  demo.forward(constant({{1.f, 2.f, 3.f}}));
  demo.forward(constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}));  // a second trace, relaxed
  Tensor want = demo.forward(constant({{0.5f, -1.f, 2.f}}));
  // addprint was never called: its input_signature is traced on save, as TF does.
  sm::save(demo, tmp.path("demo_model"), {{"serving_default", {demo.addprint}}});

  sm::Loaded loaded = sm::load(tmp.path("demo_model"));
  ASSERT_EQ(loaded.signature("serving_default").inputs().size(), 1u);
  EXPECT_EQ(loaded.signature("serving_default").inputs()[0].name, "a");
  expect_tensor<float>(loaded.signature("serving_default")({{"a", constant(5.f)}}).at("output_0"), {}, {6.f});
  expect_tensor<float>(loaded.function("addprint")(constant(5.f)), {}, {11.f});
  Tensor got = loaded.function("forward")(constant({{0.5f, -1.f, 2.f}}));
  EXPECT_EQ(got.to_vector<float>(), want.to_vector<float>());
}

TEST(SavedModel, NamedSpecsNameTheGraphParameters) {
  auto f = kiln::function([](const Tensor& images, const Tensor& scale) { return images * scale; });
  TensorSpec images({None, 3}, float32, "images");
  EXPECT_EQ(images.to_string(), "TensorSpec(shape=(None, 3), dtype=float32, name='images')");
  EXPECT_EQ(TensorSpec({}, int32).to_string(), "TensorSpec(shape=(), dtype=int32)");
  ConcreteFunction cf = f.get_concrete_function(images, TensorSpec({}, float32));
  EXPECT_NE(cf.to_string().find("(images: float32 (None, 3), arg1: float32 ())"), std::string::npos) << cf.to_string();
}

// A Sequential of Sequentials of Dense layers: the tree, the variables and
// a traced forward pass survive the round trip.
TEST(SavedModel, NestedModulesRoundTrip) {
  TempDir tmp;
  auto block = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Layer>>{
      std::make_shared<nn::Dense>(4, nn::DenseOptions{.activation = "relu", .seed = 1}),
      std::make_shared<nn::Dense>(3, nn::DenseOptions{.seed = 2})}, "block");
  nn::Sequential model(std::vector<std::shared_ptr<nn::Layer>>{
      std::make_shared<nn::Dense>(5, nn::DenseOptions{.input_shape = Shape{2}, .seed = 3}), block}, "model");
  auto forward = kiln::function([&model](const Tensor& x) { return model(x); },
                                {.input_signature = std::vector<TensorSpec>{TensorSpec({None, 2}, float32)}});
  Tensor x = constant({{1.f, -2.f}, {0.5f, 3.f}});
  Tensor want = forward(x);
  sm::save(model, tmp.path("nested"), {{"serving_default", {forward, {"x"}}}});

  sm::Loaded m = sm::load(tmp.path("nested"));
  EXPECT_EQ(m.variables().size(), model.variables().size());
  ASSERT_EQ(m.children().size(), 2u);
  const sm::LoadedObject& b = m.child("block");
  EXPECT_EQ(b.children().size(), 2u);
  for (const auto& [name, layer] : b.children()) {
    EXPECT_EQ(layer.own_variables().size(), 2u) << name;
    (void)layer.variable("kernel");
    (void)layer.variable("bias");
  }
  Tensor got = m.signature("serving_default")({{"x", x}}).at("output_0");
  ASSERT_EQ(got.shape(), want.shape());
  std::vector<float> a = got.to_vector<float>(), e = want.to_vector<float>();
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], e[i]) << i;
}
