// Bounded input files (input_file.hpp).
#include "ctmc/solvers/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ctmc/core/errors.hpp"

namespace ctmc::solvers {

std::string byte_size_text(std::uint64_t bytes) {
  if (bytes >= (std::uint64_t(1) << 30) && bytes % (std::uint64_t(1) << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

namespace {

const char* file_type_text(mode_t mode) {
  if (S_ISFIFO(mode)) return "a named pipe";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "an unknown kind of file";
}

}  // namespace

void refuse_too_large(const std::string& path, const InputKind& kind) {
  throw InputError(path + ": larger than " + byte_size_text(kind.max_bytes) + " (" + kind.typical + "); refusing");
}

InputFile::InputFile(const std::string& path, const char* what) : path_(path), what_(what) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer
  // (forever, if none comes); the file is refused below unless it is regular,
  // and a regular file ignores the flag.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd_ < 0) throw InputError(path + ": cannot open " + what + " (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int e = errno;
    ::close(fd_);
    throw InputError(path + ": cannot read " + what + " (" + std::strerror(e) + ")");
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd_);
    throw InputError(path + ": is a folder, not a " + what);
  }
  // A device or pipe has no size to check before reading (/dev/zero never
  // ends, a FIFO may never send anything): only regular files are read.
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw InputError(path + ": not a regular file (" + file_type_text(st.st_mode) +
                     "); a device, pipe or socket is never read as input");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t InputFile::read(void* buf, std::size_t n) {
  auto* p = static_cast<char*>(buf);
  std::size_t got = 0;
  while (got < n) {
    const ssize_t k = ::read(fd_, p + got, n - got);
    if (k < 0) {
      if (errno == EINTR) continue;
      throw InputError(path_ + ": cannot read " + what_ + " (" + std::strerror(errno) + ")");
    }
    if (k == 0) break;
    got += static_cast<std::size_t>(k);
  }
  return got;
}

std::string read_input_file(const std::string& path, const InputKind& kind) {
  InputFile in(path, kind.what);
  if (in.size() > kind.max_bytes) refuse_too_large(path, kind);
  std::string out;
  out.reserve(static_cast<std::size_t>(in.size()));
  // In pieces, against the cap again: a file may grow while it is read, and
  // some (/proc) report a size of 0 and still hold bytes.
  constexpr std::size_t kPiece = std::size_t(1) << 20;
  for (;;) {
    const std::size_t at = out.size();
    out.resize(at + kPiece);
    const std::size_t k = in.read(out.data() + at, kPiece);
    out.resize(at + k);
    if (out.size() > kind.max_bytes) refuse_too_large(path, kind);
    if (k < kPiece) break;
  }
  return out;
}

}  // namespace ctmc::solvers
