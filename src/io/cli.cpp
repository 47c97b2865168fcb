// kiln-cli's commands. `show` prints signatures as TensorFlow's
// saved_model_cli does, so its readers recognise them.
#include "io/cli.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>

#include "core/tensor_impl.h"
#include "kiln/array.h"
#include "kiln/data.h"
#include "kiln/math.h"
#include "function/traced_graph.h"
#include "io/cli_board.h"
#include "io/json_util.h"
#include "io/printable.h"
#include "kiln/onnx.h"
#include "kiln/saved_model.h"
#include "runtime/format.h"

namespace kiln::io {

std::string tf_dtype(DType d) {
  switch (d) {
    case DType::Float32: return "DT_FLOAT";
    case DType::Float64: return "DT_DOUBLE";
    case DType::Int32: return "DT_INT32";
    case DType::Int64: return "DT_INT64";
    case DType::UInt8: return "DT_UINT8";
    case DType::Bool: return "DT_BOOL";
    case DType::String: return "DT_STRING";
    case DType::Resource: return "DT_RESOURCE";
    case DType::Float16: return "DT_HALF";
    case DType::BFloat16: return "DT_BFLOAT16";
    case DType::Int8: return "DT_INT8";
    case DType::Int16: return "DT_INT16";
    case DType::UInt16: return "DT_UINT16";
    case DType::UInt32: return "DT_UINT32";
    case DType::UInt64: return "DT_UINT64";
    case DType::Complex64: return "DT_COMPLEX64";
    case DType::Complex128: return "DT_COMPLEX128";
  }
  return "DT_INVALID";
}

namespace {

using saved_model::Loaded;
using saved_model::LoadedObject;
using saved_model::TensorInfo;

constexpr const char* kUsage =
    "usage:\n"
    "  kiln-cli show --dir DIR [--all | --signature_def NAME]\n"
    "  kiln-cli run --dir DIR --signature_def NAME --input NAME=VALUE [--input ...]\n"
    "      VALUE is a number, true/false, or nested lists such as [[1,2],[3,4]]\n"
    "  kiln-cli run ... --input_idx NAME=FILE[:INDEX]\n"
    "      an IDX file (MNIST's format), or its row INDEX, shaped to fit the input; bytes\n"
    "      become floats in [0, 1] for a floating-point input\n"
    "  kiln-cli run ... --outdir DIR\n"
    "      also writes each output, bit for bit, to DIR/NAME.npy (NumPy's format)\n"
    "  kiln-cli run --onnx FILE --input NAME=VALUE [--input ...] [--outdir DIR]\n"
    "      runs an ONNX model (imported into a Kiln graph) instead of a signature\n"
    "  kiln-cli run ... --timeout SECONDS\n"
    "      stops the run (DeadlineExceeded) once it has taken SECONDS\n"
    "  kiln-cli export --dir DIR --signature_def NAME --onnx FILE\n"
    "      writes the signature as an ONNX model (opset 17)\n"
    "  kiln-cli graph --dir DIR --function NAME [--dot]\n"
    "      NAME is a function of the object tree (child/function) or a signature\n"
    "  kiln-cli board LOGDIR [--out report.html] [--title TITLE]\n"
    "      one self-contained HTML page of a TensorBoard log directory (runs the\n"
    "      Python package's kiln.board with /usr/bin/python3, or $KILN_PYTHON)\n";

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Args {
  std::string command;
  std::map<std::string, std::vector<std::string>> options;
  bool has(const std::string& k) const { return options.count(k) != 0; }
  const std::string& one(const std::string& k) const {
    auto it = options.find(k);
    if (it == options.end() || it->second.empty()) throw UsageError(fmt::format("missing --{}", k));
    if (it->second.size() > 1) throw UsageError(fmt::format("--{} given more than once", k));
    return it->second[0];
  }
};

Args parse_args(const std::vector<std::string>& argv) {
  if (argv.empty()) throw UsageError("no command");
  Args a;
  a.command = argv[0];
  const std::map<std::string, bool> known = {{"dir", true},   {"all", false},      {"signature_def", true},
                                             {"input", true}, {"input_exprs", true}, {"input_idx", true}, {"function", true},
                                             {"dot", false}, {"outdir", true}, {"onnx", true},
                                             {"timeout", true}};
  for (std::size_t i = 1; i < argv.size(); ++i) {
    std::string s = argv[i];
    if (s.rfind("--", 0) != 0) throw UsageError(fmt::format("unexpected argument '{}'", s));
    s = s.substr(2);
    std::string value;
    bool inline_value = false;
    if (auto eq = s.find('='); eq != std::string::npos) {
      if (auto k = known.find(s.substr(0, eq)); k != known.end() && k->second) {
        value = s.substr(eq + 1);
        s = s.substr(0, eq);
        inline_value = true;
      }
    }
    auto k = known.find(s);
    if (k == known.end()) throw UsageError(fmt::format("unknown option --{}", s));
    if (k->second && !inline_value) {
      if (i + 1 >= argv.size()) throw UsageError(fmt::format("--{} needs a value", s));
      value = argv[++i];
    }
    a.options[s == "input_exprs" ? "input" : s].push_back(value);
  }
  return a;
}

// (-1, 28, 28, 1) with -1 for unknown dims; unknown_rank.
std::string tf_shape(const Shape& s) {
  if (!s.has_known_rank()) return "unknown_rank";
  std::vector<std::string> dims;
  for (int64_t d : s.dims()) dims.push_back(std::to_string(d < 0 ? -1 : d));
  if (dims.size() == 1) return "(" + dims[0] + ",)";
  return fmt::format("({})", fmt::join(dims, ", "));
}

// A name from the model's file on one line: control characters, newlines
// included, escaped (the output as a whole keeps the lines Kiln lays out).
std::string name_text(std::string_view name) { return printable(name); }

void print_tensor_info(std::ostream& out, const char* kind, const TensorInfo& t) {
  out << fmt::format("    {}['{}'] tensor_info:\n        dtype: {}\n        shape: {}\n        name: {}\n", kind,
                     name_text(t.name), tf_dtype(t.dtype), tf_shape(t.shape), name_text(t.tensor_name));
}

void print_signature(std::ostream& out, const std::string& name, const saved_model::LoadedSignature& sig) {
  out << fmt::format("signature_def['{}']:\n", name_text(name));
  out << "  The given SavedModel SignatureDef contains the following input(s):\n";
  for (const TensorInfo& t : sig.inputs()) print_tensor_info(out, "inputs", t);
  out << "  The given SavedModel SignatureDef contains the following output(s):\n";
  for (const TensorInfo& t : sig.outputs()) print_tensor_info(out, "outputs", t);
  out << "  Method name is: kiln/serving/predict\n";
}

void print_functions(std::ostream& out, const LoadedObject& obj, const std::string& prefix) {
  for (const auto& [name, fn] : obj.functions()) {
    out << fmt::format("  Function Name: '{}{}'\n", name_text(prefix), name_text(name));
    int option = 0;
    for (const ConcreteFunction& f : fn.concrete_functions()) {
      out << fmt::format("    Option #{}\n      Callable with:\n", ++option);
      const auto& params = f.impl()->graph->parameters();
      for (std::size_t i = 0; i < params.size(); ++i)
        out << fmt::format("        Argument #{}\n          {}: {}\n", i + 1, name_text(params[i]->name),
                           TensorSpec(params[i]->outputs[0].shape, params[i]->outputs[0].dtype).to_string());
    }
  }
  for (const auto& [name, child] : obj.children()) print_functions(out, child, prefix + name + "/");
}

void print_variables(std::ostream& out, const LoadedObject& obj, const std::string& prefix) {
  for (const auto& [name, v] : obj.own_variables())
    out << fmt::format("  {}{}: name='{}' shape={} dtype={}{}\n", name_text(prefix), name_text(name), name_text(v.name()),
                       v.shape().to_string(),
                       dtype_name(v.dtype()), v.trainable() ? "" : " (not trainable)");
  for (const auto& [name, child] : obj.children()) print_variables(out, child, prefix + name + "/");
}

int show(const Args& a, std::ostream& out) {
  Loaded model = saved_model::load(a.one("dir"));
  if (a.has("signature_def")) {
    print_signature(out, a.one("signature_def"), model.signature(a.one("signature_def")));
    return 0;
  }
  if (!a.has("all")) {
    out << "The given SavedModel contains the following signature_def keys:\n";
    for (const auto& [name, sig] : model.signatures()) out << fmt::format("SignatureDef key: \"{}\"\n", name_text(name));
    return 0;
  }
  out << fmt::format("SavedModel (kiln format version {}) contains the following SignatureDefs:\n",
                     model.format_version());
  for (const auto& [name, sig] : model.signatures()) {
    out << "\n";
    print_signature(out, name, sig);
  }
  out << "\nConcrete Functions:\n";
  print_functions(out, model, "");
  out << "\nVariables:\n";
  print_variables(out, model, "");
  return 0;
}

// A tensor of `dtype` from a JSON value: a number, a bool, a string, or
// nested lists of them (all rows the same length).
Tensor parse_value(const std::string& input, const std::string& text, DType dtype) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception&) {
    if (dtype != DType::String)
      throw InvalidArgument(fmt::format("--input {}: '{}' is not a number, true/false or a list", input, text));
    j = text;
  }
  std::vector<int64_t> dims;
  for (const json* p = &j; p->is_array(); p = &(*p)[0]) {
    dims.push_back(static_cast<int64_t>(p->size()));
    if (p->empty()) break;
  }
  Shape shape(dims);
  std::vector<const json*> leaves;
  std::function<void(const json&, std::size_t)> walk = [&](const json& v, std::size_t depth) {
    if (depth < dims.size()) {
      if (!v.is_array() || static_cast<int64_t>(v.size()) != dims[depth])
        throw InvalidArgument(fmt::format("--input {}: the nested lists are not rectangular", input));
      for (const json& e : v) walk(e, depth + 1);
    } else {
      if (v.is_array()) throw InvalidArgument(fmt::format("--input {}: the nested lists are not rectangular", input));
      leaves.push_back(&v);
    }
  };
  walk(j, 0);
  Tensor t = core::make_tensor(dtype, shape);
  const std::string input_where = fmt::format("--input {}: element ", input);
  const Where elements(input_where);
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const json& v = *leaves[i];
    const Where where(elements, "", i);  // its text is built only for an error
    switch (dtype) {
      case DType::Float32: core::data_of<float>(t)[i] = static_cast<float>(parse_double(v, where)); break;
      case DType::Float64: core::data_of<double>(t)[i] = parse_double(v, where); break;
      case DType::Int32: {
        int64_t x = parse_int(v, where);
        if (x < INT32_MIN || x > INT32_MAX) json_fail(where, "out of int32 range");
        core::data_of<int32_t>(t)[i] = static_cast<int32_t>(x);
        break;
      }
      case DType::Int64: core::data_of<int64_t>(t)[i] = parse_int(v, where); break;
      case DType::UInt8: {
        int64_t x = parse_int(v, where);
        if (x < 0 || x > 255) json_fail(where, "out of uint8 range");
        core::data_of<uint8_t>(t)[i] = static_cast<uint8_t>(x);
        break;
      }
      case DType::Bool: core::data_of<bool>(t)[i] = parse_bool(v, where); break;
      case DType::String: core::data_of<std::string>(t)[i] = parse_string(v, where); break;
      case DType::Resource: json_fail(where, "a resource input cannot be given on the command line");
    }
  }
  return t;
}

// An IDX file, or its row INDEX ("file:3"), in the input's dtype and shape:
// the one unknown dim (the batch) takes what is left.
Tensor read_idx_input(const std::string& input, const std::string& spec, const TensorInfo& info) {
  std::string path = spec;
  std::optional<int64_t> row;
  if (auto colon = spec.rfind(':'); colon != std::string::npos && colon + 1 < spec.size() &&
                                     spec.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
    path = spec.substr(0, colon);
    row = std::stoll(spec.substr(colon + 1));
  }
  Tensor t = data::read_idx(path);
  if (row) {
    if (t.rank() < 1 || *row >= t.shape()[0])
      throw InvalidArgument(fmt::format("--input_idx {}: {} has {} rows, no row {}", input, path,
                                        t.rank() < 1 ? 0 : t.shape()[0], *row));
    t = t[*row];
  }
  if (is_floating(info.dtype) && t.dtype() == DType::UInt8) t = cast(t, info.dtype) / 255.0;
  else if (t.dtype() != info.dtype) t = cast(t, info.dtype);
  if (info.shape.has_known_rank()) {
    std::vector<int64_t> dims(info.shape.begin(), info.shape.end());
    int64_t known = 1, unknown = 0;
    for (int64_t d : dims) d < 0 ? ++unknown : known *= d;
    if (unknown > 1 || (unknown == 0 && known != t.size()) || (unknown == 1 && (known == 0 || t.size() % known != 0)))
      throw InvalidArgument(fmt::format("--input_idx {}: {} values do not fit the input's shape {}", input, t.size(),
                                        info.shape.to_string()));
    for (int64_t& d : dims)
      if (d < 0) d = t.size() / known;
    t = reshape(t, Shape(dims));
  }
  return t;
}

// NumPy's .npy format (version 1.0): magic, header dict padded to 64 bytes,
// then the C-order bytes.
std::string npy_descr(DType d) {
  switch (d) {
    case DType::Float32: return "<f4";
    case DType::Float64: return "<f8";
    case DType::Int32: return "<i4";
    case DType::Int64: return "<i8";
    case DType::UInt8: return "|u1";
    case DType::Bool: return "|b1";
    default: throw Unimplemented(fmt::format("--outdir: a {} output has no .npy form", dtype_name(d)));
  }
}

void write_npy(const std::filesystem::path& path, const Tensor& t) {
  std::vector<std::string> dims;
  for (int64_t d : t.shape()) dims.push_back(std::to_string(d));
  std::string shape = dims.size() == 1 ? dims[0] + "," : fmt::format("{}", fmt::join(dims, ", "));
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", npy_descr(t.dtype()), shape);
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw NotFound(fmt::format("--outdir: cannot write {}", path.string()));
  const char magic[] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<char>(header.size() & 0xff),
                        static_cast<char>(header.size() >> 8)};
  f.write(magic, sizeof magic);
  f << header;
  f.write(static_cast<const char*>(core::raw_data(t)), static_cast<std::streamsize>(t.size() * dtype_size(t.dtype())));
  if (!f) throw Internal(fmt::format("--outdir: writing {} failed", path.string()));
}

int run(const Args& a, std::ostream& out) {
  std::optional<Loaded> model;
  std::optional<saved_model::LoadedSignature> imported;
  if (a.has("onnx")) {
    if (a.has("dir") || a.has("signature_def")) throw UsageError("--onnx runs a model file: no --dir or --signature_def");
    imported = onnx::import_model(a.one("onnx"));
  } else {
    model = saved_model::load(a.one("dir"));
  }
  const saved_model::LoadedSignature& sig = imported ? *imported : model->signature(a.one("signature_def"));
  const std::string sig_name = imported ? a.one("onnx") : a.one("signature_def");
  std::map<std::string, Tensor> inputs;
  for (const char* option : {"input", "input_idx"}) {
    if (!a.has(option)) continue;
    for (const std::string& spec : a.options.at(option)) {
      auto eq = spec.find('=');
      if (eq == std::string::npos) throw UsageError(fmt::format("--{} '{}' is not NAME=VALUE", option, spec));
      std::string name = spec.substr(0, eq);
      const TensorInfo* info = nullptr;
      for (const TensorInfo& t : sig.inputs())
        if (t.name == name) info = &t;
      if (!info) {
        std::vector<std::string> names;
        for (const TensorInfo& t : sig.inputs()) names.push_back(name_text(t.name));
        throw InvalidArgument(fmt::format("signature '{}' has no input '{}' (inputs: {})", name_text(sig_name),
                                          name_text(name), fmt::join(names, ", ")));
      }
      if (inputs.count(name)) throw UsageError(fmt::format("input {} given twice", name));
      std::string value = spec.substr(eq + 1);
      inputs.emplace(name, std::string(option) == "input" ? parse_value(name, value, info->dtype)
                                                          : read_idx_input(name, value, *info));
    }
  }
  std::optional<double> timeout;
  if (a.has("timeout")) {
    const std::string& text = a.one("timeout");
    char* end = nullptr;
    double seconds = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(seconds > 0) || !std::isfinite(seconds))
      throw UsageError(fmt::format("--timeout '{}' is not a positive number of seconds", text));
    timeout = seconds;
  }
  std::map<std::string, Tensor> outputs =
      timeout ? sig(inputs, {.timeout = std::chrono::duration<double>(*timeout)}) : sig(inputs);
  std::optional<std::filesystem::path> outdir;
  if (a.has("outdir")) {
    outdir = a.one("outdir");
    std::filesystem::create_directories(*outdir);
  }
  for (const TensorInfo& t : sig.outputs()) {
    out << fmt::format("Result for output key {}:\n{}\n", name_text(t.name), runtime::numpy_str(outputs.at(t.name)));
    if (!outdir) continue;
    // The name comes from the model's file: it must not leave the directory.
    if (t.name.empty() || t.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
                              std::string::npos)
      throw InvalidArgument(fmt::format("--outdir: output name '{}' is not a plain file name", name_text(t.name)));
    std::filesystem::path file = *outdir / (t.name + ".npy");
    write_npy(file, outputs.at(t.name));
    out << fmt::format("Output {} is saved to {}\n", t.name, file.string());
  }
  return 0;
}

int export_onnx(const Args& a, std::ostream& out) {
  Loaded model = saved_model::load(a.one("dir"));
  onnx::export_(model.signature(a.one("signature_def")), a.one("onnx"));
  out << fmt::format("Signature {} is exported to {} (ONNX opset {})\n", a.one("signature_def"), a.one("onnx"),
                     onnx::kOpsetVersion);
  return 0;
}

// "child/fn" through the object tree, else a signature's function.
std::vector<ConcreteFunction> find_function(const Loaded& model, const std::string& path) {
  const LoadedObject* obj = &model;
  std::string rest = path;
  for (auto slash = rest.find('/'); slash != std::string::npos; slash = rest.find('/')) {
    obj = &obj->child(rest.substr(0, slash));
    rest = rest.substr(slash + 1);
  }
  for (const auto& [name, fn] : obj->functions())
    if (name == rest) return fn.concrete_functions();
  if (obj == &model && model.signatures().count(path)) return {model.signature(path).function()};
  return obj->function(rest).concrete_functions();  // throws NotFound listing the functions
}

int graph(const Args& a, std::ostream& out) {
  Loaded model = saved_model::load(a.one("dir"));
  std::vector<ConcreteFunction> traces = find_function(model, a.one("function"));
  for (std::size_t i = 0; i < traces.size(); ++i) {
    if (traces.size() > 1) out << fmt::format("// trace {} of {}: {}\n", i + 1, traces.size(), traces[i].to_string());
    out << (a.has("dot") ? traces[i].graph().to_dot() : traces[i].graph().to_string());
  }
  return 0;
}

}  // namespace

int kiln_cli_main(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  // Names, strings and errors may come from a hostile file: everything is
  // printed through io::printable (no terminal escape sequences), the
  // command's output once it is complete.
  // board's arguments are its own (a positional LOGDIR): the Python side parses them.
  if (!argv.empty() && argv[0] == "board") return run_board({argv.begin() + 1, argv.end()}, out, err);
  std::ostringstream text;
  auto print_output = [&] { out << printable(text.str(), /*keep_newlines=*/true); };
  try {
    Args a = parse_args(argv);
    int status = -1;
    if (a.command == "show") {
      status = show(a, text);
    } else if (a.command == "run") {
      status = run(a, text);
    } else if (a.command == "export") {
      status = export_onnx(a, text);
    } else if (a.command == "graph") {
      status = graph(a, text);
    } else if (a.command == "help" || a.command == "--help") {
      text << kUsage;
      status = 0;
    } else {
      throw UsageError(fmt::format("unknown command '{}'", a.command));
    }
    print_output();
    return status;
  } catch (const UsageError& e) {
    err << "kiln-cli: " << printable(e.what()) << "\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    print_output();
    err << "kiln-cli: " << printable(e.what(), /*keep_newlines=*/true) << "\n";
    return 1;
  }
}

}  // namespace kiln::io
