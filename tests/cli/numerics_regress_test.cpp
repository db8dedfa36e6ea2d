// End-to-end regressions of the simulator's stationary solve and of counting
// below double's range: a 502-state Bernstein neuron in
// `simulate network`, and `counting` at T = 1e-400.
#include <cstdint>
#include <string>
#include <vector>

#include "cli_helpers.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/solvers/model.hpp"

using namespace ctmc_cli_test;
using ctmc::solvers::Rational;

namespace {

// IDX folder of 1x2 images (the input size of tiny_mlp.json).
std::string write_data(const std::string& name, const std::vector<std::array<std::uint8_t, 2>>& train,
                       const std::vector<std::uint8_t>& train_labels,
                       const std::vector<std::array<std::uint8_t, 2>>& test,
                       const std::vector<std::uint8_t>& test_labels) {
  const auto dir = temp_dir() / name;
  fs::create_directories(dir);
  auto be32 = [](std::uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                       static_cast<char>(v)};
  };
  auto write = [&](const std::string& prefix, const std::vector<std::array<std::uint8_t, 2>>& images,
                   const std::vector<std::uint8_t>& labels) {
    std::string img = be32(0x803) + be32(static_cast<std::uint32_t>(images.size())) + be32(1) + be32(2);
    for (const auto& im : images) img += std::string{static_cast<char>(im[0]), static_cast<char>(im[1])};
    std::string lab = be32(0x801) + be32(static_cast<std::uint32_t>(labels.size()));
    for (auto l : labels) lab += static_cast<char>(l);
    std::ofstream(dir / (prefix + "-images-idx3-ubyte"), std::ios::binary) << img;
    std::ofstream(dir / (prefix + "-labels-idx1-ubyte"), std::ios::binary) << lab;
  };
  write("train", train, train_labels);
  write("t10k", test, test_labels);
  return "\"" + dir.string() + "\"";
}

// Bernstein chain N = 250 (502 states), kappa_i = i/N, rho = 4, gamma = 1 on
// [0, 1]: flux 4u/(4+u), u = H clamped to [0, 1].
std::string write_bernstein_250() {
  std::vector<Rational> kappa;
  for (long i = 0; i <= 250; ++i) kappa.emplace_back(i, 250);
  const auto path = temp_dir() / "bernstein_250.json";
  ctmc::solvers::write_model_file(ctmc::solvers::bernstein_model(kappa, 4, 1, 0, 1), path.string());
  return "\"" + path.string() + "\"";
}

std::string line_with(const std::string& text, const std::string& key) {
  const auto p = text.find(key);
  if (p == std::string::npos) return "";
  return text.substr(p, text.find('\n', p) - p);
}

}  // namespace

TEST_CASE("simulate network with a 502-state Bernstein neuron: finite flux near u = 1, right A_MF, budget holds") {
  // tiny_mlp: h = (x0 - 2 x1 + 0.5, 0.5 x0 + 0.25 x1 - 1, x1 - x0), outputs
  // (a0 + 2 a1 - a2 + 1/4, a0/2 - a1/2 + 3 a2 - 1/8). Image (3, 255) puts
  // neuron 3 at H = 0.988 (u near 1, where the unrescaled GTH overflowed to
  // NaN): with a = 4u/(4+u) the mean field predicts class 1 (its label);
  // images 1, 3, 4 give class 0, so A_MF = 3/4 (the NaN gave 2/4, exit 0).
  const std::string net = "\"" + fixture("tiny_mlp.json") + "\"";
  const std::string model = write_bernstein_250();
  const std::vector<std::array<std::uint8_t, 2>> images{{125, 0}, {3, 255}, {60, 30}, {200, 100}};
  const std::vector<std::uint8_t> labels{0, 1, 0, 1};
  const std::string data = write_data("bern_data", images, labels, images, labels);
  const std::string base = "simulate network --net " + net + " --data " + data + " --neurons " + model +
                           " --T 1 --trials 1 --threads 1";
  for (const std::string extra : {" --readout integrate", " --readout integrate --sampler end-state", " --readout spike"}) {
    CAPTURE(extra);
    const auto r = run_cli(base + extra);
    CHECK(r.status == 0);
    CHECK(line_with(r.output, "A_MF") == "A_MF  = 75.00%");
    CHECK(r.output.find("nan") == std::string::npos);
  }
  // Only image (3, 255) in the test split: neurons 1 and 2 sit at u = 0,
  // where the chain rests in A0 (jump rate 0), so the work estimate is
  // neuron 3's alone; a NaN jump rate would pass the budget check and
  // --rate 1e12 would run without end (`timeout` cuts a hang at 120 s: status 124).
  const std::string one = write_data("bern_one", images, labels, {{3, 255}}, {1});
  const auto r = run_cli("simulate network --net " + net + " --data " + one + " --neurons " + model +
                             " --T 1 --trials 1 --threads 1 --readout integrate --rate 1e12",
                         "timeout 120 ");
  CHECK(r.status == 2);
  CHECK(r.output.find("--rate: about") != std::string::npos);
}

TEST_CASE("counting at T = 1e-400 (rates x T below double's range): E N(T) = lambda T, not 0") {
  // three_state.json has lambda = 1/3; from stationarity E N(T) = T/3 exactly,
  // and Var N(T) = T/3 - (T/3)^2 + O(T^2) ~ T/3.
  const std::string model = "\"" + fixture("three_state.json") + "\"";
  for (const std::string mode : {"", " --exact"}) {
    CAPTURE(mode);
    const auto r = run_cli("counting " + model + " --H 1 --T 1e-400" + mode);
    CHECK(r.status == 0);
    const std::string mean = line_with(r.output, "E[N(T)]");
    CHECK(mean.find("= 3.33333333333333333333333333333333333333333333333333333333333333333333") != std::string::npos);
    CHECK(mean.find("e-401") != std::string::npos);
    const std::string var = line_with(r.output, "Var N(T)  ");
    CHECK(var.find("= 3.3333333333333333333333333333333333") != std::string::npos);
    CHECK(var.find("e-401") != std::string::npos);
  }
}
