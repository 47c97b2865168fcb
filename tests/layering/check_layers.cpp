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
#include <algorithm>
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

std::vector<Folder> read_layers(const fs::path& doc) {
  std::ifstream in(doc);
  if (!in) {
    error("cannot read " + doc.string());
    return {};
  }
  std::vector<Folder> folders;
  std::string line;
  bool inside = false;
  int layer = 0;
  while (std::getline(in, line)) {
    if (!inside) {
      inside = line.rfind("```layers", 0) == 0;
      continue;
    }
    if (line.rfind("```", 0) == 0) return folders;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string word;
    bool any = false;
    while (words >> word) {
      Folder f;
      f.layer = layer;
      auto eq = word.find('=');
      f.path = word.substr(0, eq);
      if (eq != std::string::npos) {
        f.only.emplace();
        std::istringstream list(word.substr(eq + 1));
        std::string item;
        while (std::getline(list, item, ',')) f.only->insert(item);
      }
      folders.push_back(f);
      any = true;
    }
    if (any) ++layer;
  }
  error(doc.string() + ": no ```layers block (or it is not closed)");
  return {};
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

  if (!errors.empty()) {
    for (const std::string& e : errors) std::cerr << e << "\n";
    std::cerr << errors.size() << " layering error(s). The order is the ```layers block of "
                 "docs/architecture.md: move the code, or change the order there with a reason.\n";
    return 1;
  }
  std::cout << "layers ok: " << folders.size() << " folders, " << files << " files, " << includes
            << " quoted includes, no upward include, no loop\n";
  return 0;
}
