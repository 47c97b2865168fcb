// kiln::onnx::import_model: an ONNX ModelProto as a Kiln graph, traced from
// the nodes in file order, then optimized and planned as a kiln::function's.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error_context.h"
#include "core/printable.h"
#include "function/traced_graph.h"
#include "kiln/control_flow.h"
#include "kiln/math.h"
#include "kiln/onnx.h"
#include "onnx/importer.h"
#include "ops/creation.h"
#include "passes/passes.h"
#include "runtime/dispatch.h"
#include "trace/tracing_context.h"

namespace kiln::onnx {

namespace {

// A file larger than this is refused before it is read (protobuf's own
// limit is 2 GB).
constexpr uint64_t kMaxModelBytes = uint64_t{2} << 30;

// An error's text made safe to print: names in it come from the file (no
// terminal escapes; readable when not UTF-8).
std::string escaped(std::string_view message) { return core::printable(message, /*keep_newlines=*/true); }

[[noreturn]] void bad(const std::string& what, const std::string& message) {
  throw InvalidArgument(fmt::format("kiln::onnx::import_model: {}: {}", what, message));
}

schema::TensorType value_type(const pb::ValueInfoProto& vi, const std::string& what) {
  if (!vi.type().has_tensor_type())
    throw Unimplemented(fmt::format("kiln::onnx::import_model: {}: '{}' is not a tensor (sequences, maps and "
                                    "optionals are not supported)", what, vi.name()));
  const pb::TypeProto_Tensor& t = vi.type().tensor_type();
  DType dtype = from_onnx_dtype(t.elem_type(), fmt::format("{}: input '{}'", what, vi.name()));
  if (!t.has_shape()) return {dtype, Shape::unknown_rank()};
  if (t.shape().dim_size() > Shape::kMaxRank)
    bad(what, fmt::format("input '{}' has rank {}, more than Kiln's {}", vi.name(), t.shape().dim_size(), Shape::kMaxRank));
  Shape s;
  for (const pb::TensorShapeProto_Dimension& d : t.shape().dim()) {
    int64_t v = d.has_dim_value() ? d.dim_value() : None;
    if (d.has_dim_value() && (v < 0 || v > Shape::kMaxElements))
      bad(what, fmt::format("input '{}' has a dim of {}", vi.name(), v));
    s.push_back(v);
  }
  if (!s.within_limits()) bad(what, fmt::format("input '{}' has shape {}, too many elements", vi.name(), s.to_string()));
  return {dtype, s};
}

// Subgraphs (If branches, Loop bodies) nested deeper than this are refused.
constexpr int kMaxGraphDepth = 32;

using Scope = std::unordered_map<std::string, Tensor>;  // ONNX name -> Kiln tensor (concrete for constants)

const pb::GraphProto& graph_attr(const pb::NodeProto& node, const std::string& name, const std::string& where) {
  for (const pb::AttributeProto& a : node.attribute())
    if (a.name() == name) {
      if (a.type() != pb::AttributeProto::GRAPH) bad(where, fmt::format("attribute '{}' must be a graph", name));
      return a.g();
    }
  bad(where, fmt::format("attribute '{}' is missing", name));
}

// The graph nodes one ONNX node became (ids from `first` on) are named after
// it ("conv1/Transpose_2"), so an error when the graph runs (a GatherElements
// index out of range) names the ONNX node that made the failing one.
void name_after(graph::Graph& g, int first, const pb::NodeProto& node) {
  const std::string& label = node.name().empty() && node.output_size() > 0 ? node.output(0) : node.name();
  if (label.empty()) return;
  for (int id = first; id < g.num_nodes(); ++id) {
    graph::Node& n = *g.nodes()[static_cast<std::size_t>(id)];
    // A fresh unique name: the graph hands one out with each new node (this
    // one, never added, is dropped at once).
    n.name = g.new_node(*n.op, {}, {}, {}, n.location, fmt::format("{}/{}", label, n.name))->name;
  }
}

bool all_concrete(const std::vector<Tensor>& inputs) {
  for (const Tensor& t : inputs)
    if (t.defined() && t.is_symbolic()) return false;
  return true;
}

struct Importer {
  const pb::ModelProto& model;
  std::string what;
  int opset = 0;
  int depth = 0;

  void check_header() {
    if (!model.has_graph()) bad(what, "the model has no graph");
    for (const pb::OperatorSetIdProto& o : model.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") opset = static_cast<int>(o.version());
    if (opset == 0) {
      if (model.opset_import_size() > 0)  // ai.onnx.ml, ai.onnx.preview.training...
        throw Unimplemented(fmt::format("kiln::onnx::import_model: {}: domain '{}' is not supported", what,
                                        model.opset_import(0).domain()));
      bad(what, "the model imports no version of the default opset (ai.onnx)");
    }
    if (opset > kOpsetVersion)
      throw Unimplemented(fmt::format("kiln::onnx::import_model: {}: opset {} is newer than Kiln's {}", what, opset,
                                      kOpsetVersion));
  }

  saved_model::LoadedSignature run() {
    check_header();
    const pb::GraphProto& gp = model.graph();
    auto g = std::make_shared<graph::Graph>(gp.name().empty() ? "onnx_model" : gp.name());
    Scope values;
    std::vector<saved_model::TensorInfo> inputs, outputs;
    {
      trace::TracingContext ctx(g);
      for (const pb::TensorProto& init : gp.initializer()) {
        if (init.name().empty()) bad(what, "an initializer has no name");
        values[init.name()] = from_tensor_proto(init, fmt::format("{}: initializer '{}'", what, init.name()));
      }
      for (const pb::ValueInfoProto& vi : gp.input()) {
        if (values.count(vi.name())) continue;  // an initializer's default (IR < 4 lists them as inputs)
        if (vi.name().empty()) bad(what, "a graph input has no name");
        schema::TensorType type = value_type(vi, what);
        values[vi.name()] = ctx.add_parameter(type, vi.name());
        inputs.push_back({vi.name(), type.dtype, type.shape, vi.name()});
      }
      runtime::DispatchHandlerGuard guard(&ctx);
      for (const pb::NodeProto& node : gp.node()) import_node(node, values);
      for (const pb::ValueInfoProto& vi : gp.output()) {
        auto it = values.find(vi.name());
        if (it == values.end()) bad(what, fmt::format("graph output '{}' is not produced by any node", vi.name()));
        // An output that is a constant still becomes a node of the graph.
        Tensor t = it->second.is_symbolic() ? it->second : ops::const_op(it->second, SourceLocation::current());
        g->results().push_back(ctx.value_of(t));
        outputs.push_back({vi.name(), t.dtype(), t.shape(), vi.name()});
      }
    }
    g->verify();
    auto impl = std::make_shared<detail::TracedGraph>();
    impl->name = g->name();
    impl->graph = g;
    detail::Flattener key(/*specs_allowed=*/true);
    for (const graph::Node* p : g->parameters()) key.spec(TensorSpec(p->outputs[0].shape, p->outputs[0].dtype));
    impl->key = std::move(key.key);
    impl->plan = std::make_unique<exec::Plan>(passes::optimize(*g, passes::PassOptions::from_env()));
    return saved_model::LoadedSignature(ConcreteFunction(std::move(impl)), std::move(inputs), std::move(outputs));
  }

  // A subgraph's outputs, its nodes imported in a scope that sees the
  // enclosing graph's values (the tracer captures those it uses).
  std::vector<Tensor> import_subgraph(const pb::GraphProto& g, Scope scope, const std::string& where) {
    if (++depth > kMaxGraphDepth) bad(where, fmt::format("subgraphs are nested more than {} deep", kMaxGraphDepth));
    for (const pb::TensorProto& init : g.initializer())
      scope[init.name()] = from_tensor_proto(init, fmt::format("{}: initializer '{}'", where, init.name()));
    for (const pb::NodeProto& node : g.node()) import_node(node, scope);
    std::vector<Tensor> out;
    for (const pb::ValueInfoProto& vi : g.output()) {
      auto it = scope.find(vi.name());
      if (it == scope.end()) bad(where, fmt::format("subgraph output '{}' is not produced by any node", vi.name()));
      out.push_back(it->second);
    }
    --depth;
    return out;
  }

  // If: kiln::cond over the two branches (one If op when pred is symbolic).
  std::vector<Tensor> import_if(const pb::NodeProto& node, const std::vector<Tensor>& inputs, const Scope& scope,
                                const std::string& where) {
    if (inputs.empty() || !inputs[0].defined()) bad(where, "the condition input is missing");
    const pb::GraphProto& then_g = graph_attr(node, "then_branch", where);
    const pb::GraphProto& else_g = graph_attr(node, "else_branch", where);
    return cond(reshape(inputs[0], Shape{}), [&] { return import_subgraph(then_g, scope, where); },
                [&] { return import_subgraph(else_g, scope, where); });
  }

  // Loop(M, cond, vars...) {body(i, cond, vars...) -> (cond, vars...)} as
  // kiln::while_loop over (i, cond, vars...).
  std::vector<Tensor> import_loop(const pb::NodeProto& node, const std::vector<Tensor>& inputs, const Scope& scope,
                                  const std::string& where) {
    const pb::GraphProto& body = graph_attr(node, "body", where);
    const int num_vars = static_cast<int>(inputs.size()) - 2;
    if (num_vars < 0) bad(where, "Loop takes M and cond before its loop variables");
    if (body.input_size() != num_vars + 2) bad(where, fmt::format("the body takes {} inputs for {} loop variables", body.input_size(), num_vars));
    if (body.output_size() != num_vars + 1)
      throw Unimplemented(fmt::format("kiln::onnx::import_model: {}: scan outputs are not supported", where));
    Tensor trip_limit = inputs[0].defined() ? cast(reshape(inputs[0], Shape{}), DType::Int64) : Tensor();
    std::vector<Tensor> vars{constant(int64_t{0}), inputs[1].defined() ? reshape(inputs[1], Shape{}) : constant(true)};
    for (int k = 0; k < num_vars; ++k) vars.push_back(inputs[2 + k]);
    auto keep_going = [&](const std::vector<Tensor>& v) {
      return trip_limit.defined() ? logical_and(v[1], v[0] < trip_limit) : v[1];
    };
    auto step = [&](const std::vector<Tensor>& v) {
      Scope inner = scope;
      for (int k = 0; k < num_vars + 2; ++k) inner[body.input(k).name()] = v[k];
      std::vector<Tensor> out = import_subgraph(body, std::move(inner), where);
      std::vector<Tensor> next{v[0] + int64_t{1}, reshape(out[0], Shape{})};
      next.insert(next.end(), out.begin() + 1, out.end());
      return next;
    };
    std::vector<Tensor> final_vars = while_loop(keep_going, step, vars);
    return {final_vars.begin() + 2, final_vars.end()};
  }

  void import_node(const pb::NodeProto& node, Scope& values) {
    // Names from the file, escaped newlines included: a message keeps its lines.
    std::string where = fmt::format("{}: node '{}' ({})", what, core::printable(node.name()), core::printable(node.op_type()));
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      throw Unimplemented(fmt::format("kiln::onnx::import_model: {}: domain '{}' is not supported", where, node.domain()));
    const bool control_flow = node.op_type() == "If" || node.op_type() == "Loop";
    ImportFn fn = import_fn(node.op_type());
    if (!fn && !control_flow)
      throw Unimplemented(fmt::format("kiln::onnx::import_model: {}: Kiln has no op {}", where, node.op_type()));
    std::vector<Tensor> inputs;
    for (const std::string& name : node.input()) {
      if (name.empty()) {  // an optional input left out
        inputs.emplace_back();
        continue;
      }
      auto it = values.find(name);
      // Nodes are in topological order (ONNX requires it), so a name no earlier
      // node made is a cycle, a misordered graph or a typo.
      if (it == values.end())
        bad(where, fmt::format("input '{}' is not produced by an earlier node (the graph is not in topological "
                               "order, has a cycle, or names a missing value)", name));
      inputs.push_back(it->second);
    }
    auto* tracing = dynamic_cast<trace::TracingContext*>(runtime::thread_state.handler);
    const int first_node = tracing ? tracing->graph().num_nodes() : 0;
    std::vector<Tensor> outs;
    try {
      if (node.op_type() == "If") outs = import_if(node, inputs, values, where);
      else if (node.op_type() == "Loop") outs = import_loop(node, inputs, values, where);
      else if (all_concrete(inputs)) {
        // Constant inputs: the node runs now and its outputs are constants,
        // so shapes computed from constants (Shape -> Gather -> Concat ->
        // Reshape) are known when Kiln builds the graph, as Kiln's ops need.
        runtime::DispatchHandlerGuard eager(nullptr);
        outs = fn(NodeImport(node, std::move(inputs), opset, where));
      } else {
        outs = fn(NodeImport(node, std::move(inputs), opset, where));
      }
    } catch (const Error& e) {
      // Kiln's errors from the ops (inference, an allocation past the limit)
      // get the file and the node, and keep their kind.
      if (std::string_view(e.what()).starts_with("kiln::onnx")) throw;
      core::rethrow_with_context(fmt::format("kiln::onnx::import_model: {}: ", where), "");
    }
    if (tracing) name_after(tracing->graph(), first_node, node);
    if (static_cast<int>(outs.size()) < node.output_size())
      throw Unimplemented(fmt::format("kiln::onnx::import_model: {}: {} outputs asked, Kiln makes {}", where,
                                      node.output_size(), outs.size()));
    for (int i = 0; i < node.output_size(); ++i) {
      if (node.output(i).empty()) continue;
      if (!values.emplace(node.output(i), outs[i]).second)
        bad(where, fmt::format("output '{}' is defined twice", node.output(i)));
    }
  }
};

}  // namespace

saved_model::LoadedSignature import_model_from_string(const std::string& bytes, const std::string& what) {
  pb::ModelProto model;
  try {
    if (!model.ParseFromString(bytes))
      bad(what, "not an ONNX model (the protobuf message does not parse: truncated or another format)");
    return Importer{model, what}.run();
  } catch (...) {
    // Same error kinds, escaped (std::bad_alloc becomes ResourceExhausted).
    core::rethrow_edited(escaped);
  }
}

namespace {

// Closes the descriptor however the read ends.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() { ::close(fd); }
};

std::string read_model_file(const std::string& path) {
  // Opened once, then everything is asked of the open file: a path checked
  // and then opened by name could be swapped in between. O_NONBLOCK: opening
  // a FIFO with no writer must not block before fstat refuses it.
  FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0)
    throw NotFound(fmt::format("kiln::onnx::import_model: cannot open '{}': {}", path, std::strerror(errno)));
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) bad(path, fmt::format("cannot stat it: {}", std::strerror(errno)));
  // A FIFO or a device would block or never end, a directory has no bytes: only regular files are read.
  if (!S_ISREG(info.st_mode)) bad(path, "not a regular file");
  auto size = static_cast<uint64_t>(info.st_size);
  if (size > kMaxModelBytes) bad(path, fmt::format("{} bytes, more than the limit of {}", size, kMaxModelBytes));
  std::string bytes(size, '\0');
  // A file that shrank after its size was taken would leave zeros in `bytes`: refuse, not parse them.
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(file.fd, bytes.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) bad(path, fmt::format("read {} of its {} bytes: {}", done, size, std::strerror(errno)));
    if (n == 0) bad(path, fmt::format("read {} of its {} bytes", done, size));
    done += static_cast<std::size_t>(n);
  }
  return bytes;
}

}  // namespace

saved_model::LoadedSignature import_model(const std::string& path) {
  std::string bytes;
  try {
    bytes = read_model_file(path);
  } catch (...) {
    core::rethrow_edited(escaped);
  }
  return import_model_from_string(bytes, path);
}

}  // namespace kiln::onnx
