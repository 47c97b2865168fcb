#pragma once
// FusedElementwise on a small float32 output (up to kMaxElements): a chain
// of ops on a few elements is bound by its latency, and in the tile program
// every op stores its tile and the next loads it back. Here every value is
// one to four AVX2 vectors and each op's result stays in registers for the
// next op; an op goes through memory only when a later op reads it out of
// order. Ops run their lane form (ops/lane_ops.h, the same bits as their
// loop), or their own loop on the registers' memory where they have none.
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "exec/fused_elementwise.h"

namespace kiln::exec {

class LaneProgram {
 public:
  static constexpr int64_t kMaxElements = 256;

  // The program for a body whose values are all float32, or nullptr where
  // no step has a lane form (or the library is built without AVX2 + FMA).
  static std::unique_ptr<LaneProgram> make(std::span<const FusedStep> code, int num_inputs, int num_temps);

  // Whether the library has lanes (AVX2 + FMA).
  static bool available();

  // Bytes of 32-byte aligned memory run() needs for n elements.
  std::size_t memory_bytes(int64_t n) const;

  // Inputs have n or 1 elements, 0 < n <= kMaxElements (run in blocks of
  // 32); `out` may share a buffer with an input.
  void run(std::span<const Tensor> inputs, float* out, int64_t n, std::byte* memory) const;

 private:
  struct Step {
    FusedStep op;
    bool from_acc[3];    // input k is the previous step's result, still in registers
    bool keep;           // the result is stored, for a later step or the output
  };
  // Runs the steps on K vectors per value; regs: num_regs_ registers of 8 K floats.
  template <int K>
  void run_k(float* regs) const;

  std::vector<Step> steps_;
  int num_inputs_ = 0;
  int num_regs_ = 0;  // inputs, temporaries, then the result
};

}  // namespace kiln::exec
