// A saved model's directory as an attacker (or a crash) may leave it: links
// out of the directory, FIFOs, names with terminal escape sequences, and the
// temporary directories of saves that were killed.
#include "saved_model_test.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <kiln/saved_model.h>
#include <nlohmann/json.hpp>

#include "io/cli.h"
#include "io/printable.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::read_bytes;
using kiln::testing::TempDir;
using kiln::testing::write_bytes;
namespace fs = std::filesystem;
namespace sm = kiln::saved_model;

namespace {

// A small model at `dir`: a variable and a signature 'serving_default' (x -> x * w).
void save_small(const std::string& dir) {
  Variable w(constant({1.f, 2.f}), {.name = "w"});
  auto f = kiln::function([w](const Tensor& x) { return x * w; },
                          {.input_signature = std::vector<TensorSpec>{TensorSpec({2}, float32)}, .name = "f"});
  sm::Object root;
  root.add("w", w).add("f", f);
  sm::save(root, dir, {{"serving_default", {f, {"x"}}}});
}

// A pid no process has: a child that has exited and been reaped.
pid_t dead_pid() {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

bool has_control_bytes(const std::string& s) {
  for (unsigned char c : s)
    if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
  return false;
}

}  // namespace

TEST(SavedModelFiles, StaleTemporariesOfKilledSavesAreRemoved) {
  TempDir tmp;
  save_small(tmp.path("m"));
  // What `kill -9` during a save leaves: the temporary directory, or the old
  // model moved aside, named with the dead process's pid.
  pid_t dead = dead_pid(), alive = ::getppid();
  auto make = [&](const std::string& name) {
    fs::create_directories(tmp.path(name));
    write_bytes(tmp.path(name + "/variables.safetensors"), std::string(1000, 'x'));
    return tmp.path(name);
  };
  std::string killed = make(".m.tmp-" + std::to_string(dead) + "-0");
  std::string moved_aside = make(".m.old-" + std::to_string(dead) + "-7");
  std::string ancient = make(".m.tmp-" + std::to_string(alive) + "-1");
  fs::last_write_time(ancient, fs::file_time_type::clock::now() - std::chrono::hours(48));
  std::string running = make(".m.tmp-" + std::to_string(alive) + "-2");  // a save under way elsewhere
  std::string other_model = make(".n.tmp-" + std::to_string(dead) + "-0");
  std::string not_ours = make(".m.tmp-backup");
  save_small(tmp.path("m"));
  EXPECT_FALSE(fs::exists(killed));
  EXPECT_FALSE(fs::exists(moved_aside));
  EXPECT_FALSE(fs::exists(ancient));
  EXPECT_TRUE(fs::exists(running));
  EXPECT_TRUE(fs::exists(other_model));  // cleaned by the next save of n
  EXPECT_TRUE(fs::exists(not_ours));
  EXPECT_NO_THROW(sm::load(tmp.path("m")));
  // Into a new directory too (the parent holds the leftovers).
  std::string killed_new = make(".fresh.tmp-" + std::to_string(dead) + "-0");
  save_small(tmp.path("fresh"));
  EXPECT_FALSE(fs::exists(killed_new));
}

TEST(SavedModelFiles, LoaderReadsOnlyRegularFilesInsideTheDirectory) {
  TempDir tmp;
  save_small(tmp.path("m"));
  std::string weights = read_bytes(tmp.path("m/variables.safetensors"));
  // A link out of the directory (here to a valid file, which must still not be read).
  fs::create_directories(tmp.path("elsewhere"));
  write_bytes(tmp.path("elsewhere/secret"), weights);
  fs::remove(tmp.path("m/variables.safetensors"));
  fs::create_symlink(tmp.path("elsewhere/secret"), tmp.path("m/variables.safetensors"));
  expect_error<InvalidArgument>([&] { sm::load(tmp.path("m")); },
                                {"variables.safetensors is a link to a file outside the model directory"});
  // Through "..", relative.
  fs::remove(tmp.path("m/variables.safetensors"));
  fs::create_symlink("../elsewhere/secret", tmp.path("m/variables.safetensors"));
  expect_error<InvalidArgument>([&] { sm::load(tmp.path("m")); }, {"outside the model directory"});
  // A link to a file inside the directory is fine.
  fs::remove(tmp.path("m/variables.safetensors"));
  write_bytes(tmp.path("m/weights.bin"), weights);
  fs::create_symlink("./sub/../weights.bin", tmp.path("m/variables.safetensors"));
  fs::create_directories(tmp.path("m/sub"));
  EXPECT_NO_THROW(sm::load(tmp.path("m")));
  // A FIFO: refused without waiting for a writer. A directory: refused.
  fs::remove(tmp.path("m/variables.safetensors"));
  ASSERT_EQ(::mkfifo(tmp.path("m/variables.safetensors").c_str(), 0600), 0);
  expect_error<InvalidArgument>([&] { sm::load(tmp.path("m")); }, {"variables.safetensors is not a regular file"});
  fs::remove(tmp.path("m/variables.safetensors"));
  fs::create_directories(tmp.path("m/variables.safetensors"));
  expect_error<InvalidArgument>([&] { sm::load(tmp.path("m")); }, {"is not a regular file"});
  fs::remove(tmp.path("m/variables.safetensors"));
  fs::create_symlink(tmp.path("m/gone"), tmp.path("m/variables.safetensors"));
  expect_error<NotFound>([&] { sm::load(tmp.path("m")); }, {"broken link"});
}

TEST(SavedModelFiles, ErrorsNeverEchoRawBytes) {
  EXPECT_EQ(io::printable("plain name/ü 名前"), "plain name/ü 名前");
  EXPECT_EQ(io::printable("\x1b[2J\x07\r\n\x7f"), "\\x1b[2J\\x07\\x0d\\n\\x7f");
  EXPECT_EQ(io::printable("a\nb", true), "a\nb");
  EXPECT_EQ(io::printable("\xc2\x9b" "31m \xe2\x80\xae" "evil \xff\xc0\xaf"), "\\u{009b}31m \\u{202e}evil \\xff\\xc0\\xaf");

  TempDir tmp;
  save_small(tmp.path("m"));
  const std::string document = read_bytes(tmp.path("m/saved_model.json"));
  // Not JSON at all (what a link to another file would give): its bytes are not quoted.
  write_bytes(tmp.path("m/saved_model.json"), "root:x:0:0:\x1b]0;pwned\x07:/root:/bin/bash\n");
  try {
    sm::load(tmp.path("m"));
    FAIL() << "loaded";
  } catch (const InvalidArgument& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("saved_model.json is not valid JSON"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("root"), std::string::npos) << msg;
    EXPECT_FALSE(has_control_bytes(msg)) << msg;
  }
  // Names from the file in errors: escaped.
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(document);
  for (auto& g : doc["graphs"])
    for (auto& n : g["nodes"])
      if (n["op"] == "Mul") n["op"] = "Mul\x1b[31m\xe2\x80\xae";
  write_bytes(tmp.path("m/saved_model.json"), doc.dump());
  try {
    sm::load(tmp.path("m"));
    FAIL() << "loaded";
  } catch (const InvalidArgument& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("unknown op 'Mul\\x1b[31m\\u{202e}'"), std::string::npos) << msg;
    EXPECT_FALSE(has_control_bytes(msg)) << msg;
  }
}

TEST(SavedModelFiles, KilnCliEscapesNamesFromTheFile) {
  TempDir tmp;
  save_small(tmp.path("m"));
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(read_bytes(tmp.path("m/saved_model.json")));
  // A signature key and an input name that would clear the screen and retitle the terminal.
  doc["signatures"]["\x1b[2Jsig"] = doc["signatures"]["serving_default"];
  doc["signatures"].erase("serving_default");
  doc["signatures"]["\x1b[2Jsig"]["inputs"][0]["name"] = "x\x1b]0;pwned\x07";
  write_bytes(tmp.path("m/saved_model.json"), doc.dump());
  auto cli = [](std::vector<std::string> args, std::string* out, std::string* err) {
    std::ostringstream o, e;
    int status = io::kiln_cli_main(args, o, e);
    *out = o.str();
    *err = e.str();
    return status;
  };
  std::string out, err;
  ASSERT_EQ(cli({"show", "--dir", tmp.path("m"), "--all"}, &out, &err), 0) << err;
  EXPECT_FALSE(has_control_bytes(out)) << out;
  EXPECT_NE(out.find("signature_def['\\x1b[2Jsig']"), std::string::npos) << out;
  EXPECT_NE(out.find("inputs['x\\x1b]0;pwned\\x07']"), std::string::npos) << out;
  ASSERT_EQ(cli({"show", "--dir", tmp.path("m")}, &out, &err), 0) << err;
  EXPECT_NE(out.find("SignatureDef key: \"\\x1b[2Jsig\""), std::string::npos) << out;
  // Errors naming them too.
  EXPECT_EQ(cli({"run", "--dir", tmp.path("m"), "--signature_def", "\x1b[2Jsig", "--input", "y=[1,2]"}, &out, &err), 1);
  EXPECT_FALSE(has_control_bytes(err)) << err;
  EXPECT_NE(err.find("\\x1b"), std::string::npos) << err;
}
