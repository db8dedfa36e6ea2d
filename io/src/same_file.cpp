// Outputs against inputs (same_file.hpp).
#include "ctmc/io/same_file.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <utility>

#include "ctmc/core/errors.hpp"

namespace ctmc::io {
namespace {

struct FileId {
  dev_t dev;
  ino_t ino;
  bool operator==(const FileId& o) const { return dev == o.dev && ino == o.ino; }
};

bool file_id(const std::string& path, FileId& id, bool& folder) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  id = {st.st_dev, st.st_ino};
  folder = S_ISDIR(st.st_mode);
  return true;
}

}  // namespace

void refuse_outputs_over_inputs(const std::vector<NamedOutput>& outputs, const std::vector<std::string>& inputs) {
  std::vector<std::pair<FileId, std::string>> ids;
  for (const std::string& in : inputs) {
    FileId id{};
    bool folder = false;
    if (in.empty() || !file_id(in, id, folder)) continue;
    if (!folder) {
      ids.emplace_back(id, in);
      continue;
    }
    std::error_code ec;
    for (std::filesystem::directory_iterator it(in, ec), end; !ec && it != end; it.increment(ec)) {
      FileId fid{};
      bool sub = false;
      if (file_id(it->path().string(), fid, sub) && !sub) ids.emplace_back(fid, it->path().string());
    }
  }
  for (const NamedOutput& out : outputs) {
    FileId id{};
    bool folder = false;
    if (out.path.empty() || !file_id(out.path, id, folder) || folder) continue;
    for (const auto& [in_id, in] : ids)
      if (in_id == id)
        throw InputError(out.option + ": '" + out.path + "' is the input '" + in +
                         "' (the same file); writing it would replace that input");
  }
}

}  // namespace ctmc::io
