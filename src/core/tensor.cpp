// Host access to concrete tensors: item, to_vector, data, truth value.
#include <fmt/format.h>

#include "core/dtype_switch.h"
#include "core/tensor_impl.h"
#include "kiln/error.h"

namespace kiln {

namespace {

template <class T> void check_type(const Tensor& t, const char* what) {
  core::require_concrete(t, what);
  if (t.dtype() != dtype_of<T>)
    throw InvalidArgument(fmt::format("{}: the tensor's dtype is {}, but {} was asked for", what,
                                      dtype_name(t.dtype()), dtype_name(dtype_of<T>)));
}

}  // namespace

template <class T> T Tensor::item() const {
  check_type<T>(*this, "Tensor::item");
  if (size() != 1)
    throw InvalidArgument(fmt::format(
        "Tensor::item: the tensor has shape {} ({} elements); item() needs exactly one element",
        shape().to_string(), size()));
  return core::data_of<T>(*this)[0];
}

template <class T> std::vector<T> Tensor::to_vector() const {
  check_type<T>(*this, "Tensor::to_vector");
  const T* p = core::data_of<T>(*this);
  return std::vector<T>(p, p + size());
}

template <class T> const T* Tensor::data() const {
  check_type<T>(*this, "Tensor::data");
  return core::data_of<T>(*this);
}

Tensor::operator bool() const {
  if (defined() && is_symbolic())
    throw InvalidArgument(
        "using a symbolic tensor as a C++ bool is not allowed: while kiln::function traces, the "
        "tensor has no value yet. Use kiln::cond(pred, then_fn, else_fn) for an `if` and "
        "kiln::while_loop(cond_fn, body_fn, loop_vars) for a loop on tensor values.");
  core::require_concrete(*this, "Tensor::operator bool");
  if (size() != 1)
    throw InvalidArgument(fmt::format(
        "the truth value of a tensor with shape {} is ambiguous; reduce it first (kiln::any, "
        "kiln::all)",
        shape().to_string()));
  return core::visit_all_dtypes(dtype(), [&]<class T>() -> bool {
    if constexpr (std::is_same_v<T, std::string>) return !core::data_of<T>(*this)[0].empty();
    else if constexpr (is_half_type<T>) return static_cast<float>(core::data_of<T>(*this)[0]) != 0.0f;
    else return core::data_of<T>(*this)[0] != T(0);
  });
}

#define KILN_INSTANTIATE_HOST_ACCESS(T)                  \
  template T Tensor::item<T>() const;                    \
  template std::vector<T> Tensor::to_vector<T>() const;  \
  template const T* Tensor::data<T>() const;
KILN_INSTANTIATE_HOST_ACCESS(float)
KILN_INSTANTIATE_HOST_ACCESS(double)
KILN_INSTANTIATE_HOST_ACCESS(int32_t)
KILN_INSTANTIATE_HOST_ACCESS(int64_t)
KILN_INSTANTIATE_HOST_ACCESS(uint8_t)
KILN_INSTANTIATE_HOST_ACCESS(bool)
KILN_INSTANTIATE_HOST_ACCESS(std::string)
KILN_INSTANTIATE_HOST_ACCESS(float16_t)
KILN_INSTANTIATE_HOST_ACCESS(bfloat16_t)
KILN_INSTANTIATE_HOST_ACCESS(int8_t)
KILN_INSTANTIATE_HOST_ACCESS(int16_t)
KILN_INSTANTIATE_HOST_ACCESS(uint16_t)
KILN_INSTANTIATE_HOST_ACCESS(uint32_t)
KILN_INSTANTIATE_HOST_ACCESS(uint64_t)
KILN_INSTANTIATE_HOST_ACCESS(std::complex<float>)
KILN_INSTANTIATE_HOST_ACCESS(std::complex<double>)
#undef KILN_INSTANTIATE_HOST_ACCESS

}  // namespace kiln
