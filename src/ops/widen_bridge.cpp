#include "ops/widen_bridge.h"

#include <optional>
#include <vector>

#include "core/tensor_impl.h"
#include "ops/cast_loops.h"

namespace kiln::ops {

void run_widened(schema::KernelContext& c, schema::KernelFn kernel) {
  std::vector<Tensor> inputs(c.inputs.begin(), c.inputs.end());
  // An output the kernel makes itself (kSetsOwnOutputs) in a wide dtype goes
  // back to the narrow dtype of the input that was widened to it.
  std::optional<DType> narrow_of[kNumDTypes];
  for (Tensor& t : inputs) {
    DType wide = widened_dtype(t.dtype());
    if (wide == t.dtype()) continue;
    if (!narrow_of[static_cast<int>(wide)]) narrow_of[static_cast<int>(wide)] = t.dtype();
    Tensor w = core::make_tensor(wide, t.shape());
    cast_into(t, w);
    t = std::move(w);
  }
  std::vector<Tensor> outputs(c.outputs.size());
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = c.outputs[i];
    DType wide = out.defined() ? widened_dtype(out.dtype()) : DType::Float32;
    outputs[i] = !out.defined() || wide == out.dtype() ? out : core::make_tensor(wide, out.shape());
  }
  schema::KernelContext wide{.op = c.op, .inputs = inputs, .outputs = outputs, .attrs = c.attrs};
  kernel(wide);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    Tensor& out = c.outputs[i];
    if (out.defined() && widened_dtype(out.dtype()) != out.dtype()) {
      cast_into(outputs[i], out);
    } else if (!out.defined() && outputs[i].defined() && narrow_of[static_cast<int>(outputs[i].dtype())]) {
      out = core::make_tensor(*narrow_of[static_cast<int>(outputs[i].dtype())], outputs[i].shape());
      cast_into(outputs[i], out);
    } else {
      out = outputs[i];
    }
  }
}

}  // namespace kiln::ops
