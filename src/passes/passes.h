#pragma once
// Graph optimization passes (docs/design-notes.md, "Graph passes"). Each pass rewrites a graph in
// place and says whether it changed anything; `optimize` runs the pipeline on
// a copy of a traced graph and on its nested graphs, in two phases: the
// portable phase leaves standard ops only (what an exporter reads), the CPU
// phase then makes the fused ops and weight layouts of Kiln's own kernels. No pass changes a number:
// a rewrite is made only when the result is bitwise the same, and stateful
// ops are never removed or reordered. One merge is made: ApplyAdam updates
// that follow each other in program order become one FusedApplyAdam, which
// performs them in that order's effect (fuse_adam.cpp).
#include <cstdint>
#include <memory>
#include <string>

#include "graph/graph.h"

namespace kiln::passes {

struct PassOptions {
  // Portable phase.
  bool inline_calls = true;    // Call nodes become the callee's nodes
  bool replays = true;         // a while_loop's results come from its gradient's replay of it
  bool fold_constants = true;  // ops on constants run once, at compile time
  bool simplify = true;        // x*1, x-0, double transpose, cast of cast, ...
  bool cse = true;             // identical pure nodes become one
  bool dce = true;             // nodes no result or stateful op needs go
  // CPU phase: ops and layouts no other runtime knows (off: the portable graph alone).
  bool cpu_phase = true;
  bool contract = true;        // matmul/conv/depthwise conv + bias (+ relu) become Fused* contractions
  bool pool_grad = true;       // MaxPoolGrad + relu's gradient become FusedMaxPoolGrad
  bool conv_pool = true;       // a 2x2 MaxPool of a FusedConv2D becomes its second output
  bool adam = true;            // a step's ApplyAdam updates become one FusedApplyAdam
  bool layouts = true;         // a weight no graph write changes is read packed in MatMul's layout
  bool fuse = true;            // elementwise chains become FusedElementwise
  // Constant folding leaves results larger than this (elements) unfolded, so
  // graphs do not grow by baking big tensors in.
  int64_t fold_max_elements = 1024;
  // Fewest elementwise nodes a fused group needs (1 fuses lone ops too: the
  // registry test uses it so that every elementwise op runs fused).
  int fuse_min_nodes = 2;
  // Graph::verify after each pass (default: debug builds, or KILN_VERIFY_PASSES=1).
  bool verify = false;
  // Writes the graph to stderr after each pass that changed it (KILN_DUMP_PASSES=1).
  bool dump = false;

  // The defaults, adjusted by the environment:
  //   KILN_DISABLE_PASSES=inline,replays,fold,simplify,cse,dce,contract,poolgrad,convpool,adam,
  //     layouts,fuse (or "all")
  //   KILN_VERIFY_PASSES=1, KILN_DUMP_PASSES=1
  static PassOptions from_env();
  // The portable phase alone (ONNX export and any consumer that reads the
  // graph's ops rather than running them).
  static PassOptions portable();
};

// The optimized copy of `g` (`g` is left as traced: gradients, the verify
// option and printing use it). Nested graphs (If/While branches and bodies)
// are optimized too.
std::shared_ptr<const graph::Graph> optimize(const graph::Graph& g, const PassOptions& options);

// The passes, in pipeline order. Each returns whether it changed the graph.
bool inline_calls(graph::Graph& g);
bool merge_while_replays(graph::Graph& g);
bool fold_constants(graph::Graph& g, int64_t max_elements);
bool simplify(graph::Graph& g);
bool eliminate_common_subexpressions(graph::Graph& g);
bool eliminate_dead_code(graph::Graph& g);
bool fuse_contractions(graph::Graph& g);
bool fuse_pool_gradients(graph::Graph& g);
bool fuse_conv_pools(graph::Graph& g);
bool fuse_adam_updates(graph::Graph& g);
bool assign_layouts(graph::Graph& g);
bool fuse_elementwise(graph::Graph& g, int min_nodes);

}  // namespace kiln::passes
