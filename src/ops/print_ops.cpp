// PrintV2: tf.print as one stateful op, so that inside kiln::function it is
// a graph node that prints on every call. Also operator<< for tensors.
//
// Attrs (TensorFlow's StringFormat + PrintV2 in one op):
//   template       the whole line: literal text, with "{}" where each input
//                  tensor goes and "{{" / "}}" for literal braces (the
//                  separators are already in it);
//   end            written after the line;
//   summarize      elements shown at each end of every dimension (-1: all);
//   output_stream  "stderr", "stdout" or "stream" (a registered std::ostream,
//                  by stream_id: a pointer never enters an attr, so a graph
//                  loaded from a file cannot name a bad address).
#include <charconv>
#include <iostream>
#include <mutex>
#include <sstream>

#include "schema/op_def.h"
#include "kiln/print.h"
#include "runtime/dispatch.h"
#include "runtime/format.h"

namespace kiln {
namespace ops {

namespace {

// std::ostreams named by print options, by id. Never shrinks: a traced graph
// keeps the id.
struct StreamTable {
  std::mutex mutex;
  std::vector<std::ostream*> streams;
};
StreamTable& stream_table() {
  static auto* table = new StreamTable();
  return *table;
}

int64_t register_stream(std::ostream* os) {
  StreamTable& t = stream_table();
  std::lock_guard<std::mutex> lock(t.mutex);
  for (std::size_t i = 0; i < t.streams.size(); ++i)
    if (t.streams[i] == os) return static_cast<int64_t>(i);
  t.streams.push_back(os);
  return static_cast<int64_t>(t.streams.size() - 1);
}

std::ostream* find_stream(int64_t id) {
  StreamTable& t = stream_table();
  std::lock_guard<std::mutex> lock(t.mutex);
  return id >= 0 && id < static_cast<int64_t>(t.streams.size()) ? t.streams[id] : nullptr;
}

// Lines printed from several threads do not interleave.
std::mutex& output_mutex() {
  static auto* m = new std::mutex();
  return *m;
}

// The number of "{}" in a template, or -1 when a brace is unmatched.
int count_placeholders(const std::string& tmpl) {
  int count = 0;
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    char c = tmpl[i];
    if (c != '{' && c != '}') continue;
    if (i + 1 >= tmpl.size()) return -1;
    char next = tmpl[i + 1];
    if (c == '{' && next == '}') ++count;
    else if (c != next) return -1;
    ++i;
  }
  return count;
}

void append_escaped_braces(std::string& out, std::string_view text) {
  for (char c : text) {
    out += c;
    if (c == '{' || c == '}') out += c;
  }
}

void print_infer(schema::InferContext& c) {
  const schema::Attrs& a = c.attrs();
  const std::string& tmpl = a.get_string("template");
  int placeholders = count_placeholders(tmpl);
  if (placeholders < 0)
    c.fail("the template \"{}\" has an unmatched brace (write a literal brace as {{{{ or }}}})", tmpl);
  if (placeholders != c.num_inputs())
    c.fail("the template has {} placeholders but {} tensors were given", placeholders, c.num_inputs());
  const std::string& stream = a.get_string("output_stream");
  if (stream == "stream") {
    int64_t id = a.get_int("stream_id");
    if (!find_stream(id))
      c.fail("output stream id {} is not registered in this process (a std::ostream given in "
             "PrintOptions is known only to the process that printed to it)",
             id);
  } else if (stream != "stderr" && stream != "stdout") {
    c.fail("output_stream must be \"stderr\", \"stdout\" or \"stream\", got \"{}\"", stream);
  }
  (void)a.get_int("summarize");
  (void)a.get_string("end");
}

void print_kernel(schema::KernelContext& c) {
  const std::string& tmpl = c.attrs.get_string("template");
  int64_t summarize = c.attrs.get_int("summarize");
  std::string line;
  // tf.print prints a lone scalar string as it is, without quotes.
  if (tmpl == "{}" && c.inputs.size() == 1 && c.inputs[0].dtype() == DType::String &&
      c.inputs[0].rank() == 0) {
    line = core::data_of<std::string>(c.inputs[0])[0];
  } else {
    std::size_t next = 0;
    for (std::size_t i = 0; i < tmpl.size(); ++i) {
      char ch = tmpl[i];
      if (ch == '{' && i + 1 < tmpl.size() && tmpl[i + 1] == '}') {
        if (next < c.inputs.size()) line += runtime::summarize_value(c.inputs[next++], summarize);
        ++i;
      } else {
        line += ch;
        if ((ch == '{' || ch == '}') && i + 1 < tmpl.size() && tmpl[i + 1] == ch) ++i;
      }
    }
  }
  line += c.attrs.get_string("end");
  const std::string& kind = c.attrs.get_string("output_stream");
  std::ostream* os = &std::cerr;
  if (kind == "stdout") os = &std::cout;
  else if (kind == "stream") os = find_stream(c.attrs.get_int("stream_id"));
  if (!os) return;
  std::lock_guard<std::mutex> lock(output_mutex());
  *os << line << std::flush;
}

std::ostream& null_stream() {
  static auto* os = new std::ostream(nullptr);
  return *os;
}

std::vector<schema::OpSample> print_samples() {
  // Printed into a stream that drops everything, so registry-wide tests stay
  // quiet.
  schema::Attrs a{{"template", std::string("x: {} y: {}")}, {"end", std::string("\n")},
                  {"summarize", int64_t(3)}, {"output_stream", std::string("stream")}};
  a.set("stream_id", register_stream(&null_stream()));
  return {{{constant({1.5f, 2.0f}), constant({{1, 2}, {3, 4}})}, a}};
}

constexpr detail::OpDef kPrintV2{.name = "PrintV2", .infer = print_infer, .kernel = print_kernel,
                                 .flags = schema::kStateful | schema::kNotDifferentiable, .samples = print_samples};

}  // namespace

void register_print_ops(schema::OpRegistry& r) { r.add(kPrintV2); }

}  // namespace ops

namespace detail {

PrintArg::PrintArg(float v, SourceLocation loc)
    : kind_(Kind::Text), text_(runtime::numpy_scalar_str(v)), loc_(loc) {}
PrintArg::PrintArg(double v, SourceLocation loc)
    : kind_(Kind::Text), text_(runtime::numpy_scalar_str(v)), loc_(loc) {}

void print_args(std::span<const PrintArg> args, const SourceLocation& loc) {
  PrintOptions defaults;
  const PrintOptions* options = &defaults;
  for (const PrintArg& a : args)
    if (a.kind() == PrintArg::Kind::Options) options = &a.options();

  std::string tmpl;
  SmallVector<Tensor, 4> inputs;
  bool first = true;
  for (const PrintArg& a : args) {
    if (a.kind() == PrintArg::Kind::Options) continue;
    if (!first) ops::append_escaped_braces(tmpl, options->sep);
    first = false;
    switch (a.kind()) {
      case PrintArg::Kind::Tensor:
        inputs.push_back(a.tensors()[0]);
        tmpl += "{}";
        break;
      case PrintArg::Kind::TensorList:
        // As tf.print shows a Python list of tensors: [t1, t2].
        tmpl += "[";
        for (std::size_t i = 0; i < a.tensors().size(); ++i) {
          if (i) tmpl += ", ";
          inputs.push_back(a.tensors()[i]);
          tmpl += "{}";
        }
        tmpl += "]";
        break;
      default:
        ops::append_escaped_braces(tmpl, a.text());
    }
  }

  schema::Attrs attrs{{"template", std::move(tmpl)}, {"end", options->end}, {"summarize", options->summarize}};
  std::ostream* os = options->stream;
  if (!os || os == &std::cerr) {
    attrs.set("output_stream", std::string("stderr"));
  } else if (os == &std::cout) {
    attrs.set("output_stream", std::string("stdout"));
  } else {
    attrs.set("output_stream", std::string("stream"));
    attrs.set("stream_id", ops::register_stream(os));
  }
  runtime::dispatch(ops::kPrintV2, std::span<const Tensor>(inputs.data(), inputs.size()), std::move(attrs), loc);
}

}  // namespace detail

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << runtime::tensor_repr(t); }

std::string to_string(const Tensor& t) { return runtime::tensor_repr(t); }

}  // namespace kiln
