#pragma once
// Text of tensor values, in the two looks TensorFlow users know:
//  - NumPy's str() (what Python's print(t) shows inside tf.Tensor(...)):
//    format_numpy.cpp, a port of numpy.core.arrayprint with default options;
//  - tf.print's summary (TensorFlow's C++ Tensor::SummarizeValue with
//    print_v2): format_summary.cpp.
#include <cstdint>
#include <string>
#include <string_view>

#include "kiln/tensor.h"

namespace kiln::runtime {

// NumPy's str() of a concrete tensor's value with default print options
// (precision 8, floatmode 'maxprec', linewidth 75, threshold 1000, edgeitems
// 3): "[[22. 22.]\n [23. 13.]]"; a 0-d tensor reads like a NumPy scalar: "1.1".
std::string numpy_str(const Tensor& t);

// What Python's print(t) shows for a TF tensor, with "tf." spelled "kiln.":
// kiln.Tensor(4, shape=(), dtype=int32); a symbolic tensor reads
// Tensor("add:0", shape=(2, 2), dtype=float32).
std::string tensor_repr(const Tensor& t);

// tf.print's text of a concrete tensor: `summarize` elements at each end of
// every dimension (-1: all), e.g. "[0 1 2 ... 7 8 9]", floats as "%.6g" when
// that reads back exactly, strings quoted and C-escaped, bools as 1/0.
std::string summarize_value(const Tensor& t, int64_t summarize);

// NumPy's str() of a float scalar (also Python's repr of a float): shortest
// text that reads back to the same value of its type, positional between
// 1e-4 and 1e16 ("2.0", "0.0001", "1.1"), else scientific ("1e-05", "1e+16").
std::string numpy_scalar_str(double v);
std::string numpy_scalar_str(float v);

// Python's repr of a bytes object: b'aa', b"it's", b'\x00\n'.
std::string python_bytes_repr(std::string_view s);

}  // namespace kiln::runtime
