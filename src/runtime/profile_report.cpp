// kiln::profiler::Profile's reports: the per-op table and Chrome's
// trace-event JSON.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "kiln/error.h"
#include "kiln/profiler.h"

namespace kiln::profiler {

namespace {

const char* where(Event::Kind k) {
  switch (k) {
    case Event::Kind::Eager: return "eager";
    case Event::Kind::GraphOp: return "graph";
    case Event::Kind::Function: return "function";
  }
  return "";
}

std::string shapes_text(const std::vector<Shape>& shapes) {
  std::vector<std::string> parts;
  for (const Shape& s : shapes) parts.push_back(s.to_string());
  return fmt::format("{}", fmt::join(parts, ", "));
}

// A JSON string literal: quotes, backslashes and control characters escaped
// (names and paths come from user code and files).
std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string Profile::table(int max_rows) const {
  struct Row {
    int64_t calls = 0, self_ns = 0, bytes = 0;
  };
  std::map<std::pair<std::string, Event::Kind>, Row> rows;
  std::set<int> threads;
  int64_t total = 0;
  for (const Event& e : events_) {
    Row& r = rows[{e.op, e.kind}];
    ++r.calls;
    r.self_ns += e.self_ns;
    r.bytes += e.bytes_allocated;
    total += e.self_ns;
    threads.insert(e.thread);
  }
  std::vector<std::pair<std::pair<std::string, Event::Kind>, Row>> sorted(rows.begin(), rows.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.self_ns > b.second.self_ns; });
  std::string out = fmt::format("kiln profile: {} events, {:.3f} ms of self time on {} thread(s)\n", events_.size(),
                                total / 1e6, threads.size());
  out += fmt::format("{:<32} {:<8} {:>8} {:>10} {:>6} {:>10} {:>10}\n", "op", "where", "calls", "self ms", "%",
                     "mean us", "alloc MB");
  int shown = 0;
  for (const auto& [key, r] : sorted) {
    if (shown++ == max_rows) {
      out += fmt::format("... {} more rows\n", sorted.size() - static_cast<std::size_t>(max_rows));
      break;
    }
    out += fmt::format("{:<32} {:<8} {:>8} {:>10.3f} {:>6.1f} {:>10.2f} {:>10.3f}\n", key.first, where(key.second),
                       r.calls, r.self_ns / 1e6, total > 0 ? 100.0 * r.self_ns / total : 0.0,
                       r.self_ns / 1e3 / r.calls, r.bytes / 1e6);
  }
  return out;
}

std::string Profile::chrome_trace_json() const {
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  out += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"kiln\"}}";
  std::set<int> threads;
  for (const Event& e : events_) threads.insert(e.thread);
  for (int t : threads)
    out += fmt::format(",\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":{},\"args\":{{\"name\":\"thread {}\"}}}}",
                       t, t);
  for (const Event& e : events_) {
    std::string args = fmt::format("\"self_us\":{:.3f},\"bytes_allocated\":{}", e.self_ns / 1e3, e.bytes_allocated);
    if (!e.node.empty()) args += ",\"node\":" + json_string(e.node);
    if (!e.function.empty() && e.kind != Event::Kind::Function) args += ",\"function\":" + json_string(e.function);
    if (!e.file.empty()) args += ",\"source\":" + json_string(fmt::format("{}:{}", e.file, e.line));
    if (!e.output_shapes.empty()) args += ",\"output_shapes\":" + json_string(shapes_text(e.output_shapes));
    out += fmt::format(",\n{{\"name\":{},\"cat\":\"{}\",\"ph\":\"X\",\"ts\":{:.3f},\"dur\":{:.3f},\"pid\":1,\"tid\":{},"
                       "\"args\":{{{}}}}}",
                       json_string(e.op), where(e.kind), e.start_ns / 1e3, e.duration_ns / 1e3, e.thread, args);
  }
  out += "\n]}\n";
  return out;
}

void Profile::write_chrome_trace(const std::string& path) const {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw NotFound(fmt::format("kiln::profiler: cannot write '{}': {}", path, std::strerror(errno)));
  f << chrome_trace_json();
  f.close();
  if (!f) throw Internal(fmt::format("kiln::profiler: writing '{}' failed", path));
}

}  // namespace kiln::profiler
