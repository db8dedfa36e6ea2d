// The options that say where a simulation's images come from (sim::DataSource):
// a data folder, tensor files for the test or train split, a normalisation.
#pragma once
#include <CLI/CLI.hpp>

#include "ctmc/sim/formats/tensor_inputs.hpp"

namespace ctmc::cli {

inline void add_data_options(CLI::App* cmd, sim::DataSource& d) {
  cmd->add_option("--data", d.dir,
                  "Data folder (IDX or CIFAR-10 binary), e.g. data/mnist: the test split is simulated, the train "
                  "split gives the q99 scales");
  cmd->add_option("--test-images", d.test_images,
                  "Test images from a tensor file instead of --data's test split: FILE.npy or FILE.safetensors:NAME, "
                  "shape (n, features...) or (n, C, H, W), values as stored (float32 exactly)");
  cmd->add_option("--test-labels", d.test_labels, "Test labels (n whole numbers) for --test-images: FILE.npy or "
                                                  "FILE.safetensors:NAME");
  cmd->add_option("--train-images", d.train_images, "Train images from a tensor file (for the q99 scales)");
  cmd->add_option("--train-labels", d.train_labels, "Train labels for --train-images");
  cmd->add_option("--normalize", d.normalization,
                  "Per-channel (x - mean) / sd on every image, as torchvision's Normalize: MEAN/SD, comma-separated "
                  "per channel (e.g. 0.1307/0.3081)");
}

}  // namespace ctmc::cli
