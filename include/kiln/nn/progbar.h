#pragma once
// A progress bar for training loops, in the spirit of keras.utils.Progbar:
// steps done of the total, a bar, running means of named metrics, throughput
// and the time left.
//
//   nn::Progbar bar(steps_per_epoch, {.title = "Epoch 1/5"});
//   for (...) { ...; bar.step(batch_size, {{"loss", loss}, {"accuracy", acc}}); }
//
// On a terminal the line is redrawn in place ('\r'); in a log (a file, a
// pipe, CI) it prints whole lines at a few points and at the end, so logs
// stay short and readable.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace kiln::nn {

// A named figure shown on the bar, e.g. {"loss", 0.31}.
struct Metric {
  std::string name;
  double value = 0.0;
};

struct ProgbarOptions {
  std::string title;            // first on the line, e.g. "Epoch 1/5"
  int width = 30;               // characters between [ and ]
  std::ostream* out = nullptr;  // nullptr: std::cout
  // Redraw one line in place (true) or print whole lines (false). nullopt:
  // in place when `out` is std::cout or std::cerr and that is a terminal.
  std::optional<bool> interactive;
  // Lines mode: a line each time the steps done cross another multiple of
  // this many percent of the total, and always one at the end.
  int log_every_percent = 25;
  // In-place mode: the least time between redraws (the end always draws),
  // so fast steps do not spend their time printing.
  double min_redraw_seconds = 0.05;
  // In-place mode: the terminal's width in columns (0: asked from the
  // terminal). A line that would wrap (and so break '\r' redrawing) gets a
  // narrower bar, and is cut if that is not enough.
  int columns = 0;
  // Seconds since any fixed origin; empty: std::chrono::steady_clock.
  std::function<double()> clock;
};

class Progbar {
 public:
  // `total_steps` steps make the whole pass; 0 when unknown (no bar, no
  // ETA: call finish() at the end). Time is counted from construction.
  explicit Progbar(int64_t total_steps, ProgbarOptions options = {});

  // One more step of `samples` samples, with that step's figures (e.g. the
  // batch's mean loss). The bar shows each metric's mean over all samples
  // so far, so the figures at the end are the whole pass's. The step that
  // reaches total_steps finishes the bar.
  void step(int64_t samples, const std::vector<Metric>& metrics = {});

  // Prints the final line (figures, time taken) unless already done.
  void finish();

  // Each metric's sample-weighted mean so far, in the order first seen.
  std::vector<Metric> means() const;
  int64_t steps_done() const { return steps_; }
  bool finished() const { return finished_; }

 private:
  struct Sum {
    std::string name;
    double weighted_sum = 0.0;
    double weight = 0.0;
    double last = 0.0;
  };
  double now() const;
  std::string line(double now, bool final, int64_t bar_width) const;
  void draw(double now, bool final);

  int64_t total_;
  ProgbarOptions options_;
  std::ostream* out_;
  bool interactive_;
  int columns_ = 0;  // 0: unknown, nothing is fitted
  double start_;
  double last_draw_ = 0.0;
  bool drawn_ = false;
  int64_t steps_ = 0;
  int64_t samples_ = 0;
  int64_t last_logged_bucket_ = 0;
  std::size_t last_width_ = 0;
  bool finished_ = false;
  std::vector<Sum> sums_;
};

}  // namespace kiln::nn
