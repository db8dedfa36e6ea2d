// Sweep parts as merge reads them: a part's size is bounded by what its own
// grid can hold (not by a fixed cap), and every field of a part is checked
// against the grid and its physical range, the error naming the file and the
// field.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../test_temp_files.hpp"
#include "ctmc/sim/studies/sweep_document.hpp"
#include "input_error_check.hpp"

using ctmc::sim::testing::check_input_error;
using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

// A valid part of a grid of 1 net x 1 sampler x 1 tau x 1 r x `trials`
// trials read out at `windows` checkpoints, one spiking layer, written by
// hand (the numbers are made up but in range): shard `index`/`count`.
Json make_part(int trials, int windows, std::size_t index = 1, std::size_t count = 1) {
  Json T = Json::array();
  for (int w = 1; w <= windows; ++w) T.push_back(0.01 * w);
  // 0.01 * w as the sweep writes it: the same double.
  Json spec = {{"nets", {"net.json"}},   {"data", "data"},       {"neurons", {"m.json"}},
               {"samplers", {"exact"}},  {"tau", {0.02}},        {"rate", {2.0}},
               {"T", T},                 {"trials", trials},     {"dt", 0.01},
               {"readout", "spike"},     {"scale", "q99"},       {"limit", 0},
               {"subset", "all"},        {"trace_weight", "integral"}, {"output_scale", "logits"},
               {"layer_alpha", Json::array()}, {"seed", 9},      {"criterion_pp", 1.0}};
  Json runs = Json::array();
  for (int u = static_cast<int>(index) - 1; u < trials; u += static_cast<int>(count)) {
    Json ws = Json::array();
    for (int w = 0; w < windows; ++w)
      ws.push_back({{"T", T[static_cast<std::size_t>(w)]},
                    {"A_SNN", 50.0 + w % 7},
                    {"synops_per_sample", 10.0 * w},
                    {"spikes_per_neuron", 0.1 * w},
                    {"transitions_per_sample", 30.0 * w},
                    {"tie_fraction", 0.04},
                    {"count_quantiles", {0.0, 1.0, 2.0, 3.0}},
                    {"silent_fraction", 0.5},
                    {"layers", {{{"spikes_per_neuron", 0.1}, {"rate_rel_rmse", nullptr}}}},
                    {"synops_sd", 4.0 * w},
                    {"transitions_sd", 9.0 * w},
                    {"ann_vs_snn", {8, 1}},
                    {"mf_vs_snn", {7, 1}}});
    runs.push_back({{"run", u},
                    {"net", 0},
                    {"sampler", "exact"},
                    {"tau", 0.02},
                    {"rate", 2.0},
                    {"trial", u},
                    {"test_images", 25},
                    {"A_ANN", 80.0},
                    {"A_MF", 76.0},
                    {"ann_vs_mf", {2, 1}},
                    {"layers", {{{"q99", 1.5}, {"alpha", 1.3}, {"outside_fit_domain", 0.0}}}},
                    {"windows", ws}});
  }
  return {{"format", "ctmc-snn sweep part"},
          {"version", 1},
          {"spec", spec},
          {"shard", {{"index", index}, {"count", count}}},
          {"runs", runs}};
}

std::string write(const std::string& name, const std::string& text) {
  return ctmc::testing::write_temp_file(name, text);
}

}  // namespace

TEST_CASE("a part larger than the scan threshold merges when its grid can hold it, and is refused beyond") {
  // 4 runs x 50 checkpoints: about 100 KB as `sweep` writes it (indent 1).
  const Json part = make_part(4, 50);
  const std::string text = part.dump(1);
  const std::string file = write("big_part.json", text);
  constexpr std::uint64_t kThreshold = 16 << 10;  // a low threshold: the scan path on a small file
  REQUIRE(text.size() > kThreshold);
  const Json read = ctmc::sim::read_sweep_part(file, kThreshold);
  const ctmc::sim::SweepDocument doc = ctmc::sim::merge_sweep_parts({{file, read}});
  CHECK(doc.runs.size() == 4);
  CHECK(doc.cells.size() == 50);

  // Keys in another order (runs before spec, as sort_keys writes them) and
  // a wider indentation still merge.
  const std::string sorted = write("sorted_part.json", nlohmann::json::parse(text).dump(4));
  CHECK(ctmc::sim::merge_sweep_parts({{sorted, ctmc::sim::read_sweep_part(sorted, kThreshold)}}).runs.size() == 4);

  // The bound: 1 MiB, 8 times the spec, and 128 bytes for each number the
  // 4 records can hold with at most kPartLayersAssumed layers.
  const std::uint64_t numbers = 4 * (9 + 3 * 64 + 50 * (7 + 4 + 2 * 64));
  const std::uint64_t bound = (1 << 20) + 8 * part.at("spec").dump().size() + numbers * 128;
  CHECK(ctmc::sim::max_sweep_part_bytes(part.at("spec"), {1, 1}) == bound);
  // Shard 2/3 of the 4 runs holds one run.
  CHECK(ctmc::sim::max_sweep_part_bytes(part.at("spec"), {2, 3}) ==
        (1 << 20) + 8 * part.at("spec").dump().size() + numbers / 4 * 128);
  // The same part padded past the bound: refused from its size, naming it.
  std::string padded = text;
  padded.insert(padded.size() - 1, std::string(bound, ' '));
  const std::string pfile = write("padded_part.json", padded);
  check_input_error([&] { ctmc::sim::read_sweep_part(pfile, kThreshold); }, pfile,
                    "that shard 1/1 of its grid can hold (50 checkpoints, at most 64 layers); refusing");
}

TEST_CASE("a scanned part holding a token longer than any part's is refused before a parser holds it") {
  Json part = make_part(2, 3);
  part["runs"][0]["sampler"] = std::string(100000, 'x');
  const std::string file = write("long_token_part.json", part.dump());
  check_input_error([&] { ctmc::sim::read_sweep_part(file, 1024); }, file,
                    "holds a token (a string or number) of more than 65536 bytes, not a sweep part");
}

TEST_CASE("a part that is not a regular file is refused before reading") {
  if (!fs::exists("/dev/zero")) return;
  check_input_error([&] { ctmc::sim::read_sweep_part("/dev/zero"); }, "/dev/zero", "not a regular file");
}

TEST_CASE("merge checks every field of a part, naming the file and the field") {
  const Json good = make_part(3, 2);
  CHECK(ctmc::sim::merge_sweep_parts({{"good.json", good}}).runs.size() == 3);
  const auto refused = [&](const std::function<void(Json&)>& edit, const std::string& fragment) {
    Json p = good;
    edit(p);
    check_input_error([&] { ctmc::sim::merge_sweep_parts({{"bad.json", p}}); }, "bad.json", fragment);
  };
  refused([](Json& p) { p["runs"][1]["windows"][0]["A_SNN"] = 200; }, "bad.json: runs[1].windows[0].A_SNN: 200 is not in [0, 100]");
  refused([](Json& p) { p["runs"][0]["A_ANN"] = -1; }, "runs[0].A_ANN: -1 is not in [0, 100]");
  refused([](Json& p) { p["runs"][2]["windows"][1]["tie_fraction"] = 2; }, "runs[2].windows[1].tie_fraction: 2 is not in [0, 1]");
  refused([](Json& p) { p["runs"][0]["windows"][1]["synops_per_sample"] = -3; },
          "runs[0].windows[1].synops_per_sample: -3 is not a number in [0, 1e+100]");
  refused([](Json& p) { p["runs"][0]["windows"][0]["silent_fraction"] = 1.5; }, "silent_fraction: 1.5 is not in [0, 1]");
  refused([](Json& p) { p["runs"][1]["tau"] = 0.05; }, "runs[1].tau: is not 0.02");
  refused([](Json& p) { p["runs"][1]["rate"] = 3; }, "runs[1].rate: is not 2");
  refused([](Json& p) { p["runs"][1]["trial"] = 2; }, "runs[1].trial: is not 1");
  refused([](Json& p) { p["runs"][0]["sampler"] = "euler"; }, "runs[0].sampler: is not \"exact\"");
  refused([](Json& p) { p["runs"][2]["windows"][1]["T"] = 0.03; }, "runs[2].windows[1].T: is not 0.02");
  refused([](Json& p) { p["runs"][0]["windows"][1]["layers"] = Json::array(); },
          "runs[0].windows[1].layers: 0 entries, expected 1");
  refused([](Json& p) { p["runs"][1]["layers"].push_back(p["runs"][1]["layers"][0]); },
          "runs[1].layers: 2 layers, another run of the same net has 1");
  refused([](Json& p) { p["runs"][1]["windows"].erase(1); }, "runs[1].windows: 1 entries, expected 2");
  refused([](Json& p) { p["runs"][0]["windows"][0].erase("tie_fraction"); }, "runs[0].windows[0].tie_fraction: missing");
  refused([](Json& p) { p["runs"][0]["windows"][0]["count_quantiles"] = {3, 2, 1, 0}; },
          "count_quantiles[1]: is below the quantile before it");
  refused([](Json& p) { p["runs"][2]["test_images"] = 24; }, "runs[2].test_images: 24 here, 25 in another run");
  refused([](Json& p) { p["runs"][1]["windows"][0]["ann_vs_snn"] = {20, 6}; },
          "runs[1].windows[0].ann_vs_snn: 26 discordant images of a run on 25 test images");
  refused([](Json& p) { p["runs"][0]["ann_vs_mf"] = {1}; }, "runs[0].ann_vs_mf: 1 entries, expected 2");
  refused([](Json& p) { p["runs"][0]["windows"][1]["mf_vs_snn"] = {1, -1}; },
          "runs[0].windows[1].mf_vs_snn: expected [n10, n01] of whole numbers");
  refused([](Json& p) { p["runs"][2]["windows"][1].erase("synops_sd"); }, "runs[2].windows[1].synops_sd: missing");
  refused([](Json& p) { p["extra"] = 1; }, "bad.json: top level: unknown key 'extra'");
  refused([](Json& p) { p["runs"][2]["comment"] = "x"; }, "runs[2]: unknown key 'comment'");
  refused([](Json& p) { p["runs"][0]["windows"][0]["layers"][0]["note"] = 1; }, "runs[0].windows[0].layers[0]: unknown key");
  refused([](Json& p) { p["spec"]["extra"] = true; }, "spec: unknown key 'extra'");
  refused([](Json& p) { p["spec"]["T"][0] = "nan"; }, "spec.T[0]: expected a number, got 'nan'");
  refused([](Json& p) { p["spec"]["T"] = {0.02, 0.01}; }, "spec.T: the checkpoints must increase");
  refused([](Json& p) { p["spec"]["tau"] = {-0.02}; }, "spec.tau: -0.02 is not a positive finite number");
  refused([](Json& p) { p["spec"]["samplers"] = {"fast"}; }, "spec.samplers: unknown sampler 'fast'");
  refused([](Json& p) { p["spec"]["trials"] = 0; }, "spec.trials: 0 is not a whole number from 1");
  refused([](Json& p) { p["spec"].erase("dt"); }, "spec.dt: missing");
  refused([](Json& p) { p["spec"]["kernel"] = "simd"; }, "spec.kernel: unknown kernel 'simd'");
  refused([](Json& p) { p["spec"]["kernel"] = 1; }, "spec.kernel: expected a string");
  refused(
      [](Json& p) {
        p["spec"]["kernel"] = "vectorised";
        p["spec"]["samplers"] = {"euler"};
      },
      "spec.kernel: the vectorised kernel runs the exact and end-state samplers; euler runs on the reference kernel");
  // A spec without "kernel" (written before the key existed) is the reference
  // kernel's, and merges as it is; one that names a kernel merges too.
  for (const char* kernel : {"reference", "auto", "vectorised"}) {
    Json p = good;
    p["spec"]["kernel"] = kernel;
    CHECK(ctmc::sim::merge_sweep_parts({{"kernel.json", p}}).recorded_spec.at("kernel") == kernel);
  }
  CHECK_FALSE(ctmc::sim::merge_sweep_parts({{"good.json", good}}).recorded_spec.contains("kernel"));
  // A part written before the key and one written with --kernel reference
  // are shards of the same sweep; with another kernel they are not.
  for (const char* kernel : {"reference", "vectorised"}) {
    const Json old_part = make_part(4, 2, 1, 2);
    Json new_part = make_part(4, 2, 2, 2);
    new_part["spec"]["kernel"] = kernel;
    for (bool old_first : {true, false}) {
      std::vector<std::pair<std::string, Json>> parts{{"old.json", old_part}, {"new.json", new_part}};
      if (!old_first) std::swap(parts[0], parts[1]);
      if (std::string(kernel) == "reference") {
        CHECK(ctmc::sim::merge_sweep_parts(parts).runs.size() == 4);
      } else {
        CHECK_THROWS_WITH_AS(ctmc::sim::merge_sweep_parts(parts), doctest::Contains("the specs differ"),
                             ctmc::InputError);
      }
    }
  }
  // A grid of more runs than the parts hold records: refused before a table of its size is made.
  Json many = good;
  many["spec"]["trials"] = 50000000;
  try {
    (void)ctmc::sim::merge_sweep_parts({{"many.json", many}});
    FAIL("no InputError");
  } catch (const ctmc::InputError& e) {
    CHECK(std::string(e.what()) == "sweep merge: the grid has 50000000 runs, the parts hold 3 records");
  }
}

TEST_CASE("merge: runs of one net agree on what does not depend on the trial, and every number is finite") {
  const Json good = make_part(3, 2);
  const auto refused = [&](const std::function<void(Json&)>& edit, const std::string& message) {
    Json p = good;
    edit(p);
    try {
      (void)ctmc::sim::merge_sweep_parts({{"bad.json", p}});
      FAIL("merged: " << message);
    } catch (const ctmc::InputError& e) {
      CHECK(std::string(e.what()) == message);
    }
  };
  // The cell's gap was A_ANN of its first trial minus the trials' mean A_SNN
  // (+40 pp read where every other run says -20).
  refused([](Json& p) { p["runs"][2]["A_ANN"] = 30.0; },
          "bad.json: runs[2].A_ANN: 30.0 here, 80.0 in runs[0] of bad.json (A_ANN depends on the net only, not on the "
          "trial, sampler or tau)");
  refused([](Json& p) { p["runs"][1]["A_MF"] = 70.0; },
          "bad.json: runs[1].A_MF: 70.0 here, 76.0 in runs[0] of bad.json (A_MF depends on the net and r only, not on "
          "the trial, sampler or tau)");
  refused([](Json& p) { p["runs"][1]["layers"][0]["q99"] = 1.25; },
          "bad.json: runs[1].layers[0].q99: 1.25 here, 1.5 in runs[0] of bad.json (layers[0].q99 depends on the net "
          "only, not on the trial, sampler or tau)");
  refused([](Json& p) { p["runs"][2]["layers"][0]["alpha"] = 2.0; },
          "bad.json: runs[2].layers[0].alpha: 2.0 here, 1.3 in runs[0] of bad.json (layers[0].alpha depends on the "
          "net and r only, not on the trial, sampler or tau)");
  refused([](Json& p) { p["runs"][2]["layers"][0]["outside_fit_domain"] = nullptr; },
          "bad.json: runs[2].layers[0].outside_fit_domain: null here, 0.0 in runs[0] of bad.json "
          "(layers[0].outside_fit_domain depends on the net and r only, not on the trial, sampler or tau)");
  // Across parts: the first run of the net is named in its own file.
  {
    const Json a = make_part(4, 1, 1, 2);
    Json b = make_part(4, 1, 2, 2);
    b["runs"][1]["A_ANN"] = 81.0;
    try {
      (void)ctmc::sim::merge_sweep_parts({{"a.json", a}, {"b.json", b}});
      FAIL("merged");
    } catch (const ctmc::InputError& e) {
      CHECK(std::string(e.what()) == "b.json: runs[1].A_ANN: 81.0 here, 80.0 in runs[0] of a.json (A_ANN depends on the "
                                     "net only, not on the trial, sampler or tau)");
    }
  }
  // Counts so large that their mean over the trials overflowed: merged as null.
  refused([](Json& p) { p["runs"][0]["windows"][0]["synops_per_sample"] = 1.7e308; },
          "bad.json: runs[0].windows[0].synops_per_sample: 1.7e+308 is not a number in [0, 1e+100] (the merge's means "
          "and deviations over the trials and nets must stay finite)");
  refused([](Json& p) { p["runs"][1]["windows"][1]["layers"][0]["rate_rel_rmse"] = 1e200; },
          "bad.json: runs[1].windows[1].layers[0].rate_rel_rmse: 1e+200 is not a number in [0, 1e+100] (the merge's "
          "means and deviations over the trials and nets must stay finite)");
  refused([](Json& p) { p["runs"][1]["windows"][1]["count_quantiles"][3] = 1e300; },
          "bad.json: runs[1].windows[1].count_quantiles[3]: 1e+300 is not a spike count in [0, 1e+100]");
  refused([](Json& p) { p["runs"][0]["layers"][0]["q99"] = std::numeric_limits<double>::infinity(); },
          "bad.json: runs[0].layers[0].q99: inf is not a finite number");
  // Up to the bound, every mean and deviation of the document is finite.
  Json big = good;
  for (auto& r : big["runs"]) r["windows"][1]["synops_per_sample"] = 1e100;
  big["runs"][0]["windows"][1]["synops_per_sample"] = 0.0;
  const ctmc::sim::SweepDocument doc = ctmc::sim::merge_sweep_parts({{"big.json", big}});
  for (const auto& c : doc.cells) CHECK(std::isfinite(c.synops_per_sample));
  for (const auto& p : doc.points) {
    CHECK(std::isfinite(p.synops_per_sample_mean));
    CHECK(std::isfinite(p.synops_per_sample_sd));
  }
}

TEST_CASE("parse_shard: i/n of whole numbers; a number too large is named as such") {
  const auto s = ctmc::sim::parse_shard("2/8", "--shard");
  CHECK(s.index == 2);
  CHECK(s.count == 8);
  CHECK_THROWS_WITH_AS(ctmc::sim::parse_shard("4611686018427387904/4611686018427387905", "--shard"),
                       doctest::Contains("has '4611686018427387904', which is too large (at most 2147483647)"),
                       ctmc::InputError);
  CHECK_THROWS_WITH_AS(ctmc::sim::parse_shard("1x/2", "--shard"),
                       doctest::Contains("has '1x', which is not a whole number"), ctmc::InputError);
  CHECK_THROWS_WITH_AS(ctmc::sim::parse_shard("3/2", "--shard"), doctest::Contains("i outside 1..n"), ctmc::InputError);
}

TEST_CASE("a sweep spec with the fast kernel is valid, in code and as text") {
  ctmc::sim::SweepSpec spec;
  spec.nets = {"net.json"};
  spec.neurons = {"m.json"};
  spec.samplers = {ctmc::sim::SamplerKind::Exact, ctmc::sim::SamplerKind::EndState};
  spec.kernel = ctmc::sim::Kernel::Fast;
  spec.taus = {0.1};
  spec.rates = {5};
  spec.T = {5};
  spec.dt = 0.001;
  CHECK_NOTHROW(ctmc::sim::validate_sweep(spec));
  CHECK(ctmc::sim::parse_kernel("fast", "kernel") == ctmc::sim::Kernel::Fast);
  // The fast kernel runs the exact and end-state samplers only, as the
  // vectorised one does.
  spec.samplers = {ctmc::sim::SamplerKind::Euler};
  CHECK_THROWS_WITH_AS(ctmc::sim::validate_sweep(spec), doctest::Contains("euler runs on the reference kernel"),
                       ctmc::InputError);
}
