#include "exec/fused_lanes.h"

#include <algorithm>
#include <cstring>

#include "core/tensor_impl.h"
#include "ops/lane_ops.h"

namespace kiln::exec {

#if KILN_VECTOR_MATH

using ops::lanes::LaneOp;

bool LaneProgram::available() { return true; }

std::unique_ptr<LaneProgram> LaneProgram::make(std::span<const FusedStep> code, int num_inputs, int num_temps) {
  // Without a lane form, every step would run its loop on short blocks.
  if (std::none_of(code.begin(), code.end(), [](const FusedStep& s) { return s.lane_form != LaneOp::kNone; }))
    return nullptr;
  auto p = std::make_unique<LaneProgram>();
  p->num_inputs_ = num_inputs;
  const int result = num_inputs + num_temps;
  p->num_regs_ = result + 1;
  auto lane_form = [](const Step& s) { return s.op.lane_form != LaneOp::kNone; };
  for (const FusedStep& s : code) {
    Step step{s, {}, false};
    if (step.op.out == FusedStep::kResult) step.op.out = result;
    // The previous step's result is still in registers only if it ran its
    // lane form, and only a lane form can take it from there.
    if (!p->steps_.empty() && lane_form(step) && lane_form(p->steps_.back()))
      for (int k = 0; k < s.arity; ++k) step.from_acc[k] = s.in[k] == p->steps_.back().op.out;
    p->steps_.push_back(step);
  }
  // A result is stored if a later step reads it from memory before its
  // register is written again, or if it is the output.
  for (std::size_t j = 0; j < p->steps_.size(); ++j) {
    Step& s = p->steps_[j];
    s.keep = s.op.out == result;
    for (std::size_t m = j + 1; m < p->steps_.size() && !s.keep; ++m) {
      const Step& later = p->steps_[m];
      for (int k = 0; k < later.op.arity; ++k) s.keep |= later.op.in[k] == s.op.out && !later.from_acc[k];
      if (later.op.out == s.op.out) break;
    }
  }
  return p;
}

namespace {

// A step's input k into v: from the registers where the previous step left
// it, else from its register's memory (`width` floats per register).
template <int K>
inline void operand(const float* regs, int width, const bool* from_acc, const int* in, int k,
                    const __m256* acc, __m256* v) {
  if (from_acc[k]) {
    for (int i = 0; i < K; ++i) v[i] = acc[i];
  } else {
    const float* r = regs + in[k] * width;
    for (int i = 0; i < K; ++i) v[i] = _mm256_load_ps(r + 8 * i);
  }
}

}  // namespace

template <int K>
void LaneProgram::run_k(float* regs) const {
  constexpr int kWidth = 8 * K;
  __m256 acc[K] = {};  // set by the first lane step before any read
  for (const Step& s : steps_) {
    float* out = regs + s.op.out * kWidth;
    const LaneOp op = s.op.lane_form;
    if (op == LaneOp::kNone) {
      const void* ins[3];
      for (int k = 0; k < s.op.arity; ++k) ins[k] = regs + s.op.in[k] * kWidth;
      s.op.loop(ins, out, kWidth);
      continue;
    }
    ops::lanes::visit_lane_op(op, [&]<LaneOp Op>() __attribute__((always_inline)) {
      __m256 a[K];
      operand<K>(regs, kWidth, s.from_acc, s.op.in, 0, acc, a);
      if constexpr (ops::lanes::lane_arity(Op) == 2) {
        __m256 b[K];
        operand<K>(regs, kWidth, s.from_acc, s.op.in, 1, acc, b);
        for (int i = 0; i < K; ++i) acc[i] = ops::lanes::lane<Op>(a[i], b[i]);
      } else {
        for (int i = 0; i < K; ++i) acc[i] = ops::lanes::lane<Op>(a[i]);
      }
    });
    if (s.keep)
      for (int i = 0; i < K; ++i) _mm256_store_ps(out + 8 * i, acc[i]);
  }
}

namespace {
// Elements per run of the steps: four vectors (more would not fit in the
// sixteen vector registers with a transcendental's temporaries).
constexpr int64_t kBlock = 32;
int64_t width_of(int64_t len) { return (len + 7) / 8 * 8; }
}  // namespace

std::size_t LaneProgram::memory_bytes(int64_t n) const {
  return static_cast<std::size_t>(num_regs_ * width_of(std::min(n, kBlock))) * sizeof(float);
}

void LaneProgram::run(std::span<const Tensor> inputs, float* out, int64_t n, std::byte* memory) const {
  auto* regs = reinterpret_cast<float*>(memory);
  for (int64_t first = 0; first < n; first += kBlock) {
    const int64_t len = std::min(kBlock, n - first), width = width_of(len);
    // The lanes past len hold zeros (their results are never stored); a
    // single element fills the register.
    for (int i = 0; i < num_inputs_; ++i) {
      float* r = regs + i * width;
      const auto* v = static_cast<const float*>(core::raw_data(inputs[i]));
      if (inputs[i].size() == n) {
        std::memcpy(r, v + first, static_cast<std::size_t>(len) * sizeof(float));
        std::fill(r + len, r + width, 0.0f);
      } else {
        std::fill(r, r + width, *v);
      }
    }
    switch (width / 8) {
      case 1: run_k<1>(regs); break;
      case 2: run_k<2>(regs); break;
      case 3: run_k<3>(regs); break;
      default: run_k<4>(regs); break;
    }
    // Block by block, an output sharing an input's buffer is written only
    // where that input has been read.
    std::memcpy(out + first, regs + (num_regs_ - 1) * width, static_cast<std::size_t>(len) * sizeof(float));
  }
}

#else  // !KILN_VECTOR_MATH

std::unique_ptr<LaneProgram> LaneProgram::make(std::span<const FusedStep>, int, int) { return nullptr; }
bool LaneProgram::available() { return false; }
std::size_t LaneProgram::memory_bytes(int64_t) const { return 0; }
void LaneProgram::run(std::span<const Tensor>, float*, int64_t, std::byte*) const {}

#endif  // KILN_VECTOR_MATH

}  // namespace kiln::exec
