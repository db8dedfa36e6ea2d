// A VGG-11 with BatchNorm trained in PyTorch, in the files PyTorch itself
// wrote (tests/fixtures/torch_vgg11/, made once by
// tests/fixtures/make_torch_vgg_fixture.py with Debian's python3-torch 1.13):
// torch.onnx.export's file as a user gets it (BatchNorm already folded into
// the convolutions by the exporter), the same net exported with
// BatchNormalization nodes kept, and its state_dict as safetensors (BatchNorm
// unfolded, I64 num_batches_tracked scalars) with a manifest. Each route must
// give PyTorch's own predictions on the 100 MNIST test digits, and logits
// within float32 rounding of PyTorch's (an independent implementation: its
// convolutions, BatchNorm and linear layer, in eval mode). And an
// independent PyTorch implementation of the spiking conversion
// (make_torch_peer_claims.py): `check` passes its figures and fails the
// same code with a trace-convention mistake.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_helpers.hpp"
#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/sim/formats/safetensors.hpp"
#include "ctmc/sim/formats/tensor_inputs.hpp"

using namespace ctmc_cli_test;
using namespace ctmc::sim;

namespace {

std::string torch_file(const std::string& name) { return fixture("torch_vgg11/" + name); }

std::vector<int> read_predictions(const std::string& path) {
  std::istringstream lines(slurp(path));
  std::vector<int> out;
  for (int v; lines >> v;) out.push_back(v);
  return out;
}

// The net of `manifest` on the inputs of .npy `inputs` (one sample per
// leading index, its shape `input_shape`) against PyTorch's logits in .npy
// `logits` (samples x classes): the largest |ours - PyTorch's| over all
// logits, and the largest |PyTorch's logit| (for scale).
std::pair<double, double> logit_difference(const std::string& manifest, const std::string& inputs,
                                           const std::vector<std::int64_t>& input_shape, const std::string& logits,
                                           std::int64_t classes) {
  const Net net = load_net(manifest);
  const Tensor x = read_npy(torch_file(inputs));
  const Tensor ref = read_npy(torch_file(logits));
  REQUIRE(x.shape == input_shape);
  const std::int64_t n = input_shape[0];
  REQUIRE(ref.shape == std::vector<std::int64_t>{n, classes});
  Eigen::MatrixXf cols(static_cast<Eigen::Index>(x.values.size() / static_cast<std::size_t>(n)), n);
  for (Eigen::Index i = 0; i < cols.size(); ++i) cols.data()[i] = static_cast<float>(x.values[static_cast<std::size_t>(i)]);
  const Eigen::MatrixXf z = net.forward(cols);  // classes x n
  REQUIRE(z.rows() == classes);
  REQUIRE(z.cols() == n);
  double diff = 0, scale = 0;
  for (Eigen::Index s = 0; s < n; ++s)
    for (Eigen::Index k = 0; k < classes; ++k) {
      const double r = ref.values[static_cast<std::size_t>(s * classes + k)];
      diff = std::max(diff, std::abs(static_cast<double>(z(k, s)) - r));
      scale = std::max(scale, std::abs(r));
    }
  return {diff, scale};
}

}  // namespace

TEST_CASE("a VGG-11 with BatchNorm trained in PyTorch: torch.onnx.export's files and its state_dict predict as PyTorch") {
  const auto dir = temp_dir() / "torch_vgg";
  fs::create_directories(dir);
  const std::vector<int> torch_pred = read_predictions(torch_file("torch_vgg11_pred.txt"));
  REQUIRE(torch_pred.size() == 100);

  // The state_dict holds BatchNorm unfolded, with its I64 scalars.
  const SafetensorsFile st = read_safetensors(torch_file("torch_vgg11.safetensors"));
  REQUIRE(st.tensors.count("features.1.num_batches_tracked") == 1);
  CHECK(st.tensors.at("features.1.num_batches_tracked").dtype == "I64");
  CHECK(st.tensors.at("features.1.running_var").shape == std::vector<std::int64_t>{4});

  std::vector<std::string> nets{torch_file("torch_vgg11.json")};
  for (const std::string onnx : {"torch_vgg11.onnx", "torch_vgg11_bn.onnx"}) {
    const std::string net = (dir / (onnx + ".json")).string();
    const auto imp = run_cli("import onnx \"" + torch_file(onnx) + "\" --output \"" + net + "\"");
    REQUIRE_MESSAGE(imp.status == 0, imp.output);
    CHECK(imp.output.find("input [1, 28, 28], 15 layers, 10 outputs") != std::string::npos);
    // The exporter's constant folding leaves no BatchNormalization node; the
    // other file keeps all 13, folded here.
    const bool kept = onnx == "torch_vgg11_bn.onnx";
    CHECK_MESSAGE((imp.output.find("batchnorm folded into 13 convolution(s)") != std::string::npos) == kept, imp.output);
    nets.push_back(net);
  }
  for (const std::string& net : nets) {
    CAPTURE(net);
    const std::string pred = (dir / "pred.txt").string();
    const auto ev = run_cli("evaluate --net \"" + net + "\" --test-images \"" + torch_file("torch_vgg11_x.npy") +
                            "\" --test-labels \"" + torch_file("torch_vgg11_y.npy") + "\" --predictions \"" + pred + "\"");
    REQUIRE_MESSAGE(ev.status == 0, ev.output);
    CHECK_MESSAGE(ev.output.find("test accuracy 86.00%  (100 images)") != std::string::npos, ev.output);
    CHECK(read_predictions(pred) == torch_pred);
    const auto [diff, scale] =
        logit_difference(net, "torch_vgg11_x.npy", {100, 1, 28, 28}, "torch_vgg11_logits.npy", 10);
    MESSAGE(net, ": largest logit difference from PyTorch's ", diff, " (largest logit ", scale, ")");
    CHECK(diff < 1e-5 * scale);  // float32 rounding, 14 layers deep: 6e-7 of the largest logit here
  }
}

TEST_CASE("the PyTorch VGG-11 runs in the spiking simulator from its ONNX file: either kernel, any conv path and thread count") {
  const auto dir = temp_dir() / "torch_vgg_sim";
  fs::create_directories(dir);
  const std::string net = (dir / "net.json").string();
  const auto imp = run_cli("import onnx \"" + torch_file("torch_vgg11.onnx") + "\" --output \"" + net + "\"");
  REQUIRE_MESSAGE(imp.status == 0, imp.output);
  const std::string args = "simulate network --net \"" + net + "\" --test-images \"" + torch_file("torch_vgg11_x.npy") +
                           "\" --test-labels \"" + torch_file("torch_vgg11_y.npy") + "\" --neurons \"" +
                           fixture("three_state.json") + "\" --T 0.5 --dt 0.01 --tau 0.05 --rate 20 --scale const " +
                           "--limit 6 --seed 4 --json";
  // The document without its kernel and conv_path fields.
  const auto numbers = [](std::string doc) {
    auto j = nlohmann::json::parse(doc);
    j.erase("kernel");
    j.erase("conv_path");
    return j;
  };
  std::vector<nlohmann::json> by_kernel;
  for (const std::string kernel : {"reference", "vectorised"}) {
    CAPTURE(kernel);
    std::vector<nlohmann::json> docs;
    for (const auto& [threads, path] : {std::pair{1, "auto"}, {2, "auto"}, {3, "auto"}, {2, "event"}, {2, "dense"}}) {
      const auto r = run_cli(args + " --kernel " + kernel + " --conv-path " + path + " --threads " +
                             std::to_string(threads));
      REQUIRE_MESSAGE(r.status == 0, r.output);
      CHECK(nlohmann::json::parse(r.output)["kernel"] == kernel);
      docs.push_back(numbers(r.output));
    }
    for (std::size_t k = 1; k < docs.size(); ++k) CHECK_MESSAGE(docs[k] == docs[0], "run ", k);
    CHECK(docs[0]["layers"].size() == 14);  // 13 convolutions and the classifier
    CHECK(docs[0]["test_images"] == 6);
    CHECK(docs[0]["spikes_per_neuron"].get<double>() > 0);
    by_kernel.push_back(docs[0]);
  }
  // Other random numbers: the two kernels' spike counts differ.
  CHECK(by_kernel[0]["spikes_per_neuron"] != by_kernel[1]["spikes_per_neuron"]);

  const auto bad = run_cli(args + " --kernel simd");
  CHECK(bad.status == 2);
  CHECK_MESSAGE(bad.output.find("--kernel: unknown kernel 'simd' (expected auto, reference, vectorised or fast)") != std::string::npos,
                bad.output);
  const auto euler = run_cli(args + " --kernel vectorised --sampler euler");
  CHECK(euler.status == 2);
  CHECK_MESSAGE(euler.output.find("--kernel: the vectorised kernel runs the exact and end-state samplers; euler runs on "
                                  "the reference kernel") != std::string::npos,
                euler.output);
  const auto path = run_cli(args + " --conv-path sparse");
  CHECK(path.status == 2);
  CHECK_MESSAGE(path.output.find("--conv-path: unknown conv path 'sparse' (expected auto, event or dense)") !=
                    std::string::npos,
                path.output);
}

TEST_CASE("check: an independent PyTorch implementation's figures for the VGG-11 pass, at Case I too; its trace-convention mistake fails") {
  // tests/fixtures/torch_vgg11/peer_claims.json (make_torch_peer_claims.py):
  // A_ANN, A_MF, A_SNN and SynOps of a spiking conversion written in
  // PyTorch from the stated conventions (end-state sampler, 14 spiking
  // layers, T 2, tau 0.05), the same run with the naive trace increment
  // 1/tau per spike while claiming "integral", and the paper's Case I tau,
  // r and dt (T 5), where both implementations' A_SNN collapses to chance
  // while A_MF stays at 83%.
  const auto out = temp_dir() / "torch_peer_check";
  const auto r = run_cli("check \"" + torch_file("peer_claims.json") + "\" --out \"" + out.string() + "\" --seed 1 --json");
  CHECK_MESSAGE(r.status == 1, r.output);  // one claim fails, by design
  const auto doc = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  CHECK(doc["verdicts"] == nlohmann::json({{"torch-peer-vgg11", "Pass"},
                                           {"torch-peer-vgg11-naive-trace", "Fail"},
                                           {"torch-peer-vgg11-case1", "Pass"}}));
  CHECK(fs::exists(out / "check" / "report.md"));
}

TEST_CASE("a small PyTorch CNN exported with its BatchNorm kept (Identity-aliased parameters, a zero Pad before the AveragePool) imports and computes PyTorch's logits") {
  // torch_tiny_cnn.onnx: Conv (bias) + BatchNorm + ReLU + AvgPool2d(2) +
  // MaxPool2d(2) + Flatten + Linear, exported with training=PRESERVE and
  // constant folding off: PyTorch writes Identity nodes for BatchNorm's
  // parameters and a Pad before the AveragePool.
  const auto dir = temp_dir() / "torch_tiny";
  fs::create_directories(dir);
  const std::string net = (dir / "tiny.json").string();
  const auto imp = run_cli("import onnx \"" + torch_file("torch_tiny_cnn.onnx") + "\" --output \"" + net + "\"");
  REQUIRE_MESSAGE(imp.status == 0, imp.output);
  CHECK(imp.output.find("batchnorm folded into 1 convolution(s)") != std::string::npos);
  const auto [diff, scale] =
      logit_difference(net, "torch_tiny_cnn_x.npy", {5, 1, 8, 8}, "torch_tiny_cnn_logits.npy", 3);
  MESSAGE("largest logit difference from PyTorch's ", diff, " (largest logit ", scale, ")");
  CHECK(diff < 1e-5 * scale);
}
