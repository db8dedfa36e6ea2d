// A part over 256 MiB (what a shard of 520 runs x 1000 checkpoints writes)
// merges: its size is bounded by what its own grid can hold, not by a fixed
// cap. Writes a 270 MB file and merges it (about 1 GB of memory): `slow`.
#include <fmt/format.h>

#include <cstdio>

#include "cli_helpers.hpp"

using namespace ctmc_cli_test;

TEST_CASE("sweep merge: a part of 270 MB, as large as its grid allows, merges") {
  // 130 runs x 2000 checkpoints, one spiking layer, written pretty-printed
  // with 8 spaces a level (as another tool may rewrite a part): within the
  // 128 bytes a number the bound allows, and over 256 MiB.
  constexpr int kRuns = 130, kWindows = 2000;
  const fs::path part = temp_dir() / "large_part.json";
  {
    std::FILE* f = std::fopen(part.c_str(), "wb");
    REQUIRE(f != nullptr);
    std::string T;
    for (int w = 1; w <= kWindows; ++w) T += fmt::format("{}{}", w > 1 ? ", " : "", 0.01 * w);
    fmt::print(f,
               "{{\n \"format\": \"ctmc-snn sweep part\",\n \"version\": 1,\n \"spec\": {{\"nets\": [\"net.json\"], "
               "\"data\": \"data\", \"neurons\": [\"m.json\"], \"samplers\": [\"exact\"], \"tau\": [0.02], \"rate\": "
               "[2.0], \"T\": [{}], \"trials\": {}, \"dt\": 0.01, \"readout\": \"spike\", \"scale\": \"q99\", "
               "\"limit\": 0, \"subset\": \"all\", \"trace_weight\": \"integral\", \"output_scale\": \"logits\", "
               "\"layer_alpha\": [], \"seed\": 9, \"criterion_pp\": 1.0}},\n \"shard\": {{\"index\": 1, \"count\": 1}},\n"
               " \"runs\": [\n",
               T, kRuns);
    const std::string i2(16, ' '), i3(24, ' '), i4(32, ' '), i5(40, ' '), i6(48, ' ');
    for (int u = 0; u < kRuns; ++u) {
      fmt::print(f,
                 "{}{{\n{}\"run\": {},\n{}\"net\": 0,\n{}\"sampler\": \"exact\",\n{}\"tau\": 0.02,\n{}\"rate\": 2.0,\n"
                 "{}\"trial\": {},\n{}\"test_images\": 1000,\n{}\"A_ANN\": 97.5,\n{}\"A_MF\": 96.25,\n{}\"ann_vs_mf\": [20, 7],\n{}\"layers\": "
                 "[{{\"q99\": 1.5, \"alpha\": 1.3333333333333333, \"outside_fit_domain\": 0.0}}],\n{}\"windows\": [\n",
                 u ? ",\n" + i2 : i2, i3, u, i3, i3, i3, i3, i3, u, i3, i3, i3, i3, i3, i3);
      for (int w = 1; w <= kWindows; ++w)
        fmt::print(f,
                   "{}{{\n{}\"T\": {},\n{}\"A_SNN\": {},\n{}\"synops_per_sample\": {},\n{}\"spikes_per_neuron\": {},\n"
                   "{}\"transitions_per_sample\": {},\n{}\"tie_fraction\": 0.041,\n{}\"count_quantiles\": [\n{}0.0,\n"
                   "{}1.0,\n{}3.0,\n{}7.0\n{}],\n{}\"silent_fraction\": 0.375,\n{}\"layers\": [\n{}{{\n{}"
                   "\"spikes_per_neuron\": {},\n{}\"rate_rel_rmse\": 0.123456789012345\n{}}}\n{}],\n{}\"synops_sd\": "
                   "12.5,\n{}\"transitions_sd\": 30.25,\n{}\"ann_vs_snn\": [40, 3],\n{}\"mf_vs_snn\": [35, 4]\n{}}}{}\n",
                   i4, i5, 0.01 * w, i5, 90.0 + (w % 80) / 8.0, i5, 1234.5678901234 * w, i5, 0.0123456789012 * w, i5,
                   3456.789012345 * w, i5, i5, i6, i6, i6, i6, i5, i5, i5, i6, i6 + "    ", 0.0123456789012 * w,
                   i6 + "    ", i6, i5, i5, i5, i5, i5, i4, w < kWindows ? "," : "");
      fmt::print(f, "{}]\n{}}}", i3, i2);
    }
    fmt::print(f, "\n ]\n}}\n");
    std::fclose(f);
  }
  REQUIRE(fs::file_size(part) > (std::uintmax_t(256) << 20));
  const fs::path merged = temp_dir() / "large_merged.json";
  const auto r = run_cli("sweep merge \"" + part.string() + "\" --out \"" + merged.string() + "\"");
  INFO(r.output.substr(0, 2000));
  CHECK(r.status == 0);
  CHECK(r.output.find("2000 cells (130 runs) over 1 net(s)") != std::string::npos);
  CHECK(fs::exists(merged));
  fs::remove(part);
  fs::remove(merged);
}
