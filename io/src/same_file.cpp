// Outputs against inputs (same_file.hpp).
#include "ctmc/io/same_file.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <iterator>
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

bool in_folder(const std::string& path, const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(folder, ec);
  if (ec || dir.empty()) return false;
  const fs::path p = fs::weakly_canonical(path, ec);
  if (ec) return false;
  // Below `dir` when every part of `dir` starts `p` (a trailing separator of
  // `dir` is an empty last part).
  auto q = p.begin();
  for (auto d = dir.begin(); d != dir.end(); ++d, ++q) {
    if (d->empty() && std::next(d) == dir.end()) break;
    if (q == p.end() || *q != *d) return false;
  }
  return true;
}

void refuse_inputs_in_replaced_folder(const std::string& folder, const std::string& writer, const std::string& option,
                                      const std::vector<NamedInput>& inputs) {
  for (const NamedInput& in : inputs)
    if (!in.path.empty() && in_folder(in.path, folder))
      throw InputError(in.source + ": '" + in.path + "' is in the folder '" + folder + "' that " + writer +
                       " replaces (" + option +
                       "); writing it would remove that input");
}

}  // namespace ctmc::io
