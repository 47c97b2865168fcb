#include <fmt/format.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <unordered_map>

#include "ops/creation.h"
#include "exec/fused_elementwise.h"
#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {

using graph::Graph;
using GraphPtr = std::shared_ptr<const Graph>;

void place_fused_nodes(graph::Graph& g, std::vector<std::unique_ptr<graph::Node>>& fused,
                       const std::vector<char>& absorbed, const ValueMap& map) {
  std::vector<std::unique_ptr<graph::Node>> old = g.take_nodes(), out;
  for (auto& n : old) {
    const int id = n->id;
    if (fused[id]) {
      map.apply(*fused[id]);
      out.push_back(std::move(fused[id]));
    } else if (!absorbed[id]) {
      map.apply(*n);
      out.push_back(std::move(n));
    }
  }
  map.apply_results(g);
  g.set_nodes(std::move(out));
}

namespace {

bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) != "0";
}

// Optimizes the graphs held in node attrs (If branches, While bodies, Calls
// that were not inlined), each once per distinct graph.
bool optimize_nested(Graph& g, const PassOptions& options) {
  bool changed = false;
  // Original -> optimized: a graph held by several nodes (a callee inlined
  // twice) is optimized once and its copy shared.
  std::unordered_map<GraphPtr, GraphPtr> optimized;
  for (const auto& n : g.nodes()) {
    // A fused body is already straight-line code for its kernel.
    if (n->op == &exec::fused_elementwise_op()) continue;
    std::vector<std::pair<std::string_view, GraphPtr>> replaced;
    for (const auto& a : n->attrs) {
      const auto* sub = std::get_if<GraphPtr>(&a.value);
      if (!sub || !*sub) continue;
      GraphPtr& opt = optimized[*sub];
      if (!opt) opt = optimize(**sub, options);
      replaced.emplace_back(a.name, opt);
    }
    for (auto& [name, sub] : replaced) n->attrs.set(name, std::move(sub));
    changed |= !replaced.empty();
  }
  return changed;
}

}  // namespace

PassOptions PassOptions::from_env() {
  PassOptions o;
#ifndef NDEBUG
  o.verify = true;
#endif
  if (env_on("KILN_VERIFY_PASSES")) o.verify = true;
  o.dump = env_on("KILN_DUMP_PASSES");
  if (const char* off = std::getenv("KILN_DISABLE_PASSES")) {
    std::stringstream list(off);
    std::string name;
    while (std::getline(list, name, ',')) {
      bool all = name == "all";
      if (all || name == "inline") o.inline_calls = false;
      if (all || name == "replays") o.replays = false;
      if (all || name == "fold") o.fold_constants = false;
      if (all || name == "simplify") o.simplify = false;
      if (all || name == "cse") o.cse = false;
      if (all || name == "dce") o.dce = false;
      if (all || name == "contract") o.contract = false;
      if (all || name == "poolgrad") o.pool_grad = false;
      if (all || name == "convpool") o.conv_pool = false;
      if (all || name == "adam") o.adam = false;
      if (all || name == "layouts") o.layouts = false;
      if (all || name == "fuse") o.fuse = false;
    }
  }
  return o;
}

PassOptions PassOptions::portable() {
  PassOptions o;
  o.cpu_phase = false;
  return o;
}

std::shared_ptr<const Graph> optimize(const Graph& source, const PassOptions& options) {
  std::shared_ptr<Graph> g = source.clone(source.name());
  auto run = [&](const char* pass, bool enabled, auto&& fn) {
    if (!enabled) return;
    bool changed = fn();
    if (options.verify) {
      try {
        g->verify();
      } catch (const Internal& e) {
        throw Internal(fmt::format("after pass {}: {}", pass, e.what()));
      }
    }
    if (options.dump && changed)
      std::cerr << fmt::format("--- graph '{}' after pass {} ---\n{}", g->name(), pass, g->to_string());
  };
  run("inline", options.inline_calls, [&] { return inline_calls(*g); });
  // Before "nested", which gives While nodes optimized copies of their bodies:
  // a replay is known by its body graph.
  run("replays", options.replays, [&] { return merge_while_replays(*g); });
  run("nested", true, [&] { return optimize_nested(*g, options); });
  run("fold", options.fold_constants, [&] { return fold_constants(*g, options.fold_max_elements); });
  run("simplify", options.simplify, [&] { return simplify(*g); });
  run("cse", options.cse, [&] { return eliminate_common_subexpressions(*g); });
  run("dce", options.dce, [&] { return eliminate_dead_code(*g); });
  if (!options.cpu_phase) return g;
  // The CPU phase: Kiln's fused ops and weight layouts.
  // Before elementwise fusion, which would otherwise take a Relu into a chain.
  run("contract", options.contract, [&] { return fuse_contractions(*g); });
  // Before elementwise fusion too, which would take the Greater and Select.
  run("poolgrad", options.pool_grad, [&] { return fuse_pool_gradients(*g); });
  // Either side of poolgrad: the pool gradient reads the convolution's output, which stays.
  run("convpool", options.conv_pool, [&] { return fuse_conv_pools(*g); });
  run("adam", options.adam, [&] { return fuse_adam_updates(*g); });
  // After contract, which makes the FusedMatMuls it looks through.
  run("layouts", options.layouts, [&] { return assign_layouts(*g); });
  run("fuse", options.fuse, [&] { return fuse_elementwise(*g, options.fuse_min_nodes); });
  return g;
}

}  // namespace kiln::passes
