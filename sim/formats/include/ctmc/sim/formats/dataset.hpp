// Image classification data sets (DESIGN.md section 8): the in-memory form
// every reader (IDX, CIFAR-10 binary) produces and every network consumes.
#pragma once
#include <Eigen/Core>
#include <string>
#include <vector>

namespace ctmc::sim {

// One image per column, pixel values scaled to [0, 1]. For multi-channel
// images (CIFAR-10) a column is channel-major: all of channel 0 (row-major
// rows x cols), then channel 1, ... -- the order of the CIFAR binary format.
struct Dataset {
  Eigen::MatrixXf images;   // (channels*rows*cols) x n
  std::vector<int> labels;  // n, each in [0, num_classes)
  int rows = 28, cols = 28, channels = 1;

  int size() const { return static_cast<int>(labels.size()); }
  int features() const { return static_cast<int>(images.rows()); }
  // The first n samples (n clamped to size()), e.g. for quick evaluations.
  Dataset head(int n) const;
};

// Throws InputError naming "data" when the images do not have the network's
// input size or a label has no output of the network (labels 0..9 against 9
// outputs: the missing class could never be predicted, and the accuracy would
// silently measure something else).
void check_network_fits(const Dataset& d, int input_size, int output_size);

// A subset of the test images, as other codes evaluate on: every stride-th
// image from `offset` ("stride:K" or "stride:K:OFFSET"), or the images an
// index file lists, in its order ("index:FILE": whole numbers separated by
// white space or commas, each at most once). Default: all images.
struct TestSubset {
  int stride = 1, offset = 0;
  std::vector<int> indices;  // from an index file; when non-empty, stride and offset are unused
  std::string text = "all";  // as given, for reports
};
// InputError naming `option` (and the index file) for anything else.
TestSubset parse_test_subset(const std::string& text, const std::string& option = "subset");

// The test images a simulation runs on: `subset` of `test`, then the first
// `limit` of those (all when limit is 0). Throws InputError naming "limit",
// "subset" or "data" when limit < 0, an index lies beyond the test images,
// the data do not fit the network (check_network_fits), or nothing is left.
Dataset simulation_subset(const Dataset& test, int limit, int input_size, int output_size,
                          const TestSubset& subset = {});

struct DatasetSplit {
  Dataset train, test;
};

// Loads a directory holding the four MNIST-family IDX files
// (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
// t10k-labels-idx1-ubyte), each raw or with a .gz suffix -- the layout of
// data/mnist and data/fashion-mnist. Throws ctmc::InputError naming the
// directory or file when something is missing or malformed.
DatasetSplit load_idx_dir(const std::string& dir);

// InputError naming `input` when `path` exists and is not a regular file
// (symbolic links followed): /dev/zero, a FIFO or a folder given as a data
// file would be read until a cap or block forever.
void require_regular_file(const std::string& path, const std::string& input);

// Loads either an IDX directory (above) or a CIFAR-10 binary directory
// (data_batch_1.bin .. data_batch_5.bin, test_batch.bin), chosen by which
// files are present.
DatasetSplit load_dataset_dir(const std::string& dir);

}  // namespace ctmc::sim
