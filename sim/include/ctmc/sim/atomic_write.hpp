// All-or-nothing output of one or more files (README: exit 2 and "nothing
// half-written"; DESIGN.md section 8).
//
// write_files_atomically(files):
//   1. creates each file's folder;
//   2. writes every file to a fresh temporary "<path>.tmp.<pid>.<hex>"
//      (created exclusively: solvers/unique_file.hpp, so no file of the
//      user's is overwritten), and checks every write and the close;
//   3. only when every temporary file is complete, renames them into place in
//      the order given (each rename replaces its target atomically), keeping
//      a hard link (or copy) of an existing target as "<path>.bak.<pid>.<hex>"
//      first, and deletes those at the end.
// On any failure the temporary files are removed, targets already replaced are
// restored from their kept copies, and ctmc::InputError
// ("<path>: what failed (system message)") is thrown, so a failed run never
// leaves, say, an old manifest beside new weights. (A crash between two
// renames can still leave a mix; the kept copies are then still there.)
// A target that exists as a directory is refused before anything is renamed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ctmc::sim {

struct PendingFile {
  std::string path;
  std::vector<std::uint8_t> bytes;
};

void write_files_atomically(const std::vector<PendingFile>& files);

namespace detail {
// Test seam for the failure paths, whose files now have unpredictable names:
// when set, write_files_atomically calls it before creating a file's
// temporary (step "temporary") and before keeping a copy of an existing
// target (step "copy"); true makes that step fail as if the system call had
// (EIO). Tests only (not thread-safe); nullptr turns it off.
using FailureHook = bool (*)(const std::string& step, const std::string& path);
void set_failure_hook(FailureHook hook);
}  // namespace detail

}  // namespace ctmc::sim
