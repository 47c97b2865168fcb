// kiln::profiler: what it records for eager ops, graph steps and function
// runs, self time of nested events, the table, the Chrome trace, misuse.
#include "test_util.h"

#include "core/tensor_impl.h"

#include <kiln/control_flow.h>
#include <kiln/profiler.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <chrono>
#include <thread>

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::TempDir;
namespace prof = kiln::profiler;
using Kind = prof::Event::Kind;

namespace {

std::vector<prof::Event> of_kind(const prof::Profile& p, Kind kind) {
  std::vector<prof::Event> out;
  for (const prof::Event& e : p.events())
    if (e.kind == kind) out.push_back(e);
  return out;
}

}  // namespace

TEST(Profiler, RecordsEagerOpsWithTheirLineShapesAndBytes) {
  Tensor a = constant({{1.f, 2.f}, {3.f, 4.f}});
  Tensor b = constant({{1.f, 0.f}, {0.f, 1.f}});
  prof::start();
  int line = __LINE__ + 1;
  Tensor c = matmul(a, b) + 1.f;
  prof::Profile p = prof::stop();
  ASSERT_EQ(p.events().size(), 2u);
  const prof::Event& mm = p.events()[0];
  EXPECT_EQ(mm.kind, Kind::Eager);
  EXPECT_EQ(mm.op, "MatMul");
  EXPECT_EQ(mm.node, "");
  EXPECT_EQ(mm.line, line);
  EXPECT_NE(mm.file.find("profiler_test.cpp"), std::string::npos) << mm.file;
  EXPECT_EQ(mm.output_shapes, (std::vector<Shape>{Shape{2, 2}}));
  EXPECT_EQ(mm.bytes_allocated, 16 + static_cast<int64_t>(core::Buffer::kHeaderBytes));
  EXPECT_EQ(mm.self_ns, mm.duration_ns);  // nothing nested
  EXPECT_EQ(mm.thread, 0);
  const prof::Event& add = p.events()[1];
  EXPECT_EQ(add.op, "Add");
  EXPECT_GE(add.start_ns, mm.start_ns + mm.duration_ns);
  // The temporary matmul result is written over in place: no new buffer.
  EXPECT_EQ(add.bytes_allocated, 0);
  // Nothing is recorded once stopped.
  Tensor d = c * 2.f;
  prof::start();
  EXPECT_TRUE(prof::stop().events().empty());
}

TEST(Profiler, RecordsGraphStepsInsideEachFunctionRun) {
  auto f = kiln::function([](const Tensor& x) { return relu(x * 2.f) + 1.f; }, {.name = "scaled_relu"});
  Tensor x = constant({-1.f, 2.f});
  f(x);  // traced outside the profile
  prof::Session session;
  f(x);
  f(x);
  prof::Profile p = session.stop();
  std::vector<prof::Event> runs = of_kind(p, Kind::Function), steps = of_kind(p, Kind::GraphOp);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].op, "scaled_relu");
  EXPECT_TRUE(of_kind(p, Kind::Eager).empty());
  ASSERT_FALSE(steps.empty());
  ASSERT_EQ(steps.size() % 2, 0u);  // the same steps in each run
  int64_t steps_in_first_run = 0;
  for (const prof::Event& s : steps) {
    EXPECT_EQ(s.function, "scaled_relu");
    EXPECT_FALSE(s.node.empty());
    EXPECT_GT(s.line, 0) << s.op;  // the lambda's line
    if (s.start_ns < runs[1].start_ns) {
      EXPECT_GE(s.start_ns, runs[0].start_ns);
      EXPECT_LE(s.start_ns + s.duration_ns, runs[0].start_ns + runs[0].duration_ns);
      steps_in_first_run += s.duration_ns;
    }
  }
  // A run's self time is what its steps do not account for.
  EXPECT_EQ(runs[0].self_ns, runs[0].duration_ns - steps_in_first_run);
}

TEST(Profiler, NestedGraphsCountOnceInSelfTime) {
  auto count = kiln::function([](const Tensor& n) {
    return kiln::while_loop([](const Tensor& i) { return i < 50; }, [](const Tensor& i) { return i + 1; }, n);
  });
  Tensor zero = constant(0);
  count(zero);
  prof::start();
  count(zero);
  prof::Profile p = prof::stop();
  const prof::Event* loop = nullptr;
  int64_t nested = 0;
  for (const prof::Event& e : p.events()) {
    if (e.op == "While") loop = &e;
  }
  ASSERT_NE(loop, nullptr);
  for (const prof::Event& e : p.events()) {
    bool inside = e.start_ns >= loop->start_ns && e.start_ns < loop->start_ns + loop->duration_ns && &e != loop;
    if (inside && e.kind == Kind::Function) nested += e.duration_ns;  // the cond and body runs
  }
  EXPECT_GT(nested, 0);
  EXPECT_EQ(loop->self_ns, loop->duration_ns - nested);
  // Self times add up to the outermost run's duration: no time counted twice.
  const prof::Event& outer = p.events().front();
  ASSERT_EQ(outer.kind, Kind::Function);
  int64_t self_total = 0;
  for (const prof::Event& e : p.events()) self_total += e.self_ns;
  EXPECT_EQ(self_total, outer.duration_ns);
}

TEST(Profiler, TableSortsOpsBySelfTime) {
  Tensor a = ones({64, 64});
  prof::start();
  for (int i = 0; i < 3; ++i) (void)matmul(a, a);
  (void)(a + 1.f);
  prof::Profile p = prof::stop();
  std::string table = p.table();
  std::istringstream lines(table);
  std::string first, header, row1, row2;
  std::getline(lines, first);
  std::getline(lines, header);
  std::getline(lines, row1);
  std::getline(lines, row2);
  EXPECT_EQ(first.rfind("kiln profile: 4 events, ", 0), 0u) << table;
  EXPECT_NE(first.find("on 1 thread(s)"), std::string::npos) << table;
  EXPECT_EQ(header,
            "op                               where       calls    self ms      %    mean us   alloc MB");
  EXPECT_EQ(row1.rfind("MatMul                           eager           3 ", 0), 0u) << table;
  EXPECT_EQ(row2.rfind("Add                              eager           1 ", 0), 0u) << table;
  EXPECT_NE(p.table(1).find("... 1 more rows"), std::string::npos);
}

TEST(Profiler, WritesAChromeTrace) {
  TempDir tmp;
  auto f = kiln::function([](const Tensor& x) { return x * x; }, {.name = "square \"fn\""});
  Tensor x = constant({3.f});
  f(x);
  prof::start();
  f(x);
  (void)(x - 1.f);
  prof::Profile p = prof::stop();
  p.write_chrome_trace(tmp.path("trace.json"));
  std::ifstream in(tmp.path("trace.json"));
  nlohmann::json doc = nlohmann::json::parse(in);
  std::vector<std::string> names, cats;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    names.push_back(e["name"]);
    cats.push_back(e["cat"]);
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    EXPECT_EQ(e["pid"], 1);
    EXPECT_EQ(e["tid"], 0);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"square \"fn\"", "Mul", "Sub"}));
  EXPECT_EQ(cats, (std::vector<std::string>{"function", "graph", "eager"}));
  const auto& mul = doc["traceEvents"][3];
  EXPECT_EQ(mul["args"]["function"], "square \"fn\"");
  EXPECT_EQ(mul["args"]["output_shapes"], "(1,)");
  EXPECT_NE(mul["args"]["source"].get<std::string>().find("profiler_test.cpp:"), std::string::npos);
  expect_error<NotFound>([&] { p.write_chrome_trace(tmp.path("no/such/dir/trace.json")); }, {"cannot write"});
}

TEST(Profiler, ThreadsGetTheirOwnRows) {
  Tensor a = ones({8});
  prof::start();
  (void)(a + 1.f);
  std::thread t([&] { (void)(a * 3.f); });
  t.join();
  prof::Profile p = prof::stop();
  ASSERT_EQ(p.events().size(), 2u);
  EXPECT_EQ(p.events()[0].thread, 0);
  EXPECT_EQ(p.events()[1].thread, 1);
  EXPECT_EQ(p.events()[1].op, "Mul");
}

TEST(Profiler, MisuseAndFailingOpsLeaveItConsistent) {
  expect_error<FailedPrecondition>([] { prof::stop(); }, {"the profiler is not on"});
  prof::start();
  expect_error<FailedPrecondition>([] { prof::start(); }, {"already on"});
  EXPECT_TRUE(prof::active());
  expect_error<InvalidArgument>([] { (void)(constant({1.f, 2.f}) + constant({1.f, 2.f, 3.f})); }, {"Add"});
  (void)(constant(1.f) * 2.f);
  prof::Profile p = prof::stop();
  EXPECT_FALSE(prof::active());
  // The failed Add is dropped; the ops after it are whole, with nothing nested.
  bool saw_mul = false;
  for (const prof::Event& e : p.events()) {
    EXPECT_NE(e.op, "Add");
    EXPECT_EQ(e.self_ns, e.duration_ns) << e.op;
    saw_mul |= e.op == "Mul";
  }
  EXPECT_TRUE(saw_mul);
}

TEST(Profiler, CpuClockLeavesOutTimeSpentWaiting) {
  // A host function that sleeps 60 ms: the wall clock counts the sleep, the
  // process's CPU clock does not.
  auto sleepy = [](const std::vector<Tensor>& in) {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    return in;
  };
  Tensor x = constant({1.f});
  auto slept_ns = [&](const char* clock) {
    setenv("KILN_PROFILER_CLOCK", clock, 1);
    prof::start();
    host_function(sleepy, {x}, {DType::Float32});
    prof::Profile p = prof::stop();
    unsetenv("KILN_PROFILER_CLOCK");
    EXPECT_EQ(p.events().size(), 1u);
    return p.events().empty() ? int64_t(-1) : p.events()[0].duration_ns;
  };
  EXPECT_GE(slept_ns("wall"), 60'000'000);
  EXPECT_LT(slept_ns("cpu"), 30'000'000);
  setenv("KILN_PROFILER_CLOCK", "cycles", 1);
  expect_error<InvalidArgument>([] { prof::start(); },
                                {"KILN_PROFILER_CLOCK must be \"wall\" or \"cpu\", got \"cycles\""});
  unsetenv("KILN_PROFILER_CLOCK");
  EXPECT_FALSE(prof::active());
}
