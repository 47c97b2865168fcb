// kiln-cli show prints names from the model's files (signature keys, input
// and tensor names, functions, objects, variables) on one line each: a
// newline or an escape sequence in a name is written escaped, so a hostile
// model cannot forge lines of the listing or drive the terminal.
#include <kiln/kiln.h>

#include "cli_test_util.h"
#include "test_util.h"

using namespace kiln;
using kiln::testing::cli;
using kiln::testing::CliResult;
using kiln::testing::TempDir;

namespace {

int count_of(const std::string& text, const std::string& part) {
  int n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

bool has_control_bytes_but_newlines(const std::string& s) {
  for (unsigned char c : s)
    if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
  return false;
}

TEST(KilnCliNames, ShowEscapesNewlinesAndEscapesInNames) {
  TempDir tmp;
  const std::string forged = "serve\nSignatureDef key: \"fake\"\x1b[2J";
  Variable w(constant({1.f, 2.f}), {.name = "w\nVariables:\x1b]0;t\x07"});
  auto f = kiln::function([w](const Tensor& x) { return x * w; },
                          {.input_signature = std::vector<TensorSpec>{TensorSpec({2})}, .name = "f"});
  saved_model::Object root;
  root.add("w\nfake", w).add("f\nFunction Name: 'fake'", f);
  saved_model::save(root, tmp.path("m"), {{forged, {f, {"x\ninputs['fake']"}}}});

  CliResult keys = cli({"show", "--dir", tmp.path("m")});
  ASSERT_EQ(keys.status, 0) << keys.err;
  EXPECT_EQ(count_of(keys.out, "SignatureDef key:"), 2) << keys.out;  // one line, the name's copy escaped within it
  EXPECT_EQ(count_of(keys.out, "\nSignatureDef key:"), 1) << keys.out;
  EXPECT_NE(keys.out.find("SignatureDef key: \"serve\\nSignatureDef key: \"fake\"\\x1b[2J\"\n"), std::string::npos)
      << keys.out;

  CliResult all = cli({"show", "--dir", tmp.path("m"), "--all"});
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_FALSE(has_control_bytes_but_newlines(all.out)) << all.out;
  for (const char* line : {"signature_def['serve\\nSignatureDef key: \"fake\"\\x1b[2J']:\n",
                           "    inputs['x\\ninputs['fake']'] tensor_info:\n", "  Function Name: 'f\\nFunction Name: 'fake''\n",
                           "  w\\nfake: name='w\\nVariables:\\x1b]0;t\\x07"})
    EXPECT_NE(all.out.find(line), std::string::npos) << line << "\nin:\n" << all.out;
  EXPECT_EQ(count_of(all.out, "\n  Function Name:"), 1) << all.out;
}

}  // namespace
