// io::Where: the loader's lazily built error context renders exactly the
// text the eager fmt::format strings it replaced gave.
#include <gtest/gtest.h>

#include "io/json_util.h"
#include "test_util.h"

using kiln::InvalidArgument;
using kiln::io::json;
using kiln::io::Where;

TEST(JsonWhere, ChainsRenderAsConcatenatedParts) {
  const std::string what = "saved model m: saved_model.json";
  const Where top(what);
  const Where graph(top, ": graph ", std::size_t{2});
  const Where named(graph, " ('", "f", "')");
  const Where node(named, ": node '", "add", "'");
  const Where op(node, " (", "Add", ")");
  EXPECT_EQ(op.str(), "saved model m: saved_model.json: graph 2 ('f'): node 'add' (Add)");
  const Where output(op, ": output ", std::size_t{0});
  EXPECT_EQ(Where(output, ": shape").str(),
            "saved model m: saved_model.json: graph 2 ('f'): node 'add' (Add): output 0: shape");
  const Where variables(top, ": variables");
  EXPECT_EQ(Where(variables, "[", std::size_t{12}, "]").str(), "saved model m: saved_model.json: variables[12]");
  EXPECT_EQ(Where("plain").str(), "plain");
}

TEST(JsonWhere, ParsersNameTheFullPathOnlyOnFailure) {
  const Where top("graph 0 ('f')");
  const Where node(top, ": node 'x' (Cast)");
  const Where out(node, ": output ", std::size_t{1});
  EXPECT_EQ(kiln::io::parse_shape(json::array({2, nullptr}), Where(out, ": shape"), true).to_string(), "(2, None)");
  try {
    kiln::io::parse_shape(json::array({2, "3"}), Where(out, ": shape"), true);
    FAIL() << "did not throw";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "graph 0 ('f'): node 'x' (Cast): output 1: shape: dim 1: expected an integer, got string");
  }
}
