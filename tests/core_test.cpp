#include <gtest/gtest.h>

#include <kiln/kiln.h>

TEST(Core, ConstantShapes) {
  kiln::Tensor a = kiln::constant({{1, 2}, {3, 4}});
  EXPECT_EQ(a.dtype(), kiln::int32);
  EXPECT_EQ(a.shape(), (kiln::Shape{2, 2}));
}
