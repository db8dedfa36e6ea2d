// All-or-nothing output (atomic_write.hpp).
#include "ctmc/io/atomic_write.hpp"
#include "failure_hook.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "ctmc/core/errors.hpp"

namespace ctmc::io {
namespace {

namespace fs = std::filesystem;

detail::FailureHook g_failure_hook = nullptr;

bool injected_failure(const char* step, const std::string& path) {
  return g_failure_hook != nullptr && g_failure_hook(step, path);
}

// "<path>.<tag>.<pid>.<8 hex>": recognisably ours (stale_leftover), and never
// the name of a file of the user's (created exclusively).
std::string candidate(const std::string& path, const char* tag, std::random_device& rd) {
  return fmt::format("{}.{}.{}.{:08x}", path, tag, static_cast<long>(::getpid()), rd());
}

struct NewFile {
  int fd = -1;
  std::string name;
};

// A new empty file "<path>.<tag>.<pid>.<hex>" open for writing; -1 (errno
// set) when none can be created.
NewFile create_unique(const std::string& path, const char* tag) {
  std::random_device rd;
  NewFile f;
  for (int attempt = 0; attempt < 100; ++attempt) {
    f.name = candidate(path, tag, rd);
    f.fd = ::open(f.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (f.fd >= 0 || errno != EEXIST) return f;
  }
  return f;
}

// A new hard link "<path>.<tag>.<pid>.<hex>" to `path`; "" when the file
// system refuses it (the caller copies instead).
std::string link_unique(const std::string& path, const char* tag) {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string name = candidate(path, tag, rd);
    if (::link(path.c_str(), name.c_str()) == 0) return name;
    if (errno != EEXIST) break;
  }
  return "";
}

// Every byte written (short writes and EINTR retried), optionally flushed to
// the disk, and the descriptor closed; 0 or the errno of the first failure (a
// full disk often shows only at fsync or close, e.g. on NFS).
int write_all_and_close(int fd, std::string_view bytes, bool sync) {
  int err = 0;
  std::size_t done = 0;
  while (done < bytes.size()) {
    const auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    if (n == 0) {  // no progress and no error: do not spin
      err = EIO;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (err == 0 && sync && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
  return err;
}

std::string_view view(const std::vector<std::uint8_t>& b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// How an existing (resolved) output is written.
enum class Kind { absent, regular, folder, special };

Kind kind_of(const std::string& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) return Kind::absent;
  if (S_ISREG(st.st_mode)) return Kind::regular;
  if (S_ISDIR(st.st_mode)) return Kind::folder;
  return Kind::special;
}

// Whether `entry` (a file name in the output's folder) is a temporary or kept
// copy "<base>.tmp.<pid>.<8 hex>" / "<base>.bak.<pid>.<8 hex>" of output
// `base` left by a process that no longer runs.
bool stale_leftover(const std::string& entry, const std::string& base) {
  for (const char* tag : {".tmp.", ".bak."}) {
    const std::string prefix = base + tag;
    if (entry.size() < prefix.size() + 11 || entry.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = entry.substr(prefix.size());
    const auto dot = rest.find('.');
    if (dot == std::string::npos || dot == 0 || dot > 10 || rest.size() != dot + 9) continue;
    bool ok = true;
    for (std::size_t i = 0; i < dot; ++i) ok = ok && rest[i] >= '0' && rest[i] <= '9';
    for (std::size_t i = dot + 1; i < rest.size(); ++i)
      ok = ok && ((rest[i] >= '0' && rest[i] <= '9') || (rest[i] >= 'a' && rest[i] <= 'f'));
    if (!ok) continue;
    const long pid = std::strtol(rest.c_str(), nullptr, 10);
    if (pid <= 0 || pid == static_cast<long>(::getpid())) continue;
    // Alive (or not ours to judge, EPERM): left alone.
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return true;
  }
  return false;
}

void remove_stale_leftovers(const std::string& target) {
  const fs::path t(target);
  const fs::path dir = t.parent_path().empty() ? fs::path(".") : t.parent_path();
  const std::string base = t.filename().string();
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;
    if (stale_leftover(it->path().filename().string(), base)) {
      std::error_code rm;
      fs::remove(it->path(), rm);  // best effort: the new output is in place
    }
  }
}

// What the writer has done so far, undone by the destructor unless committed
// (std::filesystem's error_code overloads: cleanup never throws).
struct Staging {
  struct Entry {
    std::string path, target, tmp, backup;
    Kind kind = Kind::absent;
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
        fs::rename(it->backup, it->target, ec);
      else if (it->installed)
        fs::remove(it->target, ec);
      else if (it->backed_up)
        fs::remove(it->backup, ec);
      if (it->tmp_made && !it->installed) fs::remove(it->tmp, ec);
    }
  }
};

void keep_copy(Staging::Entry& e) {
  // A hard link keeps the old file in place, so the rename still replaces
  // the target atomically; a copy where links are not supported.
  if (injected_failure("copy", e.path)) fail(e.path, "cannot keep a copy of the existing file", EIO);
  e.backup = link_unique(e.target, "bak");
  if (e.backup.empty()) {
    const auto copy = create_unique(e.target, "bak");
    if (copy.fd < 0) fail(e.path, "cannot keep a copy of the existing file", errno);
    ::close(copy.fd);
    e.backup = copy.name;
    std::error_code ec;
    fs::copy_file(e.target, e.backup, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      const int why = ec.value();
      fs::remove(e.backup, ec);
      fail(e.path, "cannot keep a copy of the existing file as " + e.backup, why);
    }
  }
  e.backed_up = true;
}

}  // namespace

void fail(const std::string& path, const std::string& what, int err) {
  throw InputError(fmt::format("{}: {} ({})", path, what, std::strerror(err)));
}

std::string resolve_output(const std::string& path) {
  fs::path p(path);
  for (int hops = 0; hops <= 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p.string();
    std::error_code ec;
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) fail(path, "cannot read the symbolic link", ec.value());
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  fail(path, "cannot write", ELOOP);
}

void write_file(const std::string& path, std::string_view bytes, const std::string& shown_as) {
  const std::string& name = shown_as.empty() ? path : shown_as;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) fail(name, "cannot write", errno);
  if (const int err = write_all_and_close(fd, bytes, false)) fail(name, "cannot write", err);
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  write_files_atomically({{path, std::vector<std::uint8_t>(bytes.begin(), bytes.end())}});
}

void write_files_atomically(const std::vector<PendingFile>& files) {
  Staging st;
  st.entries.resize(files.size());
  std::error_code ec;
  // Step 1-2: folders, where each output goes, complete temporaries.
  for (std::size_t i = 0; i < files.size(); ++i) {
    auto& e = st.entries[i];
    e.path = files[i].path;
    const fs::path given(e.path);
    if (given.has_parent_path()) {
      fs::create_directories(given.parent_path(), ec);
      if (ec) fail(e.path, "cannot create folder " + given.parent_path().string(), ec.value());
    }
    // What the path names (links followed by the kernel, including the magic
    // ones of /proc such as /dev/stdout -> /proc/self/fd/1 -> "pipe:[...]",
    // which cannot be followed by name): a device or pipe is written through
    // the path itself; only a regular file or none is resolved by name.
    e.kind = kind_of(e.path);
    if (e.kind == Kind::folder) throw InputError(e.path + ": is a folder, not a file");
    if (e.kind == Kind::special) {
      e.target = e.path;
      continue;
    }
    e.target = resolve_output(e.path);
    if (injected_failure("temporary", e.path)) fail(e.path, "cannot create a temporary file", EIO);
    const auto tmp = create_unique(e.target, "tmp");
    if (tmp.fd < 0) fail(e.path, "cannot create a temporary file", errno);
    e.tmp = tmp.name;
    e.tmp_made = true;
    if (const int err = write_all_and_close(tmp.fd, view(files[i].bytes), true)) fail(e.path, "cannot write", err);
  }
  // Step 3: special files, written through (O_CREAT absent: if the device or
  // pipe vanished meanwhile, nothing regular is created in its place).
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto& e = st.entries[i];
    if (e.kind != Kind::special) continue;
    const int fd = ::open(e.target.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) fail(e.path, "cannot write", errno);
    if (const int err = write_all_and_close(fd, view(files[i].bytes), false)) fail(e.path, "cannot write", err);
  }
  // Step 4: renames, in the order given.
  for (auto& e : st.entries) {
    if (e.kind == Kind::special) continue;
    struct stat old {};
    if (::lstat(e.target.c_str(), &old) == 0) {
      // Regular when resolved; anything else now (replaced meanwhile) is not
      // renamed over.
      if (!S_ISREG(old.st_mode)) throw InputError(e.path + ": was replaced by a file that is not regular while being written");
      keep_copy(e);
    }
    if (injected_failure("rename", e.path)) fail(e.path, "cannot rename " + e.tmp + " into place", EIO);
    fs::rename(e.tmp, e.target, ec);
    if (ec) fail(e.path, "cannot rename " + e.tmp + " into place", ec.value());
    e.installed = true;
  }
  st.committed = true;
  // Step 5: the new output is complete; kept copies and leftovers of killed
  // runs go (best effort).
  for (auto& e : st.entries) {
    if (e.backed_up) fs::remove(e.backup, ec);
    if (e.kind != Kind::special) remove_stale_leftovers(e.target);
  }
}

namespace detail {
void set_failure_hook(FailureHook hook) { g_failure_hook = hook; }
}  // namespace detail

}  // namespace ctmc::io
