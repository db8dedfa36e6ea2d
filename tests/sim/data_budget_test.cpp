// A data folder's images are bounded by one budget for all its files (what
// they take as floats), judged from the IDX headers before anything is
// inflated, and a label file by its image file's count.
#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../test_temp_files.hpp"
#include "ctmc/sim/formats/dataset.hpp"
#include "ctmc/sim/formats/idx.hpp"
#include "input_error_check.hpp"

using ctmc::sim::testing::check_input_error;
namespace fs = std::filesystem;

namespace {

std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}
std::string images(std::uint32_t n, std::uint32_t rows, std::uint32_t cols, bool with_pixels = true) {
  return std::string("\x00\x00\x08\x03", 4) + be32(n) + be32(rows) + be32(cols) +
         (with_pixels ? std::string(std::size_t(n) * rows * cols, '\x40') : std::string());
}
std::string labels(std::uint32_t n, std::uint32_t present) {
  return std::string("\x00\x00\x08\x01", 4) + be32(n) + std::string(present, '\x01');
}
std::string gzip(const std::string& in) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&zs, static_cast<uLong>(in.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(out.size() - zs.avail_out);
  deflateEnd(&zs);
  return out;
}

// A data folder of the four files (names as given, so a test can gzip one).
fs::path folder(const std::string& name, const std::string& train_images_name, const std::string& train_images,
                const std::string& train_labels, const std::string& test_images, const std::string& test_labels) {
  const fs::path d = ctmc::testing::temp_dir() / name;
  fs::create_directories(d);
  std::ofstream(d / train_images_name, std::ios::binary) << train_images;
  std::ofstream(d / "train-labels-idx1-ubyte", std::ios::binary) << train_labels;
  std::ofstream(d / "t10k-images-idx3-ubyte", std::ios::binary) << test_images;
  std::ofstream(d / "t10k-labels-idx1-ubyte", std::ios::binary) << test_labels;
  return d;
}

struct BudgetVariable {
  explicit BudgetVariable(const char* value) { ::setenv("CTMC_SNN_MAX_DATA_GIB", value, 1); }
  ~BudgetVariable() { ::unsetenv("CTMC_SNN_MAX_DATA_GIB"); }
};

}  // namespace

TEST_CASE("a label file describing more labels than its images is refused from its header") {
  const fs::path d = folder("budget_labels", "train-images-idx3-ubyte", images(10, 1, 2), labels(1000000, 10),
                            images(10, 1, 2), labels(10, 10));
  const std::string lab = (d / "train-labels-idx1-ubyte").string();
  check_input_error([&] { ctmc::sim::load_idx_dir(d.string()); }, lab,
                    "header describes 1000000 elements of 1 byte, more than 10 labels, one for each image of");
}

TEST_CASE("a small .gz whose header declares more pixels than the budget is refused before inflating") {
  // 600 Mi pixels (2.3 GiB as floats) declared by a file of a few dozen bytes:
  // under the 1 GiB an IDX file may describe, over the folder's 2 GiB budget.
  const fs::path d = folder("budget_gz", "train-images-idx3-ubyte.gz", gzip(images(1, 24576, 25600, false)),
                            labels(1, 1), images(1, 1, 2), labels(1, 1));
  const std::string gz = (d / "train-images-idx3-ubyte.gz").string();
  check_input_error([&] { ctmc::sim::load_idx_dir(d.string()); }, gz,
                    "more than 2 GiB of images as floats, what is left of the data folder's budget (raise it with "
                    "CTMC_SNN_MAX_DATA_GIB, now 2 GiB)");
}

TEST_CASE("the budget covers the folder's files together, and CTMC_SNN_MAX_DATA_GIB sets it") {
  // 100 + 100 images of 2 pixels: 1600 bytes as floats.
  const fs::path d = folder("budget_env", "train-images-idx3-ubyte", images(100, 1, 2), labels(100, 100),
                            images(100, 1, 2), labels(100, 100));
  CHECK(ctmc::sim::load_idx_dir(d.string()).test.size() == 100);
  {
    // 1.2e-6 GiB = 1288 bytes: the training images (800 bytes) fit, the test images not any more.
    BudgetVariable small("0.0000012");
    check_input_error([&] { ctmc::sim::load_idx_dir(d.string()); }, (d / "t10k-images-idx3-ubyte").string(),
                      "more than 488 bytes of images as floats");
  }
  {
    BudgetVariable bad("lots");
    try {
      (void)ctmc::sim::load_idx_dir(d.string());
      FAIL("no InputError");
    } catch (const ctmc::InputError& e) {
      CHECK(std::string(e.what()).rfind("CTMC_SNN_MAX_DATA_GIB: 'lots' is not a number of GiB", 0) == 0);
    }
  }
}
