// All-or-nothing multi-file writer (atomic_write.hpp).
#include "ctmc/sim/atomic_write.hpp"

#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "ctmc/solvers/errors.hpp"
#include "ctmc/solvers/unique_file.hpp"

namespace ctmc::sim {
namespace {

namespace fs = std::filesystem;

detail::FailureHook g_failure_hook = nullptr;

bool injected_failure(const char* step, const std::string& path) {
  return g_failure_hook != nullptr && g_failure_hook(step, path);
}

const std::error_code kInjected(EIO, std::generic_category());

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
    // A fresh temporary (solvers/unique_file.hpp): a file of the user's
    // named "<path>.tmp" is never overwritten or removed.
    if (injected_failure("temporary", e.path)) fail(e.path, "cannot create a temporary file", kInjected);
    const auto tmp = solvers::create_unique_file(e.path, "tmp");
    e.tmp = tmp.name;
    e.tmp_made = true;
    // Every byte written and the file closed, or the error (a full disk often
    // shows only at close on network file systems).
    if (!solvers::write_and_close(tmp.fd, files[i].bytes.data(), files[i].bytes.size()))
      fail(e.path, "write failed (disk full?)", std::error_code(errno, std::generic_category()));
  }
  for (auto& e : st.entries) {
    if (fs::exists(fs::symlink_status(e.path, ec))) {
      // A hard link keeps the old file in place, so each rename below still
      // replaces its target atomically; a copy where links are not supported.
      if (injected_failure("copy", e.path)) fail(e.path, "cannot keep a copy of the existing file", kInjected);
      e.backup = solvers::link_unique(e.path, "bak");
      if (e.backup.empty()) {
        const auto copy = solvers::create_unique_file(e.path, "bak");
        ::close(copy.fd);
        e.backup = copy.name;
        fs::copy_file(e.path, e.backup, fs::copy_options::overwrite_existing, ec);
        if (ec) {
          const auto why = ec;
          fs::remove(e.backup, ec);
          fail(e.path, "cannot keep a copy of the existing file as " + e.backup, why);
        }
      }
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

namespace detail {
void set_failure_hook(FailureHook hook) { g_failure_hook = hook; }
}  // namespace detail

}  // namespace ctmc::sim
