// Writing output files, all or nothing: the one implementation every writer of
// the project uses (models, network manifests and weights, IDX files, report
// files), so the rules below and the I/O error path exist once (README:
// exit 2 and "nothing half-written").
//
// Where an output goes (resolve_output):
//   - a symbolic link is followed (as `cp`, shell redirection and editors do):
//     the file written is the link's final target, in the target's folder; a
//     dangling link writes its target when the target's folder exists;
//   - a regular file (or none) is replaced atomically: written to a fresh
//     temporary "<target>.tmp.<pid>.<8 hex>" in the target's folder (created
//     exclusively, so no file of the user's is overwritten), flushed (fsync)
//     and renamed over the target;
//   - a character device, FIFO or other file that is neither regular nor a
//     folder (`--output /dev/null`, `--output /dev/stdout`, a named pipe) is
//     written through: opened without O_CREAT and truncated, written, closed.
//     Nothing is ever renamed over it, so /dev/null stays a device;
//   - a folder is refused ("<path>: is a folder, not a file").
//
// write_files_atomically(files) writes several files as one output (a network's
// manifest and weights, an IDX image/label pair):
//   1. creates each output's folder, resolves it as above;
//   2. writes every regular output to its temporary, checking every write, the
//      fsync and the close;
//   3. writes the special files (they cannot be undone, so only once every
//      temporary is complete);
//   4. renames the temporaries into place in the order given, keeping a hard
//      link (or copy) of an existing target as "<target>.bak.<pid>.<8 hex>"
//      first, and deletes those at the end;
//   5. removes what killed earlier runs left beside each output: its
//      ".tmp.<pid>.<hex>" and ".bak.<pid>.<hex>" files whose process is gone.
// On any failure the temporaries are removed, targets already replaced are
// restored from their kept copies, and ctmc::InputError is thrown (a crash
// between two renames can still leave a mix; readers that must detect it
// carry a content hash, e.g. a network manifest's "weights_sha256").
//
// I/O errors, here and in every writer: InputError, one line naming the file
// as the user gave it and the system's reason (strerror), e.g.
//   "net.json: cannot write (No space left on device)"
//   "out/m.json: cannot create a temporary file (Permission denied)".
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ctmc::io {

struct PendingFile {
  std::string path;
  std::vector<std::uint8_t> bytes;
};

void write_files_atomically(const std::vector<PendingFile>& files);
void write_file_atomically(const std::string& path, std::string_view bytes);

// Writes `bytes` into `path`, creating it or truncating a regular file (for
// files inside a folder the caller made itself, e.g. a report's temporary
// folder): every write and the close checked. Errors name `shown_as` (the
// path when empty): "<shown_as>: cannot write (<reason>)".
void write_file(const std::string& path, std::string_view bytes, const std::string& shown_as = "");

// Where output `path` really goes: symbolic links followed (at most 40, else
// InputError "<path>: too many levels of symbolic links"); a dangling link
// gives its target. Relative link targets are taken from the link's folder.
std::string resolve_output(const std::string& path);

// The one way writers report a failed system call: throws
// InputError("<path>: <what> (<strerror(err)>)").
[[noreturn]] void fail(const std::string& path, const std::string& what, int err);

}  // namespace ctmc::io
