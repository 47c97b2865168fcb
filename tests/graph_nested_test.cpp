// Graphs holding nested graphs (cond branches, loop bodies): DOT export as
// clusters and Graph::verify recursing into them.
#include "test_util.h"

#include <regex>
#include <set>

#include "graph_ops/control_flow_ops.h"
#include "graph/graph.h"
#include "kiln/control_flow.h"
#include "kiln/function.h"
#include "kiln/tensor_array.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_golden;
using kiln::testing::expect_tensor;

namespace {

// A loop whose body holds a cond: 1 -> 2 -> 5 -> 10 -> 13 -> 26 -> 29 -> 58.
auto loop_with_cond() {
  return kiln::function([](const Tensor& x) {
    return kiln::while_loop(
        [](const Tensor& v) { return v < 50; },
        [](const Tensor& v) { return kiln::cond(v % 2 == 0, [&] { return v + 3; }, [&] { return v * 2; }); }, x);
  });
}

}  // namespace

TEST(GraphNested, DotDrawsNestedGraphsAsClusters) {
  auto f = loop_with_cond();
  expect_tensor<int32_t>(f(constant(1)), {}, {58});
  std::string dot = f.get_concrete_function(constant(1)).graph().to_dot();
  expect_golden("graph_nested_loop.dot", dot);

  // One cluster per nested graph: cond and body of the While, both branches
  // of the If inside the body.
  std::regex cluster("subgraph \"(cluster_[^\"]*)\"");
  std::set<std::string> clusters;
  for (auto it = std::sregex_iterator(dot.begin(), dot.end(), cluster); it != std::sregex_iterator(); ++it)
    clusters.insert((*it)[1]);
  EXPECT_EQ(clusters, (std::set<std::string>{"cluster_while/body/", "cluster_while/body/if/else_branch/",
                                              "cluster_while/body/if/then_branch/", "cluster_while/cond/"}));
  // Node ids are unique across the file even though every nested graph has
  // its own "const".
  std::regex node_decl("\n *(\"[^\"]*\") \\[");
  std::set<std::string> ids;
  int decls = 0;
  for (auto it = std::sregex_iterator(dot.begin(), dot.end(), node_decl); it != std::sregex_iterator(); ++it, ++decls)
    ids.insert((*it)[1]);
  EXPECT_EQ(static_cast<int>(ids.size()), decls);
  EXPECT_TRUE(ids.count("\"while/body/if/then_branch/const\""));
}

TEST(GraphNested, TensorArrayLoopPrintsAndDraws) {
  auto f = kiln::function([](const Tensor& n) {
    TensorArray squares(DType::Int32, n);
    return kiln::for_range(0, n, 1, squares, [](const Tensor& i, const TensorArray& a) { return a.write(i, i * i); })
        .stack();
  });
  expect_tensor<int32_t>(f(constant(4)), {4}, {0, 1, 4, 9});
  GraphView g = f.get_concrete_function(constant(4)).graph();
  expect_golden("graph_nested_tensor_array.txt", g.to_string());
  expect_golden("graph_nested_tensor_array.dot", g.to_dot());
}

TEST(GraphNested, VerifyRecursesIntoNestedGraphs) {
  // A branch whose result is a node of another graph.
  auto stranger = std::make_shared<graph::Graph>("stranger");
  graph::Node* foreign = stranger->add_parameter({DType::Bool, Shape{}}, "p");
  auto branch = std::make_shared<graph::Graph>("then");
  branch->results().push_back({foreign, 0});
  EXPECT_THROW(branch->verify(), Internal);

  graph::Graph outer("outer");
  graph::Node* pred = outer.add_parameter({DType::Bool, Shape{}}, "pred");
  std::shared_ptr<const graph::Graph> nested = branch;
  schema::Attrs attrs{{"then_branch", nested}, {"else_branch", nested}};
  schema::TensorType out[] = {{DType::Bool, Shape{}}};
  graph::Value in[] = {{pred, 0}};
  outer.add_node_typed(graph_ops::if_op(false), in, std::move(attrs), out, SourceLocation(), "if");
  expect_error<Internal>([&] { outer.verify(); },
                         {"graph 'outer' is malformed at node 'if'", "attr then_branch",
                          "graph 'then' is malformed at node '<result>'", "not a node of this graph"});
}
