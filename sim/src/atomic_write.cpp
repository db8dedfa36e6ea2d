// All-or-nothing multi-file writer (atomic_write.hpp).
#include "ctmc/sim/atomic_write.hpp"

#include <filesystem>
#include <fstream>
#include <system_error>

#include "ctmc/solvers/errors.hpp"

namespace ctmc::sim {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& path, const std::string& what, const std::error_code& ec = {}) {
  throw InputError(path + ": " + what + (ec ? " (" + ec.message() + ")" : std::string()));
}

// What the writer has done so far, undone by the destructor unless committed:
// std::filesystem's error_code overloads, so cleanup itself never throws.
struct Staging {
  struct Entry {
    std::string path, tmp, backup;
    bool tmp_made = false, backed_up = false, installed = false;
  };
  std::vector<Entry> entries;
  bool committed = false;

  ~Staging() {
    if (committed) return;
    std::error_code ec;
    // Undo in reverse: put each moved-aside target back, or remove a new file
    // that had no predecessor; then drop the temporary files.
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
      if (it->installed && it->backed_up)
        fs::rename(it->backup, it->path, ec);
      else if (it->installed)
        fs::remove(it->path, ec);
      else if (it->backed_up)
        fs::remove(it->backup, ec);
      if (it->tmp_made && !it->installed) fs::remove(it->tmp, ec);
    }
  }
};

}  // namespace

void write_files_atomically(const std::vector<PendingFile>& files) {
  Staging st;
  st.entries.reserve(files.size());
  for (const auto& f : files) {
    Staging::Entry e;
    e.path = f.path;
    e.tmp = f.path + ".tmp";
    e.backup = f.path + ".bak.tmp";
    st.entries.push_back(e);
  }
  std::error_code ec;
  for (std::size_t i = 0; i < files.size(); ++i) {
    auto& e = st.entries[i];
    const fs::path target(e.path);
    if (target.has_parent_path()) {
      fs::create_directories(target.parent_path(), ec);
      if (ec) fail(e.path, "cannot create folder " + target.parent_path().string(), ec);
    }
    if (fs::is_directory(target, ec)) fail(e.path, "is a directory");
    std::ofstream out(e.tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(e.path, "cannot open " + e.tmp + " for writing");
    e.tmp_made = true;
    out.write(reinterpret_cast<const char*>(files[i].bytes.data()), static_cast<std::streamsize>(files[i].bytes.size()));
    // Buffered bytes reach the file only here: check after flush and close.
    out.flush();
    out.close();
    if (out.fail()) fail(e.path, "write failed (disk full?)");
  }
  for (auto& e : st.entries) {
    if (fs::exists(fs::symlink_status(e.path, ec))) {
      // A hard link keeps the old file in place, so each rename below still
      // replaces its target atomically; a copy where links are not supported.
      fs::remove(e.backup, ec);  // a stale one from an interrupted run
      fs::create_hard_link(e.path, e.backup, ec);
      if (ec) fs::copy_file(e.path, e.backup, fs::copy_options::overwrite_existing, ec);
      if (ec) fail(e.path, "cannot keep a copy of the existing file as " + e.backup, ec);
      e.backed_up = true;
    }
    fs::rename(e.tmp, e.path, ec);
    if (ec) fail(e.path, "cannot rename " + e.tmp + " into place", ec);
    e.installed = true;
  }
  st.committed = true;
  for (auto& e : st.entries)
    if (e.backed_up) fs::remove(e.backup, ec);  // best effort: the new files are in place
}

}  // namespace ctmc::sim
