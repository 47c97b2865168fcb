#pragma once
// Helpers for op tests that reach the registry directly.
#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "schema/op_def.h"

namespace kiln::testing {

// Runs an op's type inference on types only (unknown dims allowed) and
// returns its single output type.
inline schema::TensorType infer1(std::string_view op_name, std::vector<schema::TensorType> inputs,
                                 const schema::Attrs& attrs = {}) {
  const detail::OpDef& op = schema::OpRegistry::global().get(op_name);
  schema::InferContext ic(op, std::span<const schema::TensorType>(inputs.data(), inputs.size()), attrs);
  op.infer(ic);
  EXPECT_EQ(ic.outputs().size(), 1u) << op_name;
  return ic.outputs()[0];
}

}  // namespace kiln::testing
