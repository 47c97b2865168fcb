// The layering check (ctest: Layering.IncludesFollowLayers).
//
//   check_layers REPO_ROOT
//
// Reads the declared layer order from the fenced ```layers block of
// docs/architecture.md (the one place it is written), then every
// `#include "..."` of every C++ file under the declared folders, and fails
// when
//   - a folder includes a folder of a higher layer, or a peer (two folders on
//     one line of the block do not include each other);
//   - a folder restricted to a list (`src/nn=include/kiln`) includes another;
//   - folders include each other in a loop;
//   - a file or include lies in no declared folder (a new folder under src/
//     must be placed in the order), or an include names no file.
// Includes resolve as the compiler resolves quoted includes here: the
// including file's own folder first, then src/, then include/.
//
// It also reads the ```namespaces block of the same file and fails when a
// file under src/ opens a namespace its folder does not own (see
// "Namespaces" there): a folder opens `kiln`, `kiln::<folder>` and the
// namespaces its line lists (and namespaces nested in these), another
// folder's namespace only to forward-declare types, and `kiln::detail` (or a
// public `kiln::x::detail`) only to define names that a public header's
// `detail` namespace declares. Namespaces are found by a small scan of the
// code with comments, strings and preprocessor lines blanked, not by a C++
// parser: enough for the declarations Kiln writes.
#include <algorithm>
#include <cctype>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Folder {
  std::string path;                         // relative to the root, '/'-separated
  int layer = 0;                            // line of the block, bottom = 0
  std::optional<std::set<std::string>> only;  // may include only these (and itself)
};

std::vector<std::string> errors;

void error(const std::string& message) { errors.push_back(message); }

std::string rel(const fs::path& p, const fs::path& root) {
  return fs::relative(p, root).generic_string();
}

// One word of a fenced block in the architecture doc: "name" or "name=a,b,c".
struct BlockWord {
  std::string name;
  std::optional<std::vector<std::string>> list;
};

// The words of each line ('#' starts a comment) of the ```<tag> block read
// from `in`; nullopt, reported, when there is none or it is not closed.
std::optional<std::vector<std::vector<BlockWord>>> read_block(std::istream& in, const fs::path& doc,
                                                              const std::string& tag) {
  std::vector<std::vector<BlockWord>> lines;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside) {
      inside = line.rfind("```" + tag, 0) == 0;
      continue;
    }
    if (line.rfind("```", 0) == 0) return lines;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string word;
    std::vector<BlockWord>& out = lines.emplace_back();
    while (words >> word) {
      BlockWord w;
      auto eq = word.find('=');
      w.name = word.substr(0, eq);
      if (eq != std::string::npos) {
        w.list.emplace();
        std::istringstream list(word.substr(eq + 1));
        std::string item;
        while (std::getline(list, item, ',')) w.list->push_back(item);
      }
      out.push_back(std::move(w));
    }
  }
  error(doc.string() + ": no ```" + tag + " block (or it is not closed)");
  return std::nullopt;
}

std::vector<Folder> read_layers(const fs::path& doc) {
  std::ifstream in(doc);
  if (!in) {
    error("cannot read " + doc.string());
    return {};
  }
  auto lines = read_block(in, doc, "layers");
  if (!lines) return {};
  std::vector<Folder> folders;
  int layer = 0;
  for (const std::vector<BlockWord>& words : *lines) {
    for (const BlockWord& w : words) {
      Folder f;
      f.layer = layer;
      f.path = w.name;
      if (w.list) f.only.emplace(w.list->begin(), w.list->end());
      folders.push_back(f);
    }
    if (!words.empty()) ++layer;
  }
  return folders;
}

// The declared folder holding `path` (the longest declared prefix), or null.
const Folder* folder_of(const std::vector<Folder>& folders, const std::string& path) {
  const Folder* best = nullptr;
  for (const Folder& f : folders)
    if (path.rfind(f.path + "/", 0) == 0 && (!best || f.path.size() > best->path.size())) best = &f;
  return best;
}

bool is_cpp(const fs::path& p) {
  std::string e = p.extension().string();
  return e == ".h" || e == ".hpp" || e == ".cpp" || e == ".cc";
}

// Folders that include each other in a loop, as "a -> b -> a" (one per loop found).
void find_loops(const std::map<std::string, std::set<std::string>>& edges) {
  std::map<std::string, int> state;  // 0 unseen, 1 on the path, 2 done
  std::vector<std::string> path;
  std::set<std::string> reported;
  auto visit = [&](auto&& self, const std::string& f) -> void {
    state[f] = 1;
    path.push_back(f);
    if (auto it = edges.find(f); it != edges.end()) {
      for (const std::string& g : it->second) {
        if (state[g] == 1) {
          auto start = std::find(path.begin(), path.end(), g);
          std::string text;
          for (auto p = start; p != path.end(); ++p) text += *p + " -> ";
          text += g;
          if (reported.insert(text).second) error("folders include each other in a loop: " + text);
        } else if (state[g] == 0) {
          self(self, g);
        }
      }
    }
    path.pop_back();
    state[f] = 2;
  };
  for (const auto& [f, _] : edges)
    if (state[f] == 0) visit(visit, f);
}


// ---- Namespaces ----

struct NamespaceRule {
  std::string folder;              // "src/ops"
  std::vector<std::string> may_open;  // besides kiln, kiln::<folder>, checked kiln::detail
};

std::vector<NamespaceRule> read_namespace_rules(const fs::path& doc) {
  std::ifstream in(doc);
  auto lines = read_block(in, doc, "namespaces");
  if (!lines) return {};
  std::vector<NamespaceRule> rules;
  for (const std::vector<BlockWord>& words : *lines)
    for (const BlockWord& w : words) rules.push_back({w.name, w.list.value_or(std::vector<std::string>{})});
  return rules;
}

// The text with comments, string and character literals and preprocessor
// lines replaced by spaces (newlines kept, so offsets and lines stay).
std::string blank_non_code(const std::string& s) {
  std::string out = s;
  auto blank = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < out.size(); ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  std::size_t i = 0, n = s.size();
  bool line_start = true;
  while (i < n) {
    char c = s[i];
    if (line_start && (c == ' ' || c == '\t')) {
      ++i;
      continue;
    }
    if (line_start && c == '#') {  // a preprocessor line, with its continuations
      std::size_t j = i;
      while (j < n && !(s[j] == '\n' && s[j - 1] != '\\')) ++j;
      blank(i, j);
      i = j;
      continue;
    }
    line_start = false;
    if (c == '\n') {
      line_start = true;
      ++i;
    } else if (s.compare(i, 2, "//") == 0) {
      std::size_t j = s.find('\n', i);
      j = j == std::string::npos ? n : j;
      blank(i, j);
      i = j;
    } else if (s.compare(i, 2, "/*") == 0) {
      std::size_t j = s.find("*/", i + 2);
      j = j == std::string::npos ? n : j + 2;
      blank(i, j);
      i = j;
    } else if (c == 'R' && i + 1 < n && s[i + 1] == '"' && (i == 0 || !(std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_'))) {
      std::size_t open = s.find('(', i + 2);
      std::string delim = ")" + s.substr(i + 2, open - i - 2) + "\"";
      std::size_t j = s.find(delim, open);
      j = j == std::string::npos ? n : j + delim.size();
      blank(i + 1, j);
      i = j;
    } else if (c == '"' || (c == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(s[i - 1]))))) {
      std::size_t j = i + 1;
      while (j < n && s[j] != c) j += s[j] == '\\' ? 2 : 1;
      blank(i + 1, j);
      i = j + 1;
    } else {
      ++i;
    }
  }
  return out;
}

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

struct NamespaceBlock {
  std::string path;  // "kiln::ops"; anonymous namespaces are left out of paths
  bool anonymous = false;
  std::size_t body_begin = 0, body_end = 0;
  int line = 0;
};

// Every namespace block of `code` (already blanked), outer ones after inner.
std::vector<NamespaceBlock> namespace_blocks(const std::string& code) {
  struct Frame {
    bool is_namespace;
    NamespaceBlock block;
  };
  std::vector<Frame> stack;
  std::vector<NamespaceBlock> blocks;
  int line = 1;
  for (std::size_t i = 0; i < code.size(); ++i) {
    char c = code[i];
    if (c == '\n') ++line;
    if (c == '{') {
      stack.push_back({false, {}});
    } else if (c == '}') {
      if (stack.empty()) continue;
      Frame f = stack.back();
      stack.pop_back();
      if (f.is_namespace) {
        f.block.body_end = i;
        blocks.push_back(f.block);
      }
    } else if (code.compare(i, 9, "namespace") == 0 && (i == 0 || !is_ident(code[i - 1])) &&
               i + 9 < code.size() && !is_ident(code[i + 9])) {
      std::size_t j = i + 9;
      while (j < code.size() && std::isspace(static_cast<unsigned char>(code[j]))) ++j;
      std::size_t name_begin = j;
      while (j < code.size() && (is_ident(code[j]) || code[j] == ':')) ++j;
      std::string name = code.substr(name_begin, j - name_begin);
      while (j < code.size() && std::isspace(static_cast<unsigned char>(code[j]))) ++j;
      if (j >= code.size() || code[j] != '{') continue;  // an alias or `using namespace`
      std::string outer;
      for (auto it = stack.rbegin(); it != stack.rend(); ++it)
        if (it->is_namespace) {
          outer = it->block.path;
          break;
        }
      NamespaceBlock b;
      b.anonymous = name.empty();
      b.path = b.anonymous ? outer : (outer.empty() ? name : outer + "::" + name);
      b.body_begin = j + 1;
      b.line = line;
      for (std::size_t k = i; k < j; ++k)
        if (code[k] == '\n') ++line;
      stack.push_back({true, b});
      i = j;
    }
  }
  return blocks;
}

std::string trim(const std::string& s) {
  std::size_t a = s.find_first_not_of(" \t\n\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\n\r") - a + 1);
}

// `text` without its <...> groups (template arguments).
std::string without_angles(const std::string& text) {
  std::string out;
  int depth = 0;
  for (char c : text) {
    if (c == '<') ++depth;
    else if (c == '>' && depth > 0) --depth;
    else if (depth == 0) out += c;
  }
  return out;
}

struct Declaration {
  std::string name;        // the declared name; for `A::f` definitions, `A`
  bool forward = false;    // `class X;` / `struct X;`
};

// The name one namespace-scope declaration or definition introduces ("" for
// none: using-directives, static_assert, operators).
Declaration declared_name(std::string text, bool has_body) {
  text = trim(text);
  if (text.rfind("template", 0) == 0) {
    std::size_t open = text.find('<');
    int depth = 0;
    std::size_t k = open;
    for (; k < text.size(); ++k) {
      if (text[k] == '<') ++depth;
      if (text[k] == '>' && --depth == 0) break;
    }
    text = trim(text.substr(k + 1));
  }
  static const std::regex skip(R"(^(using\s+namespace\b|static_assert\b|extern\s*$))");
  if (text.empty() || std::regex_search(text, skip)) return {};
  std::smatch m;
  static const std::regex alias(R"(^using\s+(\w+)\s*=)");
  if (std::regex_search(text, m, alias)) return {m[1], false};
  static const std::regex using_decl(R"(^using\s+[\w:]*::(\w+)$)");
  if (std::regex_search(text, m, using_decl)) return {m[1], false};
  static const std::regex type(R"(^(?:\[\[[^\]]*\]\]\s*)?(?:class|struct|union|enum(?:\s+class)?)\s+(?:\[\[[^\]]*\]\]\s*)?(\w+))");
  if (std::regex_search(text, m, type) && text.find('(') == std::string::npos)
    return {m[1], !has_body && trim(m.suffix()).empty()};
  std::string head = text.substr(0, text.find('('));
  head = without_angles(head.substr(0, head.find('=')));
  if (head.find("operator") != std::string::npos) return {};
  static const std::regex last(R"(([\w:~]+)\s*(?:\[[^\]]*\])?\s*$)");
  if (!std::regex_search(head, m, last)) return {};
  std::string name = m[1];
  return {name.substr(0, name.find("::")), false};
}

// The declarations at the top level of a namespace body (nested namespaces
// are blocks of their own and are skipped).
std::vector<Declaration> top_level_declarations(const std::string& code, const NamespaceBlock& b) {
  std::vector<Declaration> out;
  std::string statement;
  for (std::size_t i = b.body_begin; i < b.body_end; ++i) {
    char c = code[i];
    if (c == '{') {
      bool nested_namespace = std::regex_search(statement, std::regex(R"(\bnamespace\s*[\w:]*\s*$)"));
      if (!nested_namespace) {
        Declaration d = declared_name(statement, true);
        if (!d.name.empty()) out.push_back(d);
      }
      int depth = 1;
      while (depth > 0 && ++i < b.body_end) depth += code[i] == '{' ? 1 : code[i] == '}' ? -1 : 0;
      statement.clear();
    } else if (c == ';') {
      Declaration d = declared_name(statement, false);
      if (!d.name.empty()) out.push_back(d);
      statement.clear();
    } else {
      statement += c;
    }
  }
  return out;
}

// Names declared in the `detail` namespaces of the public headers, and every
// namespace a public header opens.
void read_public_namespaces(const fs::path& include_dir, std::set<std::string>& detail_names,
                            std::set<std::string>& public_namespaces) {
  if (!fs::is_directory(include_dir)) return;
  for (const auto& entry : fs::recursive_directory_iterator(include_dir)) {
    if (!entry.is_regular_file() || !is_cpp(entry.path())) continue;
    std::ifstream in(entry.path());
    std::string code = blank_non_code(std::string(std::istreambuf_iterator<char>(in), {}));
    for (const NamespaceBlock& b : namespace_blocks(code)) {
      if (b.anonymous) continue;
      public_namespaces.insert(b.path);
      if (b.path == "detail" || b.path.size() > 8 && b.path.compare(b.path.size() - 8, 8, "::detail") == 0)
        for (const Declaration& d : top_level_declarations(code, b)) detail_names.insert(d.name);
    }
  }
}

bool within(const std::string& path, const std::string& ns) {
  return path == ns || path.rfind(ns + "::", 0) == 0;
}

void check_namespaces(const fs::path& root, const std::vector<NamespaceRule>& rules, int& files, int& blocks) {
  std::set<std::string> detail_names, public_namespaces;
  read_public_namespaces(root / "include", detail_names, public_namespaces);
  if (detail_names.empty()) error("no names found in the detail namespaces of include/ (the scan is broken)");
  if (fs::is_directory(root / "src"))
    for (const auto& entry : fs::directory_iterator(root / "src")) {
      std::string p = rel(entry.path(), root);
      if (entry.is_directory() &&
          std::none_of(rules.begin(), rules.end(), [&](const NamespaceRule& r) { return r.folder == p; }))
        error(p + "/ has no line in the ```namespaces block of docs/architecture.md");
    }
  for (const NamespaceRule& rule : rules) {
    if (!fs::is_directory(root / rule.folder)) {
      error("```namespaces names " + rule.folder + ", which is not a folder");
      continue;
    }
    std::vector<std::string> own = rule.may_open;
    own.push_back("kiln::" + fs::path(rule.folder).filename().string());
    std::string allowed = "kiln";
    for (const std::string& ns : own) allowed += ", " + ns;
    for (const auto& entry : fs::recursive_directory_iterator(root / rule.folder)) {
      if (!entry.is_regular_file() || !is_cpp(entry.path())) continue;
      ++files;
      const std::string file = rel(entry.path(), root);
      std::ifstream in(entry.path());
      const std::string code = blank_non_code(std::string(std::istreambuf_iterator<char>(in), {}));
      for (const NamespaceBlock& b : namespace_blocks(code)) {
        if (b.anonymous || b.path == "kiln") continue;
        ++blocks;
        const std::string where = file + ":" + std::to_string(b.line) + ": namespace " + b.path;
        if (std::any_of(own.begin(), own.end(), [&](const std::string& ns) { return within(b.path, ns); })) continue;
        std::vector<Declaration> decls = top_level_declarations(code, b);
        const bool detail = b.path.size() > 8 && b.path.compare(b.path.size() - 8, 8, "::detail") == 0 &&
                            public_namespaces.count(b.path);
        if (detail) {
          for (const Declaration& d : decls)
            if (!detail_names.count(d.name))
              error(where + ": declares '" + d.name + "', which no public header's detail namespace names; " +
                    "put it in " + own.back() + " (" + b.path + " is only for what public headers declare)");
          continue;
        }
        if (!decls.empty() && std::all_of(decls.begin(), decls.end(), [](const Declaration& d) { return d.forward; }))
          continue;  // forward declarations of another folder's types
        error(where + ": " + rule.folder + " may open only " + allowed +
              " (and namespaces within them), a public detail namespace, or another namespace to forward-declare types");
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: check_layers REPO_ROOT\n";
    return 2;
  }
  const fs::path root = fs::canonical(argv[1]);
  const fs::path doc = root / "docs" / "architecture.md";
  std::vector<Folder> folders = read_layers(doc);
  if (folders.empty()) error("no layers declared in docs/architecture.md");

  // Every folder directly under src/ must have its place in the order.
  if (fs::is_directory(root / "src")) {
    for (const auto& entry : fs::directory_iterator(root / "src")) {
      std::string p = rel(entry.path(), root);
      if (entry.is_directory()) {
        bool declared = std::any_of(folders.begin(), folders.end(), [&](const Folder& f) { return f.path == p; });
        if (!declared) error(p + "/ is not in the layer order of docs/architecture.md");
      } else if (is_cpp(entry.path())) {
        error(p + " lies directly in src/, in no layer");
      }
    }
  }

  std::map<std::string, std::set<std::string>> edges;  // folder -> folders it includes
  const std::regex include_re(R"re(^\s*#\s*include\s*"([^"]+)")re");
  int files = 0, includes = 0;
  for (const Folder& from : folders) {
    if (!fs::is_directory(root / from.path)) continue;  // optional folders (python/src)
    for (const auto& entry : fs::recursive_directory_iterator(root / from.path)) {
      if (!entry.is_regular_file() || !is_cpp(entry.path())) continue;
      std::string file = rel(entry.path(), root);
      if (folder_of(folders, file) != &from) continue;  // a nested declared folder's file
      ++files;
      std::ifstream in(entry.path());
      std::string line;
      int number = 0;
      while (std::getline(in, line)) {
        ++number;
        std::smatch m;
        if (!std::regex_search(line, m, include_re)) continue;
        ++includes;
        const std::string name = m[1];
        const std::string where = file + ":" + std::to_string(number) + ": #include \"" + name + "\"";
        std::optional<fs::path> target;
        for (const fs::path& base : {entry.path().parent_path(), root / "src", root / "include"}) {
          if (fs::is_regular_file(base / name)) {
            target = fs::canonical(base / name);
            break;
          }
        }
        if (!target) {
          error(where + ": names no file (searched the file's folder, src/, include/)");
          continue;
        }
        const Folder* to = folder_of(folders, rel(*target, root));
        if (!to) {
          error(where + ": " + rel(*target, root) + " lies in no declared folder");
          continue;
        }
        if (to == &from) continue;
        edges[from.path].insert(to->path);
        if (from.only && !from.only->count(to->path)) {
          error(where + ": " + from.path + " may include only itself and the folders listed after its '='");
        } else if (to->layer > from.layer) {
          error(where + ": " + from.path + " (layer " + std::to_string(from.layer) + ") includes " + to->path +
                " (layer " + std::to_string(to->layer) + "), a layer above it");
        } else if (to->layer == from.layer) {
          error(where + ": " + from.path + " includes its peer " + to->path + " (one line of the order)");
        }
      }
    }
  }
  find_loops(edges);

  int namespace_files = 0, namespace_blocks_seen = 0;
  check_namespaces(root, read_namespace_rules(doc), namespace_files, namespace_blocks_seen);

  if (!errors.empty()) {
    for (const std::string& e : errors) std::cerr << e << "\n";
    std::cerr << errors.size() << " layering error(s). The order is the ```layers block of "
                 "docs/architecture.md, the namespaces its ```namespaces block: move the code, or change "
                 "the block there with a reason.\n";
    return 1;
  }
  std::cout << "layers ok: " << folders.size() << " folders, " << files << " files, " << includes
            << " quoted includes, no upward include, no loop; namespaces ok: " << namespace_blocks_seen
            << " named namespace blocks in " << namespace_files << " files\n";
  return 0;
}
