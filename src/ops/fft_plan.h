#pragma once
// Kiln's own FFT (docs/design-notes.md, "FFT"): a plan per length, computing
// X_k = sum_j x_j exp(-2 pi i jk / n) in the element type T (float for
// complex64, as TF's kernels, double for complex128). Lengths whose prime
// factors are 2, 3 and 5 run mixed-radix Stockham stages (radix 4, 2, 3, 5);
// any other length runs Bluestein's chirp convolution over a 2/3/5-smooth
// length. Twiddles are computed once per plan, in double, then rounded to T.
#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

namespace kiln::ops {

template <class T> class FftPlan {
 public:
  explicit FftPlan(int64_t n);
  ~FftPlan();
  FftPlan(const FftPlan&) = delete;
  FftPlan& operator=(const FftPlan&) = delete;

  int64_t size() const { return n_; }
  // Elements of std::complex<T> that transform needs besides the data.
  int64_t scratch_size() const;
  // In place on n contiguous elements. inverse: exp(+2 pi i jk / n), unscaled.
  void transform(std::complex<T>* data, std::complex<T>* scratch, bool inverse) const;

 private:
  struct Stage {
    int radix;
    int64_t length;  // the sub-transform's length at this stage
    int64_t stride;  // how many sub-transforms run side by side
    std::vector<std::complex<T>> twiddles;  // [length / radix][radix - 1]
  };
  void stockham(std::complex<T>* data, std::complex<T>* scratch) const;
  void bluestein(std::complex<T>* data, std::complex<T>* scratch) const;

  int64_t n_;
  std::vector<Stage> stages_;
  // Bluestein: the chirp exp(-pi i j^2 / n), the convolution's length, its
  // plan and its filter's transform (scaled by 1 / m).
  std::vector<std::complex<T>> chirp_;
  int64_t m_ = 0;
  std::unique_ptr<FftPlan> inner_;
  std::vector<std::complex<T>> filter_;
};

extern template class FftPlan<float>;
extern template class FftPlan<double>;

// The smallest 2/3/5-smooth number >= n (n >= 1).
int64_t next_smooth_length(int64_t n);

}  // namespace kiln::ops
