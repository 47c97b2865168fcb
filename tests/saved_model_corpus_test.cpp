// The fuzz corpus (tests/fuzz_corpus/saved_model) holds real saved models:
// this test checks that each still loads, and rewrites them from fresh saves
// with KILN_UPDATE_GOLDEN=1 (after a format change).
#include "saved_model_test.h"

#include <kiln/saved_model.h>

#include "fuzz/fuzz_input.h"
#include "io/saved_model_format.h"
#include "test_util.h"

using namespace kiln;
using kiln::testing::TempDir;
namespace sm = kiln::saved_model;

namespace {


// name -> a saved model's blob.
std::vector<std::pair<std::string, std::string>> fresh_models() {
  TempDir tmp;
  std::vector<std::pair<std::string, std::string>> out;
  auto keep = [&](const std::string& name, const sm::Object& root, const sm::Signatures& sigs) {
    sm::save(root, tmp.path(name), sigs);
    out.emplace_back(name, fuzz::encode_model(kiln::testing::read_bytes(tmp.path(name + "/saved_model.json")),
                                              kiln::testing::read_bytes(tmp.path(name + "/variables.safetensors"))));
  };
  {
    Variable x(constant(1.f), {.name = "x"});
    auto addprint = kiln::function(
        [x](const Tensor& a) {
          x.assign_add(a);
          kiln::print(x);
          return x.read_value();
        },
        {.input_signature = std::vector<TensorSpec>{TensorSpec({}, float32)}});
    sm::Object root;
    root.add("x", x).add("addprint", addprint);
    keep("demo", root, {{"serving_default", {addprint, {"a"}}}});
  }
  {
    Variable count(constant(int64_t{0}), {.name = "count"});
    Variable w(constant({{0.5f, -1.f}, {2.f, 0.25f}}), {.name = "w"});
    auto step = kiln::function(
        [count, w](const Tensor& n, const Tensor& v) {
          auto [i, acc] = kiln::while_loop(
              [&](const Tensor& i, const Tensor&) { return i < n; },
              [&](const Tensor& i, const Tensor& acc) {
                Tensor next = kiln::cond(i % 2 == 0, [&] { return matmul(acc, w); }, [&] { return relu(acc) - 1.f; });
                count.assign_add(int64_t{1});
                return std::tuple<Tensor, Tensor>{i + 1, next};
              },
              std::tuple<Tensor, Tensor>{constant(0), v});
          return nn::softmax(acc);
        },
        {.input_signature = std::vector<TensorSpec>{TensorSpec({}, int32), TensorSpec({None, 2}, float32)}});
    auto inner = kiln::function([](const Tensor& x) { return reshape(x * 2.f, {-1}); });
    auto outer = kiln::function([&inner](const Tensor& x) { return concat({inner(x), inner(-x)}, 0); });
    outer(constant({{1.f, 2.f}}));
    sm::Object child;
    child.add("w", w).add("outer", outer);
    sm::Object root;
    root.add("count", count).add("step", step).add("child", child);
    keep("control_flow", root, {{"step", {step.get_concrete_function(TensorSpec({}, int32), TensorSpec({None, 2}, float32)), {"n", "v"}}}});
  }
  return out;
}

}  // namespace

TEST(SavedModelFuzzCorpus, SeedsAreLoadableModels) {
  const std::string kCorpus = kiln::testing::saved_model_corpus_dir();
  auto models = fresh_models();
  if (const char* update = std::getenv("KILN_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::filesystem::create_directories(kCorpus);
    for (const auto& [name, blob] : models) kiln::testing::write_bytes(kCorpus + "/" + name, blob);
  }
  int seeds = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus)) {
    std::string blob = kiln::testing::read_bytes(entry.path().string());
    auto [document, weights] = fuzz::decode_model(blob);
    EXPECT_NO_THROW(io::load_from_bytes(document, weights, entry.path().filename().string())) << entry.path();
    ++seeds;
  }
  EXPECT_GE(seeds, static_cast<int>(models.size()));
}
