#include <iostream>

#include <kiln/kiln.h>

int main() {
  kiln::Tensor a = kiln::constant({{1.0f, 2.0f}, {3.0f, 4.0f}});
  std::cout << a.shape().to_string() << "\n";
}
