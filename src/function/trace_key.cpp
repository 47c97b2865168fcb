// Trace keys: building, hashing, comparing, and their text.
#include <fmt/format.h>

#include "function/traced_graph.h"

namespace kiln {

std::string TensorSpec::to_string() const {
  if (name.empty()) return fmt::format("TensorSpec(shape={}, dtype={})", shape.to_string(), dtype_name(dtype));
  return fmt::format("TensorSpec(shape={}, dtype={}, name='{}')", shape.to_string(), dtype_name(dtype), name);
}

namespace detail {

namespace {
std::size_t mix(std::size_t h, std::size_t v) { return h ^ (v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2)); }
}  // namespace

void TraceKey::add(KeyAtom atom) {
  hash = mix(hash, static_cast<std::size_t>(atom.kind) * 16 + static_cast<std::size_t>(atom.dtype));
  if (atom.kind == KeyAtom::Kind::Tensor || atom.kind == KeyAtom::Kind::Variable) {
    hash = mix(hash, static_cast<std::size_t>(atom.shape.rank() + 1));
    for (int64_t d : atom.shape.dims()) hash = mix(hash, static_cast<std::size_t>(d));
  }
  hash = mix(hash, static_cast<std::size_t>(atom.i));
  if (atom.kind == KeyAtom::Kind::Float) hash = mix(hash, std::hash<double>()(atom.f));
  if (!atom.s.empty()) hash = mix(hash, std::hash<std::string>()(atom.s));
  atoms.push_back(std::move(atom));
}

bool operator==(const TraceKey& a, const TraceKey& b) {
  if (a.hash != b.hash || a.atoms.size() != b.atoms.size()) return false;
  for (std::size_t i = 0; i < a.atoms.size(); ++i)
    if (!(a.atoms[i] == b.atoms[i])) return false;
  return true;
}

void Flattener::tensor(const Tensor& t) {
  if (!t.defined()) throw InvalidArgument("kiln::function: an argument is a null tensor");
  key.add({.kind = KeyAtom::Kind::Tensor, .dtype = t.dtype(), .shape = t.shape()});
  leaves.push_back(t);
}

void Flattener::spec(const TensorSpec& spec) {
  if (!specs_allowed_)
    throw InvalidArgument(fmt::format(
        "kiln::function: {} is a spec, not a value; pass specs to get_concrete_function",
        spec.to_string()));
  key.add({.kind = KeyAtom::Kind::Tensor, .dtype = spec.dtype, .shape = spec.shape});
  if (!spec.name.empty() || !spec_names_.empty()) {
    spec_names_.resize(leaves.size());
    spec_names_.push_back(spec.name);
    // A front end that names the leaves itself (Python) keeps its names.
    if (!leaf_names.fn) leaf_names = {[](const void* self) { return static_cast<const Flattener*>(self)->spec_names_; }, this};
  }
  leaves.push_back(Tensor());
}

void Flattener::variable(const Tensor& handle, DType dtype, const Shape& shape) {
  key.add({.kind = KeyAtom::Kind::Variable, .dtype = dtype, .shape = shape});
  leaves.push_back(handle);
}

void Flattener::resource(const Tensor& handle, std::string key) {
  this->key.add({.kind = KeyAtom::Kind::Resource, .dtype = DType::Resource, .s = std::move(key)});
  leaves.push_back(handle);
}

void Flattener::integer(int64_t v, DType natural) {
  key.add({.kind = KeyAtom::Kind::Int, .dtype = natural, .i = v});
}

void Flattener::floating(double v, DType natural) {
  key.add({.kind = KeyAtom::Kind::Float, .dtype = natural, .f = v});
}

void Flattener::boolean(bool v) { key.add({.kind = KeyAtom::Kind::Bool, .dtype = DType::Bool, .i = v}); }

void Flattener::string(std::string v) {
  key.add({.kind = KeyAtom::Kind::String, .dtype = DType::String, .s = std::move(v)});
}

void Flattener::begin(KeyAtom::Kind kind, int64_t size, std::string name) {
  key.add({.kind = kind, .i = size, .s = std::move(name)});
}

void Flattener::end() { key.add({.kind = KeyAtom::Kind::End}); }

}  // namespace detail

namespace function_impl {

std::string atom_text(const detail::KeyAtom& a) {
  switch (a.kind) {
    case detail::KeyAtom::Kind::Tensor: return fmt::format("{} {}", dtype_name(a.dtype), a.shape.to_string());
    case detail::KeyAtom::Kind::Variable:
      return fmt::format("Variable {} {}", dtype_name(a.dtype), a.shape.to_string());
    case detail::KeyAtom::Kind::Int: return std::to_string(a.i);
    case detail::KeyAtom::Kind::Float: return fmt::format("{}", a.f);
    case detail::KeyAtom::Kind::Bool: return a.i ? "true" : "false";
    case detail::KeyAtom::Kind::String: return fmt::format("\"{}\"", a.s);
    case detail::KeyAtom::Kind::List: return fmt::format("a list of {}", a.i);
    case detail::KeyAtom::Kind::Tuple: return fmt::format("a tuple of {}", a.i);
    case detail::KeyAtom::Kind::Map: return fmt::format("a map of {}", a.i);
    case detail::KeyAtom::Kind::Optional: return a.i ? "an optional with a value" : "an empty optional";
    case detail::KeyAtom::Kind::Struct: return fmt::format("a struct of {} fields", a.i);
    case detail::KeyAtom::Kind::End: return "the end of a container";
    case detail::KeyAtom::Kind::Resource: return a.s;
  }
  return "?";
}

}  // namespace function_impl

std::string RetraceRecord::text() const {
  const char* why = "";
  switch (cause) {
    case RetraceCause::Shape: why = "shape changed"; break;
    case RetraceCause::DType: why = "dtype changed"; break;
    case RetraceCause::Value: why = "value changed; C++ values are part of the trace key"; break;
    case RetraceCause::Structure: why = "structure changed"; break;
    case RetraceCause::Relaxed: why = "shape changed; traced again with those dims unknown"; break;
    case RetraceCause::NewVariable: why = "new variable"; break;
  }
  return fmt::format("trace {}: {}: {} -> {} ({})", trace_number, path, old_spec, new_spec, why);
}

Outputs::operator Tensor() const {
  if (values_.size() != 1)
    throw InvalidArgument(fmt::format(
        "the function returned {} tensors; index the outputs instead of converting them to one Tensor",
        values_.size()));
  return values_[0];
}

}  // namespace kiln
