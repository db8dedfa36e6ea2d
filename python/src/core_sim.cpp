// simulate network: argument conversion over the command layer, the body
// the CLI runs, the network also from in-memory weights and images.
#include <fmt/format.h>

#include "core.hpp"
#include "ctmc/sim/formats/dataset.hpp"
#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/sim/engines/network_sim.hpp"
#include "ctmc/sim/formats/tensor_inputs.hpp"
#include "ctmc/core/errors.hpp"

namespace ctmc::python {
namespace {

sim::Tensor to_tensor(const TensorArg& t) {
  sim::Tensor out;
  out.dtype = "F64";
  out.shape = t.shape;
  out.values = t.values;
  return out;
}

// The network from in-memory layers, as load_network builds it from a
// safetensors file: weights [out, in] row-major, rounded to float.
sim::Mlp network_of(const std::vector<LayerArg>& layers, const std::string& what) {
  sim::Mlp net;
  if (layers.empty()) throw InputError(what + ": no layers");
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const auto& a = layers[l];
    if (a.weight.shape.size() != 2)
      throw InputError(fmt::format("{}: {}: a weight must have 2 dimensions [out, in], got {}", what, a.weight.name,
                                   a.weight.shape.size()));
    const auto n_out = a.weight.shape[0], n_in = a.weight.shape[1];
    if (n_out < 1 || n_in < 1 || n_out > (1 << 24) || n_in > (1 << 24))
      throw InputError(fmt::format("{}: {}: shape [{}, {}] is not a layer", what, a.weight.name, n_out, n_in));
    sim::DenseLayer d;
    d.W.resize(n_out, n_in);
    for (std::int64_t i = 0; i < n_out; ++i)
      for (std::int64_t j = 0; j < n_in; ++j)
        d.W(i, j) = static_cast<float>(a.weight.values[std::size_t(i * n_in + j)]);
    d.b = Eigen::VectorXf::Zero(n_out);
    if (a.bias) {
      if (a.bias->shape.size() != 1 || a.bias->shape[0] != n_out)
        throw InputError(fmt::format("{}: {}: a bias of {} values expected for {}", what, a.bias->name, n_out,
                                     a.weight.name));
      for (std::int64_t i = 0; i < n_out; ++i) d.b(i) = static_cast<float>(a.bias->values[std::size_t(i)]);
    }
    d.activation = a.activation;
    net.layers.push_back(std::move(d));
  }
  net.validate(what);
  return net;
}

// The data files given as the CLI's options; the normalization is left to
// data_of, which applies it to the arrays as well.
sim::DataSource data_files(const NetworkArgs& a) {
  sim::DataSource s;
  s.dir = a.dir;
  s.test_images = a.test_images_spec;
  s.test_labels = a.test_labels_spec;
  s.train_images = a.train_images_spec;
  s.train_labels = a.train_labels_spec;
  return s;
}

sim::DatasetSplit data_of(const NetworkArgs& a) {
  const bool test_spec = !a.test_images_spec.empty() || !a.test_labels_spec.empty();
  const bool train_spec = !a.train_images_spec.empty() || !a.train_labels_spec.empty();
  const auto pair = [](bool images, bool labels, const char* what) {
    if (images != labels) throw InputError(fmt::format("--{}-images and --{}-labels: give both or neither", what, what));
    return images;
  };
  const bool test_arr = pair(a.test_images.has_value(), a.test_labels.has_value(), "test");
  const bool train_arr = pair(a.train_images.has_value(), a.train_labels.has_value(), "train");
  sim::DatasetSplit d;
  if (test_spec || train_spec || !a.dir.empty()) {
    const sim::DataSource s = data_files(a);
    // load_data needs test images from somewhere: arrays come after it.
    if (!s.dir.empty() || test_spec) d = sim::load_data(s);
    else if (train_spec) {
      pair(!s.train_images.empty(), !s.train_labels.empty(), "train");
      d.train = sim::dataset_from_tensors(sim::read_tensor_input(s.train_images, "--train-images"),
                                          sim::read_tensor_input(s.train_labels, "--train-labels"), s.train_images,
                                          s.train_labels);
    }
  } else if (!test_arr) {
    throw InputError("--data: give a data folder, or the test images as tensors (--test-images, --test-labels)");
  }
  if (test_arr)
    d.test = sim::dataset_from_tensors(to_tensor(*a.test_images), to_tensor(*a.test_labels), a.test_images->name,
                                       a.test_labels->name);
  if (train_arr)
    d.train = sim::dataset_from_tensors(to_tensor(*a.train_images), to_tensor(*a.train_labels), a.train_images->name,
                                        a.train_labels->name);
  if (!a.normalization.empty()) {
    const sim::Normalization n = sim::parse_normalization(a.normalization);
    sim::normalize(d.test, n);
    sim::normalize(d.train, n);
  }
  return d;
}

}  // namespace

commands::NetworkCommandResult simulate_network(const NetworkArgs& a) {
  commands::NetworkInputs in;
  in.neurons = [&] {
    std::vector<sim::NeuronModel> neurons;
    for (const auto& m : a.neurons) neurons.push_back({load_model(m), m.source});
    return neurons;
  };
  in.net = [&] { return a.net_path.empty() ? network_of(a.layers, a.net_name) : sim::load_network(a.net_path); };
  if (!a.net_path.empty()) in.graph = [&] { return sim::load_net(a.net_path); };  // a conv manifest
  in.data = [&] { return data_of(a); };
  in.net_name = a.net_path.empty() ? a.net_name : a.net_path;
  if (a.data_name.empty()) {
    sim::DataSource s = data_files(a);
    s.normalization = a.normalization;
    in.data_name = sim::data_source_text(s);
  } else {
    in.data_name = a.data_name;
  }
  return commands::run_simulate_network(a.options, in);
}

}  // namespace ctmc::python
