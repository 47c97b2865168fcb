#include "io/file_util.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "io/printable.h"
#include "kiln/error.h"

namespace kiln::io {

namespace fs = std::filesystem;

namespace {

std::atomic<int> fail_after{-1};
std::atomic<int> temp_counter{0};

std::string errno_text() { return std::strerror(errno); }

void write_file_synced(const fs::path& path, const std::string& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(fmt::format("saved_model: cannot create {}: {}", path.string(), errno_text()));
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string why = errno_text();
      ::close(fd);
      throw Error(fmt::format("saved_model: cannot write {}: {}", path.string(), why));
    }
    done += static_cast<std::size_t>(n);
  }
  // Closed whether or not the flush worked (no descriptor leaks on failure).
  int failed = ::fsync(fd) != 0 ? errno : 0;
  if (::close(fd) != 0 && !failed) failed = errno;
  if (failed) throw Error(fmt::format("saved_model: cannot flush {}: {}", path.string(), std::strerror(failed)));
}

void sync_directory(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: the data files are already synced
  ::fsync(fd);
  ::close(fd);
}

// A directory name this module made for `name`: ".<name>.tmp-<pid>-<n>" or
// ".<name>.old-<pid>-<n>"; its pid, or -1 for any other name.
long temporary_owner(const std::string& entry, const std::string& name) {
  for (const char* kind : {".tmp-", ".old-"}) {
    std::string prefix = "." + name + kind;
    if (entry.size() <= prefix.size() || entry.compare(0, prefix.size(), prefix) != 0) continue;
    std::size_t dash = entry.find('-', prefix.size());
    if (dash == std::string::npos || dash == prefix.size() || dash + 1 == entry.size()) return -1;
    std::string pid = entry.substr(prefix.size(), dash - prefix.size()), n = entry.substr(dash + 1);
    auto digits = [](const std::string& t) { return t.find_first_not_of("0123456789") == std::string::npos; };
    if (!digits(pid) || !digits(n) || pid.size() > 9) return -1;
    return std::stol(pid);
  }
  return -1;
}

// A save killed mid-way (kill -9, power loss) leaves its temporary directory
// (or the old model moved aside) next to the target. The next save of that
// target removes those whose process is gone, or that are older than a day
// whatever their pid says (pids are reused, and a process in another pid
// namespace sharing the directory looks gone or alive alike; a day is far
// longer than any save). It runs once the new model is in place: a save
// killed between moving the old model aside and moving the new one in leaves
// the only copy in ".old-", which must not go before a model replaces it.
// Best effort: what cannot be removed stays.
void remove_stale_temporaries(const fs::path& parent, const std::string& name) {
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    long pid = temporary_owner(it->path().filename().string(), name);
    if (pid < 0 || pid == ::getpid()) continue;  // not ours, or a save running in this process
    std::error_code stat_ec;
    if (!it->is_directory(stat_ec) || it->is_symlink(stat_ec)) continue;
    bool gone = ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
    auto written = fs::last_write_time(it->path(), stat_ec);
    bool old = !stat_ec && now - written > std::chrono::hours(24);
    if (gone || old) fs::remove_all(it->path(), stat_ec);
  }
}

}  // namespace

std::string read_file_in(const std::string& dir, const std::string& name, uint64_t max_bytes) {
  fs::path path = fs::path(dir) / name;
  std::string shown = printable(path.string());
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec)))
    throw NotFound(fmt::format("saved_model: {} does not exist", shown));
  fs::path real_dir = fs::canonical(dir, ec);
  fs::path real = ec ? fs::path() : fs::canonical(path, ec);
  if (ec) throw NotFound(fmt::format("saved_model: {} does not exist or is a broken link: {}", shown, ec.message()));
  fs::path inside = real.lexically_relative(real_dir);
  if (inside.empty() || *inside.begin() == "..")
    throw InvalidArgument(fmt::format(
        "saved_model: {} is a link to a file outside the model directory; refusing to read it", shown));
  // O_NOFOLLOW: `real` has no links left, so one appearing now is refused;
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  int fd = ::open(real.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw NotFound(fmt::format("saved_model: cannot open {}: {}", shown, errno_text()));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw NotFound(fmt::format("saved_model: cannot read {}: {}", shown, errno_text()));
  if (!S_ISREG(st.st_mode)) throw InvalidArgument(fmt::format("saved_model: {} is not a regular file", shown));
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes)
    throw InvalidArgument(fmt::format("saved_model: {} has {} bytes, more than the limit of {}", shown, size, max_bytes));
  std::string bytes(size, '\0');
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, bytes.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw NotFound(fmt::format("saved_model: cannot read {}: {}", shown, n < 0 ? errno_text() : "it shrank"));
    done += static_cast<std::size_t>(n);
  }
  return bytes;
}

void write_directory_atomically(const std::string& dir_text, const std::vector<std::pair<std::string, std::string>>& files,
                                const std::string& marker_file) {
  fs::path dir = fs::absolute(fs::path(dir_text)).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();  // "model/"
  std::error_code ec;
  bool exists = fs::exists(dir, ec);
  if (exists) {
    if (!fs::is_directory(dir, ec))
      throw FailedPrecondition(fmt::format("saved_model::save: {} exists and is not a directory", dir.string()));
    if (!fs::is_empty(dir, ec) && !fs::exists(dir / marker_file, ec))
      throw FailedPrecondition(fmt::format(
          "saved_model::save: {} is a non-empty directory that holds no saved model; refusing to replace it "
          "(choose another directory or empty it)",
          dir.string()));
  }
  fs::path parent = dir.parent_path();
  fs::create_directories(parent, ec);
  if (ec) throw Error(fmt::format("saved_model::save: cannot create {}: {}", parent.string(), ec.message()));
  fs::path temp = parent / fmt::format(".{}.tmp-{}-{}", dir.filename().string(), ::getpid(), temp_counter++);
  fs::remove_all(temp, ec);
  if (!fs::create_directory(temp, ec) || ec)
    throw Error(fmt::format("saved_model::save: cannot create {}: {}", temp.string(), ec.message()));
  try {
    int budget = fail_after.exchange(-1);
    int written = 0;
    for (const auto& [name, bytes] : files) {
      if (budget >= 0 && written == budget) throw Error("saved_model::save: injected failure (testing)");
      write_file_synced(temp / name, bytes);
      ++written;
    }
    sync_directory(temp);
    if (exists) {
      // Swap the new directory with the old one in one step.
      if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0) {
        if (errno != EINVAL && errno != ENOSYS)
          throw Error(fmt::format("saved_model::save: cannot replace {}: {}", dir.string(), errno_text()));
        // No exchange on this file system: move the old one aside first.
        fs::path old = parent / fmt::format(".{}.old-{}-{}", dir.filename().string(), ::getpid(), temp_counter++);
        fs::rename(dir, old);
        try {
          fs::rename(temp, dir);
        } catch (...) {
          fs::rename(old, dir);
          throw;
        }
        fs::remove_all(old, ec);
      }
      fs::remove_all(temp, ec);  // now the old model
    } else {
      fs::rename(temp, dir);
    }
    remove_stale_temporaries(parent, dir.filename().string());
    sync_directory(parent);
  } catch (const Error&) {
    fs::remove_all(temp, ec);
    throw;
  } catch (const std::exception& e) {
    fs::remove_all(temp, ec);
    throw Error(fmt::format("saved_model::save: cannot write {}: {}", dir.string(), e.what()));
  }
}

namespace testing {
void fail_after_files(int count) { fail_after.store(count); }
}  // namespace testing

}  // namespace kiln::io
