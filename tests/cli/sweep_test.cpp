// ctmc-snn sweep / sweep merge end to end: a sharded sweep merged in any order
// is byte-identical to the unsharded one; a cell equals `simulate network`
// with the same options; T checkpoints equal separate windows; bad grids,
// shard specs and part sets exit 2 naming the problem.
#include <nlohmann/json.hpp>
#include <functional>
#include <map>
#include <random>
#include <sstream>

#include "cli_helpers.hpp"

using namespace ctmc_cli_test;
using nlohmann::json;

namespace {

std::string shell_arg(const std::string& p) { return "\"" + p + "\""; }
std::string shell_arg(const fs::path& p) { return shell_arg(p.string()); }

// 60 training and 25 test images of 1x2 pixels (tiny_mlp.json's input), labels 0/1.
fs::path sweep_data() {
  static const fs::path dir = [] {
    std::mt19937 g(3);
    const auto pixels = [&](int n) {
      std::string s;
      for (int i = 0; i < 2 * n; ++i) s += static_cast<char>(g() % 256);
      return s;
    };
    const auto labels = [&](int n) {
      std::string s;
      for (int i = 0; i < n; ++i) s += static_cast<char>(g() % 2);
      return s;
    };
    return write_idx_dir("sweep_idx", idx_images(pixels(60), 1, 2), idx_labels(labels(60)),
                         idx_images(pixels(25), 1, 2), idx_labels(labels(25)));
  }();
  return dir;
}

std::string base_args(const std::string& extra = "", int seed = 9, int threads = 2) {
  return "sweep --net " + shell_arg(fixture("tiny_mlp.json")) + " --data " + shell_arg(sweep_data()) + " --neurons " +
         shell_arg(fixture("three_state.json")) +
         " --tau 0.02,0.05 --rate 2,6 --T 0.2,0.5 --dt 0.01 --trials 2 --sampler exact,end-state --seed " +
         std::to_string(seed) + " --threads " + std::to_string(threads) + extra;
}

void check_exit2(const std::string& args, const std::string& needle) {
  const auto r = run_cli(args);
  INFO(args);
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find(needle) != std::string::npos);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
}

}  // namespace

TEST_CASE("sweep: sharded parts merged in any order are byte-identical to the unsharded sweep") {
  const fs::path full = temp_dir() / "sweep_full.json";
  const auto r = run_cli(base_args(" --out " + shell_arg(full)));
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("least synops under a gap of 1 pp") != std::string::npos);
  const std::string want = slurp(full);
  const json doc = json::parse(want);
  // 1 net x 2 samplers x 2 tau x 2 r x 2 trials runs; cells add the 2 windows.
  CHECK(doc.at("runs").size() == 16);
  CHECK(doc.at("cells").size() == 16);
  CHECK(doc.at("points").size() == 16);

  for (int n : {1, 3, 5, 16, 20}) {
    std::vector<fs::path> parts;
    for (int i = 1; i <= n; ++i) {
      parts.push_back(temp_dir() / ("sweep_part_" + std::to_string(i) + "_of_" + std::to_string(n) + ".json"));
      const auto p = run_cli(base_args(" --shard " + std::to_string(i) + "/" + std::to_string(n) + " --out " +
                                           shell_arg(parts.back()),
                                       9, 1));
      INFO(p.output);
      REQUIRE(p.status == 0);
    }
    std::string args = "sweep merge";
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) args += " " + shell_arg(*it);  // any order
    const fs::path merged = temp_dir() / ("sweep_merged_" + std::to_string(n) + ".json");
    const auto m = run_cli(args + " --out " + shell_arg(merged));
    INFO(m.output);
    REQUIRE(m.status == 0);
    CHECK(slurp(merged) == want);
  }
}

TEST_CASE("sweep: a cell is the simulate-network run with the same options, at every checkpoint") {
  const fs::path full = temp_dir() / "sweep_cells.json";
  REQUIRE(run_cli(base_args(" --out " + shell_arg(full))).status == 0);
  const json doc = json::parse(slurp(full));
  for (const json& cell : doc.at("cells")) {
    if (cell.at("sampler") != "end-state" || cell.at("rate") != 6.0 || cell.at("tau") != 0.05) continue;
    const double T = cell.at("T").get<double>();
    const auto r = run_cli("simulate network --net " + shell_arg(fixture("tiny_mlp.json")) + " --data " +
                           shell_arg(sweep_data()) + " --neurons " + shell_arg(fixture("three_state.json")) +
                           " --tau 0.05 --rate 6 --T " + std::to_string(T) +
                           " --dt 0.01 --trials 2 --sampler end-state --seed 9 --json");
    INFO(r.output);
    REQUIRE(r.status == 0);
    const json sim = json::parse(r.output.substr(r.output.find('{')));
    CHECK(cell.at("A_ANN").get<double>() == sim.at("A_ANN").get<double>());
    CHECK(cell.at("A_MF").get<double>() == sim.at("A_MF").get<double>());
    CHECK(cell.at("A_SNN_mean").get<double>() == doctest::Approx(sim.at("A_SNN_mean").get<double>()).epsilon(1e-14));
    CHECK(cell.at("A_SNN_sd").get<double>() == doctest::Approx(sim.at("A_SNN_sd").get<double>()).epsilon(1e-14));
    CHECK(cell.at("synops_per_sample").get<double>() ==
          doctest::Approx(sim.at("synops_per_sample_mean").get<double>()).epsilon(1e-14));
    CHECK(cell.at("transitions_per_sample").get<double>() ==
          doctest::Approx(sim.at("transitions_per_sample").get<double>()).epsilon(1e-14));
    CHECK(cell.at("spikes_per_neuron").get<double>() ==
          doctest::Approx(sim.at("spikes_per_neuron").get<double>()).epsilon(1e-14));
  }
}

// The kernel (SpikingConfig::kernel) changes a seeded run's numbers,
// so the spec records it and a part of one kernel does not merge with another's.
TEST_CASE("sweep --kernel: recorded in the spec, a cell equals simulate network on the same kernel, parts of two kernels do not merge") {
  const std::string cell_options = " --tau 0.05 --rate 6 --T 0.5 --dt 0.01 --trials 2 --sampler end-state --seed 9";
  const std::string net = "--net " + shell_arg(fixture("tiny_mlp.json")) + " --data " + shell_arg(sweep_data()) +
                          " --neurons " + shell_arg(fixture("three_state.json"));
  std::map<std::string, double> synops;
  for (const std::string kernel : {"auto", "reference", "vectorised", "fast"}) {
    const fs::path file = temp_dir() / ("sweep_kernel_" + kernel + ".json");
    const auto r = run_cli("sweep " + net + cell_options + " --kernel " + kernel + " --out " + shell_arg(file));
    INFO(r.output);
    REQUIRE(r.status == 0);
    const json doc = json::parse(slurp(file));
    CHECK(doc.at("spec").at("kernel") == kernel);
    const json& cell = doc.at("cells").at(0);
    const auto s = run_cli("simulate network " + net + cell_options + " --kernel " + kernel + " --json");
    INFO(s.output);
    REQUIRE(s.status == 0);
    const json sim = json::parse(s.output.substr(s.output.find('{')));
    CHECK(sim.at("kernel") == (kernel == "auto" ? "fast" : kernel));
    CHECK(cell.at("A_SNN_mean").get<double>() == doctest::Approx(sim.at("A_SNN_mean").get<double>()).epsilon(1e-14));
    CHECK(cell.at("synops_per_sample").get<double>() ==
          doctest::Approx(sim.at("synops_per_sample_mean").get<double>()).epsilon(1e-14));
    synops[kernel] = cell.at("synops_per_sample").get<double>();
  }
  CHECK(synops["auto"] == synops["fast"]);
  CHECK(synops["reference"] != synops["vectorised"]);  // other random numbers
  CHECK(synops["fast"] != synops["vectorised"]);

  const fs::path ref = temp_dir() / "sweep_kernel_part1.json", vec = temp_dir() / "sweep_kernel_part2.json";
  REQUIRE(run_cli(base_args(" --kernel reference --shard 1/2 --out " + shell_arg(ref))).status == 0);
  REQUIRE(run_cli(base_args(" --shard 2/2 --out " + shell_arg(vec))).status == 0);
  check_exit2("sweep merge " + shell_arg(ref) + " " + shell_arg(vec) + " --out " + shell_arg(temp_dir() / "mixed.json"),
              "a part of another sweep");
  CHECK_FALSE(fs::exists(temp_dir() / "mixed.json"));
}

TEST_CASE("sweep: bad grids and shard specs exit 2 naming the option") {
  const std::string out = " --out " + shell_arg(temp_dir() / "bad.json");
  check_exit2(base_args(" --shard 0/3" + out), "--shard: '0/3'");
  check_exit2(base_args(" --shard 4/3" + out), "--shard: '4/3'");
  check_exit2(base_args(" --shard 1/0" + out), "--shard: '1/0'");
  check_exit2(base_args(" --shard 1-3" + out), "--shard: '1-3'");
  check_exit2(base_args(" --shard a/b" + out), "--shard: 'a/b'");
  const std::string tiny = "sweep --net " + shell_arg(fixture("tiny_mlp.json")) + " --data " + shell_arg(sweep_data()) +
                           " --neurons " + shell_arg(fixture("three_state.json")) + " --dt 0.01" + out;
  check_exit2(tiny + " --tau 0.02,0.02 --rate 2 --T 1", "--tau: the value 0.02 is given twice");
  check_exit2(tiny + " --tau 0.02 --rate 2,-1 --T 1", "--rate: -1 is not a positive");
  check_exit2(tiny + " --tau 0.02 --rate 2 --T 1,0.5", "--T: the checkpoints must increase");
  check_exit2(tiny + " --tau 0.02 --rate 2 --T 0.505", "--T: 0.505 is not a positive multiple of dt = 0.01");
  check_exit2(tiny + " --tau 0.02 --rate x --T 1", "--rate: 'x' is not a number");
  check_exit2(tiny + " --tau 0.02 --rate 2 --T 1 --criterion 0", "--criterion");
  check_exit2(tiny + " --tau 0.02 --rate 2 --T 1 --sampler exact,exact", "--sampler: the value exact is given twice");
  check_exit2(tiny + " --tau 0.02 --rate 2 --T 1 --kernel simd", "--kernel: unknown kernel 'simd'");
  check_exit2(tiny + " --tau 0.02 --rate 2 --T 1 --sampler exact,uniformization --kernel vectorised",
              "--kernel: the vectorised kernel runs the exact and end-state samplers; uniformization runs on the reference");
  check_exit2("sweep --tau 0.02 --rate 2 --T 1" + out, "--net is required");
  CHECK_FALSE(fs::exists(temp_dir() / "bad.json"));
}

TEST_CASE("sweep merge: missing, repeated, foreign and malformed parts exit 2 naming them") {
  std::vector<fs::path> parts;
  for (int i = 1; i <= 3; ++i) {
    parts.push_back(temp_dir() / ("m_part_" + std::to_string(i) + ".json"));
    REQUIRE(run_cli(base_args(" --shard " + std::to_string(i) + "/3 --out " + shell_arg(parts.back()))).status == 0);
  }
  const fs::path other = temp_dir() / "m_other_seed.json";
  REQUIRE(run_cli(base_args(" --shard 3/3 --out " + shell_arg(other), 10)).status == 0);
  const fs::path four = temp_dir() / "m_four.json";
  REQUIRE(run_cli(base_args(" --shard 2/4 --out " + shell_arg(four))).status == 0);
  const std::string out = " --out " + shell_arg(temp_dir() / "merged_bad.json");
  const std::string p1 = shell_arg(parts[0]), p2 = shell_arg(parts[1]), p3 = shell_arg(parts[2]);
  check_exit2("sweep merge " + p1 + " " + p2 + out, "missing shard(s) 3/3");
  check_exit2("sweep merge " + p1 + " " + p2 + " " + p3 + " " + p2 + out, "shard 2/3 is given twice");
  check_exit2("sweep merge " + p1 + " " + p2 + " " + shell_arg(other) + out, "a part of another sweep");
  check_exit2("sweep merge " + p1 + " " + shell_arg(four) + out, "shard 2/4, but");
  // A part whose runs were moved into another shard.
  json moved = json::parse(slurp(parts[1]));
  moved["shard"]["index"] = 3;
  const auto moved_file = write_file("m_moved.json", moved.dump());
  check_exit2("sweep merge " + p1 + " " + p2 + " \"" + moved_file + "\"" + out, "does not belong to shard 3/3");
  const auto not_json = write_file("m_not_json.json", "{\"format\": ");
  check_exit2("sweep merge " + p1 + " \"" + not_json + "\"" + out, "malformed JSON");
  const auto not_part = write_file("m_not_part.json", "{\"format\": \"something else\"}");
  check_exit2("sweep merge \"" + not_part + "\"" + out, "not a sweep part");
  check_exit2("sweep merge " + shell_arg(temp_dir() / "nonexistent.json") + out, "nonexistent.json");
  CHECK_FALSE(fs::exists(temp_dir() / "merged_bad.json"));
}

TEST_CASE("sweep: a grid beyond --max-runs, --max-neuron-steps or --max-memory exits 2 before running, naming the option") {
  const std::string out = " --out " + shell_arg(temp_dir() / "limits.json");
  // A million runs: refused at once (it started and ran for days).
  std::string taus, rates;
  for (int i = 1; i <= 100; ++i) {
    taus += (i > 1 ? "," : "") + std::to_string(i) + "e-3";
    rates += (i > 1 ? "," : "") + std::to_string(i);
  }
  const std::string grid = "sweep --net " + shell_arg(fixture("tiny_mlp.json")) + " --data " + shell_arg(sweep_data()) +
                           " --neurons " + shell_arg(fixture("three_state.json")) + " --T 0.5 --dt 0.01 --tau " + taus +
                           " --rate " + rates + " --trials 100" + out;
  const auto r = run_cli(grid, "timeout 60 ");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("sweep: 1000000 runs in the grid") != std::string::npos);
  CHECK(r.output.find("raise --max-runs") != std::string::npos);
  // The base grid has 16 runs.
  check_exit2(base_args(" --max-runs 15 --dry-run" + out), "more than the limit of 15; lower the grid or raise --max-runs");
  CHECK(run_cli(base_args(" --max-runs 16 --dry-run" + out)).status == 0);
  // Work: 16 runs x 25 images x 50 steps x the spiking neurons of tiny_mlp.
  check_exit2(base_args(" --max-neuron-steps 1000 --dry-run" + out), "raise --max-neuron-steps");
  check_exit2(base_args(" --max-neuron-steps 1000 --shard 2/4 --dry-run" + out), "in shard 2/4");
  check_exit2(base_args(" --max-memory 0.00001 --dry-run" + out), "raise --max-memory");
  CHECK_FALSE(fs::exists(temp_dir() / "limits.json"));
}

TEST_CASE("sweep merge: a part edited into impossibility exits 2 naming the file and the field") {
  const fs::path whole = temp_dir() / "v_whole.json";
  REQUIRE(run_cli(base_args(" --shard 1/1 --out " + shell_arg(whole))).status == 0);
  const json good = json::parse(slurp(whole));
  const std::string out = " --out " + shell_arg(temp_dir() / "v_merged.json");
  REQUIRE(run_cli("sweep merge " + shell_arg(whole) + out).status == 0);
  const auto edited = [&](const std::string& name, const std::function<void(json&)>& edit, const std::string& field) {
    json p = good;
    edit(p);
    const std::string file = write_file("v_" + name + ".json", p.dump(1));
    check_exit2("sweep merge " + shell_arg(file) + out, file + ": " + field);
  };
  edited("a_snn", [](json& p) { p["runs"][3]["windows"][1]["A_SNN"] = 200; }, "runs[3].windows[1].A_SNN: 200 is not in [0, 100]");
  edited("tie", [](json& p) { p["runs"][0]["windows"][0]["tie_fraction"] = 2; }, "runs[0].windows[0].tie_fraction: 2 is not in [0, 1]");
  edited("synops", [](json& p) { p["runs"][2]["windows"][0]["synops_per_sample"] = -5; }, "runs[2].windows[0].synops_per_sample");
  edited("tau", [](json& p) { p["runs"][5]["tau"] = 0.03; }, "runs[5].tau: is not");
  edited("T", [](json& p) { p["runs"][1]["windows"][1]["T"] = 0.4; }, "runs[1].windows[1].T: is not 0.5");
  edited("layer", [](json& p) { p["runs"][0]["windows"][0]["layers"].erase(0); }, "runs[0].windows[0].layers: 1 entries, expected 2");
  edited("unknown", [](json& p) { p["runs"][0]["bonus"] = 1; }, "runs[0]: unknown key 'bonus'");
  edited("nan_T", [](json& p) { p["spec"]["T"][0] = "nan"; }, "spec.T[0]: expected a number");
}
