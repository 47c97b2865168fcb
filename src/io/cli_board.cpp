// kiln-cli board: runs kiln.board (python/kiln/board) with Debian's Python.
// The page has one implementation, in Python, where the event-file reader and
// the protos already are; this file only finds an interpreter and the package
// and runs it as a child process, relaying what it prints.
#include "io/cli_board.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <system_error>

#include "io/printable.h"

extern char** environ;

namespace kiln::io {

namespace fs = std::filesystem;

namespace {

constexpr const char* kDefaultPython = "/usr/bin/python3";

// Run by the interpreter as `python3 -c kBootstrap SEARCHED ARGS...`. The current
// folder (sys.path[0] for -c) is dropped so that a `kiln` folder there cannot
// shadow the package; a failed import says which interpreter looked where.
constexpr const char* kBootstrap = R"PY(import sys
if sys.path and sys.path[0] == "":
    del sys.path[0]
try:
    import kiln.board
except ImportError as e:
    sys.stderr.write("kiln-cli board: the Python package kiln cannot be imported by %s (%s); "
                     "looked in %s and that interpreter's own path. Build the kiln_python_ext target beside "
                     "kiln-cli, install kiln (cmake --install, or the wheel), put it on PYTHONPATH, or set "
                     "KILN_PYTHON to an interpreter that has it.\n" % (sys.executable, e, sys.argv[1]))
    sys.exit(1)
sys.exit(kiln.board.main(sys.argv[2:], prog="kiln-cli board"))
)PY";

bool has_package(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "kiln" / "__init__.py", ec);
}

std::string this_executable() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.string();
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string s;
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

struct ChildOutput {
  int status = 1;
  std::string out, err;
};

// Runs argv with `env`, collecting its standard output and error (both read as
// they come, so a chatty child never blocks on a full pipe).
ChildOutput run_child(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]), close(out_pipe[1]);
    throw std::system_error(errno, std::generic_category(), "pipe");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  std::vector<char*> c_argv, c_env;
  for (const std::string& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
  for (const std::string& e : env) c_env.push_back(const_cast<char*>(e.c_str()));
  c_argv.push_back(nullptr);
  c_env.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, c_argv[0], &actions, nullptr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  ChildOutput result;
  if (rc != 0) {
    close(out_pipe[0]), close(err_pipe[0]);
    result.err = "kiln-cli board: cannot run the Python interpreter " + argv[0] + ": " + std::strerror(rc) +
                 " (set KILN_PYTHON to a Python 3 that can import the kiln package)\n";
    return result;
  }
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (pollfd& p : fds)
    if (p.fd >= 0) close(p.fd);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(wstatus)) {
    result.status = WEXITSTATUS(wstatus);
  } else {
    result.status = 1;
    if (WIFSIGNALED(wstatus))
      result.err += "kiln-cli board: the Python process ended on signal " + std::to_string(WTERMSIG(wstatus)) + "\n";
  }
  return result;
}

}  // namespace

std::vector<std::string> board_package_dirs(const std::string& exe) {
  std::vector<std::string> dirs;
  if (exe.empty()) return dirs;
  fs::path bin = fs::path(exe).parent_path();
  if (has_package(bin / "python")) dirs.push_back((bin / "python").string());
  std::error_code ec;
  fs::path lib = bin.parent_path() / "lib";
  std::vector<std::string> installed;
  for (fs::directory_iterator it(lib, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    fs::path site = it->path() / "site-packages";
    if (name.rfind("python3.", 0) == 0 && has_package(site)) installed.push_back(site.string());
  }
  std::sort(installed.rbegin(), installed.rend());  // the newest Python first
  dirs.insert(dirs.end(), installed.begin(), installed.end());
  return dirs;
}

int run_board(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const char* chosen = std::getenv("KILN_PYTHON");
  std::string python = chosen && *chosen ? chosen : kDefaultPython;
  std::vector<std::string> dirs = board_package_dirs(this_executable());

  std::vector<std::string> env;
  std::string pythonpath = join(dirs, ":");
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    if (entry.rfind("PYTHONPATH=", 0) == 0) {
      std::string old = entry.substr(std::strlen("PYTHONPATH="));
      if (!old.empty()) pythonpath += (pythonpath.empty() ? "" : ":") + old;
    } else {
      env.push_back(entry);
    }
  }
  if (!pythonpath.empty()) env.push_back("PYTHONPATH=" + pythonpath);

  std::vector<std::string> argv = {python, "-c", kBootstrap, dirs.empty() ? "(no folder beside kiln-cli)" : join(dirs, ", ")};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildOutput child = run_child(argv, env);
  out << printable(child.out, /*keep_newlines=*/true);
  err << printable(child.err, /*keep_newlines=*/true);
  return child.status;
}

}  // namespace kiln::io
