// Resources stay bounded by what the input honestly is: a trial count whose
// counts would not fit in memory is refused with the estimate, a device or
// pipe given as a data file is refused before it is read, an OpenMP stack
// size no thread can have is an environment error naming the variable.
#include <sys/stat.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "ctmc/sim/safetensors.hpp"
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
