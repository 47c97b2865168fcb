// The engine's ops, one binding each. Arguments convert as TF's do (tensors,
// variables, NumPy arrays, Python values); names and defaults that users see
// are the Python package's (python/kiln/_ops.py).
#include <iostream>

#include <tuple>

#include "bindings.h"

namespace kiln::python {

namespace {

Tensor T(py::handle h) { return to_tensor(h); }

// An operand of a binary op: Python numbers stay weakly typed scalars.
struct Arg {
  Tensor tensor;
  std::optional<Scalar> scalar;
  explicit Arg(py::handle obj) {
    if (PyBool_Check(obj.ptr())) scalar.emplace(obj.ptr() == Py_True);
    else if (PyLong_Check(obj.ptr())) scalar.emplace(py::cast<int64_t>(obj));
    else if (PyFloat_Check(obj.ptr())) scalar.emplace(PyFloat_AS_DOUBLE(obj.ptr()));
    else tensor = to_tensor(obj);
  }
  Operand operand(const SourceLocation& loc) const { return scalar ? Operand(*scalar, loc) : Operand(tensor, loc); }
};

// Two operands: a NumPy array or list beside a tensor takes the tensor's dtype.
std::pair<Arg, Arg> operands(py::handle x, py::handle y) {
  Arg a(x), b(y);
  auto is_tensor = [](py::handle h) { return py::isinstance<Tensor>(h) || py::isinstance<Variable>(h); };
  if (!is_tensor(x) && !is_tensor(y)) {
    // TF's eager ops with no tensor operand: x converts on its own, y to x's dtype
    // (tf.maximum(0., [1, -1]) is float32 [1., 0.], tf.multiply(2, 3) int32; tf.maximum(0, [1.5])
    // a TypeError).
    if (a.scalar) {
      a.tensor = to_tensor(x);
      a.scalar.reset();
    }
    if (b.scalar) {
      if (PyFloat_Check(y.ptr())) check_float_operand(y, a.tensor.dtype());
      b.tensor = to_tensor(y, a.tensor.dtype());
      b.scalar.reset();
    } else if (b.tensor.dtype() != a.tensor.dtype()) {
      b.tensor = operand_tensor(y, a.tensor.dtype());
    }
    return {std::move(a), std::move(b)};
  }
  // A Python float beside an integer tensor: TF's TypeError.
  for (auto [arg, raw, known] : {std::tuple{&a, x, &b}, std::tuple{&b, y, &a}}) {
    if (!arg->scalar || !known->tensor.defined() || !PyFloat_Check(raw.ptr())) continue;
    if (is_numpy_float64_beside(raw, known->tensor.dtype())) {
      arg->tensor = operand_tensor(raw, known->tensor.dtype());
      arg->scalar.reset();
    } else {
      check_float_operand(raw, known->tensor.dtype());
    }
  }
  auto convert_other = [](Arg& other, py::handle raw, const Arg& known) {
    if (!other.scalar && known.tensor.defined() && !py::isinstance<Tensor>(raw) && !py::isinstance<Variable>(raw) &&
        other.tensor.dtype() != known.tensor.dtype())
      other.tensor = operand_tensor(raw, known.tensor.dtype());
  };
  convert_other(b, y, a);
  convert_other(a, x, b);
  return {std::move(a), std::move(b)};
}

Scalar scalar_of(py::handle obj) {
  if (PyBool_Check(obj.ptr())) return Scalar(obj.ptr() == Py_True);
  if (PyLong_Check(obj.ptr())) return Scalar(py::cast<int64_t>(obj));
  if (PyFloat_Check(obj.ptr())) return Scalar(PyFloat_AS_DOUBLE(obj.ptr()));
  if (py::isinstance<py::str>(obj) || py::isinstance<py::bytes>(obj)) return Scalar(py::cast<std::string>(obj));
  if (py::isinstance<Tensor>(obj)) {
    const Tensor& t = py::cast<const Tensor&>(obj);
    py::object v = py::cast(t).attr("_scalar_value")();
    return scalar_of(v);
  }
  if (py::hasattr(obj, "item")) return scalar_of(obj.attr("item")());
  throw py::type_error("expected a Python number, got " + std::string(py::repr(obj)));
}

// A shape argument: a 1-D integer tensor, a TensorShape, or a sequence of
// ints (None for an unknown dim). Anything else is TF's TypeError, an int past
// int64 its InvalidArgumentError (never pybind's "Unable to cast").
Shape shape_of_arg(py::handle obj) {
  if (py::isinstance<Tensor>(obj)) {
    const Tensor& t = py::cast<const Tensor&>(obj);
    if ((t.dtype() != DType::Int32 && t.dtype() != DType::Int64) || t.rank() > 1)
      throw py::type_error("a shape must be a 1-D int32 or int64 tensor, not a " + t.shape().to_string() + " " +
                           std::string(dtype_name(t.dtype())) + " tensor");
    std::vector<int64_t> dims;
    if (t.dtype() == DType::Int32) {
      auto v = t.to_vector<int32_t>();
      dims.assign(v.begin(), v.end());
    } else {
      dims = t.to_vector<int64_t>();
    }
    return Shape(dims);
  }
  if (py::hasattr(obj, "as_list")) obj = obj.attr("as_list")();
  if (!py::isinstance<py::iterable>(obj))
    throw py::type_error("a shape must be a list of ints, not " + std::string(py::repr(obj)));
  std::vector<int64_t> dims;
  for (py::handle d : obj) {
    if (d.is_none()) {
      dims.push_back(-1);
      continue;
    }
    // Python and NumPy ints (anything with __index__); not floats, bools are ints.
    py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(d.ptr()));
    if (!index) {
      PyErr_Clear();
      throw py::type_error("Cannot convert " + std::string(py::repr(obj)) + " to a shape: " +
                           std::string(py::repr(d)) + " is not an integer");
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow)
      throw InvalidArgument("Cannot convert " + std::string(py::repr(obj)) + " to a shape: " +
                            std::string(py::str(index)) + " does not fit in int64");
    dims.push_back(v);
  }
  return Shape(dims);
}

std::optional<DType> optional_dtype(py::handle obj) {
  if (obj.is_none()) return std::nullopt;
  return dtype_from_python(obj);
}

using Binary = Tensor (*)(const Operand&, const Operand&, SourceLocation);
template <Binary fn> void def_binary(py::module_& m, const char* name) {
  m.def(name, [](py::handle x, py::handle y) {
    auto [a, b] = operands(x, y);
    SourceLocation loc = user_location();
    return fn(a.operand(loc), b.operand(loc), loc);
  });
}
using Unary = Tensor (*)(Tensor, SourceLocation);
template <Unary fn> void def_unary(py::module_& m, const char* name) {
  m.def(name, [](py::handle x) { return fn(T(x), user_location()); });
}

// random_normal / random_uniform(shape, a, b, dtype, seed, stateless=False): stateless with a
// seed gives the same values on every call (keras' seeded initializers); else TF2's op seeds.
template <auto draw, auto draw_stateless> void def_random(py::module_& m, const char* name) {
  m.def(
      name,
      [](py::handle shape, double a, double b, py::handle dtype, std::optional<uint64_t> seed, bool stateless) {
        if (stateless && seed)
          return draw_stateless(shape_of_arg(shape), *seed, a, b, dtype_from_python(dtype), user_location());
        return draw(shape_of_arg(shape), a, b, dtype_from_python(dtype), seed, user_location());
      },
      py::arg("shape"), py::arg("a"), py::arg("b"), py::arg("dtype"), py::arg("seed"), py::arg("stateless") = false);
}

using Reduction = Tensor (*)(const Tensor&, const Axes&, bool, SourceLocation);
template <Reduction fn> void def_reduction(py::module_& m, const char* name) {
  m.def(name, [](py::handle x, py::object axis, bool keepdims) {
    Axes axes;
    if (py::isinstance<py::int_>(axis)) axes = Axes(py::cast<int64_t>(axis));
    else if (!axis.is_none()) axes = Axes(py::cast<std::vector<int64_t>>(axis));
    return fn(T(x), axes, keepdims, user_location());
  }, py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false);
}

Axes axes_of(py::object axis) {
  if (axis.is_none()) return Axes();
  if (py::isinstance<py::int_>(axis)) return Axes(py::cast<int64_t>(axis));
  return Axes(py::cast<std::vector<int64_t>>(axis));
}

std::vector<Tensor> tensor_list(py::iterable items) {
  std::vector<Tensor> out;
  for (py::handle h : items) out.push_back(h.is_none() ? Tensor() : T(h));
  return out;
}

py::object tensor_or_none(const Tensor& t) { return t.defined() ? py::cast(t) : py::none(); }

void bind_norms(py::module_& m) {
  m.def("top_k", [](py::handle x, int64_t k) {
    auto [values, indices] = kiln::top_k(T(x), k, user_location());
    return py::make_tuple(values, indices);
  });
  m.def("sort", [](py::handle x, int64_t axis, bool descending) {
    return kiln::sort(T(x), axis, descending, user_location());
  });
  m.def("argsort", [](py::handle x, int64_t axis, bool descending) {
    return kiln::argsort(T(x), axis, descending, user_location());
  });
  m.def("cumsum", [](py::handle x, int64_t axis, bool exclusive, bool reverse) {
    return kiln::cumsum(T(x), axis, exclusive, reverse, user_location());
  });
  m.def("cumprod", [](py::handle x, int64_t axis, bool exclusive, bool reverse) {
    return kiln::cumprod(T(x), axis, exclusive, reverse, user_location());
  });
  def_reduction<kiln::reduce_logsumexp>(m, "reduce_logsumexp");
  m.def("moments", [](py::handle x, py::object axes, bool keepdims) {
    auto [mean, variance] = kiln::moments(T(x), axes_of(axes), keepdims, user_location());
    return py::make_tuple(mean, variance);
  });
  m.def("l2_normalize", [](py::handle x, py::object axis, double epsilon) {
    return kiln::l2_normalize(T(x), axes_of(axis), epsilon, user_location());
  });
  m.def("clip_by_norm", [](py::handle t, py::handle clip_norm, py::object axes) {
    SourceLocation loc = user_location();
    return kiln::clip_by_norm(T(t), Arg(clip_norm).operand(loc), axes_of(axes), loc);
  });
  m.def("global_norm", [](py::iterable ts) { return kiln::global_norm(tensor_list(ts), user_location()); });
  m.def("clip_by_global_norm", [](py::iterable ts, double clip_norm) {
    auto [clipped, norm] = kiln::clip_by_global_norm(tensor_list(ts), clip_norm, user_location());
    py::list out;
    for (const Tensor& t : clipped) out.append(tensor_or_none(t));
    return py::make_tuple(out, norm);
  });
}

}  // namespace

void bind_ops(py::module_& m) {
  bind_norms(m);
  // tf.add: TF's math_ops.add converts y with x's dtype as a hint only, and
  // AddV2 then rejects operands of two dtypes (x alone when x is no tensor).
  m.def("add", [](py::handle x, py::handle y) {
    try {
      auto [a, b] = operands(x, y);
      SourceLocation loc = user_location();
      return kiln::add(a.operand(loc), b.operand(loc), loc);
    } catch (const OperandDTypeError& e) {
      bool x_tensor = py::isinstance<Tensor>(x) || py::isinstance<Variable>(x);
      std::string other(dtype_name(to_tensor(x_tensor ? x : y).dtype()));
      if (x_tensor) add_dtype_mismatch(other, e.alone);
      add_dtype_mismatch(e.alone, other);
    }
  });
  def_binary<kiln::subtract>(m, "subtract");
  def_binary<kiln::multiply>(m, "multiply");
  def_binary<kiln::divide>(m, "divide");
  def_binary<kiln::floordiv>(m, "floordiv");
  def_binary<kiln::mod>(m, "mod");
  def_binary<kiln::truncatediv>(m, "truncatediv");
  def_binary<kiln::truncatemod>(m, "truncatemod");
  def_binary<kiln::squared_difference>(m, "squared_difference");
  def_binary<kiln::pow>(m, "pow");
  def_binary<kiln::maximum>(m, "maximum");
  def_binary<kiln::minimum>(m, "minimum");
  def_binary<kiln::equal>(m, "equal");
  def_binary<kiln::not_equal>(m, "not_equal");
  def_binary<kiln::less>(m, "less");
  def_binary<kiln::less_equal>(m, "less_equal");
  def_binary<kiln::greater>(m, "greater");
  def_binary<kiln::greater_equal>(m, "greater_equal");
  def_binary<kiln::logical_and>(m, "logical_and");
  def_binary<kiln::logical_or>(m, "logical_or");

  def_unary<kiln::negative>(m, "negative");
  def_unary<kiln::abs>(m, "abs");
  def_unary<kiln::sign>(m, "sign");
  def_unary<kiln::floor>(m, "floor");
  def_unary<kiln::ceil>(m, "ceil");
  def_unary<kiln::round>(m, "round");
  def_unary<kiln::rint>(m, "rint");
  def_unary<kiln::square>(m, "square");
  def_unary<kiln::relu>(m, "relu");
  def_unary<kiln::sqrt>(m, "sqrt");
  def_unary<kiln::rsqrt>(m, "rsqrt");
  def_unary<kiln::exp>(m, "exp");
  def_unary<kiln::log>(m, "log");
  def_unary<kiln::log1p>(m, "log1p");
  def_unary<kiln::tanh>(m, "tanh");
  def_unary<kiln::sigmoid>(m, "sigmoid");
  def_unary<kiln::sin>(m, "sin");
  def_unary<kiln::cos>(m, "cos");
  def_unary<kiln::erf>(m, "erf");
  def_unary<kiln::real>(m, "real");
  def_unary<kiln::imag>(m, "imag");
  def_unary<kiln::conj>(m, "conj");
  def_unary<kiln::angle>(m, "angle");
  // tf.complex: Python numbers become float32 (TF's default for both parts).
  m.def("complex", [](py::handle re, py::handle im) {
    Tensor a = py::isinstance<Tensor>(re) || py::isinstance<Variable>(re) ? T(re) : to_tensor(re, DType::Float32);
    Tensor b = py::isinstance<Tensor>(im) || py::isinstance<Variable>(im) ? T(im) : to_tensor(im, a.dtype());
    return kiln::complex(a, b, user_location());
  });
  def_unary<kiln::softplus>(m, "softplus");
  def_unary<kiln::softsign>(m, "softsign");
  def_unary<kiln::elu>(m, "elu");
  def_unary<kiln::selu>(m, "selu");
  m.def("gelu", [](py::handle x, bool approximate) { return kiln::nn::gelu(T(x), approximate, user_location()); });
  m.def("silu", [](py::handle x) { return kiln::nn::silu(T(x), user_location()); });
  m.def("leaky_relu", [](py::handle x, double alpha) { return kiln::nn::leaky_relu(T(x), alpha, user_location()); });
  def_unary<kiln::logical_not>(m, "logical_not");
  def_unary<kiln::stop_gradient>(m, "stop_gradient");

  m.def("clip", [](py::handle x, py::handle lo, py::handle hi) {
    Tensor t = T(x);
    Arg a(lo), b(hi);
    if (!a.scalar && a.tensor.dtype() != t.dtype()) a.tensor = to_tensor(lo, t.dtype());
    if (!b.scalar && b.tensor.dtype() != t.dtype()) b.tensor = to_tensor(hi, t.dtype());
    SourceLocation loc = user_location();
    return kiln::clip(t, a.operand(loc), b.operand(loc), loc);
  });
  m.def("where", [](py::handle c, py::handle x, py::handle y) {
    auto [a, b] = operands(x, y);
    SourceLocation loc = user_location();
    return kiln::where(T(c), a.operand(loc), b.operand(loc), loc);
  });

  def_reduction<kiln::sum>(m, "reduce_sum");
  def_reduction<kiln::mean>(m, "reduce_mean");
  def_reduction<kiln::prod>(m, "reduce_prod");
  def_reduction<kiln::max>(m, "reduce_max");
  def_reduction<kiln::min>(m, "reduce_min");
  def_reduction<kiln::any>(m, "reduce_any");
  def_reduction<kiln::all>(m, "reduce_all");
  m.def("argmax", [](py::handle x, int64_t axis, py::handle dtype) {
    return kiln::argmax(T(x), axis, dtype_from_python(dtype), user_location());
  });
  m.def("argmin", [](py::handle x, int64_t axis, py::handle dtype) {
    return kiln::argmin(T(x), axis, dtype_from_python(dtype), user_location());
  });

  m.def("matmul", [](py::handle a, py::handle b, bool ta, bool tb) {
    Tensor x = T(a);
    Tensor y = py::isinstance<Tensor>(b) ? T(b) : to_tensor(b, x.dtype());
    return kiln::matmul(x, y, ta, tb, user_location());
  });
  m.def("einsum", [](const std::string& equation, py::iterable inputs) {
    return kiln::einsum(equation, tensor_list(inputs), user_location());
  });
  m.def("softmax", [](py::handle x, int64_t axis) { return kiln::nn::softmax(T(x), axis, user_location()); });
  m.def("log_softmax", [](py::handle x, int64_t axis) { return kiln::nn::log_softmax(T(x), axis, user_location()); });
  m.def("conv2d", [](py::handle x, py::handle f, std::vector<int64_t> strides, const std::string& padding,
                     std::vector<int64_t> dilations) {
    return kiln::nn::conv2d(T(x), T(f), strides, padding, dilations, user_location());
  });
  m.def("depthwise_conv2d", [](py::handle x, py::handle f, std::vector<int64_t> strides, const std::string& padding,
                               std::vector<int64_t> dilations) {
    return kiln::nn::depthwise_conv2d(T(x), T(f), strides, padding, dilations, user_location());
  });
  m.def("conv2d_transpose", [](py::handle x, py::handle f, std::vector<int64_t> output_shape,
                               std::vector<int64_t> strides, const std::string& padding, std::vector<int64_t> dilations) {
    return kiln::nn::conv2d_transpose(T(x), T(f), Shape(output_shape), strides, padding, dilations, user_location());
  });
  m.def("max_pool2d", [](py::handle x, std::vector<int64_t> ksize, std::vector<int64_t> strides,
                         const std::string& padding) {
    return kiln::nn::max_pool2d(T(x), ksize, strides, padding, user_location());
  });
  m.def("avg_pool2d", [](py::handle x, std::vector<int64_t> ksize, std::vector<int64_t> strides,
                         const std::string& padding) {
    return kiln::nn::avg_pool2d(T(x), ksize, strides, padding, user_location());
  });
  m.def("bias_add", [](py::handle x, py::handle b) {
    Tensor v = T(x);
    return kiln::nn::bias_add(v, to_tensor(b, py::isinstance<Tensor>(b) ? std::nullopt : std::optional(v.dtype())),
                              user_location());
  });

  m.def("reshape", [](py::handle x, py::handle shape) {
    return kiln::reshape(T(x), shape_of_arg(shape), user_location());
  });
  m.def("transpose", [](py::handle x, std::vector<int64_t> perm) {
    return kiln::transpose(T(x), perm, user_location());
  });
  m.def("shape", [](py::handle x) { return kiln::shape_of(T(x), user_location()); });
  m.def("ensure_shape", [](py::handle x, const std::vector<int64_t>& dims) {  // -1: any size
    Shape shape;
    for (int64_t d : dims) shape.push_back(d < 0 ? None : d);
    return kiln::ensure_shape(T(x), shape, user_location());
  });
  m.def("expand_dims", [](py::handle x, int64_t axis) { return kiln::expand_dims(T(x), axis, user_location()); });
  m.def("squeeze", [](py::handle x, std::vector<int64_t> axes) {
    return kiln::squeeze(T(x), axes, user_location());
  });
  m.def("concat", [](py::sequence values, int64_t axis) {
    std::vector<Tensor> ts;
    for (py::handle v : values) ts.push_back(T(v));
    return kiln::concat(ts, axis, user_location());
  });
  m.def("stack", [](py::sequence values, int64_t axis) {
    std::vector<Tensor> ts;
    for (py::handle v : values) ts.push_back(T(v));
    return kiln::stack(ts, axis, user_location());
  });
  m.def("unstack", [](py::handle x, int64_t axis) { return kiln::unstack(T(x), axis, user_location()); });
  m.def("split", [](py::handle x, int64_t num_splits, int64_t axis) {
    return kiln::split(T(x), num_splits, axis, user_location());
  });
  m.def("split_with_sizes", [](py::handle x, std::vector<int64_t> sizes, int64_t axis) {
    return kiln::split_with_sizes(T(x), sizes, axis, user_location());
  });
  m.def("slice", [](py::handle x, std::vector<int64_t> begin, std::vector<int64_t> size) {
    return kiln::slice(T(x), begin, size, user_location());
  });
  m.def("strided_slice", [](py::handle x, std::vector<int64_t> begin, std::vector<int64_t> end,
                            std::vector<int64_t> strides, int64_t begin_mask, int64_t end_mask, int64_t ellipsis_mask,
                            int64_t new_axis_mask, int64_t shrink_axis_mask) {
    SliceMasks masks{begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask};
    return kiln::strided_slice(T(x), begin, end, strides, masks, user_location());
  });
  m.def("gather", [](py::handle params, py::handle indices, int64_t axis) {
    return kiln::gather(T(params), T(indices), axis, user_location());
  });
  // updates given as Python values take the tensor's dtype.
  auto updates_like = [](py::handle updates, const Tensor& like) {
    return py::isinstance<Tensor>(updates) ? T(updates) : to_tensor(updates, like.dtype());
  };
  m.def("gather_nd", [](py::handle params, py::handle indices) {
    return kiln::gather_nd(T(params), T(indices), user_location());
  });
  m.def("tensor_scatter_nd_update", [updates_like](py::handle tensor, py::handle indices, py::handle updates) {
    Tensor t = T(tensor);
    return kiln::tensor_scatter_nd_update(t, T(indices), updates_like(updates, t), user_location());
  });
  m.def("tensor_scatter_nd_add", [updates_like](py::handle tensor, py::handle indices, py::handle updates) {
    Tensor t = T(tensor);
    return kiln::tensor_scatter_nd_add(t, T(indices), updates_like(updates, t), user_location());
  });
  m.def("scatter_nd", [](py::handle indices, py::handle updates, std::vector<int64_t> shape) {
    return kiln::scatter_nd(T(indices), T(updates), Shape(shape), user_location());
  });
  m.def("unsorted_segment_sum", [](py::handle data, py::handle ids, int64_t num_segments) {
    return kiln::unsorted_segment_sum(T(data), T(ids), num_segments, user_location());
  });
  m.def("unsorted_segment_max", [](py::handle data, py::handle ids, int64_t num_segments) {
    return kiln::unsorted_segment_max(T(data), T(ids), num_segments, user_location());
  });
  m.def("unsorted_segment_mean", [](py::handle data, py::handle ids, int64_t num_segments) {
    return kiln::unsorted_segment_mean(T(data), T(ids), num_segments, user_location());
  });
  m.def("segment_sum", [](py::handle data, py::handle ids) {
    return kiln::segment_sum(T(data), T(ids), user_location());
  });
  m.def("segment_mean", [](py::handle data, py::handle ids) {
    return kiln::segment_mean(T(data), T(ids), user_location());
  });
  m.def("one_hot", [](py::handle indices, int64_t depth, py::handle on, py::handle off, int64_t axis,
                      py::handle dtype) {
    return kiln::one_hot(T(indices), depth, scalar_of(on), scalar_of(off), axis, dtype_from_python(dtype),
                         user_location());
  });
  m.def("tile", [](py::handle x, std::vector<int64_t> multiples) {
    return kiln::tile(T(x), multiples, user_location());
  });
  m.def("pad", [](py::handle x, std::vector<std::pair<int64_t, int64_t>> paddings, py::handle value) {
    return kiln::pad(T(x), paddings, scalar_of(value), user_location());
  });
  m.def("cast", [](py::handle x, py::handle dtype) {
    return kiln::cast(T(x), dtype_from_python(dtype), user_location());
  });

  m.def("zeros", [](py::handle shape, py::handle dtype) {
    return kiln::zeros(shape_of_arg(shape), dtype_from_python(dtype), user_location());
  });
  m.def("ones", [](py::handle shape, py::handle dtype) {
    return kiln::ones(shape_of_arg(shape), dtype_from_python(dtype), user_location());
  });
  m.def("fill", [](py::handle shape, py::handle value, py::handle dtype) {
    return kiln::fill(shape_of_arg(shape), scalar_of(value), optional_dtype(dtype), user_location());
  });
  m.def("zeros_like", [](py::handle x, py::handle dtype) {
    return kiln::zeros_like(T(x), optional_dtype(dtype), user_location());
  });
  m.def("ones_like", [](py::handle x, py::handle dtype) {
    return kiln::ones_like(T(x), optional_dtype(dtype), user_location());
  });
  m.def("range", [](py::handle start, py::handle limit, py::handle delta, py::handle dtype) {
    return kiln::range(scalar_of(start), scalar_of(limit), scalar_of(delta), optional_dtype(dtype), user_location());
  });

  m.def("random_set_seed", [](uint64_t seed) { kiln::random::set_seed(seed); });
  def_random<kiln::random::normal, kiln::random::stateless_normal>(m, "random_normal");
  def_random<kiln::random::uniform, kiln::random::stateless_uniform>(m, "random_uniform");
  // Draws shaped like x: a traced batch dim may be known only when the graph runs (keras' Dropout).
  m.def("random_shuffle", [](py::handle x, std::optional<uint64_t> seed) {
    return kiln::random::shuffle(T(x), seed, user_location());
  });
  m.def("random_uniform_like", [](py::handle x, double lo, double hi, std::optional<uint64_t> seed) {
    return kiln::random::uniform_like(T(x), lo, hi, std::nullopt, seed, user_location());
  });

  // tf.init_scope: ops in the `with` block run eagerly even while a function traces (the initial
  // values of the variables keras layers create on their first call).
  struct PyInitScope {
    std::optional<InitScope> scope;
  };
  py::class_<PyInitScope>(m, "init_scope")
      .def(py::init<>())
      .def("__enter__", [](PyInitScope& s) {
        if (!s.scope) s.scope.emplace();
      })
      .def("__exit__", [](PyInitScope& s, py::args) { s.scope.reset(); });

  // tf.print: the graph-aware print. Python values print as Python prints them.
  m.def("print_", [](py::args args, const std::string& sep, const std::string& end, int64_t summarize, bool to_stdout) {
    std::vector<detail::PrintArg> items;
    PrintOptions options{sep, end, summarize, to_stdout ? &std::cout : nullptr};
    SourceLocation loc = user_location();
    items.emplace_back(options, loc);
    for (py::handle a : args) {
      if (py::isinstance<Tensor>(a) || py::isinstance<Variable>(a)) items.emplace_back(T(a), loc);
      else if (PyList_Check(a.ptr()) && py::len(a) > 0 && (py::isinstance<Tensor>(a[py::int_(0)]))) {
        std::vector<Tensor> ts;
        for (py::handle x : a) ts.push_back(T(x));
        items.emplace_back(ts, loc);
      } else {
        items.emplace_back(std::string(py::str(a)), loc);
      }
    }
    detail::print_args(items, loc);
  }, py::arg("sep") = " ", py::arg("end") = "\n", py::arg("summarize") = 3, py::arg("to_stdout") = false);
}

}  // namespace kiln::python
