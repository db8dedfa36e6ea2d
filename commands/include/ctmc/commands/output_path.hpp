// Checks of an output file named on the command line, before the work that
// produces it runs (a typo in --output should not cost a fit or a sweep).
#pragma once
#include <fmt/format.h>

#include <filesystem>
#include <string>

#include "ctmc/core/errors.hpp"

namespace ctmc::commands {

// Its folder must exist and it must not be a folder itself; InputError
// naming `option` otherwise.
inline void check_output_path(const std::string& output, const std::string& option) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(output);
  if (fs::is_directory(target, ec)) throw InputError(fmt::format("{}: '{}' is a folder, not a file", option, output));
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::exists(parent, ec))
    throw InputError(fmt::format("{}: folder '{}' of '{}' does not exist", option, parent.string(), output));
  if (!fs::is_directory(parent, ec))
    throw InputError(fmt::format("{}: '{}' of '{}' is not a folder", option, parent.string(), output));
  if (target.filename().empty() || target.filename() == "." || target.filename() == "..")
    throw InputError(fmt::format("{}: '{}' names no file", option, output));
}

}  // namespace ctmc::commands
