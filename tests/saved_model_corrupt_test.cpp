// Damaged and hostile saved models: every one is rejected with a kiln::Error
// that says what is wrong, never a crash or an out-of-bounds read.
#include "saved_model_test.h"

#include <random>

#include <kiln/saved_model.h>
#include <nlohmann/json.hpp>

#include "io/saved_model_format.h"
#include "test_util.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::read_bytes;
using kiln::testing::TempDir;
using kiln::testing::write_bytes;
namespace sm = kiln::saved_model;
using Json = nlohmann::ordered_json;

namespace {

// A small valid model: a variable, a function with a cond, a signature.
struct Model {
  std::string document, weights;
};

const Model& valid_model() {
  static Model m = [] {
    TempDir tmp;
    Variable w(constant({1.f, 2.f, 3.f}), {.name = "w"});
    Variable flag(constant(true), {.name = "flag"});
    auto f = kiln::function(
        [w, flag](const Tensor& x) {
          Tensor y = kiln::cond(kiln::sum(x) > 0.f, [&] { return x * w; }, [&] { return x - w; });
          return y + cast(flag.read_value(), float32);
        },
        {.input_signature = std::vector<TensorSpec>{TensorSpec({3}, float32)}, .name = "f"});
    f(constant({1.f, 1.f, 1.f}));
    sm::Object root;
    root.add("w", w).add("flag", flag).add("f", f);
    sm::save(root, tmp.path("m"), {{"serving_default", {f, {"x"}}}});
    return Model{read_bytes(tmp.path("m/saved_model.json")), read_bytes(tmp.path("m/variables.safetensors"))};
  }();
  return m;
}

sm::Loaded load_bytes(const std::string& document, const std::string& weights) {
  return io::load_from_bytes(document, weights, "saved model m");
}

// Loads the valid model after `edit` changed its document.
void expect_document_error(const std::function<void(Json&)>& edit, const std::vector<std::string>& fragments) {
  Json doc = Json::parse(valid_model().document);
  edit(doc);
  expect_error<InvalidArgument>([&] { load_bytes(doc.dump(), valid_model().weights); }, fragments);
}

Json& graph_of(Json& doc, const std::string& name) {
  for (Json& g : doc["graphs"])
    if (g["name"] == name) return g;
  throw std::runtime_error("no graph " + name);
}

Json& node_of(Json& graph, const std::string& name) {
  for (Json& n : graph["nodes"])
    if (n["name"] == name) return n;
  throw std::runtime_error("no node " + name);
}

// The safetensors bytes with header `h` and data `data`.
std::string safetensors(const std::string& h, const std::string& data, uint64_t claimed = UINT64_MAX) {
  uint64_t n = claimed == UINT64_MAX ? h.size() : claimed;
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out + h + data;
}

void expect_weights_error(const std::string& weights, const std::vector<std::string>& fragments) {
  expect_error<InvalidArgument>([&] { load_bytes(valid_model().document, weights); }, fragments);
}

}  // namespace

TEST(SavedModelCorrupt, ValidModelLoads) {
  sm::Loaded m = load_bytes(valid_model().document, valid_model().weights);
  kiln::testing::expect_tensor<float>(m.function("f")(constant({1.f, 1.f, 1.f})), {3}, {2.f, 3.f, 4.f});
}

TEST(SavedModelCorrupt, MissingAndTruncatedFiles) {
  TempDir tmp;
  expect_error<NotFound>([&] { sm::load(tmp.path("nothing")); }, {"saved_model.json does not exist"});
  std::filesystem::create_directories(tmp.path("m"));
  write_bytes(tmp.path("m/saved_model.json"), valid_model().document);
  expect_error<NotFound>([&] { sm::load(tmp.path("m")); }, {"variables.safetensors does not exist"});
  write_bytes(tmp.path("m/variables.safetensors"), valid_model().weights);
  EXPECT_NO_THROW(sm::load(tmp.path("m")));
  // Truncated anywhere: an error, never a crash.
  const std::string& w = valid_model().weights;
  for (std::size_t cut : {std::size_t{0}, std::size_t{5}, std::size_t{8}, std::size_t{40}, w.size() - 1}) {
    write_bytes(tmp.path("m/variables.safetensors"), w.substr(0, cut));
    EXPECT_THROW(sm::load(tmp.path("m")), InvalidArgument) << "weights cut at " << cut;
  }
  write_bytes(tmp.path("m/variables.safetensors"), w);
  const std::string& d = valid_model().document;
  for (std::size_t cut : {std::size_t{0}, std::size_t{1}, d.size() / 2, d.size() - 3}) {
    write_bytes(tmp.path("m/saved_model.json"), d.substr(0, cut));
    expect_error<InvalidArgument>([&] { sm::load(tmp.path("m")); }, {"saved_model.json is not valid JSON"});
  }
  write_bytes(tmp.path("m/variables.safetensors"), w.substr(0, w.size() - 4));
  write_bytes(tmp.path("m/saved_model.json"), d);
  expect_error<InvalidArgument>([&] { sm::load(tmp.path("m")); }, {"variables.safetensors", "run past", "truncated"});
}

TEST(SavedModelCorrupt, SafetensorsHeaderIsChecked) {
  // 12 bytes of w (F32 [3]) and 1 byte of flag (BOOL []).
  std::string data(13, '\0');
  data[12] = 1;
  auto header = [](const std::string& w_entry) {
    return R"({"flag":{"dtype":"BOOL","shape":[],"data_offsets":[12,13]},"w":)" + w_entry + "}";
  };
  std::string good = header(R"({"dtype":"F32","shape":[3],"data_offsets":[0,12]})");
  EXPECT_NO_THROW(load_bytes(valid_model().document, safetensors(good, data)));
  expect_weights_error(safetensors(good, data, uint64_t{1} << 40), {"header length is 1099511627776 bytes, more than the limit"});
  expect_weights_error(safetensors(good, data, good.size() + 100), {"only", "follow it (truncated file?)"});
  expect_weights_error(safetensors("[1, 2]", ""), {"the header is not a JSON object"});
  expect_weights_error(safetensors("{\"w\": ", data), {"header is not valid JSON"});
  expect_weights_error(safetensors(header(R"({"dtype":"F8_E5M2","shape":[3],"data_offsets":[0,12]})"), data),
                       {"tensor 'w': dtype 'F8_E5M2' is not one Kiln reads"});
  expect_weights_error(safetensors(header(R"({"dtype":"F32","shape":[4],"data_offsets":[0,12]})"), data),
                       {"tensor 'w': float32 (4,) needs 16 bytes but data_offsets [0, 12] hold 12"});
  expect_weights_error(safetensors(header(R"({"dtype":"F32","shape":[3],"data_offsets":[12,0]})"), data),
                       {"end before they begin"});
  expect_weights_error(safetensors(header(R"({"dtype":"F32","shape":[3],"data_offsets":[0,1200]})"), data),
                       {"run past the 13 bytes of data"});
  expect_weights_error(safetensors(header(R"({"dtype":"F32","shape":[3],"data_offsets":[1,13]})"), data),
                       {"tensor 'w' starts at byte 1 but the previous tensor ends at byte 0 (a hole)"});
  expect_weights_error(
      safetensors(R"({"flag":{"dtype":"BOOL","shape":[],"data_offsets":[11,12]},"w":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})",
                  data.substr(0, 12)),
      {"tensor 'flag' starts at byte 11 but the previous tensor ends at byte 12 (they overlap)"});
  expect_weights_error(safetensors(header(R"({"dtype":"F32","shape":[3],"data_offsets":[0,12]})"), data + "xyz"),
                       {"the tensors end at byte 13 of the data but the file holds 16"});
  expect_weights_error(safetensors(header(R"({"dtype":"F32","shape":[-3],"data_offsets":[0,12]})"), data),
                       {"tensor 'w': shape", "dim 0 is -3"});
  expect_weights_error(
      safetensors(header(R"({"dtype":"F32","shape":[4294967296,4294967296,4],"data_offsets":[0,12]})"), data),
      {"too many elements"});
  expect_weights_error(safetensors(header(R"({"dtype":"F32","shape":[3],"data_offsets":[-1,12]})"), data),
                       {"data_offsets[0]: -1 is negative"});
  std::string bad_bool = data;
  bad_bool[12] = 7;
  expect_weights_error(safetensors(good, bad_bool), {"tensor 'flag': bool element 0 is byte 7"});
  // The document and the weights must agree.
  expect_weights_error(safetensors(header(R"({"dtype":"I32","shape":[3],"data_offsets":[0,12]})"), data),
                       {"variable 'w'", "the document says float32 (3,) but variables.safetensors holds int32 (3,)"});
  expect_weights_error(safetensors(R"({"flag":{"dtype":"BOOL","shape":[],"data_offsets":[0,1]}})", std::string(1, '\0')),
                       {"variables.safetensors holds no tensor named 'w'"});
}

TEST(SavedModelCorrupt, DocumentStructureIsChecked) {
  expect_document_error([](Json& d) { d["format"] = "tf.saved_model"; }, {"format is 'tf.saved_model'"});
  expect_document_error([](Json& d) { d["version"] = "1"; }, {"version: expected an integer, got string"});
  expect_document_error([](Json& d) { d["version"] = 0; }, {"format version 0 is not a version"});
  {
    Json doc = Json::parse(valid_model().document);
    doc["version"] = 99;
    expect_error<Unimplemented>([&] { load_bytes(doc.dump(), valid_model().weights); },
                                {"format version 99 was written by a newer Kiln"});
  }
  expect_document_error([](Json& d) { d.erase("graphs"); }, {"'graphs' is missing"});
  expect_document_error([](Json& d) { d["graphs"] = Json::object(); }, {"graphs: expected an array, got object"});
  expect_document_error([](Json& d) { d["functions"][0]["graph"] = 17; }, {"graph index 17 is out of range"});
  expect_document_error([](Json& d) { d["functions"][0]["captures"] = Json::array(); },
                        {"function 0 ('f')", "it lists 0 captures but its graph has"});
  expect_document_error([](Json& d) { d["functions"][0]["captures"][0] = {{"variable", "nope"}}; },
                        {"no variable has key 'nope'"});
  expect_document_error([](Json& d) { d["object_graph"]["functions"]["f"] = Json::array({3}); },
                        {"function index 3 is out of range"});
  expect_document_error([](Json& d) { d["signatures"]["serving_default"]["inputs"][0]["dtype"] = "int32"; },
                        {"signature 'serving_default'", "'x' is int32 (3,) but the function's tensor is float32 (3,)"});
  expect_document_error([](Json& d) { d["variables"][0]["shape"] = Json::array({2}); },
                        {"the document says float32 (2,)"});
  expect_document_error([](Json& d) { d["variables"][0]["shape"] = Json::array({1, 2, 3, 4, 5, 6, 7, 8, 9}); },
                        {"rank 9 is more than Kiln supports"});
  expect_document_error([](Json& d) { d["object_graph"]["children"]["x/y"] = d["object_graph"]; },
                        {"member name 'x/y' is empty or contains '/'"});
  // Objects nested deeper than the limit.
  expect_document_error(
      [](Json& d) {
        Json leaf = {{"variables", Json::object()}, {"functions", Json::object()}, {"children", Json::object()}};
        for (int i = 0; i < 100; ++i)
          leaf = {{"variables", Json::object()}, {"functions", Json::object()}, {"children", {{"c", leaf}}}};
        d["object_graph"] = leaf;
      },
      {"objects are nested more than 64 deep"});
}

TEST(SavedModelCorrupt, GraphsAreValidatedByTheOpsThemselves) {
  expect_document_error([](Json& d) { node_of(graph_of(d, "f"), "add")["op"] = "Frobnicate"; },
                        {"node 'add'", "unknown op 'Frobnicate'"});
  expect_document_error([](Json& d) { node_of(graph_of(d, "f"), "add")["inputs"][1] = "nope:0"; },
                        {"'nope:0' names no node defined before this point"});
  expect_document_error([](Json& d) { node_of(graph_of(d, "f"), "add")["inputs"][1] = "add:0"; },
                        {"'add:0' names no node defined before this point"});  // a cycle
  expect_document_error([](Json& d) { node_of(graph_of(d, "f"), "add")["inputs"][1] = "stateful_if:7"; },
                        {"'stateful_if:7': node 'stateful_if' has 1 outputs"});
  expect_document_error([](Json& d) { node_of(graph_of(d, "f"), "add")["inputs"][1] = "cast"; },
                        {"'cast' is not a value name"});
  expect_document_error([](Json& d) { node_of(graph_of(d, "f"), "add")["inputs"].erase(1); },
                        {"node 'add' (Add)"});
  expect_document_error([](Json& d) { node_of(graph_of(d, "f"), "cast").erase("inputs"); },
                        {"node 'cast' (Cast): Cast: input 0 is missing (the node has 0 inputs)"});
  // Types that do not fit: the op's own inference says so.
  expect_document_error([](Json& d) { node_of(graph_of(d, "f"), "cast")["attrs"]["dtype"] = {{"dtype", "int32"}}; },
                        {"node 'cast' (Cast): output 0: the file says float32 () but the op's type inference gives int32 ()"});
  expect_document_error(
      [](Json& d) {
        node_of(graph_of(d, "f"), "cast")["attrs"]["dtype"] = {{"dtype", "int32"}};
        node_of(graph_of(d, "f"), "cast")["outputs"][0]["dtype"] = "int32";
      },
      {"node 'add' (Add): Add: x has dtype float32 but y has dtype int32"});
  expect_document_error([](Json& d) { node_of(graph_of(d, "f"), "cast")["attrs"]["dtype"] = {{"int", 3}}; },
                        {"node 'cast' (Cast)", "attr 'dtype' is missing or has another type"});
  expect_document_error([](Json& d) { node_of(graph_of(d, "f"), "cast")["attrs"]["dtype"] = {{"dtype", "qint8"}}; },
                        {"unknown dtype 'qint8'"});
  expect_document_error([](Json& d) { node_of(graph_of(d, "f"), "cast")["attrs"]["dtype"] = {{"blob", 1}}; },
                        {"unknown attr type 'blob'"});
  expect_document_error([](Json& d) { node_of(graph_of(d, "f"), "add")["outputs"][0]["dtype"] = "float64"; },
                        {"output 0: the file says float64 (3,) but the op's type inference gives float32 (3,)"});
  expect_document_error([](Json& d) { node_of(graph_of(d, "f"), "arg0")["outputs"][0]["shape"] = Json::array({4}); },
                        {"the file says float32 (4,)"});
  expect_document_error([](Json& d) { graph_of(d, "f")["parameters"] = Json::array(); },
                        {"the Placeholder is neither a parameter nor a capture"});
  expect_document_error([](Json& d) { node_of(graph_of(d, "f"), "add")["name"] = "cast"; },
                        {"the name is used by an earlier node"});
  expect_document_error([](Json& d) { graph_of(d, "f")["results"][0] = "ghost:0"; }, {"result 0", "ghost:0"});
  // A branch that returns another dtype than its twin: If's inference.
  expect_document_error([](Json& d) {
    Json& then = graph_of(d, "then");
    for (Json& n : then["nodes"])
      if (n["op"] == "Mul") n["op"] = "Equal", n["outputs"][0]["dtype"] = "bool";
  }, {"node 'stateful_if' (StatefulIf)", "output 0 is bool (3,) in then_branch but float32 (3,) in else_branch"});
  // A Const whose value does not decode.
  expect_document_error([](Json& d) {
    for (Json& g : d["graphs"])
      for (Json& n : g["nodes"])
        if (n["op"] == "Const") n["attrs"]["value"]["tensor"]["data"] = "AAAA!===";
  }, {"base64"});
  expect_document_error([](Json& d) {
    for (Json& g : d["graphs"])
      for (Json& n : g["nodes"])
        if (n["op"] == "Const") n["attrs"]["value"]["tensor"]["shape"] = Json::array({1000000});
  }, {"needs 4000000 bytes of data, got 4"});
  expect_document_error([](Json& d) { node_of(graph_of(d, "f"), "stateful_if")["attrs"]["then_branch"]["graph"] = 2; },
                        {"graph index 2 is out of range (the table has 2 graphs before this point)"});
}

// Nested graphs: a chain deeper than the limit, and a few graphs that each
// call the previous twice (2^n nodes once expanded).
TEST(SavedModelCorrupt, NestedGraphsAreBounded) {
  auto call_chain = [](int n, int calls) {
    Json graphs = Json::array();
    graphs.push_back(Json::parse(R"({"name":"g0","nodes":[
      {"name":"c","op":"Const","attrs":{"value":{"tensor":{"dtype":"float32","shape":[],"data":"AACAPw=="}}},
       "outputs":[{"dtype":"float32","shape":[]}]}],"parameters":[],"captures":[],"results":["c:0"]})"));
    for (int i = 1; i < n; ++i) {
      Json nodes = Json::array();
      for (int k = 0; k < calls; ++k)
        nodes.push_back({{"name", "call" + std::to_string(k)}, {"op", "Call"}, {"attrs", {{"f", {{"graph", i - 1}}}}},
                         {"outputs", Json::array({{{"dtype", "float32"}, {"shape", Json::array()}}})}});
      graphs.push_back({{"name", "g" + std::to_string(i)}, {"nodes", nodes}, {"parameters", Json::array()},
                        {"captures", Json::array()}, {"results", Json::array({"call0:0"})}});
    }
    return graphs;
  };
  expect_document_error([&](Json& d) { d["graphs"] = call_chain(40, 1); }, {"graphs are nested more than 32 deep"});
  expect_document_error([&](Json& d) { d["graphs"] = call_chain(30, 2); },
                        {"graph 20 ('g20')", "the graphs hold more than 4194304 nodes in all"});
  // Within the limits the chain is valid.
  Json doc = Json::parse(valid_model().document);
  Json graphs = call_chain(10, 1);
  std::size_t offset = graphs.size();
  for (Json& g : doc["graphs"]) {
    for (Json& n : g["nodes"]) {
      if (!n.contains("attrs")) continue;
      for (auto& [k, v] : n["attrs"].items())
        if (v.contains("graph")) v["graph"] = v["graph"].get<int>() + static_cast<int>(offset);
    }
    graphs.push_back(g);
  }
  doc["graphs"] = graphs;
  doc["functions"][0]["graph"] = doc["functions"][0]["graph"].get<int>() + static_cast<int>(offset);
  EXPECT_NO_THROW(load_bytes(doc.dump(), valid_model().weights));
}

// Random damage to valid files: every load either works or throws a
// kiln::Error (the libFuzzer target, scripts/fuzz_loader.sh, goes further).
TEST(SavedModelCorrupt, RandomDamageNeverCrashes) {
  std::mt19937 rng(1234);
  int errors = 0, loaded = 0;
  for (int round = 0; round < 1500; ++round) {
    std::string doc = valid_model().document, weights = valid_model().weights;
    std::string& target = round % 3 == 0 ? weights : doc;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !target.empty(); ++e) {
      std::size_t pos = rng() % target.size();
      switch (rng() % 4) {
        case 0: target[pos] = static_cast<char>(rng()); break;
        case 1: target.erase(pos, 1 + rng() % 8); break;
        case 2: target.insert(pos, 1, "{}[]\":,0123456789-eE"[rng() % 20]); break;
        case 3: target.resize(pos); break;
      }
    }
    try {
      sm::Loaded m = load_bytes(doc, weights);
      ++loaded;
    } catch (const Error&) {
      ++errors;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "round " << round << ": not a kiln::Error: " << e.what();
    }
  }
  EXPECT_GT(errors, 1000);
  EXPECT_EQ(loaded + errors, 1500);
}
