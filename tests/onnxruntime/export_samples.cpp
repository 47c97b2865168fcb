// Writes what scripts/onnxruntime_check.sh feeds to onnxruntime: every op
// sample of the registry that exports, a function of If and Loop, and the
// seeds' MNIST CNN, each as
// DIR/<case>/model.onnx with its inputs and Kiln's outputs as raw
// little-endian files, listed in DIR/manifest.json.
//   onnx_export_samples DIR  (built by tests/CMakeLists.txt)
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/mnist_cnn.h"
#include "core/tensor_impl.h"
#include "exec/plan.h"
#include "graph_feeds.h"
#include "kiln/onnx.h"
#include "onnx/export_model.h"
#include "onnx/onnx_samples.h"  // tests/onnx

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kiln;

namespace {

json write_tensor(const fs::path& dir, const std::string& name, const Tensor& t) {
  std::ofstream(dir / (name + ".bin"), std::ios::binary)
      .write(static_cast<const char*>(core::raw_data(t)),
             static_cast<std::streamsize>(t.size() * dtype_size(t.dtype())));
  return {{"name", name}, {"file", name + ".bin"}, {"dtype", std::string(dtype_name(t.dtype()))},
          {"dims", t.shape().to_vector()}};
}

json write_case(const fs::path& root, const std::string& id, const std::string& model_bytes,
                const std::vector<std::string>& input_names, const std::vector<Tensor>& inputs,
                const std::vector<Tensor>& outputs) {
  fs::path dir = root / id;
  fs::create_directories(dir);
  std::ofstream(dir / "model.onnx", std::ios::binary).write(model_bytes.data(), static_cast<std::streamsize>(model_bytes.size()));
  json c = {{"id", id}, {"inputs", json::array()}, {"outputs", json::array()}};
  for (std::size_t i = 0; i < inputs.size(); ++i) c["inputs"].push_back(write_tensor(dir, input_names[i], inputs[i]));
  for (std::size_t i = 0; i < outputs.size(); ++i)
    c["outputs"].push_back(write_tensor(dir, fmt::format("output_{}", i), outputs[i]));
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: onnx_export_samples DIR\n";
    return 2;
  }
  fs::path root = argv[1];
  fs::create_directories(root);
  json cases = json::array();
  int refused = 0;
  testing::for_each_op_sample([&](const detail::OpDef& op, int k, const graph::Graph& g, const schema::OpSample& s) {
    std::string bytes;
    try {
      kiln::onnx::export_graph(g, {}).SerializeToString(&bytes);
    } catch (const Unimplemented&) {
      ++refused;
      return;
    } catch (const InvalidArgument&) {  // strings, resources
      ++refused;
      return;
    }
    std::vector<Tensor> inputs(s.inputs.begin(), s.inputs.end());
    std::vector<Tensor> feed = testing::feeds_with_captures(g, inputs);
    auto shared = std::const_pointer_cast<const graph::Graph>(std::shared_ptr<const graph::Graph>(&g, [](auto*) {}));
    detail::ResultLeaves out = exec::Plan(shared).run(feed);
    std::vector<std::string> names;
    for (const graph::Node* p : g.parameters()) names.push_back(p->name);
    json c = write_case(root, fmt::format("{}_{}", op.name, k), bytes, names, inputs, std::vector<Tensor>(out.begin(), out.end()));
    c["op"] = op.name;
    c["special_values"] = s.special_values;
    cases.push_back(std::move(c));
  });

  // If and Loop: both branches, and zero, one and several iterations.
  auto flow = kiln::function([](const Tensor& x, const Tensor& n) { return testing::control_flow_example(x, n, 1.5f); },
                             {.input_signature = std::vector<TensorSpec>{TensorSpec({3}), TensorSpec({}, DType::Int32)}});
  std::string flow_bytes = kiln::onnx::export_to_string(flow.get_concrete_function(constant({1.f, 2.f, 3.f}), constant(1)),
                                                        {.input_names = {"x", "n"}});
  for (float sign : {1.f, -1.f})
    for (int n : {0, 1, 5}) {
      Tensor x = constant({1.f, -2.f, 3.5f}) * sign, count = constant(n);
      json c = write_case(root, fmt::format("if_loop_{}_{}", sign > 0 ? "then" : "else", n), flow_bytes, {"x", "n"},
                          {x, count}, {flow(x, count)});
      c["op"] = "If and Loop";
      c["special_values"] = false;
      cases.push_back(std::move(c));
    }

  nn::Sequential net("cnn");
  bench::add_mnist_cnn(net);
  auto serve = kiln::function([&](const Tensor& x) { return net(x); },
                              {.input_signature = std::vector<TensorSpec>{TensorSpec({None, 28, 28, 1})}});
  for (int64_t batch : {1, 8}) {
    Tensor images = random::uniform({batch, 28, 28, 1}, 0.f, 1.f, DType::Float32, 7);
    Tensor probs = serve(images);
    std::string bytes = kiln::onnx::export_to_string(serve.get_concrete_function(images), {.input_names = {"images"}});
    json c = write_case(root, fmt::format("mnist_cnn_b{}", batch), bytes, {"images"}, {images}, {probs});
    c["op"] = "MNIST CNN";
    c["special_values"] = false;
    cases.push_back(std::move(c));
  }
  std::ofstream(root / "manifest.json") << cases.dump(1);
  std::cout << fmt::format("{} cases written to {} ({} op samples have no ONNX form)\n", cases.size(), root.string(), refused);
  return 0;
}
