// Fresh files beside an output, for writers that replace their output by a
// rename: "<path>.<tag>.<pid>.<8 random hex digits>", created exclusively
// (O_EXCL, or link(2) for a hard link), so an existing file of the user --
// "<path>.tmp" say -- is never overwritten or removed.
#pragma once
#include <string>

namespace ctmc::solvers {

// A new empty file "<path>.<tag>.<pid>.<hex>", open for writing: its
// descriptor and name. InputError "<path>: cannot create a temporary file
// (<reason>)" when none can be created (folder missing or not writable).
struct UniqueFile {
  int fd = -1;
  std::string name;
};
UniqueFile create_unique_file(const std::string& path, const std::string& tag);

// A new hard link "<path>.<tag>.<pid>.<hex>" to the existing file `path`;
// its name, or "" when the file system refuses the link for another reason
// than the name being taken (the caller can copy instead).
std::string link_unique(const std::string& path, const std::string& tag);

// Writes all of `size` bytes to `fd` (retrying short writes and EINTR), then
// closes it; false (errno set) if a write or the close failed.
bool write_and_close(int fd, const void* data, std::size_t size);

}  // namespace ctmc::solvers
