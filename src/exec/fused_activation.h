#pragma once
// The `activation` attr of the fused ops that end in an optional relu
// (FusedMatMul, FusedConv2D, FusedDepthwiseConv2dNative, FusedMaxPoolGrad): "none" or "relu".
#include <string>

#include "schema/op_def.h"

namespace kiln::exec {

inline bool has_relu(const schema::Attrs& attrs) { return attrs.get_string("activation") == "relu"; }

// Inference's check of the attr; returns whether it is "relu".
inline bool check_activation(schema::InferContext& c) {
  const std::string& activation = c.attrs().get_string("activation");
  if (activation != "none" && activation != "relu")
    c.fail("activation must be \"none\" or \"relu\", got \"{}\"", activation);
  return activation == "relu";
}

}  // namespace kiln::exec
