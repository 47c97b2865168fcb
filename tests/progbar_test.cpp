// nn::Progbar, with a clock the test moves and a string stream: no sleeping,
// no timing assertions.
#include <sstream>

#include <kiln/nn/progbar.h>

#include "test_util.h"

namespace kiln {
namespace {

using nn::Metric;
using nn::Progbar;
using nn::ProgbarOptions;
using testing::expect_error;
using testing::expect_golden;

// A clock at `now` seconds, moved by the test.
struct FakeClock {
  double now = 100.0;
  std::function<double()> fn() {
    return [this] { return now; };
  }
};

// '\r' shown as <CR> so that golden files stay readable.
std::string visible(std::string text) {
  for (std::size_t at = text.find('\r'); at != std::string::npos; at = text.find('\r', at))
    text.replace(at, 1, "<CR>");
  return text;
}

TEST(Progbar, LogLinesAtQuartersAndAtTheEnd) {
  FakeClock clock;
  std::ostringstream out;
  Progbar bar(8, {.title = "Epoch 1/3", .out = &out, .clock = clock.fn()});
  for (int i = 0; i < 8; ++i) {
    clock.now += 0.25;
    bar.step(32, {{"loss", 1.0 - 0.1 * i}, {"accuracy", 0.1 * i}});
  }
  EXPECT_TRUE(bar.finished());
  expect_golden("progbar_lines.txt", out.str());
}

TEST(Progbar, LogLinesWithUnknownTotalOnlyAtFinish) {
  FakeClock clock;
  std::ostringstream out;
  Progbar bar(0, {.out = &out, .clock = clock.fn()});
  for (int i = 0; i < 3; ++i) {
    clock.now += 2.0;
    bar.step(100, {{"loss", 0.5}});
  }
  EXPECT_EQ(out.str(), "");
  bar.finish();
  bar.finish();  // once only
  EXPECT_EQ(out.str(), "3 steps  loss 0.5000  50.0 samples/s  took 6.0s\n");
}

TEST(Progbar, LogEveryPercentPicksTheLines) {
  FakeClock clock;
  std::ostringstream out;
  Progbar bar(3, {.width = 6, .out = &out, .log_every_percent = 10, .clock = clock.fn()});
  for (int i = 0; i < 3; ++i) {
    clock.now += 1.0;
    bar.step(1);
  }
  EXPECT_EQ(out.str(),
            "1/3 [==>...]  1.0 samples/s  ETA 2.0s\n"
            "2/3 [====>.]  1.0 samples/s  ETA 1.0s\n"
            "3/3 [======]  1.0 samples/s  took 3.0s\n");
}

TEST(Progbar, RedrawsInPlaceOnATerminal) {
  FakeClock clock;
  std::ostringstream out;
  Progbar bar(40, {.title = "Epoch 2/3", .width = 20, .out = &out, .interactive = true, .clock = clock.fn()});
  for (int i = 0; i < 40; ++i) {
    // Fast steps redraw at most every 0.05 s; a slow one draws at once.
    clock.now += i == 20 ? 1.0 : 0.02;
    bar.step(i < 30 ? 50 : 1000, {{"loss", 2.0 / (i + 1)}});
  }
  expect_golden("progbar_terminal.txt", visible(out.str()));
}

TEST(Progbar, FitsTheTerminalWidth) {
  FakeClock clock;
  std::ostringstream out;
  // 60 columns: lines of at most 59 characters; the bar narrows first, then
  // the line is cut.
  Progbar bar(4, {.width = 20, .out = &out, .interactive = true, .columns = 60, .clock = clock.fn()});
  clock.now += 1;
  bar.step(1, {{"loss", 0.5}});
  clock.now += 1;
  bar.step(1, {{"loss", 0.5}, {"a_long_metric_name", 0.25}});
  EXPECT_EQ(visible(out.str()),
            "<CR>1/4 [===>...........]  loss 0.5000  1.0 samples/s  ETA 3.0s"
            "<CR>2/4 [>]  loss 0.5000  a_long_metric_name 0.2500  1.0 sample");
}

TEST(Progbar, AStreamThatIsNotATerminalGetsLines) {
  FakeClock clock;
  std::ostringstream out;
  Progbar bar(2, {.out = &out, .clock = clock.fn()});
  clock.now += 1;
  bar.step(4);
  clock.now += 1;
  bar.step(4);
  EXPECT_EQ(out.str().find('\r'), std::string::npos) << out.str();
  EXPECT_EQ(out.str(),
            "1/2 [===============>..............]  4.0 samples/s  ETA 1.0s\n"
            "2/2 [==============================]  4.0 samples/s  took 2.0s\n");
}

TEST(Progbar, MetricsAreSampleWeightedMeans) {
  FakeClock clock;
  std::ostringstream out;
  Progbar bar(0, {.out = &out, .clock = clock.fn()});
  bar.step(10, {{"loss", 1.0}});
  bar.step(30, {{"loss", 3.0}, {"accuracy", 0.5}});
  bar.step(0, {{"loss", 100.0}});  // no samples, no weight
  std::vector<Metric> means = bar.means();
  ASSERT_EQ(means.size(), 2u);
  EXPECT_EQ(means[0].name, "loss");
  EXPECT_DOUBLE_EQ(means[0].value, 2.5);
  EXPECT_EQ(means[1].name, "accuracy");
  EXPECT_DOUBLE_EQ(means[1].value, 0.5);
  EXPECT_EQ(bar.steps_done(), 3);
}

TEST(Progbar, LongTimesReadAsClockTimes) {
  FakeClock clock;
  std::ostringstream out;
  Progbar bar(4, {.width = 4, .out = &out, .log_every_percent = 25, .clock = clock.fn()});
  clock.now += 65;  // 3 steps left at 65 s each
  bar.step(1000);
  clock.now += 3600;
  bar.step(1000);
  EXPECT_EQ(out.str(),
            "1/4 [=>..]  15.4 samples/s  ETA 3:15\n"
            "2/4 [==>.]  0.5 samples/s  ETA 1:01:05\n");
}

TEST(Progbar, RejectsMisuse) {
  std::ostringstream out;
  expect_error<InvalidArgument>([&] { Progbar(3, {.width = 0, .out = &out}); }, {"Progbar", "width", "0"});
  expect_error<InvalidArgument>([&] { Progbar(3, {.out = &out, .log_every_percent = 0}); },
                                {"log_every_percent", "1..100"});
  Progbar bar(1, {.out = &out});
  expect_error<InvalidArgument>([&] { bar.step(-1); }, {"Progbar::step", "samples", "-1"});
  bar.step(1);
  expect_error<FailedPrecondition>([&] { bar.step(1); }, {"Progbar::step", "finished", "1 steps of 1"});
}

}  // namespace
}  // namespace kiln
