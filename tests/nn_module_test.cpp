// kiln::Module: variable and submodule tracking, names, freezing, and the
// seed's DemoModule with a traced method.
#include "test_util.h"

#include <sstream>

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::names;
using kiln::testing::expect_tensor;

namespace {

// The seed's tf.Module subclass: a variable in the module's name scope and a
// method traced with an input signature.
class DemoModule : public Module {
 public:
  DemoModule(float init_value, std::ostream* out) : Module("demo_module"), options_{.stream = out} {
    x = add_variable("x", constant(init_value));
  }
  DemoModule(DemoModule&&) = delete;  // addprint captures `this`

  Variable x;
  Method<Tensor(const Tensor&)> addprint = method<Tensor(const Tensor&)>(
      [this](const Tensor& a) {
        x.assign_add(a);
        kiln::print(x, options_);
        return x.read_value();
      },
      {.input_signature = std::vector{TensorSpec({}, DType::Float32)}});

 private:
  PrintOptions options_;
};

// A user model holding layers, one of them shared.
class Block : public Module {
 public:
  explicit Block(std::shared_ptr<nn::Dense> shared) : Module("block") {
    bias = add_variable("bias", zeros({2}), /*trainable=*/false);
    first = track(nn::Dense(2, {.name = "first"}));
    second = track(std::move(shared));
  }
  Variable bias;
  std::shared_ptr<nn::Dense> first, second;
};

}  // namespace

TEST(NnModule, SeedDemoModuleMethodPrintsAndUpdates) {
  std::ostringstream out;
  DemoModule demo(1.0f, &out);
  EXPECT_EQ(demo.x.name(), "demo_module/x:0");
  Tensor result = demo.addprint(constant(5.0f));
  EXPECT_EQ(out.str(), "6\n");
  expect_tensor<float>(result, {}, {6.f});
  result = demo.addprint(constant(50.0f));
  EXPECT_EQ(out.str(), "6\n56\n");
  expect_tensor<float>(result, {}, {56.f});
  EXPECT_EQ(demo.addprint.tracing_count(), 1);
  EXPECT_TRUE(demo.submodules().empty());  // seed: demo.submodules == ()
  EXPECT_EQ(names(demo.variables()), std::vector<std::string>{"demo_module/x:0"});
  EXPECT_EQ(names(demo.trainable_variables()), std::vector<std::string>{"demo_module/x:0"});
  // The input signature holds: an int32 argument is rejected.
  expect_error<InvalidArgument>([&] { demo.addprint(constant(3)); }, {"int32"});
  expect_tensor<float>(demo.x.read_value(), {}, {56.f});
}

TEST(NnModule, ScopedNames) {
  Module m("scope");
  EXPECT_EQ(m.name_scope(), "scope");
  EXPECT_EQ(m.scoped_name("kernel"), "scope/kernel:0");
  EXPECT_EQ(m.scoped_name("kernel:1"), "scope/kernel:1");
  expect_error<InvalidArgument>([] { Module bad("a/b"); }, {"a/b", "'/'"});
  expect_error<InvalidArgument>([] { Module bad(""); }, {"empty"});
}

TEST(NnModule, TracksVariablesAndSubmodulesInOrderEachOnce) {
  nn::clear_session();
  auto shared = std::make_shared<nn::Dense>(2, nn::DenseOptions{.name = "shared"});
  Block a(shared), b(shared);
  a.first->build(Shape{None, 3});
  shared->build(Shape{None, 2});
  EXPECT_EQ(names(a.variables()), (std::vector<std::string>{"block/bias:0", "first/kernel:0", "first/bias:0",
                                                            "shared/kernel:0", "shared/bias:0"}));
  EXPECT_EQ(names(a.trainable_variables()),
            (std::vector<std::string>{"first/kernel:0", "first/bias:0", "shared/kernel:0", "shared/bias:0"}));
  EXPECT_EQ(names(a.non_trainable_variables()), std::vector<std::string>{"block/bias:0"});
  auto subs = a.submodules();
  ASSERT_EQ(subs.size(), 2u);
  EXPECT_EQ(subs[0]->name(), "first");
  EXPECT_EQ(subs[1].get(), shared.get());

  // A model holding both blocks sees the shared layer's variables once.
  struct Outer : Module {
    Outer(std::shared_ptr<nn::Dense> s) : Module("outer") {
      track(std::make_shared<Block>(s));
      track(std::make_shared<Block>(s));
    }
  } outer(shared);
  EXPECT_EQ(outer.submodules().size(), 5u);  // 2 blocks, 2 "first", 1 shared
  // Each block's bias, and the shared layer's weights once (the new "first"
  // layers are not built yet, so they have none).
  EXPECT_EQ(names(outer.variables()), (std::vector<std::string>{"block/bias:0", "shared/kernel:0", "shared/bias:0",
                                                                "block/bias:0"}));
}

TEST(NnModule, FreezingIsRecursiveAndHidesVariables) {
  nn::clear_session();
  auto shared = std::make_shared<nn::Dense>(2);
  Block block(shared);
  block.first->build(Shape{None, 3});
  shared->build(Shape{None, 2});
  block.set_trainable(false);
  EXPECT_FALSE(block.first->trainable());
  EXPECT_TRUE(block.trainable_variables().empty());
  EXPECT_EQ(block.non_trainable_variables().size(), 5u);
  // A variable's own flag is untouched: unfreezing brings them back.
  EXPECT_TRUE(block.first->kernel().trainable());
  block.set_trainable(true);
  EXPECT_EQ(block.trainable_variables().size(), 4u);
  // Freezing one child hides only its variables.
  block.first->set_trainable(false);
  EXPECT_EQ(names(block.trainable_variables()), (std::vector<std::string>{"dense/kernel:0", "dense/bias:0"}));
}

TEST(NnModule, MovingKeepsTracking) {
  Block block(std::make_shared<nn::Dense>(2, nn::DenseOptions{.name = "s"}));
  block.first->build(Shape{None, 3});
  Block moved = std::move(block);
  EXPECT_EQ(moved.name(), "block");
  EXPECT_EQ(moved.variables().size(), 3u);
  EXPECT_EQ(moved.submodules().size(), 2u);
}
