// Whole-file input for the sim readers (read_file.hpp).
#include "ctmc/sim/read_file.hpp"

#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "ctmc/solvers/errors.hpp"

namespace ctmc::sim {

std::vector<std::uint8_t> read_file_bytes(const std::string& path, const std::string& what) {
  std::error_code ec;  // error_code overload: an unreadable parent is left to the open below
  if (std::filesystem::is_directory(path, ec)) throw InputError(path + ": is a folder, not a " + what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open " + what);
  try {
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  } catch (const std::exception& e) {
    // libstdc++'s filebuf throws std::ios_base::failure when read(2) fails
    // (EIO, or EISDIR for a folder that appeared after the check above).
    throw InputError(path + ": cannot read " + what + " (" + e.what() + ")");
  }
}

}  // namespace ctmc::sim
