// ApplyAdam: Adam's update of a variable and its two slots in one pass, as
// TensorFlow's ResourceApplyAdam. The composite form (about ten elementwise
// ops) passes over the variable's size many times per step; this reads var,
// m, v and the gradient once and writes var, m and v once.
#include "kiln/training_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <vector>

#include "core/dtype_switch.h"
#include "core/parallel.h"
#include "core/small_vector.h"
#include "ops/adam_update.h"
#include "ops/array_util.h"
#include "ops/variable_ops.h"
#include "ops/known_ops.h"
#include "ops/matmul_layout.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {

namespace {

constexpr int kVar = 0, kM = 1, kV = 2, kGrad = 3, kAlpha = 4;
constexpr const char* kRole[] = {"var", "m", "v"};

void apply_adam_infer(schema::InferContext& c) {
  DType dtype = c.attrs().get_dtype("dtype");
  const Shape& shape = c.attrs().get_shape("shape");
  if (!is_floating(dtype)) c.fail("the variables must be float32 or float64, got {}", dtype_name(dtype));
  for (int i : {kVar, kM, kV})
    if (c.dtype(i) != DType::Resource)
      c.fail("input {} ({}) must be a variable's resource handle, got a {} tensor", i, kRole[i],
             dtype_name(c.dtype(i)));
  if (c.dtype(kGrad) != dtype)
    c.fail("the variables are {} but the gradient is {}", dtype_name(dtype), dtype_name(c.dtype(kGrad)));
  if (!shape.is_compatible_with(c.shape(kGrad)))
    c.fail("the variables have shape {} but the gradient has shape {} (it must be the same)", shape.to_string(),
           c.shape(kGrad).to_string());
  if (c.dtype(kAlpha) != dtype)
    c.fail("the variables are {} but alpha is {}", dtype_name(dtype), dtype_name(c.dtype(kAlpha)));
  if (c.shape(kAlpha).has_known_rank() && c.shape(kAlpha).rank() != 0)
    c.fail("alpha must be a scalar, got shape {}", c.shape(kAlpha).to_string());
}

// Adam's constants in the dtype: C++ doubles become the dtype as
// `tensor * 0.9` makes its scalar.
template <class T>
struct AdamConstants {
  T beta_1, one_minus_beta_1, beta_2, one_minus_beta_2, epsilon, alpha;
  AdamConstants(const schema::Attrs& attrs, T alpha)
      : beta_1(static_cast<T>(attrs.get_float("beta_1"))),
        one_minus_beta_1(static_cast<T>(1 - attrs.get_float("beta_1"))),
        beta_2(static_cast<T>(attrs.get_float("beta_2"))),
        one_minus_beta_2(static_cast<T>(1 - attrs.get_float("beta_2"))),
        epsilon(static_cast<T>(attrs.get_float("epsilon"))),
        alpha(alpha) {}
};

// Where one variable's update reads and writes.
template <class T>
struct AdamSpan {
  const T* in[3];
  T* out[3];
  const T* g;
};

// Per element exactly the float operations of the composite formula in
// Adam::apply_dense, in its order (the build has contraction off), so the
// two give the same bits. `out` may equal `in` (an update in place).
template <class T>
[[gnu::always_inline]] inline void adam_element(const AdamSpan<T>& s, const AdamConstants<T>& k, int64_t i) {
  const T gi = s.g[i];
  const T m1 = s.in[kM][i] * k.beta_1 + gi * k.one_minus_beta_1;
  const T v1 = s.in[kV][i] * k.beta_2 + (gi * gi) * k.one_minus_beta_2;
  const T delta = (k.alpha * m1) / (std::sqrt(v1) + k.epsilon);
  s.out[kM][i] = m1;
  s.out[kV][i] = v1;
  s.out[kVar][i] = s.in[kVar][i] - delta;
}

// Iteration i touches only element i, so lanes are independent even when
// out aliases in; without `omp simd` the compiler's overlap checks over
// seven pointers keep the loops scalar.
template <class T>
void adam_elements(const AdamSpan<T>& s, const AdamConstants<T>& k, int64_t begin, int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) adam_element(s, k, i);
}

// One pass over the elements of all the spans, as if laid end to end
// (`offsets[j]` is where span j starts, offsets.back() the total): each
// thread takes one contiguous range, which may cross from span to span.
template <class T>
void adam_update(std::span<const AdamSpan<T>> spans, std::span<const int64_t> offsets, const AdamConstants<T>& k) {
  // The update reads each element then writes that same element; several
  // memory streams per element: a smaller grain.
  core::parallel_for(
      offsets.back(),
      [&](int64_t begin, int64_t end) {
        auto after = std::upper_bound(offsets.begin(), offsets.end(), begin);
        std::size_t j = static_cast<std::size_t>(after - offsets.begin()) - 1;
        for (; begin < end; ++j) {
          const int64_t stop = std::min(end, offsets[j + 1]);
          adam_elements(spans[j], k, begin - offsets[j], stop - offsets[j]);
          begin = stop;
        }
      },
      core::kParallelGrain / 4);
}

template <class T>
using PerVariable = detail::SmallVector<T, kAdamInlineVariables>;
using States = PerVariable<std::array<detail::VariableState*, 3>>;
using Mutexes = detail::SmallVector<std::mutex*, 3 * kAdamInlineVariables>;

// The three states of each variable, checked distinct.
States adam_states(std::span<const Tensor> handles, std::string_view op) {
  States states(handles.size() / 3);
  for (std::size_t j = 0; j < states.size(); ++j) {
    auto& s = states[j];
    for (int i : {kVar, kM, kV}) s[i] = &resource_state(handles[3 * j + i]);
    if (s[kVar] == s[kM] || s[kVar] == s[kV] || s[kM] == s[kV])
      throw InvalidArgument(fmt::format("{}: var, m and v must be three different variables (got '{}', '{}', '{}')",
                                        op, s[kVar]->name, s[kM]->name, s[kV]->name));
  }
  return states;
}

// Locks every state's mutex, in address order (two updates locking
// overlapping sets cannot deadlock), until destroyed.
class LockAll {
 public:
  // `mutexes` sorted.
  explicit LockAll(const Mutexes& mutexes) : mutexes_(mutexes) {
    for (std::size_t i = 0; i < mutexes_.size(); ++i) {
      try {
        mutexes_[i]->lock();
      } catch (...) {
        locked_ = i;
        unlock();
        throw;
      }
    }
  }
  ~LockAll() { unlock(); }
  LockAll(const LockAll&) = delete;
  LockAll& operator=(const LockAll&) = delete;

 private:
  void unlock() {
    for (std::size_t i = locked_; i-- > 0;) mutexes_[i]->unlock();
    locked_ = 0;
  }
  const Mutexes& mutexes_;
  std::size_t locked_ = mutexes_.size();
};

// A var held packed (VariableState::update_target): updated in place, `in`
// to `out` (the same tensor where no reader holds it), run by run where its
// layout puts each run of a row.
struct VarRows {
  const MatmulLayout* layout;
  const Tensor* in;
  Tensor* out;
};

// Rows [begin, end) of a matrix variable's update, m's, v's, the gradient's
// and (dense) var's rows `cols` apart. `g` is the gradient of row `begin`.
void adam_matrix_rows(const AdamSpan<float>& whole, const float* g, int64_t begin, int64_t end, int64_t cols,
                      const VarRows* rows, const AdamConstants<float>& k) {
  if (!rows) {
    const int64_t at = begin * cols;
    const AdamSpan<float> p{{whole.in[kVar] + at, whole.in[kM] + at, whole.in[kV] + at},
                            {whole.out[kVar] + at, whole.out[kM] + at, whole.out[kV] + at},
                            g};
    return adam_elements(p, k, 0, (end - begin) * cols);
  }
  const MatmulLayout& layout = *rows->layout;
  const int64_t run = layout.run(*rows->in);
  const float* var_in = core::data_of<float>(*rows->in);
  float* var_out = core::data_of<float>(*rows->out);
  for (int64_t r = begin; r < end; ++r)
    for (int64_t c = 0; c < cols; c += run) {
      const int64_t at = r * cols + c, var_at = layout.offset(*rows->in, r, c);
      const AdamSpan<float> p{{var_in + var_at, whole.in[kM] + at, whole.in[kV] + at},
                              {var_out + var_at, whole.out[kM] + at, whole.out[kV] + at},
                              g + (r - begin) * cols + c};
      // The same run 4 rows on: short runs scattered over a row are more
      // streams than the hardware prefetcher follows.
      if (run <= 64 && r + 4 < end) {
        const int64_t ahead = layout.offset(*rows->in, r + 4, c);
        for (int64_t line = 0; line < run; line += 16) __builtin_prefetch(var_in + ahead + line, 1);
      }
      adam_elements(p, k, 0, run);
    }
}

// The banded gradient's update: the threads share the bands; each writes a
// band to its own buffer and updates those rows at once. A row is a run of
// the last dim (a matrix's row; the rows of a higher rank's leading dims).
void adam_in_bands(const AdamSpan<float>& whole, const AdamGradient& grad, const VarRows* var,
                   const AdamConstants<float>& k) {
  const int64_t cols = grad.shape[grad.shape.rank() - 1], rows = cols ? grad.shape.num_elements() / cols : 0;
  const int64_t band = grad.band_rows;
  core::parallel_for(
      (rows + band - 1) / band,
      [&](int64_t first, int64_t last) {
        float* buffer = thread_scratch<float>(band * cols);
        for (int64_t b = first; b < last; ++b) {
          const int64_t begin = b * band, end = std::min(rows, begin + band);
          grad.rows(grad.context, begin, end, buffer);
          adam_matrix_rows(whole, static_cast<const float*>(buffer), begin, end, cols, var, k);
        }
      },
      1);
}

// The update of a var held packed, its gradient a tensor: the threads share
// the rows.
void adam_by_rows(const AdamSpan<float>& whole, const Shape& shape, const VarRows& rows,
                  const AdamConstants<float>& k) {
  const int64_t cols = shape[1];
  core::parallel_for(
      shape[0],
      [&](int64_t begin, int64_t end) { adam_matrix_rows(whole, whole.g + begin * cols, begin, end, cols, &rows, k); },
      std::max<int64_t>(1, core::kParallelGrain / 4 / std::max<int64_t>(cols, 1)));
}

}  // namespace

void run_adam(std::span<const Tensor> handles, std::span<const AdamGradient> grads, const Tensor& alpha,
              const schema::Attrs& attrs, std::string_view op) {
  const std::size_t count = grads.size();
  const States states = adam_states(handles, op);
  Mutexes mutexes;
  for (const auto& s : states)
    for (detail::VariableState* state : s) mutexes.push_back(&state->mutex);
  std::sort(mutexes.begin(), mutexes.end());
  if (std::adjacent_find(mutexes.begin(), mutexes.end()) != mutexes.end()) {
    // A variable updated twice: the second update reads what the first wrote.
    for (std::size_t j = 0; j < count; ++j) run_adam(handles.subspan(3 * j, 3), grads.subspan(j, 1), alpha, attrs, op);
    return;
  }
  LockAll lock(mutexes);
  const DType dtype = attrs.get_dtype("dtype");
  for (std::size_t j = 0; j < count; ++j) {
    const Shape& shape = grads[j].gradient_shape();
    for (int i : {kVar, kM, kV}) {
      const detail::VariableState& s = *states[j][i];
      if (!s.has_value()) uninitialized(s);
      // A graph read from a file may pair handles with the wrong attrs.
      if (s.value_dtype() != dtype || s.value_shape() != shape)
        throw InvalidArgument(fmt::format("{}: {} ('{}') is {} {} but the gradient is {} {}", op, kRole[i], s.name,
                                          dtype_name(s.value_dtype()), s.value_shape().to_string(),
                                          dtype_name(grads[j].rows ? DType::Float32 : grads[j].tensor.dtype()),
                                          shape.to_string()));
    }
    if (grads[j].rows && (dtype != DType::Float32 || shape.rank() < 1 || grads[j].band_rows < 1))
      throw Internal(fmt::format("{}: a gradient made in bands must be float32 of rank 1 or more", op));
  }
  // AssignSubVariable's rule: a value no one else holds is updated in place;
  // one a reader still holds is left as it is and replaced by a new buffer,
  // so a tensor read before the update never changes.
  // A var may be held packed (VariableState::update_target): written through
  // its layout's rows.
  PerVariable<std::array<Tensor*, 3>> target(count);
  PerVariable<std::array<Tensor, 3>> fresh(count);
  PerVariable<const MatmulLayout*> var_layout(count);
  for (std::size_t j = 0; j < count; ++j)
    for (int i : {kVar, kM, kV}) {
      if (i == kVar) {
        const detail::VariableState::Target t = states[j][i]->update_target();
        target[j][i] = t.tensor;
        var_layout[j] = t.layout;
      } else {
        target[j][i] = &states[j][i]->value_to_update();
      }
      if (!core::is_exclusively_owned(*target[j][i])) fresh[j][i] = core::make_tensor(dtype, target[j][i]->shape());
    }
  core::visit_numeric(dtype, [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const AdamConstants<T> k(attrs, core::data_of<T>(alpha)[0]);
      PerVariable<AdamSpan<T>> spans;
      detail::SmallVector<int64_t, kAdamInlineVariables + 1> offsets{0};
      for (std::size_t j = 0; j < count; ++j) {
        AdamSpan<T> span;
        for (int i : {kVar, kM, kV}) {
          span.in[i] = core::data_of<T>(*target[j][i]);
          span.out[i] = core::data_of<T>(fresh[j][i].defined() ? fresh[j][i] : *target[j][i]);
        }
        Tensor* var_out = fresh[j][kVar].defined() ? &fresh[j][kVar] : target[j][kVar];
        const VarRows rows{var_layout[j], target[j][kVar], var_out};
        if (grads[j].rows) {
          if constexpr (std::is_same_v<T, float>) adam_in_bands(span, grads[j], rows.layout ? &rows : nullptr, k);
          continue;
        }
        span.g = core::data_of<T>(grads[j].tensor);
        if (rows.layout) {
          // Packed forms are float32's alone.
          if constexpr (std::is_same_v<T, float>) adam_by_rows(span, grads[j].tensor.shape(), rows, k);
          continue;
        }
        spans.push_back(span);
        offsets.push_back(offsets.back() + grads[j].tensor.size());
      }
      adam_update<T>(std::span(spans.data(), spans.size()), std::span(offsets.data(), offsets.size()), k);
    }
  });
  for (std::size_t j = 0; j < count; ++j)
    for (int i : {kVar, kM, kV})
      if (fresh[j][i].defined()) *target[j][i] = std::move(fresh[j][i]);
}

namespace {

void apply_adam_kernel(schema::KernelContext& c) {
  const AdamGradient grad{.tensor = c.inputs[kGrad]};
  run_adam(c.inputs.first(3), std::span(&grad, 1), c.inputs[kAlpha], c.attrs, "ApplyAdam");
}

schema::Attrs adam_attrs(DType dtype, const Shape& shape, double beta_1, double beta_2, double epsilon) {
  return schema::Attrs{
      {"dtype", dtype}, {"shape", shape}, {"beta_1", beta_1}, {"beta_2", beta_2}, {"epsilon", epsilon}};
}

std::vector<schema::OpSample> apply_adam_samples() {
  return {{{sample_resource(constant({1.f, -2.f, 0.5f}), "var"), sample_resource(constant({0.1f, 0.f, -0.2f}), "m"),
            sample_resource(constant({0.01f, 0.f, 0.04f}), "v"), constant({3.f, -0.5f, 0.f}), constant(0.01f)},
           adam_attrs(DType::Float32, Shape{3}, 0.9, 0.999, 1e-7)},
          {{sample_resource(constant({{1.0, 2.0}}), "var"), sample_resource(constant({{0.0, 0.5}}), "m"),
            sample_resource(constant({{0.0, 0.25}}), "v"), constant({{-1.0, 4.0}}), constant(0.001)},
           adam_attrs(DType::Float64, Shape{1, 2}, 0.8, 0.99, 1e-8)}};
}

constexpr detail::OpDef kApplyAdam{.name = "ApplyAdam", .infer = apply_adam_infer, .kernel = apply_adam_kernel,
                                   .flags = schema::kStateful | schema::kNotDifferentiable,
                                   .samples = apply_adam_samples};

[[noreturn]] void slot_mismatch(const Variable& slot, const char* role, const Variable& var) {
  throw InvalidArgument(fmt::format("ApplyAdam: {} ('{}') is {} {} but var ('{}') is {} {}", role, slot.name(),
                                    dtype_name(slot.dtype()), slot.shape().to_string(), var.name(),
                                    dtype_name(var.dtype()), var.shape().to_string()));
}

}  // namespace

void register_training_ops(schema::OpRegistry& r) { r.add(kApplyAdam); }

}  // namespace ops

void apply_adam(const Variable& var, const Variable& m, const Variable& v, const Tensor& grad, const Tensor& alpha,
                double beta_1, double beta_2, double epsilon, SourceLocation loc) {
  if (!var || !m || !v) throw InvalidArgument("ApplyAdam: var, m and v must not be null Variables");
  // The handles carry no type while traced: the slots must match var here.
  if (m.dtype() != var.dtype() || m.shape() != var.shape()) ops::slot_mismatch(m, "m", var);
  if (v.dtype() != var.dtype() || v.shape() != var.shape()) ops::slot_mismatch(v, "v", var);
  const Tensor in[] = {var.handle(), m.handle(), v.handle(), grad, alpha};
  runtime::dispatch(ops::kApplyAdam, in, ops::adam_attrs(var.dtype(), var.shape(), beta_1, beta_2, epsilon), loc);
}

}  // namespace kiln

namespace kiln::ops {
const detail::OpDef& apply_adam_op() { return ops::kApplyAdam; }
}  // namespace kiln::ops
