#include <iostream>

#include <kiln/kiln.h>

int main() {
  auto f = kiln::function([](const kiln::Tensor& x) { return x * x + 1; });
  kiln::Tensor y = f(kiln::constant({1, 2, 3}));
  std::cout << y << "\n";
  return y.to_vector<int32_t>() == std::vector<int32_t>{2, 5, 10} ? 0 : 1;
}
