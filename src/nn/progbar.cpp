#include "kiln/nn/progbar.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "kiln/error.h"

namespace kiln::nn {
namespace {

std::string printf_string(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

// 3.2s, 42s, 1:05, 1:02:03.
std::string duration(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  if (seconds < 10) return printf_string("%.1fs", seconds);
  if (seconds < 60) return printf_string("%.0fs", seconds);
  auto s = static_cast<int64_t>(std::llround(seconds));
  char buf[48];
  if (s < 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  return buf;
}

// The file descriptor behind std::cout / std::cerr / std::clog, else -1.
int descriptor(const std::ostream* out) {
  if (out == &std::cout) return STDOUT_FILENO;
  if (out == &std::cerr || out == &std::clog) return STDERR_FILENO;
  return -1;
}

bool is_terminal(const std::ostream* out) {
  int fd = descriptor(out);
  return fd >= 0 && ::isatty(fd) == 1;
}

int terminal_columns(const std::ostream* out) {
  int fd = descriptor(out);
  struct winsize size {};
  if (fd < 0 || ::ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

Progbar::Progbar(int64_t total_steps, ProgbarOptions options)
    : total_(std::max<int64_t>(total_steps, 0)), options_(std::move(options)) {
  if (options_.width < 1)
    throw InvalidArgument("Progbar: width must be at least 1, got " + std::to_string(options_.width));
  if (options_.log_every_percent < 1 || options_.log_every_percent > 100)
    throw InvalidArgument("Progbar: log_every_percent must be in 1..100, got " +
                          std::to_string(options_.log_every_percent));
  out_ = options_.out ? options_.out : &std::cout;
  interactive_ = options_.interactive.value_or(is_terminal(out_));
  if (interactive_) columns_ = options_.columns > 0 ? options_.columns : terminal_columns(out_);
  start_ = now();
}

double Progbar::now() const { return options_.clock ? options_.clock() : steady_seconds(); }

void Progbar::step(int64_t samples, const std::vector<Metric>& metrics) {
  if (finished_)
    throw FailedPrecondition("Progbar::step: the bar has finished (" + std::to_string(steps_) + " steps of " +
                             (total_ ? std::to_string(total_) : std::string("an unknown number")) + ")");
  if (samples < 0) throw InvalidArgument("Progbar::step: samples must be >= 0, got " + std::to_string(samples));
  ++steps_;
  samples_ += samples;
  for (const Metric& m : metrics) {
    auto it = std::find_if(sums_.begin(), sums_.end(), [&](const Sum& s) { return s.name == m.name; });
    if (it == sums_.end()) it = sums_.insert(sums_.end(), Sum{m.name});
    it->weighted_sum += m.value * static_cast<double>(samples);
    it->weight += static_cast<double>(samples);
    it->last = m.value;
  }
  if (total_ && steps_ >= total_) return finish();
  double t = now();
  if (interactive_) {
    if (!drawn_ || t - last_draw_ >= options_.min_redraw_seconds) draw(t, false);
  } else if (total_) {
    int64_t bucket = steps_ * 100 / total_ / options_.log_every_percent;
    if (bucket > last_logged_bucket_) {
      last_logged_bucket_ = bucket;
      draw(t, false);
    }
  }
}

void Progbar::finish() {
  if (finished_) return;
  finished_ = true;
  draw(now(), true);
}

std::vector<Metric> Progbar::means() const {
  std::vector<Metric> out;
  out.reserve(sums_.size());
  for (const Sum& s : sums_) out.push_back({s.name, s.weight > 0 ? s.weighted_sum / s.weight : s.last});
  return out;
}

// "Epoch 1/5  40/100 [===========>..................]  loss 0.6931  812.5 samples/s  ETA 3.2s"
std::string Progbar::line(double t, bool final, int64_t bar_width) const {
  std::string text = options_.title;
  if (!text.empty()) text += "  ";
  if (total_) {
    std::string total = std::to_string(total_), done = std::to_string(steps_);
    text.append(total.size() > done.size() ? total.size() - done.size() : 0, ' ');
    text.append(done).append("/").append(total).append(" [");
    int64_t width = bar_width;
    int64_t filled = std::min(steps_, total_) * width / total_;
    text.append(static_cast<std::size_t>(filled), '=');
    if (filled < width) text.append(">").append(static_cast<std::size_t>(width - filled - 1), '.');
    text.append("]");
  } else {
    text += std::to_string(steps_) + (steps_ == 1 ? " step" : " steps");
  }
  for (const Metric& m : means()) text += "  " + m.name + " " + printf_string("%.4f", m.value);
  double elapsed = t - start_;
  if (elapsed > 0) {
    double rate = static_cast<double>(samples_) / elapsed;
    text += "  " + printf_string(rate >= 1000 ? "%.0f" : "%.1f", rate) + " samples/s";
  }
  if (final)
    text += "  took " + duration(elapsed);
  else if (total_ && steps_ > 0)
    text += "  ETA " + duration(elapsed / static_cast<double>(steps_) * static_cast<double>(total_ - steps_));
  return text;
}

void Progbar::draw(double t, bool final) {
  std::string text = line(t, final, options_.width);
  if (interactive_ && columns_ > 1) {
    // The last column stays free: some terminals wrap on writing it.
    auto fit = static_cast<std::size_t>(columns_ - 1);
    if (text.size() > fit && total_) {
      int64_t excess = static_cast<int64_t>(text.size() - fit);
      text = line(t, final, std::max<int64_t>(options_.width - excess, 1));
    }
    if (text.size() > fit) text.resize(fit);
  }
  if (interactive_) {
    // Spaces wipe what a longer previous line left behind.
    std::size_t width = text.size();
    if (width < last_width_) text.append(last_width_ - width, ' ');
    last_width_ = width;
    *out_ << '\r' << text;
    if (final) *out_ << '\n';
  } else {
    *out_ << text << '\n';
  }
  out_->flush();
  drawn_ = true;
  last_draw_ = t;
}

}  // namespace kiln::nn
