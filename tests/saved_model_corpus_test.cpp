// The fuzz corpus (tests/fuzz_corpus/saved_model) holds real saved models
// and hostile ones (sizes that overflow or no machine holds): this test loads
// and runs each as the fuzz target does, and rewrites them from fresh saves
// with KILN_UPDATE_GOLDEN=1 (after a format change).
#include "saved_model_test.h"

#include <kiln/saved_model.h>

#include "fuzz/fuzz_input.h"
#include "fuzz/fuzz_run.h"
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
  // Hostile sizes (tests/hostile_sizes_test.cpp): a model traced with the
  // sentinel 12345 (12345.5 for a float) in one place, then edited to a size
  // Kiln cannot trace, as an attacker would write the file.
  auto hostile = [&](const std::string& name, std::function<Tensor(const Tensor&)> body, TensorSpec spec,
                     const std::string& sentinel, const std::string& value) {
    auto f = kiln::function([body](const Tensor& x) { return body(x); }, {.input_signature = std::vector<TensorSpec>{spec}});
    sm::Object root;
    root.add("f", f);
    keep(name, root, {{"serving_default", {f, {"x"}}}});
    auto [document, weights] = fuzz::decode_model(out.back().second);
    std::string edited(document);
    int replaced = 0;
    for (std::size_t at = edited.find(sentinel); at != std::string::npos; at = edited.find(sentinel, at + value.size())) {
      edited.replace(at, sentinel.size(), value);
      ++replaced;
    }
    EXPECT_GT(replaced, 0) << name;
    out.back().second = fuzz::encode_model(edited, weights);
  };
  const std::string k2to40 = "1099511627776", k2to62 = "4611686018427387904";
  hostile("hostile_fill_overflow", [](const Tensor& x) { return x + fill(Shape{12345}, 1.f); }, TensorSpec({}, float32),
          "12345", k2to62);
  hostile("hostile_fill_huge", [](const Tensor& x) { return x + fill(Shape{12345}, 1.f); }, TensorSpec({}, float32),
          "12345", k2to40);
  hostile("hostile_range_huge", [](const Tensor& x) { return x + range(int64_t{0}, int64_t{12345}); }, TensorSpec({}, int64),
          "12345", "1000000000000");
  hostile("hostile_range_float_huge", [](const Tensor& x) { return x + range(0.0, 12345.5, 1.0, float32); },
          TensorSpec({}, float32), "12345.5", "1e300");
  hostile("hostile_one_hot_huge", [](const Tensor& x) { return one_hot(x, 12345); }, TensorSpec({1}, int32), "12345", k2to40);
  hostile("hostile_tile_overflow", [](const Tensor& x) { return tile(x, {12345}); }, TensorSpec({2}, float32), "12345", k2to62);
  hostile("hostile_reshape_overflow", [](const Tensor& x) { return reshape(x, Shape{0, 12345}); }, TensorSpec({0}, float32),
          "12345", k2to62);
  return out;
}

// What each hostile seed must raise, loaded and run (never a crash or a bare
// std::bad_alloc). Before the fix the overflows wrote past a heap block and the
// huge sizes threw std::bad_alloc.
struct Expected {
  enum Kind { kInvalidArgument, kResourceExhausted } kind;
  std::vector<std::string> fragments;
};
const std::map<std::string, Expected>& hostile_seeds() {
  static const std::map<std::string, Expected> seeds = {
      {"hostile_fill_overflow", {Expected::kInvalidArgument, {"Fill", "(4611686018427387904,)"}}},
      {"hostile_fill_huge", {Expected::kResourceExhausted, {"(1099511627776,)", "4398046511104 bytes", "(Fill)"}}},
      {"hostile_range_huge", {Expected::kResourceExhausted, {"(1000000000000,)", "8000000000000 bytes", "(Range)"}}},
      {"hostile_range_float_huge", {Expected::kInvalidArgument, {"Range", "1e+300 elements"}}},
      {"hostile_one_hot_huge", {Expected::kResourceExhausted, {"(1, 1099511627776)", "4398046511104 bytes", "(OneHot)"}}},
      {"hostile_tile_overflow", {Expected::kInvalidArgument, {"Tile", "multiples [4611686018427387904]"}}},
      {"hostile_reshape_overflow", {Expected::kInvalidArgument, {"Reshape", "[0, 4611686018427387904]"}}},
  };
  return seeds;
}

}  // namespace

TEST(SavedModelFuzzCorpus, SeedsLoadAndRun) {
  const std::string kCorpus = kiln::testing::saved_model_corpus_dir();
  auto models = fresh_models();
  if (const char* update = std::getenv("KILN_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::filesystem::create_directories(kCorpus);
    for (const auto& [name, blob] : models) kiln::testing::write_bytes(kCorpus + "/" + name, blob);
  }
  int seeds = 0, hostile = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus)) {
    const std::string name = entry.path().filename().string();
    std::string blob = kiln::testing::read_bytes(entry.path().string());
    auto [document, weights] = fuzz::decode_model(blob);
    // What the fuzz target does with each input.
    auto load_and_run = [&] { return fuzz::run_signatures(io::load_from_bytes(document, weights, name)); };
    ++seeds;
    auto it = hostile_seeds().find(name);
    if (it == hostile_seeds().end()) {
      int ran = 0;
      EXPECT_NO_THROW(ran = load_and_run()) << name;
      EXPECT_GE(ran, 1) << name;
      continue;
    }
    ++hostile;
    if (it->second.kind == Expected::kInvalidArgument)
      kiln::testing::expect_error<InvalidArgument>(load_and_run, it->second.fragments);
    else
      kiln::testing::expect_error<ResourceExhausted>(load_and_run, it->second.fragments);
  }
  EXPECT_GE(seeds, static_cast<int>(models.size()));
  EXPECT_EQ(hostile, static_cast<int>(hostile_seeds().size()));
}
