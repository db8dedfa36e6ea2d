// Convolutional networks end to end through the executable: `import onnx`
// writes a manifest and its weights, `evaluate` with tensor-file inputs and
// --predictions gives the classes the independent reference predicts (in
// double, tests/sim/conv_reference.hpp), and the refusals exit 2 with one
// line naming what is wrong, writing nothing.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "../sim/onnx_builder.hpp"
#include "cli_helpers.hpp"
#include "ctmc/sim/formats/tensor_inputs.hpp"

using namespace ctmc_cli_test;
using namespace ctmc::sim;
using namespace ctmc::sim::testing;

namespace {

// Images whose two largest reference logits are this far apart: float32
// rounding (about 1e-6 here) cannot swap their order.
constexpr double kClearMargin = 1e-3;

void write_bytes(const fs::path& p, const std::vector<std::uint8_t>& b) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

struct Images {
  std::vector<int> predicted;  // the reference's argmax per image
  std::string images, labels;  // .npy paths
};

// n images of 1 x 8 x 8 whose reference argmax is clear; labels = the
// reference's prediction for the first half, (prediction + 1) mod 10 after.
Images write_images(const CnnFixture& fx, const fs::path& dir, int n) {
  Images out;
  Tensor x, y;
  x.shape = {n, 1, 8, 8};
  y.shape = {n};
  TestRng rng(123);
  while (static_cast<int>(out.predicted.size()) < n) {
    Image im = make_image(1, 8, 8);
    im.v = as_floats(rng.vec(64, 0, 1));
    const auto z = fx.reference(im);
    std::vector<double> sorted = z;
    std::sort(sorted.rbegin(), sorted.rend());
    if (sorted[0] - sorted[1] < kClearMargin) continue;
    const int best = static_cast<int>(std::max_element(z.begin(), z.end()) - z.begin());
    const int i = static_cast<int>(out.predicted.size());
    out.predicted.push_back(best);
    x.values.insert(x.values.end(), im.v.begin(), im.v.end());
    y.values.push_back(i < n / 2 ? best : (best + 1) % 10);
  }
  y.dtype = "F64";
  out.images = (dir / "x.npy").string();
  out.labels = (dir / "y.npy").string();
  write_bytes(out.images, encode_npy(x));
  write_bytes(out.labels, encode_npy(y));
  return out;
}

}  // namespace

TEST_CASE("import onnx + evaluate --predictions: a CNN with BatchNorm predicts as the independent reference does") {
  const auto dir = temp_dir() / "deep_cnn";
  fs::create_directories(dir);
  const CnnFixture fx;
  const std::string model = fx.build().write(dir / "cnn.onnx", "logits");
  const std::string net = (dir / "cnn.json").string();
  const auto imp = run_cli("import onnx \"" + model + "\" --output \"" + net + "\"");
  REQUIRE_MESSAGE(imp.status == 0, imp.output);
  MESSAGE(imp.output);
  CHECK(imp.output.find("batchnorm folded into 1 convolution(s): max relative error") != std::string::npos);
  CHECK(fs::exists(dir / "cnn.safetensors"));

  const Images im = write_images(fx, dir, 20);
  const std::string pred = (dir / "pred.txt").string();
  const auto ev = run_cli("evaluate --net \"" + net + "\" --test-images \"" + im.images + "\" --test-labels \"" + im.labels +
                          "\" --predictions \"" + pred + "\"");
  REQUIRE_MESSAGE(ev.status == 0, ev.output);
  CHECK_MESSAGE(ev.output.find("test accuracy 50.00%  (20 images)") != std::string::npos, ev.output);
  std::istringstream lines(slurp(pred));
  std::vector<int> got;
  for (int v; lines >> v;) got.push_back(v);
  CHECK(got == im.predicted);

  // The spiking simulator refuses max pooling: exit 2, naming the layer and what to use instead.
  const auto sim = run_cli("simulate network --net \"" + net + "\" --test-images \"" + im.images + "\" --test-labels \"" +
                           im.labels + "\" --neurons \"" + fixture("three_state.json") + "\" --T 1 --scale const");
  CHECK_MESSAGE(sim.status == 2, sim.output);
  CHECK_MESSAGE(sim.output.find("(layers[3], maxpool2d '/MaxPool_4'): the spiking simulator does not run max pooling") != std::string::npos,
                sim.output);
  CHECK_MESSAGE(sim.output.find("use a strided convolution or average pooling (avgpool2d)") != std::string::npos, sim.output);

  // One prediction per image needs one clip level.
  const auto two = run_cli("evaluate --net \"" + net + "\" --test-images \"" + im.images + "\" --test-labels \"" + im.labels +
                           "\" --clip inf,6 --predictions \"" + (dir / "p2.txt").string() + "\"");
  CHECK(two.status == 2);
  CHECK(two.output.find("--predictions: give one --clip level") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "p2.txt"));
}

namespace {

// A conv net imported from ONNX and 12 test images as .npy files, under dir:
// 1 x 8 x 8 -> conv 3x3 stride 2 pad 1 (3 channels, relu) -> 3 x 4 x 4 ->
// avgpool 2 -> 3 x 2 x 2 -> conv 3x3 pad 1 (2 channels, relu) -> 2 x 2 x 2
// -> flatten -> linear 8 -> 10.
struct SimCnn {
  std::string net, images, labels;
};
SimCnn write_sim_cnn(const fs::path& dir) {
  fs::create_directories(dir);
  TestRng rng(5);
  ModelBuilder mb({1, 8, 8});
  mb.init("c1.weight", {3, 1, 3, 3}, as_floats(rng.vec(27, -1, 1)), true);
  mb.init("c1.bias", {3}, as_floats(rng.vec(3, 0, 0.5)), true);
  mb.init("c2.weight", {2, 3, 3, 3}, as_floats(rng.vec(54, -1, 1)), true);
  mb.init("fc.weight", {10, 8}, as_floats(rng.vec(80, -1, 1)), true);
  mb.init("fc.bias", {10}, as_floats(rng.vec(10, -0.5, 0.5)), true);
  auto* c1 = mb.node("Conv", {"input", "c1.weight", "c1.bias"}, "c1");
  ModelBuilder::ints(c1, "pads", {1, 1, 1, 1});
  ModelBuilder::ints(c1, "strides", {2, 2});
  mb.node("Relu", {"c1"}, "r1");
  auto* ap = mb.node("AveragePool", {"r1"}, "p1");
  ModelBuilder::ints(ap, "kernel_shape", {2, 2});
  ModelBuilder::ints(ap, "strides", {2, 2});
  auto* c2 = mb.node("Conv", {"p1", "c2.weight"}, "c2");
  ModelBuilder::ints(c2, "pads", {1, 1, 1, 1});
  mb.node("Relu", {"c2"}, "r2");
  auto* fl = mb.node("Flatten", {"r2"}, "f");
  ModelBuilder::integer(fl, "axis", 1);
  auto* gm = mb.node("Gemm", {"f", "fc.weight", "fc.bias"}, "logits");
  ModelBuilder::integer(gm, "transB", 1);
  const std::string model = mb.write(dir / "cnn.onnx", "logits");
  SimCnn out{(dir / "cnn.json").string(), (dir / "x.npy").string(), (dir / "y.npy").string()};
  const auto imp = run_cli("import onnx \"" + model + "\" --output \"" + out.net + "\"");
  REQUIRE_MESSAGE(imp.status == 0, imp.output);
  Tensor x, y;
  x.shape = {12, 1, 8, 8};
  y.shape = {12};
  y.dtype = "F64";
  x.values = as_floats(rng.vec(12 * 64, 0, 1));
  for (int i = 0; i < 12; ++i) y.values.push_back(i % 10);
  write_bytes(out.images, encode_npy(x));
  write_bytes(out.labels, encode_npy(y));
  return out;
}

}  // namespace

TEST_CASE("simulate network runs a conv net (strided conv, average pooling) imported from ONNX, for any thread count") {
  const SimCnn cnn = write_sim_cnn(temp_dir() / "deep_cnn_sim");
  const std::string args = "simulate network --net \"" + cnn.net + "\" --test-images \"" + cnn.images +
                           "\" --test-labels \"" + cnn.labels + "\" --neurons \"" + fixture("three_state.json") +
                           "\" --T 1 --dt 0.01 --tau 0.05 --rate 20 --scale const --trials 2 --seed 3 --json";
  std::vector<std::string> docs;
  for (int threads : {1, 2, 3}) {
    const auto r = run_cli(args + " --threads " + std::to_string(threads));
    REQUIRE_MESSAGE(r.status == 0, r.output);
    docs.push_back(r.output);
  }
  CHECK(docs[1] == docs[0]);
  CHECK(docs[2] == docs[0]);
  const auto j = nlohmann::json::parse(docs[0]);
  CHECK(j["spiking_neurons"] == 48 + 8 + 10);
  CHECK(j["layers"].size() == 3);
  CHECK(j["test_images"] == 12);
  CHECK(j["synops_per_sample_mean"].get<double>() > 0);
  CHECK(j["spikes_per_neuron"].get<double>() > 0);

  // The text report, and the IF baseline on the conv net: the same document for 1, 2 and 3 threads.
  const auto text = run_cli(args.substr(0, args.size() - 7));
  REQUIRE_MESSAGE(text.status == 0, text.output);
  CHECK_MESSAGE(text.output.find("A_SNN = ") != std::string::npos, text.output);
  std::vector<std::string> with_if;
  for (int threads : {1, 2, 3}) {
    const auto r = run_cli(args + " --train-images \"" + cnn.images + "\" --train-labels \"" + cnn.labels +
                           "\" --if p99.9 --v0 0.5 --if-steps 16 --threads " + std::to_string(threads));
    REQUIRE_MESSAGE(r.status == 0, r.output);
    with_if.push_back(r.output);
  }
  CHECK(with_if[1] == with_if[0]);
  CHECK(with_if[2] == with_if[0]);
  const auto jif = nlohmann::json::parse(with_if[0]);
  CHECK(jif["if_baseline"]["spikes_per_neuron"].get<double>() > 0);
  CHECK(jif["if_baseline"]["synops_per_sample_mean"].get<double>() > 0);
}

TEST_CASE("sweep runs a conv net: the same document for any thread count, one record per run") {
  const SimCnn cnn = write_sim_cnn(temp_dir() / "deep_cnn_sweep");
  const std::string args = "sweep --net \"" + cnn.net + "\" --test-images \"" + cnn.images + "\" --test-labels \"" +
                           cnn.labels + "\" --neurons \"" + fixture("three_state.json") +
                           "\" --tau 0.05 --rate 10,20 --T 0.5,1 --dt 0.01 --scale const --trials 2 --seed 3";
  std::vector<std::string> docs;
  for (int threads : {1, 2}) {
    const fs::path out = temp_dir() / ("deep_cnn_sweep_" + std::to_string(threads) + ".json");
    const auto r = run_cli(args + " --threads " + std::to_string(threads) + " --out \"" + out.string() + "\"");
    REQUIRE_MESSAGE(r.status == 0, r.output);
    std::ifstream f(out);
    docs.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  CHECK(docs[1] == docs[0]);
  const auto j = nlohmann::json::parse(docs[0]);
  REQUIRE(j["runs"].size() == 4);  // 2 rates x 2 trials
  for (const auto& run : j["runs"]) {
    CHECK(run["test_images"] == 12);
    CHECK(run["layers"].size() == 3);
  }
  // Run 0 is simulate network with the same seed (trial 0): the same figures.
  const auto sim = run_cli("simulate network --net \"" + cnn.net + "\" --test-images \"" + cnn.images +
                           "\" --test-labels \"" + cnn.labels + "\" --neurons \"" + fixture("three_state.json") +
                           "\" --T 1 --dt 0.01 --tau 0.05 --rate 10 --scale const --trials 1 --seed 3 --json");
  REQUIRE_MESSAGE(sim.status == 0, sim.output);
  const auto sj = nlohmann::json::parse(sim.output);
  CHECK(sj["A_SNN_mean"] == j["runs"][0]["windows"].back()["A_SNN"]);
  CHECK(sj["transitions_per_sample"] == j["runs"][0]["windows"].back()["transitions_per_sample"]);
  CHECK(sj["synops_per_sample_mean"] == j["runs"][0]["windows"].back()["synops_per_sample"]);
}

TEST_CASE("convert fits a neuron per spiking layer of a conv net; simulate network runs it with them") {
  const SimCnn cnn = write_sim_cnn(temp_dir() / "deep_cnn_convert");
  const fs::path out = temp_dir() / "deep_cnn_convert" / "converted";
  const std::string data = " --train-images \"" + cnn.images + "\" --train-labels \"" + cnn.labels +
                           "\" --test-images \"" + cnn.images + "\" --test-labels \"" + cnn.labels + "\"";
  const auto r = run_cli("convert --net \"" + cnn.net + "\"" + data + " --output-dir \"" + out.string() +
                         "\" --samples 64 --starts 4 --threads 2");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK_MESSAGE(r.output.find("3 spiking layers") != std::string::npos, r.output);
  // Layer 1: 3 x 4 x 4 units over 12 images, fitted to relu with the two-state family.
  std::ifstream csv(out / "layers.csv");
  const std::string table((std::istreambuf_iterator<char>(csv)), std::istreambuf_iterator<char>());
  CHECK_MESSAGE(table.find("1,48,relu,two-state,12,") != std::string::npos, table);
  for (const char* f : {"neuron-L1.json", "neuron-L2.json", "neuron-L3.json", "samples-L3.txt", "commands.sh"})
    CHECK_MESSAGE(fs::exists(out / f), f);
  // The samples file: a header and 64 quantiles of the 12 x 48 layer-1 preactivations.
  std::ifstream samples(out / "samples-L1.txt");
  int lines = 0;
  for (std::string line; std::getline(samples, line);) lines += !line.empty() && line[0] != '#';
  CHECK(lines == 64);
  const std::string neurons = (out / "neuron-L1.json").string() + "," + (out / "neuron-L2.json").string() + "," +
                              (out / "neuron-L3.json").string();
  const auto sim = run_cli("simulate network --net \"" + cnn.net + "\"" + data + " --neurons \"" + neurons +
                           "\" --T 1 --dt 0.01 --tau 0.05 --rate 10 --trials 1 --seed 3");
  CHECK_MESSAGE(sim.status == 0, sim.output);
  // Again into the same folder: replaced (it is convert's own); a folder of the
  // user's, or no train split, exits 2 with one line.
  CHECK(run_cli("convert --net \"" + cnn.net + "\"" + data + " --output-dir \"" + out.string() +
                "\" --samples 64 --starts 4").status == 0);
  const auto mine = run_cli("convert --net \"" + cnn.net + "\"" + data + " --output-dir \"" +
                            (temp_dir() / "deep_cnn_convert").string() + "\" --samples 64 --starts 4");
  CHECK(mine.status == 2);
  // The folder's errors name --output-dir, the option convert has (not
  // report's --out), before any fit runs.
  CHECK_MESSAGE(mine.output.find("ctmc-snn: --output-dir: ") == 0, mine.output);
  const auto under_file = run_cli("convert --net \"" + cnn.net + "\"" + data + " --output-dir \"" + cnn.net + "/sub\"");
  CHECK(under_file.status == 2);
  CHECK_MESSAGE(under_file.output.find("--output-dir: '" + cnn.net + "' exists and is not a folder") != std::string::npos,
                under_file.output);
  const auto no_train = run_cli("convert --net \"" + cnn.net + "\" --test-images \"" + cnn.images +
                                "\" --test-labels \"" + cnn.labels + "\" --output-dir \"" + out.string() + "\"");
  CHECK(no_train.status == 2);
  CHECK_MESSAGE(no_train.output.find("--data: no training images") != std::string::npos, no_train.output);
  const auto dot = run_cli("convert --net \"" + cnn.net + "\"" + data + " --output-dir .");
  CHECK(dot.status == 2);
  CHECK_MESSAGE(dot.output.find("--output-dir") != std::string::npos, dot.output);
}

TEST_CASE("import onnx: an unsupported operator exits 2 naming the node and its op type, writing nothing") {
  const auto dir = temp_dir() / "deep_bad";
  fs::create_directories(dir);
  ModelBuilder mb = CnnFixture().build();
  auto* n = mb.node("Softmax", {"logits"}, "prob");
  n->set_name("/Softmax");
  const std::string model = mb.write(dir / "bad.onnx", "prob");
  const auto r = run_cli("import onnx \"" + model + "\" --output \"" + (dir / "bad.json").string() + "\"");
  CHECK(r.status == 2);
  CHECK_MESSAGE(r.output.find("node '/Softmax' (Softmax): operator 'Softmax' is not supported") != std::string::npos, r.output);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(dir / "bad.json"));
  CHECK_FALSE(fs::exists(dir / "bad.safetensors"));
  // A missing folder of --output is refused, as every command's is, not created.
  const std::string good = CnnFixture().build().write(dir / "good.onnx", "logits");
  const auto missing = run_cli("import onnx \"" + good + "\" --output \"" + (dir / "no" / "such" / "net.json").string() + "\"");
  CHECK(missing.status == 2);
  CHECK_MESSAGE(missing.output.find("--output: folder '" + (dir / "no" / "such").string() + "' of ") != std::string::npos,
                missing.output);
  CHECK_FALSE(fs::exists(dir / "no"));
  // An empty file is not "IR version 0".
  std::ofstream(dir / "empty.onnx").flush();
  const auto empty = run_cli("import onnx \"" + (dir / "empty.onnx").string() + "\" --output \"" + (dir / "e.json").string() + "\"");
  CHECK(empty.status == 2);
  CHECK_MESSAGE(empty.output.find("empty file (0 bytes), not an ONNX model") != std::string::npos, empty.output);
}
