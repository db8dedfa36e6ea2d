// Resources stay bounded by what the input honestly is: a trial count whose
// counts would not fit in memory is refused with the estimate, and the
// estimate is what a run takes; a training or a forward pass estimated
// beyond --max-memory is refused with its estimate before anything is
// allocated; a device or pipe given as a data file is refused before it is
// read; an OpenMP stack size no thread can have is an environment error
// naming the variable.
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "cli_helpers.hpp"
#include "ctmc/sim/formats/safetensors.hpp"
#include "synthetic_images.hpp"

using namespace ctmc_cli_test;

namespace {

std::string q(const std::string& p) { return "\"" + p + "\""; }

void check_exit2(const RunResult& r, const std::string& needle) {
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find(needle) != std::string::npos);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
}

}  // namespace

TEST_CASE("simulate neuron --trials 1000000000 is refused with its memory estimate before allocating") {
  const std::string base = "simulate neuron " + q(fixture("three_state.json")) + " --H 0 --T 0.001 --seed 1 --threads 1";
  // Under 1 GB of address space: the estimate refuses, nothing is allocated.
  const auto r = run_cli(base + " --trials 1000000000", "ulimit -v 1000000; ");
  check_exit2(r, "--trials: 1000000000 trials need about 7");
  CHECK(r.output.find("lower --trials") != std::string::npos);
  CHECK(r.output.find("raise --max-memory") != std::string::npos);
  // The limit is the option's: 100,000 trials are 0.8 MB of counts.
  check_exit2(run_cli(base + " --trials 100000 --max-memory 0.0001"), "more than the limit of 0 MiB");
  const auto ok = run_cli(base + " --trials 100000 --max-memory 0.01");
  INFO(ok.output);
  CHECK(ok.status == 0);
  check_exit2(run_cli(base + " --trials 1000 --max-memory 0"), "--max-memory: 0 is not a number of GiB");
  // The count the message says fits does fit, and one more does not.
  const auto over = run_cli(base + " --trials 100000 --max-memory 0.0005");
  const auto at = over.output.find("at most ");
  REQUIRE_MESSAGE(at != std::string::npos, over.output);
  const std::string fit = over.output.substr(at + 8, over.output.find(' ', at + 8) - at - 8);
  CHECK(run_cli(base + " --trials " + fit + " --max-memory 0.0005").status == 0);
  check_exit2(run_cli(base + " --trials " + std::to_string(std::stoull(fit) + 1) + " --max-memory 0.0005"),
              "at most " + fit + " fit");
}

TEST_CASE("--test-images /dev/zero or a named pipe exits 2 at once, nothing read") {
  const std::string base = "simulate network --net " + q(fixture("tiny_mlp.json")) + " --neurons " +
                           q(fixture("three_state.json")) + " --T 0.1 --dt 0.01 --tau 0.02 --rate 2 --scale const ";
  if (fs::exists("/dev/zero"))
    check_exit2(run_cli(base + "--test-images /dev/zero --test-labels /dev/zero", "timeout 60 "),
                "--test-images: '/dev/zero' is not a regular file");
  const fs::path fifo = temp_dir() / "images.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // A pipe nobody writes to blocked the reader forever.
  check_exit2(run_cli(base + "--test-images " + q(fifo.string()) + " --test-labels " + q(fifo.string()), "timeout 60 "),
              "is not a regular file");
  const fs::path folder = temp_dir() / "labels_folder.npy";
  fs::create_directories(folder);
  check_exit2(run_cli(base + "--test-images " + q(fifo.string() + ".x") + " --test-labels " + q(folder.string()),
                      "timeout 60 "),
              "--test-labels: '" + folder.string() + "' is not a regular file");
}

TEST_CASE("OMP_STACKSIZE no thread can have exits 2 naming the variable, not 1 (\"a check failed\")") {
  const std::string cmd = "simulate neuron " + q(fixture("three_state.json")) + " --H 0 --T 1 --trials 200 --threads 2";
  check_exit2(run_cli(cmd, "OMP_STACKSIZE=100000G "), "OMP_STACKSIZE=100000G: ");
  check_exit2(run_cli(cmd, "GOMP_STACKSIZE=99999999999 "), "GOMP_STACKSIZE=99999999999: ");
  // An ordinary size is no problem.
  const auto ok = run_cli(cmd, "OMP_STACKSIZE=16M ");
  INFO(ok.output);
  CHECK(ok.status == 0);
}

namespace {

// A shell prefix that limits the address space to 4 GB, so that a refusal
// that came after a large allocation would fail; none under AddressSanitizer,
// which reserves terabytes of shadow address space at start-up.
#if defined(__SANITIZE_ADDRESS__)
const std::string kAddressLimit;
#else
const std::string kAddressLimit = "ulimit -v 4000000; ";
#endif

// The peak resident memory (KiB) of `ctmc-snn args`, and its exit status,
// measured by a fresh Python whose only child it is.
std::pair<long, int> peak_rss_kib(const std::string& args) {
  const fs::path out = temp_dir() / "peak_rss.txt";
  const std::string script =
      "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
      "stderr=subprocess.DEVNULL).returncode; print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r)";
  const std::string cmd = "python3 -c '" + script + "' " + q(CTMC_CLI_PATH) + " " + args + " > " + q(out.string());
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::istringstream in(slurp(out));
  long kib = 0;
  int status = -1;
  in >> kib >> status;
  return {kib, status};
}

// A manifest of `layers` over the input shape `input`, with its tensors.
std::string write_net(const std::string& name, const nlohmann::json& input, const nlohmann::json& layers,
                      const ctmc::sim::SafetensorsFile& weights) {
  const fs::path dir = temp_dir() / "resource_nets";
  fs::create_directories(dir);
  ctmc::sim::write_safetensors((dir / (name + ".safetensors")).string(), weights);
  const nlohmann::json m = {{"format", "ctmc-snn-mlp"}, {"version", 1}, {"weights", name + ".safetensors"},
                            {"input", input},           {"layers", layers}};
  return write_file("resource_nets/" + name + ".json", m.dump());
}

ctmc::sim::Tensor filled(std::vector<std::int64_t> shape, double value) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return {"F32", std::move(shape), std::vector<double>(std::size_t(n), value)};
}

}  // namespace

TEST_CASE("simulate neuron: the memory a run takes is within the estimate it was admitted by") {
#if defined(__SANITIZE_ADDRESS__)
  MESSAGE("skipped under AddressSanitizer (its shadow memory and quarantine add to the resident memory)");
  return;
#endif
  // 10^7 trials: 76 MiB of counts by the estimate. They were allocated twice
  // (a temporary copied into place), so 5e8 trials "within 4 GiB" took 6.3 GB.
  const std::string base = "simulate neuron " + q(fixture("three_state.json")) + " --H 0 --T 0.001 --seed 1 --threads 1";
  const auto small = peak_rss_kib(base + " --trials 1000");
  const auto big = peak_rss_kib(base + " --trials 10000000");
  REQUIRE(small.second == 0);
  REQUIRE(big.second == 0);
  const double counts_kib = 1e7 * 8 / 1024;  // the estimate's 8 bytes a trial
  MESSAGE("peak RSS: " << small.first << " KiB for 1000 trials, " << big.first << " KiB for 10^7");
  // The blocks' occupancy tallies add about 5% to the counts.
  CHECK(double(big.first - small.first) < 1.2 * counts_kib);
}

TEST_CASE("train: a network too large for --max-memory is refused with its estimate before anything is allocated") {
  // --width 16 (the documented maximum) grew to 12 GB in a minute on 2 digits.
  const auto data = mnist_like("resource_train", 2, 2);
  const fs::path out = temp_dir() / "resource_train_out.json";
  const std::string base = "train --data " + q(data.string()) + " --epochs 1 --output " + q(out.string());
  auto r = run_cli(base + " --arch vgg11 --width 16 --max-memory 8", kAddressLimit);
  check_exit2(r, "train: needs about 98.2 GiB of memory (3.77e+09 parameters");
  CHECK(r.output.find("more than --max-memory 8 GiB; lower --width or --batch") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  // The default limit is the machine's memory: no machine has 70 TB.
  r = run_cli(base + " --hidden 65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,"
                     "65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,"
                     "65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,"
                     "65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,"
                     "65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,"
                     "65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,"
                     "65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,"
                     "65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536,65536",
              kAddressLimit);
  check_exit2(r, "more than --max-memory (the machine's ");
  CHECK(r.output.find("lower --hidden or --batch") != std::string::npos);
  check_exit2(run_cli(base + " --max-memory -1"), "--max-memory: -1 is not a number of GiB in (0, 1e6]");
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("evaluate: a convolution padded by 8000 is refused with its memory estimate, before the data are read") {
  // A 1x1 convolution padded by 8000 on 28x28 images gives 16028x16028 pixels:
  // about 1 GB a test image, 256 images a pass.
  ctmc::sim::SafetensorsFile w;
  w.tensors["c.weight"] = filled({1, 1, 1, 1}, 1);
  w.tensors["c.bias"] = filled({1}, 0);
  w.tensors["fc.weight"] = filled({10, 1}, 1);
  w.tensors["fc.bias"] = filled({10}, 0);
  const nlohmann::json layers = nlohmann::json::parse(R"([
    {"type": "conv2d", "weight": "c.weight", "bias": "c.bias", "in_channels": 1, "out_channels": 1,
     "kernel_size": [1, 1], "stride": [1, 1], "padding": [8000, 8000]},
    {"type": "avgpool2d", "kernel_size": [16028, 16028], "stride": [16028, 16028], "padding": [0, 0]},
    {"type": "flatten"},
    {"type": "dense", "weight": "fc.weight", "bias": "fc.bias", "in": 1, "out": 10, "activation": "linear"}])");
  const std::string net = write_net("padded", {1, 28, 28}, layers, w);
  const auto r = run_cli("evaluate --net " + q(net) + " --data /nonexistent --max-memory 1", kAddressLimit);
  check_exit2(r, "--net: " + net + ": layer 1 (layers[0], conv2d)");
  CHECK(r.output.find("needs about 1.91 GiB of memory for one test image (its input [1, 28, 28] and output [1, 16028, "
                      "16028] and its im2col patches), more than --max-memory 1 GiB; refusing") != std::string::npos);
}

TEST_CASE("evaluate: logits that are not finite are refused, naming the image and the first layer where they appear") {
  // Weights of 3e38 (as inputs x 3e38) overflow float: evaluate printed an accuracy from inf and NaN logits.
  const auto data = mnist_like("resource_nonfinite", 2, 3);
  ctmc::sim::SafetensorsFile w;
  w.tensors["fc1.weight"] = filled({4, 784}, 3e38);
  w.tensors["fc1.bias"] = filled({4}, 0);
  w.tensors["fc2.weight"] = filled({10, 4}, 1);
  w.tensors["fc2.bias"] = filled({10}, 0);
  const nlohmann::json layers = nlohmann::json::parse(R"([
    {"type": "dense", "weight": "fc1.weight", "bias": "fc1.bias", "in": 784, "out": 4, "activation": "relu"},
    {"type": "dense", "weight": "fc2.weight", "bias": "fc2.bias", "in": 4, "out": 10, "activation": "linear"}])");
  const std::string net = write_net("overflow", {784}, layers, w);
  const auto r = run_cli("evaluate --net " + q(net) + " --data " + q(data.string()));
  check_exit2(r, "--data: test image 0 gives logits that are not finite (inf or NaN), first at layer 1 (layers[0], dense)");
  CHECK(r.output.find("no accuracy is computed from them") != std::string::npos);
  // The same network with weights of 1e-3 evaluates.
  w.tensors["fc1.weight"] = filled({4, 784}, 1e-3);
  const std::string fine = write_net("fine", {784}, layers, w);
  const auto ok = run_cli("evaluate --net " + q(fine) + " --data " + q(data.string()));
  INFO(ok.output);
  CHECK(ok.status == 0);
}
