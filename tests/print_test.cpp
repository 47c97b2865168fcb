// Printing tensors: NumPy's look for operator<<, tf.print's for kiln::print.
#include "test_util.h"

#include "runtime/format.h"

using namespace kiln;

TEST(Print, Smoke) { EXPECT_EQ(to_string(constant(4)), "kiln.Tensor(4, shape=(), dtype=int32)"); }
