#pragma once
// Printing tensors, in TensorFlow's look.
//
//   std::cout << t;       // kiln.Tensor([4 1], shape=(2,), dtype=int32)
//   kiln::print("x:", t); // x: [4 1]   (tf.print: to stderr, runs on every
//                         //             call of a kiln::function)
#include <concepts>
#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

// What Python's print(t) shows for an eager TF tensor, "tf." spelled "kiln.":
// NumPy's text of the value, the shape and the dtype. A symbolic tensor (while
// kiln::function traces) prints as Tensor("add:0", shape=(None, 2), dtype=float32).
std::ostream& operator<<(std::ostream& os, const Tensor& t);
std::string to_string(const Tensor& t);

// Options of kiln::print; pass them as any one argument:
//   kiln::print(x, kiln::PrintOptions{.sep = ", ", .stream = &std::cout});
struct PrintOptions {
  std::string sep = " ";   // between arguments
  std::string end = "\n";  // after the last one
  // Elements shown at each end of every dimension ("[0 1 2 ... 7 8 9]");
  // -1 shows all.
  int64_t summarize = 3;
  // nullptr or &std::cerr: standard error; &std::cout: standard output; any
  // other stream must outlive every kiln::function that prints to it.
  std::ostream* stream = nullptr;
};

namespace detail {

// One argument of kiln::print: a tensor, a list of tensors, text (strings
// and C++ numbers, already in Python's spelling), or the options.
class PrintArg {
 public:
  enum class Kind { Tensor, TensorList, Text, Options };

  PrintArg(const Tensor& t, SourceLocation loc = SourceLocation::current())
      : kind_(Kind::Tensor), tensors_{t}, loc_(loc) {}
  PrintArg(const std::vector<Tensor>& ts, SourceLocation loc = SourceLocation::current())
      : kind_(Kind::TensorList), tensors_(ts), loc_(loc) {}
  // Anything with a value, such as a Variable (its value is read where the
  // print runs, so a traced function prints the current value on every call).
  template <class V>
    requires requires(const V& v) {
      { v.read_value() } -> std::same_as<Tensor>;
    }
  PrintArg(const V& v, SourceLocation loc = SourceLocation::current())
      : PrintArg(v.read_value(loc), loc) {}
  PrintArg(const PrintOptions& options, SourceLocation loc = SourceLocation::current())
      : kind_(Kind::Options), options_(&options), loc_(loc) {}
  PrintArg(const char* s, SourceLocation loc = SourceLocation::current())
      : kind_(Kind::Text), text_(s), loc_(loc) {}
  PrintArg(std::string_view s, SourceLocation loc = SourceLocation::current())
      : kind_(Kind::Text), text_(s), loc_(loc) {}
  PrintArg(const std::string& s, SourceLocation loc = SourceLocation::current())
      : kind_(Kind::Text), text_(s), loc_(loc) {}
  PrintArg(char c, SourceLocation loc = SourceLocation::current())
      : kind_(Kind::Text), text_(1, c), loc_(loc) {}
  // Python's spelling: True / False.
  PrintArg(bool b, SourceLocation loc = SourceLocation::current())
      : kind_(Kind::Text), text_(b ? "True" : "False"), loc_(loc) {}
  template <class T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>)
  PrintArg(T v, SourceLocation loc = SourceLocation::current())
      : kind_(Kind::Text), text_(std::to_string(v)), loc_(loc) {}
  // Shortest text that reads back to the same value, as Python: 2.0, 0.1, 1e-05.
  PrintArg(float v, SourceLocation loc = SourceLocation::current());
  PrintArg(double v, SourceLocation loc = SourceLocation::current());

  Kind kind() const { return kind_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::string& text() const { return text_; }
  const PrintOptions& options() const { return *options_; }
  const SourceLocation& location() const { return loc_; }

 private:
  Kind kind_;
  std::vector<Tensor> tensors_;
  std::string text_;
  const PrintOptions* options_ = nullptr;
  SourceLocation loc_;
};

void print_args(std::span<const PrintArg> args, const SourceLocation& loc);

}  // namespace detail

// tf.print: prints its arguments joined by one space and a newline, to
// standard error (see PrintOptions). A tensor prints as tf.print does
// ("[[22 22]\n [23 13]]", "[0 1 2 ... 7 8 9]"); strings and C++ numbers print
// as their text. It is an op ("PrintV2", stateful): inside kiln::function it
// prints on every call, in program order.
inline void print(SourceLocation loc = SourceLocation::current()) { detail::print_args({}, loc); }
template <class... Args>
void print(const detail::PrintArg& first, const Args&... rest) {
  const detail::PrintArg args[] = {first, detail::PrintArg(rest)...};
  detail::print_args(args, first.location());
}

}  // namespace kiln
