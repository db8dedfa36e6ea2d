// Reading an input file with a size bound, for every reader of the project
// (model files, network manifests, safetensors, IDX/CIFAR-10 data, the npm
// digits, activation tables, --samples/--weights files).
//
// Only regular files are read, and their size is checked before the first
// byte: a device or pipe has no size (/dev/zero never ends, a FIFO may never
// send anything, and opening one for reading waits for a writer, so it is
// opened without waiting and refused). Every reader names a cap that is
// generous for real data. Errors are InputError, one line starting with the path:
//   "<path>: is a folder, not a <what>"
//   "<path>: not a regular file (a named pipe); a device, pipe or socket is never read as input"
//   "<path>: cannot open <what> (<system reason>)"
//   "<path>: cannot read <what> (<system reason>)"
//   "<path>: larger than 64 MiB (a model file is a few KB); refusing"
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace ctmc::solvers {

// The kind of file a reader reads: its name in messages, the most bytes it
// accepts, and what such a file usually holds (said when refusing).
struct InputKind {
  const char* what;         // "model file"
  std::uint64_t max_bytes;  // refused beyond this
  const char* typical;      // "a model file is a few KB"
};

inline constexpr std::uint64_t kMiB = std::uint64_t(1) << 20;
// JSON models, manifests and activation tables: a few KB in practice (a
// 40,000-state Bernstein chain is about 7 MB).
inline constexpr InputKind kModelFileKind{"model file", 64 * kMiB, "a model file is a few KB"};
inline constexpr InputKind kActivationTableKind{"activation table", 64 * kMiB, "a table has a few hundred rows"};
// --samples / --weights: one value per line; 64 MiB is millions of values.
inline constexpr InputKind kSamplesFileKind{"samples file", 64 * kMiB, "a samples file has one value per line"};
inline constexpr InputKind kWeightsFileKind{"weights file", 64 * kMiB, "a weights file has one value per line"};

// "64 MiB", "1 GiB", "12345 bytes": a byte count for messages.
std::string byte_size_text(std::uint64_t bytes);

// "<path>: larger than <cap> (<typical>); refusing"
[[noreturn]] void refuse_too_large(const std::string& path, const InputKind& kind);

// An open input file, read in pieces (readers that know from a header how
// much they need read no further).
class InputFile {
 public:
  // Opens `path`; a folder, anything but a regular file, or an unopenable
  // path is an InputError naming `what`.
  InputFile(const std::string& path, const char* what);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // Reads up to n bytes into buf; fewer only at the end of the file.
  std::size_t read(void* buf, std::size_t n);
  // The file's size when it was opened.
  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // The open descriptor, for a reader that parses from a stream of its own
  // (fdopen(dup(...))): still owned, and closed, by this object.
  int descriptor() const { return fd_; }

 private:
  std::string path_;
  const char* what_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

// The whole file, refused (refuse_too_large) when its size passes
// kind.max_bytes, before reading (and at the first piece beyond the cap, for
// a file that grows while it is read).
std::string read_input_file(const std::string& path, const InputKind& kind);

}  // namespace ctmc::solvers
