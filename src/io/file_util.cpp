#include "io/file_util.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

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

}  // namespace

std::string read_file(const std::string& path, uint64_t max_bytes) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw NotFound(fmt::format("saved_model: {} does not exist or is not a file", path));
  uint64_t size = fs::file_size(path, ec);
  if (ec) throw NotFound(fmt::format("saved_model: cannot read {}: {}", path, ec.message()));
  if (size > max_bytes)
    throw InvalidArgument(fmt::format("saved_model: {} has {} bytes, more than the limit of {}", path, size, max_bytes));
  std::ifstream in(path, std::ios::binary);
  std::string bytes(size, '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size)))
    throw NotFound(fmt::format("saved_model: cannot read {}", path));
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
