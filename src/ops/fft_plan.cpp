// The FFT plan (fft_plan.h). Stockham autosort stages: stage (p, n', s)
// splits each of s interleaved transforms of length n' into p of length
// n' / p (decimation in frequency), so the output comes out in natural order
// with no bit reversal, alternating between the data and one scratch array.
#include "ops/fft_plan.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace kiln::ops {

namespace {

// Complex products written out: std::complex's operator* checks for
// infinities (a library call per product) unless built with -ffast-math.
template <class T> inline std::complex<T> mul(std::complex<T> a, std::complex<T> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}
template <class T> inline std::complex<T> times_minus_i(std::complex<T> a) { return {a.imag(), -a.real()}; }

// exp(-2 pi i k / n), reduced exactly first so long transforms keep their
// twiddles accurate.
std::complex<double> root(int64_t k, int64_t n) {
  k %= n;
  const double angle = -2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
  return {std::cos(angle), std::sin(angle)};
}

// The radices of a 2/3/5-smooth n, fours first; empty when n has another
// prime factor.
std::vector<int> radices(int64_t n) {
  std::vector<int> out;
  while (n % 4 == 0) out.push_back(4), n /= 4;
  for (int p : {2, 3, 5})
    while (n % p == 0) out.push_back(p), n /= p;
  if (n != 1) out.clear();
  return out;
}

template <class T> struct Butterfly {
  using C = std::complex<T>;
  static void radix2(C* a) {
    C t = a[0] - a[1];
    a[0] += a[1];
    a[1] = t;
  }
  static void radix3(C* a) {
    const T s = static_cast<T>(0.86602540378443864676);  // sin(2 pi / 3)
    C t1 = a[1] + a[2], t2 = a[0] - t1 * T(0.5), t3 = times_minus_i(a[1] - a[2]) * s;
    a[0] += t1;
    a[1] = t2 + t3;
    a[2] = t2 - t3;
  }
  static void radix4(C* a) {
    C t0 = a[0] + a[2], t1 = a[0] - a[2], t2 = a[1] + a[3], t3 = times_minus_i(a[1] - a[3]);
    a[0] = t0 + t2;
    a[1] = t1 + t3;
    a[2] = t0 - t2;
    a[3] = t1 - t3;
  }
  static void radix5(C* a) {
    const T c1 = static_cast<T>(0.30901699437494742410), c2 = static_cast<T>(-0.80901699437494742410);
    const T s1 = static_cast<T>(0.95105651629515357212), s2 = static_cast<T>(0.58778525229247312917);
    C p14 = a[1] + a[4], m14 = a[1] - a[4], p23 = a[2] + a[3], m23 = a[2] - a[3];
    C r1 = a[0] + p14 * c1 + p23 * c2, r2 = a[0] + p14 * c2 + p23 * c1;
    C i1 = times_minus_i(m14 * s1 + m23 * s2), i2 = times_minus_i(m14 * s2 - m23 * s1);
    a[0] += p14 + p23;
    a[1] = r1 + i1;
    a[4] = r1 - i1;
    a[2] = r2 + i2;
    a[3] = r2 - i2;
  }
};

// One Stockham stage: x holds `stride` interleaved transforms of `length`;
// y gets `stride * radix` interleaved ones of length / radix.
template <class T, int P>
void stage(const std::complex<T>* x, std::complex<T>* y, int64_t length, int64_t stride,
           const std::complex<T>* tw) {
  const int64_t m = length / P;
  std::complex<T> a[P];
  for (int64_t j = 0; j < m; ++j) {
    const std::complex<T>* w = tw + j * (P - 1);
    for (int64_t q = 0; q < stride; ++q) {
      for (int r = 0; r < P; ++r) a[r] = x[q + stride * (j + r * m)];
      if constexpr (P == 2) Butterfly<T>::radix2(a);
      if constexpr (P == 3) Butterfly<T>::radix3(a);
      if constexpr (P == 4) Butterfly<T>::radix4(a);
      if constexpr (P == 5) Butterfly<T>::radix5(a);
      std::complex<T>* out = y + q + stride * (j * P);
      out[0] = a[0];
      for (int k = 1; k < P; ++k) out[stride * k] = mul(a[k], w[k - 1]);
    }
  }
}

}  // namespace

int64_t next_smooth_length(int64_t n) {
  for (int64_t m = std::max<int64_t>(n, 1);; ++m) {
    int64_t r = m;
    for (int p : {2, 3, 5})
      while (r % p == 0) r /= p;
    if (r == 1) return m;
  }
}

template <class T> FftPlan<T>::~FftPlan() = default;

template <class T> FftPlan<T>::FftPlan(int64_t n) : n_(n) {
  if (n <= 1) return;
  std::vector<int> rs = radices(n);
  if (!rs.empty()) {
    int64_t length = n, stride = 1;
    for (int p : rs) {
      Stage s{p, length, stride, {}};
      const int64_t m = length / p;
      s.twiddles.resize(static_cast<std::size_t>(m * (p - 1)));
      for (int64_t j = 0; j < m; ++j)
        for (int k = 1; k < p; ++k) s.twiddles[static_cast<std::size_t>(j * (p - 1) + k - 1)] = root(j * k, length);
      stages_.push_back(std::move(s));
      length = m;
      stride *= p;
    }
    return;
  }
  // Bluestein: jk = (j^2 + k^2 - (k - j)^2) / 2 turns the DFT into a
  // convolution with the chirp, computed by FFTs of length m >= 2n - 1.
  m_ = next_smooth_length(2 * n - 1);
  chirp_.resize(static_cast<std::size_t>(n));
  std::vector<std::complex<double>> filter(static_cast<std::size_t>(m_));
  for (int64_t j = 0; j < n; ++j) {
    // exp(-pi i j^2 / n) = root(j^2 mod 2n, 2n)
    std::complex<double> c = root(static_cast<int64_t>((static_cast<unsigned __int128>(j) * j) % (2 * n)), 2 * n);
    chirp_[static_cast<std::size_t>(j)] = std::complex<T>(c);
    filter[static_cast<std::size_t>(j)] = std::conj(c);
    if (j > 0) filter[static_cast<std::size_t>(m_ - j)] = std::conj(c);
  }
  // The filter's transform in double, rounded once.
  FftPlan<double> exact(m_);
  std::vector<std::complex<double>> scratch(static_cast<std::size_t>(exact.scratch_size()));
  exact.transform(filter.data(), scratch.data(), false);
  filter_.resize(static_cast<std::size_t>(m_));
  for (int64_t k = 0; k < m_; ++k)
    filter_[static_cast<std::size_t>(k)] = std::complex<T>(filter[static_cast<std::size_t>(k)] / double(m_));
  inner_ = std::make_unique<FftPlan>(m_);
}

template <class T> int64_t FftPlan<T>::scratch_size() const {
  if (m_) return m_ + inner_->scratch_size();
  return n_;
}

template <class T> void FftPlan<T>::stockham(std::complex<T>* data, std::complex<T>* scratch) const {
  std::complex<T>*x = data, *y = scratch;
  for (const Stage& s : stages_) {
    switch (s.radix) {
      case 2: stage<T, 2>(x, y, s.length, s.stride, s.twiddles.data()); break;
      case 3: stage<T, 3>(x, y, s.length, s.stride, s.twiddles.data()); break;
      case 4: stage<T, 4>(x, y, s.length, s.stride, s.twiddles.data()); break;
      default: stage<T, 5>(x, y, s.length, s.stride, s.twiddles.data()); break;
    }
    std::swap(x, y);
  }
  if (x != data) std::copy(x, x + n_, data);
}

template <class T> void FftPlan<T>::bluestein(std::complex<T>* data, std::complex<T>* scratch) const {
  std::complex<T>* a = scratch;
  std::complex<T>* inner_scratch = scratch + m_;
  for (int64_t j = 0; j < n_; ++j) a[j] = mul(data[j], chirp_[static_cast<std::size_t>(j)]);
  std::fill(a + n_, a + m_, std::complex<T>());
  inner_->transform(a, inner_scratch, false);
  for (int64_t k = 0; k < m_; ++k) a[k] = mul(a[k], filter_[static_cast<std::size_t>(k)]);
  inner_->transform(a, inner_scratch, true);
  for (int64_t k = 0; k < n_; ++k) data[k] = mul(a[k], chirp_[static_cast<std::size_t>(k)]);
}

template <class T> void FftPlan<T>::transform(std::complex<T>* data, std::complex<T>* scratch, bool inverse) const {
  if (n_ <= 1) return;
  // The inverse is the forward transform of the conjugate, conjugated.
  if (inverse)
    for (int64_t i = 0; i < n_; ++i) data[i] = std::conj(data[i]);
  if (m_) bluestein(data, scratch);
  else stockham(data, scratch);
  if (inverse)
    for (int64_t i = 0; i < n_; ++i) data[i] = std::conj(data[i]);
}

template class FftPlan<float>;
template class FftPlan<double>;

}  // namespace kiln::ops
