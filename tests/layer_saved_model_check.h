// A layer's saved-model round trip: the layer called through a kiln::function
// whose input signature is `spec`, saved (saved_model::save of the layer, the
// function as "serving_default") and loaded back. The loaded signature gives
// the function's values bitwise, on `x` and on every `probes` input (other
// shapes the signature admits), and the loaded model holds the layer's
// variables, by name, with their values and trainability.
#pragma once

#include <string>
#include <vector>

#include <kiln/saved_model.h>

#include "kiln/kiln.h"
#include "test_util.h"

namespace kiln::testing {

inline void check_layer_saved_model(nn::Layer& layer, const Tensor& x, const TensorSpec& spec,
                                    const std::vector<Tensor>& probes = {}) {
  TempDir tmp;
  auto call = function([&](const Tensor& in) { return layer(in); },
                       {.input_signature = std::vector{spec}, .name = "call"});
  std::vector<Tensor> inputs{x};
  inputs.insert(inputs.end(), probes.begin(), probes.end());
  std::vector<Tensor> want;
  for (const Tensor& in : inputs) want.push_back(call(in));
  saved_model::save(layer, tmp.path("layer"), {{"serving_default", {call, {"x"}}}});
  saved_model::Loaded loaded = saved_model::load(tmp.path("layer"));
  const saved_model::LoadedSignature& serve = loaded.signature("serving_default");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Tensor got = serve({{"x", inputs[i]}}).at("output_0");
    EXPECT_EQ(got.shape(), want[i].shape()) << layer.name() << " input " << i;
    EXPECT_EQ(got.dtype(), want[i].dtype()) << layer.name() << " input " << i;
    // Widening to float64 is exact: equal vectors are equal bits (no NaNs here).
    EXPECT_EQ(cast(got, DType::Float64).to_vector<double>(), cast(want[i], DType::Float64).to_vector<double>())
        << layer.name() << " input " << i;
  }
  std::vector<Variable> saved = layer.variables(), back = loaded.variables();
  EXPECT_EQ(back.size(), saved.size()) << layer.name();
  for (const Variable& v : saved) {
    int found = 0;
    for (const Variable& l : back) {
      if (l.name() != v.name()) continue;
      ++found;
      EXPECT_EQ(l.trainable(), v.trainable()) << v.name();
      EXPECT_EQ(l.shape(), v.shape()) << v.name();
      EXPECT_EQ(cast(l.read_value(), DType::Float64).to_vector<double>(),
                cast(v.read_value(), DType::Float64).to_vector<double>())
          << v.name();
    }
    EXPECT_EQ(found, 1) << v.name();
  }
}

}  // namespace kiln::testing
