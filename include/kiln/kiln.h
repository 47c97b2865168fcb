#pragma once
// Kiln: write eager, run as a graph. Include this one header.
#include "kiln/dtype.h"
#include "kiln/error.h"
#include "kiln/shape.h"
#include "kiln/tensor.h"
#include "kiln/nn_ops.h"
#include "kiln/reduce.h"
#include "kiln/array.h"
#include "kiln/print.h"
