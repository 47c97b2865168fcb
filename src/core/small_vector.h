#pragma once
// SmallVector lives with the public headers (trace keys use it).
#include "kiln/detail/small_vector.h"
