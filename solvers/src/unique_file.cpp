// Fresh files beside an output (unique_file.hpp).
#include "ctmc/solvers/unique_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <system_error>

#include "ctmc/solvers/errors.hpp"

namespace ctmc::solvers {
namespace {

std::string candidate(const std::string& path, const std::string& tag, std::random_device& rd) {
  return fmt::format("{}.{}.{}.{:08x}", path, tag, static_cast<long>(::getpid()), rd());
}

}  // namespace

UniqueFile create_unique_file(const std::string& path, const std::string& tag) {
  std::random_device rd;
  UniqueFile f;
  for (int attempt = 0; attempt < 100; ++attempt) {
    f.name = candidate(path, tag, rd);
    f.fd = ::open(f.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (f.fd >= 0) return f;
    if (errno != EEXIST) break;
  }
  throw InputError(fmt::format("{}: cannot create a temporary file ({})", path, std::generic_category().message(errno)));
}

std::string link_unique(const std::string& path, const std::string& tag) {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string name = candidate(path, tag, rd);
    if (::link(path.c_str(), name.c_str()) == 0) return name;
    if (errno != EEXIST) break;
  }
  return "";
}

bool write_and_close(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  std::size_t done = 0;
  while (done < size) {
    const auto n = ::write(fd, p + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      errno = err;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return ::close(fd) == 0;
}

}  // namespace ctmc::solvers
