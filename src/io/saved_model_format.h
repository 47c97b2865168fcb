#pragma once
// Names shared by the saved-model writer, reader and kiln-cli.
#include <string>
#include <string_view>

#include "kiln/saved_model.h"

namespace kiln::io {

inline constexpr std::string_view kDocumentFile = "saved_model.json";
inline constexpr std::string_view kVariablesFile = "variables.safetensors";
inline constexpr std::string_view kFormatName = "kiln.saved_model";
// How deep an object tree (or a module's submodules) may nest, on save and on load.
inline constexpr int kMaxObjectDepth = 64;

// Loads from the two files' bytes (what load does after reading them; the
// fuzz target calls it directly). `what` names the model in errors.
saved_model::Loaded load_from_bytes(std::string_view document, std::string_view variables, const std::string& what);

}  // namespace kiln::io
