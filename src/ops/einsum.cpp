// einsum, composed of transpose, reshape, gather (diagonals), sum and
// batched matmul, so eager, traced and gradient code all come from those ops
// (docs/design-notes.md, "Foundation").
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>
#include "kiln/array.h"
#include "kiln/error.h"
#include "kiln/nn_ops.h"
#include "kiln/reduce.h"

namespace kiln {

namespace {

// A dimension's label: a letter's own code, or kEllipsisLabel + j for the
// j-th of the dims an ellipsis stands for (right-aligned across operands, so
// the ellipsis dims broadcast as NumPy's do).
using Label = int;
constexpr Label kEllipsisLabel = 1000;

struct Labelled {
  Tensor tensor;
  std::vector<Label> labels;  // one per dim
};

std::string label_name(Label l) {
  return l >= kEllipsisLabel ? fmt::format("... dim {}", l - kEllipsisLabel) : std::string(1, static_cast<char>(l));
}

[[noreturn]] void fail(std::string_view equation, const std::string& what) {
  throw InvalidArgument(fmt::format("einsum '{}': {}", equation, what));
}

// The subscripts `s` of input `input` (the output when `input` < 0): letters
// and at most one "...". Returns the labels with the ellipsis as the single
// marker kEllipsisLabel - 1.
std::vector<Label> parse_subscripts(std::string_view equation, std::string_view s, int input) {
  // Named only in an error, so a valid equation builds no string.
  auto whose = [&] {
    return input < 0 ? fmt::format("the output ('{}')", s) : fmt::format("input {} ('{}')", input, s);
  };
  std::vector<Label> out;
  bool ellipsis = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char ch = s[i];
    if (ch == '.') {
      if (s.substr(i, 3) != "..." || ellipsis)
        fail(equation, fmt::format("{} has a '.' that is not part of one '...'", whose()));
      ellipsis = true;
      out.push_back(kEllipsisLabel - 1);
      i += 2;
    } else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
      out.push_back(ch);
    } else {
      fail(equation, fmt::format("{} has the character '{}'; subscripts are letters and '...'", whose(), ch));
    }
  }
  return out;
}

// Replaces the ellipsis marker by `count` labels, the last `count` of the
// `widest` ellipsis labels.
std::vector<Label> expand_ellipsis(const std::vector<Label>& parsed, int count, int widest) {
  std::vector<Label> out;
  for (Label l : parsed) {
    if (l != kEllipsisLabel - 1) {
      out.push_back(l);
      continue;
    }
    for (int j = 0; j < count; ++j) out.push_back(kEllipsisLabel + widest - count + j);
  }
  return out;
}

// x reshaped to `dims` (unknown dims as -1); no op when it has them already.
Tensor regroup(const Tensor& x, const std::vector<int64_t>& dims, std::string_view equation,
               const SourceLocation& loc) {
  const Shape& s = x.shape();
  if (s.rank() == static_cast<int>(dims.size()) && std::equal(dims.begin(), dims.end(), s.begin())) return x;
  Shape target;
  int unknown = 0;
  for (int64_t d : dims) {
    unknown += d < 0;
    target.push_back(d < 0 ? -1 : d);
  }
  if (unknown > 1)
    fail(equation, fmt::format("merging the dims of shape {} needs all but one of them known while tracing "
                               "(give the function an input_signature with more known dims)",
                               s.to_string()));
  return reshape(x, target, loc);
}

int64_t product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    p *= d;
  }
  return p;
}

int position(const std::vector<Label>& labels, Label l) {
  return static_cast<int>(std::find(labels.begin(), labels.end(), l) - labels.begin());
}

bool contains(const std::vector<Label>& labels, Label l) {
  return std::find(labels.begin(), labels.end(), l) != labels.end();
}

Labelled permuted(const Labelled& x, const std::vector<Label>& order, const SourceLocation& loc) {
  std::vector<int64_t> perm;
  for (Label l : order) perm.push_back(position(x.labels, l));
  bool identity = true;
  for (std::size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  return {identity ? x.tensor : transpose(x.tensor, perm, loc), order};
}

// A label twice in one operand ("ii"): its diagonal, once, as the last dim.
Labelled take_diagonals(Labelled x, std::string_view equation, const SourceLocation& loc) {
  for (;;) {
    Label repeated = 0;
    for (std::size_t i = 0; i < x.labels.size() && !repeated; ++i)
      if (std::count(x.labels.begin(), x.labels.end(), x.labels[i]) > 1) repeated = x.labels[i];
    if (!repeated) return x;
    int p = position(x.labels, repeated);
    int q = p + 1 + static_cast<int>(std::find(x.labels.begin() + p + 1, x.labels.end(), repeated) -
                                     (x.labels.begin() + p + 1));
    int64_t n = x.tensor.shape()[p];
    if (n < 0) fail(equation, fmt::format("the diagonal of '{}' needs its size known", label_name(repeated)));
    std::vector<Label> rest;
    std::vector<int64_t> perm;
    for (int i = 0; i < static_cast<int>(x.labels.size()); ++i)
      if (i != p && i != q) {
        rest.push_back(x.labels[i]);
        perm.push_back(i);
      }
    perm.push_back(p);
    perm.push_back(q);
    Tensor t = transpose(x.tensor, perm, loc);
    std::vector<int64_t> dims(t.shape().begin(), t.shape().end() - 2);
    dims.push_back(n * n);
    std::vector<int64_t> on_diagonal(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) on_diagonal[i] = i * (n + 1);
    t = gather(regroup(t, dims, equation, loc), constant(on_diagonal, Shape{n}), -1, loc);
    rest.push_back(repeated);
    x = {t, rest};
  }
}

// Sums away the labels of x that are in `drop`.
Labelled sum_labels(const Labelled& x, const std::vector<Label>& drop, const SourceLocation& loc) {
  std::vector<int64_t> axes;
  std::vector<Label> kept;
  for (int i = 0; i < static_cast<int>(x.labels.size()); ++i) {
    if (contains(drop, x.labels[i])) axes.push_back(i);
    else kept.push_back(x.labels[i]);
  }
  if (axes.empty()) return x;
  return {sum(x.tensor, Axes(axes), false, loc), kept};
}

int64_t dim_of(const Labelled& x, Label l) { return x.tensor.shape()[position(x.labels, l)]; }

// a and b contracted into one operand holding the labels in `keep` that
// either has: shared kept labels are batch dims of one batched matmul,
// shared others are summed by it.
Labelled contract(Labelled a, Labelled b, const std::vector<Label>& keep, std::string_view equation,
                 const SourceLocation& loc) {
  // A shared label broadcast from size 1 that is summed away: sum the wide
  // side alone, the size-1 side loses it.
  for (Label l : std::vector<Label>(a.labels)) {
    if (!contains(b.labels, l) || contains(keep, l)) continue;
    int64_t da = dim_of(a, l), db = dim_of(b, l);
    if (da == db) continue;
    Labelled& wide = da == 1 ? b : a;
    Labelled& narrow = da == 1 ? a : b;
    wide = sum_labels(wide, {l}, loc);
    narrow = sum_labels(narrow, {l}, loc);
  }
  std::vector<Label> batch, free_a, summed, free_b;
  for (Label l : a.labels) {
    if (contains(b.labels, l)) (contains(keep, l) ? batch : summed).push_back(l);
    else free_a.push_back(l);
  }
  for (Label l : b.labels)
    if (!contains(a.labels, l)) free_b.push_back(l);
  auto concat_labels = [](std::initializer_list<const std::vector<Label>*> parts) {
    std::vector<Label> out;
    for (const auto* p : parts) out.insert(out.end(), p->begin(), p->end());
    return out;
  };
  a = permuted(a, concat_labels({&batch, &free_a, &summed}), loc);
  b = permuted(b, concat_labels({&batch, &summed, &free_b}), loc);
  auto dims = [](const Labelled& x, const std::vector<Label>& labels) {
    std::vector<int64_t> out;
    for (Label l : labels) out.push_back(dim_of(x, l));
    return out;
  };
  std::vector<int64_t> a_dims = dims(a, batch), b_dims = dims(b, batch), out_dims;
  for (std::size_t i = 0; i < batch.size(); ++i)
    out_dims.push_back(a_dims[i] == 1 ? b_dims[i] : a_dims[i]);
  a_dims.push_back(product(dims(a, free_a)));
  a_dims.push_back(product(dims(a, summed)));
  b_dims.push_back(product(dims(b, summed)));
  b_dims.push_back(product(dims(b, free_b)));
  Tensor c = matmul(regroup(a.tensor, a_dims, equation, loc), regroup(b.tensor, b_dims, equation, loc), false,
                    false, loc);
  for (int64_t d : dims(a, free_a)) out_dims.push_back(d);
  for (int64_t d : dims(b, free_b)) out_dims.push_back(d);
  return {regroup(c, out_dims, equation, loc), concat_labels({&batch, &free_a, &free_b})};
}

}  // namespace

Tensor einsum(std::string_view equation, const std::vector<Tensor>& inputs, SourceLocation loc) {
  std::string eq;
  for (char ch : equation)
    if (ch != ' ') eq.push_back(ch);
  std::size_t arrow = eq.find("->");
  std::string_view lhs = std::string_view(eq).substr(0, arrow);
  std::vector<std::string_view> subscripts;
  for (std::size_t start = 0;;) {
    std::size_t comma = lhs.find(',', start);
    subscripts.push_back(lhs.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (subscripts.size() != inputs.size())
    fail(equation, fmt::format("the equation has {} input subscripts but {} inputs were given", subscripts.size(),
                               inputs.size()));
  std::vector<std::vector<Label>> parsed;
  std::vector<int> ellipsis_rank;
  int widest = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    parsed.push_back(parse_subscripts(equation, subscripts[i], static_cast<int>(i)));
    const Shape& s = inputs[i].shape();
    if (!s.has_known_rank()) fail(equation, fmt::format("input {} has an unknown rank", i));
    bool has_ellipsis = contains(parsed.back(), kEllipsisLabel - 1);
    int letters = static_cast<int>(parsed.back().size()) - has_ellipsis;
    if (has_ellipsis ? s.rank() < letters : s.rank() != letters)
      fail(equation, fmt::format("input {} has shape {} but its subscripts '{}' name {} dims", i, s.to_string(),
                                 subscripts[i], letters));
    ellipsis_rank.push_back(has_ellipsis ? s.rank() - letters : 0);
    widest = std::max(widest, ellipsis_rank.back());
  }
  std::vector<Labelled> operands;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    operands.push_back({inputs[i], expand_ellipsis(parsed[i], ellipsis_rank[i], widest)});

  // Sizes agree label by label (the ellipsis dims may broadcast from 1).
  std::vector<std::pair<Label, int64_t>> sizes;
  for (std::size_t i = 0; i < operands.size(); ++i)
    for (std::size_t k = 0; k < operands[i].labels.size(); ++k) {
      Label l = operands[i].labels[k];
      int64_t d = operands[i].tensor.shape()[static_cast<int>(k)];
      auto seen = std::find_if(sizes.begin(), sizes.end(), [&](const auto& p) { return p.first == l; });
      if (seen == sizes.end()) {
        sizes.push_back({l, d});
      } else if (d >= 0 && seen->second >= 0 && d != seen->second) {
        bool broadcasts = l >= kEllipsisLabel && (d == 1 || seen->second == 1);
        if (!broadcasts)
          fail(equation, fmt::format("'{}' has size {} in input {} (shape {}) but size {} before it",
                                     label_name(l), d, i, operands[i].tensor.shape().to_string(), seen->second));
        if (seen->second == 1) seen->second = d;
      }
    }

  std::vector<Label> output;
  if (arrow == std::string::npos) {
    // Implicit output: the ellipsis dims, then the letters used once, sorted.
    for (int j = 0; j < widest; ++j) output.push_back(kEllipsisLabel + j);
    std::vector<Label> once;
    for (const auto& [l, d] : sizes) {
      int uses = 0;
      for (const Labelled& x : operands) uses += static_cast<int>(std::count(x.labels.begin(), x.labels.end(), l));
      if (l < kEllipsisLabel && uses == 1) once.push_back(l);
    }
    std::sort(once.begin(), once.end());
    output.insert(output.end(), once.begin(), once.end());
  } else {
    std::string_view rhs = std::string_view(eq).substr(arrow + 2);
    std::vector<Label> out_parsed = parse_subscripts(equation, rhs, -1);
    output = expand_ellipsis(out_parsed, widest, widest);
    for (Label l : output) {
      if (std::count(output.begin(), output.end(), l) > 1)
        fail(equation, fmt::format("the output names '{}' more than once", label_name(l)));
      if (std::none_of(sizes.begin(), sizes.end(), [&](const auto& p) { return p.first == l; }))
        fail(equation, fmt::format("the output's '{}' is in no input", label_name(l)));
    }
  }

  // Each operand alone: its diagonals, then the labels no one else needs.
  for (std::size_t i = 0; i < operands.size(); ++i) {
    operands[i] = take_diagonals(operands[i], equation, loc);
    std::vector<Label> alone;
    for (Label l : operands[i].labels) {
      bool elsewhere = contains(output, l);
      for (std::size_t j = 0; j < operands.size(); ++j) elsewhere = elsewhere || (j != i && contains(operands[j].labels, l));
      if (!elsewhere) alone.push_back(l);
    }
    operands[i] = sum_labels(operands[i], alone, loc);
  }
  // Left to right, keeping what the output or a later operand needs.
  Labelled result = operands[0];
  for (std::size_t i = 1; i < operands.size(); ++i) {
    std::vector<Label> keep = output;
    for (std::size_t j = i + 1; j < operands.size(); ++j)
      keep.insert(keep.end(), operands[j].labels.begin(), operands[j].labels.end());
    result = contract(result, operands[i], keep, equation, loc);
  }
  return permuted(result, output, loc).tensor;
}

}  // namespace kiln
