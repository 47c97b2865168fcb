#pragma once
// Kernels written for the core dtypes serve the narrower ones through a
// wider dtype (docs/design-notes.md, "Dtypes beyond float32"): float16 and
// bfloat16 run as float32, int8, int16, uint16 and uint32 as int64. The
// inputs are widened exactly, the kernel runs, and each output of a narrow
// dtype is rounded (floats) or wrapped (integers) back once: what TF's
// per-op rounding of Eigen::half gives for one op, and for integer sums,
// products, max, min and matmul the same bits as wrapping arithmetic in the
// narrow type. The core dtypes take the kernel directly (one compare).
#include "schema/op_def.h"

namespace kiln::ops {

// The dtype a kernel computes `d` in: float32 for the half types, int64 for
// the narrow integers, `d` itself otherwise (uint64 has no wider type).
constexpr DType widened_dtype(DType d) {
  if (is_half(d)) return DType::Float32;
  if (d == DType::Int8 || d == DType::Int16 || d == DType::UInt16 || d == DType::UInt32) return DType::Int64;
  return d;
}

// Runs `kernel` on widened copies of c's narrow inputs and outputs.
void run_widened(schema::KernelContext& c, schema::KernelFn kernel);

// `Kernel` with the narrow dtypes served through run_widened.
template <schema::KernelFn Kernel>
void widened(schema::KernelContext& c) {
  for (const Tensor& t : c.inputs)
    if (widened_dtype(t.dtype()) != t.dtype()) [[unlikely]] return run_widened(c, Kernel);
  for (const Tensor& t : c.outputs)
    if (t.defined() && widened_dtype(t.dtype()) != t.dtype()) [[unlikely]] return run_widened(c, Kernel);
  Kernel(c);
}

// A bfloat16 kernel that runs natively where it can (oneDNN's bf16 kernels);
// false sends the op through run_widened instead.
using Bf16KernelFn = bool (*)(schema::KernelContext&);

// `Kernel` whose bfloat16 inputs first go to `Bf16`; the other narrow dtypes
// (and bfloat16 where Bf16 declines) as `widened<Kernel>`. One dtype compare on
// the core dtypes' path.
template <Bf16KernelFn Bf16, schema::KernelFn Kernel>
void bf16_or_widened(schema::KernelContext& c) {
  if (c.inputs[0].dtype() == DType::BFloat16) [[unlikely]] {
    if (!Bf16(c)) run_widened(c, Kernel);
    return;
  }
  widened<Kernel>(c);
}

}  // namespace kiln::ops
